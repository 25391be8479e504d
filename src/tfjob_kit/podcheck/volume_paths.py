"""Paths inside volumes and mounts, checked as the API server checks them: no backsteps, relative
and descending, not reserved; file modes and key-to-path items (``validatePathNoBacksteps``,
``validateLocalDescendingPath``, ``ValidateLocalNonReservedPath``, ``validateKeyToPath``)."""

from __future__ import annotations

from typing import Any

from .field import (
    FieldError,
    Path,
    invalid,
    required,
)
from .fields import (
    field_int,
    field_str,
    opt_dict,
)

FILE_MODE_ERROR = "must be a number between 0 and 0777 (octal), both inclusive"


def is_abs(path: str) -> bool:
    return path.startswith("/")


def validate_path_no_backsteps(target: str, path: Path) -> list[FieldError]:
    """``validatePathNoBacksteps``."""
    if ".." in target.split("/"):
        return [invalid(path, target, "must not contain '..'", "validatePathNoBacksteps")]
    return []


def validate_local_descending_path(target: str, path: Path) -> list[FieldError]:
    """``validateLocalDescendingPath``."""
    errs = []
    if is_abs(target):
        errs.append(invalid(path, target, "must be a relative path", "validateLocalDescendingPath"))
    errs.extend(validate_path_no_backsteps(target, path))
    return errs


def local_non_reserved_path(target: str, path: Path) -> list[FieldError]:
    """``ValidateLocalNonReservedPath``."""
    errs = validate_local_descending_path(target, path)
    if target.startswith("..") and not target.startswith("../"):
        errs.append(
            invalid(path, target, "must not start with '..'", "ValidateLocalNonReservedPath")
        )
    return errs


def validate_mode(obj: dict[str, Any], key: str, path: Path, origin: str) -> list[FieldError]:
    mode = field_int(obj, key)
    if mode is not None and (mode > 0o777 or mode < 0):
        return [invalid((*path, key), mode, FILE_MODE_ERROR, origin)]
    return []


def key_to_path(item: Any, path: Path) -> list[FieldError]:
    """``validateKeyToPath``."""
    origin = "validateKeyToPath"
    if (kp := opt_dict(item)) is None:
        return []
    errs = []
    if field_str(kp, "key") == "":
        errs.append(required((*path, "key"), origin=origin))
    target = field_str(kp, "path")
    if target == "":
        errs.append(required((*path, "path"), origin=origin))
    if target is not None:
        errs.extend(local_non_reserved_path(target, (*path, "path")))
    errs.extend(validate_mode(kp, "mode", path, origin))
    return errs
