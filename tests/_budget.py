"""What the test run cost, file by file: a report at the end of every run, never an assertion;
and the order the files start in.

``make test`` must stay within its budget (ARCHITECTURE.md, "The test budget"); this table says
where the time went: each test file's seconds (setup, call and teardown of its tests, a shared
fixture's cost counted where it was first paid) and each folder's, with the run's wall time.
Beside the seconds, the CPU seconds each file cost its test process and the processes the test
waited for (Ansible, Molecule, the CLI; not a cluster's processes, which outlive the test): with
three workers on two cores the run is bound by CPU, so that column says what a cut would save.
The tests that cost most CPU follow, and before the table a line says how busy the whole
machine's CPUs were (the clusters' processes included) and how much its host stole from it.

``make test`` runs the files on three pytest-xdist workers, a file on one worker at a time
(``--dist loadfile``: a module's clusters are brought up once). A worker takes the next file when
it is nearly done with its last, so the run ends soonest when the longest files start first:
``LONGEST_FIRST`` names them, longest first (as this table measured them); the others follow in
their usual order.
"""

from __future__ import annotations

import os
import resource
import time
from collections import defaultdict
from collections.abc import Generator
from pathlib import Path
from typing import Any

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


def _machine_ticks() -> dict[str, int]:
    """The machine's CPU time so far, in clock ticks of all its CPUs (Linux's /proc/stat): busy
    (whoever ran: the tests, the clusters' processes, anything else), idle (iowait included),
    and stolen (a shared machine's hypervisor gave the CPU to another guest)."""
    try:
        first = Path("/proc/stat").read_text(encoding="ascii").split("\n", 1)[0]
        fields = [int(v) for v in first.split()[1:9]]
    except (OSError, ValueError):
        return {}
    user, nice, system, idle, iowait, irq, softirq, steal = fields + [0] * (8 - len(fields))
    return {
        "busy": user + nice + system + irq + softirq,
        "idle": idle + iowait,
        "steal": steal,
    }


TESTS_SHOWN = 20

_started = time.monotonic()
_machine_started = _machine_ticks()
_seconds: dict[str, float] = defaultdict(float)
_cpu: dict[str, float] = defaultdict(float)
_test_cpu: dict[str, float] = defaultdict(float)  # by test, its fixtures' setup included
_CPU_PROPERTY = "cpu_seconds"
_phase_started = [0.0]  # this process's CPU seconds when the current test phase began


def _cpu_seconds() -> float:
    """CPU seconds of this process and of its children it has waited for."""
    own, children = (
        resource.getrusage(resource.RUSAGE_SELF),
        resource.getrusage(resource.RUSAGE_CHILDREN),
    )
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def pytest_runtest_logstart() -> None:
    _phase_started[0] = _cpu_seconds()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport() -> Generator[None, Any, None]:
    """Each phase's report carries the CPU it cost (through pytest-xdist, as a user property)."""
    outcome = yield
    now = _cpu_seconds()
    outcome.get_result().user_properties.append((_CPU_PROPERTY, now - _phase_started[0]))
    _phase_started[0] = now


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The files of LONGEST_FIRST first, in its order; a file's tests keep theirs."""
    rank = {path: i for i, path in enumerate(LONGEST_FIRST)}
    items.sort(key=lambda item: rank.get(item.nodeid.split("::", 1)[0], len(rank)))


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    path = report.nodeid.split("::", 1)[0]
    _seconds[path] += report.duration
    for key, value in report.user_properties:
        if key == _CPU_PROPERTY and isinstance(value, float):
            _cpu[path] += value
            _test_cpu[report.nodeid] += value


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if not _seconds:
        return
    wall = time.monotonic() - _started
    folders: dict[str, float] = defaultdict(float)
    for path, seconds in _seconds.items():
        folders[path.rsplit("/", 1)[0]] += seconds
    write = terminalreporter.write_line
    terminalreporter.section("time per folder and per file (a report, not a limit)")
    write(
        f"wall time of the run: {wall / 60:.1f} min; CPU seconds of the tests and the processes "
        f"they waited for: {sum(_cpu.values()):.0f}"
    )
    machine = _machine_line(_machine_started, _machine_ticks())
    if machine:
        write(machine)
    for folder, seconds in sorted(folders.items(), key=lambda kv: -kv[1]):
        write(f"{seconds:8.0f} s  {folder}/")
    write("")
    write(f"{'seconds':>8}  {'CPU s':>6}  file")
    for path, seconds in sorted(_seconds.items(), key=lambda kv: -kv[1])[:30]:
        write(f"{seconds:8.0f}  {_cpu[path]:6.0f}  {path}")
    write("")
    write(f"{'CPU s':>8}  the tests that cost most CPU (setup, call and teardown)")
    for nodeid, cpu in sorted(_test_cpu.items(), key=lambda kv: -kv[1])[:TESTS_SHOWN]:
        write(f"{cpu:8.0f}  {nodeid}")


def _machine_line(before: dict[str, int], after: dict[str, int]) -> str:
    """How busy the whole machine was during the run: when its CPUs were all busy the run was
    bound by CPU (a cut of work shortens it); when they idled, by waiting. Stolen time is CPU
    the machine's host gave to others: the same work takes longer on a machine that loses it."""
    if not before or not after:
        return ""
    spent = {key: after[key] - before[key] for key in before}
    total = sum(spent.values())
    if total <= 0:
        return ""
    hz = os.sysconf("SC_CLK_TCK")
    return (
        f"the machine's {os.cpu_count()} CPUs during the run: busy {spent['busy'] / total:.0%} "
        f"({spent['busy'] / hz:.0f} CPU s, the clusters' processes included), idle "
        f"{spent['idle'] / total:.0%}, stolen by its host {spent['steal'] / total:.0%}"
    )
