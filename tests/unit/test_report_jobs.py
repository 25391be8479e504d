"""report/jobs.py and the wait's progress: what `tfjob-kit status` and `wait` print."""

from __future__ import annotations

import io

from tfjob_kit.commands.wait_command import Progress
from tfjob_kit.kube import diagnose
from tfjob_kit.kube.kinds import TFJOB
from tfjob_kit.kube.status import JobStatus
from tfjob_kit.report import jobs


def test_replicas_of_each_kind() -> None:
    tfjob = {"Worker": {"active": 2, "succeeded": 0, "selector": "x"}, "Chief": {"succeeded": 1}}
    assert jobs.replicas(tfjob) == "Chief 1 succeeded; Worker 2 active"
    volcano = {"tasks": {"ps": {"phase": {"Running": 1}}}, "running": 3, "failed": 0}
    assert jobs.replicas(volcano) == "3 running"
    assert jobs.replicas({}) == "no pods yet"


def test_every_fatal_reason_of_diagnose_has_advice() -> None:
    reasons = [*diagnose.CREATE_FAILURES, *diagnose.IMAGE_FAILURES, "CrashLoopBackOff"]
    reasons += ["Unschedulable", "NeverFits", "QueueCapability"]
    for reason in reasons:
        assert jobs.advice({"reason": reason, "kind": "Pod"}), reason
    assert jobs.advice({"reason": "LocalQueueDoesNotExist", "kind": "Workload"}).startswith(
        "Kueue holds the job"
    )
    assert jobs.advice({"reason": "Something", "kind": "Pod"}) == ""


def test_status_lines() -> None:
    problem = {
        "object": "TFJob ns/a",
        "kind": "TFJob",
        "reason": "FailedCreatePod",
        "message": "Error creating: Pod is invalid",
        "fatal": True,
    }
    job = {
        "kind": "TFJob",
        "namespace": "ns",
        "name": "a",
        "phase": "Created",
        "reason": "TFJobCreated",
        "message": "",
        "replica_statuses": {},
        "queue": None,
        "pods": [{"name": "a-worker-0", "phase": "Failed", "node": "n1", "exit_codes": [1]}],
        "problems": [problem],
        "events": [{"type": "Warning", "reason": "FailedCreatePod", "message": "Error"}],
        "log": {"pod": "a-worker-0", "lines": ["boom"]},
    }
    assert jobs.status_lines(job) == [
        "TFJob ns/a: Created (no pods yet)",
        "  TFJobCreated",
        "  pod a-worker-0: Failed on n1, exit codes [1]",
        "  problems:",
        "    TFJob ns/a: FailedCreatePod: Error creating: Pod is invalid (it will not pass by "
        "itself)",
        "      what to do: " + jobs.advice(problem),
        "  events:",
        "    Warning FailedCreatePod: Error",
        "  log of a-worker-0:",
        "    boom",
    ]


def _status(phase: str, active: int) -> JobStatus:
    return JobStatus(phase, frozenset({phase}), replica_statuses={"Worker": {"active": active}})


def test_progress_in_a_log_is_a_line_per_change() -> None:
    out = io.StringIO()
    progress = Progress(out, live=False)
    key = (TFJOB, "ns", "a")
    for status in (_status("Created", 0), _status("Created", 0), _status("Running", 2)):
        progress({key: status})
    progress.end()
    assert (
        out.getvalue()
        == "TFJob ns/a: Created (no pods yet)\nTFJob ns/a: Running (Worker 2 active)\n"
    )


def test_progress_on_a_terminal_rewrites_one_line() -> None:
    out = io.StringIO()
    progress = Progress(out, live=True)
    progress({(TFJOB, "ns", "a"): _status("Running", 2), (TFJOB, "ns", "b"): _status("Created", 0)})
    progress.end()
    assert out.getvalue() == (
        "\r\x1b[KTFJob ns/a: Running (Worker 2 active) | TFJob ns/b: Created (no pods yet)\r\x1b[K"
    )
