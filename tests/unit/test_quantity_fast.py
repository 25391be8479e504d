"""The fast paths of the resource checks give the answers of the exact ones.

``podcheck.resources`` remembers a quantity and its value problems by (resource name, text) and
skips the request/limit comparison for one and the same quantity; ``rules.replica_resources``
reads the lists in place and compares parsed values by identity first; ``quantity.parse`` remembers
integers. Each is compared here with the plain exact computation (written out below as it stood
before those shortcuts) over many generated quantities: random mantissas, exponents, suffixes and
signs, the int64 edges, tiny and huge values, JSON numbers, and values that are no quantity at
all."""

from __future__ import annotations

import json
import math
import random
from collections.abc import Iterator
from fractions import Fraction
from typing import Any

from tfjob_kit import model, quantity
from tfjob_kit.findings import child_path
from tfjob_kit.podcheck import resources
from tfjob_kit.podcheck.field import OMIT, ErrorType, FieldError, Key, Path
from tfjob_kit.podcheck.names import IS_NEGATIVE_ERROR_MSG
from tfjob_kit.rules import replica_resources as rules

_SUFFIXES = ["", "", "", "m", "n", "u", "k", "M", "G", "T", "P", "E"]
_SUFFIXES += ["Ki", "Mi", "Gi", "Ti", "Pi", "Ei", "K", "i", "x", "e", "E2", "e+7", "e-"]
_EDGES = [
    "9223372036854775807",
    "9223372036854775808",
    "-9223372036854775808",
    "-9223372036854775809",
    "18446744073709551616",
    "9223372036854775807m",
    "9223372036854775.807",
    "8Ei",
    "7Ei",
    "16Ei",
    "0.000000001",
    "0.0000000001",
    "1e-9",
    "1e-10",
    "1e18",
    "1e19",
    "1e40",
    "1e4000",
    "1e4001",
    "-1e-30",
    "0",
    "-0",
    "+0",
    "0m",
    ".",
    "-.",
    "",
    " 1",
    "1.",
    ".5",
    "1" * 101,
]


def _text(rng: random.Random) -> str:
    """A quantity spelling from every part of the grammar, and a little past it."""
    if rng.random() < 0.1:
        return rng.choice(_EDGES)
    text = rng.choice(["", "", "", "", "+", "-"]) + "0" * rng.choice([0, 0, 0, 1, 2])
    text += "".join(rng.choices("0123456789", k=rng.choice([0, 1, 1, 1, 2, 3, 5, 9, 18, 19, 25])))
    if rng.random() < 0.35:
        text += "." + "".join(rng.choices("0123456789", k=rng.choice([0, 1, 2, 3, 7, 12])))
    if rng.random() < 0.2:
        sign = rng.choice(["", "", "+", "-"])
        text += rng.choice("eE") + sign + str(rng.choice([0, 1, 2, 3, 6, 9, 12, 18, 19, 20, 40]))
    else:
        text += rng.choice(_SUFFIXES)
    return text


def _value(rng: random.Random) -> Any:
    """A resource list value as JSON decodes it: mostly text, some numbers and odd values."""
    roll = rng.random()
    if roll < 0.75:
        return _text(rng)
    if roll < 0.88:
        return rng.choice([0, 1, 2, 4, 8, -1, -3, 2**63 - 1, 2**63, -(2**63), 10**40, 10**400])
    if roll < 0.95:
        return rng.choice([0.5, 1.0, -0.0, 2.5, 1e-12, 1e300, float("nan"), float("inf")])
    return rng.choice([None, True, False, [], {}, "?"])


_NAMES = ["cpu", "memory", "ephemeral-storage", "nvidia.com/gpu", "example.com/foo", "pods"]
_NAMES += ["hugepages-2Mi", "hugepages-1Gi", "hugepages-3", "requests.cpu", "Bad Name", "storage"]


def _list(rng: random.Random, names: list[str]) -> dict[str, Any]:
    return {name: _value(rng) for name in rng.sample(names, rng.randint(0, 4))}


def _requirements(rng: random.Random) -> dict[str, Any]:
    """Requests and limits over a few names, often sharing values (as defaulting makes them)."""
    names = rng.sample(_NAMES, 4)
    limits = _list(rng, names)
    requests = _list(rng, names)
    for name, value in limits.items():
        if rng.random() < 0.4:
            requests[name] = value
    out: dict[str, Any] = {}
    if limits or rng.random() < 0.5:
        out["limits"] = limits
    if requests or rng.random() < 0.5:
        out["requests"] = requests
    if rng.random() < 0.1:
        out["claims"] = [{"name": "a"}, {"name": "b", "request": "x"}, {"name": "a"}]
    return out


# --- the exact computations, as they stood before the shortcuts -------------------------------


