"""`file:doc:$.path: [rule-id] severity: message`, one line per finding, then a summary.

A document that `validate --server` judged but whose preflight was incomplete keeps the offline
predictions of the server's verdict; a note after its findings says which findings those are.
"""

from __future__ import annotations

import re

from tfjob_kit.findings import OFFLINE, SERVER, Finding, Severity
from tfjob_kit.rules.server import SERVER_RULES
from tfjob_kit.validate import DocumentResult, Report

# What a terminal would act on or hide rather than show: C0 and C1 controls, DEL, the line and
# paragraph separators, and the bidirectional overrides and isolates (text shown reordered).
_UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def terminal_safe(text: str) -> str:
    """`text` with each character a terminal would act on written as an escape (\\x1b, \\u202e):
    a key or a value in a manifest cannot move the cursor, recolour or reorder the report."""
    return _UNSAFE.sub(
        lambda m: f"\\x{ord(m[0]):02x}" if ord(m[0]) < 0x100 else f"\\u{ord(m[0]):04x}", text
    )


def summary_line(report: Report) -> str:
    errors, warnings, infos = (
        report.count(s) for s in (Severity.ERROR, Severity.WARNING, Severity.INFO)
    )
    unloadable = f", {report.unloadable} unreadable" if report.unloadable else ""
    trainer = report.checked_trainer
    trainer_part = f", {trainer} Trainer v2 objects checked" if trainer else ""
    return (
        f"{len(report.results)} documents: {report.checked - trainer} TFJobs checked"
        f"{trainer_part}, "
        f"{report.skipped} skipped{unloadable}; {errors} errors, {warnings} warnings, "
        f"{infos} infos"
    )


def kept_predictions(findings: list[Finding]) -> list[Finding]:
    """The offline predictions of what the API server rejects (rules.server) in a document the
    server judged too: the CLI drops them once the server has answered for itself, so they are
    left only where the preflight was incomplete (`preflight-incomplete`)."""
    if not any(f.origin == SERVER for f in findings):
        return []
    return [f for f in findings if f.origin == OFFLINE and f.rule in SERVER_RULES]


def fallback_note(result: DocumentResult) -> str | None:
    """The line that says a document's server verdict is partly offline, or None."""
    kept = kept_predictions(result.findings)
    if not kept:
        return None
    ids = ", ".join(sorted({f.rule for f in kept}))
    return (
        f"{result.source}:{result.index}: note: the preflight was incomplete, so {len(kept)} "
        f"finding(s) above ({ids}) are offline predictions, not the API server's answer"
    )


def render(report: Report, fail_on: Severity) -> str:
    lines = []
    for result in report.results:
        if result.skipped is not None:
            lines.append(f"{result.source}:{result.index}: skipped: {result.skipped}")
        for finding in result.findings:
            where = f"{finding.source}:{finding.document}:{finding.path}"
            lines.append(f"{where}: [{finding.rule}] {finding.severity}: {finding.message}")
        if (note := fallback_note(result)) is not None:
            lines.append(note)
    lines.append(summary_line(report))
    return "\n".join(terminal_safe(line) for line in lines) + "\n"
