"""Loading one text: the fast parser where the gate allows it, else the careful one, per-input
and per-document limits either way."""

from __future__ import annotations

from tfjob_kit.manifests.careful import load_careful
from tfjob_kit.manifests.documents import DEFAULT_LIMITS, Document, Limits, LoadError
from tfjob_kit.manifests.fast import load_fast
from tfjob_kit.manifests.split import split_documents


def load_text(
    text: str,
    source: str = "<string>",
    limits: Limits = DEFAULT_LIMITS,
) -> list[Document]:
    """All documents of a YAML text, in order; errors are documents too."""
    if len(text) > limits.max_file_bytes:
        return [
            Document(
                source,
                1,
                1,
                error=LoadError(
                    "input-limit",
                    f"input is {len(text)} bytes, over the limit of {limits.max_file_bytes}",
                ),
            )
        ]
    if text.startswith("\ufeff"):
        text = text[1:]
    text, over = _within_document_limit(text, limits)
    docs = load_fast(text, source, limits)
    if docs is None:
        docs = []
        for begin, end, line in split_documents(text):
            chunk = text[begin:end]
            if len(chunk) > limits.max_document_bytes:
                docs.append(
                    Document(
                        source,
                        len(docs) + 1,
                        line,
                        error=LoadError(
                            "input-limit",
                            f"document is {len(chunk)} bytes, over the limit of "
                            f"{limits.max_document_bytes} (etcd stores at most ~1.5 MiB per "
                            "object)",
                            line,
                        ),
                    )
                )
                continue
            docs.extend(load_careful(chunk, source, limits, len(docs) + 1, line - 1))
    if over is None and len(docs) <= limits.max_documents:
        return docs
    line = 1 if over is None else over
    too_many = LoadError("input-limit", f"more than {limits.max_documents} documents", line)
    docs = docs[: limits.max_documents]
    return [*docs, Document(source, len(docs) + 1, line, error=too_many)]


def _within_document_limit(text: str, limits: Limits) -> tuple[str, int | None]:
    """The text up to its first document past the limit, and that document's first line (None
    when there is none). Every document counts, an empty one too: the limit bounds the work
    before any is parsed (700,000 documents of ``x`` took 8 s and 390 MB to be refused)."""
    markers = text.count("\n---") + text.count("\n...") + 1
    if markers <= limits.max_documents:
        return text, None  # fewer markers, fewer documents
    for number, (begin, _, line) in enumerate(split_documents(text), 1):
        if number > limits.max_documents:
            cut = text.rfind("\n", 0, begin) + 1  # the marker's line goes with its document
            return text[:cut], line
    return text, None
