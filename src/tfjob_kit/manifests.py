"""Safe loading of Kubernetes manifests: files, directories, standard input, text.

Every way a YAML document can go wrong ends in a :class:`LoadError` that says where (document
number, line and column) and why, in bounded time and memory:

* syntax errors, tabs used for indentation, and non-UTF-8 input;
* duplicate mapping keys (Kubernetes would keep one silently);
* tags other than the standard ones (no object construction, ever);
* alias bombs: the expanded size of every document is bounded;
* deep nesting and huge documents (an object over ~1.5 MiB cannot be stored in etcd anyway);
  neither parser is given a text nested deeper than it can take without running out of stack;
* keys that are not strings and values JSON cannot carry (NaN, numbers beyond a 64-bit float);
* pathological scalars (long runs of digits, ``_``, ``:``): every check is linear in the input.

Scalars resolve as Kubernetes resolves them (YAML 1.1, like go-yaml: ``0644`` is 420 and ``yes`` is
true), except that timestamps stay strings. Documents that use nothing YAML 1.1 and 1.2 disagree on
are parsed by the fast ``yaml_rs`` parser; everything else goes through PyYAML with the checks
above. Both paths give the same result; a property test holds them to it.
"""

from __future__ import annotations

import functools
import os
import re
import sys
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from tfjob_kit.findings import child_path

try:  # the fast path is optional: the careful path alone is complete
    import yaml_rs
except ImportError:  # pragma: no cover - exercised where yaml_rs has no wheel
    yaml_rs = None  # type: ignore[assignment]

MANIFEST_SUFFIXES = (".yaml", ".yml", ".json")


@dataclass(frozen=True)
class Limits:
    """Bounds on what one input may cost."""

    max_file_bytes: int = 64 * 1024 * 1024
    max_document_bytes: int = 3 * 1024 * 1024
    max_documents: int = 20_000
    max_nodes: int = 200_000  # per document, after alias expansion
    max_depth: int = 100


DEFAULT_LIMITS = Limits()


@dataclass(frozen=True)
class LoadError:
    """Why a document (or a whole input) could not be loaded."""

    rule: str  # yaml-syntax | input-limit | not-an-object
    message: str
    line: int | None = None
    column: int | None = None
    path: str = "$"


@dataclass
class Document:
    """One YAML document of one source: its content, or the error that stopped it."""

    source: str
    index: int  # 1-based position in the source
    line: int  # 1-based line where the document starts
    content: Any = None
    error: LoadError | None = None

    @property
    def ok(self) -> bool:
        return self.error is None

    @property
    def kind(self) -> str:
        if isinstance(self.content, dict):
            return str(self.content.get("kind", ""))
        return ""

    @property
    def api_version(self) -> str:
        if isinstance(self.content, dict):
            return str(self.content.get("apiVersion", ""))
        return ""


# A JSON number Kubernetes can carry is at most a 64-bit float; a larger one (a 5000-digit
# integer, 1.0e+999, .inf) is refused where it is read, with its text.
MAX_NUMBER = sys.float_info.max
_MAX_DECIMAL_DIGITS = len(str(int(MAX_NUMBER)))  # 309: longer integers are out of range
_MAX_SEXAGESIMAL_PARTS = 175  # 60 ** 174 > MAX_NUMBER
_SHOWN_CHARS = 40


