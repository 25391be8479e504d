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
from tfjob_kit.manifests.documents import Document, Limits, LoadError, shorten, too_deep
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


_WORDS = gate.YAML11_WORDS
_NUMBER_START = gate.NUMBER_START
_NUMBER = gate.YAML11_NUMBER.fullmatch


def _scan(
    node: Any,
    depth: int,
    fast: bool,
    limits: Limits,
    saw_float: list[bool],
) -> tuple[list[str | int], str] | None:
    """First problem under node as (reversed path, message); raises NeedsCareful (fast only).

    The hot loop of loading: ``gate.reads_differently`` and the common case of
    ``number_problem`` (an int within range) are written out in it."""
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
            # 5b: gate.reads_differently(key)
            if fast and (key in _WORDS or (key[:1] in _NUMBER_START and _NUMBER(key) is not None)):
                raise gate.NeedsCareful
        kind = type(child)
        if kind is str:
            # 5b: gate.reads_differently(child)
            if fast and (
                child in _WORDS or (child[:1] in _NUMBER_START and _NUMBER(child) is not None)
            ):
                raise gate.NeedsCareful
        elif kind is dict or kind is list:
            found = _scan(child, depth + 1, fast, limits, saw_float)
            if found is not None:
                found[0].append(key)
                return found
        elif kind is int and -MAX_NUMBER <= child <= MAX_NUMBER:
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


def inspect(doc: Document, limits: Limits, fast_text: str | None = None) -> None:
    """Check that a parsed document is a Kubernetes object; set doc.error when it is not. With
    fast_text (the whole text the fast parser read), raise NeedsCareful when YAML 1.1 would have
    read a scalar differently (gate rule 5)."""
    content = doc.content
    if not isinstance(content, dict):
        what = _NAMES.get(type(content).__name__, type(content).__name__)
        doc.error = LoadError(
            "not-an-object",
            f"document is a YAML {what}, not a Kubernetes object (a mapping)",
            doc.line,
        )
        return
    saw_float = [False]
    problem = _scan(content, 1, fast_text is not None, limits, saw_float)
    if fast_text is not None and saw_float[0] and gate.exponent_in(fast_text):  # 5d
        raise gate.NeedsCareful
    if problem is not None:
        parts, message = problem
        path = "$"
        for part in reversed(parts):
            path = child_path(path, part)
        rule = "input-limit" if message.startswith("nesting") else "yaml-syntax"
        doc.error = LoadError(rule, message, doc.line, path=path)
    doc.inspected = True


def unsendable(content: Any) -> tuple[str, str] | None:
    """(JSON path, message) of the first thing in content that cannot be sent to Kubernetes as
    JSON: a mapping key that is not a string, or a number JSON cannot carry (NaN, infinite,
    beyond a 64-bit float). For objects that did not come through the loader: the Ansible
    module's definition given as a dict. Iterative, so any depth is fine."""
    stack: list[tuple[Any, Any]] = [(None, content)]  # (path so far, as nested pairs; node)
    while stack:
        path, node = stack.pop()
        kind = type(node)
        message = None
        if kind is dict:
            bad = [key for key in node if not isinstance(key, str)]
            if not bad:
                stack.extend(((path, key), child) for key, child in reversed(node.items()))
                continue
            message = f"mapping key {shorten(repr(bad[0]))} is not a string (quote it)"
        elif kind is list:
            stack.extend(((path, index), child) for index, child in reversed(list(enumerate(node))))
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
        return text, message
    return None
