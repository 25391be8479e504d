"""What the API server says when a Pod is created: :func:`validate_pod`.

The server decodes the v1 Pod, defaults it (``SetObjectDefaults_Pod`` of
``pkg/apis/core/v1``), converts it to the internal form, prepares it (``PrepareForCreate`` of
the pod strategy) and validates it (``ValidatePodCreate`` of ``pkg/apis/core/validation``).
:func:`prepare_pod` does the first three on a copy; :func:`validate_pod` then runs
``ValidatePodCreate``'s checks in Go's order: the metadata (``ValidateObjectMeta`` and
``ValidatePodSpecificAnnotations``), ``ValidatePodSpec`` (its pod-level fields here, the
volumes, containers, security contexts, placement and resources through the sibling modules'
entry points) and the create-only checks.

Steps of the server that are not validation are mirrored too, because they decide what is
validated: a generateName becomes a name, the namespace comes from the request when the pod has
none, the field manager replaces managedFields, PrepareForCreate sets generation 1 and drops
the fields of the gates off at the minor followed (here hostnameOverride, while HostnameOverride
is off: 1.34, and schedulingGroup, GenericWorkload being off in the whole window; the sibling
modules drop theirs), and the ServiceAccount admission plugin (on in
every API server by default) sets ``serviceAccountName`` to ``default`` when it is empty. The
other admission plugins are not: Priority (``priority``, ``preemptionPolicy``, an unknown
``priorityClassName``), RuntimeClass and the ServiceAccount plugin's look-up of the account
refuse pods on cluster state, before validation; the server-aware preflight checks those.

Up to 1.36 the internal form keeps ``hostNetwork``, ``hostPID``, ``hostIPC`` and ``hostUsers``
in the pod security context (from 1.37 they are spec fields there too); checks that read them
here read the v1 spec fields, and report the paths Go reports.

The checks follow the minor of :mod:`tfjob_kit.podcheck.release`: from 1.35 a hostnameOverride
is kept and checked (``validatePodHostName``); from 1.36 the legacy IP fields (nameservers,
hostAliases) are strict (``names.is_valid_ip_for_legacy_field``); from 1.37 ``validateWindows``
checks the host fields after the security context's.
"""

from __future__ import annotations

import json
from typing import Any

from tfjob_kit.podcheck import (
    containers,
    gojson,
    release,
    resources,
    scheduling,
    security,
    volume_paths,
    volumes,
)
from tfjob_kit.podcheck.field import (
    FieldError,
    Key,
    Path,
    as_listed,
    duplicate,
    forbidden,
    invalid,
    not_supported,
    required,
    too_long,
)
from tfjob_kit.podcheck.fields import as_dict, as_list, opt_int, str_of
from tfjob_kit.podcheck.meta import validate_object_meta
from tfjob_kit.podcheck.names import (
    MAX_INT32,
    VALID_DNS1123_SUBDOMAINS,
    byte_len,
    inclusive_range_error,
    is_valid_ip_for_legacy_field,
    name_is_dns_subdomain,
    validate_dns1123_label,
    validate_dns1123_subdomain,
    validate_dns1123_subdomain_with_underscore,
    validate_nonnegative_field,
    validate_qualified_name,
    validate_service_account_name,
)

DEFAULT_TERMINATION_GRACE_PERIOD_SECONDS = 30
DEFAULT_SCHEDULER_NAME = "default-scheduler"
DEFAULT_SERVICE_ACCOUNT = "default"
MAX_DNS_NAMESERVERS = 3
MAX_DNS_SEARCH_PATHS = 32
MAX_DNS_SEARCH_LIST_CHARS = 2048
# names.SimpleNameGenerator: generateName cut to 58 bytes, then 5 random characters of this
# alphabet (a fixed choice here: the suffix cannot make a name invalid).
_MAX_GENERATED_NAME_LENGTH = 58
_GENERATED_SUFFIX = "bcdfg"

MIRROR_POD_ANNOTATION = "kubernetes.io/config.mirror"
TOLERATIONS_ANNOTATION = "scheduler.alpha.kubernetes.io/tolerations"
POD_DELETION_COST_ANNOTATION = "controller.kubernetes.io/pod-deletion-cost"
SECCOMP_POD_ANNOTATION = "seccomp.security.alpha.kubernetes.io/pod"
SECCOMP_CONTAINER_ANNOTATION_PREFIX = "container.seccomp.security.alpha.kubernetes.io/"
APPARMOR_CONTAINER_ANNOTATION_PREFIX = "container.apparmor.security.beta.kubernetes.io/"
# v1 conversion drops these annotations (dropInitContainerAnnotations).
_INIT_CONTAINER_ANNOTATIONS = (
    "pod.beta.kubernetes.io/init-containers",
    "pod.alpha.kubernetes.io/init-containers",
    "pod.beta.kubernetes.io/init-container-statuses",
    "pod.alpha.kubernetes.io/init-container-statuses",
)
_INIT_CONTAINER_ANNOTATION_SET = frozenset(_INIT_CONTAINER_ANNOTATIONS)
_SPEC: Path = ("spec",)
_META: Path = ("metadata",)


def _copy(value: Any) -> Any:
    """A copy of parsed JSON (dicts, lists, scalars): faster than ``copy.deepcopy``."""
    if isinstance(value, dict):
        return {k: _copy(v) if isinstance(v, _NESTED) else v for k, v in value.items()}
    if isinstance(value, list):
        return [_copy(v) if isinstance(v, _NESTED) else v for v in value]
    return value


_NESTED = (dict, list)


def _unset(value: Any) -> bool:
    """What Go reads as the zero value of a string field: absent, null or ""."""
    return value is None or value == ""


def _containers(spec: dict[str, Any], keys: tuple[str, ...]) -> list[tuple[dict[str, Any], Path]]:
    """The containers of ``keys`` (in that order) with their paths."""
    out: list[tuple[dict[str, Any], Path]] = []
    for key in keys:
        for i, ctr in enumerate(as_list(spec.get(key))):
            if isinstance(ctr, dict):
                out.append((ctr, (*_SPEC, key, i)))
    return out