def shorten(text: str, limit: int = _SHOWN_CHARS) -> str:
    """text, or its start and its length when it is longer than limit (for messages)."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}... ({len(text)} characters)"


class _OutOfRange(str):
    """The text of a YAML number that no 64-bit float can hold (kept for the message)."""

    __slots__ = ()


def out_of_range_message(text: str) -> str:
    return (
        f"number {shorten(text)} is out of range: Kubernetes reads numbers as 64-bit "
        "floats at most (about 1.8e308); quote it if it is meant as a string"
    )


class InputError(Exception):
    """A path that cannot be read at all (a usage error, not a finding)."""


# --------------------------------------------------------------------------- careful path


class _StrictConstructor(yaml.constructor.SafeConstructor):
    """SafeConstructor that refuses duplicate keys and keeps timestamps as strings."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: dict[Any, yaml.Node] = {}
        for key_node, _ in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":
                continue
            key = self.construct_object(key_node, deep=True)
            try:
                first = seen.get(key)
            except TypeError:
                raise yaml.constructor.ConstructorError(
                    None, None, "mapping key is not a string", key_node.start_mark
                ) from None
            if first is not None:
                shown = shorten(repr(key))
                raise yaml.constructor.ConstructorError(
                    f"while constructing a mapping (key {shown} first defined on line "
                    f"{first.start_mark.line + 1})",
                    node.start_mark,
                    f"found duplicate key {shown}",
                    key_node.start_mark,
                )
            seen[key] = key_node
        return super().construct_mapping(node, deep=deep)

    def construct_yaml_int(self, node: yaml.ScalarNode) -> int | str:  # type: ignore[override]
        """PyYAML's int, without its quadratic arithmetic on huge texts; a number no 64-bit float
        can hold is _OutOfRange, and '0b_' (no digits) stays a string, as go-yaml reads it."""
        text = str(self.construct_scalar(node))
        value = text.replace("_", "")
        sign = -1 if value[:1] == "-" else 1
        value = value.lstrip("+-")
        try:
            if value.startswith("0b"):
                number = int(value[2:], 2)
            elif value.startswith("0x"):
                number = int(value[2:], 16)
            elif value[:1] == "0":
                number = int(value, 8)
            elif ":" in value:
                parts = value.split(":")  # the first part is not zero
                if len(parts) > _MAX_SEXAGESIMAL_PARTS:
                    return _OutOfRange(text)
                number = 0
                for part in parts:
                    number = number * 60 + int(part)
            elif len(value) > _MAX_DECIMAL_DIGITS:
                return _OutOfRange(text)
            else:
                number = int(value)
        except ValueError:
            return text
        return _OutOfRange(text) if number > MAX_NUMBER else sign * number

    def construct_yaml_float(self, node: yaml.ScalarNode) -> float | str:  # type: ignore[override]
        """PyYAML's float; infinite values (.inf, 1.0e+999, long base-60 ones) are _OutOfRange."""
        text = str(self.construct_scalar(node))
        value = text.replace("_", "").lower()
        sign = -1.0 if value[:1] == "-" else 1.0
        value = value.lstrip("+-")
        number: float
        if value == ".nan":
            return float("nan")
        if value == ".inf":
            return _OutOfRange(text)
        if ":" in value:
            parts = value.split(":")
            first = next((i for i, part in enumerate(parts) if float(part) != 0), len(parts) - 1)
            if len(parts) - first > _MAX_SEXAGESIMAL_PARTS:
                return _OutOfRange(text)
            number, base = 0.0, 1
            try:
                for part in reversed(parts[first:]):
                    number += float(part) * base
                    base *= 60
            except OverflowError:
                return _OutOfRange(text)
        else:
            number = float(value)
        if number in (float("inf"), float("-inf")):
            return _OutOfRange(text)
        return sign * number

    def timestamp_as_string(self, node: yaml.ScalarNode) -> str:
        """Kubernetes (go-yaml into JSON) keeps timestamps as strings."""
        return str(self.construct_scalar(node))


_StrictConstructor.add_constructor(  # type: ignore[type-var]
    "tag:yaml.org,2002:timestamp", _StrictConstructor.timestamp_as_string
)
_StrictConstructor.add_constructor(  # type: ignore[type-var]
    "tag:yaml.org,2002:int", _StrictConstructor.construct_yaml_int
)
_StrictConstructor.add_constructor(  # type: ignore[type-var]
    "tag:yaml.org,2002:float", _StrictConstructor.construct_yaml_float
)

