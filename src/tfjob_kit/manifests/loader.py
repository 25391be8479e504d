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
    if len(docs) > limits.max_documents:
        too_many = LoadError("input-limit", f"more than {limits.max_documents} documents")
        over = Document(source, limits.max_documents + 1, 1, error=too_many)
        return [*docs[: limits.max_documents], over]
    return docs
