"""tfjob_kit.extras: its copy of pyproject.toml's extras, and a command whose extra is missing
names the pip install that brings it."""

from __future__ import annotations

import importlib.util
import tomllib
from importlib import metadata
from importlib.machinery import ModuleSpec
from pathlib import Path

import pytest
from packaging.requirements import Requirement

from tfjob_kit import cli, extras

ROOT = Path(__file__).resolve().parents[2]
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
TOOLS = {"dev", "bench"}  # the repository's own extras, no command needs them


def test_the_extras_are_pyprojects_and_the_installed_packages() -> None:
    declared = {
        extra: tuple(sorted(Requirement(r).name for r in requirements))
        for extra, requirements in PROJECT["optional-dependencies"].items()
        if extra not in TOOLS
    }
    assert declared == extras.EXTRAS
    installed: dict[str, set[str]] = {}
    for line in metadata.requires("tfjob-kit") or []:
        requirement = Requirement(line)
        for extra in declared:
            if requirement.marker and requirement.marker.evaluate({"extra": extra}):
                installed.setdefault(extra, set()).add(requirement.name)
    assert {e: tuple(sorted(n)) for e, n in installed.items()} == declared
    # Each distribution's module is known, and here (the test tools install every extra).
    assert set(extras.PROVIDES) == {name for names in declared.values() for name in names}
    assert not [e for e in declared if extras.missing(e)]
    # validate, explain and convert need neither Ansible nor a cluster's API.
    assert not {Requirement(r).name for r in PROJECT["dependencies"]} & set(extras.PROVIDES)
    with pytest.raises(ValueError, match="no extra 'gui'"):
        extras.missing("gui")


@pytest.fixture
def without_kubernetes(monkeypatch: pytest.MonkeyPatch) -> None:
    real = importlib.util.find_spec

    def find_spec(name: str) -> ModuleSpec | None:
        return None if name == "kubernetes" else real(name)

    monkeypatch.setattr(extras, "find_spec", find_spec)


@pytest.mark.usefixtures("without_kubernetes")
def test_a_missing_extra_is_named(capsys: pytest.CaptureFixture[str]) -> None:
    assert extras.missing("cluster") == ["kubernetes"]
    assert extras.missing("bootstrap") == ["kubernetes"]
    with pytest.raises(extras.MissingExtraError) as raised:
        extras.require("ansible", "the tfjob.kit modules")
    assert str(raised.value) == (
        "the tfjob.kit modules needs kubernetes, which is not installed: "
        "pip install 'tfjob-kit[ansible]'"
    )
    # The command says it in one line and exits 2 (usage), before reading any file.
    assert cli.main(["validate", "--server", "no-such-file.yaml"]) == 2
    assert capsys.readouterr().err == (
        "tfjob-kit: error: validate --server needs kubernetes, which is not installed: "
        "pip install 'tfjob-kit[cluster]'\n"
    )
    assert cli.main(["cluster", "status", "--name", "x"]) == 2
    assert "tfjob-kit cluster needs kubernetes" in capsys.readouterr().err
    assert cli.main(["wait", "x"]) == 2
    assert "tfjob-kit wait needs kubernetes" in capsys.readouterr().err
    # validate alone needs no extra.
    assert cli.main(["validate", str(ROOT / "examples" / "tfjobs")]) == 0


def test_a_missing_parent_package_is_missing() -> None:
    assert not extras._installed("no_such_package.sub")
