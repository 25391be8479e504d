"""Volume mounts and volume devices of a container, as the API server checks them
(``ValidateVolumeMounts``, ``ValidateVolumeDevices``)."""

from __future__ import annotations

from typing import Any

from .field import (
    FieldError,
    Named,
    Path,
    forbidden,
    invalid,
    not_found,
    not_supported,
    required,
)
from .fields import (
    as_list,
    field_opt_str,
    field_str,
    opt_dict,
)
from .volume_paths import validate_local_descending_path

_MOUNT_PROPAGATIONS = ("Bidirectional", "HostToContainer", "None")

_RECURSIVE_READ_ONLY = ("Disabled", "Enabled", "IfPossible")


def _path_map(container: dict[str, Any], key: str, path_key: str) -> dict[str, str]:
    """Go's name -> path map of the mounts or devices (``GetVolumeMountMap``, ...DeviceMap)."""
    by_name: dict[str, str] = {}
    entries = container.get(key)
    if not entries or not isinstance(entries, list):
        return by_name
    for entry in entries:
        if isinstance(entry, dict):
            name, target = field_str(entry, "name"), field_str(entry, path_key)
            if name is not None and target is not None:
                by_name[name] = target
    return by_name


def validate_volume_mounts(
    container: dict[str, Any], volumes: dict[str, dict[str, Any]], path: Path
) -> list[FieldError]:
    """``ValidateVolumeMounts`` then ``ValidateVolumeDevices`` of one container; ``path`` is the
    container's (``("spec", "containers", 0)``), ``volumes`` what :func:`validate_volumes`
    returned."""
    devices = container.get("volumeDevices")
    if not devices or not isinstance(devices, list):  # no devices: _volume_devices finds nothing
        return _volume_mounts(container, {}, volumes, path)
    device_map = _path_map(container, "volumeDevices", "devicePath")
    errs = _volume_mounts(container, device_map, volumes, path)
    mount_map = _path_map(container, "volumeMounts", "mountPath")
    errs.extend(_volume_devices(container, mount_map, volumes, (*path, "volumeDevices")))
    return errs


def _privileged(container: dict[str, Any]) -> bool:
    security = opt_dict(container.get("securityContext")) or {}
    return security.get("privileged") is True


def _volume_mounts(
    container: dict[str, Any],
    device_map: dict[str, str],
    volumes: dict[str, dict[str, Any]],
    container_path: Path,
) -> list[FieldError]:
    errs: list[FieldError] = []
    mounts = container.get("volumeMounts")
    if not mounts or not isinstance(mounts, list):
        return errs
    path = (*container_path, "volumeMounts")
    mount_points: set[str] = set()
    device_paths = set(device_map.values())
    for i, mount in enumerate(mounts):
        if not isinstance(mount, dict):
            continue
        name = mount.get("name")
        target = mount.get("mountPath")
        sub_path = mount.get("subPath")
        if (
            isinstance(name, str)
            and name
            and name in volumes
            and name not in device_map
            and isinstance(target, str)
            and target
            and target not in mount_points
            and target not in device_paths
            and (
                sub_path is None
                or (isinstance(sub_path, str) and ".." not in sub_path and sub_path[:1] != "/")
            )
            and mount.get("subPathExpr") is None
            and mount.get("mountPropagation") is None
            and mount.get("recursiveReadOnly") is None
        ):
            # the common case: every check of _volume_mount passes (a subPath with no '..' at
            # all, so none between slashes, that does not start with '/' is a local
            # descending path)
            mount_points.add(target)
            continue
        errs.extend(
            _volume_mount(
                container, mount, device_map, device_paths, volumes, mount_points, path, i
            )
        )
    return errs