try:
    from yaml.cyaml import CParser as _Parser  # type: ignore[attr-defined]  # libyaml: fast, and bounds nesting at 1000
except ImportError:  # pragma: no cover - PyYAML built without libyaml

    class _Parser(  # type: ignore[no-redef]
        yaml.reader.Reader, yaml.scanner.Scanner, yaml.parser.Parser, yaml.composer.Composer
    ):
        def __init__(self, stream: str) -> None:
            yaml.reader.Reader.__init__(self, stream)
            yaml.scanner.Scanner.__init__(self)
            yaml.parser.Parser.__init__(self)
            yaml.composer.Composer.__init__(self)


class _StrictLoader(_Parser, _StrictConstructor, yaml.resolver.Resolver):
    def __init__(self, stream: str) -> None:
        _Parser.__init__(self, stream)
        _StrictConstructor.__init__(self)
        yaml.resolver.Resolver.__init__(self)


def _graph_cost(root: yaml.Node, limits: Limits) -> LoadError | None:
    """Expanded node count and depth of a composed document, without expanding aliases."""
    sizes: dict[int, int] = {}
    depths: dict[int, int] = {}
    stack: list[tuple[yaml.Node, bool]] = [(root, False)]
    while stack:
        node, done = stack.pop()
        key = id(node)
        if key in sizes and not done:
            continue
        children: list[yaml.Node]
        if isinstance(node, yaml.MappingNode):
            children = [n for pair in node.value for n in pair]
        elif isinstance(node, yaml.SequenceNode):
            children = list(node.value)
        else:
            children = []
        if not done:
            sizes[key] = -1  # in progress: a cycle would revisit it (recursive aliases)
            stack.append((node, True))
            for child in children:
                if sizes.get(id(child)) == -1:
                    return LoadError("input-limit", "recursive alias", *_mark(child))
                if id(child) not in sizes:
                    stack.append((child, False))
            continue
        sizes[key] = 1 + sum(sizes[id(c)] for c in children)
        depths[key] = 1 + max((depths[id(c)] for c in children), default=0)
        if sizes[key] > limits.max_nodes:
            return LoadError(
                "input-limit",
                f"document expands to more than {limits.max_nodes} nodes "
                "(alias bomb or oversized document)",
                *_mark(node),
            )
        if depths[key] > limits.max_depth:
            return LoadError("input-limit", _too_deep(limits), *_mark(node))
    return None


def _mark(node: yaml.Node) -> tuple[int, int]:
    return node.start_mark.line + 1, node.start_mark.column + 1


def _yaml_error(exc: yaml.YAMLError, line_offset: int, limits: Limits) -> LoadError:
    mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
    problem = getattr(exc, "problem", None) or str(exc)
    context = getattr(exc, "context", None)
    message = f"{context}: {problem}" if context else str(problem)
    rule = "yaml-syntax"
    if "maximum nesting depth" in message:  # libyaml stops at 1000 levels
        rule, message = "input-limit", _too_deep(limits)
    if mark is None:
        return LoadError(rule, message)
    return LoadError(rule, message, mark.line + 1 + line_offset, mark.column + 1)


def _too_deep(limits: Limits) -> str:
    return f"nesting deeper than {limits.max_depth} levels"