_ALL = ("initContainers", "containers", "ephemeralContainers")  # VisitContainersWithPath


# ---------------------------------------------------------------------------------------------
# Defaults, conversion and PrepareForCreate


def _set_pod_defaults(spec: dict[str, Any]) -> None:
    """``SetDefaults_Pod`` and ``SetDefaults_PodSpec``, then the volumes' and containers'
    defaults. The resource defaults of ``SetDefaults_Pod`` are ``resources.set_defaults``; its
    hostNetwork port defaults are part of ``containers.set_defaults``."""
    resources.set_defaults(spec)
    if spec.get("enableServiceLinks") is None:
        spec["enableServiceLinks"] = True
    if _unset(spec.get("dnsPolicy")):
        spec["dnsPolicy"] = "ClusterFirst"
    if _unset(spec.get("restartPolicy")):
        spec["restartPolicy"] = "Always"
    if spec.get("securityContext") is None:
        spec["securityContext"] = {}
    if spec.get("terminationGracePeriodSeconds") is None:
        spec["terminationGracePeriodSeconds"] = DEFAULT_TERMINATION_GRACE_PERIOD_SECONDS
    if _unset(spec.get("schedulerName")):
        spec["schedulerName"] = DEFAULT_SCHEDULER_NAME
    volumes.set_defaults(spec)
    containers.set_defaults(spec)


def _convert(meta: dict[str, Any], spec: dict[str, Any]) -> None:
    """What ``Convert_v1_Pod_To_core_Pod`` changes: init-container annotations dropped, a
    negative grace period read as 1, ``serviceAccount`` as the alias of ``serviceAccountName``."""
    annotations = meta.get("annotations")
    # one pass over the pod's keys finds whether any is there (the usual answer: none)
    if isinstance(annotations, dict) and not _INIT_CONTAINER_ANNOTATION_SET.isdisjoint(annotations):
        for key in _INIT_CONTAINER_ANNOTATIONS:
            annotations.pop(key, None)
    grace = opt_int(spec.get("terminationGracePeriodSeconds"))
    if grace is not None and grace < 0:
        spec["terminationGracePeriodSeconds"] = 1
    if _unset(spec.get("serviceAccountName")) and isinstance(spec.get("serviceAccount"), str):
        spec["serviceAccountName"] = spec["serviceAccount"]


def _apparmor_field_for_annotation(annotation: str) -> dict[str, Any] | None:
    """``ApparmorFieldForAnnotation``."""
    if annotation == "unconfined":
        return {"type": "Unconfined"}
    if annotation == "runtime/default":
        return {"type": "RuntimeDefault"}
    if annotation.startswith("localhost/") and len(annotation) > len("localhost/"):
        return {"type": "Localhost", "localhostProfile": annotation[len("localhost/") :]}
    return None


def _any_key_with(annotations: dict[str, Any], prefix: str | tuple[str, ...]) -> bool:
    """Some annotation key starts with ``prefix``: else no container's annotation under it
    (``prefix + name``) can be there, and the per-container lookups are skipped."""
    # a loop, not any() over a generator: that costs more for a pod's few annotations
    for key in annotations:  # noqa: SIM110
        if isinstance(key, str) and key.startswith(prefix):
            return True
    return False


def _apply_apparmor_version_skew(meta: dict[str, Any], spec: dict[str, Any]) -> None:
    """``applyAppArmorVersionSkew``: a container's deprecated AppArmor annotation becomes its
    ``appArmorProfile`` field when it has none and the value differs from the pod's."""
    annotations = as_dict(meta.get("annotations"))
    if not _any_key_with(annotations, APPARMOR_CONTAINER_ANNOTATION_PREFIX):
        return  # the usual case first: no AppArmor annotation, nothing to apply
    if as_dict(spec.get("os")).get("name") == "windows":
        return
    pod_profile = as_dict(spec.get("securityContext")).get("appArmorProfile")
    for ctr, _ in _containers(spec, _ALL):
        annotation = annotations.get(APPARMOR_CONTAINER_ANNOTATION_PREFIX + str_of(ctr.get("name")))
        if not isinstance(annotation, str):
            continue
        sc = ctr.get("securityContext")
        if isinstance(sc, dict) and sc.get("appArmorProfile") is not None:
            continue
        new = _apparmor_field_for_annotation(annotation)
        if new is not None and new != pod_profile:
            if not isinstance(sc, dict):
                sc = ctr["securityContext"] = {}
            sc["appArmorProfile"] = new


def prepare_pod(pod: Any, namespace: str = "default", *, copy: bool = True) -> dict[str, Any]:
    """A copy of ``pod`` as the server validates it: named, in the request's namespace when it
    names none, defaulted, converted and prepared for create. ``copy=False``: ``pod`` itself,
    changed in place (for a pod the caller owns and throws away, e.g. ``pods.operator_pods``')."""
    out: dict[str, Any] = (_copy(pod) if copy else pod) if isinstance(pod, dict) else {}
    meta = out.get("metadata")
    if not isinstance(meta, dict):
        meta = out["metadata"] = {}
    spec = out.get("spec")
    if not isinstance(spec, dict):
        spec = out["spec"] = {}
    generate_name = meta.get("generateName")
    if _unset(meta.get("name")) and isinstance(generate_name, str) and generate_name:
        meta["name"] = generate_name[:_MAX_GENERATED_NAME_LENGTH] + _GENERATED_SUFFIX
    if _unset(meta.get("namespace")):
        meta["namespace"] = namespace
    meta["generation"] = 1  # PrepareForCreate
    meta.pop("managedFields", None)  # the field manager writes its own on create
    _set_pod_defaults(spec)
    _convert(meta, spec)
    if _unset(spec.get("serviceAccountName")):  # the ServiceAccount admission plugin
        spec["serviceAccountName"] = DEFAULT_SERVICE_ACCOUNT
    volumes.mount_service_account_token(spec)  # the same plugin's token volume and mounts
    if "hostnameOverride" in spec and not release.gate("HostnameOverride"):
        del spec["hostnameOverride"]  # dropDisabledFields (the gate is on from 1.35)
    if "schedulingGroup" in spec and not release.gate("GenericWorkload"):
        # dropDisabledFields from 1.36, off at every minor of the window (1.34 and 1.35 have no
        # such field: their servers drop it as unknown), so validateSchedulingGroup never runs
        del spec["schedulingGroup"]
    _apply_apparmor_version_skew(meta, spec)
    return out


