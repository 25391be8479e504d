"""Containers and init containers: their defaults and what ``validateContainers`` and
``validateInitContainers`` (``pkg/apis/core/validation``) check, at the Kubernetes minor the
checks follow (``podcheck.release``: 1.34 to 1.37) with its default feature gates and the options
a create gets (``GetValidationOptionsFromPodSpecAndMeta`` with no old pod):

- RelaxedEnvironmentVariableValidation is locked on: env names and prefixes are any printable
  ASCII but '='.
- SidecarContainers is on: an init container with ``restartPolicy: Always`` may have probes and
  a lifecycle; InPlacePodVerticalScaling is on, so a sidecar may have a ``resizePolicy``. From
  1.36 a non-sidecar init container may not have a ``RestartContainer`` resize policy.
- PodLifecycleSleepActionAllowZero is locked on: a sleep of 0 seconds is accepted.
- EnvFiles (on from 1.35): ``env[].valueFrom.fileKeyRef`` is kept and checked
  (``validateFileKeySelector``, and ``validateFileKeyRefVolumes``: its volume is an emptyDir of
  the pod); while it is off the server drops it before it validates (``dropDisabledFields``).
- ContainerRestartRules (on from 1.35): the containers' ``restartPolicy`` and
  ``restartPolicyRules`` are kept and checked (``validateContainerRestartPolicy``);
  RestartAllContainersOnContainerExits (on from 1.36) adds the ``RestartAllContainers`` action
  and lets a sidecar have rules. While ContainerRestartRules is off the server drops them (an
  init container keeps ``restartPolicy: Always``).
- ContainerStopSignals is off (alpha) in every minor: ``lifecycle.stopSignal`` is dropped.

:func:`set_defaults` drops what the server drops. The pod is the v1 JSON form; values of a wrong
JSON type are skipped (the schema check reports them). Every check names the Go function it
mirrors in ``origin``.
"""

from __future__ import annotations

import re
from typing import Any

from tfjob_kit.podcheck import downward_api, names, release, resources, security
from tfjob_kit.podcheck import volumes as volumes_module
from tfjob_kit.podcheck.field import (
    ErrorType,
    FieldError,
    Path,
    duplicate,
    forbidden,
    invalid,
    not_found,
    not_supported,
    required,
    too_long,
)
from tfjob_kit.podcheck.fields import as_list, opt_dict, opt_int, str_of
from tfjob_kit.podcheck.volume_paths import validate_path_no_backsteps

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


_IMAGE_TAGS: dict[str, str] = {}  # image_tag's answers by image (a job's pods share theirs)
_IMAGE_TAGS_MAX = 4096


def image_tag(image: str) -> str:
    """The tag ``parsers.ParseImageName`` finds: "latest" where the reference has neither tag
    nor digest, "" where it does not parse (``dockerref.ParseNormalizedNamed``). Remembered by
    image (a pure function of the string; at most ``_IMAGE_TAGS_MAX``, then forgotten all at
    once)."""
    tag = _IMAGE_TAGS.get(image)
    if tag is None:
        tag = _image_tag(image)
        if len(_IMAGE_TAGS) >= _IMAGE_TAGS_MAX:
            _IMAGE_TAGS.clear()
        _IMAGE_TAGS[image] = tag
    return tag


def _image_tag(image: str) -> str:
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
    http = handler.get("httpGet") if isinstance(handler, dict) else None
    if isinstance(http, dict):
        if not http.get("path"):
            http["path"] = "/"
        if not http.get("scheme"):
            http["scheme"] = "HTTP"


_PROBE_DEFAULTS = (
    ("timeoutSeconds", 1),
    ("periodSeconds", 10),
    ("successThreshold", 1),
    ("failureThreshold", 3),
)


def _default_probe(probe: dict[str, Any]) -> None:
    for key, value in _PROBE_DEFAULTS:
        current = probe.get(key)
        if current is None or (
            current == 0 and isinstance(current, int) and not isinstance(current, bool)
        ):
            probe[key] = value
    _default_http_get(probe)
    grpc = probe.get("grpc")
    if isinstance(grpc, dict) and grpc.get("service") is None:
        grpc["service"] = ""


_PROBE_KEYS = ("livenessProbe", "readinessProbe", "startupProbe")


