"""The Go wrapper modules (components/go/*) build nothing below the release that fixed a known
vulnerability of a module they use: a floor for each such module, checked against the version
each wrapper really builds with (its replace directive wins over its require).

The vulnerability database cannot be reached from the build machines, so the floors are kept
here; raise one when an advisory names a later fix."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
# Each wrapper's requirements: go.mod, and upgrade-from.mod where one source builds two releases.
REQUIREMENTS = sorted((ROOT / "components" / "go").glob("*/*.mod"))
# module -> the first release with every advisory known to affect the wrappers' use fixed.
FLOORS = {
    # GHSA-xr7q-jx4m-x55m: a private token in a malformed request's log (1.64.1).
    "google.golang.org/grpc": (1, 64, 1),
    # GO-2025-3595, GO-2025-3503, GO-2024-3333: x/net/html and the proxy's IPv6 zone IDs.
    "golang.org/x/net": (0, 38, 0),
}
_LINE = re.compile(r"^\s*(?:require\s+)?(\S+)\s+(v\d+\.\d+\.\d+)")
_REPLACE = re.compile(r"^\s*(?:replace\s+)?(\S+)(?:\s+v\S+)?\s+=>\s+(\S+)\s+(v\d+\.\d+\.\d+)")


def built_versions(go_mod: str) -> dict[str, tuple[int, int, int]]:
    """Module -> version the module builds with: its require, unless a replace names another."""
    required: dict[str, str] = {}
    replaced: dict[str, str] = {}
    for line in go_mod.splitlines():
        line = line.split("//")[0]
        if "=>" in line:
            found = _REPLACE.match(line)
            if found:
                replaced[found[1]] = found[3]
        elif (found := _LINE.match(line)) is not None:
            required[found[1]] = found[2]
    versions = {**required, **replaced}
    return {m: tuple(int(p) for p in v[1:].split(".")) for m, v in versions.items()}  # type: ignore[misc]


def test_replace_wins_over_require() -> None:
    text = "require (\n\tgoogle.golang.org/grpc v1.72.1 // indirect\n)\nreplace (\n" + (
        "\tgoogle.golang.org/grpc => google.golang.org/grpc v1.64.0\n)\n"
    )
    assert built_versions(text)["google.golang.org/grpc"] == (1, 64, 0)


def test_every_wrapper_has_requirements() -> None:
    wrappers = {p.parent.name for p in REQUIREMENTS}
    assert wrappers == {
        "etcd",
        "jobset",
        "kube",
        "kueue",
        "trainer",
        "training-operator",
        "volcano",
    }, wrappers
    assert any(p.name == "upgrade-from.mod" for p in REQUIREMENTS)


@pytest.mark.parametrize("requirements", REQUIREMENTS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_no_wrapper_builds_a_module_below_its_fixed_release(requirements: Path) -> None:
    versions = built_versions(requirements.read_text())
    low = {
        module: ".".join(map(str, versions[module]))
        for module, floor in FLOORS.items()
        if module in versions and versions[module] < floor
    }
    assert not low, f"{requirements} builds {low}, below the fixed releases {FLOORS}"
