"""Resource requirements as the API server defaults and checks them on a pod.

Mirrors ``SetDefaults_Pod`` and ``SetDefaults_ResourceList`` (pkg/apis/core/v1/defaults.go) for
the resource lists, and ``validateResourceRequirements`` with its helpers
(pkg/apis/core/validation/validation.go, pkg/apis/core/helper) for container resources,
``overhead`` and the pod-level ``resources`` (PodLevelResources is on by default from 1.34; from
1.37 PodLevelResourcesFixDefaulting moves the pod-level defaults after the rounding, see
:func:`set_defaults`).

Quantities are read as resource.Quantity reads them (:func:`tfjob_kit.quantity.parse_quantity`)
and printed as ``Quantity.String`` prints them, so the messages equal the server's. A quantity the
server's decoder cannot read fails the whole request before validation; here it is a field error
with the decoder's message (origin ``resource.ParseQuantity``), so that it has a location.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Mapping
from fractions import Fraction
from typing import Any

from tfjob_kit.podcheck import release
from tfjob_kit.quantity import (
    JSON_SPACE,
    Quantity,
    add,
    parse_quantity,
    quantity_error,
    quantity_text,
)

from .field import (
    OMIT,
    ErrorType,
    FieldError,
    Key,
    Path,
    duplicate,
    forbidden,
    invalid,
    not_found,
    not_supported,
    required,
)
from .names import IS_NEGATIVE_ERROR_MSG, is_dns1123_label, is_qualified_name

CPU = "cpu"
MEMORY = "memory"
HUGEPAGES_PREFIX = "hugepages-"
_REQUESTS_PREFIX = "requests."
_NATIVE_NAMESPACE = "kubernetes.io/"
_STANDARD_CONTAINER = frozenset({CPU, MEMORY, "ephemeral-storage"})
_STANDARD = frozenset(
    {
        CPU,
        MEMORY,
        "ephemeral-storage",
        "requests.cpu",
        "requests.memory",
        "requests.ephemeral-storage",
        "limits.cpu",
        "limits.memory",
        "limits.ephemeral-storage",
        "pods",
        "resourcequotas",
        "services",
        "replicationcontrollers",
        "secrets",
        "configmaps",
        "persistentvolumeclaims",
        "storage",
        "requests.storage",
        "services.nodeports",
        "services.loadbalancers",
    }
)
_INTEGER = frozenset(
    {
        "pods",
        "resourcequotas",
        "services",
        "replicationcontrollers",
        "secrets",
        "configmaps",
        "persistentvolumeclaims",
        "services.nodeports",
        "services.loadbalancers",
    }
)
_POD_LEVEL = frozenset({CPU, MEMORY})
_POD_LEVEL_CHOICES = (CPU, HUGEPAGES_PREFIX, MEMORY)  # sets.List(SupportedPodLevelResources())
_QOS = frozenset({CPU, MEMORY})
_MILLI = -3


# --- helper.Is* (pkg/apis/core/helper/helpers.go) --------------------------------------------


def is_hugepage(name: str) -> bool:
    return name.startswith(HUGEPAGES_PREFIX)


def is_native(name: str) -> bool:
    return "/" not in name or _NATIVE_NAMESPACE in name


def is_extended(name: str) -> bool:
    if is_native(name) or name.startswith(_REQUESTS_PREFIX):
        return False
    return not is_qualified_name(_REQUESTS_PREFIX + name)


def is_overcommit_allowed(name: str) -> bool:
    return is_native(name) and not is_hugepage(name)


def _is_standard(name: str) -> bool:
    return (
        name in _STANDARD
        or name.startswith(HUGEPAGES_PREFIX)
        or name.startswith("requests." + HUGEPAGES_PREFIX)
    )


def _is_integer(name: str) -> bool:
    return name in _INTEGER or is_extended(name)


# --- quantities -----------------------------------------------------------------------------


def read_quantity(value: Any) -> Quantity | None:
    """A resource list's value as the decoder reads it and SetDefaults_ResourceList rounds it
    (up to milli units); None when it is not a quantity."""
    text = quantity_text(value)
    return None if text is None else _read_text(text)


@functools.lru_cache(maxsize=4096)
def _read_text(text: str) -> Quantity | None:
    parsed = parse_quantity(text)
    return None if parsed is None else parsed.round_up(_MILLI)


ValueProblems = tuple[tuple[ErrorType, str, str, str], ...]  # (type, value, detail, origin)
Entry = tuple[Quantity, ValueProblems]  # a list entry's quantity and its value problems


def _quantities(resources: Any, path: Path, errs: list[FieldError]) -> dict[str, Entry]:
    """The readable entries of a resource list, each with its value problems
    (:func:`_read_entry`); values the decoder would refuse are reported."""
    out: dict[str, Entry] = {}
    if not isinstance(resources, dict):
        return out
    for name, value in resources.items():
        if not isinstance(name, str):
            continue
        # quantity_text(value), a string's case written out: nearly every value is a string
        text = value.strip(JSON_SPACE) if type(value) is str else quantity_text(value)
        if text is None:  # too long to judge: neither read nor refused
            continue
        entry = _read_entry(name, text)
        if entry is not None:
            out[name] = entry
            continue
        error = quantity_error(text)
        if error is not None:
            shown = value if isinstance(value, str | int | float) else OMIT
            errs.append(invalid((*path, Key(name)), shown, error, "resource.ParseQuantity"))
    return out


# --- resource names -------------------------------------------------------------------------


NameProblems = tuple[tuple[ErrorType, str, str], ...]  # (type, detail, origin), value = name


def _resource_name_problems(name: str) -> NameProblems:
    """``validateResourceName``."""
    origin = "validateResourceName"
    found = tuple((ErrorType.INVALID, msg, origin) for msg in is_qualified_name(name))
    if found:
        return found
    if "/" not in name and not _is_standard(name):
        detail = "must be a standard resource type or fully qualified"
        return ((ErrorType.INVALID, detail, origin),)
    return ()


@functools.lru_cache(maxsize=1024)
def _container_name_problems(name: str) -> NameProblems:
    """``validateContainerResourceName``."""
    found = _resource_name_problems(name)
    origin = "validateContainerResourceName"
    if "/" not in name:
        if not (name in _STANDARD_CONTAINER or is_hugepage(name)):
            detail = "must be a standard resource for containers"
            found += ((ErrorType.INVALID, detail, origin),)
    elif not is_native(name) and not is_extended(name):
        detail = "doesn't follow extended resource name standard"
        found += ((ErrorType.INVALID, detail, origin),)
    return found


@functools.lru_cache(maxsize=1024)
def _pod_name_problems(name: str) -> NameProblems:
    """``validatePodResourceName``."""
    found = _resource_name_problems(name)
    if found:
        return found
    if not (name in _POD_LEVEL or is_hugepage(name)):
        detail = not_supported((), name, _POD_LEVEL_CHOICES).detail
        return ((ErrorType.NOT_SUPPORTED, detail, "validatePodResourceName"),)
    return ()


# --- quantity checks ------------------------------------------------------------------------


def _quantity_value_problems(name: str, quantity: Quantity) -> ValueProblems:
    """``ValidateResourceQuantityValue``: not negative; integer resources whole."""
    found: ValueProblems = ()
    if quantity.value < 0:
        origin = "ValidateNonnegativeQuantity"
        found += ((ErrorType.INVALID, quantity.string(), IS_NEGATIVE_ERROR_MSG, origin),)
    if _is_integer(name) and scaled_value(quantity, -3) % 1000 != 0:  # MilliValue
        origin = "ValidateResourceQuantityValue"
        found += ((ErrorType.INVALID, quantity.string(), "must be an integer", origin),)
    return found


@functools.lru_cache(maxsize=4096)
def _read_entry(name: str, text: str) -> Entry | None:
    """The quantity ``text`` reads as (:func:`_read_text`, None where it reads none) and its
    :func:`_quantity_value_problems` as resource ``name``. The text alone determines the
    quantity, so the answer can be remembered; one text gives one quantity object."""
    quantity = _read_text(text)
    return None if quantity is None else (quantity, _quantity_value_problems(name, quantity))


_INT64 = 2**64
_WRAPPING_SCALES = frozenset({0, 1, 2, 3, 6, 9})  # positiveScaleInt64's multiply-and-check cases


def _away_from_zero(value: Fraction) -> int:
    whole = -(-abs(value).numerator // abs(value).denominator)
    return whole if value >= 0 else -whole


def _wrap(value: int) -> int:
    """Go's int64 arithmetic: the low 64 bits, signed."""
    return (value + 2**63) % _INT64 - 2**63


