"""What the API server checks in an object's metadata on create.

Ports ``ValidateObjectMetaAccessor`` (``k8s.io/apimachinery/pkg/api/validation/objectmeta.go``)
with core validation's extra finalizer rule (``ValidateObjectMeta`` in
``pkg/apis/core/validation``): name or generateName under the object's name rule, namespace,
generation, labels (``metav1validation.ValidateLabels``), annotations (keys and the 256 KiB
total), ownerReferences, finalizers and managedFields.

Go ranges over label and annotation maps in random order; here they are checked in the dict's
order, so only the set of errors is comparable, not their order.

The checks follow the minor of :mod:`tfjob_kit.podcheck.release`: label keys and values are
worded as ``names`` says; from 1.37 an owner reference's errors are reported at its index
(``ownerReferences[0].uid``), an empty field is Required, and an apiVersion that does not parse
says so; a managedFields entry's empty or unknown operation is Required / Unsupported.
"""

from __future__ import annotations

from typing import Any

from tfjob_kit.podcheck import release
from tfjob_kit.podcheck.field import (
    FieldError,
    Named,
    Path,
    forbidden,
    invalid,
    not_supported,
    required,
    too_long,
)
from tfjob_kit.podcheck.fields import str_map, str_of
from tfjob_kit.podcheck.names import (
    VALID_LABEL_VALUES,
    VALID_QUALIFIED_NAMES,
    NameRule,
    byte_len,
    is_qualified_name,
    is_valid_label_value,
    validate_namespace_name,
    validate_nonnegative_field,
)

TOTAL_ANNOTATION_SIZE_LIMIT_B = 256 * 1024
FIELD_MANAGER_MAX_LENGTH = 128
MAX_SUBRESOURCE_NAME_LENGTH = 256
FINALIZER_ORPHAN_DEPENDENTS = "orphan"
FINALIZER_DELETE_DEPENDENTS = "foregroundDeletion"
# helper.IsStandardFinalizerName: the finalizers core validation accepts without a '/'.
STANDARD_FINALIZERS = frozenset(
    {"kubernetes", FINALIZER_ORPHAN_DEPENDENTS, FINALIZER_DELETE_DEPENDENTS}
)
# schema.GroupVersionKind of metav1validation's BannedOwners.
_BANNED_OWNERS = frozenset({("", "v1", "Event")})
_BANNED_OWNER_KINDS = frozenset(kind for _, _, kind in _BANNED_OWNERS)


def _byte_total(annotations: dict[Any, Any]) -> int:
    """The UTF-8 bytes of the string keys and values of the string entries."""
    return sum(byte_len(key) + byte_len(value) for key, value in str_map(annotations).items())


def validate_label_name(name: str, path: Path) -> list[FieldError]:
    """``metav1validation.ValidateLabelName``: a qualified name."""
    return [invalid(path, name, msg, "ValidateLabelName") for msg in is_qualified_name(name)]


def _all_remembered(labels: dict[Any, Any]) -> bool:
    """Every key a remembered qualified name and every value a remembered label value (so all
    strings, and valid: the checks would find nothing), looked up in one pass in C."""
    if not labels.keys() <= VALID_QUALIFIED_NAMES:
        return False
    try:
        return VALID_LABEL_VALUES.issuperset(labels.values())
    except TypeError:  # an unhashable value (a list, a map): no remembered string
        return False


def validate_labels(labels: Any, path: Path) -> list[FieldError]:
    """``metav1validation.ValidateLabels``: qualified-name keys and label values (both errors
    are reported at the map's path, as Go does)."""
    errs: list[FieldError] = []
    if not isinstance(labels, dict) or _all_remembered(labels):
        return errs
    for key, value in labels.items():  # the entries _str_map keeps, in its order
        if not isinstance(key, str) or not isinstance(value, str):
            continue
        if key in VALID_QUALIFIED_NAMES and value in VALID_LABEL_VALUES:
            continue  # both remembered as valid: the checks would find nothing
        errs.extend(validate_label_name(key, path))
        errs.extend(
            invalid(path, value, msg, "ValidateLabels") for msg in is_valid_label_value(value)
        )
    return errs


