"""Each volume source's own checks (``validateHostPathVolumeSource`` and the rest of
``validateVolumeSource``'s callees), and ``SOURCES``: the sources in the order Go checks them."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

from . import names, release
from .downward_api import downward_api_file
from .ephemeral import label_selector, validate_ephemeral
from .field import (
    FieldError,
    Key,
    Named,
    Path,
    forbidden,
    invalid,
    not_supported,
    required,
    too_long,
)
from .fields import (
    as_list,
    field_int,
    field_opt_str,
    field_str,
    field_true,
    opt_dict,
    str_of,
)
from .meta import TOTAL_ANNOTATION_SIZE_LIMIT_B
from .volume_defaults import is_token_projection
from .volume_paths import (
    is_abs,
    key_to_path,
    local_non_reserved_path,
    validate_local_descending_path,
    validate_mode,
    validate_path_no_backsteps,
)

SourceCheck = Callable[[dict[str, Any], Path], list[FieldError]]

PD_PARTITION_ERROR = names.inclusive_range_error(1, 255)

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

_PULL_POLICIES = ("Always", "IfNotPresent", "Never")

_AZURE_CACHING_MODES = ("None", "ReadOnly", "ReadWrite")

_AZURE_DISK_KINDS = ("Dedicated", "Managed", "Shared")

# Go's regexp: [[:alnum:]] is ASCII, \d is ASCII, \s is [\t\n\f\r ], $ is the end of the text.
# The iqn expression is not anchored at its start (MatchString finds it anywhere).
_ISCSI_IQN = re.compile(r"iqn\.[0-9]{4}-[0-9]{2}\.([A-Za-z0-9\-.]+)(:[^,;*&$|\t\n\f\r ]+)\Z")

_ISCSI_EUI = re.compile(r"eui[^\n][A-Za-z0-9]{16}\Z")

_ISCSI_NAA = re.compile(r"naa[^\n][A-Za-z0-9]{32}\Z")


def _host_path(src: dict[str, Any], path: Path) -> list[FieldError]:
    origin = "validateHostPathVolumeSource"
    target = field_str(src, "path")
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
    if field_str(src, "repository") == "":
        errs.append(required((*path, "repository"), origin="validateGitRepoVolumeSource"))
    directory = field_str(src, "directory")
    if directory is not None:
        errs.extend(validate_local_descending_path(directory, (*path, "directory")))
    return errs


def _partition_disk(src: dict[str, Any], path: Path, id_key: str, origin: str) -> list[FieldError]:
    errs = []
    if field_str(src, id_key) == "":
        errs.append(required((*path, id_key), origin=origin))
    partition = field_int(src, "partition")
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
    if field_str(src, "secretName") == "":
        errs.append(required((*path, "secretName"), origin=origin))
    errs.extend(validate_mode(src, "defaultMode", path, origin))
    for i, item in enumerate(as_list(src.get("items"))):
        errs.extend(key_to_path(item, (*path, "items", i)))
    return errs


def _config_map(src: dict[str, Any], path: Path) -> list[FieldError]:
    origin = "validateConfigMapVolumeSource"
    errs = []
    if field_str(src, "name") == "":
        errs.append(required((*path, "name"), origin=origin))
    errs.extend(validate_mode(src, "defaultMode", path, origin))
    for i, item in enumerate(as_list(src.get("items"))):
        errs.extend(key_to_path(item, (*path, "items", i)))
    return errs


def _nfs(src: dict[str, Any], path: Path) -> list[FieldError]:
    origin = "validateNFSVolumeSource"
    errs = []
    if field_str(src, "server") == "":
        errs.append(required((*path, "server"), origin=origin))
    target = field_str(src, "path")
    if target == "":
        errs.append(required((*path, "path"), origin=origin))
    if target is not None and not is_abs(target):
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
    if field_str(src, "targetPortal") == "":
        errs.append(required((*path, "targetPortal"), origin=origin))
    iqn = field_str(src, "iqn")
    if iqn == "":
        errs.append(required((*path, "iqn"), origin=origin))
    elif iqn is not None:
        if not iqn.startswith(("iqn", "eui", "naa")):
            errs.append(invalid((*path, "iqn"), iqn, prefix_detail, origin))
        elif _iscsi_format_bad(iqn):
            errs.append(invalid((*path, "iqn"), iqn, "must be valid format", origin))
    lun = field_int(src, "lun")
    if lun is not None and (lun < 0 or lun > 255):
        detail = names.inclusive_range_error(0, 255)
        errs.append(invalid((*path, "lun"), lun, detail, origin))
    chap = field_true(src, "chapAuthDiscovery") or field_true(src, "chapAuthSession")
    if chap and src.get("secretRef") is None:
        errs.append(required((*path, "secretRef"), origin=origin))
    initiator = field_opt_str(src, "initiatorName")
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
    if field_str(src, "endpoints") == "":
        errs.append(required((*path, "endpoints"), origin=origin))
    if field_str(src, "path") == "":
        errs.append(required((*path, "path"), origin=origin))
    return errs


def _flocker(src: dict[str, Any], path: Path) -> list[FieldError]:
    origin = "validateFlockerVolumeSource"
    name, uuid = field_str(src, "datasetName") or "", field_str(src, "datasetUUID") or ""
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
    if field_str(src, "claimName") == "":
        return [required((*path, "claimName"), origin="validatePersistentClaimVolumeSource")]
    return []


def _required_fields(*keys: str, origin: str) -> SourceCheck:
    """A source check that only requires non-empty string fields."""

    def check(src: dict[str, Any], path: Path) -> list[FieldError]:
        return [required((*path, key), origin=origin) for key in keys if field_str(src, key) == ""]

    return check


def _with_secret_ref(check: SourceCheck, origin: str) -> SourceCheck:
    """The check, then a set ``secretRef`` must name its secret."""

    def both(src: dict[str, Any], path: Path) -> list[FieldError]:
        errs = check(src, path)
        ref = opt_dict(src.get("secretRef"))
        if ref is not None and field_str(ref, "name") == "":
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
    if not as_list(src.get("monitors")):
        errs.append(required((*path, "monitors"), origin="validateRBDVolumeSource"))
    if field_str(src, "image") == "":
        errs.append(required((*path, "image"), origin="validateRBDVolumeSource"))
    return errs


def _cephfs_monitors(src: dict[str, Any], path: Path) -> list[FieldError]:
    if not as_list(src.get("monitors")):
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
    registry = field_str(src, "registry")
    tenant = field_str(src, "tenant") or ""
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
    if field_str(src, "volume") == "":
        errs.append(required((*path, "volume"), origin=origin))
    return errs


def _fc(src: dict[str, Any], path: Path) -> list[FieldError]:
    origin = "validateFCVolumeSource"
    errs = []
    wwns = as_list(src.get("targetWWNs"))
    wwids = as_list(src.get("wwids"))
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
            lun = field_int(src, "lun")
            if lun is not None and (lun < 0 or lun > 255):
                errs.append(
                    invalid((*path, "lun"), lun, names.inclusive_range_error(0, 255), origin)
                )
    return errs


def _flex(src: dict[str, Any], path: Path) -> list[FieldError]:
    origin = "validateFlexVolumeSource"
    errs = []
    if field_str(src, "driver") == "":
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
    if field_str(src, "diskName") == "":
        errs.append(required((*path, "diskName"), origin=origin))
    uri = field_str(src, "diskURI")
    if uri == "":
        errs.append(required((*path, "diskURI"), origin=origin))
    caching = field_opt_str(src, "cachingMode")
    if caching is not None and caching not in _AZURE_CACHING_MODES:
        errs.append(
            not_supported((*path, "cachingMode"), Named(caching), _AZURE_CACHING_MODES, origin)
        )
    kind = field_opt_str(src, "kind")
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
    volume_name = field_str(src, "volumeName")
    if volume_name == "":
        errs.append(required((*path, "volumeName"), origin=origin))
    elif volume_name is not None:
        errs.extend(names.validate_dns1123_label(volume_name, (*path, "volumeName")))
    namespace = field_str(src, "volumeNamespace")
    if namespace:
        errs.extend(names.validate_dns1123_label(namespace, (*path, "volumeNamespace")))
    ref = opt_dict(src.get("secretRef"))
    if ref is not None and field_str(ref, "name") == "":
        errs.append(required((*path, "secretRef", "name"), origin=origin))
    return errs


def validate_csi_driver_name(driver: str, path: Path) -> list[FieldError]:
    """``ValidateCSIDriverName`` (from 1.35 an empty name is only required, not checked on)."""
    origin = "ValidateCSIDriverName"
    errs = []
    if driver == "":
        errs.append(required(path, origin=origin))
        if release.at_least("1.35"):
            return errs
    if names.byte_len(driver) > 63:
        errs.append(too_long(path, "may not be more than 63 bytes", origin))
    for msg in names.is_dns1123_subdomain(driver.lower()):
        errs.append(invalid(path, driver, msg, origin))
    return errs


def _csi(src: dict[str, Any], path: Path) -> list[FieldError]:
    origin = "validateCSIVolumeSource"
    driver = field_str(src, "driver")
    errs = validate_csi_driver_name(driver, (*path, "driver")) if driver is not None else []
    ref = opt_dict(src.get("nodePublishSecretRef"))
    if ref is not None:
        name = field_str(ref, "name")
        if name == "":
            errs.append(required((*path, "nodePublishSecretRef", "name"), origin=origin))
        elif name is not None:
            for msg in names.name_is_dns_subdomain(name, False):
                errs.append(invalid((*path, "name"), name, msg, origin))
    return errs


def _image(src: dict[str, Any], path: Path) -> list[FieldError]:
    """``validateImageVolumeSource`` (reached with the ImageVolume gate on, from 1.35; the pull
    policy is defaulted by then, so never empty)."""
    origin = "validateImageVolumeSource"
    errs = []
    if field_str(src, "reference") == "":
        errs.append(required((*path, "reference"), origin=origin))
    policy = field_str(src, "pullPolicy")
    if policy == "":
        errs.append(required((*path, "pullPolicy"), origin="validatePullPolicy"))
    elif policy is not None and policy not in _PULL_POLICIES:
        errs.append(
            not_supported(
                (*path, "pullPolicy"), Named(policy), _PULL_POLICIES, "validatePullPolicy"
            )
        )
    return errs


def _downward_api(src: dict[str, Any], path: Path) -> list[FieldError]:
    errs = validate_mode(src, "defaultMode", path, "validateDownwardAPIVolumeSource")
    for item in as_list(src.get("items")):
        errs.extend(downward_api_file(item, path))
    return errs


_KEY_TYPES = ("RSA3072", "RSA4096", "ECDSAP256", "ECDSAP384", "ECDSAP521", "ED25519")

# certificates.MaxMaxExpirationSeconds, and KubernetesMaxMaxExpirationSeconds for the signers
# of kubernetes.io
MAX_MAX_EXPIRATION_SECONDS = 91 * 24 * 60 * 60
KUBERNETES_MAX_MAX_EXPIRATION_SECONDS = 24 * 60 * 60

# ValidateSignerName: <fqdn>/<namespace>.<name>
_SIGNER_DOMAIN_MAX_LENGTH = names.DNS1123_SUBDOMAIN_MAX_LENGTH
_SIGNER_NAME_MAX_LENGTH = (
    _SIGNER_DOMAIN_MAX_LENGTH
    + (names.DNS1123_SUBDOMAIN_MAX_LENGTH + names.DNS1123_LABEL_MAX_LENGTH + 1)
    + 1
)

Claim = Callable[[str, Any], None]
"""Takes a projected file's path for a source (``allPaths``), with the value its "conflicting
duplicate paths" error shows."""