def _default_container(ctr: dict[str, Any], host_network: bool) -> None:
    if not ctr.get("imagePullPolicy"):
        ctr["imagePullPolicy"] = (
            "Always" if image_tag(str_of(ctr.get("image"))) == "latest" else "IfNotPresent"
        )
    if not ctr.get("terminationMessagePath"):
        ctr["terminationMessagePath"] = "/dev/termination-log"
    if not ctr.get("terminationMessagePolicy"):
        ctr["terminationMessagePolicy"] = "File"
    ports = ctr.get("ports")
    if isinstance(ports, list):
        for port in ports:
            if isinstance(port, dict):
                if not port.get("protocol"):
                    port["protocol"] = "TCP"
                if host_network and not port.get("hostPort"):
                    port["hostPort"] = port.get("containerPort")
    env = ctr.get("env")
    if isinstance(env, list):
        for item in env:
            value_from = item.get("valueFrom") if isinstance(item, dict) else None
            if not isinstance(value_from, dict):
                continue
            field_ref = value_from.get("fieldRef")
            if isinstance(field_ref, dict) and not field_ref.get("apiVersion"):
                field_ref["apiVersion"] = "v1"
            if not release.gate("EnvFiles"):  # dropFileKeyRefInUse
                value_from.pop("fileKeyRef", None)
    for key in _PROBE_KEYS:
        probe = ctr.get(key)
        if isinstance(probe, dict):
            _default_probe(probe)
    lifecycle = ctr.get("lifecycle")
    if isinstance(lifecycle, dict):
        _default_http_get(lifecycle.get("postStart"))
        _default_http_get(lifecycle.get("preStop"))
        # dropContainerStopSignals (ContainerStopSignals is off in every minor of the window)
        if "stopSignal" in lifecycle and not release.gate("ContainerStopSignals"):
            del lifecycle["stopSignal"]
            if lifecycle.get("postStart") is None and lifecycle.get("preStop") is None:
                del ctr["lifecycle"]


def set_defaults(spec: dict[str, Any]) -> None:
    """Default the containers, init containers and ephemeral containers of a v1 pod spec in
    place, as the server's decoding does (``SetDefaults_Container``, ``SetDefaults_Probe``,
    ``SetDefaults_HTTPGetAction``, ``SetDefaults_ObjectFieldSelector``, the generated port
    protocol default and, for a ``hostNetwork`` pod, ``defaultHostNetworkPorts``), then drop the
    fields of the gates off at the minor followed as ``dropDisabledFields`` does. Idempotent.

    One pass per list: a container's defaults never read ``restartPolicy`` or
    ``restartPolicyRules``, so dropping them right after its defaults (rather than after every
    container's) changes nothing, even for a container listed twice (a YAML alias)."""
    host_network = spec.get("hostNetwork") is True
    drop_restart_rules = not release.gate("ContainerRestartRules")
    for key in _KINDS:
        ctrs = spec.get(key)
        if not isinstance(ctrs, list):
            continue
        init = key == "initContainers"
        # defaultHostNetworkPorts skips ephemeral containers
        ctr_host_network = host_network and key != "ephemeralContainers"
        for ctr in ctrs:
            if not isinstance(ctr, dict):
                continue
            _default_container(ctr, ctr_host_network)
            if not drop_restart_rules:
                continue
            # dropContainerRestartRules (an init container keeps restartPolicy: Always)
            if "restartPolicy" in ctr:
                policy = ctr["restartPolicy"]
                if not init or (policy is not None and policy != "Always"):
                    del ctr["restartPolicy"]
            if "restartPolicyRules" in ctr:
                del ctr["restartPolicyRules"]


_KINDS = ("initContainers", "containers", "ephemeralContainers")


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
        name = port.get("name")
        if isinstance(name, str) and name:
            # a name the check accepted before is not looked at again (names remembers it)
            msgs = [] if name in names.VALID_PORT_NAMES else names.is_valid_port_name(name)
            if msgs:
                errs.extend(invalid((*path, i, "name"), name, m, origin) for m in msgs)
            elif name in seen:
                errs.append(duplicate((*path, i, "name"), name, origin))
            else:
                seen.add(name)
        container_port = port.get("containerPort")
        if type(container_port) is not int:  # an exact int is what _int returns
            container_port = opt_int(container_port) or 0
        if container_port == 0:
            errs.append(required((*path, i, "containerPort"), origin=origin))
        else:
            msgs = names.is_valid_port_num(container_port)
            if msgs:
                errs.extend(
                    invalid((*path, i, "containerPort"), container_port, m, origin) for m in msgs
                )
        host_port = port.get("hostPort")
        if type(host_port) is not int:
            host_port = opt_int(host_port) or 0
        if host_port != 0:
            msgs = names.is_valid_port_num(host_port)
            if msgs:
                errs.extend(invalid((*path, i, "hostPort"), host_port, m, origin) for m in msgs)
        protocol = port.get("protocol")
        if protocol not in _PROTOCOLS:
            protocol = str_of(protocol)
            if protocol == "":
                errs.append(required((*path, i, "protocol"), origin=origin))
            else:
                errs.append(not_supported((*path, i, "protocol"), protocol, _PROTOCOL_LIST, origin))
    return errs


_PROTOCOLS = ("SCTP", "TCP", "UDP")  # a tuple: `in` takes values of any JSON type
_PROTOCOL_LIST = list(_PROTOCOLS)


def accumulate_unique_host_ports(
    containers: list[dict[str, Any]], seen: set[str], path: Path
) -> list[FieldError]:
    """``AccumulateUniqueHostPorts``: ``protocol/hostIP/hostPort`` once per list.

    ``containers`` are indexed from 0 under ``path``, as Go indexes the slice it is given."""
    errs: list[FieldError] = []
    for ci, ctr in enumerate(containers):
        ports = ctr.get("ports")
        if not isinstance(ports, list):
            continue
        for pi, port in enumerate(ports):
            if not isinstance(port, dict):
                continue
            host_port = port.get("hostPort")
            if not host_port:  # absent, null or 0 (or any other falsy value: opt_int(...) or 0)
                continue
            host_port = opt_int(host_port) or 0
            if host_port == 0:
                continue
            key = f"{str_of(port.get('protocol'))}/{str_of(port.get('hostIP'))}/{host_port}"
            if key in seen:
                errs.append(
                    duplicate(
                        (*path, ci, "ports", pi, "hostPort"), key, "AccumulateUniqueHostPorts"
                    )
                )
            else:
                seen.add(key)
    return errs