def _careful(
    text: str,
    source: str,
    limits: Limits,
    first_index: int,
    line_offset: int,
) -> Iterator[Document]:
    loader = _StrictLoader(text)
    index = first_index
    try:
        while True:
            start_line = line_offset + 1
            try:
                node = loader.get_node() if loader.check_node() else None
            except yaml.YAMLError as exc:
                yield Document(
                    source, index, start_line, error=_yaml_error(exc, line_offset, limits)
                )
                return
            except RecursionError:  # pragma: no cover - PyYAML without libyaml composes recursively
                yield Document(
                    source,
                    index,
                    start_line,
                    error=LoadError("input-limit", _too_deep(limits), start_line),
                )
                return
            if node is None:
                return
            start_line = node.start_mark.line + 1 + line_offset
            if node.tag == "tag:yaml.org,2002:null" and node.value in ("", "~", "null"):
                continue  # an empty document: nothing to judge
            cost = _graph_cost(node, limits)
            if cost is not None:
                shifted = LoadError(
                    cost.rule, cost.message, (cost.line or 1) + line_offset, cost.column
                )
                yield Document(source, index, start_line, error=shifted)
            else:
                try:
                    content = loader.construct_document(node)
                except yaml.YAMLError as exc:
                    yield Document(
                        source, index, start_line, error=_yaml_error(exc, line_offset, limits)
                    )
                else:
                    doc = Document(source, index, start_line, content)
                    _inspect(doc, limits)
                    yield doc
            index += 1
    finally:
        loader.dispose()


# --------------------------------------------------------------------------- fast path

# The fast path (yaml_rs, YAML 1.2) is taken only for texts that read the same under YAML 1.1
# (PyYAML, go-yaml, hence Kubernetes). Texts with any of these go the careful way: tabs, merge
# keys, anchors, aliases, tags, directives, and the line breaks only YAML 1.1 knows.
_CAREFUL_MARKERS = ("\t", "<<", "&", "*", "!", "\n%", "\x85", "\u2028", "\u2029")
# Characters YAML does not allow; yaml_rs reads some of them as nothing.
_NON_PRINTABLE = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x84\x86-\x9f\ufffe\uffff]")
# Integers with a leading zero are octal in YAML 1.1 (0644 == 420) and decimal in 1.2; 0o17 is
# octal in 1.2 only.
_ZERO_STARTS = tuple(f"{before}{sign}0" for before in " \n[{," for sign in ("", "-", "+"))
# A float with an exponent is a string to PyYAML; any float makes us look for one.
_EXPONENT = re.compile(r"[0-9.][eE][-+]?[0-9]")
# Strings YAML 1.2 keeps but YAML 1.1 resolves to booleans or numbers.
_YAML11_WORDS = frozenset(
    (
        "y",
        "Y",
        "yes",
        "Yes",
        "YES",
        "n",
        "N",
        "no",
        "No",
        "NO",
        "on",
        "On",
        "ON",
        "off",
        "Off",
        "OFF",
        "=",
        "~",
    )
)
# Each branch is linear: no two quantifiers can split the same run of characters between them
# (the third branch, "digits, dots and underscores with an underscore in them", used to be
# [0-9._]*_[0-9._]*, which tries every underscore: 80,000 of them took 22 s).
_YAML11_NUMBER = re.compile(
    r"[-+]?(?:0[bo][0-9_]+|[0-9][0-9_]*(?::[0-5]?[0-9])+(?:\.[0-9_]*)?|(?=[0-9.]*_)[0-9._]*)"
)


_ASCII_PRINTABLE = bytes(range(0x20, 0x7F)) + b"\t\n\r"


def _has_leading_zero_number(text: str) -> bool:
    for start in _ZERO_STARTS:
        index = text.find(start)
        while index != -1:
            after = index + len(start)
            if text[after : after + 1] in _OCTAL_FOLLOWERS:
                return True
            index = text.find(start, after)
    return False


_OCTAL_FOLLOWERS = frozenset("0123456789_bo")


def _has_non_printable(text: str) -> bool:
    if text.isascii():
        return bool(text.encode("ascii").translate(None, _ASCII_PRINTABLE))
    return _NON_PRINTABLE.search(text) is not None


# A line that ends with a block scalar header (`|`, `>-`, `|+2 # comment`, ...).
_BLOCK_HEADER = re.compile(r"[|>][-+0-9]*[ \t]*(?:#[^\n]*)?$")