def _go_quoted(text: str) -> str:
    """Go's ``%q`` for printable text."""
    return json.dumps(text, ensure_ascii=False)


def is_kubernetes_signer_name(signer: str) -> bool:
    """``IsKubernetesSignerName``: the host part is kubernetes.io or a subdomain of it."""
    host = signer.split("/", 1)[0]
    return host == "kubernetes.io" or host.endswith(".kubernetes.io")


def validate_signer_name(signer: str, path: Path) -> list[FieldError]:
    """``ValidateSignerName``: ``example.com/signer-name``, a domain of DNS labels (two at least)
    and a path of DNS subdomains, at most 571 bytes in all."""
    origin = "ValidateSignerName"
    if signer == "":
        return [required(path, origin=origin)]
    segments = signer.split("/")
    if len(segments) != 2:
        detail = "must be a fully qualified domain and path of the form 'example.com/signer-name'"
        return [invalid(path, signer, detail, origin)]
    domain, rest = segments
    errs = []
    if names.byte_len(domain) > _SIGNER_DOMAIN_MAX_LENGTH:
        errs.append(
            too_long(path, f"may not be more than {_SIGNER_DOMAIN_MAX_LENGTH} bytes", origin)
        )
    labels = domain.split(".")
    for label in labels:  # the first bad label only
        if msgs := names.is_dns1123_label(label):
            for msg in msgs:
                detail = f"validating label {_go_quoted(label)}: {msg}"
                errs.append(invalid(path, domain, detail, origin))
            break
    if len(labels) < 2:
        detail = "should be a domain with at least two segments separated by dots"
        errs.append(invalid(path, domain, detail, origin))
    for label in rest.split("."):
        if msgs := names.is_dns1123_subdomain(label):
            for msg in msgs:
                errs.append(
                    invalid(path, rest, f"validating label {_go_quoted(label)}: {msg}", origin)
                )
            break
    if names.byte_len(signer) > _SIGNER_NAME_MAX_LENGTH:
        errs.append(too_long(path, f"may not be more than {_SIGNER_NAME_MAX_LENGTH} bytes", origin))
    return errs


