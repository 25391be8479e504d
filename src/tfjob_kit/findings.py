"""Findings: what validation says about a document, and where."""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import IntEnum
from typing import Any


class Severity(IntEnum):
    INFO = 1
    WARNING = 2
    ERROR = 3

    @classmethod
    def parse(cls, text: str) -> Severity:
        try:
            return cls[text.strip().upper()]
        except KeyError:
            raise ValueError(f"unknown severity {text!r}: use error, warning or info") from None

    def __str__(self) -> str:
        return self.name.lower()


# Where a finding came from (its ``origin``): the cluster's answer to the server-aware preflight
# (``validate --server``, the module's preflight), or the manifest alone, offline (every rule,
# the schema and the loader; the ``server-rejects-*`` rules' predictions of the server too).
SERVER = "server"
OFFLINE = "offline"


@dataclass(frozen=True)
class Finding:
    """One problem in one document: rule id, severity, message, JSON path, source location, and
    where it came from (:data:`SERVER` or :data:`OFFLINE`)."""

    rule: str
    severity: Severity
    message: str
    path: str = "$"
    source: str = "<string>"
    document: int = 1
    line: int | None = None
    column: int | None = None
    origin: str = OFFLINE

    def at(self, source: str, document: int, line: int | None) -> Finding:
        # dataclasses.replace, spelt out (replace looks the fields up on every call)
        return Finding(
            self.rule,
            self.severity,
            self.message,
            self.path,
            source,
            document,
            self.line if self.line is not None else line,
            self.column,
            self.origin,
        )

    def as_dict(self) -> dict[str, Any]:
        return {
            "rule": self.rule,
            "severity": str(self.severity),
            "message": self.message,
            "path": self.path,
            "file": self.source,
            "document": self.document,
            "line": self.line,
            "column": self.column,
            "origin": self.origin,
        }


_SIMPLE_KEY = re.compile(r"^[A-Za-z_][A-Za-z0-9_-]*$")


def json_path(*parts: str | int) -> str:
    """JSONPath for a sequence of keys and indexes: $.spec.tfReplicaSpecs.Worker, $.a['b.c'][0]."""
    out = ["$"]
    for part in parts:
        out.append(child_path("", part))
    return "".join(out)


def child_path(parent: str, part: str | int) -> str:
    if isinstance(part, int):
        return f"{parent}[{part}]"
    # An ASCII identifier once '-' reads as '_', not starting with '-', is a simple key; that
    # test (string methods) is cheaper than the regex, which decides the rest (and refuses
    # what is no string, as before).
    if (
        isinstance(part, str)
        and part.isascii()
        and part.replace("-", "_").isidentifier()
        and part[0] != "-"
    ) or _SIMPLE_KEY.match(part):
        return f"{parent}.{part}"
    escaped = part.replace("\\", "\\\\").replace("'", "\\'")
    return f"{parent}['{escaped}']"
