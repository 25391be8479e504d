"""The README's fenced blocks, each with the tag that says how it is tested
(``<!-- snippet: KIND [ARGUMENT] -->``; tests/unit/test_readme.py lists the kinds and requires
every block to carry one). One reader for every test that runs or compares a README block."""

from __future__ import annotations

import re
from pathlib import Path

README = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")
SNIPPET = re.compile(
    r"(?:<!-- snippet: (?P<tag>[^>]*?) -->\n)?```(?P<lang>[a-z]+)\n(?P<body>.*?)```", re.S
)
SNIPPETS = [(m["tag"] or "", m["lang"], m["body"]) for m in SNIPPET.finditer(README)]
"""(tag, language, body) of every fenced block, in order; the tag is "" where there is none."""


def tagged(kind: str) -> list[tuple[str, str]]:
    """(argument, body) of the blocks tagged `kind`."""
    return [
        (tag.partition(" ")[2], body) for tag, _, body in SNIPPETS if tag.partition(" ")[0] == kind
    ]


def block(tag: str) -> str:
    """The body of the one block tagged exactly `tag` (``demo-output``, ``test PATH::NAME``)."""
    bodies = [body for t, _, body in SNIPPETS if t == tag]
    assert len(bodies) == 1, f"the README has {len(bodies)} blocks tagged {tag!r}"
    return bodies[0]
