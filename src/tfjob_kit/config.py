"""Rule configuration: disable rules or change their severity, from a file or the command line.

The file (``.tfjob-kit.yaml`` in the working directory, or ``--config FILE``) reads::

    rules:
      image-latest: off        # disable
      gpu-on-ps: error         # re-level: error | warning | info
    kubernetes-version: "1.35" # judge pods as this minor's API server does (default: the
                               # default local cluster's; --server: the server's)
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from tfjob_kit import rules
from tfjob_kit.findings import Finding, Severity
from tfjob_kit.manifests import load_path
from tfjob_kit.podcheck import release

DEFAULT_CONFIG_FILE = ".tfjob-kit.yaml"
KUBERNETES_KEY = "kubernetes-version"
_OFF = ("off", "disable", "disabled", "false")


class ConfigError(ValueError):
    """A rule configuration that cannot be used (unknown rule, bad level, bad file)."""


@dataclass(frozen=True)
class RuleConfig:
    disabled: frozenset[str] = frozenset()
    severities: dict[str, Severity] = field(default_factory=dict)
    # The Kubernetes minor the pod checks follow ("1.35"); "" for the default
    # (podcheck.release.default_minor).
    kubernetes: str = ""

    def apply(self, finding: Finding) -> Finding | None:
        if finding.rule in self.disabled:
            return None
        level = self.severities.get(finding.rule)
        return replace(finding, severity=level) if level is not None else finding

    def merged(self, other: RuleConfig) -> RuleConfig:
        """This configuration overridden by other (the command line overrides the file)."""
        severities = {k: v for k, v in self.severities.items() if k not in other.disabled}
        severities.update(other.severities)
        disabled = (self.disabled - set(other.severities)) | other.disabled
        return RuleConfig(frozenset(disabled), severities, other.kubernetes or self.kubernetes)


def _check_rule(rule_id: str, where: str) -> str:
    if rule_id not in rules.all_rule_ids():
        raise ConfigError(f"{where}: unknown rule {rule_id!r} (see `tfjob-kit rules`)")
    return rule_id


def from_settings(settings: dict[str, Any], where: str) -> RuleConfig:
    """A RuleConfig from {rule-id: off|error|warning|info}."""
    disabled: set[str] = set()
    severities: dict[str, Severity] = {}
    for rule_id, level in settings.items():
        _check_rule(str(rule_id), where)
        text = str(level).lower() if not isinstance(level, bool) else ("off" if not level else "")
        if text in _OFF:
            disabled.add(rule_id)
            continue
        try:
            severities[rule_id] = Severity.parse(text)
        except ValueError as exc:
            raise ConfigError(f"{where}: rule {rule_id}: {exc}") from None
    return RuleConfig(frozenset(disabled), severities)


def from_cli(disable: list[str], severity: list[str]) -> RuleConfig:
    """From --disable RULE[,RULE] and --severity RULE=LEVEL options."""
    settings: dict[str, Any] = {}
    for item in disable:
        for rule_id in filter(None, (part.strip() for part in item.split(","))):
            settings[rule_id] = "off"
    for item in severity:
        rule_id, sep, level = item.partition("=")
        if not sep:
            raise ConfigError(f"--severity {item!r}: expected RULE=LEVEL")
        settings[rule_id.strip()] = level.strip()
    return from_settings(settings, "command line")


def from_file(path: str) -> RuleConfig:
    docs = load_path(path)
    if not docs:
        return RuleConfig()
    doc = docs[0]
    if doc.error is not None:
        raise ConfigError(f"{path}:{doc.error.line or 1}: {doc.error.message}")
    content = doc.content
    unknown = set(content) - {"rules", KUBERNETES_KEY}
    if unknown:
        raise ConfigError(
            f"{path}: unknown keys {sorted(unknown)} (expected 'rules', '{KUBERNETES_KEY}')"
        )
    settings = content.get("rules") or {}
    if not isinstance(settings, dict):
        raise ConfigError(f"{path}: 'rules' must be a mapping of rule id to off|error|warning|info")
    found = from_settings(settings, path)
    if KUBERNETES_KEY in content:
        found = replace(found, kubernetes=kubernetes_minor(content[KUBERNETES_KEY], path))
    return found


def kubernetes_minor(value: Any, where: str) -> str:
    """A Kubernetes minor of the window the pod checks follow, from a file or an option."""
    try:
        return release.checked_minor(str(value))
    except release.UnknownMinorError as exc:
        raise ConfigError(f"{where}: {exc}") from None


def load(
    config_path: str | None,
    disable: list[str],
    severity: list[str],
    kubernetes_version: str | None = None,
) -> RuleConfig:
    """The file (given, or .tfjob-kit.yaml when present) overridden by the command line."""
    base = RuleConfig()
    if config_path is not None:
        base = from_file(config_path)
    elif Path(DEFAULT_CONFIG_FILE).is_file():
        base = from_file(DEFAULT_CONFIG_FILE)
    cli = from_cli(disable, severity)
    if kubernetes_version is not None:
        cli = replace(cli, kubernetes=kubernetes_minor(kubernetes_version, "--kubernetes-version"))
    return base.merged(cli)