def _go_rem(a: int, b: int) -> int:
    """Go's ``%`` on int64 (the sign of the dividend)."""
    r = abs(a) % abs(b)
    return r if a >= 0 else -r


def scaled_value(quantity: Quantity, scale: int) -> int:
    """``Quantity.ScaledValue(scale)`` (``Value()`` is 0, ``MilliValue()`` -3), down to how it
    overflows: the int64 representation wraps in the cases positiveScaleInt64 multiplies with a
    check it ignores, and says 0 in the others; the inf.Dec one (scale 3 once rounded to milli
    units) keeps the low 64 bits."""
    exact = quantity.value / Fraction(10) ** scale
    if quantity.scale is not None and quantity.scale < scale:
        return _away_from_zero(exact)  # negativeScaleInt64: a division, always fits
    result = _away_from_zero(exact) if quantity.scale is None else int(exact)
    if -(2**63) <= result < 2**63:
        return result
    if quantity.scale is None or quantity.scale - scale in _WRAPPING_SCALES:
        return _wrap(result)
    return 0


def _hugepage_divisible(name: str, quantity: Quantity) -> bool:
    """``helper.IsHugePageResourceValueDivisible``."""
    page = parse_quantity(name[len(HUGEPAGES_PREFIX) :])
    if page is None or page.value <= 0 or scaled_value(page, -3) % 1000 != 0:
        return False
    size = scaled_value(page, 0)
    return size != 0 and _go_rem(scaled_value(quantity, 0), size) == 0


