"""SARIF 2.1.0, as GitHub code scanning and GitLab read it."""

from __future__ import annotations

import json
from typing import Any

from tfjob_kit import __version__, rules
from tfjob_kit.findings import Severity
from tfjob_kit.validate import Report

SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
_LEVELS = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "note"}


def _rule_descriptor(rule_id: str) -> dict[str, Any]:
    return {
        "id": rule_id,
        "name": rule_id,
        "shortDescription": {"text": rules.summary(rule_id)},
        "defaultConfiguration": {"level": _LEVELS[rules.default_severity(rule_id)]},
    }


def render(report: Report, fail_on: Severity) -> str:
    rule_ids = rules.all_rule_ids()
    index = {rule_id: number for number, rule_id in enumerate(rule_ids)}
    results = []
    for finding in report.findings:
        region: dict[str, Any] = {"startLine": finding.line or 1}
        where = f"document {finding.document}: {finding.path}"
        if finding.column:
            region["startColumn"] = finding.column
        results.append(
            {
                "ruleId": finding.rule,
                "ruleIndex": index[finding.rule],
                "level": _LEVELS[finding.severity],
                "message": {"text": finding.message},
                "locations": [
                    {
                        "physicalLocation": {
                            "artifactLocation": {"uri": finding.source},
                            "region": region,
                        },
                        "logicalLocations": [
                            {
                                "fullyQualifiedName": where,
                                "kind": "object",
                            }
                        ],
                    }
                ],
                # origin: "server" (the cluster's answer, `validate --server`) or "offline"
                "properties": {
                    "document": finding.document,
                    "jsonPath": finding.path,
                    "origin": finding.origin,
                },
            }
        )
    log = {
        "$schema": SCHEMA,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "tfjob-kit",
                        "version": __version__,
                        "informationUri": "https://pypi.org/project/tfjob-kit/",
                        "rules": [_rule_descriptor(rule_id) for rule_id in rule_ids],
                    }
                },
                "results": results,
            }
        ],
    }
    return json.dumps(log, indent=2) + "\n"
