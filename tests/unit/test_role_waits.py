"""The roles' and playbooks' kubernetes.core waits poll every second (``wait_sleep: 1``), not
every five (the modules' default): every ``site.yml``, ``teardown.yml`` and Molecule run waits
on CRDs, Deployments and deletions, and a wait that ends just after a poll costs the whole
interval."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[2]
WAITING_MODULES = ("kubernetes.core.k8s", "kubernetes.core.k8s_info")


def tasks(node: Any) -> Iterator[dict[str, Any]]:
    """Every mapping in a task file or playbook (blocks, plays and their tasks included)."""
    if isinstance(node, dict):
        yield node
        for value in node.values():
            yield from tasks(value)
    elif isinstance(node, list):
        for item in node:
            yield from tasks(item)


def test_every_kubernetes_core_wait_polls_each_second() -> None:
    files = [*ROOT.glob("roles/*/tasks/*.yml"), *ROOT.glob("roles/*/molecule/*/*.yml")]
    files += ROOT.glob("playbooks/*.yml")
    waits = [
        (path.relative_to(ROOT), task.get("name"), task[module])
        for path in files
        for task in tasks(yaml.safe_load(path.read_text()))
        for module in WAITING_MODULES
        # `wait: true`, or a template (teardown.yml deletes all, then waits in a second pass)
        if isinstance(task.get(module), dict) and task[module].get("wait") not in (None, False)
    ]
    assert len(waits) >= 10
    slow = [(str(path), name) for path, name, args in waits if args.get("wait_sleep") != 1]
    assert not slow
