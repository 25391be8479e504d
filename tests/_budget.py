"""What the test run cost, file by file: a report at the end of every run, never an assertion;
and the order the files start in.

``make test`` must stay within its budget (ARCHITECTURE.md, "The test budget"); this table says
where the time went: each test file's seconds (setup, call and teardown of its tests, a shared
fixture's cost counted where it was first paid) and each folder's, with the run's wall time.

``make test`` runs the files on three pytest-xdist workers, a file on one worker at a time
(``--dist loadfile``: a module's clusters are brought up once). A worker takes the next file when
it is nearly done with its last, so the run ends soonest when the longest files start first:
``LONGEST_FIRST`` names them, longest first (as this table measured them); the others follow in
their usual order.
"""

from __future__ import annotations

import time
from collections import defaultdict

import pytest

# Measured by this table on an idle 2-core machine (see ARCHITECTURE.md, "The test budget"),
# last in the .ci/run of 2026-11-29.
LONGEST_FIRST = (
    "tests/integration/test_molecule.py",
    "tests/integration/test_demo.py",
    "tests/integration/test_multikueue.py",
    "tests/integration/test_kueue.py",
    "tests/integration/test_trainer.py",
    "tests/faults/test_interrupted_site.py",
    "tests/integration/test_bootstrap.py",
    "tests/integration/test_fleet.py",
    "tests/faults/test_workload_faults.py",
    "tests/integration/test_coexistence.py",
    "tests/integration/test_upgrade.py",
    "tests/faults/test_control_plane.py",
    "tests/integration/test_wait_diagnosis.py",
    "tests/integration/test_volcano_admission.py",
    "tests/integration/test_pod_validation_agrees.py",
    "tests/integration/test_leftover_webhooks.py",
    "tests/integration/test_lifecycle.py",
    "tests/integration/test_module_tfjob.py",
)

_started = time.monotonic()
_seconds: dict[str, float] = defaultdict(float)


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The files of LONGEST_FIRST first, in its order; a file's tests keep theirs."""
    rank = {path: i for i, path in enumerate(LONGEST_FIRST)}
    items.sort(key=lambda item: rank.get(item.nodeid.split("::", 1)[0], len(rank)))


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    _seconds[report.nodeid.split("::", 1)[0]] += report.duration


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if not _seconds:
        return
    wall = time.monotonic() - _started
    folders: dict[str, float] = defaultdict(float)
    for path, seconds in _seconds.items():
        folders[path.rsplit("/", 1)[0]] += seconds
    write = terminalreporter.write_line
    terminalreporter.section("time per folder and per file (a report, not a limit)")
    write(f"wall time of the run: {wall / 60:.1f} min")
    for folder, seconds in sorted(folders.items(), key=lambda kv: -kv[1]):
        write(f"{seconds:8.0f} s  {folder}/")
    write("")
    for path, seconds in sorted(_seconds.items(), key=lambda kv: -kv[1])[:30]:
        write(f"{seconds:8.0f} s  {path}")