def _cluster_trust_bundle_name_errors(name: str) -> list[str]:
    """``ValidateClusterTrustBundleName`` of the signer that
    ``extractSignerNameFromClusterTrustBundleName`` finds in ``name`` (the part before its last
    ':', each ':' read as '/'), or of none."""
    split = name.rfind(":")
    signer = name[:split].replace(":", "/") if split != -1 else ""
    if signer == "":
        if ":" in name:
            return ['ClusterTrustBundle without signer name must not have ":" in its name']
        return names.name_is_dns_subdomain(name, False)
    prefix = signer.replace("/", ":") + ":"
    if not name.startswith(prefix):
        return [f"ClusterTrustBundle for signerName {signer} must be named with prefix {prefix}"]
    return names.name_is_dns_subdomain(name[len(prefix) :], False)


def _selector_json(selector: dict[str, Any]) -> dict[str, Any]:
    """A ``metav1.LabelSelector`` as encoding/json prints it (empty fields omitted, map keys
    sorted)."""
    out: dict[str, Any] = {}
    labels = selector.get("matchLabels")
    if isinstance(labels, dict) and labels:
        out["matchLabels"] = dict(sorted(labels.items()))
    expressions = [opt_dict(e) or {} for e in as_list(selector.get("matchExpressions"))]
    if expressions:
        out["matchExpressions"] = []
        for expr in expressions:
            item: dict[str, Any] = {"key": str_of(expr.get("key"))}
            item["operator"] = str_of(expr.get("operator"))
            if values := as_list(expr.get("values")):
                item["values"] = values
            out["matchExpressions"].append(item)
    return out


