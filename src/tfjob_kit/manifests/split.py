"""Splitting a YAML text into its documents before either parser sees it."""

from __future__ import annotations

from collections.abc import Iterator


def _marker_at(text: str, start: int) -> bool:
    """A document marker ('---' or '...') starts at the beginning of a line at `start`."""
    end = start + 3
    return text.startswith(("---", "..."), start) and (end >= len(text) or text[end] in " \t\r\n")


def _marker_starts(text: str) -> list[int]:
    found = [0] if _marker_at(text, 0) else []
    for needle in ("\n---", "\n..."):
        index = text.find(needle)
        while index != -1:
            if _marker_at(text, index + 1):
                found.append(index + 1)
            index = text.find(needle, index + 1)
    return sorted(found)


def split_documents(text: str) -> Iterator[tuple[int, int, int]]:
    """(begin, end, first line) of each document chunk, split at '---' and '...' markers, so one
    bad document does not hide the next ones and size limits apply per document. A '---' or '...'
    at the start of a line always ends a document (YAML forbids it inside scalars); only
    directives ('%YAML') need the stream whole."""
    if text.startswith("%") or "\n%" in text:
        yield 0, len(text), 1
        return
    markers = _marker_starts(text)
    starts = [0, *markers] if markers[:1] != [0] else markers
    line = 1
    for number, begin in enumerate(starts):
        end = starts[number + 1] if number + 1 < len(starts) else len(text)
        skip = 3 if text.startswith("...", begin) and _marker_at(text, begin) else 0
        yield begin + skip, end, line
        line += text.count("\n", begin, end)
