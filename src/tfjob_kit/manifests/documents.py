"""What loading produces: documents, the errors that stop them, and the bounds on one input."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Limits:
    """Bounds on what one input may cost."""

    max_file_bytes: int = 64 * 1024 * 1024
    max_document_bytes: int = 3 * 1024 * 1024
    max_documents: int = 20_000
    max_nodes: int = 200_000  # per document, after alias expansion
    max_depth: int = 100


DEFAULT_LIMITS = Limits()


@dataclass(frozen=True)
class LoadError:
    """Why a document (or a whole input) could not be loaded."""

    rule: str  # yaml-syntax | input-limit | not-an-object
    message: str
    line: int | None = None
    column: int | None = None
    path: str = "$"


@dataclass
class Document:
    """One YAML document of one source: its content, or the error that stopped it."""

    source: str
    index: int  # 1-based position in the source
    line: int  # 1-based line where the document starts
    content: Any = None
    error: LoadError | None = None
    inspected: bool = False  # the loader's checks (checks.inspect) already walked the content

    @property
    def ok(self) -> bool:
        return self.error is None

    @property
    def kind(self) -> str:
        if isinstance(self.content, dict):
            return str(self.content.get("kind", ""))
        return ""

    @property
    def api_version(self) -> str:
        if isinstance(self.content, dict):
            return str(self.content.get("apiVersion", ""))
        return ""


class InputError(Exception):
    """A path that cannot be read at all (a usage error, not a finding)."""


_SHOWN_CHARS = 40


def shorten(text: str, limit: int = _SHOWN_CHARS) -> str:
    """text, or its start and its length when it is longer than limit (for messages)."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}... ({len(text)} characters)"


def too_deep(limits: Limits) -> str:
    """The message for a document nested deeper than limits allow (both parsers use it)."""
    return f"nesting deeper than {limits.max_depth} levels"
