"""What the API server sets on a pod's volumes before it validates them: each source's defaults
(``SetDefaults_*`` of ``pkg/apis/core/v1/defaults.go``, every source nil meaning an emptyDir),
what ``dropDisabledPodFields`` drops for the gates off at the minor followed
(:mod:`tfjob_kit.podcheck.release`: image volumes up to 1.34, clusterTrustBundle and
podCertificate projections up to 1.36), and the ServiceAccount admission plugin's token volume
and mounts."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from . import release
from .fields import (
    as_list,
    field_str,
    opt_dict,
)

# The VolumeSource fields (JSON names): all nil means an emptyDir (SetDefaults_Volume).
SOURCE_KEYS = (
    "hostPath",
    "emptyDir",
    "gcePersistentDisk",
    "awsElasticBlockStore",
    "gitRepo",
    "secret",
    "nfs",
    "iscsi",
    "glusterfs",
    "persistentVolumeClaim",
    "rbd",
    "flexVolume",
    "cinder",
    "cephfs",
    "flocker",
    "downwardAPI",
    "fc",
    "azureFile",
    "configMap",
    "vsphereVolume",
    "quobyte",
    "azureDisk",
    "photonPersistentDisk",
    "projected",
    "portworxVolume",
    "scaleIO",
    "storageos",
    "csi",
    "ephemeral",
    "image",
)


def _default_field_ref(item: Any) -> None:
    item = opt_dict(item)
    if item is not None:
        ref = opt_dict(item.get("fieldRef"))
        if ref is not None and ref.get("apiVersion") is None:
            ref["apiVersion"] = "v1"  # SetDefaults_ObjectFieldSelector


def _set_default(obj: dict[str, Any], key: str, value: Any) -> None:
    if obj.get(key) is None:
        obj[key] = value


_SOURCE_KEY_SET = frozenset(SOURCE_KEYS)


def _default_host_path(src: dict[str, Any]) -> None:
    _set_default(src, "type", "")


def _default_mode(src: dict[str, Any]) -> None:
    _set_default(src, "defaultMode", 0o644)


def _default_downward_api(src: dict[str, Any]) -> None:
    _set_default(src, "defaultMode", 0o644)
    for item in as_list(src.get("items")):
        _default_field_ref(item)


def _default_projected(src: dict[str, Any]) -> None:
    _set_default(src, "defaultMode", 0o644)
    for source in as_list(src.get("sources")):
        if (source := opt_dict(source)) is None:
            continue
        if (dapi := opt_dict(source.get("downwardAPI"))) is not None:
            for item in as_list(dapi.get("items")):
                _default_field_ref(item)
        if (token := opt_dict(source.get("serviceAccountToken"))) is not None:
            _set_default(token, "expirationSeconds", 3600)
        # dropDisabledClusterTrustBundleProjection, dropDisabledPodCertificateProjection: both
        # gates are on from 1.37
        if "clusterTrustBundle" in source and not release.gate("ClusterTrustBundleProjection"):
            del source["clusterTrustBundle"]
        if "podCertificate" in source and not release.gate("PodCertificateRequest"):
            del source["podCertificate"]


def _default_iscsi(src: dict[str, Any]) -> None:
    if not src.get("iscsiInterface"):
        src["iscsiInterface"] = "default"


def _default_rbd(src: dict[str, Any]) -> None:
    for key, value in (("pool", "rbd"), ("user", "admin"), ("keyring", "/etc/ceph/keyring")):
        if not src.get(key):
            src[key] = value


def _default_azure_disk(src: dict[str, Any]) -> None:
    _set_default(src, "cachingMode", "ReadWrite")
    _set_default(src, "fsType", "ext4")
    _set_default(src, "readOnly", False)
    _set_default(src, "kind", "Shared")


def _default_scale_io(src: dict[str, Any]) -> None:
    for key, value in (("storageMode", "ThinProvisioned"), ("fsType", "xfs")):
        if not src.get(key):
            src[key] = value


def _default_ephemeral(src: dict[str, Any]) -> None:
    template = opt_dict(src.get("volumeClaimTemplate"))
    spec = opt_dict(template.get("spec")) if template is not None else None
    if spec is not None:
        _set_default(spec, "volumeMode", "Filesystem")


# The defaults of each source that has some (the sources' SetDefaults_*), in the order they are
# applied: two sources of one (invalid) volume may be one aliased YAML map, and azureDisk and
# scaleIO both default fsType. Each changes only its own source's fields otherwise.
_SOURCE_DEFAULTS: dict[str, Callable[[dict[str, Any]], None]] = {
    "hostPath": _default_host_path,
    "secret": _default_mode,
    "configMap": _default_mode,
    "downwardAPI": _default_downward_api,
    "projected": _default_projected,
    "iscsi": _default_iscsi,
    "rbd": _default_rbd,
    "azureDisk": _default_azure_disk,
    "scaleIO": _default_scale_io,
    "ephemeral": _default_ephemeral,
}


def _default_image(src: dict[str, Any]) -> None:
    """``SetDefaults_Volume``'s image pull policy (with the ImageVolume gate on): Always for a
    reference whose tag is "latest" (no tag, no digest), else IfNotPresent."""
    if src.get("pullPolicy") in (None, ""):
        # imported here: containers imports the volume modules
        from .containers import image_tag

        reference = src.get("reference")
        tag = image_tag(reference if isinstance(reference, str) else "")
        src["pullPolicy"] = "Always" if tag == "latest" else "IfNotPresent"


def _default_volume(volume: dict[str, Any]) -> None:
    # the sources the volume has (its keys looked at, not the 30 sources; a loop, not a list
    # comprehension: cheaper for a volume's two or three keys)
    present = []
    for key in volume:
        if key in _SOURCE_KEY_SET and volume[key] is not None:
            present.append(key)
    if not present:
        volume["emptyDir"] = {}  # SetDefaults_Volume: every source nil
        return
    # SetDefaults_Volume's, before the sources' defaults
    if (
        "image" in present
        and isinstance(src := volume["image"], dict)
        and release.gate("ImageVolume")
    ):
        _default_image(src)
    if len(present) > 1:  # in _SOURCE_DEFAULTS' order
        present = [key for key in _SOURCE_DEFAULTS if key in present]
    for key in present:
        default = _SOURCE_DEFAULTS.get(key)
        if default is not None and isinstance(src := volume[key], dict):
            default(src)


def set_defaults(spec: dict[str, Any]) -> None:
    """The volume defaults of a pod's spec, in place; then, while the ImageVolume gate is off
    (1.34), image volumes (and the mounts of them) go, as ``dropImageVolumes`` drops them."""
    volumes = spec.get("volumes")
    if not isinstance(volumes, list):
        return
    image_volumes: set[str] = set()
    for volume in volumes:
        if isinstance(volume, dict):
            _default_volume(volume)
            if volume.get("image") is not None:
                name = volume.get("name")
                image_volumes.add(name if isinstance(name, str) else "")
    if not image_volumes or release.gate("ImageVolume"):
        return
    spec["volumes"] = [
        v for v in volumes if not (isinstance(v, dict) and v.get("image") is not None)
    ]
    for key in ("containers", "initContainers", "ephemeralContainers"):
        for container in as_list(spec.get(key)):
            if isinstance(container, dict) and isinstance(container.get("volumeMounts"), list):
                container["volumeMounts"] = [
                    m
                    for m in container["volumeMounts"]
                    if not (isinstance(m, dict) and (field_str(m, "name") in image_volumes))
                ]


SERVICE_ACCOUNT_TOKEN_PATH = "/var/run/secrets/kubernetes.io/serviceaccount"
_TOKEN_VOLUME_PREFIX = "kube-api-access-"
# The server appends 5 random characters (generateName); any valid ones stand in for them.
_TOKEN_VOLUME_NAME = _TOKEN_VOLUME_PREFIX + "xxxxx"


def _token_volume(name: str) -> dict[str, Any]:
    """The projected volume of ``TokenVolumeSource`` (valid as it stands)."""
    return {
        "name": name,
        "projected": {
            "defaultMode": 0o644,
            "sources": [
                {"serviceAccountToken": {"path": "token", "expirationSeconds": 3607}},
                {
                    "configMap": {
                        "name": "kube-root-ca.crt",
                        "items": [{"key": "ca.crt", "path": "ca.crt"}],
                    }
                },
                {
                    "downwardAPI": {
                        "items": [
                            {
                                "path": "namespace",
                                "fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.namespace"},
                            }
                        ]
                    }
                },
            ],
        },
    }


_TOKEN_PROJECTION = _token_volume(_TOKEN_VOLUME_NAME)["projected"]
"""What :func:`_projected` accepts without a look: the token volume's projection, which it
finds valid (tests/unit/test_podcheck_speed.py holds it to that)."""


def is_token_projection(src: dict[str, Any]) -> bool:
    """``src`` is :data:`_TOKEN_PROJECTION`, its two numbers ints (``==`` takes 420.0 or True
    for an int; the checks do not)."""
    return (
        src == _TOKEN_PROJECTION
        and type(src["defaultMode"]) is int
        and type(src["sources"][0]["serviceAccountToken"]["expirationSeconds"]) is int
    )


def _mounts_token_path(mounts: list[Any]) -> bool:
    for mount in mounts:
        if isinstance(mount, dict) and mount.get("mountPath") == SERVICE_ACCOUNT_TOKEN_PATH:
            return True
    return False


def mount_service_account_token(spec: dict[str, Any]) -> None:
    """What the ServiceAccount admission plugin (``mountServiceAccountToken``) adds to a pod
    before it is validated, in place: unless ``automountServiceAccountToken`` is false, every
    init container and container without a mount at the token path gets one, of the first
    volume named ``kube-api-access-*`` or else of a new projected token volume appended to the
    volumes. (The account's own automount setting is not known offline: taken as unset.)"""
    if spec.get("automountServiceAccountToken") is False:
        return
    volumes = spec.get("volumes")
    if volumes is not None and not isinstance(volumes, list):
        return
    token_name = ""
    for volume in volumes or []:
        name = volume.get("name") if isinstance(volume, dict) else None
        if isinstance(name, str) and name.startswith(_TOKEN_VOLUME_PREFIX):
            token_name = name
            break
    has_volume = bool(token_name)
    token_name = token_name or _TOKEN_VOLUME_NAME
    needs_volume = False
    for key in ("initContainers", "containers"):
        for container in as_list(spec.get(key)):
            if not isinstance(container, dict):
                continue
            mounts = container.get("volumeMounts")
            if mounts is not None and not isinstance(mounts, list):
                continue
            if mounts and _mounts_token_path(mounts):
                continue
            entry = {"name": token_name, "readOnly": True, "mountPath": SERVICE_ACCOUNT_TOKEN_PATH}
            container["volumeMounts"] = [*(mounts or []), entry]
            needs_volume = True
    if needs_volume and not has_volume:
        spec["volumes"] = [*(volumes or []), _token_volume(token_name)]