# ---------------------------------------------------------------------------------------------
# ValidatePodSpecificAnnotations


_JSON_KINDS = ((bool, "bool"), (str, "string"), (int, "number"), (float, "number"))
_TOLERATION_FIELDS = {  # core.Toleration (no json tags: names match case-insensitively)
    "key": ("Key", "string"),
    "operator": ("Operator", "string"),
    "value": ("Value", "string"),
    "effect": ("Effect", "string"),
    "tolerationseconds": ("TolerationSeconds", "int64"),
}


def _json_kind(value: Any) -> str:
    """The JSON type name Go's decoder puts in an UnmarshalTypeError."""
    if isinstance(value, dict):
        return "object"
    if isinstance(value, list):
        return "array"
    for kind, name in _JSON_KINDS:
        if isinstance(value, kind):
            return name
    return "null"


def _decode_tolerations(text: str) -> tuple[list[dict[str, Any]], str]:
    """``json.Unmarshal`` of the annotation into ``[]core.Toleration``: the tolerations (with
    the v1 field names) and Go's error text ("" when none; a type error keeps decoding, so the
    first one is reported, as Go does). Syntax errors first, as ``checkValid`` finds them
    (:mod:`tfjob_kit.podcheck.gojson`)."""
    syntax = gojson.syntax_error(text)
    if syntax is not None:
        return [], syntax
    try:
        data = json.loads(text)
    except ValueError as exc:  # not reached: Python's decoder takes what Go's scanner takes
        return [], str(exc)
    except RecursionError:
        # Go takes nesting up to 10,000 deep; only three levels reach a type (the list, a
        # toleration, a field's value), so the deeper ones are emptied.
        data = json.loads(gojson.flatten_below(text, 3))
    if data is None:
        return [], ""
    if not isinstance(data, list):
        return (
            [],
            f"json: cannot unmarshal {_json_kind(data)} into Go value of type []core.Toleration",
        )
    error = ""
    out: list[dict[str, Any]] = []
    for item in data:
        toleration: dict[str, Any] = {}
        out.append(toleration)
        if item is None:
            continue
        if not isinstance(item, dict):
            error = error or (
                f"json: cannot unmarshal {_json_kind(item)} into Go value of type core.Toleration"
            )
            continue
        for key, value in item.items():
            known = _TOLERATION_FIELDS.get(key.lower())
            if known is None or value is None:
                continue
            go_name, go_type = known
            fits = (
                isinstance(value, str)
                if go_type == "string"
                else isinstance(value, int) and not isinstance(value, bool)
            )
            if fits:
                toleration[key.lower() if go_type == "string" else "tolerationSeconds"] = value
            elif not error:
                kind = _json_kind(value)
                if kind == "number" and go_type == "int64":
                    kind = f"number {value}"
                error = (
                    f"json: cannot unmarshal {kind} into Go struct field Toleration.{go_name} "
                    f"of type {go_type}"
                )
    return out, error


def _validate_tolerations_annotation(annotations: dict[str, Any], path: Path) -> list[FieldError]:
    """``ValidateTolerationsInPodAnnotations``: the annotation is a JSON list of tolerations."""
    tolerations, error = _decode_tolerations(annotations[TOLERATIONS_ANNOTATION])
    if error:
        origin = "ValidateTolerationsInPodAnnotations"
        return [invalid(path, TOLERATIONS_ANNOTATION, error, origin)]
    if not tolerations:
        return []
    return scheduling.validate_tolerations(tolerations, (*path, TOLERATIONS_ANNOTATION))


def _validate_deletion_cost(annotations: dict[str, Any], path: Path) -> list[FieldError]:
    """``GetDeletionCostFromPodAnnotations``: a 32-bit decimal integer, no '+', no leading 0."""
    if POD_DELETION_COST_ANNOTATION not in annotations:
        return []
    value = annotations[POD_DELETION_COST_ANNOTATION]
    text = str_of(value)
    ok = bool(text) and (text[0] == "-" or text == "0" or "1" <= text[0] <= "9")
    if ok:
        digits = text[1:] if text[0] == "-" else text
        ok = digits.isascii() and digits.isdigit() and -(2**31) <= int(text) <= MAX_INT32
    if ok:
        return []
    return [
        invalid(
            (*path, Key(POD_DELETION_COST_ANNOTATION)),
            text,
            "must be a 32bit integer",
            "ValidatePodSpecificAnnotations",
        )
    ]


def validate_seccomp_profile_annotation(value: str, path: Path) -> list[FieldError]:
    """``ValidateSeccompProfile``: an annotation's seccomp profile."""
    if value in ("runtime/default", "docker/default", "unconfined"):
        return []
    if value.startswith("localhost/"):
        return volume_paths.validate_local_descending_path(value[len("localhost/") :], path)
    return [invalid(path, value, "must be a valid seccomp profile", "ValidateSeccompProfile")]