def _cluster_trust_bundle_json(ctb: dict[str, Any]) -> dict[str, Any]:
    """The internal ``core.ClusterTrustBundleProjection`` as encoding/json prints it (no JSON
    tags: Go's field names; ``User`` is always dropped, AtomicWriteVolumeUserFields being off)."""
    selector = opt_dict(ctb.get("labelSelector"))
    optional = ctb.get("optional")
    return {
        "Name": ctb.get("name"),
        "SignerName": ctb.get("signerName"),
        "LabelSelector": _selector_json(selector) if selector is not None else None,
        "Optional": optional if isinstance(optional, bool) else None,
        "Path": str_of(ctb.get("path")),
        "User": None,
    }


def _cluster_trust_bundle(ctb: dict[str, Any], proj_path: Path, claim: Claim) -> list[FieldError]:
    """``validateProjectionSources``' checks of a clusterTrustBundle projection (kept from 1.37,
    ClusterTrustBundleProjection on): a name or a signer name (with a label selector), and a
    path, claimed even when empty."""
    origin = "validateProjectionSources"
    errs: list[FieldError] = []
    name, signer = ctb.get("name"), ctb.get("signerName")
    if name is not None and signer is not None:
        detail = "only one of name and signerName may be used"
        errs.append(invalid(proj_path, _cluster_trust_bundle_json(ctb), detail, origin))
    elif isinstance(name, str):
        name_path = (*proj_path, "name")
        if name == "":
            errs.append(required(name_path, "must be a valid object name", origin))
        for msg in _cluster_trust_bundle_name_errors(name):
            detail = f"not a valid clustertrustbundlename: {msg}"
            errs.append(invalid(name_path, name, detail, origin))
        selector = opt_dict(ctb.get("labelSelector"))
        if selector is not None:
            detail = "labelSelector must be unset if name is specified"
            errs.append(
                invalid((*proj_path, "labelSelector"), _selector_json(selector), detail, origin)
            )
    elif isinstance(signer, str):
        signer_path = (*proj_path, "signerName")
        if signer == "":
            errs.append(required(signer_path, "must be a valid signer name", origin))
        errs.extend(validate_signer_name(signer, signer_path))
        selector = opt_dict(ctb.get("labelSelector"))
        if selector is not None:
            errs.extend(label_selector(selector, (*proj_path, "labelSelector")))
    elif name is None and signer is None:
        errs.append(required(proj_path, "either name or signerName must be specified", origin))
    target = field_str(ctb, "path")
    if target is not None:
        if target == "":
            errs.append(required((*proj_path, "path"), origin=origin))
        errs.extend(local_non_reserved_path(target, (*proj_path, "path")))
        claim(target, target)
    return errs


