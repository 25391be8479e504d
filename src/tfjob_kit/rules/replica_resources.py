"""Rules on container resources: GPUs are whole devices whose requests equal their limits, and no
request exceeds its limit.
"""

from __future__ import annotations

from collections.abc import Iterator
from fractions import Fraction
from typing import Any

from tfjob_kit import model, quantity
from tfjob_kit.findings import Severity, child_path
from tfjob_kit.model import Replica
from tfjob_kit.rules.registry import rule

_EMPTY: dict[str, Any] = {}


def _resources(container: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """(requests, limits) as written: a null entry counts as absent (the API server drops them),
    so read them with ``.get`` and skip ``None``. The empty dict answered for a missing list is
    shared: never change what this answers."""
    resources = container.get("resources")
    if not isinstance(resources, dict):
        return _EMPTY, _EMPTY
    requests, limits = resources.get("requests"), resources.get("limits")
    return (
        requests if isinstance(requests, dict) else _EMPTY,
        limits if isinstance(limits, dict) else _EMPTY,
    )


def _same(a: Fraction, b: Fraction | None) -> bool:
    """``a == b``; parse answers one object for repeated texts, so most pairs are identical and
    need no Fraction comparison."""
    return a is b or a == b


@rule(
    "gpu-request-limit-mismatch",
    Severity.ERROR,
    "GPU requests must equal limits (extended resources cannot be overcommitted).",
)
def _gpu_mismatch(job: dict[str, Any], reps: list[Replica]) -> Iterator[tuple[str, str]]:
    gpu = model.GPU_RESOURCE
    for replica in reps:
        for path, container in replica.all_containers:
            requests, limits = _resources(container)
            requested = requests.get(gpu)
            if requested is None:
                continue
            where = child_path(path + ".resources.requests", gpu)
            limited = limits.get(gpu)
            if limited is None:
                yield (
                    where,
                    (
                        f"{gpu} is requested but has no limit: set "
                        "resources.limits to the same number (requests may be omitted)"
                    ),
                )
                continue
            request = quantity.parse(requested)
            if request is not None and not _same(request, quantity.parse(limited)):
                yield (
                    where,
                    (f"{gpu} request {requested} differs from limit {limited}: they must be equal"),
                )


@rule("gpu-not-integer", Severity.ERROR, "GPUs are whole devices.")
def _gpu_not_integer(job: dict[str, Any], reps: list[Replica]) -> Iterator[tuple[str, str]]:
    gpu = model.GPU_RESOURCE
    for replica in reps:
        for path, container in replica.all_containers:
            requests, limits = _resources(container)
            for kind, values in (("requests", requests), ("limits", limits)):
                value = values.get(gpu)
                if value is None:
                    continue
                amount = quantity.parse(value)
                # a Fraction keeps its sign in the numerator: numerator < 0 is amount < 0
                if amount is not None and (amount.denominator != 1 or amount.numerator < 0):
                    yield (
                        child_path(f"{path}.resources.{kind}", gpu),
                        (
                            f"{value!r} GPUs: GPUs are whole devices; use "
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
                if value is None or name == model.GPU_RESOURCE:
                    continue
                limited = limits.get(name)
                if limited is None:
                    continue
                request, limit = quantity.parse(value), quantity.parse(limited)
                if request is None or limit is None or request is limit:
                    continue  # unreadable, or one object for one text: not greater
                if request > limit:
                    yield (
                        child_path(path + ".resources.requests", name),
                        (
                            f"request {value} of {name} exceeds its limit {limited}: the API "
                            "server rejects the pods"
                        ),
                    )