def validate_annotations(annotations: Any, path: Path) -> list[FieldError]:
    """``ValidateAnnotations``: keys are qualified names once lower-cased, and keys plus values
    may not exceed 256 KiB in all."""
    errs: list[FieldError] = []
    if not isinstance(annotations, dict):
        return errs
    chars = 0
    for key, value in annotations.items():  # the entries _str_map keeps, in its order
        if not isinstance(key, str) or not isinstance(value, str):
            continue
        lowered = key.lower()
        if lowered not in VALID_QUALIFIED_NAMES:  # else remembered as valid
            errs.extend(
                invalid(path, key, msg, "ValidateAnnotations") for msg in is_qualified_name(lowered)
            )
        chars += len(key) + len(value)
    # A character is at most 4 UTF-8 bytes: within the limit / 4 in characters, the bytes need
    # no counting.
    if chars * 4 > TOTAL_ANNOTATION_SIZE_LIMIT_B and _byte_total(annotations) > (
        TOTAL_ANNOTATION_SIZE_LIMIT_B
    ):
        errs.append(
            too_long(
                path,
                f"may not be more than {TOTAL_ANNOTATION_SIZE_LIMIT_B} bytes",
                "ValidateAnnotations",
            )
        )
    return errs


def _group_version(api_version: str) -> tuple[str, str] | None:
    """``schema.ParseGroupVersion``: "v1" is the core group; "a/b" is group a, version b; ""
    and "/" are empty; anything else (two '/' or more) is an error (None)."""
    if not api_version or api_version == "/":
        return "", ""
    parts = api_version.split("/")
    if len(parts) == 1:
        return "", api_version
    if len(parts) == 2:
        return parts[0], parts[1]
    return None


def _owner_json(ref: dict[str, Any]) -> dict[str, Any]:
    """How Go prints a bad ``metav1.OwnerReference`` (its JSON, in field order)."""
    out: dict[str, Any] = {
        "apiVersion": str_of(ref.get("apiVersion")),
        "kind": str_of(ref.get("kind")),
        "name": str_of(ref.get("name")),
        "uid": str_of(ref.get("uid")),
    }
    for key in ("controller", "blockOwnerDeletion"):
        if isinstance(ref.get(key), bool):
            out[key] = ref[key]
    return out


def _validate_owner_reference(
    ref: dict[str, Any], path: Path, group: str, version: str
) -> list[FieldError]:
    """``validateOwnerReference`` (the reference's group and version parsed) as 1.34 to 1.36
    have it: at the list's path, each empty field Invalid, an apiVersion that does not parse
    read as no version."""
    origin = "validateOwnerReference"
    errs: list[FieldError] = []
    kind = str_of(ref.get("kind"))
    if not version:
        api_version = str_of(ref.get("apiVersion"))
        errs.append(
            invalid((*path, "apiVersion"), api_version, "version must not be empty", origin)
        )
    if not kind:
        errs.append(invalid((*path, "kind"), kind, "must not be empty", origin))
    for key in ("name", "uid"):
        if not str_of(ref.get(key)):
            errs.append(invalid((*path, key), "", "must not be empty", origin))
    return errs


def _validate_owner_reference_137(
    ref: dict[str, Any], path: Path, parsed: tuple[str, str] | None
) -> list[FieldError]:
    """``validateOwnerReference`` from 1.37 (``path`` is the reference's own, indexed): an
    empty field is Required; an apiVersion that does not parse or has no version is Invalid."""
    origin = "validateOwnerReference"
    errs: list[FieldError] = []
    api_version = str_of(ref.get("apiVersion"))
    if not api_version:
        errs.append(required((*path, "apiVersion"), "must not be empty", origin))
    elif parsed is None or not parsed[1]:
        detail = "must be <group>/<version> or <version>"
        errs.append(invalid((*path, "apiVersion"), api_version, detail, origin))
    for key in ("kind", "name", "uid"):
        if not str_of(ref.get(key)):
            errs.append(required((*path, key), "must not be empty", origin))
    return errs