def _block_scalar_at_end(doc: str) -> bool:
    """yaml_rs and PyYAML disagree on a block scalar at the very end of a document when the
    text has no final line break, or when the scalar is empty ('a: |\n' is '' to PyYAML and
    YAML 1.2's spec, '\n' to yaml_rs). Either case goes the careful way."""
    if "|" not in doc and ">" not in doc:
        return False
    lines = [line for line in doc.split("\n") if line.strip()]
    if not any(_BLOCK_HEADER.search(line) for line in lines):
        return False
    return not doc.endswith("\n") or bool(lines and _BLOCK_HEADER.search(lines[-1]))


# yaml_rs recurses once per level of nesting, and only bounds flow nesting itself (at 256):
# 30,000 levels of '- - - x' end the process. A text that could nest deeper than
# Limits.max_depth goes the careful way instead, where libyaml stops at 1000 levels and
# _graph_cost at max_depth, with a located error. In block context each level needs a column of
# indentation or an indicator ('- ', '? ', ': ') before it on its line, so a line that starts with
# fewer than max_depth such characters nests at most about 2 * max_depth levels deep. Flow levels
# need an opening bracket each: a text with few of them is shallow; one with many is counted.
_FAST_MAX_FLOW_OPENERS = 1000


@functools.cache
def _deep_block_start(max_depth: int) -> re.Pattern[str]:
    return re.compile(f"^[ ?:-]{{{max_depth}}}", re.MULTILINE)


def _may_nest_too_deep(doc: str, limits: Limits) -> bool:
    if _deep_block_start(limits.max_depth).search(doc):
        return True
    if doc.count("[") + doc.count("{") <= _FAST_MAX_FLOW_OPENERS:
        return False
    steps = _NOT_BRACKETS.sub("", doc).translate(_BRACKET_STEPS)
    depth = deepest = 0
    for run in _BRACKET_RUNS.finditer(steps):  # "(((" opens three levels, "))" closes two
        depth += len(run[0]) if run[0][0] == "(" else -len(run[0])
        deepest = max(deepest, depth)
    return deepest > limits.max_depth


_NOT_BRACKETS = re.compile(r"[^\[\]{}]+")
_BRACKET_STEPS = str.maketrans("[{]}", "(())")
_BRACKET_RUNS = re.compile(r"\(+|\)+")


# A run of digits too long for a 64-bit float: yaml_rs would turn it into a Python int, which
# costs time quadratic in its length (3 MiB of digits: 13 s), only to have it refused; the
# careful path refuses it from its text. The look-behind tries each run once: linear.
_LONG_DIGITS = re.compile(f"(?<![0-9])[0-9]{{{_MAX_DECIMAL_DIGITS}}}")


def _plain_enough(text: str) -> bool:
    if text.startswith("%") or any(marker in text for marker in _CAREFUL_MARKERS):
        return False
    return not (
        _has_leading_zero_number(text) or _has_non_printable(text) or _LONG_DIGITS.search(text)
    )


def _fast(text: str, source: str, limits: Limits) -> list[Document] | None:
    """Parse with yaml_rs when the text reads the same in YAML 1.1 and 1.2; None means 'use the
    careful path' (which also produces every located error)."""
    if yaml_rs is None or not _plain_enough(text):
        return None
    docs: list[Document] = []
    for begin, end, line in _split_documents(text):
        if (
            end - begin > limits.max_document_bytes
            or _block_scalar_at_end(text[begin:end])
            or _may_nest_too_deep(text[begin:end], limits)
        ):
            return None
        try:
            content = yaml_rs.loads(text[begin:end], parse_datetime=False)
        except Exception:
            return None
        if content is None:
            continue
        if not isinstance(content, dict):
            return None  # rare; the careful path reads scalars the YAML 1.1 way for the message
        doc = Document(source, len(docs) + 1, line, content)
        if _inspect(doc, limits, text) == "careful":
            return None
        docs.append(doc)
    return docs


# --------------------------------------------------------------------------- shared checks


