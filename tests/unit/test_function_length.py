"""No function in src/ is longer than LIMIT lines (a long function wants to be several, each
with a name that says its job), apart from the ports that mirror one long Go function line for
line (GO_PORTS: splitting them would lose the reading side by side with Go)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[2] / "src" / "tfjob_kit"
LIMIT = 80
# (module, function): the Go function it mirrors.
GO_PORTS = {
    ("podcheck/pod.py", "validate_pod_spec"): "ValidatePodSpec",
    ("podcheck/security.py", "validate_pod_security_context"): "validatePodSpecSecurityContext",
}

pytestmark = pytest.mark.pure


def lengths() -> dict[tuple[str, str], int]:
    found: dict[tuple[str, str], int] = {}
    for path in sorted(SRC.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                assert node.end_lineno is not None
                key = (path.relative_to(SRC).as_posix(), node.name)
                found[key] = max(found.get(key, 0), node.end_lineno - node.lineno + 1)
    return found


def test_no_function_is_longer_than_the_limit() -> None:
    long = {key: n for key, n in lengths().items() if n > LIMIT and key not in GO_PORTS}
    assert not long, f"functions over {LIMIT} lines (split them): {long}"


def test_each_go_port_still_exists_and_needs_its_place() -> None:
    found = lengths()
    for key, go in GO_PORTS.items():
        assert key in found, f"{key} (the port of {go}) is gone: remove it from GO_PORTS"
        assert found[key] > LIMIT, f"{key} is short now: remove it from GO_PORTS"