def _exact_quantities(
    items: Any, path: Path, errs: list[FieldError]
) -> dict[str, tuple[quantity.Quantity, Path]]:
    out: dict[str, tuple[quantity.Quantity, Path]] = {}
    if not isinstance(items, dict):
        return out
    for name, value in items.items():
        if not isinstance(name, str):
            continue
        parsed = resources.read_quantity(value)
        entry_path = (*path, Key(name))
        if parsed is not None:
            out[name] = (parsed, entry_path)
            continue
        text = quantity.quantity_text(value)
        error = None if text is None else quantity.quantity_error(text)
        if error is not None:
            shown = value if isinstance(value, str | int | float) else OMIT
            errs.append(
                FieldError(entry_path, ErrorType.INVALID, shown, error, "resource.ParseQuantity")
            )
    return out


def _exact_value(name: str, parsed: quantity.Quantity, path: Path) -> list[FieldError]:
    errs: list[FieldError] = []
    if parsed.value < 0:
        origin = "ValidateNonnegativeQuantity"
        errs.append(
            FieldError(path, ErrorType.INVALID, parsed.string(), IS_NEGATIVE_ERROR_MSG, origin)
        )
    if resources._is_integer(name) and resources.scaled_value(parsed, -3) % 1000 != 0:
        origin = "ValidateResourceQuantityValue"
        errs.append(
            FieldError(path, ErrorType.INVALID, parsed.string(), "must be an integer", origin)
        )
    return errs


def _exact_requirements(requirements: Any, pod_claims: set[str], path: Path) -> list[FieldError]:
    errs: list[FieldError] = []
    if not isinstance(requirements, dict):
        return errs

    def name_check(name: str, entry: Path) -> list[FieldError]:
        problems = resources._container_name_problems(name)
        return [FieldError(entry, t, name, d, o) for t, d, o in problems]

    lim_path = (*path, "limits")
    req_path = (*path, "requests")
    limits = _exact_quantities(requirements.get("limits"), lim_path, errs)
    requests = _exact_quantities(requirements.get("requests"), req_path, errs)
    lim_qos = req_qos = lim_huge = req_huge = False
    for name, (parsed, entry) in limits.items():
        errs.extend(name_check(name, entry))
        errs.extend(_exact_value(name, parsed, entry))
        if resources.is_hugepage(name):
            lim_huge = True
            errs.extend(resources._hugepage_errors(name, parsed, entry))
        if name in resources._QOS:
            lim_qos = True
    origin = "validateResourceRequirements"
    for name, (parsed, entry) in requests.items():
        errs.extend(name_check(name, entry))
        errs.extend(_exact_value(name, parsed, entry))
        limit = limits.get(name)
        if limit is not None:
            shown = parsed.string()
            if parsed.value != limit[0].value and not resources.is_overcommit_allowed(name):
                detail = f"must be equal to {name} limit of {limit[0].string()}"
                errs.append(FieldError(req_path, ErrorType.INVALID, shown, detail, origin))
            elif parsed.value > limit[0].value:
                detail = f"must be less than or equal to {name} limit of {limit[0].string()}"
                errs.append(FieldError(req_path, ErrorType.INVALID, shown, detail, origin))
        elif not resources.is_overcommit_allowed(name):
            detail = "Limit must be set for non overcommitable resources"
            errs.append(FieldError(lim_path, ErrorType.REQUIRED, OMIT, detail, origin))
        if resources.is_hugepage(name):
            req_huge = True
            errs.extend(resources._hugepage_errors(name, parsed, entry))
        if name in resources._QOS:
            req_qos = True
    if not lim_qos and not req_qos and (req_huge or lim_huge):
        errs.append(
            FieldError(path, ErrorType.FORBIDDEN, OMIT, "HugePages require cpu or memory", origin)
        )
    claims = requirements.get("claims")
    errs.extend(resources._validate_claim_names(claims, pod_claims, (*path, "claims")))
    return errs


def _exact_parse(value: Any) -> Fraction | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return Fraction(value)
    if isinstance(value, float):  # its JSON text, as the API server reads a number
        return quantity._parse_text(json.dumps(value)) if math.isfinite(value) else None
    if not isinstance(value, str):
        return None
    return quantity._parse_text(value)


