"""JSON: a summary and every document with its findings."""

from __future__ import annotations

import json

from tfjob_kit import __version__
from tfjob_kit.findings import Severity
from tfjob_kit.validate import Report


def render(report: Report, fail_on: Severity) -> str:
    data = {
        "tool": {"name": "tfjob-kit", "version": __version__},
        "failOn": str(fail_on),
        "failed": report.failed(fail_on),
        "summary": {
            "documents": len(report.results),
            "checked": report.checked,
            "skipped": report.skipped,
            "unreadable": report.unloadable,
            "errors": report.count(Severity.ERROR),
            "warnings": report.count(Severity.WARNING),
            "infos": report.count(Severity.INFO),
        },
        "documents": [result.as_dict() for result in report.results],
    }
    return json.dumps(data, indent=2) + "\n"
