"""The gate between the two parsers: which texts the fast parser may read.

Kubernetes reads YAML as YAML 1.1 (go-yaml). The careful parser (PyYAML with the checks of
:mod:`.careful`) reads it the same way, bounds every cost and locates every error. The fast parser
(``yaml_rs``) reads YAML 1.2 and is only a shortcut: a text goes the fast way only when yaml_rs is
sure to give exactly the documents the careful parser would. At the first doubt the *whole text*
goes the careful way (which also produces every located error). The rule, in the order it is
applied; every step is linear in the text:

1. **yaml_rs is installed** (it is optional; the careful path alone is complete).
2. **The whole text**, before parsing (:func:`text_may_go_fast`). It has none of:

   a. tabs, merge keys (``<<``), anchors (``&``), aliases (``*``), tags (``!``), directives
      (``%`` at the start of a line) or the line breaks only YAML 1.1 knows (NEL, LS, PS);
   b. characters YAML does not allow (yaml_rs reads some of them as nothing);
   c. an integer with a leading zero (``0644`` is 420 in YAML 1.1, 644 in 1.2; ``0o17``, ``0b1``
      and ``0_1`` differ too);
   d. a run of digits too long for a 64-bit float (yaml_rs would build a Python int in time
      quadratic in its length, only to have it refused);
   e. a plain scalar that starts with underscores before a digit or a dot, after a sign or a
      dot or neither (``_0``, ``-_1``, ``._5``, ``__1e3``): yaml_rs reads a number, YAML 1.1 a
      string;
   f. a colon followed by a flow indicator (``{a:}``, ``[a:]``, ``{a:,b: 1}``): yaml_rs reads
      an empty value, libyaml (and go-yaml, which Kubernetes uses) refuses "found unexpected
      ':'".

3. **Each document**, before parsing (:func:`document_may_go_fast`):

   a. it is at most ``Limits.max_document_bytes`` long;
   b. it does not end in a block scalar that is empty or has no final line break (the parsers
      disagree on its line breaks);
   c. it cannot nest deeper than ``Limits.max_depth`` (yaml_rs recurses once per level; 30,000
      levels of ``- `` end the process). Most texts are found shallow as a whole by
      :func:`text_may_go_fast`, which then holds for each of their documents.

4. **Parsing**: yaml_rs accepts the document, and it is a mapping (a scalar or sequence goes the
   careful way, which reads it the YAML 1.1 way for the message).
5. **Each parsed value** (:func:`tfjob_kit.manifests.checks.inspect` with ``fast``, which
   raises :class:`NeedsCareful`, and for 5d :func:`tfjob_kit.manifests.fast.load_fast`, which
   looks at the text once, at the first document with a float):

   a. every mapping key is a string;
   b. no key or string value is one YAML 1.1 resolves to a boolean or a number
      (:func:`reads_differently`: ``yes``, ``on``, ``~``, ``1_000``, ``1:30``, ``0b1``);
   c. no number is beyond a 64-bit float (the careful path keeps its text for the message; NaN
      reads the same both ways and is refused where it is);
   d. when the document has a float, the text has nothing shaped like an exponent
      (:func:`exponent_in`: PyYAML reads ``1e3`` as a string, YAML 1.2 as a number).

Otherwise the fast documents stand. ``tests/unit/test_loader_equivalence.py`` holds both paths to
the same result on generated documents and random texts.
"""

from __future__ import annotations

import functools
import re

from tfjob_kit.manifests.documents import Limits
from tfjob_kit.manifests.numbers import MAX_DECIMAL_DIGITS


class NeedsCareful(Exception):  # noqa: N818 - a signal, not an error
    """YAML 1.1 would read something in this document differently from YAML 1.2 (rule 5)."""


# --------------------------------------------------------------------------- 2: the whole text

# 2a: tabs, merge keys, anchors, aliases, tags, directives, and the line breaks only YAML 1.1 knows.
_CAREFUL_MARKERS = ("\t", "<<", "&", "*", "!", "\n%", "\x85", "\u2028", "\u2029")
# 2b: characters YAML does not allow; yaml_rs reads some of them as nothing.
_NON_PRINTABLE = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x84\x86-\x9f\ufffe\uffff]")
# 2c: integers with a leading zero are octal in YAML 1.1 (0644 == 420) and decimal in 1.2; 0o17 is
# octal in 1.2 only.
# Searched from the zero (a literal first character keeps the search fast: spaces, where a search
# for " 0" would start, are everywhere), the characters before it looked at by look-behinds.
_LEADING_ZERO = re.compile(r"0(?:(?<=[ \n\[{,]0)|(?<=[ \n\[{,][-+]0))[0-9_bo]")
# 2d: a run of digits too long for a 64-bit float. The look-behind tries each run once: linear.
_LONG_DIGITS = re.compile(f"(?<![0-9])[0-9]{{{MAX_DECIMAL_DIGITS}}}")
# 2e: underscores that start a plain scalar (a sign, then a dot, may come first), then a digit or
# a dot. The literal first underscore keeps the search a scan; the look-behinds take only a run's
# first underscore (the character before it is no underscore), so each run is read once: linear.
_B = r"[ \n\[{,]"
_UNDERSCORE_NUMBER = re.compile(
    rf"_(?:(?<={_B}_)|(?<={_B}[-+]_)|(?<={_B}\._)|(?<={_B}[-+]\._))_*[0-9.]"
)
# 2f: a colon that a flow indicator follows.
_COLON_BEFORE_FLOW = re.compile(r":[,\[\]{}]")