# ---------------------------------------------------------------------------------------------
# Environment

# Sorted, as sets.List gives them.
_ENV_FIELD_PATHS = (
    "metadata.name",
    "metadata.namespace",
    "metadata.uid",
    "spec.nodeName",
    "spec.serviceAccountName",
    "status.hostIP",
    "status.hostIPs",
    "status.podIP",
    "status.podIPs",
)


def _validate_key_selector(selector: dict[str, Any], path: Path, origin: str) -> list[FieldError]:
    """``validateConfigMapKeySelector`` / ``validateSecretKeySelector`` (both check the name
    as a secret name: a DNS-1123 subdomain, empty included)."""
    errs: list[FieldError] = []
    name = str_of(selector.get("name"))
    if name not in names.VALID_DNS1123_SUBDOMAINS:  # else remembered as valid
        for msg in names.name_is_dns_subdomain(name, False):
            errs.append(invalid((*path, "name"), name, msg, origin))
    key = str_of(selector.get("key"))
    if key == "":
        errs.append(required((*path, "key"), origin=origin))
    elif key not in names.VALID_CONFIG_MAP_KEYS:  # else remembered as valid
        for msg in names.is_config_map_key(key):
            errs.append(invalid((*path, "key"), key, msg, origin))
    return errs


def _validate_file_key_selector(selector: dict[str, Any], path: Path) -> list[FieldError]:
    """``validateFileKeySelector``."""
    origin = "validateFileKeySelector"
    errs: list[FieldError] = []
    key = str_of(selector.get("key"))
    if key == "":
        errs.append(required((*path, "key"), origin=origin))
    else:
        errs.extend(
            invalid((*path, "key"), key, m, origin) for m in names.is_relaxed_env_var_name(key)
        )
    volume = str_of(selector.get("volumeName"))
    if volume == "":
        errs.append(required((*path, "volumeName"), origin=origin))
    else:
        errs.extend(names.validate_dns1123_label(volume, (*path, "volumeName")))
    target = str_of(selector.get("path"))
    if target == "":
        errs.append(required((*path, "path"), origin=origin))
    else:
        errs.extend(validate_path_no_backsteps(target, (*path, "path")))
    return errs


def validate_file_key_ref_volumes(spec: dict[str, Any], path: Path) -> list[FieldError]:
    """``validateFileKeyRefVolumes`` (``path`` is the spec's; ``ValidatePodSpec`` runs it last):
    the volume of each ``fileKeyRef`` is one of the pod's, an emptyDir. A fileKeyRef is only
    there when EnvFiles is on (:func:`set_defaults` drops it otherwise)."""
    origin = "validateFileKeyRefVolumes"
    errs: list[FieldError] = []
    sources: dict[str, Any] | None = None  # the volumes by name, once a fileKeyRef needs them
    for key in _KINDS:  # VisitContainersWithPath: init containers, containers, ephemeral ones
        for i, ctr in _indexed(spec.get(key)):
            for j, item in enumerate(as_list(ctr.get("env"))):
                value_from = item.get("valueFrom") if isinstance(item, dict) else None
                ref = value_from.get("fileKeyRef") if isinstance(value_from, dict) else None
                if not isinstance(ref, dict):
                    continue
                if sources is None:
                    volumes = [v for v in as_list(spec.get("volumes")) if isinstance(v, dict)]
                    sources = {str_of(v.get("name")): v for v in volumes}
                name = str_of(ref.get("volumeName"))
                name_path = (*path, key, i, "env", j, "valueFrom", "fileKeyRef", "volumeName")
                if name not in sources:
                    errs.append(not_found(name_path, name, origin))
                elif sources[name].get("emptyDir") is None:
                    detail = "referenced volume must be of type emptyDir"
                    errs.append(invalid(name_path, name, detail, origin))
    return errs


