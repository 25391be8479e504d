"""Generic ephemeral volumes: the PersistentVolumeClaim template a pod carries, as the API server
checks it (``validateEphemeralVolumeSource``, ``ValidatePersistentVolumeClaimSpec`` and the
template's metadata)."""

from __future__ import annotations

from typing import Any

from tfjob_kit.quantity import decode

from . import names
from .field import (
    FieldError,
    Key,
    Named,
    Path,
    forbidden,
    invalid,
    not_supported,
    required,
)
from .fields import (
    as_list,
    field_opt_str,
    field_str,
    opt_dict,
)
from .meta import validate_annotations, validate_labels

NOT_POSITIVE = "must be greater than zero"

_ACCESS_MODES = ("ReadOnlyMany", "ReadWriteMany", "ReadWriteOnce", "ReadWriteOncePod")

_VOLUME_MODES = ("Block", "Filesystem")

# ObjectMeta's fields in Go's order, as validateFieldAllowList names them (first letter lowered).
_TEMPLATE_META_FORBIDDEN = (
    ("name", "name"),
    ("generateName", "generateName"),
    ("namespace", "namespace"),
    ("selfLink", "selfLink"),
    ("uid", "uID"),
    ("resourceVersion", "resourceVersion"),
    ("generation", "generation"),
    ("creationTimestamp", "creationTimestamp"),
    ("deletionTimestamp", "deletionTimestamp"),
    ("deletionGracePeriodSeconds", "deletionGracePeriodSeconds"),
    ("ownerReferences", "ownerReferences"),
    ("finalizers", "finalizers"),
    ("managedFields", "managedFields"),
)

_TEMPLATE_META_POINTERS = frozenset(
    (
        "deletionTimestamp",
        "deletionGracePeriodSeconds",
        "ownerReferences",
        "finalizers",
        "managedFields",
    )
)


def label_selector(selector: dict[str, Any], path: Path) -> list[FieldError]:
    """``ValidateLabelSelector`` with invalid label values not allowed (a claim template's
    selector, a clusterTrustBundle projection's)."""

    errs = []
    labels = selector.get("matchLabels")
    if isinstance(labels, dict):
        errs.extend(validate_labels(labels, (*path, "matchLabels")))
    for i, expr in enumerate(as_list(selector.get("matchExpressions"))):
        if (expr := opt_dict(expr)) is None:
            continue
        origin = "ValidateLabelSelectorRequirement"
        expr_path = (*path, "matchExpressions", i)
        operator = field_str(expr, "operator")
        values = as_list(expr.get("values"))
        if operator in ("In", "NotIn"):
            if not values:
                detail = "must be specified when `operator` is 'In' or 'NotIn'"
                errs.append(required((*expr_path, "values"), detail, origin))
        elif operator in ("Exists", "DoesNotExist"):
            if values:
                detail = "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"
                errs.append(forbidden((*expr_path, "values"), detail, origin))
        elif operator is not None:
            errs.append(
                invalid((*expr_path, "operator"), operator, "not a valid selector operator", origin)
            )
        key = field_str(expr, "key")
        if key is not None:
            for msg in names.is_qualified_name(key):
                errs.append(invalid((*expr_path, "key"), key, msg, "ValidateLabelName"))
        for j, value in enumerate(values):
            if isinstance(value, str):
                for msg in names.is_valid_label_value(value):
                    errs.append(invalid((*expr_path, "values", j), value, msg, origin))
    return errs


def _data_source(ref: dict[str, Any], path: Path, origin: str) -> list[FieldError]:
    """``validateDataSource`` / ``validateDataSourceRef`` (the namespace aside)."""
    errs = []
    if field_str(ref, "name") == "":
        errs.append(required((*path, "name"), origin=origin))
    kind = field_str(ref, "kind")
    if kind == "":
        errs.append(required((*path, "kind"), origin=origin))
    group = field_opt_str(ref, "apiGroup") or ""
    if not group and kind is not None and kind != "PersistentVolumeClaim":
        errs.append(
            invalid(
                path,
                kind,
                "must be 'PersistentVolumeClaim' when referencing the default apiGroup",
                origin,
            )
        )
    if group:
        for msg in names.is_dns1123_subdomain(group):
            errs.append(invalid((*path, "apiGroup"), group, msg, origin))
    return errs


def _positive_quantity(raw: Any, path: Path) -> list[FieldError]:
    """``ValidatePositiveQuantityValue`` of a request rounded up to milli units (the default)."""
    quantity = decode(raw)
    if quantity is None:
        return []
    quantity = quantity.round_up(-3)
    if quantity.value <= 0:
        return [invalid(path, quantity.string(), NOT_POSITIVE, "ValidatePositiveQuantityValue")]
    return []