def _user_annotations(annotations: dict[str, Any], path: Path) -> list[FieldError]:
    """``ValidateUserAnnotations``: each key, lower-cased, a domain-prefixed key
    (``IsDomainPrefixedKey``), and keys plus values at most 256 KiB."""
    errs: list[FieldError] = []
    size = 0
    for key, value in annotations.items():
        if not isinstance(key, str) or not isinstance(value, str):
            continue
        size += names.byte_len(key) + names.byte_len(value)
        key = key.lower()
        if key == "":
            errs.append(required(path, origin="IsDomainPrefixedKey"))
            continue
        msgs = names.is_qualified_name(key)  # content.IsLabelKey
        errs.extend(invalid(path, key, msg, "IsDomainPrefixedKey") for msg in msgs)
        if not msgs and len(key.split("/")) != 2:
            detail = 'must be a domain-prefixed key (such as "acme.io/foo")'
            errs.append(invalid(path, key, detail, "IsDomainPrefixedKey"))
    if size > TOTAL_ANNOTATION_SIZE_LIMIT_B:
        detail = f"may not be more than {TOTAL_ANNOTATION_SIZE_LIMIT_B} bytes"
        errs.append(too_long(path, detail, "ValidateUserAnnotations"))
    return errs


def _pod_certificate(cert: dict[str, Any], proj_path: Path, claim: Claim) -> list[FieldError]:
    """``validateProjectionSources``' checks of a podCertificate projection (kept from 1.37,
    PodCertificateRequest on)."""
    origin = "validateProjectionSources"
    signer = field_str(cert, "signerName")
    errs = validate_signer_name(signer, (*proj_path, "signerName")) if signer is not None else []
    annotations = cert.get("userAnnotations")
    if isinstance(annotations, dict):
        errs.extend(_user_annotations(annotations, (*proj_path, "userAnnotations")))
    key_type = field_str(cert, "keyType")
    if key_type is not None and key_type not in _KEY_TYPES:
        errs.append(not_supported((*proj_path, "keyType"), key_type, _KEY_TYPES, origin))
    seconds = field_int(cert, "maxExpirationSeconds")
    if seconds is not None:
        seconds_path = (*proj_path, "maxExpirationSeconds")
        if seconds < 3600:
            detail = "if provided, maxExpirationSeconds must be >= 3600"
            errs.append(invalid(seconds_path, seconds, detail, origin))
        most = MAX_MAX_EXPIRATION_SECONDS
        if is_kubernetes_signer_name(signer or ""):
            most = KUBERNETES_MAX_MAX_EXPIRATION_SECONDS
        if seconds > most:
            detail = f"if provided, maxExpirationSeconds must be <= {most}"
            errs.append(invalid(seconds_path, seconds, detail, origin))
    paths = 0
    for key in ("credentialBundlePath", "keyPath", "certificateChainPath"):
        target = field_str(cert, key)
        if target:
            paths += 1
            errs.extend(local_non_reserved_path(target, (*proj_path, key)))
            claim(target, target)
    if paths == 0:
        detail = "specify at least one of credentialBundlePath, keyPath, and certificateChainPath"
        errs.append(required(proj_path, detail, origin))
    return errs