def _hugepage_errors(name: str, quantity: Quantity, path: Path) -> list[FieldError]:
    """``validateResourceQuantityHugePageValue`` (indivisible values are never allowed on
    create)."""
    if _hugepage_divisible(name, quantity):
        return []
    shown = quantity.string()
    detail = f"{shown} is not positive integer multiple of {name}"
    return [invalid(path, shown, detail, "validateResourceQuantityHugePageValue")]


def _validate_claim_names(claims: Any, pod_claims: set[str], path: Path) -> list[FieldError]:
    """``validateResourceClaimNames``."""
    errs: list[FieldError] = []
    if not isinstance(claims, list):
        return errs
    origin = "validateResourceClaimNames"
    names: list[str] = []  # insertion order is irrelevant; Go's set
    seen: set[str] = set()
    for i, claim in enumerate(claims):
        if not isinstance(claim, dict):
            continue
        name = claim.get("name")
        name = name if isinstance(name, str) else ""
        request = claim.get("request")
        request = request if isinstance(request, str) else ""
        item = (*path, i)
        if not name:
            errs.append(required(item, origin=origin))
            continue
        if name in seen:
            errs.append(duplicate(item, name, origin))
        else:
            key = name
            if request:
                errs.extend(
                    invalid((*item, "request"), request, msg, origin)
                    for msg in is_dns1123_label(request)
                )
                key += "/" + request
            if key in seen:
                errs.append(duplicate(item, key, origin))
            elif not request:
                for other in names:
                    index = other.find("/")
                    if index >= 0 and other[:index] == name:
                        errs.append(duplicate(item, name, origin))
            if key not in seen:
                seen.add(key)
                names.append(key)
        if name not in pod_claims:
            detail = "must be one of the names in pod.spec.resourceClaims"
            if pod_claims:
                detail += ": " + ", ".join(sorted(pod_claims))
            else:
                detail += " which is empty"
            errs.append(not_found(item, name, origin, detail=detail))
    return errs


