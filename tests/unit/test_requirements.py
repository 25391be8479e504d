"""The hashed locks (requirements/): every dependency pinned to one version with its hashes,
agreeing with pyproject.toml, and installed the way pip checks hashes (`--require-hashes -r`,
then the project with `--no-deps`) by `make venv`, which `.ci/run` runs, as by the CI examples
(tests/unit/test_ci_examples.py)."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parents[2]
RUNTIME = ROOT / "requirements" / "runtime.txt"
DEV = ROOT / "requirements" / "dev.txt"
VALIDATE = ROOT / "requirements" / "validate.txt"
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())
# One requirement: its line and the continuation lines after it.
ENTRY = re.compile(
    r"^(?P<head>[A-Za-z0-9][^\s\\]*(?: ; [^\\]+)?) \\\n(?P<hashes>(?:    --hash=.*\n?)+)", re.M
)


def pins(path: Path) -> dict[str, str]:
    """Name -> version of every requirement of a lock, for this Python (a universal lock may pin
    a package once per Python range, with markers); each must be `name==version` with hashes."""
    text = path.read_text()
    found: dict[str, str] = {}
    parsed = 0
    for match in ENTRY.finditer(text):
        parsed += 1
        requirement = Requirement(match["head"])
        (spec,) = requirement.specifier
        assert spec.operator == "==", match["head"]
        assert re.fullmatch(r"(?:    --hash=sha256:[0-9a-f]{64}(?: \\)?\n?)+", match["hashes"])
        if requirement.marker is None or requirement.marker.evaluate():
            name = canonicalize_name(requirement.name)
            assert name not in found, f"{name} is pinned twice for this Python"
            found[name] = spec.version
    entries = [line for line in text.splitlines() if line and not line.startswith(("#", " "))]
    assert len(entries) == parsed, "a requirement without a pinned version and hashes"
    return found


def wanted(*extras: str) -> list[Requirement]:
    names = list(PROJECT["project"]["dependencies"])
    for extra in extras:
        names += PROJECT["project"]["optional-dependencies"][extra]
    return [Requirement(name) for name in names]


@pytest.mark.parametrize(
    ("lock", "extras"),
    [
        (RUNTIME, ("bootstrap",)),
        (VALIDATE, ()),
        (DEV, ("bootstrap", "dev", "bench", "plot")),
    ],
)
def test_the_lock_pins_every_dependency_within_pyprojects_bounds(
    lock: Path, extras: tuple[str, ...]
) -> None:
    pinned = pins(lock)
    for requirement in wanted(*extras):
        version = pinned.get(canonicalize_name(requirement.name))
        assert version is not None, f"{lock.name}: {requirement.name} is not locked"
        assert requirement.specifier.contains(version, prereleases=True), (requirement, version)


def test_the_dev_lock_agrees_with_the_runtime_lock_and_holds_the_build_backend() -> None:
    runtime, dev, lean = pins(RUNTIME), pins(DEV), pins(VALIDATE)
    assert {name: dev.get(name) for name in runtime} == runtime
    # tfjob-kit without extras: a subset of the runtime lock, at the same versions.
    assert {name: runtime.get(name) for name in lean} == lean
    for requirement in map(Requirement, PROJECT["build-system"]["requires"]):
        version = dev[canonicalize_name(requirement.name)]
        assert requirement.specifier.contains(version)
    assert "editables" in dev  # hatchling's editable install needs it


def test_make_venv_installs_only_from_the_locks() -> None:
    makefile = (ROOT / "Makefile").read_text()
    recipe = makefile.split("$(STAMP):", 1)[1].split("\n\n", 1)[0]
    installs = [line.strip() for line in recipe.splitlines() if "pip install" in line]
    assert installs == [
        "$(BIN)/pip install --quiet --require-hashes -r requirements/runtime.txt",
        "$(BIN)/pip install --quiet --require-hashes -r requirements/dev.txt",
        "$(BIN)/pip install --quiet --no-deps --no-build-isolation -e .",
    ]
    assert "requirements/runtime.txt requirements/dev.txt" in recipe.splitlines()[0]
