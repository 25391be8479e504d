"""Output formats for validation reports: text, json, sarif, junit."""

from __future__ import annotations

from collections.abc import Callable

from tfjob_kit.findings import Severity
from tfjob_kit.report import junit, sarif, structured, text
from tfjob_kit.validate import Report

Renderer = Callable[[Report, Severity], str]

FORMATS: dict[str, Renderer] = {
    "text": text.render,
    "json": structured.render,
    "sarif": sarif.render,
    "junit": junit.render,
}


def render(report: Report, fmt: str, fail_on: Severity) -> str:
    return FORMATS[fmt](report, fail_on)