def _entry_errors(
    name: str, name_problems: NameProblems, value_problems: ValueProblems, path: Path
) -> list[FieldError]:
    """A list entry's name and value errors, in the order validateResourceRequirements finds
    them (the name's, then the value's)."""
    entry = (*path, Key(name))
    errs = [FieldError(entry, t, name, d, o) for t, d, o in name_problems]
    errs.extend(FieldError(entry, t, v, d, o) for t, v, d, o in value_problems)
    return errs


def _validate_requirements(
    requirements: Any,
    name_problems: Callable[[str], NameProblems],
    pod_claims: set[str],
    path: Path,
) -> list[FieldError]:
    """``validateResourceRequirements``; ``name_problems`` is the resource name check
    (:func:`_container_name_problems` or :func:`_pod_name_problems`)."""
    errs: list[FieldError] = []
    if not isinstance(requirements, dict):
        return errs
    lim_path = (*path, "limits")
    req_path = (*path, "requests")
    limits = _quantities(requirements.get("limits"), lim_path, errs)
    requests = _quantities(requirements.get("requests"), req_path, errs)
    lim_qos = req_qos = lim_huge = req_huge = False
    for name, (quantity, value_found) in limits.items():
        found = name_problems(name)
        if found or value_found:
            errs.extend(_entry_errors(name, found, value_found, lim_path))
        if name.startswith(HUGEPAGES_PREFIX):  # is_hugepage
            lim_huge = True
            errs.extend(_hugepage_errors(name, quantity, (*lim_path, Key(name))))
        if name in _QOS:
            lim_qos = True
    origin = "validateResourceRequirements"
    for name, (quantity, value_found) in requests.items():
        found = name_problems(name)
        if found or value_found:
            errs.extend(_entry_errors(name, found, value_found, req_path))
        limit = limits.get(name)
        if limit is not None:
            limit_quantity = limit[0]
            if quantity is limit_quantity:
                pass  # one quantity (the same text, read once): equal, neither error applies
            elif quantity.value != limit_quantity.value and not is_overcommit_allowed(name):
                detail = f"must be equal to {name} limit of {limit_quantity.string()}"
                shown = quantity.string()
                errs.append(invalid(req_path, shown, detail, origin))
            elif quantity.value > limit_quantity.value:
                detail = f"must be less than or equal to {name} limit of {limit_quantity.string()}"
                shown = quantity.string()
                errs.append(invalid(req_path, shown, detail, origin))
        elif not is_overcommit_allowed(name):
            detail = "Limit must be set for non overcommitable resources"
            errs.append(required(lim_path, detail, origin))
        if name.startswith(HUGEPAGES_PREFIX):  # is_hugepage
            req_huge = True
            errs.extend(_hugepage_errors(name, quantity, (*req_path, Key(name))))
        if name in _QOS:
            req_qos = True
    if not lim_qos and not req_qos and (req_huge or lim_huge):
        errs.append(forbidden(path, "HugePages require cpu or memory", origin))
    claims = requirements.get("claims")
    if claims is not None:  # _validate_claim_names has nothing to say about a missing list
        errs.extend(_validate_claim_names(claims, pod_claims, (*path, "claims")))
    return errs


# --- entry points -----------------------------------------------------------------------------


def validate_container_resources(
    container: Mapping[str, Any], pod_claims: set[str], path: Path
) -> list[FieldError]:
    """``ValidateContainerResourceRequirements(&ctr.Resources, ...)``; ``path`` is the
    container's own path (``("spec", "containers", 0)``), errors are under its ``resources``."""
    return _validate_requirements(
        container.get("resources"),
        _container_name_problems,
        pod_claims,
        (*path, "resources"),
    )


