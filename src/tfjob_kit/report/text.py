"""`file:doc:$.path: [rule-id] severity: message`, one line per finding, then a summary."""

from __future__ import annotations

from tfjob_kit.findings import Severity
from tfjob_kit.validate import Report


def summary_line(report: Report) -> str:
    errors, warnings, infos = (
        report.count(s) for s in (Severity.ERROR, Severity.WARNING, Severity.INFO)
    )
    unloadable = f", {report.unloadable} unreadable" if report.unloadable else ""
    return (
        f"{len(report.results)} documents: {report.checked} TFJobs checked, "
        f"{report.skipped} skipped{unloadable}; {errors} errors, {warnings} warnings, "
        f"{infos} infos"
    )


def render(report: Report, fail_on: Severity) -> str:
    lines = []
    for result in report.results:
        if result.skipped is not None:
            lines.append(f"{result.source}:{result.index}: skipped: {result.skipped}")
        for finding in result.findings:
            where = f"{finding.source}:{finding.document}:{finding.path}"
            lines.append(f"{where}: [{finding.rule}] {finding.severity}: {finding.message}")
    lines.append(summary_line(report))
    return "\n".join(lines) + "\n"