def _validate_env_value_from(
    value_from: dict[str, Any], value: Any, path: Path
) -> list[FieldError]:
    """``validateEnvVarValueFrom`` (``fileKeyRef`` is only there when EnvFiles is on: see
    :func:`set_defaults`); ``value`` is the variable's."""
    origin = "validateEnvVarValueFrom"
    errs: list[FieldError] = []
    sources = 0
    field_ref = value_from.get("fieldRef")
    if isinstance(field_ref, dict):
        sources += 1
        errs.extend(
            downward_api.validate_object_field_selector(
                field_ref, _ENV_FIELD_PATHS, (*path, "fieldRef")
            )
        )
    resource_ref = value_from.get("resourceFieldRef")
    if isinstance(resource_ref, dict):
        sources += 1
        errs.extend(
            downward_api.validate_resource_field_selector(
                resource_ref, (*path, "resourceFieldRef"), volume=False
            )
        )
    config_ref = value_from.get("configMapKeyRef")
    if isinstance(config_ref, dict):
        sources += 1
        errs.extend(
            _validate_key_selector(
                config_ref, (*path, "configMapKeyRef"), "validateConfigMapKeySelector"
            )
        )
    secret_ref = value_from.get("secretKeyRef")
    if isinstance(secret_ref, dict):
        sources += 1
        errs.extend(
            _validate_key_selector(secret_ref, (*path, "secretKeyRef"), "validateSecretKeySelector")
        )
    file_ref = value_from.get("fileKeyRef")
    if isinstance(file_ref, dict):
        sources += 1
        errs.extend(_validate_file_key_selector(file_ref, (*path, "fileKeyRef")))
    if sources == 1 and not value:  # the usual case: one source, no value (str_of(value) == "")
        return errs
    if sources == 0:
        # AllowEnvFilesValidation: the EnvFiles gate (no old pod on a create)
        choices = (
            "`fieldRef`, `resourceFieldRef`, `configMapKeyRef`, `secretKeyRef` or `fileKeyRef`"
            if release.gate("EnvFiles")
            else "`fieldRef`, `resourceFieldRef`, `configMapKeyRef` or `secretKeyRef`"
        )
        errs.append(invalid(path, "", f"must specify one of: {choices}", origin))
    elif str_of(value):
        errs.append(invalid(path, "", "may not be specified when `value` is not empty", origin))
    elif sources > 1:
        errs.append(
            invalid(path, "", "may not have more than one field specified at a time", origin)
        )
    return errs


def validate_env(env: list[Any], path: Path) -> list[FieldError]:
    """``ValidateEnv`` with relaxed names."""
    errs: list[FieldError] = []
    for i, item in enumerate(env):
        if not isinstance(item, dict):
            continue
        name = item.get("name")
        if not isinstance(name, str) or name == "":  # str_of(name) == ""
            errs.append(required((*path, i, "name"), origin="ValidateEnv"))
        elif name not in names.VALID_RELAXED_ENV_VAR_NAMES:  # else remembered as valid
            msgs = names.is_relaxed_env_var_name(name)
            if msgs:
                errs.extend(invalid((*path, i, "name"), name, msg, "ValidateEnv") for msg in msgs)
        value_from = item.get("valueFrom")
        if isinstance(value_from, dict):  # else validateEnvVarValueFrom finds nothing
            errs.extend(
                _validate_env_value_from(value_from, item.get("value"), (*path, i, "valueFrom"))
            )
    return errs