def _validate_apparmor_annotations(
    annotations: dict[str, Any], spec: dict[str, Any], path: Path
) -> list[FieldError]:
    """``ValidateAppArmorPodAnnotations``: the container exists, the profile is well formed."""
    origin = "ValidateAppArmorPodAnnotations"
    names: set[str] | None = None  # the containers' names, once an AppArmor key needs them
    errs: list[FieldError] = []
    for key, value in annotations.items():
        if not key.startswith(APPARMOR_CONTAINER_ANNOTATION_PREFIX):
            continue
        if names is None:
            names = {str_of(ctr.get("name")) for ctr, _ in _containers(spec, _ALL)}
        name = key[len(APPARMOR_CONTAINER_ANNOTATION_PREFIX) :]
        if name not in names:
            errs.append(invalid((*path, Key(key)), name, "container not found", origin))
        profile = str_of(value)
        if profile not in ("", "runtime/default", "unconfined") and not profile.startswith(
            "localhost/"
        ):
            detail = f"invalid AppArmor profile name: {json.dumps(profile)}"
            errs.append(invalid((*path, Key(key)), profile, detail, origin))
    return errs


# the keys (and key prefixes) that ValidatePodSpecificAnnotations reads
_POD_SPECIFIC_ANNOTATIONS = (
    MIRROR_POD_ANNOTATION,
    TOLERATIONS_ANNOTATION,
    POD_DELETION_COST_ANNOTATION,
    SECCOMP_POD_ANNOTATION,
    SECCOMP_CONTAINER_ANNOTATION_PREFIX,
    APPARMOR_CONTAINER_ANNOTATION_PREFIX,
)


def validate_pod_specific_annotations(
    annotations: Any, spec: dict[str, Any], path: Path
) -> list[FieldError]:
    """``ValidatePodSpecificAnnotations`` (``path`` is ``metadata.annotations``)."""
    values = as_dict(annotations)
    for key in values:
        if key.startswith(_POD_SPECIFIC_ANNOTATIONS):
            break
    else:  # no key that a check below reads (a key not a str raises here as it does below)
        return []
    errs: list[FieldError] = []
    if MIRROR_POD_ANNOTATION in values and _unset(spec.get("nodeName")):
        errs.append(
            invalid(
                (*path, Key(MIRROR_POD_ANNOTATION)),
                str_of(values[MIRROR_POD_ANNOTATION]),
                "must set spec.nodeName if mirror pod annotation is set",
                "ValidatePodSpecificAnnotations",
            )
        )
    if str_of(values.get(TOLERATIONS_ANNOTATION)):
        errs.extend(_validate_tolerations_annotation(values, path))
    errs.extend(_validate_deletion_cost(values, path))
    if isinstance(values.get(SECCOMP_POD_ANNOTATION), str):
        errs.extend(
            validate_seccomp_profile_annotation(
                values[SECCOMP_POD_ANNOTATION], (*path, SECCOMP_POD_ANNOTATION)
            )
        )
    for key, value in values.items():
        if key.startswith(SECCOMP_CONTAINER_ANNOTATION_PREFIX) and isinstance(value, str):
            errs.extend(validate_seccomp_profile_annotation(value, (*path, key)))
    errs.extend(_validate_apparmor_annotations(values, spec, path))
    return errs


# ---------------------------------------------------------------------------------------------
# ValidatePodSpec: the pod-level fields


def _validate_resource_claims(
    meta: dict[str, Any], spec: dict[str, Any], path: Path
) -> list[FieldError]:
    """``validatePodResourceClaims``."""
    claims = as_list(spec.get("resourceClaims"))
    if not claims:
        return []
    origin = "validatePodResourceClaim"
    errs: list[FieldError] = []
    seen: set[str] = set()
    mirror = MIRROR_POD_ANNOTATION in as_dict(meta.get("annotations"))
    for i, claim in enumerate(claims):
        if mirror:
            errs.append(forbidden(("",), "static pods do not support resource claims", origin))
            continue
        if not isinstance(claim, dict):
            continue
        at = (*path, i)
        name = str_of(claim.get("name"))
        if not name:
            errs.append(required((*at, "name"), origin=origin))
        elif name in seen:
            errs.append(duplicate((*at, "name"), name, origin))
        else:
            errs.extend(validate_dns1123_label(name, (*at, "name")))
            seen.add(name)
        claim_name = claim.get("resourceClaimName")
        template_name = claim.get("resourceClaimTemplateName")
        value = {  # the internal core.PodResourceClaim as json.Marshal prints it (no json tags)
            "Name": name,
            "ResourceClaimName": claim_name if isinstance(claim_name, str) else None,
            "ResourceClaimTemplateName": template_name if isinstance(template_name, str) else None,
        }
        if claim_name is not None and template_name is not None:
            detail = (
                "at most one of `resourceClaimName` or `resourceClaimTemplateName` may be specified"
            )
            errs.append(invalid(at, value, detail, origin))
        if claim_name is None and template_name is None:
            detail = "must specify one of: `resourceClaimName`, `resourceClaimTemplateName`"
            errs.append(invalid(at, value, detail, origin))
        for key, given in (
            ("resourceClaimName", claim_name),
            ("resourceClaimTemplateName", template_name),
        ):
            if isinstance(given, str):
                errs.extend(
                    invalid((*at, key), given, msg, origin)
                    for msg in name_is_dns_subdomain(given, False)
                )
    return errs


def _validate_host_network_deps(spec: dict[str, Any]) -> list[FieldError]:
    """``validatePodHostNetworkDeps``: with hostNetwork, a pod's hostPort equals containerPort."""
    if spec.get("hostNetwork") is not True:
        return []
    errs: list[FieldError] = []
    for i, ctr in enumerate(as_list(spec.get("containers"))):
        if not isinstance(ctr, dict):
            continue
        for j, port in enumerate(as_list(ctr.get("ports"))):
            if not isinstance(port, dict):
                continue
            host_port = opt_int(port.get("hostPort")) or 0
            if host_port != (opt_int(port.get("containerPort")) or 0):
                errs.append(
                    invalid(
                        (*_SPEC, "containers", i, "ports", j, "hostPort"),
                        host_port,
                        "must match `containerPort` when `hostNetwork` is true",
                        "validatePodHostNetworkDeps",
                    )
                )
    return errs


