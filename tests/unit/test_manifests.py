"""Safe loading: a located error for every kind of bad input. How long the loader takes on
these inputs is measured in bench/bad_input_bench.py (beside PyYAML), never asserted here."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tfjob_kit import manifests
from tfjob_kit.manifests import Limits, gate, load_path, load_text


def one(text: str, limits: Limits = manifests.DEFAULT_LIMITS) -> manifests.Document:
    docs = load_text(text, "t.yaml", limits)
    assert len(docs) == 1, docs
    return docs[0]


def test_multi_document_indexes_and_lines() -> None:
    docs = load_text("a: 1\n---\nb: 2\n---\n\n---\n...\nc: 3\n", "m.yaml")
    assert [(d.index, d.line, d.content) for d in docs] == [
        (1, 1, {"a": 1}),
        (2, 2, {"b": 2}),
        (3, 7, {"c": 3}),
    ]


def test_bad_document_does_not_hide_the_next() -> None:
    docs = load_text("a: [1, 2\nb: 3\n---\nc: 1\n", "m.yaml")
    assert docs[0].error is not None and docs[0].error.rule == "yaml-syntax"
    assert (docs[0].error.line, docs[0].error.column) == (2, 2)
    assert docs[1].content == {"c": 1} and docs[1].index == 2


def test_duplicate_key_is_located() -> None:
    doc = one("a: 1\nb:\n  c: 1\n  c: 2\n")
    assert doc.error is not None
    assert "duplicate key 'c'" in doc.error.message and "line 3" in doc.error.message
    assert doc.error.line == 4


def test_tab_indentation() -> None:
    doc = one("a:\n\tb: 1\n")
    assert doc.error is not None and doc.error.rule == "yaml-syntax" and doc.error.line == 2


@pytest.mark.parametrize(
    "tag", ["!!python/object/apply:os.system ['id']", "!Ref x", "!!python/name:os.system"]
)
def test_no_arbitrary_tags(tag: str) -> None:
    doc = one(f"a: {tag}\n")
    assert doc.error is not None and doc.error.rule == "yaml-syntax"
    assert "constructor" in doc.error.message


def alias_bomb() -> str:
    """Nine levels of nine aliases each: 9**9 strings once expanded."""
    lines = ['a: &a ["x","x","x","x","x","x","x","x","x"]']
    for prev, cur in zip("abcdefgh", "bcdefghi", strict=True):
        lines.append(f"{cur}: &{cur} [" + ",".join([f"*{prev}"] * 9) + "]")
    return "\n".join(lines) + "\n"


def test_alias_bomb_is_refused() -> None:
    doc = one(alias_bomb())
    assert doc.error is not None and doc.error.rule == "input-limit"
    assert "alias bomb" in doc.error.message
    assert doc.error.line and doc.error.path.startswith("$"), doc.error


def test_recursive_alias() -> None:
    doc = one("&a [*a]\n")
    assert doc.error is not None and doc.error.message == "recursive alias"


def test_small_aliases_and_merge_keys_work() -> None:
    doc = one("base: &b {x: 1}\nd:\n  <<: *b\n  y: 2\n")
    assert doc.content == {"base": {"x": 1}, "d": {"x": 1, "y": 2}}


DEEP = ["[" * 5000 + "]" * 5000, "a:\n" + "".join(" " * (i + 1) + "a:\n" for i in range(300))]


@pytest.mark.parametrize("text", DEEP)
def test_deep_nesting(text: str) -> None:
    docs = load_text(text, "deep.yaml")
    assert docs[0].error is not None
    assert docs[0].error.rule in ("yaml-syntax", "input-limit")


def test_huge_document_is_refused() -> None:
    text = "a: " + "x" * 200 + "\n"
    doc = one(text, Limits(max_document_bytes=100))
    assert doc.error is not None and doc.error.rule == "input-limit"
    assert "etcd" in doc.error.message


def test_huge_input_is_refused() -> None:
    doc = one("a: 1\n" * 100, Limits(max_file_bytes=50))
    assert doc.error is not None and doc.error.rule == "input-limit"


def test_too_many_documents() -> None:
    docs = load_text("a: 1\n---\n" * 10, "many.yaml", Limits(max_documents=3))
    assert len(docs) == 4 and docs[-1].error is not None


def test_non_utf8_file(tmp_path: Path) -> None:
    path = tmp_path / "bin.yaml"
    path.write_bytes(b"a: 1\nb: \xff\xfe\x00\n")
    (doc,) = load_path(str(path))
    assert doc.error is not None and "not UTF-8" in doc.error.message and doc.error.line == 2


def test_binary_control_characters() -> None:
    doc = one("a: \x00\x01\n")
    assert doc.error is not None and doc.error.rule == "yaml-syntax"


@pytest.mark.parametrize(
    ("text", "rule"),
    [
        ("hello\n", "not-an-object"),
        ("- a\n- b\n", "not-an-object"),
        ("1: a\n", "yaml-syntax"),
        ("a: !!set {x}\n", "yaml-syntax"),
        ("a: !!binary aGk=\n", "yaml-syntax"),
    ],
)
def test_not_kubernetes_objects(text: str, rule: str) -> None:
    doc = one(text)
    assert doc.error is not None and doc.error.rule == rule


@pytest.mark.parametrize(
    ("text", "what"),
    [
        ("hello\n", "string"),
        ("- a\n", "sequence"),
        ("12\n", "number"),
        (".inf\n", "number"),
        ("-1.0e+999\n", "number"),
        ("9" * 400 + "\n", "number"),
        ("yes\n", "boolean"),
    ],
)
def test_not_an_object_names_what_it_is(text: str, what: str) -> None:
    """A number no 64-bit float holds is a number too (the message named an internal class)."""
    doc = one(text)
    assert doc.error is not None and doc.error.rule == "not-an-object"
    assert doc.error.message == f"document is a YAML {what}, not a Kubernetes object (a mapping)"


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("v: yes\n", True),
        ("v: on\n", True),
        ("v: 'yes'\n", "yes"),
        ("v: 0644\n", 420),
        ("v: 1e3\n", "1e3"),
        ("v: 1_000\n", 1000),
        ("v: 2001-12-14\n", "2001-12-14"),
        ("v: 0x1F\n", 31),
        ("v: ~\n", None),
        ("v: 1:20\n", 80),
        ("v: 0.5\n", 0.5),
        ("v: [yes, 0755]\n", [True, 493]),
    ],
)
def test_scalars_resolve_as_kubernetes_does(text: str, value: object) -> None:
    assert one(text).content == {"v": value}


def test_bom_and_crlf() -> None:
    assert one("\ufeffa: 1\r\nb: 2\r\n").content == {"a": 1, "b": 2}


def test_directories_are_walked_sorted(tmp_path: Path) -> None:
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "x.yml").write_text("a: 1\n")
    (tmp_path / "a.yaml").write_text("a: 1\n")
    (tmp_path / "notes.txt").write_text("ignored")
    (tmp_path / ".hidden").mkdir()
    (tmp_path / ".hidden" / "h.yaml").write_text("a: 1\n")
    found = manifests.expand_paths([str(tmp_path)])
    assert [Path(p).relative_to(tmp_path).as_posix() for p in found] == ["a.yaml", "b/x.yml"]


def test_missing_path_is_an_input_error() -> None:
    with pytest.raises(manifests.InputError, match="no such file"):
        manifests.expand_paths(["/nonexistent/x.yaml"])


# --------------------------------------------------------------------------- pathological input

# The number pattern as it was before it was made linear; the reference for the rewrite.
_OLD_YAML11_NUMBER = re.compile(
    r"[-+]?(?:0[bo][0-9_]+|[0-9][0-9_]*(?::[0-5]?[0-9])+(?:\.[0-9_]*)?|[0-9._]*_[0-9._]*)"
)


@given(st.text(alphabet="0123456789._:+-box", max_size=14))
def test_number_pattern_reads_as_before(text: str) -> None:
    assert bool(gate.YAML11_NUMBER.fullmatch(text)) == bool(_OLD_YAML11_NUMBER.fullmatch(text))


def _underscore_number_by_looking(text: str) -> bool:
    """Rule 2e read character by character: a run of underscores followed by a digit or a
    dot, before it an optional dot, before that an optional sign, and before that a space, a
    line break, ``[``, ``{`` or ``,``. (The gate's first form, a loop per underscore: 3 MiB of
    ``1_`` took seconds in it.)"""
    for index, char in enumerate(text):
        if char != "_" or (index and text[index - 1] == "_"):
            continue
        end = index
        while end < len(text) and text[end] == "_":
            end += 1
        if text[end : end + 1] == "" or text[end] not in "0123456789.":
            continue
        start = index
        if text[start - 1 : start] == "." and start:
            start -= 1
        if text[start - 1 : start] in ("-", "+") and start:
            start -= 1
        if start and text[start - 1] in " \n[{,":
            return True
    return False


@given(st.text(alphabet=" \n[{,-+._01a:x", max_size=16))
def test_underscore_number_rule_reads_as_by_looking(text: str) -> None:
    assert gate._has_underscore_number(text) == _underscore_number_by_looking(text)


NUMBER_LIKE_RUNS = ["_", "1_", "._", "0_"]


def number_like(run: str) -> str:
    return "a: " + run * (80_000 // len(run)) + "x\n"


@pytest.mark.parametrize("run", NUMBER_LIKE_RUNS)
def test_long_number_like_runs_are_strings(run: str) -> None:
    """80,000 underscores and an x took 22 s: the pattern backtracked over every split. The
    pattern's answers are held to the old one's (test_number_pattern_reads_as_before); its time
    is bench/bad_input_bench.py's, and test_bad_input runs 3 MiB of such runs under a hang
    guard (quadratic again, they would take hours)."""
    text = number_like(run)
    doc = one(text)
    assert doc.error is None, doc.error
    assert doc.content == {"a": text[3:-1]}


HUGE = "9" * 5000
OUT_OF_RANGE = [
    (HUGE, "9999999999"),
    ("-" + HUGE, "-999999999"),
    ("0x" + "f" * 300, "0xffffffff"),
    ("0" + "7" * 400, "0777777777"),
    ("0b" + "1" * 1100, "0b11111111"),
    ("1" + ":59" * 3000, "1:59:59:59"),
    ("1" + ":59" * 200 + ".5", "1:59:59:59"),
    ("1.0e+999", "1.0e+999"),
    ("-.inf", "-.inf"),
    ("9" * 400 + ".0", "9999999999"),
]


def out_of_range(value: str, careful: bool) -> str:
    return f"a:\n  b: [1, {value}]\n" + ("# & careful path\n" if careful else "")


@pytest.mark.parametrize(("value", "shown"), OUT_OF_RANGE)
@pytest.mark.parametrize("careful", [False, True])
def test_numbers_out_of_range_are_located(value: str, shown: str, careful: bool) -> None:
    doc = one(out_of_range(value, careful))
    assert doc.error is not None and doc.error.path == "$.a.b[1]", doc.error
    assert shown in doc.error.message and "None" not in doc.error.message
    assert len(doc.error.message) < 250


def test_numbers_in_range_still_load() -> None:
    big = str(2**70)
    assert one(f"a: [{big}, 0x{'0' * 500}1, 1:30, 0:0:1.5, 1.5e+300]\n").content == {
        "a": [2**70, 1, 90, 1.5, 1.5e300]
    }


VERY_DEEP = [
    "a:\n" + "- " * 100_000 + "x\n",
    "- " * 100_000 + "x\n",
    "a:\n  " + "? " * 100_000 + "x\n",
    "a: " + '[ "]", ' * 100_000,
    "a: " + "{a: " * 100_000,
    "a: " + "[" * 3_000_000,
]


@pytest.mark.parametrize("text", VERY_DEEP)
def test_deep_nesting_never_reaches_a_parser_unguarded(text: str) -> None:
    """yaml_rs recursed until the process died (a segmentation fault at ~30,000 levels of
    '- - - x'); run in a child process so that a crash fails this test, not the run. The
    child's timeout is a hang guard (it ends in well under a second), not a speed claim."""
    code = (
        "import sys; from tfjob_kit.manifests import load_text; "
        "d = load_text(sys.stdin.read(), 'deep.yaml'); "
        "e = d[0].error; print(len(d), e.rule, e.line, e.path, e.message)"
    )
    try:
        result = subprocess.run(
            [sys.executable, "-c", code],
            input=text,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"loading {text[:12]!r}... had not ended after 120s: it hangs")
    assert result.returncode == 0, result.stderr[-2000:]
    count, rule, line, path, message = result.stdout.split(" ", 4)
    assert count == "1", result.stdout
    assert rule == "input-limit" and line != "None" and path == "$", result.stdout
    assert "nesting deeper than" in message


# --------------------------------------------------------------------------- the gate's shortcuts

_GATE_PIECES = [*"ab 0123456789_.,:?-+[]{}|>#&*!%<\t\n\r\x00\x7f", "\n---\n", "|-\n", "0o", "-_1"]
_GATE_TEXT = st.lists(st.sampled_from(_GATE_PIECES), max_size=30).map("".join)


@given(_GATE_TEXT)
def test_ascii_text_gate_agrees_with_the_general_one(text: str) -> None:
    """Rule 2 from one bytes.translate (ASCII text) gives the answer of the check for any text,
    and a text found shallow has no document that could nest too deep (3c)."""
    for limits in (manifests.DEFAULT_LIMITS, Limits(max_depth=3)):
        may_go_fast, shallow = gate.text_may_go_fast(text, limits)
        assert may_go_fast == gate._text_may_go_fast_unicode(text)
        if shallow:
            assert not gate._may_nest_too_deep(text, limits)


def _old_leading_zero(text: str) -> bool:
    """The leading-zero look (2c) as it was: a Python loop over the zeros with a follower."""
    for match in re.finditer("0[0-9_bo]", text):
        index = match.start()
        before = text[index - 1 : index] if index else ""
        if before in ("-", "+"):
            before = text[index - 2 : index - 1] if index > 1 else ""
        if before and before in " \n[{,":
            return True
    return False


def _old_block_scalar_at_end(doc: str) -> bool:
    """The trailing block scalar look (3b) as it was: line by line."""
    header = re.compile(r"[|>][-+0-9]*[ \t]*(?:#[^\n]*)?$")
    lines = [line for line in doc.split("\n") if line.strip()]
    if not any(header.search(line) for line in lines):
        return False
    return not doc.endswith("\n") or bool(lines and header.search(lines[-1]))


@given(_GATE_TEXT)
def test_gate_looks_read_as_before(text: str) -> None:
    assert gate._has_leading_zero_number(text) == _old_leading_zero(text)
    assert gate._block_scalar_at_end(text) == _old_block_scalar_at_end(text)
    old_exponent = re.search(r"[0-9.][eE][-+]?[0-9]", text) is not None
    assert gate.exponent_in(text) == old_exponent
    assert gate.exponent_in(text.replace("a", "e")) == (
        re.search(r"[0-9.][eE][-+]?[0-9]", text.replace("a", "e")) is not None
    )


def test_exponent_is_looked_for_once_a_text(monkeypatch: pytest.MonkeyPatch) -> None:
    """Rule 5d looks at the whole text: once, not once for each document with a float (a
    float in every document made a file quadratic)."""
    calls: list[str] = []
    real = gate.exponent_in

    def counted(text: str) -> bool:
        calls.append(text)
        return real(text)

    monkeypatch.setattr(gate, "exponent_in", counted)
    docs = load_text("".join(f"---\na: {i}.5\n" for i in range(50)))
    assert [doc.content for doc in docs] == [{"a": i + 0.5} for i in range(50)]
    assert len(calls) == 1
