"""Shared test helpers, and the markers that say what a test needs.

Every test gets its markers from where it lives and what it asks for, so a new test cannot
forget them (``--strict-markers`` is on; pyproject.toml registers them):

* ``pure``: needs nothing built -- no Go, no helm, no cluster (``make unit``: ``-m pure``); a
  test gets it when it gets none of the others;
* ``helm``: renders the charts with the helm binary (and reads the other binaries) that
  ``make cluster-build`` builds from Go: the tests under ``tests/charts`` and any test that asks
  for the ``helm`` fixture;
* ``go``: runs the Go toolchain (a generator that reads Go modules): any test that asks for the
  ``go`` fixture;
* ``integration``: runs against the real local cluster: the tests under ``tests/integration``
  and ``tests/faults`` and any test that asks for its ``cluster`` fixtures.

A missing tool fails the tests that need it; it never skips them.

The guard of the clusters the run did not create is ``tests/_guard.py`` (a plugin this file
loads, as it loads ``tests/_budget.py``, the report of what each file cost).
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tfjob_kit.podcheck import release

# What each test file cost (tests/_budget.py, a report at the end of every run), and the guard
# of the local clusters the run did not create (tests/_guard.py).
pytest_plugins = ["_budget", "_guard"]

ROOT = Path(__file__).resolve().parent.parent
TESTS = ROOT / "tests"
DATA = TESTS / "data"


# Where a test lives, or a fixture it asks for, says what it needs.
NEED_BY_FOLDER = {"charts": "helm", "integration": "integration", "faults": "integration"}
NEED_BY_FIXTURE = {
    "helm": "helm",
    "go": "go",
    "cluster": "integration",
    "bare_cluster": "integration",
}
NEEDS = ("go", "helm", "integration")  # every marker but `pure`


def needs_of(item: pytest.Item) -> set[str]:
    """What an item needs: from its folder, the fixtures it asks for (directly or through other
    fixtures, not its parameters) and the markers it carries. Empty: it is pure."""
    found = {m.name for m in item.iter_markers() if m.name in NEEDS}
    if item.path.is_relative_to(TESTS):
        folder = item.path.relative_to(TESTS).parts[0]
        if folder in NEED_BY_FOLDER:
            found.add(NEED_BY_FOLDER[folder])
    callspec = getattr(item, "callspec", None)
    params = callspec.params if callspec else {}
    fixtures = [n for n in getattr(item, "fixturenames", ()) if n not in params]
    found.update(need for name, need in NEED_BY_FIXTURE.items() if name in fixtures)
    return found


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        for need in sorted(needs_of(item)) or ["pure"]:
            item.add_marker(need)


@pytest.fixture
def data_dir() -> Path:
    return DATA


@pytest.fixture(scope="session")
def helm() -> str:
    """The helm binary `make cluster-build` builds into the tool cache. When it is not built,
    every test that asks for it fails (``make test`` builds it first); none is skipped."""
    from tfjob_kit.cluster.build import helm_path

    return str(helm_path())


@pytest.fixture(scope="session")
def go() -> str:
    """The Go toolchain, for the generators that read Go modules (through the module proxy).
    When it is missing, every test that asks for it fails (``make test`` needs Go, as
    ``make cluster-build`` does); none is skipped."""
    path = shutil.which("go")
    assert path, "go is not on PATH"
    return path


def _register_hypothesis_profiles() -> None:

    from hypothesis import HealthCheck, settings

    common: dict[str, Any] = {
        "deadline": None,
        "suppress_health_check": [HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
    }
    settings.register_profile("default", max_examples=800, **common)
    settings.register_profile("deep", max_examples=20_000, **common)
    settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))


_register_hypothesis_profiles()


@pytest.fixture
def on_1_34() -> Iterator[None]:
    """The offline pod checks follow Kubernetes 1.34 (the window's oldest minor) for the test:
    for the tests of that minor's wording and of the fields its feature gates drop."""
    with release.following("1.34"):
        yield
