"""Pod volumes, volume mounts and volume devices, as a pod create checks them.

Ports of ``ValidateVolumes`` (every volume source's checks), ``ValidateVolumeMounts`` and
``ValidateVolumeDevices`` of ``k8s.io/kubernetes/pkg/apis/core/validation`` at the pinned
release, with its default feature gates, and of the defaults the API server applies to volumes
before it validates them (``pkg/apis/core/v1/defaults.go`` and ``zz_generated.defaults.go``),
plus what the pod strategy drops for disabled gates (``dropDisabledPodFields``: image volumes,
clusterTrustBundle and podCertificate projections are all off by default in 1.34).

The Go code's quirks are kept on purpose, as the server prints them: some paths miss an index
(``volumeMounts.subPath``, ``downwardAPI.path``), some are misspelt (``downwarAPI``,
``persistentDisk`` for gcePersistentDisk's checks). Values of the wrong JSON type are skipped:
the schema check reports them.

With 1.34's default gates: gitRepo volumes pass the API (the GitRepoVolumeDriver gate is off,
but only the kubelet refuses them; the server merely warns); an image volume is dropped with
its mounts before validation, so its own checks (kept here) are not reached; clusterTrustBundle
and podCertificate projections are dropped too, and are not checked. As every source field nil
is defaulted to an emptyDir, "must specify a volume type" is not reached from JSON either.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from fractions import Fraction
from typing import Any

from tfjob_kit.quantity import parse as parse_quantity

from . import names
from .errors import (
    FieldError,
    Key,
    Named,
    Path,
    duplicate,
    forbidden,
    invalid,
    not_found,
    not_supported,
    required,
    too_long,
)
from .fields import list_of, opt_dict
from .meta import validate_annotations, validate_labels

SourceCheck = Callable[[dict[str, Any], Path], list[FieldError]]

__all__ = [
    "mount_service_account_token",
    "set_defaults",
    "validate_volume_mounts",
    "validate_volumes",
]

FILE_MODE_ERROR = "must be a number between 0 and 0777 (octal), both inclusive"
PD_PARTITION_ERROR = names.inclusive_range_error(1, 255)
MORE_THAN_ONE = "may not specify more than 1 volume type"
NOT_POSITIVE = "must be greater than zero"

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

_HOST_PATH_TYPES = (
    "",
    "BlockDevice",
    "CharDevice",
    "Directory",
    "DirectoryOrCreate",
    "File",
    "FileOrCreate",
    "Socket",
)
_MOUNT_PROPAGATIONS = ("Bidirectional", "HostToContainer", "None")
_RECURSIVE_READ_ONLY = ("Disabled", "Enabled", "IfPossible")
_PULL_POLICIES = ("Always", "IfNotPresent", "Never")
_AZURE_CACHING_MODES = ("None", "ReadOnly", "ReadWrite")
_AZURE_DISK_KINDS = ("Dedicated", "Managed", "Shared")
_ACCESS_MODES = ("ReadOnlyMany", "ReadWriteMany", "ReadWriteOnce", "ReadWriteOncePod")
_VOLUME_MODES = ("Block", "Filesystem")

# Go's regexp: [[:alnum:]] is ASCII, \d is ASCII, \s is [\t\n\f\r ], $ is the end of the text.
# The iqn expression is not anchored at its start (MatchString finds it anywhere).
_ISCSI_IQN = re.compile(r"iqn\.[0-9]{4}-[0-9]{2}\.([A-Za-z0-9\-.]+)(:[^,;*&$|\t\n\f\r ]+)\Z")
_ISCSI_EUI = re.compile(r"eui[^\n][A-Za-z0-9]{16}\Z")
_ISCSI_NAA = re.compile(r"naa[^\n][A-Za-z0-9]{32}\Z")

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


# --- small readers: Go's zero values for absent fields, None for a value of the wrong type ---


def _str(obj: dict[str, Any], key: str) -> str | None:
    """A string field: "" when absent or null (Go's zero), None when not a string."""
    value = obj.get(key)
    if value is None:
        return ""
    return value if isinstance(value, str) else None


def _opt_str(obj: dict[str, Any], key: str) -> str | None:
    """A *string field: None when absent, null or not a string."""
    value = obj.get(key)
    return value if isinstance(value, str) else None


def _int(obj: dict[str, Any], key: str) -> int | None:
    """An integer field: None when absent, null or not an integer."""
    value = obj.get(key)
    if isinstance(value, bool) or not isinstance(value, int):
        if isinstance(value, float) and value.is_integer():
            return int(value)
        return None
    return value


def _bool(obj: dict[str, Any], key: str) -> bool:
    return obj.get(key) is True


def _is_abs(path: str) -> bool:
    return path.startswith("/")


# --- quantities as resource.Quantity.String prints them ---

_SUFFIX_KIND = re.compile(r"^[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?P<suffix>.*)$")
_DECIMAL_SUFFIXES = {-9: "n", -6: "u", -3: "m", 0: "", 3: "k", 6: "M", 9: "G", 12: "T", 15: "P"}
_DECIMAL_SUFFIXES[18] = "E"
_BINARY_SUFFIXES = {0: "", 1: "Ki", 2: "Mi", 3: "Gi", 4: "Ti", 5: "Pi", 6: "Ei"}


def _quantity_format(text: Any) -> str:
    """The format a quantity keeps: "binary", "exponent" or "decimal"."""
    if not isinstance(text, str):
        return "decimal"
    match = _SUFFIX_KIND.match(text.strip())
    suffix = match["suffix"] if match else ""
    if suffix.endswith("i"):
        return "binary"
    if suffix[:1] in ("e", "E") and len(suffix) > 1:
        return "exponent"
    return "decimal"


def _round_up(value: Fraction, scale: int) -> Fraction:
    """Quantity's rounding to 10**scale, away from zero (the parser keeps nanos)."""
    unit = Fraction(10) ** scale
    units = value / unit
    whole = (
        -((-units.numerator) // units.denominator)
        if value > 0
        else units.numerator // (units.denominator)
    )
    return whole * unit


def quantity_string(text: Any, value: Fraction | None = None) -> str:
    """``Quantity.String``: the canonical form of a quantity (value and format)."""
    if value is None:
        value = parse_quantity(text)
    if value is None:
        return str(text)
    value = _round_up(value, -9) if value.denominator != 1 else value
    fmt = _quantity_format(text)
    if fmt == "binary":
        if -1024 < value < 1024 or value.denominator != 1:
            fmt = "decimal"
        else:
            number, exponent = int(value), 0
            while exponent < 6 and number % 1024 == 0 and number != 0:
                number //= 1024
                exponent += 1
            return f"{number}{_BINARY_SUFFIXES[exponent]}"
    # decimal: an integer mantissa and an exponent that is a multiple of 3
    if value == 0:
        return "0"
    exponent = 0
    mantissa = value
    while mantissa.denominator != 1:
        mantissa *= 10
        exponent -= 1
    number = int(mantissa)
    while number % 10 == 0:
        number //= 10
        exponent += 1
    shift = exponent % 3
    number *= 10**shift
    exponent -= shift
    if fmt == "exponent":
        return str(number) if exponent == 0 else f"{number}e{exponent}"
    while exponent > 18:
        number *= 1000
        exponent -= 3
    return f"{number}{_DECIMAL_SUFFIXES[exponent]}"


# --- defaults ---


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
    for item in list_of(src.get("items")):
        _default_field_ref(item)


def _default_projected(src: dict[str, Any]) -> None:
    _set_default(src, "defaultMode", 0o644)
    for source in list_of(src.get("sources")):
        if (source := opt_dict(source)) is None:
            continue
        if (dapi := opt_dict(source.get("downwardAPI"))) is not None:
            for item in list_of(dapi.get("items")):
                _default_field_ref(item)
        if (token := opt_dict(source.get("serviceAccountToken"))) is not None:
            _set_default(token, "expirationSeconds", 3600)
        # ClusterTrustBundleProjection and PodCertificateRequest are off: dropped
        source.pop("clusterTrustBundle", None)
        source.pop("podCertificate", None)


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
    if len(present) > 1:  # in _SOURCE_DEFAULTS' order
        present = [key for key in _SOURCE_DEFAULTS if key in present]
    for key in present:
        default = _SOURCE_DEFAULTS.get(key)
        if default is not None and isinstance(src := volume[key], dict):
            default(src)


def set_defaults(spec: dict[str, Any]) -> None:
    """The volume defaults of a pod's spec, in place; then image volumes (and the mounts of
    them) go, as ``dropImageVolumes`` drops them while the ImageVolume gate is off."""
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
    if not image_volumes:
        return
    spec["volumes"] = [
        v for v in volumes if not (isinstance(v, dict) and v.get("image") is not None)
    ]
    for key in ("containers", "initContainers", "ephemeralContainers"):
        for container in list_of(spec.get(key)):
            if isinstance(container, dict) and isinstance(container.get("volumeMounts"), list):
                container["volumeMounts"] = [
                    m
                    for m in container["volumeMounts"]
                    if not (isinstance(m, dict) and (_str(m, "name") in image_volumes))
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


def _is_token_projection(src: dict[str, Any]) -> bool:
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
        for container in list_of(spec.get(key)):
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


# --- shared path checks ---


def validate_path_no_backsteps(target: str, path: Path) -> list[FieldError]:
    """``validatePathNoBacksteps``."""
    if ".." in target.split("/"):
        return [invalid(path, target, "must not contain '..'", "validatePathNoBacksteps")]
    return []


def validate_local_descending_path(target: str, path: Path) -> list[FieldError]:
    """``validateLocalDescendingPath``."""
    errs = []
    if _is_abs(target):
        errs.append(invalid(path, target, "must be a relative path", "validateLocalDescendingPath"))
    errs.extend(validate_path_no_backsteps(target, path))
    return errs


def _local_non_reserved_path(target: str, path: Path) -> list[FieldError]:
    """``ValidateLocalNonReservedPath``."""
    errs = validate_local_descending_path(target, path)
    if target.startswith("..") and not target.startswith("../"):
        errs.append(
            invalid(path, target, "must not start with '..'", "ValidateLocalNonReservedPath")
        )
    return errs


def _mode(obj: dict[str, Any], key: str, path: Path, origin: str) -> list[FieldError]:
    mode = _int(obj, key)
    if mode is not None and (mode > 0o777 or mode < 0):
        return [invalid((*path, key), mode, FILE_MODE_ERROR, origin)]
    return []


def _key_to_path(item: Any, path: Path) -> list[FieldError]:
    """``validateKeyToPath``."""
    origin = "validateKeyToPath"
    if (kp := opt_dict(item)) is None:
        return []
    errs = []
    if _str(kp, "key") == "":
        errs.append(required((*path, "key"), origin=origin))
    target = _str(kp, "path")
    if target == "":
        errs.append(required((*path, "path"), origin=origin))
    if target is not None:
        errs.extend(_local_non_reserved_path(target, (*path, "path")))
    errs.extend(_mode(kp, "mode", path, origin))
    return errs


# --- the volume sources ---


def _host_path(src: dict[str, Any], path: Path) -> list[FieldError]:
    origin = "validateHostPathVolumeSource"
    target = _str(src, "path")
    if target == "":
        return [required((*path, "path"), origin=origin)]
    errs = validate_path_no_backsteps(target, (*path, "path")) if target else []
    kind = src.get("type")
    if isinstance(kind, str) and kind not in _HOST_PATH_TYPES:
        errs.append(
            not_supported((*path, "type"), Named(kind), _HOST_PATH_TYPES, "validateHostPathType")
        )
    return errs


def _git_repo(src: dict[str, Any], path: Path) -> list[FieldError]:
    errs = []
    if _str(src, "repository") == "":
        errs.append(required((*path, "repository"), origin="validateGitRepoVolumeSource"))
    directory = _str(src, "directory")
    if directory is not None:
        errs.extend(validate_local_descending_path(directory, (*path, "directory")))
    return errs


def _partition_disk(src: dict[str, Any], path: Path, id_key: str, origin: str) -> list[FieldError]:
    errs = []
    if _str(src, id_key) == "":
        errs.append(required((*path, id_key), origin=origin))
    partition = _int(src, "partition")
    if partition is not None and (partition < 0 or partition > 255):
        errs.append(invalid((*path, "partition"), partition, PD_PARTITION_ERROR, origin))
    return errs


def _gce_pd(src: dict[str, Any], path: Path) -> list[FieldError]:
    return _partition_disk(src, path, "pdName", "validateGCEPersistentDiskVolumeSource")


def _aws_ebs(src: dict[str, Any], path: Path) -> list[FieldError]:
    return _partition_disk(src, path, "volumeID", "validateAWSElasticBlockStoreVolumeSource")


def _secret(src: dict[str, Any], path: Path) -> list[FieldError]:
    origin = "validateSecretVolumeSource"
    errs = []
    if _str(src, "secretName") == "":
        errs.append(required((*path, "secretName"), origin=origin))
    errs.extend(_mode(src, "defaultMode", path, origin))
    for i, item in enumerate(list_of(src.get("items"))):
        errs.extend(_key_to_path(item, (*path, "items", i)))
    return errs


def _config_map(src: dict[str, Any], path: Path) -> list[FieldError]:
    origin = "validateConfigMapVolumeSource"
    errs = []
    if _str(src, "name") == "":
        errs.append(required((*path, "name"), origin=origin))
    errs.extend(_mode(src, "defaultMode", path, origin))
    for i, item in enumerate(list_of(src.get("items"))):
        errs.extend(_key_to_path(item, (*path, "items", i)))
    return errs


def _nfs(src: dict[str, Any], path: Path) -> list[FieldError]:
    origin = "validateNFSVolumeSource"
    errs = []
    if _str(src, "server") == "":
        errs.append(required((*path, "server"), origin=origin))
    target = _str(src, "path")
    if target == "":
        errs.append(required((*path, "path"), origin=origin))
    if target is not None and not _is_abs(target):
        errs.append(invalid((*path, "path"), target, "must be an absolute path", origin))
    return errs


def _iscsi_format_bad(value: str) -> bool:
    """Whether an iqn/eui/naa name misses the format of its prefix."""
    if value.startswith("iqn"):
        return _ISCSI_IQN.search(value) is None
    if value.startswith("eui"):
        return _ISCSI_EUI.match(value) is None
    if value.startswith("naa"):
        return _ISCSI_NAA.match(value) is None
    return False


def _iscsi(src: dict[str, Any], path: Path) -> list[FieldError]:
    origin = "validateISCSIVolumeSource"
    prefix_detail = "must be valid format starting with iqn, eui, or naa"
    errs = []
    if _str(src, "targetPortal") == "":
        errs.append(required((*path, "targetPortal"), origin=origin))
    iqn = _str(src, "iqn")
    if iqn == "":
        errs.append(required((*path, "iqn"), origin=origin))
    elif iqn is not None:
        if not iqn.startswith(("iqn", "eui", "naa")):
            errs.append(invalid((*path, "iqn"), iqn, prefix_detail, origin))
        elif _iscsi_format_bad(iqn):
            errs.append(invalid((*path, "iqn"), iqn, "must be valid format", origin))
    lun = _int(src, "lun")
    if lun is not None and (lun < 0 or lun > 255):
        detail = names.inclusive_range_error(0, 255)
        errs.append(invalid((*path, "lun"), lun, detail, origin))
    chap = _bool(src, "chapAuthDiscovery") or _bool(src, "chapAuthSession")
    if chap and src.get("secretRef") is None:
        errs.append(required((*path, "secretRef"), origin=origin))
    initiator = _opt_str(src, "initiatorName")
    if initiator is not None:
        ipath = (*path, "initiatorname")
        if not initiator.startswith(("iqn", "eui", "naa")):
            errs.append(invalid(ipath, initiator, prefix_detail, origin))
        if _iscsi_format_bad(initiator):
            errs.append(invalid(ipath, initiator, "must be valid format", origin))
    return errs


def _glusterfs(src: dict[str, Any], path: Path) -> list[FieldError]:
    origin = "validateGlusterfsVolumeSource"
    errs = []
    if _str(src, "endpoints") == "":
        errs.append(required((*path, "endpoints"), origin=origin))
    if _str(src, "path") == "":
        errs.append(required((*path, "path"), origin=origin))
    return errs


def _flocker(src: dict[str, Any], path: Path) -> list[FieldError]:
    origin = "validateFlockerVolumeSource"
    name, uuid = _str(src, "datasetName") or "", _str(src, "datasetUUID") or ""
    errs = []
    if not name and not uuid:
        errs.append(required(path, "one of datasetName and datasetUUID is required", origin))
    if name and uuid:
        errs.append(
            invalid(
                path,
                "resource",
                "datasetName and datasetUUID can not be specified simultaneously",
                origin,
            )
        )
    if "/" in name:
        errs.append(invalid((*path, "datasetName"), name, "must not contain '/'", origin))
    return errs


def _pvc(src: dict[str, Any], path: Path) -> list[FieldError]:
    if _str(src, "claimName") == "":
        return [required((*path, "claimName"), origin="validatePersistentClaimVolumeSource")]
    return []


def _required_fields(*keys: str, origin: str) -> SourceCheck:
    """A source check that only requires non-empty string fields."""

    def check(src: dict[str, Any], path: Path) -> list[FieldError]:
        return [required((*path, key), origin=origin) for key in keys if _str(src, key) == ""]

    return check


def _with_secret_ref(check: SourceCheck, origin: str) -> SourceCheck:
    """The check, then a set ``secretRef`` must name its secret."""

    def both(src: dict[str, Any], path: Path) -> list[FieldError]:
        errs = check(src, path)
        ref = opt_dict(src.get("secretRef"))
        if ref is not None and _str(ref, "name") == "":
            errs.append(required((*path, "secretRef", "name"), origin=origin))
        return errs

    return both


_cinder = _with_secret_ref(
    _required_fields("volumeID", origin="validateCinderVolumeSource"), "validateCinderVolumeSource"
)
_azure_file = _required_fields("secretName", "shareName", origin="validateAzureFile")
_vsphere = _required_fields("volumePath", origin="validateVsphereVolumeSource")
_photon = _required_fields("pdID", origin="validatePhotonPersistentDiskVolumeSource")
_portworx = _required_fields("volumeID", origin="validatePortworxVolumeSource")
_scale_io = _required_fields(
    "gateway", "system", "volumeName", origin="validateScaleIOVolumeSource"
)


def _rbd_monitors(src: dict[str, Any], path: Path) -> list[FieldError]:
    errs = []
    if not list_of(src.get("monitors")):
        errs.append(required((*path, "monitors"), origin="validateRBDVolumeSource"))
    if _str(src, "image") == "":
        errs.append(required((*path, "image"), origin="validateRBDVolumeSource"))
    return errs


def _cephfs_monitors(src: dict[str, Any], path: Path) -> list[FieldError]:
    if not list_of(src.get("monitors")):
        return [required((*path, "monitors"), origin="validateCephFSVolumeSource")]
    return []


def _split_host_port(pair: str) -> bool:
    """Whether ``net.SplitHostPort`` accepts the text."""
    if pair.startswith("["):
        end = pair.find("]")
        if end < 0 or "[" in pair[1:end]:
            return False
        rest = pair[end + 1 :]
        return rest.startswith(":") and "]" not in rest and "[" not in rest
    i = pair.rfind(":")
    if i < 0:
        return False
    host = pair[:i]
    return ":" not in host and "[" not in pair and "]" not in pair


def _quobyte(src: dict[str, Any], path: Path) -> list[FieldError]:
    origin = "validateQuobyteVolumeSource"
    errs = []
    registry = _str(src, "registry")
    tenant = _str(src, "tenant") or ""
    detail = "must be a host:port pair or multiple pairs separated by commas"
    if registry == "":
        errs.append(required((*path, "registry"), detail, origin))
    elif names.byte_len(tenant) >= 65:
        errs.append(
            required(
                (*path, "tenant"),
                "must be a UUID and may not exceed a length of 64 characters",
                origin,
            )
        )
    elif registry is not None:
        for pair in registry.split(","):
            if not _split_host_port(pair):
                errs.append(invalid((*path, "registry"), registry, detail, origin))
    if _str(src, "volume") == "":
        errs.append(required((*path, "volume"), origin=origin))
    return errs


def _fc(src: dict[str, Any], path: Path) -> list[FieldError]:
    origin = "validateFCVolumeSource"
    errs = []
    wwns = list_of(src.get("targetWWNs"))
    wwids = list_of(src.get("wwids"))
    if not wwns and not wwids:
        errs.append(
            required(
                (*path, "targetWWNs"),
                "must specify either targetWWNs or wwids, but not both",
                origin,
            )
        )
    if wwns and wwids:
        errs.append(
            invalid(
                (*path, "targetWWNs"),
                wwns,
                "targetWWNs and wwids can not be specified simultaneously",
                origin,
            )
        )
    if wwns:
        if src.get("lun") is None:
            errs.append(
                required((*path, "lun"), "lun is required if targetWWNs is specified", origin)
            )
        else:
            lun = _int(src, "lun")
            if lun is not None and (lun < 0 or lun > 255):
                errs.append(
                    invalid((*path, "lun"), lun, names.inclusive_range_error(0, 255), origin)
                )
    return errs


def _flex(src: dict[str, Any], path: Path) -> list[FieldError]:
    origin = "validateFlexVolumeSource"
    errs = []
    if _str(src, "driver") == "":
        errs.append(required((*path, "driver"), origin=origin))
    options = opt_dict(src.get("options")) or {}
    for key in options:
        namespace = key.split("/", 1)[0] if "/" in key else key
        normalized = "." + namespace.lower()
        if normalized.endswith((".kubernetes.io", ".k8s.io")):
            errs.append(
                invalid(
                    (*path, "options", Key(key)),
                    key,
                    "kubernetes.io and k8s.io namespaces are reserved",
                    origin,
                )
            )
    return errs


def _azure_disk(src: dict[str, Any], path: Path) -> list[FieldError]:
    origin = "validateAzureDisk"
    errs = []
    if _str(src, "diskName") == "":
        errs.append(required((*path, "diskName"), origin=origin))
    uri = _str(src, "diskURI")
    if uri == "":
        errs.append(required((*path, "diskURI"), origin=origin))
    caching = _opt_str(src, "cachingMode")
    if caching is not None and caching not in _AZURE_CACHING_MODES:
        errs.append(
            not_supported((*path, "cachingMode"), Named(caching), _AZURE_CACHING_MODES, origin)
        )
    kind = _opt_str(src, "kind")
    if kind is not None and kind not in _AZURE_DISK_KINDS:
        errs.append(not_supported((*path, "kind"), Named(kind), _AZURE_DISK_KINDS, origin))
    if kind is not None and uri is not None:
        if kind == "Managed" and not uri.startswith("/subscriptions/"):
            managed = (
                "/subscriptions/{sub-id}/resourcegroups/{group-name}"
                "/providers/microsoft.compute/disks/{disk-id}"
            )
            errs.append(not_supported((*path, "diskURI"), uri, [managed], origin))
        if kind != "Managed" and not uri.startswith("https://"):
            blob = "https://{account-name}.blob.core.windows.net/{container-name}/{disk-name}.vhd"
            errs.append(not_supported((*path, "diskURI"), uri, [blob], origin))
    return errs


def _storage_os(src: dict[str, Any], path: Path) -> list[FieldError]:
    origin = "validateStorageOSVolumeSource"
    errs = []
    volume_name = _str(src, "volumeName")
    if volume_name == "":
        errs.append(required((*path, "volumeName"), origin=origin))
    elif volume_name is not None:
        errs.extend(names.validate_dns1123_label(volume_name, (*path, "volumeName")))
    namespace = _str(src, "volumeNamespace")
    if namespace:
        errs.extend(names.validate_dns1123_label(namespace, (*path, "volumeNamespace")))
    ref = opt_dict(src.get("secretRef"))
    if ref is not None and _str(ref, "name") == "":
        errs.append(required((*path, "secretRef", "name"), origin=origin))
    return errs


def validate_csi_driver_name(driver: str, path: Path) -> list[FieldError]:
    """``ValidateCSIDriverName``."""
    origin = "ValidateCSIDriverName"
    errs = []
    if driver == "":
        errs.append(required(path, origin=origin))
    if names.byte_len(driver) > 63:
        errs.append(too_long(path, "may not be more than 63 bytes", origin))
    for msg in names.is_dns1123_subdomain(driver.lower()):
        errs.append(invalid(path, driver, msg, origin))
    return errs


def _csi(src: dict[str, Any], path: Path) -> list[FieldError]:
    origin = "validateCSIVolumeSource"
    driver = _str(src, "driver")
    errs = validate_csi_driver_name(driver, (*path, "driver")) if driver is not None else []
    ref = opt_dict(src.get("nodePublishSecretRef"))
    if ref is not None:
        name = _str(ref, "name")
        if name == "":
            errs.append(required((*path, "nodePublishSecretRef", "name"), origin=origin))
        elif name is not None:
            for msg in names.name_is_dns_subdomain(name, False):
                errs.append(invalid((*path, "name"), name, msg, origin))
    return errs


def _image(src: dict[str, Any], path: Path) -> list[FieldError]:
    """``validateImageVolumeSource`` (reached only with the ImageVolume gate on)."""
    origin = "validateImageVolumeSource"
    errs = []
    if _str(src, "reference") == "":
        errs.append(required((*path, "reference"), origin=origin))
    policy = _str(src, "pullPolicy")
    if policy == "":
        errs.append(required((*path, "pullPolicy"), origin="validatePullPolicy"))
    elif policy is not None and policy not in _PULL_POLICIES:
        errs.append(
            not_supported(
                (*path, "pullPolicy"), Named(policy), _PULL_POLICIES, "validatePullPolicy"
            )
        )
    return errs


# --- downward API ---


def _split_subscript(field_path: str) -> tuple[str, str, bool]:
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
    version = _str(ref, "apiVersion")
    if version == "":
        return [required((*path, "apiVersion"), origin=origin)]
    field_path = _str(ref, "fieldPath")
    if field_path == "":
        return [required((*path, "fieldPath"), origin=origin)]
    if version is None or field_path is None:
        return []
    # podshelper.ConvertDownwardAPIFieldLabel
    problem = ""
    internal = field_path
    head, subscript, subscripted = _split_subscript(field_path)
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
    head, subscript, subscripted = _split_subscript(internal)
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
    value = parse_quantity(divisor) if divisor is not None else None
    if value is None or value == 0:
        return []
    text = quantity_string(divisor, value)
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
    resource = _str(ref, "resource")
    if volume and _str(ref, "containerName") == "":
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


def _downward_api_file(item: Any, path: Path) -> list[FieldError]:
    """``validateDownwardAPIVolumeFile``: ``path`` is the source's, with no item index."""
    origin = "validateDownwardAPIVolumeFile"
    if (file := opt_dict(item)) is None:
        return []
    errs = []
    target = _str(file, "path")
    if target == "":
        errs.append(required((*path, "path"), origin=origin))
    if target is not None:
        errs.extend(_local_non_reserved_path(target, (*path, "path")))
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
    errs.extend(_mode(file, "mode", path, origin))
    return errs


def _downward_api(src: dict[str, Any], path: Path) -> list[FieldError]:
    errs = _mode(src, "defaultMode", path, "validateDownwardAPIVolumeSource")
    for item in list_of(src.get("items")):
        errs.extend(_downward_api_file(item, path))
    return errs


def _projected(src: dict[str, Any], path: Path) -> list[FieldError]:
    """``validateProjectedVolumeSource`` and ``validateProjectionSources``."""
    if _is_token_projection(src):
        return []  # the admission plugin's token volume, valid as it stands (a pure check)
    origin = "validateProjectionSources"
    errs = _mode(src, "defaultMode", path, "validateProjectedVolumeSource")
    seen: set[str] = set()

    def claim(target: Any, value: Any) -> None:
        if isinstance(target, str) and target:
            if target in seen:
                errs.append(invalid(path, value, "conflicting duplicate paths", origin))
            seen.add(target)

    for i, source in enumerate(list_of(src.get("sources"))):
        if (source := opt_dict(source)) is None:
            continue
        count = 0
        src_path = (*path, "sources", i)
        for key in ("secret", "configMap"):
            if source.get(key) is None:
                continue
            count += 1
            if (ref := opt_dict(source[key])) is None:
                continue
            proj_path = (*src_path, key)
            name = _str(ref, "name")
            if name == "":
                errs.append(required((*proj_path, "name"), origin=origin))
            for j, item in enumerate(list_of(ref.get("items"))):
                errs.extend(_key_to_path(item, (*proj_path, "items", j)))
                if isinstance(item, dict):
                    claim(item.get("path"), name if name is not None else "")
        if source.get("downwardAPI") is not None:
            count += 1
            if (dapi := opt_dict(source["downwardAPI"])) is not None:
                for item in list_of(dapi.get("items")):
                    errs.extend(_downward_api_file(item, (*src_path, "downwardAPI")))
                    if isinstance(item, dict):
                        claim(item.get("path"), item.get("path"))
        if source.get("serviceAccountToken") is not None:
            count += 1
            if (token := opt_dict(source["serviceAccountToken"])) is not None:
                proj_path = (*src_path, "serviceAccountToken")
                seconds = _int(token, "expirationSeconds")
                if seconds is not None and seconds < 600:
                    errs.append(
                        invalid(
                            (*proj_path, "expirationSeconds"),
                            seconds,
                            "may not specify a duration less than 10 minutes",
                            origin,
                        )
                    )
                if seconds is not None and seconds > 1 << 32:
                    errs.append(
                        invalid(
                            (*proj_path, "expirationSeconds"),
                            seconds,
                            "may not specify a duration larger than 2^32 seconds",
                            origin,
                        )
                    )
                target = _str(token, "path")
                if target == "":
                    errs.append(required((*path, "path"), origin=origin))
                elif target is not None:
                    errs.extend(_local_non_reserved_path(target, (*path, "path")))
        # clusterTrustBundle and podCertificate: dropped while their gates are off
        if count > 1:
            errs.append(
                forbidden(src_path, "may not specify more than 1 volume type per source", origin)
            )
    return errs


# --- generic ephemeral volumes: the claim template ---


def _label_selector(selector: dict[str, Any], path: Path) -> list[FieldError]:
    """``ValidateLabelSelector`` with invalid label values not allowed."""

    errs = []
    labels = selector.get("matchLabels")
    if isinstance(labels, dict):
        errs.extend(validate_labels(labels, (*path, "matchLabels")))
    for i, expr in enumerate(list_of(selector.get("matchExpressions"))):
        if (expr := opt_dict(expr)) is None:
            continue
        origin = "ValidateLabelSelectorRequirement"
        expr_path = (*path, "matchExpressions", i)
        operator = _str(expr, "operator")
        values = list_of(expr.get("values"))
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
        key = _str(expr, "key")
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
    if _str(ref, "name") == "":
        errs.append(required((*path, "name"), origin=origin))
    kind = _str(ref, "kind")
    if kind == "":
        errs.append(required((*path, "kind"), origin=origin))
    group = _opt_str(ref, "apiGroup") or ""
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
    value = parse_quantity(raw)
    if value is None:
        return []
    value = _round_up(value, -3)
    if value <= 0:
        text = quantity_string(raw, value)
        return [invalid(path, text, NOT_POSITIVE, "ValidatePositiveQuantityValue")]
    return []


def _claim_spec(spec: dict[str, Any], path: Path) -> list[FieldError]:
    """``ValidatePersistentVolumeClaimSpec`` with a create's options (VolumeAttributesClass on)."""
    origin = "ValidatePersistentVolumeClaimSpec"
    errs = []
    modes = list_of(spec.get("accessModes"))
    if not modes:
        errs.append(required((*path, "accessModes"), "at least 1 access mode is required", origin))
    selector = opt_dict(spec.get("selector"))
    if selector is not None:
        errs.extend(_label_selector(selector, (*path, "selector")))
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
    volume_mode = _opt_str(spec, "volumeMode")
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
        ref_namespace = _opt_str(data_source_ref, "namespace")
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
            and _str(data_source, "kind") == _str(data_source_ref, "kind")
            and _str(data_source, "name") == _str(data_source_ref, "name")
        )
        if not same:
            errs.append(invalid(path, {}, "must match dataSourceRef", origin))
    errs.extend(_class_name(spec, "volumeAttributesClassName", path, origin))
    return errs


def _class_name(spec: dict[str, Any], key: str, path: Path, origin: str) -> list[FieldError]:
    """``ValidateClassName`` (a DNS subdomain) of a set, non-empty class name."""
    name = _opt_str(spec, key)
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


def _ephemeral(src: dict[str, Any], path: Path) -> list[FieldError]:
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


# --- ValidateVolumes ---

# (JSON key, the name the "more than 1" error uses, the check, the name the check's paths use)
_SOURCES: tuple[tuple[str, str, SourceCheck, str], ...] = (
    ("hostPath", "hostPath", _host_path, "hostPath"),
    ("gitRepo", "gitRepo", _git_repo, "gitRepo"),
    ("gcePersistentDisk", "gcePersistentDisk", _gce_pd, "persistentDisk"),
    ("awsElasticBlockStore", "awsElasticBlockStore", _aws_ebs, "awsElasticBlockStore"),
    ("secret", "secret", _secret, "secret"),
    ("nfs", "nfs", _nfs, "nfs"),
    ("iscsi", "iscsi", _iscsi, "iscsi"),
    ("glusterfs", "glusterfs", _glusterfs, "glusterfs"),
    ("flocker", "flocker", _flocker, "flocker"),
    ("persistentVolumeClaim", "persistentVolumeClaim", _pvc, "persistentVolumeClaim"),
    ("rbd", "rbd", _rbd_monitors, "rbd"),
    ("cinder", "cinder", _cinder, "cinder"),
    ("cephfs", "cephFS", _cephfs_monitors, "cephfs"),
    ("quobyte", "quobyte", _quobyte, "quobyte"),
    ("downwardAPI", "downwarAPI", _downward_api, "downwardAPI"),
    ("fc", "fc", _fc, "fc"),
    ("flexVolume", "flexVolume", _flex, "flexVolume"),
    ("configMap", "configMap", _config_map, "configMap"),
    ("azureFile", "azureFile", _azure_file, "azureFile"),
    ("vsphereVolume", "vsphereVolume", _vsphere, "vsphereVolume"),
    ("photonPersistentDisk", "photonPersistentDisk", _photon, "photonPersistentDisk"),
    ("portworxVolume", "portworxVolume", _portworx, "portworxVolume"),
    ("azureDisk", "azureDisk", _azure_disk, "azureDisk"),
    ("storageos", "storageos", _storage_os, "storageos"),
    ("projected", "projected", _projected, "projected"),
    ("scaleIO", "scaleIO", _scale_io, "scaleIO"),
    ("csi", "csi", _csi, "csi"),
    ("ephemeral", "ephemeral", _ephemeral, "ephemeral"),
    ("image", "image", _image, "image"),
)


_SOURCE_INDEX = {entry[0]: index for index, entry in enumerate(_SOURCES)}
_SOURCE_CHECKS = {
    key: (forbidden, check, check_name) for key, forbidden, check, check_name in _SOURCES
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
            limit = parse_quantity(empty_dir["sizeLimit"])
            if limit is not None and limit.numerator < 0:  # a Fraction's sign
                errs.append(
                    forbidden(
                        (*path, "emptyDir", "sizeLimit"),
                        "SizeLimit field must be a valid resource quantity",
                        origin,
                    )
                )
    # The sources the volume has, in _SOURCES' order (not a lookup of each of the 30 sources).
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
        if key == "iscsi" and isinstance(src, dict) and _opt_str(src, "initiatorName") is not None:
            portal = _str(src, "targetPortal") or ""
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
                created.add(f"{pod_name}-{_str(volume, 'name') or ''}")
    errs: list[FieldError] = []
    valid_labels = names.VALID_DNS1123_LABELS
    for i, volume in enumerate(volumes):
        if not isinstance(volume, dict):
            continue
        name = volume.get("name")  # _str inline: "" when absent or null, skipped when no string
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
        if claim is not None and _str(claim, "claimName") in created:
            errs.append(
                invalid(
                    (*idx_path, "persistentVolumeClaim", "claimName"),
                    claim.get("claimName"),
                    "must not reference a PVC that gets created for an ephemeral volume",
                    "ValidateVolumes",
                )
            )
    return valid, errs


# --- ValidateVolumeMounts and ValidateVolumeDevices ---


def _path_map(container: dict[str, Any], key: str, path_key: str) -> dict[str, str]:
    """Go's name -> path map of the mounts or devices (``GetVolumeMountMap``, ...DeviceMap)."""
    by_name: dict[str, str] = {}
    entries = container.get(key)
    if not entries or not isinstance(entries, list):
        return by_name
    for entry in entries:
        if isinstance(entry, dict):
            name, target = _str(entry, "name"), _str(entry, path_key)
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
    name = _str(mount, "name")
    target = _str(mount, "mountPath")
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
    sub_path = _str(mount, "subPath")
    if sub_path:
        errs.extend(validate_local_descending_path(sub_path, (*path, "subPath")))
    sub_path_expr = _str(mount, "subPathExpr")
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
    propagation = _opt_str(mount, "mountPropagation")
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
    mode = _opt_str(mount, "recursiveReadOnly")
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
    for i, device in enumerate(list_of(container.get("volumeDevices"))):
        if not isinstance(device, dict):
            continue
        idx_path = (*path, i)
        name = _str(device, "name")
        target = _str(device, "devicePath")
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