def validate_owner_references(refs: Any, path: Path) -> list[FieldError]:
    """``ValidateOwnerReferences``: each reference complete, no Event owner, one controller
    (from 1.37 a reference's errors at its index, ``validateOwnerReference``'s new wording)."""
    if not isinstance(refs, list):
        return []
    origin = "ValidateOwnerReferences"
    errs: list[FieldError] = []
    first_controller = ""
    indexed: bool | None = None  # whether the minor followed is 1.37 or newer, once asked
    for index, ref in enumerate(refs):
        if not isinstance(ref, dict):
            continue
        kind = str_of(ref.get("kind"))
        name = str_of(ref.get("name"))
        parsed = _group_version(str_of(ref.get("apiVersion")))
        group, version = parsed or ("", "")
        if version and kind and name and str_of(ref.get("uid")) and kind not in _BANNED_OWNER_KINDS:
            # the common case: every check below passes, bar a second controller's
            if ref.get("controller") is not True:
                continue
            if not first_controller:
                first_controller = f"{kind}/{name}"
                continue
        if indexed is None:
            indexed = release.at_least("1.37")
        at = (*path, index) if indexed else path
        if indexed:
            errs.extend(_validate_owner_reference_137(ref, at, parsed))
        else:
            errs.extend(_validate_owner_reference(ref, at, group, version))
        if (group, version, kind) in _BANNED_OWNERS:
            gvk = f"{group}/{version}, Kind={kind}"
            errs.append(
                invalid(at, _owner_json(ref), f"{gvk} is disallowed from being an owner", origin)
            )
        if ref.get("controller") is True:
            current = f"{kind}/{name}"
            if first_controller:
                detail = (
                    'Only one reference can have Controller set to true. Found "true" in '
                    f"references for {first_controller} and {current}"
                )
                value = [_owner_json(r) for r in refs if isinstance(r, dict)]
                errs.append(invalid(path, value, detail, origin))
            else:
                first_controller = current
    return errs


def validate_finalizers(finalizers: Any, path: Path) -> list[FieldError]:
    """``ValidateFinalizers``: qualified names, and not both orphan and foregroundDeletion."""
    if not isinstance(finalizers, list):
        return []
    names = [f for f in finalizers if isinstance(f, str)]
    errs: list[FieldError] = []
    for name in names:
        errs.extend(
            invalid(path, name, msg, "ValidateFinalizerName") for msg in is_qualified_name(name)
        )
    if FINALIZER_ORPHAN_DEPENDENTS in names and FINALIZER_DELETE_DEPENDENTS in names:
        detail = (
            f"finalizer {FINALIZER_ORPHAN_DEPENDENTS} and {FINALIZER_DELETE_DEPENDENTS} "
            "cannot be both set"
        )
        errs.append(invalid(path, names, detail, "ValidateFinalizers"))
    return errs


def validate_kube_finalizer_names(finalizers: Any, path: Path) -> list[FieldError]:
    """Core validation's ``validateKubeFinalizerName`` for each finalizer: a name without '/'
    must be one of the standard finalizers. (For custom resources the server only warns.)"""
    if not isinstance(finalizers, list):
        return []
    errs: list[FieldError] = []
    for index, name in enumerate(finalizers):
        if isinstance(name, str) and "/" not in name and name not in STANDARD_FINALIZERS:
            errs.append(
                invalid(
                    (*path, index),
                    name,
                    "name is neither a standard finalizer name nor is it fully qualified",
                    "validateKubeFinalizerName",
                )
            )
    return errs


def _go_rune_u(ch: str) -> str:
    """Go's ``%#U``: ``U+0009`` followed by the quoted character when it is printable."""
    code = f"U+{ord(ch):04X}"
    return f"{code} '{ch}'" if ch.isprintable() else code


_MANAGED_FIELDS_OPERATIONS = ("Apply", "Update")