def _validate_choice(
    value: Any, path: Path, valid: tuple[str, ...], origin: str
) -> list[FieldError]:
    """The Required / NotSupported switch of validateRestartPolicy and friends."""
    if not isinstance(value, str) or value in valid:
        return []
    if value == "":
        return [required(path, origin=origin)]
    return [not_supported(path, value, valid, origin)]


def _validate_dns_config(spec: dict[str, Any], path: Path) -> list[FieldError]:
    """``validatePodDNSConfig`` (RelaxedDNSSearchValidation on)."""
    origin = "validatePodDNSConfig"
    config = spec.get("dnsConfig")
    if spec.get("dnsPolicy") == "None":
        if not isinstance(config, dict):
            detail = "must provide `dnsConfig` when `dnsPolicy` is None"
            return [required(path, detail, origin)]
        if not as_list(config.get("nameservers")):
            detail = "must provide at least one DNS nameserver when `dnsPolicy` is None"
            return [required((*path, "nameservers"), detail, origin)]
    if not isinstance(config, dict):
        return []
    errs: list[FieldError] = []
    nameservers = [ns for ns in as_list(config.get("nameservers")) if isinstance(ns, str)]
    if len(nameservers) > MAX_DNS_NAMESERVERS:
        detail = f"must not have more than {MAX_DNS_NAMESERVERS} nameservers"
        errs.append(invalid((*path, "nameservers"), nameservers, detail, origin))
    for i, ns in enumerate(as_list(config.get("nameservers"))):
        if isinstance(ns, str):
            errs.extend(is_valid_ip_for_legacy_field((*path, "nameservers", i), ns))
    searches = [s for s in as_list(config.get("searches")) if isinstance(s, str)]
    if len(searches) > MAX_DNS_SEARCH_PATHS:
        detail = f"must not have more than {MAX_DNS_SEARCH_PATHS} search paths"
        errs.append(invalid((*path, "searches"), searches, detail, origin))
    if len(" ".join(searches).encode()) > MAX_DNS_SEARCH_LIST_CHARS:
        detail = (
            f"must not have more than {MAX_DNS_SEARCH_LIST_CHARS} characters (including spaces) "
            "in the search list"
        )
        errs.append(invalid((*path, "searches"), searches, detail, origin))
    for i, search in enumerate(as_list(config.get("searches"))):
        if isinstance(search, str) and search != ".":
            errs.extend(
                validate_dns1123_subdomain_with_underscore(
                    search.removesuffix("."), (*path, "searches", i)
                )
            )
    for i, option in enumerate(as_list(config.get("options"))):
        if isinstance(option, dict) and not str_of(option.get("name")):
            errs.append(required((*path, "options", i), "must not be empty", origin))
    return errs


def _validate_readiness_gates(gates: Any, path: Path) -> list[FieldError]:
    """``validateReadinessGates``: each conditionType a qualified name."""
    errs: list[FieldError] = []
    for i, gate in enumerate(as_list(gates)):
        if isinstance(gate, dict):
            errs.extend(
                validate_qualified_name(
                    str_of(gate.get("conditionType")), (*path, i, "conditionType")
                )
            )
    return errs


def _validate_scheduling_gates(gates: Any, path: Path) -> list[FieldError]:
    """``validateSchedulingGates``: qualified names, no duplicates."""
    errs: list[FieldError] = []
    seen: set[str] = set()
    for i, gate in enumerate(as_list(gates)):
        if not isinstance(gate, dict):
            continue
        name = str_of(gate.get("name"))
        errs.extend(validate_qualified_name(name, (*path, i)))
        if name in seen:
            errs.append(duplicate((*path, i), name, "validateSchedulingGates"))
        seen.add(name)
    return errs


def _validate_host_aliases(aliases: Any, path: Path) -> list[FieldError]:
    """``ValidateHostAliases``: an IP (legacy parsing) and DNS-subdomain hostnames."""
    errs: list[FieldError] = []
    for i, alias in enumerate(as_list(aliases)):
        if not isinstance(alias, dict):
            continue
        errs.extend(is_valid_ip_for_legacy_field((*path, i, "ip"), str_of(alias.get("ip"))))
        for j, hostname in enumerate(as_list(alias.get("hostnames"))):
            if isinstance(hostname, str):
                errs.extend(validate_dns1123_subdomain(hostname, (*path, i, "hostnames", j)))
    return errs


MAX_HOSTNAME_OVERRIDE_LENGTH = 64


def _validate_pod_host_name(spec: dict[str, Any], path: Path) -> list[FieldError]:
    """``validatePodHostName``: a hostnameOverride (kept from 1.35, HostnameOverride on) is a
    DNS subdomain of at most 64 bytes, without setHostnameAsFQDN or hostNetwork."""
    value = spec.get("hostnameOverride")
    if not isinstance(value, str):
        return []
    origin = "validatePodHostName"
    at = (*path, "hostnameOverride")
    errs: list[FieldError] = []
    if spec.get("setHostnameAsFQDN") is True:
        errs.append(forbidden(at, "may not be specified when setHostnameAsFQDN is true", origin))
    if spec.get("hostNetwork") is True:
        errs.append(forbidden(at, "may not be specified when hostNetwork is true", origin))
    if byte_len(value) > MAX_HOSTNAME_OVERRIDE_LENGTH:
        detail = f"may not be more than {MAX_HOSTNAME_OVERRIDE_LENGTH} bytes"
        errs.append(too_long(at, detail, origin))
    errs.extend(validate_dns1123_subdomain(value, at))
    return errs


def _named(spec: dict[str, Any], key: str, origin: str) -> list[FieldError]:
    """A name field checked when set, as ``NameIsDNSSubdomain`` does."""
    value = str_of(spec.get(key))
    if not value:
        return []
    return [
        invalid((*_SPEC, key), value, msg, origin) for msg in name_is_dns_subdomain(value, False)
    ]