class _NeedsCareful(Exception):  # noqa: N818 - a signal, not an error
    """YAML 1.1 would read something in this document differently from YAML 1.2."""


_NUMBER_START = frozenset("+-._0123456789")
_SCALAR_TYPES = (bool, type(None))
_INFINITIES = (float("inf"), float("-inf"))


def _int_text(number: int) -> str:
    """Decimal text of an integer, or its size when Python will not print it (4300 digits)."""
    try:
        return str(number)
    except ValueError:
        digits = int(number.bit_length() * 0.30103) + 1
        return f"{'-' if number < 0 else ''}<an integer of about {digits} digits>"


def _number_problem(value: Any) -> str | None:
    """Why this number (or the text of a YAML number no 64-bit float holds) cannot be sent to
    Kubernetes, or None when it can (or is no number)."""
    kind = type(value)
    if kind is float:
        if value != value:
            return "NaN cannot be sent to Kubernetes"
        if value in _INFINITIES:
            return out_of_range_message(str(value))
    elif kind is int:
        if value > MAX_NUMBER or -value > MAX_NUMBER:
            return out_of_range_message(_int_text(value))
    elif kind is _OutOfRange:
        return out_of_range_message(value)
    return None


def _scan(
    node: Any,
    depth: int,
    fast: bool,
    limits: Limits,
    saw_float: list[bool],
) -> tuple[list[str | int], str] | None:
    """First problem under node as (reversed path, message); raises _NeedsCareful (fast only)."""
    if depth > limits.max_depth:
        return [], _too_deep(limits)
    is_dict = type(node) is dict
    pairs: Iterable[tuple[Any, Any]] = node.items() if is_dict else enumerate(node)
    for key, child in pairs:
        if is_dict:
            if type(key) is not str:
                if fast:
                    raise _NeedsCareful  # YAML 1.1 may read the key differently
                shown = shorten(key if type(key) is _OutOfRange else repr(key))
                return [], f"mapping key {shown} is not a string (quote it)"
            if fast and (
                key in _YAML11_WORDS or (key[:1] in _NUMBER_START and _YAML11_NUMBER.fullmatch(key))
            ):
                raise _NeedsCareful
        kind = type(child)
        if kind is str:
            if fast and (
                child in _YAML11_WORDS
                or (child[:1] in _NUMBER_START and _YAML11_NUMBER.fullmatch(child))
            ):
                raise _NeedsCareful
        elif kind is dict or kind is list:
            found = _scan(child, depth + 1, fast, limits, saw_float)
            if found is not None:
                found[0].append(key)
                return found
        elif kind is float or kind is int or kind is _OutOfRange:
            problem = _number_problem(child)
            if problem is not None:
                if fast and child == child:  # out of range: the careful path keeps its text
                    raise _NeedsCareful
                return [key], problem
            if kind is float:
                saw_float[0] = True
        elif kind not in _SCALAR_TYPES:
            return [key], f"value of YAML type {kind.__name__} cannot be sent to Kubernetes"
    return None


def _inspect(doc: Document, limits: Limits, fast_text: str | None = None) -> str | None:
    """Check that a parsed document is a Kubernetes object: a mapping with string keys, JSON
    values and bounded depth; set doc.error when it is not. With fast_text (the yaml_rs path),
    return "careful" when YAML 1.1 would have read a scalar differently."""
    content = doc.content
    if not isinstance(content, dict):
        names = {
            "list": "sequence",
            "str": "string",
            "int": "number",
            "float": "number",
            "bool": "boolean",
        }
        what = names.get(type(content).__name__, type(content).__name__)
        doc.error = LoadError(
            "not-an-object",
            f"document is a YAML {what}, not a Kubernetes object (a mapping)",
            doc.line,
        )
        return None
    saw_float = [False]
    try:
        problem = _scan(content, 1, fast_text is not None, limits, saw_float)
    except _NeedsCareful:
        return "careful"
    if fast_text is not None and saw_float[0] and _EXPONENT.search(fast_text):
        return "careful"
    if problem is not None:
        parts, message = problem
        path = "$"
        for part in reversed(parts):
            path = child_path(path, part)
        rule = "input-limit" if message.startswith("nesting") else "yaml-syntax"
        doc.error = LoadError(rule, message, doc.line, path=path)
    return None