def _claim_spec(spec: dict[str, Any], path: Path) -> list[FieldError]:
    """``ValidatePersistentVolumeClaimSpec`` with a create's options (VolumeAttributesClass on)."""
    origin = "ValidatePersistentVolumeClaimSpec"
    errs = []
    modes = as_list(spec.get("accessModes"))
    if not modes:
        errs.append(required((*path, "accessModes"), "at least 1 access mode is required", origin))
    selector = opt_dict(spec.get("selector"))
    if selector is not None:
        errs.extend(label_selector(selector, (*path, "selector")))
    rwop = other = False
    for mode in modes:
        if mode not in _ACCESS_MODES:
            errs.append(not_supported((*path, "accessModes"), Named(mode), _ACCESS_MODES, origin))
        if mode == "ReadWriteOncePod":
            rwop = True
        elif mode in _ACCESS_MODES:
            other = True
    if rwop and other:
        errs.append(
            forbidden(
                (*path, "accessModes"),
                "may not use ReadWriteOncePod with other access modes",
                origin,
            )
        )
    resources = opt_dict(spec.get("resources")) or {}
    requests = opt_dict(resources.get("requests")) or {}
    storage_path = (*path, "resources", Key("storage"))
    if requests.get("storage") is None:
        errs.append(required(storage_path, origin=origin))
    else:
        errs.extend(_positive_quantity(requests["storage"], storage_path))
    errs.extend(_class_name(spec, "storageClassName", path, origin))
    volume_mode = field_opt_str(spec, "volumeMode")
    if volume_mode is not None and volume_mode not in _VOLUME_MODES:
        errs.append(not_supported((*path, "volumeMode"), Named(volume_mode), _VOLUME_MODES, origin))
    data_source = opt_dict(spec.get("dataSource"))
    data_source_ref = opt_dict(spec.get("dataSourceRef"))
    if data_source is not None:
        errs.extend(_data_source(data_source, (*path, "dataSource"), "validateDataSource"))
    ref_namespace = None
    if data_source_ref is not None:
        ref_path = (*path, "dataSourceRef")
        errs.extend(_data_source(data_source_ref, ref_path, "validateDataSourceRef"))
        ref_namespace = field_opt_str(data_source_ref, "namespace")
        for msg in names.name_is_dns_label(ref_namespace, False) if ref_namespace else []:
            errs.append(
                invalid((*ref_path, "namespace"), ref_namespace, msg, "validateDataSourceRef")
            )
    # the value is a *field.Path, which encoding/json prints as {}
    if ref_namespace:
        if data_source is not None:
            detail = "may not be specified when dataSourceRef.namespace is specified"
            errs.append(invalid(path, {}, detail, origin))
    elif data_source is not None and data_source_ref is not None:
        same = (
            data_source.get("apiGroup") == data_source_ref.get("apiGroup")
            and field_str(data_source, "kind") == field_str(data_source_ref, "kind")
            and field_str(data_source, "name") == field_str(data_source_ref, "name")
        )
        if not same:
            errs.append(invalid(path, {}, "must match dataSourceRef", origin))
    errs.extend(_class_name(spec, "volumeAttributesClassName", path, origin))
    return errs


def _class_name(spec: dict[str, Any], key: str, path: Path, origin: str) -> list[FieldError]:
    """``ValidateClassName`` (a DNS subdomain) of a set, non-empty class name."""
    name = field_opt_str(spec, key)
    if not name:
        return []
    return [
        invalid((*path, key), name, msg, origin) for msg in names.name_is_dns_subdomain(name, False)
    ]


def _template_meta(meta: dict[str, Any], path: Path) -> list[FieldError]:
    """``ValidateTemplateObjectMeta``: annotations, labels, and nothing else set."""

    errs = []
    annotations = meta.get("annotations")
    if isinstance(annotations, dict):
        errs.extend(validate_annotations(annotations, (*path, "annotations")))
    labels = meta.get("labels")
    if isinstance(labels, dict):
        errs.extend(validate_labels(labels, (*path, "labels")))
    for key, go_name in _TEMPLATE_META_FORBIDDEN:
        # Go's zero values: "" for strings, 0 for generation, nil for the pointers and slices
        # (an empty list decodes to an empty slice, which is set)
        value = meta.get(key)
        if value is None or (value in ("", 0) and key not in _TEMPLATE_META_POINTERS):
            continue
        errs.append(forbidden((*path, go_name), "cannot be set", "validateFieldAllowList"))
    return errs


def validate_ephemeral(src: dict[str, Any], path: Path) -> list[FieldError]:
    origin = "validateEphemeralVolumeSource"
    template = src.get("volumeClaimTemplate")
    if template is None:
        return [required((*path, "volumeClaimTemplate"), origin=origin)]
    if (template := opt_dict(template)) is None:
        return []
    template_path = (*path, "volumeClaimTemplate")
    errs = []
    meta = opt_dict(template.get("metadata"))
    if meta is not None:
        errs.extend(_template_meta(meta, (*template_path, "metadata")))
    spec = opt_dict(template.get("spec"))
    errs.extend(_claim_spec(spec if spec is not None else {}, (*template_path, "spec")))
    return errs
