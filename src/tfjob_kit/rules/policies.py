"""Rules on the run and restart policies: where RunPolicy fields belong, cleanPodPolicy's exact
spelling, and the replica restartPolicy.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from tfjob_kit import model, schema
from tfjob_kit.findings import Severity
from tfjob_kit.model import Replica, as_dict
from tfjob_kit.rules.registry import rule


@rule(
    "run-policy-misplaced",
    Severity.ERROR,
    "cleanPodPolicy, backoffLimit and friends belong under spec.runPolicy.",
)
def _run_policy_misplaced(job: dict[str, Any], reps: list[Replica]) -> Iterator[tuple[str, str]]:
    spec = as_dict(job.get("spec"))
    fields = schema.run_policy_fields()
    if spec.keys().isdisjoint(fields):
        return  # the common case, told in one C-level pass
    for name in fields:
        if name in spec:
            yield (
                f"$.spec.{name}",
                (
                    f"spec.{name} is silently ignored by training-operator v1: move it to "
                    f"spec.runPolicy.{name}"
                ),
            )


_CLEAN_POD_POLICIES = {v.lower(): v for v in ("All", "Running", "None")}


@rule(
    "clean-pod-policy-case",
    Severity.ERROR,
    "cleanPodPolicy is matched exactly: anything but None/Running deletes all pods.",
)
def _clean_pod_policy_case(job: dict[str, Any], reps: list[Replica]) -> Iterator[tuple[str, str]]:
    run_policy = as_dict(as_dict(job.get("spec")).get("runPolicy"))
    value = run_policy.get("cleanPodPolicy")
    if isinstance(value, str):
        exact = _CLEAN_POD_POLICIES.get(value.lower())
        if exact is not None and exact != value:
            yield (
                "$.spec.runPolicy.cleanPodPolicy",
                (
                    f"{value!r} must be spelled {exact!r}: the operator compares exactly and "
                    "treats "
                    "any other value as All (every pod is deleted when the job ends)"
                ),
            )


@rule(
    "restart-policy-overridden",
    Severity.WARNING,
    "The replica restartPolicy overwrites the pod template's restartPolicy.",
)
def _restart_overridden(job: dict[str, Any], reps: list[Replica]) -> Iterator[tuple[str, str]]:
    for replica in reps:
        template_policy = replica.pod_spec.get("restartPolicy")
        if isinstance(template_policy, str) and template_policy != replica.pod_restart_policy:
            explicit = "restartPolicy" in replica.spec
            yield (
                f"{replica.path}.template.spec.restartPolicy",
                (
                    f"template restartPolicy {template_policy} is overwritten with "
                    f"{replica.pod_restart_policy} (the replica's "
                    f"{'restartPolicy' if explicit else 'default restartPolicy'} "
                    f"{replica.restart_policy}); set {replica.path[2:]}.restartPolicy: "
                    f"{template_policy} instead"
                ),
            )


@rule(
    "restart-always-decider",
    Severity.WARNING,
    "restartPolicy Always on the replica that decides success: the job never completes.",
)
def _restart_always(job: dict[str, Any], reps: list[Replica]) -> Iterator[tuple[str, str]]:
    always = [r for r in reps if r.restart_policy == "Always"]
    deciders = model.deciders(reps) if always else []
    for replica in always:
        if replica.type in deciders:
            yield (
                replica.path + ".restartPolicy",
                (
                    f"{replica.key} decides success but restarts even after exiting 0, so the job "
                    "never succeeds: use OnFailure or ExitCode"
                ),
            )