def _exact_lists(container: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    res = model.as_dict(container.get("resources"))
    requests, limits = model.as_dict(res.get("requests")), model.as_dict(res.get("limits"))
    return (
        {k: v for k, v in requests.items() if v is not None},
        {k: v for k, v in limits.items() if v is not None},
    )


def _exact_mismatch(path: str, container: dict[str, Any]) -> Iterator[tuple[str, str]]:
    gpu = model.GPU_RESOURCE
    requests, limits = _exact_lists(container)
    if gpu in requests:
        request = _exact_parse(requests[gpu])
        where = child_path(path + ".resources.requests", gpu)
        if gpu not in limits:
            yield (
                where,
                f"{gpu} is requested but has no limit: set resources.limits to the same number "
                "(requests may be omitted)",
            )
        elif request is not None and request != _exact_parse(limits[gpu]):
            yield (
                where,
                f"{gpu} request {requests[gpu]} differs from limit {limits[gpu]}: they must be "
                "equal",
            )


def _exact_not_integer(path: str, container: dict[str, Any]) -> Iterator[tuple[str, str]]:
    gpu = model.GPU_RESOURCE
    for kind, values in zip(("requests", "limits"), _exact_lists(container), strict=True):
        if gpu in values:
            amount = _exact_parse(values[gpu])
            if amount is not None and (amount.denominator != 1 or amount < 0):
                yield (
                    child_path(f"{path}.resources.{kind}", gpu),
                    f"{values[gpu]!r} GPUs: GPUs are whole devices; use a whole number "
                    "(time-slicing shares a GPU without fractions)",
                )


def _exact_on_ps(path: str, container: dict[str, Any]) -> Iterator[tuple[str, str]]:
    if _exact_parse(_exact_lists(container)[1].get(model.GPU_RESOURCE)):
        yield (
            child_path(path + ".resources.limits", model.GPU_RESOURCE),
            "PS replicas hold variables and do no compute: the GPU stays idle; remove it unless "
            "your PS really computes",
        )


def _exact_exceeds(path: str, container: dict[str, Any]) -> Iterator[tuple[str, str]]:
    requests, limits = _exact_lists(container)
    for name, value in requests.items():
        if name == model.GPU_RESOURCE or name not in limits:
            continue
        request, limit = _exact_parse(value), _exact_parse(limits[name])
        if request is not None and limit is not None and request > limit:
            yield (
                child_path(path + ".resources.requests", name),
                f"request {value} of {name} exceeds its limit {limits[name]}: the API server "
                "rejects the pods",
            )


class _Replica:
    def __init__(self, containers: list[tuple[str, dict[str, Any]]]) -> None:
        self.all_containers = containers
        self.type = "PS"


RULES: list[tuple[Any, Any]] = [
    (rules._gpu_mismatch, _exact_mismatch),
    (rules._gpu_not_integer, _exact_not_integer),
    (rules._gpu_on_ps, _exact_on_ps),
    (rules._request_exceeds, _exact_exceeds),
]


# --- the comparisons ----------------------------------------------------------------------------


def test_container_resources_equal_the_exact_check() -> None:
    rng = random.Random(20261126)
    path = ("spec", "containers", 0)
    checked = with_errors = 0
    for _ in range(6000):
        requirements = _requirements(rng)
        want = _exact_requirements(requirements, {"a"}, (*path, "resources"))
        got = resources.validate_container_resources({"resources": requirements}, {"a"}, path)
        assert got == want, requirements
        checked += 1
        with_errors += bool(want)
    assert with_errors > checked // 4  # the generated lists reach the error paths


def test_remembered_value_problems_equal_the_exact_ones() -> None:
    rng = random.Random(7)
    texts = [_text(rng) for _ in range(4000)] + _EDGES
    for text in texts:
        parsed = resources._read_text(text)
        for name in _NAMES:
            want = [] if parsed is None else _exact_value(name, parsed, ("p",))
            entry = resources._read_entry(name, text)
            assert (entry is None) == (parsed is None)
            got = [] if entry is None else [FieldError(("p",), *p) for p in entry[1]]
            assert got == want, (name, text)


def test_rules_equal_the_exact_ones() -> None:
    rng = random.Random(11)
    gpu = model.GPU_RESOURCE
    names = ["cpu", "memory", gpu, "example.com/foo"]
    found = dict.fromkeys((rule for rule, _ in RULES), 0)
    for i in range(6000):
        container: dict[str, Any] = {}
        resources_: dict[str, Any] = {}
        for kind in ("requests", "limits"):
            if rng.random() < 0.9:
                values = {n: _value(rng) for n in rng.sample(names, rng.randint(0, 4))}
                resources_[kind] = values
        if "limits" in resources_ and "requests" in resources_:
            for name, value in resources_["limits"].items():
                if rng.random() < 0.5:
                    resources_["requests"][name] = value
        if rng.random() < 0.95:
            container["resources"] = resources_ if rng.random() < 0.97 else "?"
        where = f"spec.tfReplicaSpecs.PS.template.spec.containers[{i}]"
        reps: list[model.Replica] = [_Replica([(where, container)])]  # type: ignore[list-item]
        for rule, exact in RULES:
            assert list(rule({}, reps)) == list(exact(where, container)), container
            found[rule] += bool(list(exact(where, container)))
    assert all(n > 100 for n in found.values()), found


def test_parse_equals_the_exact_reading() -> None:
    rng = random.Random(3)
    values: list[Any] = [_value(rng) for _ in range(5000)]
    values += [True, False, 1, 1.0, 0, 0.0, -0.0, 2**63, -(2**63) - 1, 10**400, None, "1", b"1"]
    for value in values:
        want = _exact_parse(value)
        assert quantity.parse(value) == want, value
        assert quantity.parse(value) == want, value  # remembered
    # True, 1 and 1.0 are equal dictionary keys: the remembered integers must not mix them up
    assert quantity.parse(1) == 1 and quantity.parse(True) is None
    assert quantity.parse(1.5) == Fraction(3, 2) and quantity.parse(False) is None
