"""The downward API as the API server checks it: object field selectors, resource field selectors
and their divisors (used by env ``valueFrom`` and by ``downwardAPI`` volumes and projections),
and a downward API file."""

from __future__ import annotations

from typing import Any

from tfjob_kit.quantity import decode

from . import names
from .field import (
    FieldError,
    Path,
    invalid,
    not_supported,
    required,
)
from .fields import (
    field_str,
    opt_dict,
)
from .volume_paths import local_non_reserved_path, validate_mode

_VOLUME_FIELD_PATHS = (
    "metadata.annotations",
    "metadata.labels",
    "metadata.name",
    "metadata.namespace",
    "metadata.uid",
)

# ConvertDownwardAPIFieldLabel's known labels (spec.host is converted to spec.nodeName); the
# containers' env fieldRefs accept the same (podcheck.containers).
DOWNWARD_API_LABELS = frozenset(
    {
        "metadata.annotations",
        "metadata.labels",
        "metadata.name",
        "metadata.namespace",
        "metadata.uid",
        "spec.nodeName",
        "spec.restartPolicy",
        "spec.serviceAccountName",
        "spec.schedulerName",
        "status.phase",
        "status.hostIP",
        "status.hostIPs",
        "status.podIP",
        "status.podIPs",
    }
)

_RESOURCE_FIELD_PATHS = (
    "limits.cpu",
    "limits.ephemeral-storage",
    "limits.memory",
    "requests.cpu",
    "requests.ephemeral-storage",
    "requests.memory",
)

_HUGEPAGES_PREFIXES = ("limits.hugepages-", "requests.hugepages-")

_BYTE_DIVISORS = frozenset(
    ["1", "1k", "1M", "1G", "1T", "1P", "1E", "1Ki", "1Mi", "1Gi", "1Ti", "1Pi", "1Ei"]
)

_BYTE_DIVISORS_TEXT = "1, 1k, 1M, 1G, 1T, 1P, 1E, 1Ki, 1Mi, 1Gi, 1Ti, 1Pi, 1Ei"


def split_maybe_subscripted_path(field_path: str) -> tuple[str, str, bool]:
    """``fieldpath.SplitMaybeSubscriptedPath``."""
    if not field_path.endswith("']"):
        return field_path, "", False
    head, sep, subscript = field_path[:-2].partition("['")
    if not sep or not head:
        return field_path, "", False
    return head, subscript, True


def validate_object_field_selector(
    ref: dict[str, Any], expressions: tuple[str, ...], path: Path
) -> list[FieldError]:
    """``validateObjectFieldSelector`` (expressions sorted, as ``sets.List`` gives them)."""
    origin = "validateObjectFieldSelector"
    version = field_str(ref, "apiVersion")
    if version == "":
        return [required((*path, "apiVersion"), origin=origin)]
    field_path = field_str(ref, "fieldPath")
    if field_path == "":
        return [required((*path, "fieldPath"), origin=origin)]
    if version is None or field_path is None:
        return []
    # podshelper.ConvertDownwardAPIFieldLabel
    problem = ""
    internal = field_path
    head, subscript, subscripted = split_maybe_subscripted_path(field_path)
    if version != "v1":
        problem = f"unsupported pod version: {version}"
    elif subscripted:
        if head not in ("metadata.annotations", "metadata.labels"):
            problem = f"field label does not support subscript: {field_path}"
    elif field_path == "spec.host":
        internal = "spec.nodeName"
    elif field_path not in DOWNWARD_API_LABELS:
        problem = f"field label not supported: {field_path}"
    if problem:
        return [
            invalid(
                (*path, "fieldPath"), field_path, f"error converting fieldPath: {problem}", origin
            )
        ]
    head, subscript, subscripted = split_maybe_subscripted_path(internal)
    if subscripted:
        if head == "metadata.annotations":
            return names.validate_qualified_name(subscript.lower(), path)
        return names.validate_qualified_name(subscript, path)
    if head not in expressions:
        return [not_supported((*path, "fieldPath"), head, expressions, origin)]
    return []


def validate_resource_divisor(resource: str, divisor: Any, path: Path) -> list[FieldError]:
    """``validateContainerResourceDivisor``."""
    origin = "validateContainerResourceDivisor"
    quantity = decode(divisor) if divisor is not None else None
    if quantity is None or quantity.value == 0:
        return []
    text = quantity.string()
    errs = []
    kind = ""
    if resource in ("limits.cpu", "requests.cpu"):
        if text not in ("1m", "1"):
            detail = "only divisor's values 1m and 1 are supported with the cpu resource"
            errs.append(invalid((*path, "divisor"), resource, detail, origin))
    elif resource in ("limits.memory", "requests.memory"):
        kind = "memory resource"
    elif resource in ("limits.ephemeral-storage", "requests.ephemeral-storage"):
        kind = "local ephemeral storage resource"
    if kind and text not in _BYTE_DIVISORS:
        detail = f"only divisor's values {_BYTE_DIVISORS_TEXT} are supported with the {kind}"
        errs.append(invalid((*path, "divisor"), resource, detail, origin))
    if resource.startswith(_HUGEPAGES_PREFIXES) and text not in _BYTE_DIVISORS:
        detail = (
            f"only divisor's values {_BYTE_DIVISORS_TEXT} are supported with the hugepages resource"
        )
        errs.append(invalid((*path, "divisor"), resource, detail, origin))
    return errs


def validate_resource_field_selector(
    ref: dict[str, Any], path: Path, *, volume: bool
) -> list[FieldError]:
    """``validateContainerResourceFieldSelector`` with the downward API's hugepages prefixes."""
    origin = "validateContainerResourceFieldSelector"
    errs = []
    resource = field_str(ref, "resource")
    if volume and field_str(ref, "containerName") == "":
        errs.append(required((*path, "containerName"), origin=origin))
    elif resource == "":
        errs.append(required((*path, "resource"), origin=origin))
    elif (
        resource is not None
        and resource not in _RESOURCE_FIELD_PATHS
        and not resource.startswith(_HUGEPAGES_PREFIXES)
    ):
        errs.append(not_supported((*path, "resource"), resource, _RESOURCE_FIELD_PATHS, origin))
    errs.extend(validate_resource_divisor(resource or "", ref.get("divisor"), path))
    return errs


def downward_api_file(item: Any, path: Path) -> list[FieldError]:
    """``validateDownwardAPIVolumeFile``: ``path`` is the source's, with no item index."""
    origin = "validateDownwardAPIVolumeFile"
    if (file := opt_dict(item)) is None:
        return []
    errs = []
    target = field_str(file, "path")
    if target == "":
        errs.append(required((*path, "path"), origin=origin))
    if target is not None:
        errs.extend(local_non_reserved_path(target, (*path, "path")))
    field_ref = file.get("fieldRef")
    resource_ref = file.get("resourceFieldRef")
    if field_ref is not None:
        if isinstance(field_ref, dict):
            errs.extend(
                validate_object_field_selector(field_ref, _VOLUME_FIELD_PATHS, (*path, "fieldRef"))
            )
        if resource_ref is not None:
            errs.append(
                invalid(
                    path,
                    "resource",
                    "fieldRef and resourceFieldRef can not be specified simultaneously",
                    origin,
                )
            )
    elif resource_ref is not None:
        if isinstance(resource_ref, dict):
            errs.extend(
                validate_resource_field_selector(
                    resource_ref, (*path, "resourceFieldRef"), volume=True
                )
            )
    else:
        errs.append(required(path, "one of fieldRef and resourceFieldRef is required", origin))
    errs.extend(validate_mode(file, "mode", path, origin))
    return errs
