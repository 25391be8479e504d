"""A job's state in words (phase, conditions, replica statuses) and waiting for one.

TFJobs report conditions (Created, Running, Restarting, Succeeded, Failed, Suspended). Volcano
Jobs report a phase; it is read as the same vocabulary (Completed is also Succeeded; Aborted and
Terminated are also Failed), so the same wait_for/fail_on work for both backends.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from tfjob_kit.kube.client import Client
from tfjob_kit.kube.errors import KubeError
from tfjob_kit.kube.resources import TFJOB, Resource

CONDITION_ORDER = ("Created", "Suspended", "Running", "Restarting", "Succeeded", "Failed")
# Volcano phases after which the job's pods do not run again.
VOLCANO_FINISHED = ("Completed", "Failed", "Aborted", "Terminated")
VOLCANO_ALIASES = {
    "Completed": "Succeeded",
    "Aborted": "Failed",
    "Terminated": "Failed",
    "Pending": "Created",
    "Completing": "Running",
    "Aborting": "Failed",
    "Terminating": "Failed",
}
# What wait_for and fail_on may name: the TFJob conditions, and the Volcano phases a job rests in
# (Pending, and the finished ones) under their own names. The tfjob.kit.tfjob module's
# wait_for/fail_on choices are a copy that tests/unit/test_drift.py holds equal.
WAIT_CONDITIONS = tuple(dict.fromkeys((*CONDITION_ORDER, "Pending", *VOLCANO_FINISHED)))


class WaitError(KubeError):
    """A wait ended without the wanted condition: a failure condition, a timeout, a deletion."""


@dataclass
class JobStatus:
    phase: str
    true: frozenset[str]
    reason: str = ""
    message: str = ""
    conditions: list[dict[str, Any]] = field(default_factory=list)
    replica_statuses: dict[str, Any] = field(default_factory=dict)
    start_time: str | None = None
    completion_time: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return {
            "phase": self.phase,
            "reason": self.reason,
            "message": self.message,
            "conditions": self.conditions,
            "replica_statuses": self.replica_statuses,
            "start_time": self.start_time,
            "completion_time": self.completion_time,
        }


def job_status(resource: Resource, obj: dict[str, Any] | None) -> JobStatus:
    if obj is None:
        return JobStatus("Absent", frozenset())
    status = obj.get("status") if isinstance(obj.get("status"), dict) else {}
    assert isinstance(status, dict)
    if resource is TFJOB:
        conditions = [c for c in status.get("conditions") or [] if isinstance(c, dict)]
        true = [c for c in conditions if c.get("status") == "True"]
        latest = max(
            true,
            key=lambda c: (
                CONDITION_ORDER.index(c["type"]) if c.get("type") in CONDITION_ORDER else -1
            ),
            default=None,
        )
        return JobStatus(
            phase=str(latest["type"]) if latest else "Pending",
            true=frozenset(str(c.get("type")) for c in true),
            reason=str(latest.get("reason", "")) if latest else "",
            message=str(latest.get("message", "")) if latest else "",
            conditions=conditions,
            replica_statuses=dict(status.get("replicaStatuses") or {}),
            start_time=status.get("startTime"),
            completion_time=status.get("completionTime"),
        )
    state = status.get("state") if isinstance(status.get("state"), dict) else {}
    assert isinstance(state, dict)
    phase = str(state.get("phase") or "Pending")
    names = {phase} | ({VOLCANO_ALIASES[phase]} if phase in VOLCANO_ALIASES else set())
    counts = {
        k: status[k]
        for k in ("pending", "running", "succeeded", "failed", "terminating", "unknown")
        if status.get(k)
    }
    conditions = [c for c in status.get("conditions") or [] if isinstance(c, dict)]
    running = [c.get("lastTransitionTime") for c in conditions if c.get("status") == "Running"]
    return JobStatus(
        phase=phase,
        true=frozenset(names),
        reason=str(state.get("reason", "")),
        message=str(state.get("message", "")),
        conditions=conditions,
        replica_statuses={"tasks": dict(status.get("taskStatusCount") or {}), **counts},
        start_time=running[0] if running else None,
        completion_time=state.get("lastTransitionTime") if phase in VOLCANO_FINISHED else None,
    )


def failed_pods(client: Client, resource: Resource, namespace: str, name: str) -> list[str]:
    """One line per failed pod or container of the job: where it ran and how it ended."""
    lines = []
    for pod in client.pods(namespace, resource.selector(name)):
        pod_name = pod["metadata"]["name"]
        node = pod.get("spec", {}).get("nodeName") or "no node"
        pod_status = pod.get("status", {})
        for container in pod_status.get("containerStatuses") or []:
            ended = (container.get("state") or {}).get("terminated") or (
                container.get("lastState") or {}
            ).get("terminated")
            if ended and ended.get("exitCode", 0) != 0:
                lines.append(
                    f"pod {pod_name} on {node}: container {container.get('name')} "
                    f"exited with code {ended.get('exitCode')} "
                    f"({ended.get('reason') or 'no reason'})"
                )
        if pod_status.get("phase") == "Failed" and not any(pod_name in x for x in lines):
            lines.append(
                f"pod {pod_name} on {node} failed: "
                f"{pod_status.get('reason') or pod_status.get('message') or 'no reason'}"
            )
    return lines


Key = tuple[Resource, str, str]


def wait(
    client: Client,
    jobs: list[Key],
    *,
    wait_for: list[str],
    fail_on: list[str],
    timeout: float,
    interval: float = 1.0,
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], None] = time.sleep,
) -> dict[Key, JobStatus]:
    """Until every job has a wait_for condition. Ends at once, raising WaitError with the
    reason, when a job reaches a fail_on condition, disappears, or the timeout passes."""
    deadline = clock() + timeout
    wanted, failing = frozenset(wait_for), frozenset(fail_on)
    done: dict[Key, JobStatus] = {}
    while True:
        current: dict[Key, JobStatus] = {}
        for resource, namespace in {(r, ns) for r, ns, _ in jobs}:
            held = {o["metadata"]["name"]: o for o in client.list_objects(resource, namespace)}
            for key in jobs:
                if key[0] is resource and key[1] == namespace and key not in done:
                    current[key] = job_status(resource, held.get(key[2]))
        for key, status in current.items():
            resource, namespace, name = key
            what = resource.describe(namespace, name)
            if status.phase == "Absent":
                raise WaitError(
                    f"{what} was deleted while waiting for {' or '.join(wait_for)}", "deleted"
                )
            if status.true & failing:
                detail = "; ".join(filter(None, [status.reason, status.message]))
                pods = failed_pods(client, resource, namespace, name)
                raise WaitError(
                    f"{what} reached {'/'.join(sorted(status.true & failing))}"
                    f"{': ' + detail if detail else ''}" + ("".join(f"\n  {p}" for p in pods)),
                    "failed",
                )
            if status.true & wanted:
                done[key] = status
        if len(done) == len(set(jobs)):
            return done
        if clock() >= deadline:
            waiting = [
                f"{k[0].describe(k[1], k[2])} is {s.phase}"
                for k, s in current.items()
                if k not in done
            ]
            raise WaitError(
                f"timed out after {timeout:g}s waiting for "
                f"{' or '.join(wait_for)}: " + "; ".join(waiting),
                "timeout",
            )
        sleep(interval)


def wait_gone(
    client: Client,
    jobs: list[Key],
    *,
    timeout: float,
    interval: float = 1.0,
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], None] = time.sleep,
) -> None:
    """Until the jobs, their pods and their services are gone."""
    deadline = clock() + timeout
    while True:
        left = []
        for resource, namespace, name in jobs:
            what = resource.describe(namespace, name)
            if client.get(resource, namespace, name) is not None:
                left.append(what)
            selector = resource.selector(name)
            pods = client.pods(namespace, selector)
            services = client.services(namespace, selector)
            if pods or services:
                left.append(f"{len(pods)} pods and {len(services)} services of {what}")
        if not left:
            return
        if clock() >= deadline:
            raise WaitError(
                f"timed out after {timeout:g}s waiting for deletion: still there: "
                + "; ".join(left),
                "timeout",
            )
        sleep(interval)
