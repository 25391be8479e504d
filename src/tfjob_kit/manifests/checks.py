"""The checks every parsed document passes, whichever parser read it: it is a Kubernetes object.

A mapping with string keys, values JSON can carry (no NaN, nothing beyond a 64-bit float, no
other YAML types) and bounded depth. On the fast path the same walk also applies rule 5 of
:mod:`.gate`: it raises :class:`~.gate.NeedsCareful` where YAML 1.1 would read a value
differently, so each document is walked once.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from tfjob_kit.findings import child_path
from tfjob_kit.manifests import gate
from tfjob_kit.manifests.documents import (
    DEFAULT_LIMITS,
    Document,
    Limits,
    LoadError,
    shorten,
    too_deep,
)
from tfjob_kit.manifests.numbers import MAX_NUMBER, OutOfRange, number_problem

_SCALAR_TYPES = (bool, type(None))
_NAMES = {
    "list": "sequence",
    "str": "string",
    "int": "number",
    "float": "number",
    "bool": "boolean",
    "OutOfRange": "number",
}


# The largest int within MAX_NUMBER (a whole number): an int compares with an int faster than with
# a float, and Python compares ints with floats exactly, so the answers are the same.
_MAX_INT = int(MAX_NUMBER)
_MIN_INT = -_MAX_INT

_WORDS = gate.YAML11_WORDS
_NUMBER_START = gate.NUMBER_START
_NUMBER = gate.YAML11_NUMBER.fullmatch

# Keys known to read the same in YAML 1.1 and 1.2: whether one does (gate rule 5b,
# gate.reads_differently) depends on the string alone, and manifests use few keys, again and again,
# so each is checked once. Bounded: short keys only, and at most so many (a small set stays in the
# processor's cache: a set of every value seen did not).
_KEYS_READ_SAME: set[str] = set()
_KEYS_READ_SAME_MAX = 5_000
_KEYS_READ_SAME_LONGEST = 100
# The first character of every string gate.reads_differently is true for: a YAML 1.1 word or a
# number. A string starting otherwise (most of them) reads the same.
_MAY_READ_DIFFERENTLY = frozenset(word[0] for word in _WORDS) | _NUMBER_START


def _key_reads_same(key: str) -> bool:
    """not gate.reads_differently(key), remembered (see _KEYS_READ_SAME)."""
    if gate.reads_differently(key):
        return False
    if len(key) <= _KEYS_READ_SAME_LONGEST and len(_KEYS_READ_SAME) < _KEYS_READ_SAME_MAX:
        _KEYS_READ_SAME.add(key)
    return True


def _scan(
    node: Any,
    depth: int,
    fast: bool,
    limits: Limits,
    saw_float: list[bool],
) -> tuple[list[str | int], str] | None:
    """First problem under node as (reversed path, message); raises NeedsCareful (fast only).

    Every key is checked where it comes, so the first problem in document order is the one
    found. On the fast path this is only the way for mappings with keys not known to be fine;
    :func:`_scan_fast` does the rest."""
    if depth > limits.max_depth:
        return [], too_deep(limits)
    is_dict = type(node) is dict
    pairs: Iterable[tuple[Any, Any]] = node.items() if is_dict else enumerate(node)
    for key, child in pairs:
        if is_dict:
            if type(key) is not str:
                if fast:
                    raise gate.NeedsCareful  # 5a: YAML 1.1 may read the key differently
                shown = shorten(key if type(key) is OutOfRange else repr(key))
                return [], f"mapping key {shown} is not a string (quote it)"
            if fast and key not in _KEYS_READ_SAME and not _key_reads_same(key):
                raise gate.NeedsCareful  # 5b
        kind = type(child)
        if kind is str:
            if fast and child[:1] in _MAY_READ_DIFFERENTLY and gate.reads_differently(child):
                raise gate.NeedsCareful  # 5b
        elif kind is dict or kind is list:
            found = (_scan_fast if fast else _scan)(child, depth + 1, fast, limits, saw_float)
            if found is not None:
                found[0].append(key)
                return found
        elif kind is int and _MIN_INT <= child <= _MAX_INT:
            pass  # number_problem(child) is None
        elif kind is float or kind is int or kind is OutOfRange:
            problem = number_problem(child)
            if problem is not None:
                if fast and child == child:  # 5c: out of range; the careful path keeps its text
                    raise gate.NeedsCareful
                return [key], problem
            if kind is float:
                saw_float[0] = True
        elif kind not in _SCALAR_TYPES:
            return [key], f"value of YAML type {kind.__name__} cannot be sent to Kubernetes"
    return None


def _scan_fast(
    node: Any,
    depth: int,
    fast: bool,
    limits: Limits,
    saw_float: list[bool],
) -> tuple[list[str | int], str] | None:
    """_scan(node, depth, True, limits, saw_float), the hot loop of loading: a mapping whose keys
    are all in _KEYS_READ_SAME (so all strings that read the same; the ``<=`` runs in C) needs no
    key checks, and only its values are looked at, as _scan looks at them; any other mapping goes
    to _scan. ``gate.reads_differently`` (after the look at the first character) and the common
    case of ``number_problem`` (an int within range) are written out. (``fast`` is always True:
    the signature is _scan's.)"""
    if depth > limits.max_depth:
        return [], too_deep(limits)
    if type(node) is dict:
        if not node.keys() <= _KEYS_READ_SAME:
            return _scan(node, depth, True, limits, saw_float)
        pairs: Iterable[tuple[Any, Any]] = node.items()
    else:
        pairs = enumerate(node)
    may_read_differently = _MAY_READ_DIFFERENTLY
    for key, child in pairs:
        kind = type(child)
        if kind is str:
            if child[:1] in may_read_differently and (
                child in _WORDS or (child[:1] in _NUMBER_START and _NUMBER(child) is not None)
            ):
                raise gate.NeedsCareful  # 5b: gate.reads_differently(child)
        elif kind is dict or kind is list:
            found = _scan_fast(child, depth + 1, True, limits, saw_float)
            if found is not None:
                found[0].append(key)
                return found
        elif kind is int and _MIN_INT <= child <= _MAX_INT:
            pass  # number_problem(child) is None
        elif kind is float or kind is int or kind is OutOfRange:
            problem = number_problem(child)
            if problem is not None:
                if child == child:  # 5c: out of range; the careful path keeps its text
                    raise gate.NeedsCareful
                return [key], problem
            if kind is float:
                saw_float[0] = True
        elif kind not in _SCALAR_TYPES:
            return [key], f"value of YAML type {kind.__name__} cannot be sent to Kubernetes"
    return None


def inspect(doc: Document, limits: Limits, fast: bool = False) -> bool:
    """Check that a parsed document is a Kubernetes object; set doc.error when it is not. With
    fast (yaml_rs read it), raise NeedsCareful when YAML 1.1 would have read a key or a scalar
    differently (gate rules 5a to 5c). Whether the content has a float (rule 5d looks at the
    whole text then, once: the caller's part)."""
    content = doc.content
    if not isinstance(content, dict):
        what = _NAMES.get(type(content).__name__, type(content).__name__)
        doc.error = LoadError(
            "not-an-object",
            f"document is a YAML {what}, not a Kubernetes object (a mapping)",
            doc.line,
        )
        return False
    saw_float = [False]
    problem = (_scan_fast if fast else _scan)(content, 1, fast, limits, saw_float)
    if problem is not None:
        parts, message = problem
        path = "$"
        for part in reversed(parts):
            path = child_path(path, part)
        rule = "input-limit" if message.startswith("nesting") else "yaml-syntax"
        doc.error = LoadError(rule, message, doc.line, path=path)
    doc.inspected = True
    return saw_float[0]


def unsendable(content: Any, limits: Limits = DEFAULT_LIMITS) -> tuple[str, str, str] | None:
    """(JSON path, message, rule) of the first thing in content that cannot be sent to
    Kubernetes as JSON: a mapping key that is not a string, or a number JSON cannot carry (NaN,
    infinite, beyond a 64-bit float) (``yaml-syntax``); or nesting deeper than the loader allows
    (``input-limit``: validation recurses once per level). For objects that did not come through
    the loader: the Ansible module's definition given as a dict. Iterative, so any depth is
    looked at safely."""
    # (path so far, as nested pairs; node; its depth, the document's root at 1)
    stack: list[tuple[Any, Any, int]] = [(None, content, 1)]
    while stack:
        path, node, depth = stack.pop()
        kind = type(node)
        message, rule = None, "yaml-syntax"
        if (kind is dict or kind is list) and depth > limits.max_depth:
            message, rule = too_deep(limits), "input-limit"
        elif kind is dict:
            bad = [key for key in node if not isinstance(key, str)]
            if not bad:
                stack.extend(
                    ((path, key), child, depth + 1) for key, child in reversed(node.items())
                )
                continue
            message = f"mapping key {shorten(repr(bad[0]))} is not a string (quote it)"
        elif kind is list:
            stack.extend(
                ((path, index), child, depth + 1)
                for index, child in reversed(list(enumerate(node)))
            )
            continue
        else:
            message = number_problem(node)
        if message is None:
            continue
        parts: list[str | int] = []
        while path is not None:
            path, part = path
            parts.append(part)
        text = "$"
        for part in reversed(parts):
            text = child_path(text, part)
        return text, message, rule
    return None