_WINDOWS_POD_FORBIDDEN = (  # validateWindows: pod security context fields, in Go's order
    ("appArmorProfile", ("securityContext", "appArmorProfile")),
    ("seLinuxOptions", ("securityContext", "seLinuxOptions")),
)
_WINDOWS_POD_FORBIDDEN_LATER = (
    ("seccompProfile", ("securityContext", "seccompProfile")),
    ("fsGroup", ("securityContext", "fsGroup")),
    ("fsGroupChangePolicy", ("securityContext", "fsGroupChangePolicy")),
)
_WINDOWS_POD_FORBIDDEN_LAST = (
    ("runAsUser", ("securityContext", "runAsUser")),
    ("runAsGroup", ("securityContext", "runAsGroup")),
    ("supplementalGroups", ("securityContext", "supplementalGroups")),
    ("supplementalGroupsPolicy", ("securityContext", "supplementalGroupsPolicy")),
    ("seLinuxChangePolicy", ("securityContext", "seLinuxChangePolicy")),
)
_WINDOWS_CONTAINER_FORBIDDEN = (
    "appArmorProfile",
    "seLinuxOptions",
    "seccompProfile",
    "capabilities",
    "readOnlyRootFilesystem",
    "privileged",
    "allowPrivilegeEscalation",
    "procMount",
    "runAsUser",
    "runAsGroup",
)
_WINDOWS_DETAIL = "cannot be set for a windows pod"


def _validate_windows(spec: dict[str, Any]) -> list[FieldError]:
    """``validateWindows``: what a pod with ``os.name: windows`` may not set."""
    origin = "validateWindows"
    errs: list[FieldError] = []
    sc = as_dict(spec.get("securityContext"))

    def forbid(present: bool, path: Path) -> None:
        if present:
            errs.append(forbidden(path, _WINDOWS_DETAIL, origin))

    def forbid_host_fields() -> None:
        forbid(spec.get("hostUsers") is not None, (*_SPEC, "hostUsers"))
        forbid(spec.get("hostPID") is True, (*_SPEC, "hostPID"))
        forbid(spec.get("hostIPC") is True, (*_SPEC, "hostIPC"))

    # Up to 1.36 the internal pod security context holds hostUsers, hostPID, hostIPC and
    # shareProcessNamespace, checked among its fields; from 1.37 they are spec fields, checked
    # after them.
    moved = release.at_least("1.37")
    for key, rel in _WINDOWS_POD_FORBIDDEN:
        forbid(sc.get(key) is not None, (*_SPEC, *rel))
    if not moved:
        forbid_host_fields()
    for key, rel in _WINDOWS_POD_FORBIDDEN_LATER:
        forbid(sc.get(key) is not None, (*_SPEC, *rel))
    forbid(bool(as_list(sc.get("sysctls"))), (*_SPEC, "securityContext", "sysctls"))
    if not moved:
        forbid(spec.get("shareProcessNamespace") is not None, (*_SPEC, "shareProcessNamespace"))
    for key, rel in _WINDOWS_POD_FORBIDDEN_LAST:
        forbid(sc.get(key) is not None, (*_SPEC, *rel))
    if moved:
        forbid_host_fields()
        forbid(spec.get("shareProcessNamespace") is not None, (*_SPEC, "shareProcessNamespace"))
    for ctr, ctr_path in _containers(spec, _ALL):
        csc = ctr.get("securityContext")
        if not isinstance(csc, dict):
            continue
        for key in _WINDOWS_CONTAINER_FORBIDDEN:
            forbid(csc.get(key) is not None, (*ctr_path, "securityContext", key))
    return errs


def _validate_linux(spec: dict[str, Any]) -> list[FieldError]:
    """``validateLinux``: a linux pod may not set Windows options."""
    origin = "validateLinux"
    detail = "windows options cannot be set for a linux pod"
    errs: list[FieldError] = []
    if as_dict(spec.get("securityContext")).get("windowsOptions") is not None:
        errs.append(forbidden((*_SPEC, "securityContext", "windowsOptions"), detail, origin))
    for ctr, ctr_path in _containers(spec, _ALL):
        if as_dict(ctr.get("securityContext")).get("windowsOptions") is not None:
            errs.append(forbidden((*ctr_path, "securityContext", "windowsOptions"), detail, origin))
    return errs


def _validate_os(spec: dict[str, Any]) -> list[FieldError]:
    """``validateOS``, then what the named OS forbids."""
    os_ = spec.get("os")
    if not isinstance(os_, dict):
        return []
    name = os_.get("name")
    name = "" if name is None else name
    if not isinstance(name, str):
        return []
    if not name:
        return [required((*_SPEC, "os", "name"), origin="validateOS")]
    if name not in ("linux", "windows"):
        return [not_supported((*_SPEC, "os"), name, ["linux", "windows"], "validateOS")]
    return _validate_linux(spec) if name == "linux" else _validate_windows(spec)


_RESTART_POLICIES = ("Always", "OnFailure", "Never")
_DNS_POLICIES = ("ClusterFirstWithHostNet", "ClusterFirst", "Default", "None")
_PREEMPTION_POLICIES = ("PreemptLowerPriority", "Never")