def _volume_mount(
    container: dict[str, Any],
    mount: dict[str, Any],
    device_map: dict[str, str],
    device_paths: set[str],
    volumes: dict[str, dict[str, Any]],
    mount_points: set[str],
    path: Path,
    i: int,
) -> list[FieldError]:
    """The checks of one mount, ``i`` of those at ``path``; its path joins ``mount_points``."""
    origin = "ValidateVolumeMounts"
    errs: list[FieldError] = []
    idx_path = (*path, i)
    name = field_str(mount, "name")
    target = field_str(mount, "mountPath")
    if name == "":
        errs.append(required((*idx_path, "name"), origin=origin))
    if name is not None and name not in volumes:
        errs.append(not_found((*idx_path, "name"), name, origin))
    if target == "":
        errs.append(required((*idx_path, "mountPath"), origin=origin))
    if target is not None:
        if target in mount_points:
            errs.append(invalid((*idx_path, "mountPath"), target, "must be unique", origin))
        mount_points.add(target)
    if name is not None and name in device_map:
        errs.append(
            invalid((*idx_path, "name"), name, "must not already exist in volumeDevices", origin)
        )
    if target is not None and target in device_paths:
        errs.append(
            invalid(
                (*idx_path, "mountPath"),
                target,
                "must not already exist as a path in volumeDevices",
                origin,
            )
        )
    sub_path = field_str(mount, "subPath")
    if sub_path:
        errs.extend(validate_local_descending_path(sub_path, (*path, "subPath")))
    sub_path_expr = field_str(mount, "subPathExpr")
    if sub_path_expr:
        if sub_path:
            errs.append(
                invalid(
                    (*idx_path, "subPathExpr"),
                    sub_path_expr,
                    "subPathExpr and subPath are mutually exclusive",
                    origin,
                )
            )
        errs.extend(validate_local_descending_path(sub_path_expr, (*path, "subPathExpr")))
    propagation = field_opt_str(mount, "mountPropagation")
    if propagation is not None:
        prop_path = (*path, "mountPropagation")
        if propagation not in _MOUNT_PROPAGATIONS:
            errs.append(
                not_supported(
                    prop_path,
                    Named(propagation),
                    _MOUNT_PROPAGATIONS,
                    "validateMountPropagation",
                )
            )
        if propagation == "Bidirectional" and not _privileged(container):
            errs.append(
                forbidden(
                    prop_path,
                    "Bidirectional mount propagation is available only to privileged containers",
                    "validateMountPropagation",
                )
            )
    errs.extend(_recursive_read_only(mount, propagation, (*path, "recursiveReadOnly")))
    return errs


def _recursive_read_only(
    mount: dict[str, Any], propagation: str | None, path: Path
) -> list[FieldError]:
    """``validateMountRecursiveReadOnly``."""
    origin = "validateMountRecursiveReadOnly"
    mode = field_opt_str(mount, "recursiveReadOnly")
    if mode is None or mode == "Disabled":
        return []
    if mode not in _RECURSIVE_READ_ONLY:
        return [not_supported(path, Named(mode), _RECURSIVE_READ_ONLY, origin)]
    errs = []
    if mount.get("readOnly") is not True:
        errs.append(forbidden(path, "may only be specified when readOnly is true", origin))
    if propagation is not None and propagation != "None":
        detail = "may only be specified when mountPropagation is None or not specified"
        errs.append(forbidden(path, detail, origin))
    return errs


def _volume_devices(
    container: dict[str, Any],
    mount_map: dict[str, str],
    volumes: dict[str, dict[str, Any]],
    path: Path,
) -> list[FieldError]:
    origin = "ValidateVolumeDevices"
    errs: list[FieldError] = []
    device_paths: set[str] = set()
    device_names: set[str] = set()
    mount_paths = set(mount_map.values())
    for i, device in enumerate(as_list(container.get("volumeDevices"))):
        if not isinstance(device, dict):
            continue
        idx_path = (*path, i)
        name = field_str(device, "name")
        target = field_str(device, "devicePath")
        if name is None or target is None:
            continue
        volume = volumes.get(name)
        is_pvc = volume is not None and (
            volume.get("persistentVolumeClaim") is not None or volume.get("ephemeral") is not None
        )
        if name == "":
            errs.append(required((*idx_path, "name"), origin=origin))
        if name in device_names:
            errs.append(invalid((*idx_path, "name"), name, "must be unique", origin))
        if volume is not None and not is_pvc:
            detail = (
                "can only use volume source type of PersistentVolumeClaim or Ephemeral for "
                "block mode"
            )
            errs.append(invalid((*idx_path, "name"), name, detail, origin))
        if volume is None:
            errs.append(not_found((*idx_path, "name"), name, origin))
        if target == "":
            errs.append(required((*idx_path, "devicePath"), origin=origin))
        if target in device_paths:
            errs.append(invalid((*idx_path, "devicePath"), target, "must be unique", origin))
        if target and ".." in target.split("/"):
            errs.append(
                invalid(
                    (*idx_path, "devicePath"), target, "can not contain backsteps ('..')", origin
                )
            )
        else:
            device_paths.add(target)
        if name in mount_map:
            errs.append(
                invalid((*idx_path, "name"), name, "must not already exist in volumeMounts", origin)
            )
        if target in mount_paths:
            errs.append(
                invalid(
                    (*idx_path, "devicePath"),
                    target,
                    "must not already exist as a path in volumeMounts",
                    origin,
                )
            )
        if name:
            device_names.add(name)
    return errs
