"""Containers and init containers: their defaults and what ``validateContainers`` and
``validateInitContainers`` (``pkg/apis/core/validation``) check, at Kubernetes 1.34 with its
default feature gates and the options a create gets (``GetValidationOptionsFromPodSpecAndMeta``
with no old pod):

- RelaxedEnvironmentVariableValidation is locked on: env names and prefixes are any printable
  ASCII but '='.
- SidecarContainers is on: an init container with ``restartPolicy: Always`` may have probes and
  a lifecycle; InPlacePodVerticalScaling is on, so a sidecar may have a ``resizePolicy``.
- PodLifecycleSleepActionAllowZero is locked on: a sleep of 0 seconds is accepted.
- EnvFiles, ContainerRestartRules and ContainerStopSignals are off (alpha): the server drops
  ``env[].valueFrom.fileKeyRef``, the containers' ``restartPolicy`` / ``restartPolicyRules``
  (an init container keeps ``restartPolicy: Always``) and ``lifecycle.stopSignal`` before it
  validates (``dropDisabledFields``); :func:`set_defaults` drops them as well.

The pod is the v1 JSON form; values of a wrong JSON type are skipped (the schema check reports
them). Every check names the Go function it mirrors in ``origin``.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from tfjob_kit import quantity
from tfjob_kit.podcheck import names, resources, security
from tfjob_kit.podcheck import volumes as volumes_module
from tfjob_kit.podcheck.errors import ErrorType, FieldError, Path, not_supported


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _dict(value: Any) -> dict[str, Any] | None:
    return value if isinstance(value, dict) else None


def _str(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _containers(spec: dict[str, Any], key: str) -> Iterator[tuple[int, dict[str, Any]]]:
    for i, ctr in enumerate(_list(spec.get(key))):
        if isinstance(ctr, dict):
            yield i, ctr


# ---------------------------------------------------------------------------------------------
# Defaults (SetObjectDefaults_Pod for containers, defaultHostNetworkPorts) and dropped fields

_DOMAIN_COMPONENT = r"(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])"
_DOMAIN_NAME = rf"{_DOMAIN_COMPONENT}(?:\.{_DOMAIN_COMPONENT})*"
_DOMAIN = rf"(?:{_DOMAIN_NAME}|\[[a-fA-F0-9:]+\])(?::[0-9]+)?"
_PATH_COMPONENT = r"[a-z0-9]+(?:(?:[._]|__|[-]+)[a-z0-9]+)*"
_NAME = rf"(?:{_DOMAIN}/)?{_PATH_COMPONENT}(?:/{_PATH_COMPONENT})*"
_TAG = r"[\w][\w.-]{0,127}"
_DIGEST = r"[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,}"
_REFERENCE_RE = re.compile(rf"({_NAME})(?::({_TAG}))?(?:@({_DIGEST}))?", re.ASCII)
_HEX64_RE = re.compile(r"[a-f0-9]{64}")


def image_tag(image: str) -> str:
    """The tag ``parsers.ParseImageName`` finds: "latest" where the reference has neither tag
    nor digest, "" where it does not parse (``dockerref.ParseNormalizedNamed``)."""
    if _HEX64_RE.fullmatch(image):
        return ""
    slash = image.find("/")
    remainder = image
    if slash != -1:
        first = image[:slash]
        if "." in first or ":" in first or first == "localhost" or first.lower() != first:
            remainder = image[slash + 1 :]
    colon = remainder.find(":")
    remote = remainder[:colon] if colon != -1 else remainder
    if remote.lower() != remote:
        return ""
    match = _REFERENCE_RE.fullmatch(image)
    if match is None or len(match.group(1)) > 255:
        return ""
    tag, digest = match.group(2) or "", match.group(3) or ""
    if digest:
        algorithm, _, hexpart = digest.partition(":")
        lengths = {"sha256": 64, "sha384": 96, "sha512": 128}
        if (
            algorithm not in lengths
            or len(hexpart) != lengths[algorithm]
            or hexpart.lower() != hexpart
        ):
            return ""
    return tag if tag or digest else "latest"


def _default_http_get(handler: Any) -> None:
    http = _dict(handler.get("httpGet")) if isinstance(handler, dict) else None
    if http is not None:
        if not http.get("path"):
            http["path"] = "/"
        if not http.get("scheme"):
            http["scheme"] = "HTTP"


def _default_probe(probe: Any) -> None:
    if not isinstance(probe, dict):
        return
    for key, value in (
        ("timeoutSeconds", 1),
        ("periodSeconds", 10),
        ("successThreshold", 1),
        ("failureThreshold", 3),
    ):
        current = probe.get(key)
        if current is None or (_int(current) == 0):
            probe[key] = value
    _default_http_get(probe)
    grpc = _dict(probe.get("grpc"))
    if grpc is not None and grpc.get("service") is None:
        grpc["service"] = ""


def _default_container(ctr: dict[str, Any], host_network: bool) -> None:
    if not ctr.get("imagePullPolicy"):
        ctr["imagePullPolicy"] = (
            "Always" if image_tag(_str(ctr.get("image"))) == "latest" else "IfNotPresent"
        )
    if not ctr.get("terminationMessagePath"):
        ctr["terminationMessagePath"] = "/dev/termination-log"
    if not ctr.get("terminationMessagePolicy"):
        ctr["terminationMessagePolicy"] = "File"
    for port in _list(ctr.get("ports")):
        if isinstance(port, dict):
            if not port.get("protocol"):
                port["protocol"] = "TCP"
            if host_network and not port.get("hostPort"):
                port["hostPort"] = port.get("containerPort")
    for env in _list(ctr.get("env")):
        value_from = _dict(env.get("valueFrom")) if isinstance(env, dict) else None
        if value_from is None:
            continue
        field_ref = _dict(value_from.get("fieldRef"))
        if field_ref is not None and not field_ref.get("apiVersion"):
            field_ref["apiVersion"] = "v1"
        # EnvFiles is off: dropFileKeyRefInUse
        value_from.pop("fileKeyRef", None)
    for key in ("livenessProbe", "readinessProbe", "startupProbe"):
        _default_probe(ctr.get(key))
    lifecycle = _dict(ctr.get("lifecycle"))
    if lifecycle is not None:
        _default_http_get(lifecycle.get("postStart"))
        _default_http_get(lifecycle.get("preStop"))
        # ContainerStopSignals is off: dropContainerStopSignals
        if "stopSignal" in lifecycle:
            del lifecycle["stopSignal"]
            if lifecycle.get("postStart") is None and lifecycle.get("preStop") is None:
                del ctr["lifecycle"]


def set_defaults(spec: dict[str, Any]) -> None:
    """Default the containers, init containers and ephemeral containers of a v1 pod spec in
    place, as the server's decoding does (``SetDefaults_Container``, ``SetDefaults_Probe``,
    ``SetDefaults_HTTPGetAction``, ``SetDefaults_ObjectFieldSelector``, the generated port
    protocol default and, for a ``hostNetwork`` pod, ``defaultHostNetworkPorts``), then drop the
    fields of the disabled alpha gates as ``dropDisabledFields`` does. Idempotent."""
    host_network = spec.get("hostNetwork") is True
    for key in ("initContainers", "containers"):
        for _i, ctr in _containers(spec, key):
            _default_container(ctr, host_network)
    for _i, ctr in _containers(spec, "ephemeralContainers"):
        _default_container(ctr, False)  # defaultHostNetworkPorts skips ephemeral containers
    # ContainerRestartRules is off: dropContainerRestartRules
    for _i, ctr in _containers(spec, "initContainers"):
        if ctr.get("restartPolicy") is not None and ctr.get("restartPolicy") != "Always":
            del ctr["restartPolicy"]
        ctr.pop("restartPolicyRules", None)
    for key in ("containers", "ephemeralContainers"):
        for _i, ctr in _containers(spec, key):
            ctr.pop("restartPolicy", None)
            ctr.pop("restartPolicyRules", None)


# ---------------------------------------------------------------------------------------------
# Ports


def validate_container_ports(ports: list[Any], path: Path) -> list[FieldError]:
    """``validateContainerPorts``."""
    origin = "validateContainerPorts"
    errs: list[FieldError] = []
    seen: set[str] = set()
    for i, port in enumerate(ports):
        if not isinstance(port, dict):
            continue
        idx = (*path, i)
        name = _str(port.get("name"))
        if name:
            msgs = names.is_valid_port_name(name)
            if msgs:
                errs.extend(
                    FieldError((*idx, "name"), ErrorType.INVALID, name, m, origin) for m in msgs
                )
            elif name in seen:
                errs.append(FieldError((*idx, "name"), ErrorType.DUPLICATE, name, origin=origin))
            else:
                seen.add(name)
        container_port = _int(port.get("containerPort")) or 0
        if container_port == 0:
            errs.append(FieldError((*idx, "containerPort"), ErrorType.REQUIRED, origin=origin))
        else:
            for msg in names.is_valid_port_num(container_port):
                errs.append(
                    FieldError(
                        (*idx, "containerPort"), ErrorType.INVALID, container_port, msg, origin
                    )
                )
        host_port = _int(port.get("hostPort")) or 0
        if host_port != 0:
            for msg in names.is_valid_port_num(host_port):
                errs.append(
                    FieldError((*idx, "hostPort"), ErrorType.INVALID, host_port, msg, origin)
                )
        protocol = _str(port.get("protocol"))
        if protocol == "":
            errs.append(FieldError((*idx, "protocol"), ErrorType.REQUIRED, origin=origin))
        elif protocol not in ("SCTP", "TCP", "UDP"):
            errs.append(not_supported((*idx, "protocol"), protocol, ["SCTP", "TCP", "UDP"], origin))
    return errs


def accumulate_unique_host_ports(
    containers: list[dict[str, Any]], seen: set[str], path: Path
) -> list[FieldError]:
    """``AccumulateUniqueHostPorts``: ``protocol/hostIP/hostPort`` once per list.

    ``containers`` are indexed from 0 under ``path``, as Go indexes the slice it is given."""
    errs: list[FieldError] = []
    for ci, ctr in enumerate(containers):
        for pi, port in enumerate(_list(ctr.get("ports"))):
            if not isinstance(port, dict):
                continue
            host_port = _int(port.get("hostPort")) or 0
            if host_port == 0:
                continue
            key = f"{_str(port.get('protocol'))}/{_str(port.get('hostIP'))}/{host_port}"
            if key in seen:
                errs.append(
                    FieldError(
                        (*path, ci, "ports", pi, "hostPort"),
                        ErrorType.DUPLICATE,
                        key,
                        origin="AccumulateUniqueHostPorts",
                    )
                )
            else:
                seen.add(key)
    return errs


# ---------------------------------------------------------------------------------------------
# Environment

_ENV_FIELD_PATHS = sorted(
    [
        "metadata.name",
        "metadata.namespace",
        "metadata.uid",
        "spec.nodeName",
        "spec.serviceAccountName",
        "status.hostIP",
        "status.hostIPs",
        "status.podIP",
        "status.podIPs",
    ]
)
_ENV_FIELD_PATH_SET = frozenset(_ENV_FIELD_PATHS)
_RESOURCE_FIELD_PATHS = sorted(
    [
        "limits.cpu",
        "limits.memory",
        "limits.ephemeral-storage",
        "requests.cpu",
        "requests.memory",
        "requests.ephemeral-storage",
    ]
)
_RESOURCE_FIELD_PATH_SET = frozenset(_RESOURCE_FIELD_PATHS)
_HUGEPAGES_PREFIXES = ("limits.hugepages-", "requests.hugepages-")
_BYTE_DIVISORS = frozenset(
    ["1", "1k", "1M", "1G", "1T", "1P", "1E", "1Ki", "1Mi", "1Gi", "1Ti", "1Pi", "1Ei"]
)
_CPU_DIVISORS = frozenset(["1m", "1"])
_BYTE_DIVISORS_TEXT = "1, 1k, 1M, 1G, 1T, 1P, 1E, 1Ki, 1Mi, 1Gi, 1Ti, 1Pi, 1Ei"


def split_maybe_subscripted_path(field_path: str) -> tuple[str, str, bool]:
    """``fieldpath.SplitMaybeSubscriptedPath``: ``metadata.labels['key']``."""
    if not field_path.endswith("']"):
        return field_path, "", False
    parts = field_path[:-2].split("['", 1)
    if len(parts) < 2 or not parts[0]:
        return field_path, "", False
    return parts[0], parts[1], True


def _convert_downward_api_field_label(version: str, label: str) -> tuple[str, str | None]:
    """``ConvertDownwardAPIFieldLabel``: the internal label, or the error text."""
    if version != "v1":
        return "", f"unsupported pod version: {version}"
    path, _sub, ok = split_maybe_subscripted_path(label)
    if ok:
        if path in ("metadata.annotations", "metadata.labels"):
            return label, None
        return "", f"field label does not support subscript: {label}"
    if label in volumes_module.DOWNWARD_API_LABELS:
        return label, None
    if label == "spec.host":
        return "spec.nodeName", None
    return "", f"field label not supported: {label}"


def validate_object_field_selector(
    selector: dict[str, Any], expressions: list[str], path: Path
) -> list[FieldError]:
    """``validateObjectFieldSelector`` (``expressions`` sorted, as ``sets.List`` gives them)."""
    origin = "validateObjectFieldSelector"
    api_version = _str(selector.get("apiVersion"))
    field_path = _str(selector.get("fieldPath"))
    if api_version == "":
        return [FieldError((*path, "apiVersion"), ErrorType.REQUIRED, origin=origin)]
    if field_path == "":
        return [FieldError((*path, "fieldPath"), ErrorType.REQUIRED, origin=origin)]
    internal, error = _convert_downward_api_field_label(api_version, field_path)
    if error is not None:
        return [
            FieldError(
                (*path, "fieldPath"),
                ErrorType.INVALID,
                field_path,
                f"error converting fieldPath: {error}",
                origin,
            )
        ]
    base, subscript, ok = split_maybe_subscripted_path(internal)
    if ok:
        if base == "metadata.annotations":
            return names.validate_qualified_name(subscript.lower(), path)
        if base == "metadata.labels":
            return names.validate_qualified_name(subscript, path)
        return [FieldError(path, ErrorType.INVALID, base, "does not support subscript", origin)]
    if base not in expressions:
        return [not_supported((*path, "fieldPath"), base, expressions, origin)]
    return []


def _divisor_string(divisor: Any) -> str | None:
    """``divisor.String()``, or None where the divisor is unset or zero (or unparsable: the
    decoder refuses it)."""
    text = quantity.quantity_text(divisor)
    if text is None:
        return None
    parsed = quantity.parse_quantity(text)
    if parsed is None or parsed.value == 0:
        return None
    return parsed.string()


def validate_container_resource_divisor(
    resource: str, divisor: Any, path: Path
) -> list[FieldError]:
    """``validateContainerResourceDivisor``."""
    shown = _divisor_string(divisor)
    if shown is None:
        return []
    checks: list[tuple[frozenset[str], str]] = []
    if resource in ("limits.cpu", "requests.cpu"):
        checks.append((_CPU_DIVISORS, "1m and 1 are supported with the cpu resource"))
    elif resource in ("limits.memory", "requests.memory"):
        checks.append(
            (_BYTE_DIVISORS, f"{_BYTE_DIVISORS_TEXT} are supported with the memory resource")
        )
    elif resource in ("limits.ephemeral-storage", "requests.ephemeral-storage"):
        checks.append(
            (
                _BYTE_DIVISORS,
                f"{_BYTE_DIVISORS_TEXT} are supported with the local ephemeral storage resource",
            )
        )
    if resource.startswith(("requests.hugepages-", "limits.hugepages-")):
        checks.append(
            (_BYTE_DIVISORS, f"{_BYTE_DIVISORS_TEXT} are supported with the hugepages resource")
        )
    return [
        FieldError(
            (*path, "divisor"),
            ErrorType.INVALID,
            resource,
            f"only divisor's values {text}",
            "validateContainerResourceDivisor",
        )
        for allowed, text in checks
        if shown not in allowed
    ]


def validate_container_resource_field_selector(
    selector: dict[str, Any], path: Path, volume: bool
) -> list[FieldError]:
    """``validateContainerResourceFieldSelector`` with the env (and downward API volume)
    expressions and the hugepages prefixes."""
    origin = "validateContainerResourceFieldSelector"
    errs: list[FieldError] = []
    resource = _str(selector.get("resource"))
    if volume and not _str(selector.get("containerName")):
        errs.append(FieldError((*path, "containerName"), ErrorType.REQUIRED, origin=origin))
    elif resource == "":
        errs.append(FieldError((*path, "resource"), ErrorType.REQUIRED, origin=origin))
    elif resource not in _RESOURCE_FIELD_PATH_SET and not resource.startswith(_HUGEPAGES_PREFIXES):
        errs.append(not_supported((*path, "resource"), resource, _RESOURCE_FIELD_PATHS, origin))
    errs.extend(validate_container_resource_divisor(resource, selector.get("divisor"), path))
    return errs


def _validate_key_selector(selector: dict[str, Any], path: Path, origin: str) -> list[FieldError]:
    """``validateConfigMapKeySelector`` / ``validateSecretKeySelector`` (both check the name
    as a secret name: a DNS-1123 subdomain, empty included)."""
    errs: list[FieldError] = []
    name = _str(selector.get("name"))
    for msg in names.name_is_dns_subdomain(name, False):
        errs.append(FieldError((*path, "name"), ErrorType.INVALID, name, msg, origin))
    key = _str(selector.get("key"))
    if key == "":
        errs.append(FieldError((*path, "key"), ErrorType.REQUIRED, origin=origin))
    else:
        for msg in names.is_config_map_key(key):
            errs.append(FieldError((*path, "key"), ErrorType.INVALID, key, msg, origin))
    return errs


def _validate_env_value_from(env: dict[str, Any], path: Path) -> list[FieldError]:
    """``validateEnvVarValueFrom`` (EnvFiles off: fileKeyRef was dropped)."""
    value_from = _dict(env.get("valueFrom"))
    if value_from is None:
        return []
    origin = "validateEnvVarValueFrom"
    errs: list[FieldError] = []
    sources = 0
    field_ref = _dict(value_from.get("fieldRef"))
    if field_ref is not None:
        sources += 1
        errs.extend(
            validate_object_field_selector(field_ref, _ENV_FIELD_PATHS, (*path, "fieldRef"))
        )
    resource_ref = _dict(value_from.get("resourceFieldRef"))
    if resource_ref is not None:
        sources += 1
        errs.extend(
            validate_container_resource_field_selector(
                resource_ref, (*path, "resourceFieldRef"), False
            )
        )
    config_ref = _dict(value_from.get("configMapKeyRef"))
    if config_ref is not None:
        sources += 1
        errs.extend(
            _validate_key_selector(
                config_ref, (*path, "configMapKeyRef"), "validateConfigMapKeySelector"
            )
        )
    secret_ref = _dict(value_from.get("secretKeyRef"))
    if secret_ref is not None:
        sources += 1
        errs.extend(
            _validate_key_selector(secret_ref, (*path, "secretKeyRef"), "validateSecretKeySelector")
        )
    if sources == 0:
        errs.append(
            FieldError(
                path,
                ErrorType.INVALID,
                "",
                "must specify one of: `fieldRef`, `resourceFieldRef`, `configMapKeyRef` or "
                "`secretKeyRef`",
                origin,
            )
        )
    elif _str(env.get("value")):
        errs.append(
            FieldError(
                path,
                ErrorType.INVALID,
                "",
                "may not be specified when `value` is not empty",
                origin,
            )
        )
    elif sources > 1:
        errs.append(
            FieldError(
                path,
                ErrorType.INVALID,
                "",
                "may not have more than one field specified at a time",
                origin,
            )
        )
    return errs


def validate_env(env: list[Any], path: Path) -> list[FieldError]:
    """``ValidateEnv`` with relaxed names."""
    errs: list[FieldError] = []
    for i, item in enumerate(env):
        if not isinstance(item, dict):
            continue
        name = _str(item.get("name"))
        if name == "":
            errs.append(FieldError((*path, i, "name"), ErrorType.REQUIRED, origin="ValidateEnv"))
        else:
            for msg in names.is_relaxed_env_var_name(name):
                errs.append(
                    FieldError((*path, i, "name"), ErrorType.INVALID, name, msg, "ValidateEnv")
                )
        if item.get("valueFrom") is not None:  # else _validate_env_value_from finds nothing
            errs.extend(_validate_env_value_from(item, (*path, i, "valueFrom")))
    return errs


def _validate_env_source_name(ref: dict[str, Any], path: Path, origin: str) -> list[FieldError]:
    name = _str(ref.get("name"))
    if name == "":
        return [FieldError((*path, "name"), ErrorType.REQUIRED, origin=origin)]
    # ValidateConfigMapName / ValidateSecretName with prefix=true (a generateName rule)
    return [
        FieldError((*path, "name"), ErrorType.INVALID, name, msg, origin)
        for msg in names.name_is_dns_subdomain(name, True)
    ]


def validate_env_from(env_from: list[Any], path: Path) -> list[FieldError]:
    """``ValidateEnvFrom`` with relaxed prefixes."""
    origin = "ValidateEnvFrom"
    errs: list[FieldError] = []
    for i, item in enumerate(env_from):
        if not isinstance(item, dict):
            continue
        idx = (*path, i)
        prefix = _str(item.get("prefix"))
        if prefix:
            for msg in names.is_relaxed_env_var_name(prefix):
                errs.append(FieldError((*idx, "prefix"), ErrorType.INVALID, prefix, msg, origin))
        sources = 0
        config_ref = _dict(item.get("configMapRef"))
        if config_ref is not None:
            sources += 1
            errs.extend(
                _validate_env_source_name(
                    config_ref, (*idx, "configMapRef"), "validateConfigMapEnvSource"
                )
            )
        secret_ref = _dict(item.get("secretRef"))
        if secret_ref is not None:
            sources += 1
            errs.extend(
                _validate_env_source_name(
                    secret_ref, (*idx, "secretRef"), "validateSecretEnvSource"
                )
            )
        if sources == 0:
            errs.append(
                FieldError(
                    path,
                    ErrorType.INVALID,
                    "",
                    "must specify one of: `configMapRef` or `secretRef`",
                    origin,
                )
            )
        elif sources > 1:
            errs.append(
                FieldError(
                    path,
                    ErrorType.INVALID,
                    "",
                    "may not have more than one field specified at a time",
                    origin,
                )
            )
    return errs


# ---------------------------------------------------------------------------------------------
# Probes and lifecycle handlers


def validate_port_num_or_name(port: Any, path: Path) -> list[FieldError]:
    """``ValidatePortNumOrName`` on an IntOrString (a missing port decodes as the number 0)."""
    origin = "ValidatePortNumOrName"
    if isinstance(port, str):
        return [
            FieldError(path, ErrorType.INVALID, port, m, origin)
            for m in names.is_valid_port_name(port)
        ]
    number = _int(port)
    if number is None:
        if port is not None:
            return []
        number = 0
    return [
        FieldError(path, ErrorType.INVALID, number, m, origin)
        for m in names.is_valid_port_num(number)
    ]


def _validate_http_get(http: dict[str, Any], path: Path) -> list[FieldError]:
    """``validateHTTPGetAction``."""
    origin = "validateHTTPGetAction"
    errs: list[FieldError] = []
    if not _str(http.get("path")):
        errs.append(FieldError((*path, "path"), ErrorType.REQUIRED, origin=origin))
    errs.extend(validate_port_num_or_name(http.get("port"), (*path, "port")))
    scheme = _str(http.get("scheme"))
    if scheme not in ("HTTP", "HTTPS"):
        errs.append(not_supported((*path, "scheme"), scheme, ["HTTP", "HTTPS"], origin))
    for header in _list(http.get("httpHeaders")):
        if not isinstance(header, dict):
            continue
        header_name = _str(header.get("name"))
        for msg in names.is_http_header_name(header_name):
            errs.append(
                FieldError((*path, "httpHeaders"), ErrorType.INVALID, header_name, msg, origin)
            )
    return errs


def _validate_sleep(
    sleep: dict[str, Any], grace_period: int | None, path: Path
) -> list[FieldError]:
    """``validateSleepAction`` (PodLifecycleSleepActionAllowZero locked on)."""
    seconds = _int(sleep.get("seconds")) or 0
    if grace_period is not None and (seconds < 0 or seconds > grace_period):
        return [
            FieldError(
                path,
                ErrorType.INVALID,
                seconds,
                "must be non-negative and less than terminationGracePeriodSeconds "
                f"({grace_period})",
                "validateSleepAction",
            )
        ]
    return []


_PROBE_HANDLERS = ("exec", "httpGet", "tcpSocket", "grpc")
_LIFECYCLE_HANDLERS = ("exec", "httpGet", "tcpSocket", "sleep")


def validate_handler(
    handler: dict[str, Any], kinds: tuple[str, ...], grace_period: int | None, path: Path
) -> list[FieldError]:
    """``validateHandler`` over the handler types ``kinds`` (a probe's or a lifecycle hook's)."""
    origin = "validateHandler"
    errs: list[FieldError] = []
    count = 0
    for kind in kinds:
        action = _dict(handler.get(kind))
        if action is None:
            continue
        if count > 0:
            errs.append(
                FieldError(
                    (*path, kind),
                    ErrorType.FORBIDDEN,
                    detail="may not specify more than 1 handler type",
                    origin=origin,
                )
            )
            continue
        count += 1
        sub = (*path, kind)
        if kind == "exec":
            if not _list(action.get("command")):
                errs.append(
                    FieldError((*sub, "command"), ErrorType.REQUIRED, origin="validateExecAction")
                )
        elif kind == "httpGet":
            errs.extend(_validate_http_get(action, sub))
        elif kind == "tcpSocket":
            errs.extend(validate_port_num_or_name(action.get("port"), (*sub, "port")))
        elif kind == "grpc":
            port = _int(action.get("port"))
            errs.extend(validate_port_num_or_name(port if port is not None else 0, (*sub, "port")))
        else:
            errs.extend(_validate_sleep(action, grace_period, sub))
    if count == 0:
        errs.append(
            FieldError(
                path, ErrorType.REQUIRED, detail="must specify a handler type", origin=origin
            )
        )
    return errs


def _validate_probe(
    probe: dict[str, Any], grace_period: int | None, path: Path
) -> list[FieldError]:
    """``validateProbe``."""
    errs = validate_handler(probe, _PROBE_HANDLERS, grace_period, path)
    for key in (
        "initialDelaySeconds",
        "timeoutSeconds",
        "periodSeconds",
        "successThreshold",
        "failureThreshold",
    ):
        value = _int(probe.get(key))
        if value is not None:
            errs.extend(names.validate_nonnegative_field(value, (*path, key)))
    grace = _int(probe.get("terminationGracePeriodSeconds"))
    if grace is not None and grace <= 0:
        errs.append(
            FieldError(
                (*path, "terminationGracePeriodSeconds"),
                ErrorType.INVALID,
                grace,
                "must be greater than 0",
                "validateProbe",
            )
        )
    return errs


def validate_probes(ctr: dict[str, Any], grace_period: int | None, path: Path) -> list[FieldError]:
    """``validateLivenessProbe``, ``validateReadinessProbe`` and ``validateStartupProbe``."""
    errs: list[FieldError] = []
    for key in ("livenessProbe", "readinessProbe", "startupProbe"):
        probe = _dict(ctr.get(key))
        if probe is None:
            continue
        probe_path = (*path, key)
        errs.extend(_validate_probe(probe, grace_period, probe_path))
        if key == "readinessProbe":
            grace = _int(probe.get("terminationGracePeriodSeconds"))
            if grace is not None:
                errs.append(
                    FieldError(
                        (*probe_path, "terminationGracePeriodSeconds"),
                        ErrorType.INVALID,
                        grace,
                        "must not be set for readinessProbes",
                        "validateReadinessProbe",
                    )
                )
        else:
            threshold = _int(probe.get("successThreshold"))
            if threshold is None:
                threshold = 1  # defaulted
            if threshold != 1:
                errs.append(
                    FieldError(
                        (*probe_path, "successThreshold"),
                        ErrorType.INVALID,
                        threshold,
                        "must be 1",
                        "validateLivenessProbe"
                        if key == "livenessProbe"
                        else "validateStartupProbe",
                    )
                )
    return errs


def validate_lifecycle(
    lifecycle: dict[str, Any], grace_period: int | None, path: Path
) -> list[FieldError]:
    """``validateLifecycle`` (``stopSignal`` was dropped: ContainerStopSignals is off)."""
    errs: list[FieldError] = []
    for key in ("postStart", "preStop"):
        hook = _dict(lifecycle.get(key))
        if hook is not None:
            errs.extend(validate_handler(hook, _LIFECYCLE_HANDLERS, grace_period, (*path, key)))
    return errs


# ---------------------------------------------------------------------------------------------
# The container checks


def _validate_pull_policy(policy: str, path: Path) -> list[FieldError]:
    """``validatePullPolicy``."""
    if policy in ("Always", "IfNotPresent", "Never"):
        return []
    if policy == "":
        return [FieldError(path, ErrorType.REQUIRED, origin="validatePullPolicy")]
    return [not_supported(path, policy, ["Always", "IfNotPresent", "Never"], "validatePullPolicy")]


def validate_resize_policy(
    policies: list[Any], path: Path, pod_restart_policy: str
) -> list[FieldError]:
    """``validateResizePolicy``."""
    origin = "validateResizePolicy"
    errs: list[FieldError] = []
    seen: set[str] = set()
    for i, item in enumerate(policies):
        if not isinstance(item, dict):
            continue
        resource = _str(item.get("resourceName"))
        policy = _str(item.get("restartPolicy"))
        if resource in seen:
            errs.append(FieldError((*path, i), ErrorType.DUPLICATE, resource, origin=origin))
        seen.add(resource)
        if resource in ("cpu", "memory"):
            pass
        elif resource == "":
            errs.append(FieldError(path, ErrorType.REQUIRED, origin=origin))
        else:
            errs.append(not_supported(path, resource, ["cpu", "memory"], origin))
        if policy in ("NotRequired", "RestartContainer"):
            pass
        elif policy == "":
            errs.append(FieldError(path, ErrorType.REQUIRED, origin=origin))
        else:
            errs.append(not_supported(path, policy, ["NotRequired", "RestartContainer"], origin))
        if pod_restart_policy == "Never" and policy != "NotRequired":
            errs.append(
                FieldError(
                    path,
                    ErrorType.INVALID,
                    policy,
                    "must be 'NotRequired' when `restartPolicy` is 'Never'",
                    origin,
                )
            )
    return errs


def validate_container_common(
    ctr: dict[str, Any],
    volumes: dict[str, dict[str, Any]],
    pod_claims: set[str],
    path: Path,
    pod_restart_policy: str,
    host_users: bool,
) -> list[FieldError]:
    """``validateContainerCommon``: what every container kind gets (``path`` is the
    container's)."""
    origin = "validateContainerCommon"
    errs: list[FieldError] = []
    name = _str(ctr.get("name"))
    if name == "":
        errs.append(FieldError((*path, "name"), ErrorType.REQUIRED, origin=origin))
    else:
        errs.extend(names.validate_dns1123_label(name, (*path, "name")))
    if _str(ctr.get("image")) == "":
        errs.append(FieldError((*path, "image"), ErrorType.REQUIRED, origin=origin))
    policy = _str(ctr.get("terminationMessagePolicy"))
    if policy == "":
        errs.append(
            FieldError((*path, "terminationMessagePolicy"), ErrorType.REQUIRED, origin=origin)
        )
    elif policy not in ("File", "FallbackToLogsOnError"):
        errs.append(
            not_supported(
                (*path, "terminationMessagePolicy"),
                policy,
                ["File", "FallbackToLogsOnError"],
                origin,
            )
        )
    errs.extend(validate_container_ports(_list(ctr.get("ports")), (*path, "ports")))
    errs.extend(validate_env(_list(ctr.get("env")), (*path, "env")))
    errs.extend(validate_env_from(_list(ctr.get("envFrom")), (*path, "envFrom")))
    errs.extend(volumes_module.validate_volume_mounts(ctr, volumes, path))
    errs.extend(_validate_pull_policy(_str(ctr.get("imagePullPolicy")), (*path, "imagePullPolicy")))
    errs.extend(resources.validate_container_resources(ctr, pod_claims, path))
    errs.extend(
        validate_resize_policy(
            _list(ctr.get("resizePolicy")), (*path, "resizePolicy"), pod_restart_policy
        )
    )
    errs.extend(
        security.validate_security_context(
            ctr.get("securityContext"), (*path, "securityContext"), host_users
        )
    )
    return errs


def validate_containers(
    spec: dict[str, Any], volumes: dict[str, dict[str, Any]], pod_claims: set[str], path: Path
) -> list[FieldError]:
    """``validateContainers``, ``validateInitContainers`` and ``validateEphemeralContainers``,
    in ValidatePodSpec's order, on a defaulted v1 pod spec (``path`` is the spec's,
    ``("spec",)``; ``volumes`` the valid volumes by name)."""
    grace_period = _int(spec.get("terminationGracePeriodSeconds"))
    restart_policy = _str(spec.get("restartPolicy"))
    host_users = security.host_users(spec)
    errs: list[FieldError] = []

    # validateContainers
    containers_path = (*path, "containers")
    regular = [c for _i, c in _containers(spec, "containers")]
    raw = spec.get("containers")
    if raw is None or raw == []:
        errs.append(FieldError(containers_path, ErrorType.REQUIRED, origin="validateContainers"))
    else:
        seen: set[str] = set()
        for i, ctr in _containers(spec, "containers"):
            ctr_path = (*containers_path, i)
            errs.extend(
                validate_container_common(
                    ctr, volumes, pod_claims, ctr_path, restart_policy, host_users
                )
            )
            name = _str(ctr.get("name"))
            if name in seen:
                errs.append(
                    FieldError(
                        (*ctr_path, "name"), ErrorType.DUPLICATE, name, origin="validateContainers"
                    )
                )
            else:
                seen.add(name)
            lifecycle = _dict(ctr.get("lifecycle"))
            if lifecycle is not None:
                errs.extend(validate_lifecycle(lifecycle, grace_period, (*ctr_path, "lifecycle")))
            errs.extend(validate_probes(ctr, grace_period, ctr_path))
        errs.extend(accumulate_unique_host_ports(regular, set(), containers_path))

    # validateInitContainers
    init_path = (*path, "initContainers")
    all_names = {_str(c.get("name")) for c in regular}
    for i, ctr in _containers(spec, "initContainers"):
        ctr_path = (*init_path, i)
        errs.extend(
            validate_container_common(
                ctr, volumes, pod_claims, ctr_path, restart_policy, host_users
            )
        )
        restart_always = False
        ctr_restart = ctr.get("restartPolicy")
        if isinstance(ctr_restart, str):
            # validateInitContainerRestartPolicy (ContainerRestartRules off): only Always is left
            # after dropContainerRestartRules
            if ctr_restart != "Always":
                errs.append(
                    not_supported(
                        (*ctr_path, "restartPolicy"),
                        ctr_restart,
                        ["Always"],
                        "validateInitContainerRestartPolicy",
                    )
                )
            restart_always = ctr_restart == "Always"
        name = _str(ctr.get("name"))
        if name in all_names:
            errs.append(
                FieldError(
                    (*ctr_path, "name"), ErrorType.DUPLICATE, name, origin="validateInitContainers"
                )
            )
        elif name:
            all_names.add(name)
        # Go checks each init container alone, as the slice [ctr]: its index is always 0
        errs.extend(accumulate_unique_host_ports([ctr], set(), init_path))
        if restart_always:
            lifecycle = _dict(ctr.get("lifecycle"))
            if lifecycle is not None:
                errs.extend(validate_lifecycle(lifecycle, grace_period, (*ctr_path, "lifecycle")))
            errs.extend(validate_probes(ctr, grace_period, ctr_path))
        else:
            for key in ("lifecycle", "livenessProbe", "readinessProbe", "startupProbe"):
                if _dict(ctr.get(key)) is not None:
                    errs.append(
                        FieldError(
                            (*ctr_path, key),
                            ErrorType.FORBIDDEN,
                            detail="may not be set for init containers without "
                            "restartPolicy=Always",
                            origin="validateInitContainers",
                        )
                    )
    errs.extend(validate_ephemeral_containers(spec, volumes, pod_claims, path))
    return errs


# allowedEphemeralContainerFields: the fields an ephemeral container may not set, in the order
# of EphemeralContainerCommon (RestartPolicy and RestartPolicyRules are dropped before)
_EPHEMERAL_FORBIDDEN = (
    "ports",
    "resources",
    "resizePolicy",
    "livenessProbe",
    "readinessProbe",
    "startupProbe",
    "lifecycle",
)


def _is_set(key: str, value: Any) -> bool:
    """Whether a decoded field differs from Go's zero value (``reflect.DeepEqual``): a list or
    a pointer is set when present (an empty list decodes as a non-nil one); ``resources`` when
    one of its lists is present."""
    if key == "resources":
        return isinstance(value, dict) and any(
            value.get(k) is not None for k in ("limits", "requests", "claims")
        )
    return isinstance(value, dict | list)


def validate_ephemeral_containers(
    spec: dict[str, Any], volumes: dict[str, dict[str, Any]], pod_claims: set[str], path: Path
) -> list[FieldError]:
    """``validateEphemeralContainers`` (``path`` is the spec's). A create refuses ephemeral
    containers anyway (``ValidatePodCreate``), but ``ValidatePodSpec`` checks them first."""
    origin = "validateEphemeralContainers"
    errs: list[FieldError] = []
    if not _list(spec.get("ephemeralContainers")):
        return errs
    restart_policy = _str(spec.get("restartPolicy"))
    host_users = security.host_users(spec)
    other = {
        _str(c.get("name"))
        for key in ("containers", "initContainers")
        for _i, c in _containers(spec, key)
    }
    all_names = set(other)
    for i, ctr in _containers(spec, "ephemeralContainers"):
        ctr_path = (*path, "ephemeralContainers", i)
        errs.extend(
            validate_container_common(
                ctr, volumes, pod_claims, ctr_path, restart_policy, host_users
            )
        )
        errs.extend(_image_whitespace(ctr, ctr_path))
        name = _str(ctr.get("name"))
        if name in all_names:
            errs.append(FieldError((*ctr_path, "name"), ErrorType.DUPLICATE, name, origin=origin))
        else:
            all_names.add(name)
        target = _str(ctr.get("targetContainerName"))
        if target and target not in other:
            errs.append(
                FieldError(
                    (*ctr_path, "targetContainerName"), ErrorType.NOT_FOUND, target, origin=origin
                )
            )
        for key in _EPHEMERAL_FORBIDDEN:
            if _is_set(key, ctr.get(key)):
                errs.append(
                    FieldError(
                        (*ctr_path, key),
                        ErrorType.FORBIDDEN,
                        detail="cannot be set for an Ephemeral Container",
                        origin="validateFieldAllowList",
                    )
                )
        for j, mount in enumerate(_list(ctr.get("volumeMounts"))):
            if not isinstance(mount, dict):
                continue
            for sub in ("subPath", "subPathExpr"):
                if _str(mount.get(sub)):
                    errs.append(
                        FieldError(
                            (*ctr_path, "volumeMounts", j, sub),
                            ErrorType.FORBIDDEN,
                            detail="cannot be set for an Ephemeral Container",
                            origin=origin,
                        )
                    )
    return errs


def _image_whitespace(ctr: dict[str, Any], path: Path) -> list[FieldError]:
    """``validateContainerOnlyForPod``."""
    image = _str(ctr.get("image"))
    if len(image) != len(image.strip(" \t\n\v\f\r\x85\xa0")):
        return [
            FieldError(
                (*path, "image"),
                ErrorType.INVALID,
                image,
                "must not have leading or trailing whitespace",
                "validateContainerOnlyForPod",
            )
        ]
    return []


def validate_containers_only_for_pod(spec: dict[str, Any], path: Path) -> list[FieldError]:
    """``validateContainersOnlyForPod`` for containers and init containers: no image with
    leading or trailing whitespace (a pod template may have one; a pod may not). ``path`` is
    the spec's; ``validatePodMetadataAndSpec`` runs it after ``ValidatePodSpec``."""
    errs: list[FieldError] = []
    for key in ("containers", "initContainers"):
        for i, ctr in _containers(spec, key):
            errs.extend(_image_whitespace(ctr, (*path, key, i)))
    return errs
