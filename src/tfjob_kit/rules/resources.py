"""Rules on container resources: GPUs are whole devices whose requests equal their limits, and no
request exceeds its limit.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from tfjob_kit import model, quantity
from tfjob_kit.findings import Severity, child_path
from tfjob_kit.model import Replica, as_dict
from tfjob_kit.rules.registry import rule


def _resources(container: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """(requests, limits) without null entries (the API server drops them)."""
    resources = as_dict(container.get("resources"))
    requests, limits = as_dict(resources.get("requests")), as_dict(resources.get("limits"))
    return (
        {k: v for k, v in requests.items() if v is not None},
        {k: v for k, v in limits.items() if v is not None},
    )


@rule(
    "gpu-request-limit-mismatch",
    Severity.ERROR,
    "GPU requests must equal limits (extended resources cannot be overcommitted).",
)
def _gpu_mismatch(job: dict[str, Any], reps: list[Replica]) -> Iterator[tuple[str, str]]:
    for replica in reps:
        for path, container in replica.all_containers:
            requests, limits = _resources(container)
            if model.GPU_RESOURCE not in requests:
                continue
            request = quantity.parse(requests[model.GPU_RESOURCE])
            where = child_path(path + ".resources.requests", model.GPU_RESOURCE)
            if model.GPU_RESOURCE not in limits:
                yield (
                    where,
                    (
                        f"{model.GPU_RESOURCE} is requested but has no limit: set "
                        "resources.limits to the same number (requests may be omitted)"
                    ),
                )
            elif request is not None and request != quantity.parse(limits[model.GPU_RESOURCE]):
                yield (
                    where,
                    (
                        f"{model.GPU_RESOURCE} request {requests[model.GPU_RESOURCE]} "
                        f"differs from limit {limits[model.GPU_RESOURCE]}: they must be "
                        "equal"
                    ),
                )


@rule("gpu-not-integer", Severity.ERROR, "GPUs are whole devices.")
def _gpu_not_integer(job: dict[str, Any], reps: list[Replica]) -> Iterator[tuple[str, str]]:
    for replica in reps:
        for path, container in replica.all_containers:
            for kind, values in zip(("requests", "limits"), _resources(container), strict=True):
                if model.GPU_RESOURCE in values:
                    amount = quantity.parse(values[model.GPU_RESOURCE])
                    if amount is not None and (amount.denominator != 1 or amount < 0):
                        yield (
                            child_path(f"{path}.resources.{kind}", model.GPU_RESOURCE),
                            (
                                f"{values[model.GPU_RESOURCE]!r} GPUs: GPUs are whole devices; use "
                                "a whole number (time-slicing shares a GPU without fractions)"
                            ),
                        )


@rule("gpu-on-ps", Severity.WARNING, "Parameter servers rarely need GPUs.")
def _gpu_on_ps(job: dict[str, Any], reps: list[Replica]) -> Iterator[tuple[str, str]]:
    for replica in reps:
        if replica.type != "PS":
            continue
        for path, container in replica.all_containers:
            limits = _resources(container)[1]
            amount = quantity.parse(limits.get(model.GPU_RESOURCE))
            if amount:
                yield (
                    child_path(path + ".resources.limits", model.GPU_RESOURCE),
                    (
                        "PS replicas hold variables and do no compute: the GPU stays idle; remove "
                        "it "
                        "unless your PS really computes"
                    ),
                )


@rule("request-exceeds-limit", Severity.ERROR, "A resource request may not exceed its limit.")
def _request_exceeds(job: dict[str, Any], reps: list[Replica]) -> Iterator[tuple[str, str]]:
    for replica in reps:
        for path, container in replica.all_containers:
            requests, limits = _resources(container)
            for name, value in requests.items():
                if name == model.GPU_RESOURCE or name not in limits:
                    continue
                request, limit = quantity.parse(value), quantity.parse(limits[name])
                if request is not None and limit is not None and request > limit:
                    yield (
                        child_path(path + ".resources.requests", name),
                        (
                            f"request {value} of {name} exceeds its limit {limits[name]}: the API "
                            "server rejects the pods"
                        ),
                    )
