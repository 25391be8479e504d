"""The fast parser: yaml_rs, for the texts the gate (:mod:`.gate`) lets through.

yaml_rs reads YAML 1.2 several times faster than PyYAML; it is used only where YAML 1.1 reads the
same, and the gate decides where that is. Whenever this module answers None, the caller reads the
whole text with the careful parser instead.
"""

from __future__ import annotations

from tfjob_kit.manifests import checks, gate
from tfjob_kit.manifests.documents import Document, Limits
from tfjob_kit.manifests.split import split_documents

try:  # the fast path is optional: the careful path alone is complete (gate rule 1)
    import yaml_rs
except ImportError:  # pragma: no cover - exercised where yaml_rs has no wheel
    yaml_rs = None  # type: ignore[assignment]


def load_fast(text: str, source: str, limits: Limits) -> list[Document] | None:
    """Every document of the text, parsed by yaml_rs and checked, or None when the gate sends the
    text the careful way (which also produces every located error)."""
    if yaml_rs is None:  # rule 1
        return None
    may_go_fast, shallow = gate.text_may_go_fast(text, limits)
    if not may_go_fast:  # rule 2
        return None
    docs: list[Document] = []
    exponent_looked_for = False  # (and not found)
    for begin, end, line in split_documents(text):
        chunk = text[begin:end]
        if not gate.document_may_go_fast(chunk, limits, shallow):  # rule 3
            return None
        try:
            content = yaml_rs.loads(chunk, parse_datetime=False)
        except Exception:  # rule 4: the careful path locates the error
            return None
        if content is None:
            continue
        if not isinstance(content, dict):
            return None  # rule 4: the careful path reads scalars the YAML 1.1 way for the message
        doc = Document(source, len(docs) + 1, line, content)
        try:
            has_float = checks.inspect(doc, limits, fast=True)  # rules 5a to 5c
        except gate.NeedsCareful:
            return None
        if has_float and not exponent_looked_for:  # rule 5d, looked for once for the whole text
            if gate.exponent_in(text):
                return None
            exponent_looked_for = True
        docs.append(doc)
    return docs
