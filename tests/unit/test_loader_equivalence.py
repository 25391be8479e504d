"""The fast parser (yaml_rs, YAML 1.2) is used only where it agrees with the careful one (PyYAML,
YAML 1.1 like Kubernetes). Random documents and random YAML-ish texts hold the two to it."""

from __future__ import annotations

from typing import Any

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from tfjob_kit import manifests
from tfjob_kit.manifests import fast as fast_parser

TRICKY = [
    "yes",
    "no",
    "on",
    "off",
    "y",
    "n",
    "Yes",
    "NO",
    "true",
    "False",
    "~",
    "null",
    "Null",
    "0644",
    "0o17",
    "0x1F",
    "0b101",
    "1e3",
    "1.0e+5",
    "1_000",
    "1:20",
    "12:30:45",
    ".inf",
    "-.INF",
    ".nan",
    "+1",
    "-0",
    "007",
    "2001-12-14",
    "2001-12-14t21:59:43.10-05:00",
    "=",
    "<<",
    "1.",
    ".5",
    "0.",
    "1e-3",
    "3.14",
    "-1_000.5",
    "",
    " ",
    "a b",
    "é",
    "\u2028",
]
scalars = st.one_of(
    st.sampled_from(TRICKY),
    st.integers(-(2**40), 2**40),
    st.booleans(),
    st.none(),
    st.floats(allow_nan=False, allow_infinity=False, width=32),
    st.text(max_size=12),
)
keys = st.one_of(
    st.sampled_from(TRICKY), st.from_regex(r"[a-zA-Z][a-zA-Z0-9_./-]{0,10}", fullmatch=True)
)
trees = st.recursive(
    scalars,
    lambda children: st.one_of(
        st.lists(children, max_size=4), st.dictionaries(keys, children, max_size=4)
    ),
    max_leaves=20,
)
FRAGMENTS = [
    "a:",
    "b:",
    " ",
    "  ",
    "\n",
    "- ",
    "yes",
    "0644",
    "1e3",
    "1:20",
    "[",
    "]",
    "{",
    "}",
    ",",
    "'",
    '"',
    "#c",
    "---",
    "...",
    "&x ",
    "*x",
    "!t ",
    "<<: ",
    "~",
    "? ",
    "|",
    ">",
    "\t",
    "0",
    "on",
    "x",
    ": ",
    "%YAML 1.1\n",
    "\\",
    "é",
    "1_0",
]


def both(text: str, monkeypatch: pytest.MonkeyPatch) -> tuple[Any, Any]:
    fast = [(d.index, d.content, d.error and d.error.rule) for d in manifests.load_text(text)]
    with monkeypatch.context() as patch:
        patch.setattr(fast_parser, "yaml_rs", None)
        careful = [
            (d.index, d.content, d.error and d.error.rule) for d in manifests.load_text(text)
        ]
    return fast, careful


@given(
    tree=st.dictionaries(keys, trees, min_size=1, max_size=5),
    flow=st.sampled_from([None, True, False]),
)
def test_documents_load_the_same_both_ways(
    tree: dict[str, Any], flow: bool | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    text = yaml.safe_dump(tree, default_flow_style=flow, allow_unicode=True)
    fast, careful = both(text, monkeypatch)
    assert fast == careful


@given(parts=st.lists(st.sampled_from(FRAGMENTS), max_size=30))
def test_texts_load_the_same_both_ways(parts: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    fast, careful = both("".join(parts), monkeypatch)
    assert fast == careful


@pytest.mark.parametrize(
    "text",
    [
        "a: |\n",
        "a: |\n  x",
        "a: >-\n\n",
        "b: 1\na: |\n   \n",
        "a: |\n  b: |\n",
        "a: |\n  x\n---\nc: |\n",
    ],
)
def test_block_scalars_at_the_end_load_the_same_both_ways(
    text: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Found by the random texts above: an empty block scalar at the end of a document, or one
    that runs to the end of a text without a final line break."""
    fast, careful = both(text, monkeypatch)
    assert fast == careful


@pytest.mark.parametrize("text", ["{a:}", "[a:]", "{a:,b: 1}", "x: {a:}\n", 'k: {"a":}', "a:[1]"])
def test_a_colon_before_a_flow_indicator_loads_the_same_both_ways(
    text: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """yaml_rs reads `{a:}` as {a: None}; libyaml, like go-yaml, refuses it (gate rule 2f)."""
    fast, careful = both(text, monkeypatch)
    assert fast == careful