def _containers(spec: Mapping[str, Any], key: str) -> Iterable[tuple[int, Mapping[str, Any]]]:
    items = spec.get(key)
    if isinstance(items, list):
        for i, item in enumerate(items):
            if isinstance(item, dict):
                yield i, item


def _requirement(
    container: Mapping[str, Any], kind: str, rounded: bool = True
) -> dict[str, Quantity]:
    """A container's readable requests or limits (``kind``), rounded as defaulting leaves them
    unless ``rounded`` is False (SetDefaults_Pod runs before SetDefaults_ResourceList)."""
    resources = container.get("resources")
    if not isinstance(resources, dict):
        return {}
    items = resources.get(kind)
    if not isinstance(items, dict):
        return {}
    out: dict[str, Quantity] = {}
    for name, value in items.items():
        if not isinstance(name, str):
            continue
        if rounded:
            quantity = read_quantity(value)
        else:
            text = quantity_text(value)
            quantity = None if text is None else parse_quantity(text)
        if quantity is not None:
            out[name] = quantity
    return out


def _add_list(total: dict[str, Quantity], items: Mapping[str, Quantity]) -> None:
    """``addResourceList``."""
    for name, quantity in items.items():
        have = total.get(name)
        total[name] = quantity if have is None else add(have, quantity)


def _max_list(total: dict[str, Quantity], items: Mapping[str, Quantity]) -> None:
    """``maxResourceList``."""
    for name, quantity in items.items():
        have = total.get(name)
        if have is None or quantity.value > have.value:
            total[name] = quantity


def aggregate(spec: Mapping[str, Any], kind: str, rounded: bool = True) -> dict[str, Quantity]:
    """``resourcehelper.AggregateContainerRequests`` / ``AggregateContainerLimits`` without
    options: the regular containers and sidecars (restartable init containers) add up; each
    init container needs itself plus the sidecars started before it; the larger wins."""
    total: dict[str, Quantity] = {}
    for _, ctr in _containers(spec, "containers"):
        _add_list(total, _requirement(ctr, kind, rounded))
    sidecars: dict[str, Quantity] = {}
    init_max: dict[str, Quantity] = {}
    for _, ctr in _containers(spec, "initContainers"):
        own = _requirement(ctr, kind, rounded)
        need: dict[str, Quantity] = {}
        if ctr.get("restartPolicy") == "Always":
            _add_list(total, own)
            _add_list(sidecars, own)
            need = dict(sidecars)
        else:
            _add_list(need, own)
            _add_list(need, sidecars)
        _max_list(init_max, need)
    _max_list(total, init_max)
    return total


def validate_pod_resources(spec: Mapping[str, Any], path: Path) -> list[FieldError]:
    """``validateOverhead`` (the overhead as container limits) and, PodLevelResources being on
    by default, ``validatePodResources`` for ``spec.resources``; ``path`` is the spec's path."""
    errs: list[FieldError] = []
    pod_claims = pod_claim_names(spec)
    resources = spec.get("resources")
    if isinstance(resources, dict):
        errs.extend(_validate_pod_level(spec, resources, pod_claims, (*path, "resources")))
    overhead = spec.get("overhead")
    if overhead is not None:
        errs.extend(
            _validate_requirements(
                {"limits": overhead},
                _container_name_problems,
                set(),
                (*path, "overhead"),
            )
        )
    return errs


def pod_claim_names(spec: Mapping[str, Any]) -> set[str]:
    """``gatherPodResourceClaimNames``."""
    claims = spec.get("resourceClaims")
    names: set[str] = set()
    if isinstance(claims, list):
        for claim in claims:
            name = claim.get("name") if isinstance(claim, dict) else None
            if isinstance(name, str) and name:
                names.add(name)
    return names


