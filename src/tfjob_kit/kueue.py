"""What Kueue makes of a job, read offline (pure): the queue a job names, the resources Kueue
counts for it, what its ClusterQueue can ever admit, and what the job's Workload says.

Kueue (v0.19) manages a TFJob or TrainJob that carries the label ``kueue.x-k8s.io/queue-name``:
its webhook creates the job suspended, its controller makes a Workload owned by the job and
resumes the job once the Workload is admitted by the ClusterQueue behind the named LocalQueue.
Kueue's own words are kept: a Workload's conditions carry them (``QuotaReserved`` False with
reason ``Pending`` or ``Inadmissible``, ``Evicted`` with ``Preempted``, ``PodsReadyTimeout`` ...).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from tfjob_kit import quantity
from tfjob_kit.model import as_dict, as_list

QUEUE_LABEL = "kueue.x-k8s.io/queue-name"
# The validate rule for a queued job that also asks a gang scheduler to place it (a TFJob's
# schedulingPolicy or schedulerName, a TrainJob runtime's podGroupPolicy).
GANG_RULE = "kueue-with-gang-scheduler"


def double_gang(queue: str, drop: str) -> str:
    """Why a job queued in Kueue should not also be gang-scheduled, and what to drop."""
    return (
        f"the job is submitted to the Kueue queue {queue!r}, which admits all of it at once by "
        "quota (with waitForPodsReady); a gang scheduler then holds its pods again until it can "
        f"place them all, and neither knows the other's reservations. Use one of them: drop "
        f"{drop}, or the queue label"
    )


PRIORITY_LABEL = "kueue.x-k8s.io/priority-class"
QUEUE_PATH = '$.metadata.labels["kueue.x-k8s.io/queue-name"]'
# The integrations Kueue must have enabled for each kind (its Configuration's
# integrations.frameworks).
FRAMEWORKS = {"TFJob": "kubeflow.org/tfjob", "TrainJob": "trainer.kubeflow.org/trainjob"}
# Kueue's words for a Workload that can never be admitted as things stand (Workload conditions,
# pkg/cache and pkg/scheduler): its LocalQueue or ClusterQueue missing or stopped, or more than
# the queue's maximum capacity asked for.
NEVER = ("doesn't exist", "is inactive", "> maximum capacity")


def queue_of(job: dict[str, Any]) -> str | None:
    """The LocalQueue a job names, None when it names none (Kueue leaves it alone)."""
    value = as_dict(as_dict(job.get("metadata")).get("labels")).get(QUEUE_LABEL)
    return value if isinstance(value, str) and value else None


def is_suspended(job: dict[str, Any]) -> bool:
    """Whether the job is suspended: a TFJob by runPolicy.suspend, a TrainJob by spec.suspend."""
    spec = as_dict(job.get("spec"))
    if job.get("kind") == "TFJob":
        return as_dict(spec.get("runPolicy")).get("suspend") is True
    return spec.get("suspend") is True


def demand(pods: Iterable[tuple[int, dict[str, Fraction]]]) -> dict[str, Fraction]:
    """What the job's pods ask for together: (count, one pod's requests) summed."""
    total: dict[str, Fraction] = {}
    for count, requests in pods:
        for name, amount in requests.items():
            total[name] = total.get(name, Fraction(0)) + amount * count
    return total


def _amount(value: Any) -> Fraction | None:
    parsed = quantity.decode(value)
    return None if parsed is None else parsed.value


def capacity(cluster_queue: dict[str, Any]) -> dict[str, Fraction | None]:
    """The most of each resource the ClusterQueue can ever admit, over all its flavors: nominal
    quota plus borrowing limit; None (no bound the queue alone sets) where it is in a cohort and
    may borrow without a limit."""
    spec = as_dict(cluster_queue.get("spec"))
    cohort = bool(spec.get("cohortName") or spec.get("cohort"))
    found: dict[str, Fraction | None] = {}
    for group in as_list(spec.get("resourceGroups")):
        for flavor in as_list(as_dict(group).get("flavors")):
            for resource in as_list(as_dict(flavor).get("resources")):
                resource = as_dict(resource)
                name = str(resource.get("name") or "")
                nominal = _amount(resource.get("nominalQuota")) or Fraction(0)
                limit = resource.get("borrowingLimit")
                if cohort and limit is None:
                    found[name] = None
                    continue
                extra = (_amount(limit) or Fraction(0)) if cohort else Fraction(0)
                if name in found and found[name] is None:
                    continue
                found[name] = (found.get(name) or Fraction(0)) + nominal + extra
    return found


def _text(amount: Fraction) -> str:
    return str(int(amount)) if amount.denominator == 1 else f"{float(amount):g}"


def never_fits(wanted: dict[str, Fraction], most: dict[str, Fraction | None]) -> list[str]:
    """The resources the job needs more of than the ClusterQueue can ever admit, as phrases
    ("16 nvidia.com/gpu where it admits at most 8"). A resource the queue does not cover is not
    judged (Kueue's resources configuration decides whether it counts)."""
    found = []
    for name in sorted(wanted):
        if name not in most:
            continue
        bound = most[name]
        if bound is not None and wanted[name] > bound:
            found.append(f"{_text(wanted[name])} {name} where it admits at most {_text(bound)}")
    return found


def condition(obj: dict[str, Any] | None, kind: str) -> dict[str, Any]:
    for item in as_list(as_dict(as_dict(obj).get("status")).get("conditions")):
        if as_dict(item).get("type") == kind:
            return as_dict(item)
    return {}


def inactive(cluster_queue: dict[str, Any]) -> str | None:
    """Why the ClusterQueue admits nothing (its Active condition's reason and message), None
    when it is active, or not judged yet: a ClusterQueue just created has no Active condition
    until Kueue has looked at it (a second or so), and then jobs simply wait for its verdict."""
    active = condition(cluster_queue, "Active")
    if not active or active.get("status") == "True":
        return None
    said = ": ".join(str(active.get(k)) for k in ("reason", "message") if active.get(k))
    return said or "it has not been reported active"


@dataclass(frozen=True)
class Admission:
    """Where a job stands in Kueue, from its Workload."""

    workload: str
    state: str  # Admitted, Waiting, Evicted, Finished
    cluster_queue: str
    reason: str
    message: str
    never: bool  # waiting cannot end well as things stand
    # The last eviction, also once the job is admitted again: (reason, message), else None.
    evicted: tuple[str, str] | None = None
    worker: str = ""  # with MultiKueue, the worker cluster the job was dispatched to

    def as_dict(self) -> dict[str, Any]:
        return {
            "workload": self.workload,
            "state": self.state,
            "cluster_queue": self.cluster_queue,
            "reason": self.reason,
            "message": self.message,
            "evicted": (
                {"reason": self.evicted[0], "message": self.evicted[1]} if self.evicted else None
            ),
            "worker": self.worker,
        }


def admission(workload: dict[str, Any]) -> Admission:
    """The job's standing from its Workload's conditions: Finished, Evicted (preempted, or
    its pods not ready in time: Kueue requeues it), Admitted, else Waiting with Kueue's reason
    (never: a missing queue, an inactive ClusterQueue, more than the queue's maximum)."""
    name = str(as_dict(workload.get("metadata")).get("name") or "")
    status = as_dict(workload.get("status"))
    queue = str(as_dict(status.get("admission")).get("clusterQueue") or "")
    evicted = _last_eviction(workload)
    worker = str(status.get("clusterName") or "")  # MultiKueue's choice of worker
    for state in ("Finished", "Evicted", "Admitted"):
        found = condition(workload, state)
        if found.get("status") == "True":
            reason, message = str(found.get("reason", "")), str(found.get("message", ""))
            return Admission(name, state, queue, reason, message, False, evicted, worker)
    reserved = condition(workload, "QuotaReserved")
    message = str(reserved.get("message") or "waiting for Kueue to consider it")
    never = any(words in message for words in NEVER)
    reason = str(reserved.get("reason", ""))
    return Admission(name, "Waiting", queue, reason, message, never, evicted, worker)


def _last_eviction(workload: dict[str, Any]) -> tuple[str, str] | None:
    """The Workload's last eviction: its Evicted condition while true, else what Kueue keeps of
    it in Requeued (reason Preempted, PodsReadyTimeout, ...) once the job is admitted again."""
    evicted = condition(workload, "Evicted")
    if evicted.get("status") == "True":
        return str(evicted.get("reason") or ""), str(evicted.get("message") or "")
    requeued = condition(workload, "Requeued")
    reason = str(requeued.get("reason") or "")
    if reason in ("", "Pending", "QuotaReserved", "Admitted"):
        return None
    return reason, str(requeued.get("message") or "").removeprefix("Previously: ")


def owned_workload(
    job: dict[str, Any], workloads: Iterable[dict[str, Any]]
) -> dict[str, Any] | None:
    """The Workload Kueue made for the job (owned by it)."""
    uid = as_dict(job.get("metadata")).get("uid")
    if not uid:
        return None
    for workload in workloads:
        owners = as_list(as_dict(workload.get("metadata")).get("ownerReferences"))
        if any(as_dict(o).get("uid") == uid for o in owners):
            return workload
    return None