# For ASCII text (nearly every manifest), 2a but '<<' and '%', 2b, 2d and the first looks of 3c
# come from one bytes.translate of the whole text into classes of characters, then substring
# searches in it (each a fast C loop), instead of a pass over the text for each:
#   "!": a character 2a or 2b refuses (a tab, '&', '*', '!', a control character);
#   "0": a digit (2d: a run of MAX_DECIMAL_DIGITS of them);
#   " ": one of " ?:-", which 3c counts before a line's content (_INDENT_AS_ZERO);
#   "[": a flow opener, '[' or '{' (3c);
#   "<", "%" and the line break stand for themselves (2a: '<<', '%' at the start of a line);
#   "x": anything else ('\r' included: YAML allows it).


def _ascii_class(char: str) -> str:
    if char in "\t&*!" or not (char.isascii() and (char.isprintable() or char in "\n\r")):
        return "!"
    if char in "0123456789":
        return "0"
    if char in " ?:-":
        return " "
    if char in "[{":
        return "["
    return char if char in "<%\n" else "x"


_ASCII_CLASSES = "".join(_ascii_class(chr(byte)) for byte in range(256)).encode("ascii")
_LONG_RUN = b"0" * MAX_DECIMAL_DIGITS


def text_may_go_fast(text: str, limits: Limits) -> tuple[bool, bool]:
    """Rule 2: nothing in the text reads differently in YAML 1.1 before it is parsed; and
    whether rule 3c holds for every document of the text already (the whole text has no line
    that could nest too deep: see :func:`_may_nest_too_deep`), so that no document needs that look
    on its own. (rule 2 holds, rule 3c holds for all documents)"""
    if not text.isascii():
        return _text_may_go_fast_unicode(text), False
    classes = text.encode("ascii").translate(_ASCII_CLASSES)
    # A search for one byte is a memchr, many times faster than one for two: '<' and '%' are rare.
    if (
        b"!" in classes  # 2a (tab, &, *, !) and 2b
        or (b"<" in classes and b"<<" in classes)  # 2a
        or (b"%" in classes and (classes.startswith(b"%") or b"\n%" in classes))  # 2a
        or _LONG_RUN in classes  # 2d
        or _has_leading_zero_number(text)  # 2c
        or _has_underscore_number(text)  # 2e
        or _COLON_BEFORE_FLOW.search(text) is not None  # 2f
    ):
        return False, False
    # 3c, for every document at once: each document is part of the text, so it has no run of
    # max_depth indentation characters and no more flow openers than the whole text has.
    shallow = b" " * limits.max_depth not in classes and (
        b"[" not in classes or classes.count(b"[") <= _FAST_MAX_FLOW_OPENERS
    )
    return True, shallow


def _text_may_go_fast_unicode(text: str) -> bool:
    """Rule 2 for a text that is not ASCII (the line breaks of 2a only occur in such texts)."""
    if text.startswith("%") or any(marker in text for marker in _CAREFUL_MARKERS):
        return False
    return not (
        _has_leading_zero_number(text)
        or _NON_PRINTABLE.search(text) is not None
        or _LONG_DIGITS.search(text) is not None
        or _has_underscore_number(text)
        or _COLON_BEFORE_FLOW.search(text) is not None
    )


def _has_leading_zero_number(text: str) -> bool:
    """A zero followed by a digit, ``_``, ``b`` or ``o`` that starts a plain scalar: after a
    space, a line break, ``[``, ``{`` or ``,``, with a sign or without."""
    return _LEADING_ZERO.search(text) is not None


def _has_underscore_number(text: str) -> bool:
    """2e: underscores that start a plain scalar (after a space, a line break, ``[``, ``{`` or
    ``,``; a sign, then a dot, may come between) and are followed by a digit or a dot."""
    return "_" in text and _UNDERSCORE_NUMBER.search(text) is not None


# --------------------------------------------------------------------------- 3: each document


def document_may_go_fast(doc: str, limits: Limits, text_is_shallow: bool = False) -> bool:
    """Rule 3: one document chunk is small, shallow and free of a trailing block scalar.
    text_is_shallow: text_may_go_fast found 3c true for every document of the text."""
    return not (
        len(doc) > limits.max_document_bytes
        or _block_scalar_at_end(doc)
        or (not text_is_shallow and _may_nest_too_deep(doc, limits))
    )