def _validate_pod_level(
    spec: Mapping[str, Any], resources: Mapping[str, Any], pod_claims: set[str], path: Path
) -> list[FieldError]:
    """``validatePodResources``."""
    os_spec = spec.get("os")
    if isinstance(os_spec, dict) and os_spec.get("name") == "windows":
        return [forbidden(path, "may not be set for a windows pod", "validatePodResources")]
    errs: list[FieldError] = []
    if resources.get("claims") is not None:
        errs.append(
            forbidden(
                (*path, "claims"),
                "claims may not be set for Resources at pod-level",
                "validatePodResources",
            )
        )
    errs.extend(_validate_requirements(resources, _pod_name_problems, pod_claims, path))
    errs.extend(_validate_consistency(spec, resources, path))
    return errs


def _validate_consistency(
    spec: Mapping[str, Any], resources: Mapping[str, Any], path: Path
) -> list[FieldError]:
    """``validatePodResourceConsistency``."""
    errs: list[FieldError] = []
    origin = "validatePodResourceConsistency"
    pod_requests = _requirement({"resources": resources}, "requests")
    pod_limits = _requirement({"resources": resources}, "limits")
    for name, total in aggregate(spec, "requests").items():
        pod_request = pod_requests.get(name)
        if pod_request is not None and total.value > pod_request.value:
            detail = (
                f"must be greater than or equal to aggregate container requests of {total.string()}"
            )
            errs.append(
                invalid((*path, "requests", Key(name)), pod_request.string(), detail, origin)
            )
    for name, total in aggregate(spec, "limits").items():
        pod_limit = pod_limits.get(name)
        if not is_hugepage(name) or pod_limit is None:
            continue
        if total.value > pod_limit.value:
            detail = (
                f"must be greater than or equal to aggregate container limits of {total.string()}"
            )
            errs.append(invalid((*path, "limits", Key(name)), pod_limit.string(), detail, origin))
    for i, ctr in _containers(spec, "containers"):
        for name, limit in _requirement(ctr, "limits").items():
            pod_limit = pod_limits.get(name)
            if pod_limit is not None and limit.value > pod_limit.value:
                detail = f"must be less than or equal to pod limits of {pod_limit.string()}"
                errs.append(
                    invalid(
                        (*path, "containers", i, Key(name), "limits"),
                        limit.string(),
                        detail,
                        origin,
                    )
                )
    return errs


# --- defaults -----------------------------------------------------------------------------------


def set_defaults(spec: dict[str, Any]) -> None:
    """The resource defaults of a create: ``SetDefaults_Pod`` makes a container's (and init
    container's) missing requests its limits; the pod-level defaults follow, where
    PodLevelResources is on. Before PodLevelResourcesFixDefaulting (on by default from 1.37)
    SetDefaults_Pod itself defaults them, from the lists as written (defaultHugePagePodLimits,
    defaultPodRequests); with it the pod strategy's PrepareForCreate does, after
    SetDefaults_ResourceList rounded the lists, and also defaults the pod-level limits
    (``podutil.DefaultPodLevelResources``). Changes ``spec`` in place (give it a copy). The milli
    rounding of SetDefaults_ResourceList is applied when the lists are read
    (:func:`read_quantity`), so the values themselves are left as written."""
    for key in ("containers", "initContainers"):
        items = spec.get(key)
        if not isinstance(items, list):
            continue
        for ctr in items:
            if not isinstance(ctr, dict):
                continue
            resources = ctr.get("resources")
            if not isinstance(resources, dict):
                continue
            limits = resources.get("limits")
            if not isinstance(limits, dict):
                continue
            requests = resources.get("requests")
            if requests is None:
                resources["requests"] = dict(limits)  # every limit, in order
            elif isinstance(requests, dict) and not requests.keys() >= limits.keys():
                for name, value in limits.items():
                    requests.setdefault(name, value)
    resources = spec.get("resources")
    if not isinstance(resources, dict) or not release.gate("PodLevelResources"):
        return
    if release.gate("PodLevelResourcesFixDefaulting"):
        _default_pod_level_resources(spec, resources)
    else:
        _default_hugepage_pod_limits(spec, resources, rounded=False)
        _default_pod_requests(spec, resources, rounded=False)