def _service_account_token(token: dict[str, Any], proj_path: Path, path: Path) -> list[FieldError]:
    """``validateProjectionSources``' checks of a serviceAccountToken projection (its
    expirationSeconds defaulted to an hour; the errors of its path name the volume's ``path``,
    as Go's do)."""
    origin = "validateProjectionSources"
    errs = []
    seconds = field_int(token, "expirationSeconds")
    if seconds is not None and seconds < 600:
        detail = "may not specify a duration less than 10 minutes"
        errs.append(invalid((*proj_path, "expirationSeconds"), seconds, detail, origin))
    if seconds is not None and seconds > 1 << 32:
        detail = "may not specify a duration larger than 2^32 seconds"
        errs.append(invalid((*proj_path, "expirationSeconds"), seconds, detail, origin))
    target = field_str(token, "path")
    if target == "":
        errs.append(required((*path, "path"), origin=origin))
    elif target is not None:
        errs.extend(local_non_reserved_path(target, (*path, "path")))
    return errs


def _projected(src: dict[str, Any], path: Path) -> list[FieldError]:
    """``validateProjectedVolumeSource`` and ``validateProjectionSources``."""
    if is_token_projection(src):
        return []  # the admission plugin's token volume, valid as it stands (a pure check)
    origin = "validateProjectionSources"
    errs = validate_mode(src, "defaultMode", path, "validateProjectedVolumeSource")
    seen: set[str] = set()

    def claim_any(target: str, value: Any) -> None:
        if target in seen:
            errs.append(invalid(path, value, "conflicting duplicate paths", origin))
        seen.add(target)

    def claim(target: Any, value: Any) -> None:
        if isinstance(target, str) and target:
            claim_any(target, value)

    for i, source in enumerate(as_list(src.get("sources"))):
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
            name = field_str(ref, "name")
            if name == "":
                errs.append(required((*proj_path, "name"), origin=origin))
            for j, item in enumerate(as_list(ref.get("items"))):
                errs.extend(key_to_path(item, (*proj_path, "items", j)))
                if isinstance(item, dict):
                    claim(item.get("path"), name if name is not None else "")
        if source.get("downwardAPI") is not None:
            count += 1
            if (dapi := opt_dict(source["downwardAPI"])) is not None:
                for item in as_list(dapi.get("items")):
                    errs.extend(downward_api_file(item, (*src_path, "downwardAPI")))
                    if isinstance(item, dict):
                        claim(item.get("path"), item.get("path"))
        if source.get("serviceAccountToken") is not None:
            count += 1
            if (token := opt_dict(source["serviceAccountToken"])) is not None:
                token_path = (*src_path, "serviceAccountToken")
                errs.extend(_service_account_token(token, token_path, path))
        # clusterTrustBundle and podCertificate: set_defaults drops them while their gates are
        # off (up to 1.36)
        if source.get("clusterTrustBundle") is not None:
            count += 1
            if (ctb := opt_dict(source["clusterTrustBundle"])) is not None:
                ctb_path = (*src_path, "clusterTrustBundle")
                errs.extend(_cluster_trust_bundle(ctb, ctb_path, claim_any))
        if source.get("podCertificate") is not None:
            count += 1
            if (cert := opt_dict(source["podCertificate"])) is not None:
                cert_path = (*src_path, "podCertificate")
                errs.extend(_pod_certificate(cert, cert_path, claim_any))
        if count > 1:
            errs.append(
                forbidden(src_path, "may not specify more than 1 volume type per source", origin)
            )
    return errs


# (JSON key, the name the "more than 1" error uses, the check, the name the check's paths use)
SOURCES: tuple[tuple[str, str, SourceCheck, str], ...] = (
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
    ("ephemeral", "ephemeral", validate_ephemeral, "ephemeral"),
    ("image", "image", _image, "image"),
)
