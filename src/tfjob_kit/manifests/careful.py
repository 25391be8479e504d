"""The careful parser: PyYAML read the way Kubernetes reads YAML, every cost bounded.

YAML 1.1 scalars (like go-yaml: ``0644`` is 420, ``yes`` is true), except that timestamps stay
strings; duplicate keys refused; standard tags only (no object construction, ever); the expanded
size and depth of each document measured on its node graph before anything is built, so alias
bombs and deep nesting end in a located error. Every text the gate (:mod:`.gate`) does not let
through goes this way, and every located load error comes from here.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import yaml

from tfjob_kit.manifests import checks
from tfjob_kit.manifests.documents import Document, Limits, LoadError, shorten, too_deep
from tfjob_kit.manifests.numbers import read_float, read_int


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
        """PyYAML's int, linear in the text; see numbers.read_int."""
        return read_int(str(self.construct_scalar(node)))

    def construct_yaml_float(self, node: yaml.ScalarNode) -> float | str:  # type: ignore[override]
        """PyYAML's float; infinite values are OutOfRange (see numbers.read_float)."""
        return read_float(str(self.construct_scalar(node)))

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
            return LoadError("input-limit", too_deep(limits), *_mark(node))
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
        rule, message = "input-limit", too_deep(limits)
    if mark is None:
        return LoadError(rule, message)
    return LoadError(rule, message, mark.line + 1 + line_offset, mark.column + 1)


def load_careful(
    text: str,
    source: str,
    limits: Limits,
    first_index: int,
    line_offset: int,
) -> Iterator[Document]:
    """Documents of one chunk of text (numbered from first_index; its first line is
    line_offset + 1), each checked; the first syntax error ends the chunk."""
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
                    error=LoadError("input-limit", too_deep(limits), start_line),
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
                    checks.inspect(doc, limits)
                    yield doc
            index += 1
    finally:
        loader.dispose()