def validate_pod_spec(meta: dict[str, Any], spec: dict[str, Any]) -> list[FieldError]:
    """``ValidatePodSpec`` of a prepared pod, in Go's order. A check of an optional field that
    is absent is not called: it finds nothing there."""
    path = _SPEC
    errs: list[FieldError] = []
    if spec.get("terminationGracePeriodSeconds") is None:
        errs.append(required((*path, "terminationGracePeriodSeconds"), origin="ValidatePodSpec"))
    vols, vol_errs = volumes.validate_volumes(spec, path, pod_name=str_of(meta.get("name")))
    errs.extend(vol_errs)
    claims = resources.pod_claim_names(spec)
    if spec.get("resourceClaims"):
        errs.extend(_validate_resource_claims(meta, spec, (*path, "resourceClaims")))
    errs.extend(containers.validate_containers(spec, vols, claims, path))
    errs.extend(resources.validate_pod_resources(spec, path))
    if spec.get("hostNetwork") is True:
        errs.extend(_validate_host_network_deps(spec))
    restart_policy = spec.get("restartPolicy")
    if restart_policy not in _RESTART_POLICIES:
        errs.extend(
            _validate_choice(
                restart_policy,
                (*path, "restartPolicy"),
                _RESTART_POLICIES,
                "validateRestartPolicy",
            )
        )
    dns_policy = spec.get("dnsPolicy")
    if dns_policy not in _DNS_POLICIES:
        errs.extend(
            _validate_choice(dns_policy, (*path, "dnsPolicy"), _DNS_POLICIES, "validateDNSPolicy")
        )
    errs.extend(scheduling.validate_scheduling(spec, path, as_dict(meta.get("labels"))))
    errs.extend(security.validate_pod_security_context(spec, path))
    # validateImagePullSecrets ("only name may be set") cannot fail for a v1 pod: name is the
    # only field of a v1 LocalObjectReference, and decoding drops the others.
    if dns_policy == "None" or spec.get("dnsConfig") is not None:
        errs.extend(_validate_dns_config(spec, (*path, "dnsConfig")))
    gates = spec.get("readinessGates")
    if gates:
        errs.extend(_validate_readiness_gates(gates, (*path, "readinessGates")))
    gates = spec.get("schedulingGates")
    if gates:
        errs.extend(_validate_scheduling_gates(gates, (*path, "schedulingGates")))
    errs.extend(security.validate_windows_host_process_pod(spec, path))
    if spec.get("hostUsers") is False:  # else validateHostUsers finds nothing
        errs.extend(security.validate_host_users(spec, path))
    if spec.get("hostnameOverride") is not None:  # else validatePodHostName finds nothing
        errs.extend(_validate_pod_host_name(spec, path))
    service_account = str_of(spec.get("serviceAccountName"))
    if service_account and service_account not in VALID_DNS1123_SUBDOMAINS:  # else remembered
        msgs = validate_service_account_name(service_account, False)
        if msgs:
            errs.extend(
                invalid((*path, "serviceAccountName"), service_account, msg, "ValidatePodSpec")
                for msg in msgs
            )
    if spec.get("nodeName"):
        errs.extend(_named(spec, "nodeName", "ValidatePodSpec"))
    deadline = opt_int(spec.get("activeDeadlineSeconds"))
    if deadline is not None and not 1 <= deadline <= MAX_INT32:
        errs.append(
            invalid(
                (*path, "activeDeadlineSeconds"),
                deadline,
                inclusive_range_error(1, MAX_INT32),
                "ValidatePodSpec",
            )
        )
    for key in ("hostname", "subdomain"):
        value = str_of(spec.get(key))
        if value:
            errs.extend(validate_dns1123_label(value, (*path, key)))
    aliases = spec.get("hostAliases")
    if aliases:
        errs.extend(_validate_host_aliases(aliases, (*path, "hostAliases")))
    if spec.get("priorityClassName"):
        errs.extend(_named(spec, "priorityClassName", "ValidatePodSpec"))
    runtime_class = spec.get("runtimeClassName")
    if isinstance(runtime_class, str):
        errs.extend(
            invalid((*path, "runtimeClassName"), runtime_class, msg, "ValidateRuntimeClassName")
            for msg in name_is_dns_subdomain(runtime_class, False)
        )
    preemption = spec.get("preemptionPolicy")
    if preemption is not None:
        errs.extend(
            _validate_choice(
                preemption,
                (*path, "preemptionPolicy"),
                _PREEMPTION_POLICIES,
                "ValidatePreemptionPolicy",
            )
        )
    if spec.get("os") is not None:
        errs.extend(_validate_os(spec))
    errs.extend(containers.validate_file_key_ref_volumes(spec, path))
    return errs


# ---------------------------------------------------------------------------------------------
# validatePodMetadataAndSpec and ValidatePodCreate


def _validate_projected_tokens_need_account(spec: dict[str, Any]) -> list[FieldError]:
    """A projected serviceAccountToken needs a serviceAccountName (validatePodMetadataAndSpec)."""
    if str_of(spec.get("serviceAccountName")):
        return []
    errs: list[FieldError] = []
    for vi, volume in enumerate(as_list(spec.get("volumes"))):
        projected = as_dict(volume).get("projected") if isinstance(volume, dict) else None
        if not isinstance(projected, dict):
            continue
        for si, source in enumerate(as_list(projected.get("sources"))):
            if isinstance(source, dict) and source.get("serviceAccountToken") is not None:
                errs.append(
                    forbidden(
                        (*_SPEC, "volumes", vi, "projected", "sources", si, "serviceAccountToken"),
                        "must not be specified when serviceAccountName is not set",
                        "validatePodMetadataAndSpec",
                    )
                )
    return errs


def _seccomp_match(annotation: str, profile: Any, path: Path) -> list[FieldError]:
    """``validateSeccompAnnotationsAndFieldsMatch``."""
    if not isinstance(profile, dict):
        return []
    origin = "validateSeccompAnnotationsAndFieldsMatch"
    kind = profile.get("type")
    type_error = [
        forbidden((*path, "type"), "seccomp type in annotation and field must match", origin)
    ]
    if kind == "Unconfined" and annotation != "unconfined":
        return type_error
    if kind == "RuntimeDefault" and annotation not in ("runtime/default", "docker/default"):
        return type_error
    if kind == "Localhost":
        if not annotation.startswith("localhost/"):
            return type_error
        if profile.get("localhostProfile") != annotation[len("localhost/") :]:
            return [
                forbidden(
                    (*path, "localhostProfile"),
                    "seccomp profile in annotation and field must match",
                    origin,
                )
            ]
    return []