def validate_managed_fields(entries: Any, path: Path) -> list[FieldError]:
    """``metav1validation.ValidateManagedFields`` (from 1.37 an empty operation is Required, an
    unknown one NotSupported)."""
    if not isinstance(entries, list):
        return []
    origin = "ValidateManagedFields"
    errs: list[FieldError] = []
    for index, entry in enumerate(entries):
        if not isinstance(entry, dict):
            continue
        at = (*path, index)
        operation = str_of(entry.get("operation"))
        if operation not in _MANAGED_FIELDS_OPERATIONS:
            if not release.at_least("1.37"):
                errs.append(
                    invalid(
                        (*at, "operation"), Named(operation), "must be `Apply` or `Update`", origin
                    )
                )
            elif not operation:
                errs.append(required((*at, "operation"), "must not be empty", origin))
            else:
                errs.append(
                    not_supported(
                        (*at, "operation"), Named(operation), _MANAGED_FIELDS_OPERATIONS, origin
                    )
                )
        fields_type = str_of(entry.get("fieldsType"))
        if fields_type and fields_type != "FieldsV1":
            errs.append(invalid((*at, "fieldsType"), fields_type, "must be `FieldsV1`", origin))
        manager = str_of(entry.get("manager"))
        if byte_len(manager) > FIELD_MANAGER_MAX_LENGTH:
            errs.append(
                too_long(
                    (*at, "manager"),
                    f"may not be more than {FIELD_MANAGER_MAX_LENGTH} bytes",
                    "ValidateFieldManager",
                )
            )
        position = 0
        for ch in manager:
            if not ch.isprintable() and ch != " ":
                errs.append(
                    invalid(
                        (*at, "manager"),
                        manager,
                        f"invalid character {_go_rune_u(ch)} (at position {position})",
                        "ValidateFieldManager",
                    )
                )
            position += byte_len(ch)
        if byte_len(str_of(entry.get("subresource"))) > MAX_SUBRESOURCE_NAME_LENGTH:
            errs.append(
                too_long(
                    (*at, "subresource"),
                    f"may not be more than {MAX_SUBRESOURCE_NAME_LENGTH} bytes",
                    origin,
                )
            )
    return errs


def validate_object_meta(
    meta: Any,
    path: Path,
    *,
    name_rule: NameRule,
    namespaced: bool = True,
    kube_finalizers: bool = False,
) -> list[FieldError]:
    """``ValidateObjectMetaAccessor`` for a create (name generation already done, as the server
    does it before validating): the errors in Go's order. ``kube_finalizers`` adds what core
    validation's ``ValidateObjectMeta`` adds for the built-in types (pods): the
    ``validateKubeFinalizerName`` errors; custom resources (a TFJob) only get warnings for
    those, so it is off by default."""
    if not isinstance(meta, dict):
        meta = {}
    origin = "ValidateObjectMetaAccessor"
    errs: list[FieldError] = []
    generate_name = str_of(meta.get("generateName"))
    if generate_name:
        errs.extend(
            invalid((*path, "generateName"), generate_name, msg, origin)
            for msg in name_rule(generate_name, True)
        )
    name = str_of(meta.get("name"))
    if not name:
        errs.append(required((*path, "name"), "name or generateName is required", origin))
    elif msgs := name_rule(name, False):
        errs.extend(invalid((*path, "name"), name, msg, origin) for msg in msgs)
    namespace = str_of(meta.get("namespace"))
    if namespaced:
        if not namespace:
            errs.append(required((*path, "namespace"), origin=origin))
        elif msgs := validate_namespace_name(namespace, False):
            errs.extend(invalid((*path, "namespace"), namespace, msg, origin) for msg in msgs)
    elif namespace:
        errs.append(forbidden((*path, "namespace"), "not allowed on this type", origin))
    generation = meta.get("generation")
    if isinstance(generation, int) and generation < 0 and not isinstance(generation, bool):
        errs.extend(validate_nonnegative_field(generation, (*path, "generation")))
    # Each check below finds nothing in an absent or empty field (nor in a false one, of the
    # wrong type, which it skips): those are not looked at, nor their paths built.
    if labels := meta.get("labels"):
        errs.extend(validate_labels(labels, (*path, "labels")))
    if annotations := meta.get("annotations"):
        errs.extend(validate_annotations(annotations, (*path, "annotations")))
    if refs := meta.get("ownerReferences"):
        errs.extend(validate_owner_references(refs, (*path, "ownerReferences")))
    finalizers = meta.get("finalizers")
    if finalizers:
        errs.extend(validate_finalizers(finalizers, (*path, "finalizers")))
    if managed := meta.get("managedFields"):
        errs.extend(validate_managed_fields(managed, (*path, "managedFields")))
    if kube_finalizers and finalizers:
        errs.extend(validate_kube_finalizer_names(finalizers, (*path, "finalizers")))
    return errs
