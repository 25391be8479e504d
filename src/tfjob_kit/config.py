"""Rule configuration: disable rules or change their severity, from a file or the command line.

The file (``.tfjob-kit.yaml`` in the working directory, or ``--config FILE``) reads::

    rules:
      image-latest: off        # disable
      gpu-on-ps: error         # re-level: error | warning | info
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from tfjob_kit import rules
from tfjob_kit.findings import Finding, Severity
from tfjob_kit.manifests import load_path

DEFAULT_CONFIG_FILE = ".tfjob-kit.yaml"
_OFF = ("off", "disable", "disabled", "false")


class ConfigError(ValueError):
    """A rule configuration that cannot be used (unknown rule, bad level, bad file)."""


@dataclass(frozen=True)
class RuleConfig:
    disabled: frozenset[str] = frozenset()
    severities: dict[str, Severity] = field(default_factory=dict)

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
        return RuleConfig(frozenset(disabled), severities)


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
    unknown = set(content) - {"rules"}
    if unknown:
        raise ConfigError(f"{path}: unknown keys {sorted(unknown)} (expected 'rules')")
    settings = content.get("rules") or {}
    if not isinstance(settings, dict):
        raise ConfigError(f"{path}: 'rules' must be a mapping of rule id to off|error|warning|info")
    return from_settings(settings, path)


def load(config_path: str | None, disable: list[str], severity: list[str]) -> RuleConfig:
    """The file (given, or .tfjob-kit.yaml when present) overridden by the command line."""
    base = RuleConfig()
    if config_path is not None:
        base = from_file(config_path)
    elif Path(DEFAULT_CONFIG_FILE).is_file():
        base = from_file(DEFAULT_CONFIG_FILE)
    return base.merged(from_cli(disable, severity))