def unsendable_number(content: Any) -> tuple[str, str] | None:
    """(JSON path, message) of the first number in content that JSON cannot carry to Kubernetes
    (NaN, infinite, beyond a 64-bit float), for objects that did not come through load_text:
    the Ansible module's definition given as a dict."""
    stack: list[tuple[Any, Any]] = [(None, content)]  # (path so far, as nested pairs; node)
    while stack:
        path, node = stack.pop()
        kind = type(node)
        if kind is dict:
            stack.extend(((path, key), child) for key, child in reversed(node.items()))
            continue
        if kind is list:
            stack.extend(((path, index), child) for index, child in reversed(list(enumerate(node))))
            continue
        message = _number_problem(node)
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


# --------------------------------------------------------------------------- entry points


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
    docs = _fast(text, source, limits)
    if docs is None:
        docs = []
        for begin, end, line in _split_documents(text):
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
            docs.extend(_careful(chunk, source, limits, len(docs) + 1, line - 1))
    if len(docs) > limits.max_documents:
        too_many = LoadError("input-limit", f"more than {limits.max_documents} documents")
        over = Document(source, limits.max_documents + 1, 1, error=too_many)
        return [*docs[: limits.max_documents], over]
    return docs


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


def _split_documents(text: str) -> Iterator[tuple[int, int, int]]:
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


def read_source(path: str, limits: Limits = DEFAULT_LIMITS) -> str:
    """Text of a file, or of standard input for '-'. Raises InputError when unreadable."""
    try:
        if path == "-":
            data = sys.stdin.buffer.read(limits.max_file_bytes + 1)
        else:
            with Path(path).open("rb") as handle:
                data = handle.read(limits.max_file_bytes + 1)
    except OSError as exc:
        raise InputError(f"{path}: cannot read: {exc.strerror or exc}") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        text = data[: exc.start].decode("utf-8")
        line = text.count("\n") + 1
        raise _UndecodableError(
            LoadError(
                "yaml-syntax",
                f"not UTF-8 text (byte 0x{data[exc.start]:02x} at offset "
                f"{exc.start}); is this a binary file?",
                line,
            )
        ) from None


class _UndecodableError(Exception):
    def __init__(self, error: LoadError) -> None:
        super().__init__(error.message)
        self.error = error


def expand_paths(paths: list[str]) -> list[str]:
    """Files named, and manifest files under directories named (sorted, recursive)."""
    found: list[str] = []
    for path in paths:
        if path == "-":
            found.append(path)
            continue
        if Path(path).is_dir():
            for root, dirs, files in os.walk(path):
                dirs[:] = sorted(d for d in dirs if not d.startswith("."))
                found.extend(
                    str(Path(root) / name)
                    for name in sorted(files)
                    if name.endswith(MANIFEST_SUFFIXES)
                )
        elif Path(path).exists():
            found.append(path)
        else:
            raise InputError(f"{path}: no such file or directory")
    return found


def load_path(path: str, limits: Limits = DEFAULT_LIMITS) -> list[Document]:
    """Documents of one file (or '-'); an undecodable file is one error document."""
    try:
        text = read_source(path, limits)
    except _UndecodableError as exc:
        return [Document(path, 1, exc.error.line or 1, error=exc.error)]
    return load_text(text, path, limits)


def load_paths(paths: list[str], limits: Limits = DEFAULT_LIMITS) -> list[Document]:
    """Documents of every file and directory named. Raises InputError for unreadable paths."""
    docs: list[Document] = []
    for path in expand_paths(paths):
        docs.extend(load_path(path, limits))
    return docs
