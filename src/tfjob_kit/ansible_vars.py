"""Role and inventory variables as Ansible sees them: stacked in layers (later layers win) and
rendered by Ansible's own template engine, so a role's filters, tests, sandbox and types mean
here what they mean when the role runs. ansible-core is imported only when a value is rendered.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import yaml


class VariablesError(Exception):
    """A variable that cannot be read or rendered; the message names it."""


def _trusted(value: Any) -> Any:
    """`value` with every string in it marked as a template Ansible may render, as Ansible marks
    what it reads from a role's or an inventory's variable files (ansible-core 2.19 renders only
    such strings; earlier releases render every string)."""
    try:
        from ansible.template import trust_as_template
    except ImportError:  # ansible-core < 2.19
        return value
    if isinstance(value, str):
        return trust_as_template(value)
    if isinstance(value, Mapping):
        return {key: _trusted(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_trusted(item) for item in value]
    return value


def _plain(value: Any) -> Any:
    """A templated value as plain Python data (Ansible's results carry tags on their strings)."""
    return json.loads(json.dumps(value))


class Variables:
    """Variables in layers, as Ansible stacks them (later layers win), rendered by Ansible's own
    template engine when read: its filters, tests, sandbox and types."""

    def __init__(self, *layers: Mapping[str, Any]) -> None:
        self.raw: dict[str, Any] = {}
        for layer in layers:
            self.raw.update(_trusted(dict(layer)))
        try:
            from ansible.parsing.dataloader import DataLoader
            from ansible.template import Templar
        except ImportError as exc:
            raise VariablesError(
                "tfjob-kit images renders the roles' variables with Ansible: install ansible-core "
                "(pip install 'tfjob-kit[ansible]')"
            ) from exc
        self._templar = Templar(loader=DataLoader(), variables=self.raw)

    def __contains__(self, name: str) -> bool:
        return name in self.raw

    def get(self, name: str) -> Any:
        return self._render(name, lambda: self._templar.template(self.raw[name]))

    def template(self, value: Any) -> Any:
        return self._render("a value", lambda: self._templar.template(_trusted(value)))

    def test(self, expression: str) -> bool:
        """A `when:` condition (a bare expression)."""
        return bool(
            self._render(
                expression, lambda: self._templar.evaluate_conditional(_trusted(expression))
            )
        )

    @staticmethod
    def _render(what: str, render: Callable[[], Any]) -> Any:
        from ansible.errors import AnsibleError

        try:
            return _plain(render())
        except AnsibleError as exc:
            raise VariablesError(f"cannot evaluate {what}: {exc.message}") from exc


def read_yaml_variables(path: Path) -> dict[str, Any]:
    """The variables of a YAML file (group_vars style); an absent file has none."""
    if not path.is_file():
        return {}
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except (OSError, yaml.YAMLError) as exc:
        raise VariablesError(f"{path}: {exc}") from exc
    if not isinstance(data, dict):
        raise VariablesError(f"{path}: not a mapping of variables")
    return data