def _default_pod_level_resources(spec: dict[str, Any], resources: dict[str, Any]) -> None:
    """``podutil.DefaultPodLevelResources`` (PrepareForCreate, with
    PodLevelResourcesFixDefaulting): on the rounded lists, the pod-level hugepage limits, then
    the requests, then the limits; nothing when the pod sets neither requests nor limits."""
    if not resources.get("requests") and not resources.get("limits"):
        return
    _default_hugepage_pod_limits(spec, resources, rounded=True)
    _default_pod_requests(spec, resources, rounded=True)
    _default_pod_limits(spec, resources)


def _is_pod_level(name: str) -> bool:
    """``resourcehelper.IsSupportedPodLevelResource``."""
    return name in _POD_LEVEL or is_hugepage(name)


def _default_hugepage_pod_limits(
    spec: dict[str, Any], resources: dict[str, Any], rounded: bool
) -> None:
    """``defaultHugePagePodLimits`` (``defaultHugePagePodLevelLimits`` on the ``rounded``
    lists)."""
    limits = resources.get("limits")
    requests = resources.get("requests")
    if not limits and not requests:
        return
    pod_limits = dict(limits) if isinstance(limits, dict) else {}
    req_names = requests if isinstance(requests, dict) else {}
    for name, total in aggregate(spec, "limits", rounded).items():
        if not is_hugepage(name) or name in req_names:
            continue
        pod_limits.setdefault(name, total.string())
    if pod_limits:
        if isinstance(limits, dict):
            limits.update({k: v for k, v in pod_limits.items() if k not in limits})
        elif limits is None:
            resources["limits"] = pod_limits


def _default_pod_requests(spec: dict[str, Any], resources: dict[str, Any], rounded: bool) -> None:
    """``defaultPodRequests``: only where the pod sets limits. On the ``rounded`` lists
    ``defaultPodLevelRequests``, whose caller also lets requests alone through."""
    limits = resources.get("limits")
    if not rounded and (not isinstance(limits, dict) or not limits):
        return
    limits = limits if isinstance(limits, dict) else {}
    requests = resources.get("requests")
    if requests is None:
        pod_requests: dict[str, Any] = {}
    elif isinstance(requests, dict):
        pod_requests = requests
    else:
        return
    for name, total in aggregate(spec, "requests", rounded).items():
        if name not in pod_requests and _is_pod_level(name) and is_overcommit_allowed(name):
            pod_requests[name] = total.string()
    for name, value in limits.items():
        if name not in pod_requests and _is_pod_level(name):
            pod_requests[name] = value
    if pod_requests and requests is None:
        resources["requests"] = pod_requests


def _default_pod_limits(spec: dict[str, Any], resources: dict[str, Any]) -> None:
    """``defaultPodLevelLimits``: a pod-level request of a supported resource without a
    pod-level limit gets the limit max(request, the containers' aggregate limits), where every
    container (init, sidecar, ephemeral too) has a limit for it."""
    requests = resources.get("requests")
    limits = resources.get("limits")
    if not isinstance(requests, dict):
        return
    have = limits if isinstance(limits, dict) else {}
    candidates = {n for n in requests if isinstance(n, str) and _is_pod_level(n) and n not in have}
    for key in ("initContainers", "containers", "ephemeralContainers"):  # VisitContainers
        for _, ctr in _containers(spec, key):
            resources_of = ctr.get("resources")
            ctr_limits = resources_of.get("limits") if isinstance(resources_of, dict) else None
            candidates &= set(ctr_limits) if isinstance(ctr_limits, dict) else set()
    if not candidates:
        return
    totals = aggregate(spec, "limits")
    for name in sorted(candidates):
        total = totals.get(name)
        if total is None:
            continue
        request = read_quantity(requests[name])
        value: Any = total.string()
        if request is not None and request.value > total.value:
            value = requests[name]
        if not isinstance(resources.get("limits"), dict):
            resources["limits"] = {}
        resources["limits"][name] = value
