"""Rules on the replica types and their counts: spelling, the chief, the evaluator, and which
replicas decide success.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from tfjob_kit import model
from tfjob_kit.findings import Severity
from tfjob_kit.model import Replica, as_dict
from tfjob_kit.rules.registry import rule


@rule(
    "replica-type-unknown",
    Severity.ERROR,
    "Replica types are Chief, Master, PS, Worker and Evaluator.",
)
def _replica_type_unknown(job: dict[str, Any], reps: list[Replica]) -> Iterator[tuple[str, str]]:
    for replica in reps:
        if not replica.known:
            yield (
                replica.path,
                (
                    f"unknown replica type {replica.key!r}: the operator would still create pods "
                    "for it and put it in TF_CONFIG; use Chief, PS, Worker or Evaluator"
                ),
            )


@rule(
    "replica-type-case",
    Severity.WARNING,
    "Replica types should be spelled Chief, Master, PS, Worker, Evaluator.",
)
def _replica_type_case(job: dict[str, Any], reps: list[Replica]) -> Iterator[tuple[str, str]]:
    for replica in reps:
        if replica.known and replica.key != replica.type:
            yield (
                replica.path,
                (
                    f"replica type {replica.key!r} should be spelled {replica.type!r} (the "
                    "operator "
                    "canonicalises it, but webhook checks and tools compare it as written)"
                ),
            )


@rule(
    "replica-type-duplicate", Severity.ERROR, "Two replica types that differ only in case collide."
)
def _replica_type_duplicate(job: dict[str, Any], reps: list[Replica]) -> Iterator[tuple[str, str]]:
    seen: dict[str, str] = {}
    for replica in reps:
        if replica.known:
            if replica.type in seen:
                yield (
                    replica.path,
                    (
                        f"{replica.key!r} and {seen[replica.type]!r} are the same replica type "
                        f"({replica.type}); keep one"
                    ),
                )
            else:
                seen[replica.type] = replica.key


@rule("chief-multiple", Severity.ERROR, "At most one Chief or Master replica type.")
def _chief_multiple(job: dict[str, Any], reps: list[Replica]) -> Iterator[tuple[str, str]]:
    chiefs = [r for r in reps if r.type in model.CHIEF_TYPES]
    if len(chiefs) > 1:
        names = " and ".join(repr(r.key) for r in chiefs)
        yield chiefs[1].path, f"{names} both define the chief: keep only Chief"


@rule("chief-replicas", Severity.ERROR, "Chief/Master must have exactly one replica.")
def _chief_replicas(job: dict[str, Any], reps: list[Replica]) -> Iterator[tuple[str, str]]:
    for replica in reps:
        if replica.type in model.CHIEF_TYPES and replica.count > 1:
            yield (
                replica.path + ".replicas",
                (
                    f"{replica.key} has {replica.count} replicas; TensorFlow has exactly one "
                    "chief: "
                    "set replicas: 1 and add Workers instead"
                ),
            )


@rule("evaluator-replicas", Severity.ERROR, "Evaluator must have at most one replica.")
def _evaluator_replicas(job: dict[str, Any], reps: list[Replica]) -> Iterator[tuple[str, str]]:
    for replica in reps:
        if replica.type == "Evaluator" and replica.count > 1:
            yield (
                replica.path + ".replicas",
                (
                    f"Evaluator has {replica.count} replicas; TensorFlow runs a single evaluator: "
                    "set replicas: 1"
                ),
            )


@rule("master-legacy", Severity.INFO, "Master is the legacy name of Chief.")
def _master_legacy(job: dict[str, Any], reps: list[Replica]) -> Iterator[tuple[str, str]]:
    for replica in reps:
        if replica.type == "Master":
            yield (
                replica.path,
                (
                    "Master is the legacy name of Chief; TF_CONFIG will say 'master'. Prefer Chief "
                    "unless your code reads 'master'"
                ),
            )


@rule("replicas-zero", Severity.WARNING, "A replica type with replicas: 0 creates no pods.")
def _replicas_zero(job: dict[str, Any], reps: list[Replica]) -> Iterator[tuple[str, str]]:
    for replica in reps:
        if replica.spec.get("replicas") == 0:
            yield (
                replica.path + ".replicas",
                (f"{replica.key} has replicas: 0 and creates no pods; remove it or set a count"),
            )


@rule(
    "no-success-decider",
    Severity.ERROR,
    "A job needs a Chief/Master or Worker: nothing else can make it succeed.",
)
def _no_success_decider(job: dict[str, Any], reps: list[Replica]) -> Iterator[tuple[str, str]]:
    if reps and not model.deciders(reps):
        yield (
            "$.spec.tfReplicaSpecs",
            (
                "no Chief, Master or Worker with replicas > 0: PS and Evaluator never decide "
                "success, so the job would run forever; add a Worker or a Chief"
            ),
        )


@rule(
    "success-policy-without-workers",
    Severity.ERROR,
    "successPolicy AllWorkers needs Worker replicas.",
)
def _success_policy(job: dict[str, Any], reps: list[Replica]) -> Iterator[tuple[str, str]]:
    spec = as_dict(job.get("spec"))
    if spec.get("successPolicy") == "AllWorkers" and not any(
        r.type == "Worker" and r.count > 0 for r in reps
    ):
        yield "$.spec.successPolicy", "successPolicy AllWorkers without Worker replicas"
