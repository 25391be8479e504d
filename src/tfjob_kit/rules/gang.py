"""Rules on gang scheduling: minAvailable, PodGroup annotations set by hand, kube-batch, and a
gang scheduler asked for by a job Kueue queues."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from tfjob_kit import kueue
from tfjob_kit.findings import Severity, child_path
from tfjob_kit.model import Replica, as_dict, as_int
from tfjob_kit.rules.registry import rule


@rule(
    "min-available-too-large",
    Severity.ERROR,
    "schedulingPolicy.minAvailable larger than the total replica count never schedules.",
)
def _min_available(job: dict[str, Any], reps: list[Replica]) -> Iterator[tuple[str, str]]:
    policy = as_dict(as_dict(as_dict(job.get("spec")).get("runPolicy")).get("schedulingPolicy"))
    minimum = as_int(policy.get("minAvailable"), 0)
    total = sum(r.count for r in reps)
    if reps and minimum > total:
        yield (
            "$.spec.runPolicy.schedulingPolicy.minAvailable",
            (
                f"minAvailable {minimum} exceeds the {total} pods of the job: the gang can never "
                "be "
                f"placed and every pod stays Pending; set it to {total} or less"
            ),
        )


@rule(
    "gang-scheduling-by-hand",
    Severity.WARNING,
    "PodGroup annotations and schedulerName are set by the operator in gang mode.",
)
def _gang_by_hand(job: dict[str, Any], reps: list[Replica]) -> Iterator[tuple[str, str]]:
    for replica in reps:
        meta = replica.template.get("metadata")
        annotations = meta.get("annotations") if isinstance(meta, dict) else None
        if not isinstance(annotations, dict) or not annotations:
            continue
        for key in ("scheduling.k8s.io/group-name", "volcano.sh/task-spec"):
            if key in annotations:
                yield (
                    child_path(f"{replica.path}.template.metadata.annotations", key),
                    (
                        f"{key} is set by the operator when it runs with --gang-scheduler-name; "
                        "a hand-made PodGroup is not cleaned up with the job and can deadlock it: "
                        "use spec.runPolicy.schedulingPolicy instead"
                    ),
                )


@rule(
    "kube-batch-scheduler",
    Severity.WARNING,
    "kube-batch is archived and cannot run on Kubernetes 1.22 or later.",
)
def _kube_batch(job: dict[str, Any], reps: list[Replica]) -> Iterator[tuple[str, str]]:
    for replica in reps:
        if replica.pod_spec.get("schedulerName") == "kube-batch":
            yield (
                f"{replica.path}.template.spec.schedulerName",
                (
                    "kube-batch is archived and waits on APIs removed in Kubernetes 1.22/1.25, so "
                    "these pods would stay Pending: use Volcano (schedulerName volcano, and run "
                    "the "
                    "operator with --gang-scheduler-name=volcano)"
                ),
            )


@rule(
    kueue.GANG_RULE,
    Severity.WARNING,
    "A job submitted to Kueue that also asks Volcano or kube-batch to place it as a gang.",
)
def _kueue_gang(job: dict[str, Any], reps: list[Replica]) -> Iterator[tuple[str, str]]:
    queue = kueue.queue_of(job)
    if not queue:
        return
    policy = as_dict(as_dict(as_dict(job.get("spec")).get("runPolicy")).get("schedulingPolicy"))
    for field in ("minAvailable", "queue", "priorityClass", "minResources"):
        if field in policy:
            yield (
                f"$.spec.runPolicy.schedulingPolicy.{field}",
                kueue.double_gang(
                    queue, "spec.runPolicy.schedulingPolicy (read only by a gang scheduler)"
                ),
            )
            break
    for replica in reps:
        scheduler = replica.pod_spec.get("schedulerName")
        if scheduler in ("volcano", "kube-batch"):
            yield (
                f"{replica.path}.template.spec.schedulerName",
                kueue.double_gang(queue, f"schedulerName {scheduler}"),
            )
