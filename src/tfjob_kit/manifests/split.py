"""Splitting a YAML text into its documents before either parser sees it."""

from __future__ import annotations

import re
from collections.abc import Iterator

# A line that starts like a document marker; _marker_at tells whether it is one. One pass finds
# both kinds (two matches cannot overlap: each starts with a line break, which a marker has not).
_MARKER_LINE = re.compile(r"\n(?:---|\.\.\.)")


def _marker_at(text: str, start: int) -> bool:
    """A document marker ('---' or '...') starts at the beginning of a line at `start`."""
    end = start + 3
    return text.startswith(("---", "..."), start) and (end >= len(text) or text[end] in " \t\r\n")


def _marker_starts(text: str) -> list[int]:
    """Where the document markers start, in order."""
    found = [0] if _marker_at(text, 0) else []
    for match in _MARKER_LINE.finditer(text):
        if _marker_at(text, match.start() + 1):
            found.append(match.start() + 1)
    return found


def split_documents(text: str) -> Iterator[tuple[int, int, int]]:
    """(begin, end, first line) of each document chunk, split at '---' and '...' markers, so one
    bad document does not hide the next ones and size limits apply per document. A '---' or '...'
    at the start of a line always ends a document (YAML forbids it inside scalars); only
    directives ('%YAML') need the stream whole."""
    # ('%' is rare: a one-character search, a memchr, spares most texts the two-character one.)
    if "%" in text and (text.startswith("%") or "\n%" in text):
        yield 0, len(text), 1
        return
    markers = _marker_starts(text)
    starts = [0, *markers] if markers[:1] != [0] else markers
    ends = [*starts[1:], len(text)]
    line = 1
    for begin, end in zip(starts, ends, strict=True):
        skip = 3 if text.startswith("...", begin) and _marker_at(text, begin) else 0
        yield begin + skip, end, line
        line += text.count("\n", begin, end)