# A line that ends with a block scalar header (`|`, `>-`, `|+2 # comment`, ...); a match cannot
# span lines (no part of it takes a line break), so a multi-line search of the document finds one
# exactly where some line has one.
_BLOCK_HEADER = re.compile(r"[|>][-+0-9]*[ \t]*(?:#[^\n]*)?$")
_BLOCK_HEADER_IN_LINES = re.compile(_BLOCK_HEADER.pattern, re.MULTILINE)


def _block_scalar_at_end(doc: str) -> bool:
    """3b: yaml_rs and PyYAML disagree on a block scalar at the very end of a document when the
    text has no final line break, or when the scalar is empty ('a: |\n' is '' to PyYAML and
    YAML 1.2's spec, '\n' to yaml_rs)."""
    if "|" not in doc and ">" not in doc:
        return False
    if _BLOCK_HEADER_IN_LINES.search(doc) is None:
        return False
    return not doc.endswith("\n") or _BLOCK_HEADER.search(_last_content_line(doc)) is not None


def _last_content_line(doc: str) -> str:
    """The last line (split at line breaks) that is not all white space, or ''."""
    end = len(doc)
    while True:
        start = doc.rfind("\n", 0, end) + 1
        if doc[start:end].strip():
            return doc[start:end]
        if start == 0:
            return ""
        end = start - 1


# 3c: yaml_rs recurses once per level of nesting, and only bounds flow nesting itself (at 256).
# A text that could nest deeper than Limits.max_depth goes the careful way instead, where libyaml
# stops at 1000 levels and the graph cost at max_depth, with a located error. In block context each
# level needs a column of indentation or an indicator ('- ', '? ', ': ') before it on its line, so
# a line that starts with fewer than max_depth such characters nests at most about 2 * max_depth
# levels deep. Flow levels need an opening bracket each: a text with few of them is shallow; one
# with many is counted.
_FAST_MAX_FLOW_OPENERS = 1000
_NOT_BRACKETS = re.compile(r"[^\[\]{}]+")
_BRACKET_STEPS = str.maketrans("[{]}", "(())")
_BRACKET_RUNS = re.compile(r"\(+|\)+")


@functools.cache
def _deep_block_start(max_depth: int) -> re.Pattern[str]:
    return re.compile(f"^[ ?:-]{{{max_depth}}}", re.MULTILINE)


# ... which needs a run of max_depth of those characters somewhere: for ASCII text, each of them
# made "0" and everything else "x" by bytes.translate, then a substring search for the run (a
# multi-line "^" makes the regex try every position of the text); the regex only where it finds one.
_INDENT_AS_ZERO = bytes(ord("0") if chr(c) in " ?:-" else ord("x") for c in range(256))


def _may_nest_too_deep(doc: str, limits: Limits) -> bool:
    if doc.isascii():
        indent_run = b"0" * limits.max_depth
        deep = indent_run in doc.encode("ascii").translate(_INDENT_AS_ZERO) and bool(
            _deep_block_start(limits.max_depth).search(doc)
        )
    else:
        deep = bool(_deep_block_start(limits.max_depth).search(doc))
    if deep:
        return True
    if doc.count("[") + doc.count("{") <= _FAST_MAX_FLOW_OPENERS:
        return False
    steps = _NOT_BRACKETS.sub("", doc).translate(_BRACKET_STEPS)
    depth = deepest = 0
    for run in _BRACKET_RUNS.finditer(steps):  # "(((" opens three levels, "))" closes two
        depth += len(run[0]) if run[0][0] == "(" else -len(run[0])
        deepest = max(deepest, depth)
    return deepest > limits.max_depth


# --------------------------------------------------------------------------- 5: parsed values

# 5b: strings YAML 1.2 keeps but YAML 1.1 resolves to booleans or numbers.
YAML11_WORDS = frozenset(
    {"y", "Y", "yes", "Yes", "YES", "n", "N", "no", "No", "NO"}
    | {"on", "On", "ON", "off", "Off", "OFF", "=", "~"}
)
NUMBER_START = frozenset("+-._0123456789")
# Each branch is linear: no two quantifiers can split the same run of characters between them
# (the third branch, "digits, dots and underscores with an underscore in them", used to be
# [0-9._]*_[0-9._]*, which tries every underscore: 80,000 of them took 22 s).
YAML11_NUMBER = re.compile(
    r"[-+]?(?:0[bo][0-9_]+|[0-9][0-9_]*(?::[0-5]?[0-9])+(?:\.[0-9_]*)?|(?=[0-9.]*_)[0-9._]*)"
)
# 5d: a float with an exponent is a string to PyYAML; any float makes us look for one. Searched
# from the 'e' (a character class first keeps the search in C), the character before it looked
# at by a look-behind.
_EXPONENT = re.compile(r"[eE](?<=[0-9.][eE])[-+]?[0-9]")


def reads_differently(text: str) -> bool:
    """5b: YAML 1.1 resolves this plain string (a key or a value) to a boolean or a number."""
    return text in YAML11_WORDS or (
        text[:1] in NUMBER_START and YAML11_NUMBER.fullmatch(text) is not None
    )


def exponent_in(text: str) -> bool:
    """5d: the text has something shaped like a float's exponent."""
    return _EXPONENT.search(text) is not None
