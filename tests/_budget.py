"""What the test run cost, file by file: a report at the end of every run, never an assertion.

``make test`` must stay within its budget (ARCHITECTURE.md, "The test budget"); this table says
where the time went: each test file's seconds (setup, call and teardown of its tests, a shared
fixture's cost counted where it was first paid) and each folder's, with the run's wall time.
"""

from __future__ import annotations

import time
from collections import defaultdict

import pytest

_started = time.monotonic()
_seconds: dict[str, float] = defaultdict(float)


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