def _validate_env_source_name(ref: dict[str, Any], path: Path, origin: str) -> list[FieldError]:
    name = str_of(ref.get("name"))
    if name == "":
        return [required((*path, "name"), origin=origin)]
    # ValidateConfigMapName / ValidateSecretName with prefix=true (a generateName rule)
    return [
        invalid((*path, "name"), name, msg, origin)
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
        prefix = str_of(item.get("prefix"))
        if prefix:
            for msg in names.is_relaxed_env_var_name(prefix):
                errs.append(invalid((*idx, "prefix"), prefix, msg, origin))
        sources = 0
        config_ref = opt_dict(item.get("configMapRef"))
        if config_ref is not None:
            sources += 1
            errs.extend(
                _validate_env_source_name(
                    config_ref, (*idx, "configMapRef"), "validateConfigMapEnvSource"
                )
            )
        secret_ref = opt_dict(item.get("secretRef"))
        if secret_ref is not None:
            sources += 1
            errs.extend(
                _validate_env_source_name(
                    secret_ref, (*idx, "secretRef"), "validateSecretEnvSource"
                )
            )
        if sources == 0:
            errs.append(
                invalid(path, "", "must specify one of: `configMapRef` or `secretRef`", origin)
            )
        elif sources > 1:
            errs.append(
                invalid(path, "", "may not have more than one field specified at a time", origin)
            )
    return errs


# ---------------------------------------------------------------------------------------------
# Probes and lifecycle handlers


def validate_port_num_or_name(port: Any, parent: Path) -> list[FieldError]:
    """``ValidatePortNumOrName`` on an IntOrString (a missing port decodes as the number 0):
    the errors of ``parent``'s ``port``."""
    origin = "ValidatePortNumOrName"
    if isinstance(port, str):
        msgs = names.is_valid_port_name(port)
        value: str | int = port
    else:
        number = opt_int(port)
        if number is None:
            if port is not None:
                return []
            number = 0
        msgs = names.is_valid_port_num(number)
        value = number
    if not msgs:
        return []
    path = (*parent, "port")
    return [invalid(path, value, m, origin) for m in msgs]


def _validate_http_get(http: dict[str, Any], path: Path) -> list[FieldError]:
    """``validateHTTPGetAction``."""
    origin = "validateHTTPGetAction"
    errs: list[FieldError] = []
    if not str_of(http.get("path")):
        errs.append(required((*path, "path"), origin=origin))
    errs.extend(validate_port_num_or_name(http.get("port"), path))
    scheme = str_of(http.get("scheme"))
    if scheme not in ("HTTP", "HTTPS"):
        errs.append(not_supported((*path, "scheme"), scheme, ["HTTP", "HTTPS"], origin))
    for header in as_list(http.get("httpHeaders")):
        if not isinstance(header, dict):
            continue
        header_name = str_of(header.get("name"))
        for msg in names.is_http_header_name(header_name):
            errs.append(invalid((*path, "httpHeaders"), header_name, msg, origin))
    return errs


def _validate_sleep(
    sleep: dict[str, Any], grace_period: int | None, path: Path
) -> list[FieldError]:
    """``validateSleepAction`` (PodLifecycleSleepActionAllowZero locked on)."""
    seconds = opt_int(sleep.get("seconds")) or 0
    if grace_period is not None and (seconds < 0 or seconds > grace_period):
        return [
            invalid(
                path,
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
        action = handler.get(kind)
        if not isinstance(action, dict):
            continue
        if count > 0:
            errs.append(
                forbidden((*path, kind), "may not specify more than 1 handler type", origin)
            )
            continue
        count += 1
        if kind == "exec":
            if not as_list(action.get("command")):
                errs.append(required((*path, kind, "command"), origin="validateExecAction"))
        elif kind == "httpGet":
            errs.extend(_validate_http_get(action, (*path, kind)))
        elif kind == "tcpSocket":
            errs.extend(validate_port_num_or_name(action.get("port"), (*path, kind)))
        elif kind == "grpc":
            port = opt_int(action.get("port"))
            errs.extend(validate_port_num_or_name(port if port is not None else 0, (*path, kind)))
        else:
            errs.extend(_validate_sleep(action, grace_period, (*path, kind)))
    if count == 0:
        errs.append(required(path, "must specify a handler type", origin))
    return errs


_NONNEGATIVE_PROBE_FIELDS = (
    "initialDelaySeconds",
    "timeoutSeconds",
    "periodSeconds",
    "successThreshold",
    "failureThreshold",
)


def _validate_probe(
    probe: dict[str, Any], grace_period: int | None, path: Path
) -> list[FieldError]:
    """``validateProbe``."""
    errs = validate_handler(probe, _PROBE_HANDLERS, grace_period, path)
    for key in _NONNEGATIVE_PROBE_FIELDS:
        value = probe.get(key)
        # a bool is never below 0, so this is `opt_int(value) is not None and value < 0`
        if isinstance(value, int) and value < 0:
            errs.extend(names.validate_nonnegative_field(value, (*path, key)))
    grace = opt_int(probe.get("terminationGracePeriodSeconds"))
    if grace is not None and grace <= 0:
        errs.append(
            invalid(
                (*path, "terminationGracePeriodSeconds"),
                grace,
                "must be greater than 0",
                "validateProbe",
            )
        )
    return errs


def validate_probes(ctr: dict[str, Any], grace_period: int | None, path: Path) -> list[FieldError]:
    """``validateLivenessProbe``, ``validateReadinessProbe`` and ``validateStartupProbe``."""
    errs: list[FieldError] = []
    for key in _PROBE_KEYS:
        probe = ctr.get(key)
        if not isinstance(probe, dict):
            continue
        probe_path = (*path, key)
        errs.extend(_validate_probe(probe, grace_period, probe_path))
        if key == "readinessProbe":
            grace = opt_int(probe.get("terminationGracePeriodSeconds"))
            if grace is not None:
                errs.append(
                    invalid(
                        (*probe_path, "terminationGracePeriodSeconds"),
                        grace,
                        "must not be set for readinessProbes",
                        "validateReadinessProbe",
                    )
                )
        else:
            threshold = opt_int(probe.get("successThreshold"))
            if threshold is None:
                threshold = 1  # defaulted
            if threshold != 1:
                errs.append(
                    invalid(
                        (*probe_path, "successThreshold"),
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
        hook = opt_dict(lifecycle.get(key))
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
        return [required(path, origin="validatePullPolicy")]
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
        resource = str_of(item.get("resourceName"))
        policy = str_of(item.get("restartPolicy"))
        if resource in seen:
            errs.append(duplicate((*path, i), resource, origin))
        seen.add(resource)
        if resource in ("cpu", "memory"):
            pass
        elif resource == "":
            errs.append(required(path, origin=origin))
        else:
            errs.append(not_supported(path, resource, ["cpu", "memory"], origin))
        if policy in ("NotRequired", "RestartContainer"):
            pass
        elif policy == "":
            errs.append(required(path, origin=origin))
        else:
            errs.append(not_supported(path, policy, ["NotRequired", "RestartContainer"], origin))
        if pod_restart_policy == "Never" and policy != "NotRequired":
            pod = "pod " if release.at_least("1.36") else ""
            detail = f"must be 'NotRequired' when {pod}`restartPolicy` is 'Never'"
            errs.append(invalid(path, policy, detail, origin))
    return errs


_CONTAINER_RESTART_POLICIES = ("Always", "Never", "OnFailure")  # sorted, as sets.List gives them
_EXIT_CODE_OPERATORS = ("In", "NotIn")
_RULES_NEED_POLICY = "must specify restartPolicy when restart rules are used"


def _too_many(path: Path, count: int, limit: int, origin: str) -> FieldError:
    """A list over its limit: ``field.TooMany`` from 1.36, ``field.TooLong`` (which speaks of
    bytes) before."""
    if release.at_least("1.36"):
        detail = f"must have at most {limit} items"
        return FieldError(path, ErrorType.TOO_MANY, count, detail, origin)
    return too_long(path, f"may not be more than {limit} bytes", origin)


def validate_container_restart_policy(ctr: dict[str, Any], path: Path) -> list[FieldError]:
    """``validateContainerRestartPolicy`` of a container whose rules the server kept
    (ContainerRestartRules on); ``path`` is the container's."""
    origin = "validateContainerRestartPolicy"
    errs: list[FieldError] = []
    policy = ctr.get("restartPolicy")
    rules = as_list(ctr.get("restartPolicyRules"))
    if not isinstance(policy, str):
        if not rules:
            return errs
        errs.append(required((*path, "restartPolicy"), _RULES_NEED_POLICY, origin))
    elif policy not in _CONTAINER_RESTART_POLICIES:
        errs.append(
            not_supported((*path, "restartPolicy"), policy, _CONTAINER_RESTART_POLICIES, origin)
        )
    if len(rules) > 20:
        errs.append(_too_many((*path, "restartPolicyRules"), len(rules), 20, origin))
    # RestartAllContainersOnContainerExits (AllowRestartAllContainers) adds an action; 1.35 lists
    # only "Restart" in its message, which is all it allows with its default gates
    actions = ["Restart"]
    if release.gate("RestartAllContainersOnContainerExits"):
        actions.append("RestartAllContainers")
    for i, rule in enumerate(rules):
        if not isinstance(rule, dict):
            continue
        rule_path = (*path, "restartPolicyRules", i)
        action = str_of(rule.get("action"))
        if action not in actions:
            errs.append(not_supported((*rule_path, "action"), action, actions, origin))
        exit_codes = rule.get("exitCodes")
        if exit_codes is None:
            errs.append(required((*rule_path, "exitCodes"), "must be specified", origin))
            continue
        if not isinstance(exit_codes, dict):
            continue
        operator = str_of(exit_codes.get("operator"))
        if operator not in _EXIT_CODE_OPERATORS:
            op_path = (*rule_path, "exitCodes", "operator")
            errs.append(not_supported(op_path, operator, _EXIT_CODE_OPERATORS, origin))
        values = as_list(exit_codes.get("values"))
        if len(values) > 255:
            errs.append(_too_many((*rule_path, "exitCodes", "values"), len(values), 255, origin))
    return errs


def _validate_init_container_restart_policy(ctr: dict[str, Any], path: Path) -> list[FieldError]:
    """``validateInitContainerRestartPolicy`` (``path`` is the container's). Up to 1.34 Go calls
    it only for a policy that is set; a policy left unset with rules is found from 1.35, when
    the rules are no longer dropped."""
    origin = "validateInitContainerRestartPolicy"
    policy = ctr.get("restartPolicy")
    if not isinstance(policy, str):
        if as_list(ctr.get("restartPolicyRules")):
            return [required((*path, "restartPolicy"), _RULES_NEED_POLICY, origin)]
        return []
    if not release.gate("ContainerRestartRules"):  # AllowContainerRestartPolicyRules
        if policy != "Always":
            return [not_supported((*path, "restartPolicy"), policy, ["Always"], origin)]
        return []
    if policy != "Always" or release.gate("RestartAllContainersOnContainerExits"):
        return validate_container_restart_policy(ctr, path)
    if as_list(ctr.get("restartPolicyRules")):
        detail = "restartPolicyRules are not allowed for init containers with restart policy Always"
        return [forbidden((*path, "restartPolicyRules"), detail, origin)]
    return []


_PULL_POLICIES = ("Always", "IfNotPresent", "Never")  # tuples: `in` takes any JSON value
_TERMINATION_MESSAGE_POLICIES = ("File", "FallbackToLogsOnError")


def validate_container_common(
    ctr: dict[str, Any],
    volumes: dict[str, dict[str, Any]],
    pod_claims: set[str],
    path: Path,
    pod_restart_policy: str,
    host_users: bool,
) -> list[FieldError]:
    """``validateContainerCommon``: what every container kind gets (``path`` is the
    container's). A list field that is absent or empty is not walked: its checks find nothing
    there."""
    origin = "validateContainerCommon"
    errs: list[FieldError] = []
    name = ctr.get("name")
    if not isinstance(name, str) or name == "":  # str_of(name) == ""
        errs.append(required((*path, "name"), origin=origin))
    elif name not in names.VALID_DNS1123_LABELS and names.is_dns1123_label(name):
        # (a name remembered as valid is not checked again; the path is built for an error)
        errs.extend(names.validate_dns1123_label(name, (*path, "name")))
    if str_of(ctr.get("image")) == "":
        errs.append(required((*path, "image"), origin=origin))
    policy = ctr.get("terminationMessagePolicy")
    if policy not in _TERMINATION_MESSAGE_POLICIES:
        policy = str_of(policy)
        if policy == "":
            errs.append(required((*path, "terminationMessagePolicy"), origin=origin))
        else:
            errs.append(
                not_supported(
                    (*path, "terminationMessagePolicy"),
                    policy,
                    list(_TERMINATION_MESSAGE_POLICIES),
                    origin,
                )
            )
    ports = ctr.get("ports")
    if isinstance(ports, list) and ports:
        errs.extend(validate_container_ports(ports, (*path, "ports")))
    env = ctr.get("env")
    if isinstance(env, list) and env:
        errs.extend(validate_env(env, (*path, "env")))
    env_from = ctr.get("envFrom")
    if isinstance(env_from, list) and env_from:
        errs.extend(validate_env_from(env_from, (*path, "envFrom")))
    errs.extend(volumes_module.validate_volume_mounts(ctr, volumes, path))
    pull_policy = ctr.get("imagePullPolicy")
    if pull_policy not in _PULL_POLICIES:
        errs.extend(_validate_pull_policy(str_of(pull_policy), (*path, "imagePullPolicy")))
    errs.extend(resources.validate_container_resources(ctr, pod_claims, path))
    resize = ctr.get("resizePolicy")
    if isinstance(resize, list) and resize:
        errs.extend(validate_resize_policy(resize, (*path, "resizePolicy"), pod_restart_policy))
    sc = ctr.get("securityContext")
    if isinstance(sc, dict):  # else ValidateSecurityContext finds nothing
        errs.extend(security.validate_security_context(sc, (*path, "securityContext"), host_users))
    return errs


_LIFECYCLE_AND_PROBES = ("lifecycle", *_PROBE_KEYS)


def _validate_lifecycle_and_probes(
    ctr: dict[str, Any], grace_period: int | None, path: Path
) -> list[FieldError]:
    """``validateLifecycle`` and the probes' checks of a container (or a sidecar)."""
    errs: list[FieldError] = []
    lifecycle = ctr.get("lifecycle")
    if isinstance(lifecycle, dict):
        errs.extend(validate_lifecycle(lifecycle, grace_period, (*path, "lifecycle")))
    errs.extend(validate_probes(ctr, grace_period, path))
    return errs


def _validate_regular_restart_policy(ctr: dict[str, Any], path: Path) -> list[FieldError]:
    """``validateContainers``' check of a regular container's ``restartPolicy`` and rules."""
    if release.gate("ContainerRestartRules"):  # AllowContainerRestartPolicyRules
        return validate_container_restart_policy(ctr, path)
    if isinstance(ctr.get("restartPolicy"), str):  # (set_defaults has dropped it)
        detail = "may not be set for non-init containers"
        return [forbidden((*path, "restartPolicy"), detail, "validateContainers")]
    return []


def _indexed(value: Any) -> list[tuple[int, dict[str, Any]]]:
    """The containers of a container list with their indexes (items not objects skipped)."""
    if not isinstance(value, list):
        return []
    return [(i, ctr) for i, ctr in enumerate(value) if isinstance(ctr, dict)]


def validate_containers(
    spec: dict[str, Any], volumes: dict[str, dict[str, Any]], pod_claims: set[str], path: Path
) -> list[FieldError]:
    """``validateContainers``, ``validateInitContainers`` and ``validateEphemeralContainers``,
    in ValidatePodSpec's order, on a defaulted v1 pod spec (``path`` is the spec's,
    ``("spec",)``; ``volumes`` the valid volumes by name)."""
    grace_period = opt_int(spec.get("terminationGracePeriodSeconds"))
    restart_policy = str_of(spec.get("restartPolicy"))
    host_users = security.host_users(spec)
    errs: list[FieldError] = []

    # validateContainers
    containers_path = (*path, "containers")
    raw = spec.get("containers")
    regular = _indexed(raw)
    if raw is None or raw == []:
        errs.append(required(containers_path, origin="validateContainers"))
    else:
        seen: set[str] = set()
        for i, ctr in regular:
            ctr_path = (*containers_path, i)
            errs.extend(
                validate_container_common(
                    ctr, volumes, pod_claims, ctr_path, restart_policy, host_users
                )
            )
            name = str_of(ctr.get("name"))
            if name in seen:
                errs.append(duplicate((*ctr_path, "name"), name, "validateContainers"))
            else:
                seen.add(name)
            errs.extend(_validate_lifecycle_and_probes(ctr, grace_period, ctr_path))
            errs.extend(_validate_regular_restart_policy(ctr, ctr_path))
        errs.extend(accumulate_unique_host_ports([c for _i, c in regular], set(), containers_path))

    # validateInitContainers
    init_path = (*path, "initContainers")
    init = _indexed(spec.get("initContainers"))
    all_names = {str_of(c.get("name")) for _i, c in regular} if init else set()
    for i, ctr in init:
        ctr_path = (*init_path, i)
        errs.extend(
            validate_container_common(
                ctr, volumes, pod_claims, ctr_path, restart_policy, host_users
            )
        )
        errs.extend(_validate_init_container_restart_policy(ctr, ctr_path))
        restart_always = ctr.get("restartPolicy") == "Always"
        name = str_of(ctr.get("name"))
        if name in all_names:
            errs.append(duplicate((*ctr_path, "name"), name, "validateInitContainers"))
        elif name:
            all_names.add(name)
        # Go checks each init container alone, as the slice [ctr]: its index is always 0
        errs.extend(accumulate_unique_host_ports([ctr], set(), init_path))
        if restart_always:
            errs.extend(_validate_lifecycle_and_probes(ctr, grace_period, ctr_path))
        else:
            for key in _LIFECYCLE_AND_PROBES:
                if isinstance(ctr.get(key), dict):
                    errs.append(
                        forbidden(
                            (*ctr_path, key),
                            "may not be set for init containers without restartPolicy=Always",
                            "validateInitContainers",
                        )
                    )
        if not restart_always and release.at_least("1.36"):
            errs.extend(_restart_container_resize(ctr, ctr_path))
    errs.extend(validate_ephemeral_containers(spec, volumes, pod_claims, path))
    return errs


def _restart_container_resize(ctr: dict[str, Any], path: Path) -> list[FieldError]:
    """``validateInitContainers`` from 1.36: a non-sidecar init container may not have a
    ``RestartContainer`` resize policy (no old pod has one on a create)."""
    errs: list[FieldError] = []
    for j, item in enumerate(as_list(ctr.get("resizePolicy"))):
        if isinstance(item, dict) and item.get("restartPolicy") == "RestartContainer":
            errs.append(
                invalid(
                    (*path, "resizePolicy", j, "restartPolicy"),
                    "RestartContainer",
                    "must not be set to 'RestartContainer' for non-sidecar initContainers",
                    "validateInitContainers",
                )
            )
    return errs


# allowedEphemeralContainerFields: the fields an ephemeral container may not set, in the order
# of EphemeralContainerCommon (restartPolicy and restartPolicyRules are there only where
# ContainerRestartRules is on: set_defaults drops them otherwise)
_EPHEMERAL_FORBIDDEN = (
    "ports",
    "resources",
    "resizePolicy",
    "restartPolicy",
    "restartPolicyRules",
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
    if key == "restartPolicy":  # a pointer to a string
        return isinstance(value, str)
    return isinstance(value, dict | list)


def validate_ephemeral_containers(
    spec: dict[str, Any], volumes: dict[str, dict[str, Any]], pod_claims: set[str], path: Path
) -> list[FieldError]:
    """``validateEphemeralContainers`` (``path`` is the spec's). A create refuses ephemeral
    containers anyway (``ValidatePodCreate``), but ``ValidatePodSpec`` checks them first."""
    origin = "validateEphemeralContainers"
    errs: list[FieldError] = []
    if not as_list(spec.get("ephemeralContainers")):
        return errs
    restart_policy = str_of(spec.get("restartPolicy"))
    host_users = security.host_users(spec)
    other = {
        str_of(c.get("name"))
        for key in ("containers", "initContainers")
        for _i, c in _indexed(spec.get(key))
    }
    all_names = set(other)
    for i, ctr in _indexed(spec.get("ephemeralContainers")):
        ctr_path = (*path, "ephemeralContainers", i)
        errs.extend(
            validate_container_common(
                ctr, volumes, pod_claims, ctr_path, restart_policy, host_users
            )
        )
        errs.extend(_image_whitespace(ctr, ctr_path))
        name = str_of(ctr.get("name"))
        if name in all_names:
            errs.append(duplicate((*ctr_path, "name"), name, origin))
        else:
            all_names.add(name)
        target = str_of(ctr.get("targetContainerName"))
        if target and target not in other:
            errs.append(not_found((*ctr_path, "targetContainerName"), target, origin))
        for key in _EPHEMERAL_FORBIDDEN:
            if _is_set(key, ctr.get(key)):
                errs.append(
                    forbidden(
                        (*ctr_path, key),
                        "cannot be set for an Ephemeral Container",
                        "validateFieldAllowList",
                    )
                )
        for j, mount in enumerate(as_list(ctr.get("volumeMounts"))):
            if not isinstance(mount, dict):
                continue
            for sub in ("subPath", "subPathExpr"):
                if str_of(mount.get(sub)):
                    errs.append(
                        forbidden(
                            (*ctr_path, "volumeMounts", j, sub),
                            "cannot be set for an Ephemeral Container",
                            origin,
                        )
                    )
    return errs


def _image_whitespace(ctr: dict[str, Any], path: Path) -> list[FieldError]:
    """``validateContainerOnlyForPod``."""
    image = str_of(ctr.get("image"))
    if len(image) != len(image.strip(" \t\n\v\f\r\x85\xa0")):
        return [
            invalid(
                (*path, "image"),
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
        ctrs = spec.get(key)
        if not isinstance(ctrs, list):
            continue
        for i, ctr in enumerate(ctrs):
            if isinstance(ctr, dict):
                image = ctr.get("image")
                # every character validateContainerOnlyForPod strips is a str.isspace one:
                # an image with none at either end passes without the full check
                if isinstance(image, str) and not (image[:1].isspace() or image[-1:].isspace()):
                    continue
                errs.extend(_image_whitespace(ctr, (*path, key, i)))
    return errs
