"""Pod volumes, volume mounts and volume devices, as a pod create checks them: the entry points.

Ports of ``ValidateVolumes`` (every volume source's checks), ``ValidateVolumeMounts`` and
``ValidateVolumeDevices`` of ``k8s.io/kubernetes/pkg/apis/core/validation``, as the Kubernetes
minor followed (:mod:`tfjob_kit.podcheck.release`) has them with its default feature gates, and
of the defaults the API server applies to volumes before it validates them
(``pkg/apis/core/v1/defaults.go`` and ``zz_generated.defaults.go``), plus what the pod strategy
drops for disabled gates (``dropDisabledPodFields``).

The Go code's quirks are kept on purpose, as the server prints them: some paths miss an index
(``volumeMounts.subPath``, ``downwardAPI.path``), some are misspelt (``downwarAPI``,
``persistentDisk`` for gcePersistentDisk's checks). Values of the wrong JSON type are skipped:
the schema check reports them.

What differs by minor:

* image volumes: 1.34 drops them with their mounts before validation (ImageVolume off); from
  1.35 they are kept, their pull policy defaulted, and checked (a reference is required);
* clusterTrustBundle and podCertificate projections: dropped up to 1.36, kept and checked from
  1.37 (ClusterTrustBundleProjection and PodCertificateRequest on);
* an empty CSI driver name is only "Required" from 1.35 (1.34 also runs the name's format check
  on it);
* from 1.37 the server drops an error whose text an earlier one has (``field.as_listed``, which
  ``pod.validate_pod`` applies to the whole pod): two bad quobyte registries, say, say so once.

In every minor: gitRepo volumes pass the API (the GitRepoVolumeDriver gate is off, but only the
kubelet refuses them; the server merely warns). As every source field nil is defaulted to an
emptyDir, "must specify a volume type" is not reached from JSON either.
"""

from __future__ import annotations

from typing import Any

from tfjob_kit.quantity import parse as parse_value

from . import names
from .field import (
    FieldError,
    Path,
    duplicate,
    forbidden,
    invalid,
    required,
)
from .fields import (
    field_opt_str,
    field_str,
    opt_dict,
)
from .volume_defaults import SERVICE_ACCOUNT_TOKEN_PATH, mount_service_account_token, set_defaults
from .volume_mounts import validate_volume_mounts
from .volume_sources import SOURCES

__all__ = [
    "SERVICE_ACCOUNT_TOKEN_PATH",
    "mount_service_account_token",
    "set_defaults",
    "validate_volume_mounts",
    "validate_volumes",
]

MORE_THAN_ONE = "may not specify more than 1 volume type"


_SOURCE_INDEX = {entry[0]: index for index, entry in enumerate(SOURCES)}
_SOURCE_CHECKS = {
    key: (more_name, check, check_name) for key, more_name, check, check_name in SOURCES
}


def _volume_source(
    volume: dict[str, Any], path: Path, name: str, pod_name: str | None
) -> list[FieldError]:
    """``validateVolumeSource``."""
    origin = "validateVolumeSource"
    errs: list[FieldError] = []
    count = 0
    empty_dir = volume.get("emptyDir")
    if empty_dir is not None:
        count += 1
        if isinstance(empty_dir, dict) and empty_dir.get("sizeLimit") is not None:
            limit = parse_value(empty_dir["sizeLimit"])
            if limit is not None and limit.numerator < 0:  # a Fraction's sign
                errs.append(
                    forbidden(
                        (*path, "emptyDir", "sizeLimit"),
                        "SizeLimit field must be a valid resource quantity",
                        origin,
                    )
                )
    # The sources the volume has, in SOURCES' order (not a lookup of each of the 30 sources).
    present = []
    for key in volume:
        if key in _SOURCE_INDEX:
            present.append(key)
    if len(present) > 1:
        present.sort(key=_SOURCE_INDEX.__getitem__)
    for key in present:
        forbidden_name, check, check_name = _SOURCE_CHECKS[key]
        src = volume[key]
        if src is None:
            continue
        if count > 0:
            errs.append(forbidden((*path, forbidden_name), MORE_THAN_ONE, origin))
        else:
            count += 1
            if isinstance(src, dict):
                errs.extend(check(src, (*path, check_name)))
                if key == "ephemeral" and pod_name and name:
                    pvc_name = f"{pod_name}-{name}"
                    for msg in names.name_is_dns_subdomain(pvc_name, False):
                        errs.append(
                            invalid((*path, "name"), name, f'PVC name "{pvc_name}": {msg}', origin)
                        )
        if (
            key == "iscsi"
            and isinstance(src, dict)
            and field_opt_str(src, "initiatorName") is not None
        ):
            portal = field_str(src, "targetPortal") or ""
            if names.byte_len(f"{name}:{portal}") > 64:
                detail = (
                    "Total length of <volume name>:<iscsi.targetPortal> must be under 64 "
                    "characters if iscsi.initiatorName is specified."
                )
                errs.append(invalid((*path, "name"), name, detail, origin))
    if count == 0:
        errs.append(required(path, "must specify a volume type", origin))
    return errs


def validate_volumes(
    spec: dict[str, Any], path: Path, *, pod_name: str | None = None
) -> tuple[dict[str, dict[str, Any]], list[FieldError]]:
    """``ValidateVolumes``: the valid volumes by name, and the errors.

    ``path`` is the pod spec's (``("spec",)``); ``pod_name`` is the pod's name, which the checks
    of generic ephemeral volumes need (the names of the claims they make)."""
    volumes = spec.get("volumes")
    valid: dict[str, dict[str, Any]] = {}
    if not isinstance(volumes, list):
        return valid, []
    vol_path = (*path, "volumes")
    created: set[str] = set()
    if pod_name:
        for volume in volumes:
            if isinstance(volume, dict) and isinstance(volume.get("ephemeral"), dict):
                created.add(f"{pod_name}-{field_str(volume, 'name') or ''}")
    errs: list[FieldError] = []
    valid_labels = names.VALID_DNS1123_LABELS
    for i, volume in enumerate(volumes):
        if not isinstance(volume, dict):
            continue
        name = volume.get(
            "name"
        )  # field_str inline: "" when absent or null, skipped when no string
        if not isinstance(name, str):
            if name is not None:
                continue
            name = ""
        idx_path = (*vol_path, i)
        found = _volume_source(volume, idx_path, name, pod_name)
        if name == "":
            found.append(required((*idx_path, "name"), origin="ValidateVolumes"))
        elif name not in valid_labels:  # else remembered as a valid label
            found.extend(names.validate_dns1123_label(name, (*idx_path, "name")))
        if name in valid:
            found.append(duplicate((*idx_path, "name"), name, "ValidateVolumes"))
        if found:
            errs.extend(found)
        else:
            valid[name] = volume
        if not created:
            continue
        claim = opt_dict(volume.get("persistentVolumeClaim"))
        if claim is not None and field_str(claim, "claimName") in created:
            errs.append(
                invalid(
                    (*idx_path, "persistentVolumeClaim", "claimName"),
                    claim.get("claimName"),
                    "must not reference a PVC that gets created for an ephemeral volume",
                    "ValidateVolumes",
                )
            )
    return valid, errs