_FIELD_MATCH_ANNOTATIONS = (
    SECCOMP_POD_ANNOTATION,
    SECCOMP_CONTAINER_ANNOTATION_PREFIX,
    APPARMOR_CONTAINER_ANNOTATION_PREFIX,
)


def _validate_seccomp_annotations_and_fields(
    annotations: dict[str, Any], spec: dict[str, Any]
) -> list[FieldError]:
    """``validateSeccompAnnotationsAndFields``: annotation and field agree where both are set."""
    errs: list[FieldError] = []
    pod_profile = as_dict(spec.get("securityContext")).get("seccompProfile")
    pod_annotation = annotations.get(SECCOMP_POD_ANNOTATION)
    if pod_profile is not None and isinstance(pod_annotation, str):
        errs.extend(
            _seccomp_match(
                pod_annotation, pod_profile, (*_SPEC, "securityContext", "seccompProfile")
            )
        )
    if not _any_key_with(annotations, SECCOMP_CONTAINER_ANNOTATION_PREFIX):
        return errs
    for ctr, ctr_path in _containers(spec, _ALL):
        profile = as_dict(ctr.get("securityContext")).get("seccompProfile")
        if profile is None:
            continue
        annotation = annotations.get(SECCOMP_CONTAINER_ANNOTATION_PREFIX + str_of(ctr.get("name")))
        if isinstance(annotation, str):
            errs.extend(
                _seccomp_match(
                    annotation, profile, (*ctr_path, "securityContext", "seccompProfile")
                )
            )
    return errs


def _validate_apparmor_annotations_and_fields(
    annotations: dict[str, Any], spec: dict[str, Any]
) -> list[FieldError]:
    """``validateAppArmorAnnotationsAndFieldsMatchOnCreate``."""
    if as_dict(spec.get("os")).get("name") == "windows":
        return []
    if not _any_key_with(annotations, APPARMOR_CONTAINER_ANNOTATION_PREFIX):
        return []
    origin = "validateAppArmorAnnotationsAndFieldsMatchOnCreate"
    errs: list[FieldError] = []
    pod_profile = as_dict(spec.get("securityContext")).get("appArmorProfile")
    for ctr, ctr_path in _containers(spec, _ALL):
        profile = as_dict(ctr.get("securityContext")).get("appArmorProfile")
        if profile is None:
            profile = pod_profile
        annotation = annotations.get(APPARMOR_CONTAINER_ANNOTATION_PREFIX + str_of(ctr.get("name")))
        if not isinstance(profile, dict) or not isinstance(annotation, str):
            continue
        path = (*ctr_path, "securityContext", "appArmorProfile")
        kind = profile.get("type")
        mismatch = (
            (kind == "Unconfined" and annotation != "unconfined")
            or (kind == "RuntimeDefault" and annotation != "runtime/default")
            or (kind == "Localhost" and not annotation.startswith("localhost/"))
        )
        if mismatch:
            errs.append(
                forbidden(
                    (*path, "type"), "apparmor type in annotation and field must match", origin
                )
            )
        elif (
            kind == "Localhost"
            and profile.get("localhostProfile") != annotation[len("localhost/") :]
        ):
            errs.append(
                forbidden(
                    (*path, "localhostProfile"),
                    "apparmor profile in annotation and field must match",
                    origin,
                )
            )
    return errs


def validate_prepared_pod(pod: dict[str, Any]) -> list[FieldError]:
    """``ValidatePodCreate`` of a pod :func:`prepare_pod` made."""
    meta = as_dict(pod.get("metadata"))
    spec = as_dict(pod.get("spec"))
    annotations = as_dict(meta.get("annotations"))
    errs = validate_object_meta(meta, _META, name_rule=name_is_dns_subdomain, kube_finalizers=True)
    errs.extend(validate_pod_specific_annotations(annotations, spec, (*_META, "annotations")))
    errs.extend(validate_pod_spec(meta, spec))
    errs.extend(_validate_projected_tokens_need_account(spec))
    grace = opt_int(spec.get("terminationGracePeriodSeconds"))
    if grace is not None and grace < 0 and release.at_least("1.37"):
        # validatePodMetadataAndSpec from 1.37 (SetDefaults_Pod has made a negative one 1)
        errs.extend(validate_nonnegative_field(grace, (*_SPEC, "terminationGracePeriodSeconds")))
    errs.extend(containers.validate_containers_only_for_pod(spec, _SPEC))
    if as_list(spec.get("ephemeralContainers")):
        errs.append(
            forbidden(
                (*_SPEC, "ephemeralContainers"), "cannot be set on create", "ValidatePodCreate"
            )
        )
    if str_of(spec.get("nodeName")) and as_list(spec.get("schedulingGates")):
        errs.append(
            forbidden(
                (*_SPEC, "nodeName"),
                "cannot be set until all schedulingGates have been cleared",
                "ValidatePodCreate",
            )
        )
    # both compare a field with an annotation that these keys start: none, nothing to compare
    if annotations and _any_key_with(annotations, _FIELD_MATCH_ANNOTATIONS):
        errs.extend(_validate_seccomp_annotations_and_fields(annotations, spec))
        errs.extend(_validate_apparmor_annotations_and_fields(annotations, spec))
    return errs


def validate_pod(pod: Any, *, namespace: str = "default", copy: bool = True) -> list[FieldError]:
    """What the API server's ``ValidatePodCreate`` returns for ``pod`` (a v1 Pod as parsed
    JSON), after defaulting it as the server does; ``namespace`` stands for the request's when
    the pod names none. ``copy=False`` defaults ``pod`` itself, in place (no copy): for a pod
    the caller owns and does not use again."""
    errs = validate_prepared_pod(prepare_pod(pod, namespace, copy=copy))
    return as_listed(errs)
