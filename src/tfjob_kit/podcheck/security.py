"""Security contexts: the pod's (``validatePodSpecSecurityContext``) and each container's
(``ValidateSecurityContext``), with the helpers they share (seccomp and AppArmor profile fields,
Windows options, sysctls), as ``pkg/apis/core/validation`` checks them at the Kubernetes minor
the checks follow (``podcheck.release``: 1.34 to 1.37) with its default feature gates and the
options a create gets.

The pod is the v1 JSON form. Up to 1.36 the server validates an internal form where
``hostNetwork``, ``hostPID``, ``hostIPC``, ``hostUsers`` and ``shareProcessNamespace`` belong to
the pod security context; from 1.37 they are spec fields there as in v1. The checks read them
from the spec and report the paths Go reports (for example
``spec.securityContext.shareProcessNamespace`` up to 1.36, ``spec.shareProcessNamespace`` from
1.37).
Values of a wrong JSON type are skipped (the schema check reports them).

Also here, for ``pod.py``: ``validate_host_users`` (``validateHostUsers``) and
``validate_windows_host_process_pod`` (``validateWindowsHostProcessPod``), the pod-level checks
that tie the security context to the containers.
"""

from __future__ import annotations

import re
from typing import Any

from tfjob_kit.podcheck import names, release
from tfjob_kit.podcheck.field import (
    FieldError,
    Path,
    duplicate,
    forbidden,
    invalid,
    not_supported,
    required,
    too_long,
)
from tfjob_kit.podcheck.fields import as_list, opt_bool, opt_dict, opt_int, opt_str, str_of
from tfjob_kit.podcheck.volume_paths import validate_local_descending_path

# The kube-apiserver's --allow-privileged (capabilities.Get().AllowPrivileged). Its default is
# false, but every usable cluster (kubeadm, kind, the local test cluster) sets it to true.
ALLOW_PRIVILEGED = True


def allow_only_recursive_selinux_change_policy() -> bool:
    """``useOnlyRecursiveSELinuxChangePolicy`` with no old pod: while SELinuxMount is off (up to
    1.36) only Recursive is accepted; from 1.37 MountOption too."""
    return not release.gate("SELinuxMount")


# ---------------------------------------------------------------------------------------------
# Shared helpers


def _go_seccomp(sp: dict[str, Any]) -> dict[str, Any]:
    """The internal ``core.SeccompProfile`` as Go's json.Marshal prints it (no json tags)."""
    return {
        "Type": str_of(sp.get("type")),
        "LocalhostProfile": opt_str(sp.get("localhostProfile")),
    }


def validate_seccomp_profile_field(sp: Any, path: Path) -> list[FieldError]:
    """``validateSeccompProfileField`` (with ``validateSeccompProfileType``)."""
    if not isinstance(sp, dict):
        return []
    errs: list[FieldError] = []
    origin = "validateSeccompProfileField"
    sp_type = str_of(sp.get("type"))
    if sp_type in ("Localhost", "RuntimeDefault", "Unconfined"):
        pass
    elif sp_type == "":
        errs.append(
            required(
                (*path, "type"),
                "type is required when seccompProfile is set",
                "validateSeccompProfileType",
            )
        )
    else:
        errs.append(
            not_supported(
                (*path, "type"),
                sp_type,
                ["Localhost", "RuntimeDefault", "Unconfined"],
                "validateSeccompProfileType",
            )
        )
    localhost = sp.get("localhostProfile")
    if sp_type == "Localhost":
        if not isinstance(localhost, str):
            errs.append(
                required(
                    (*path, "localhostProfile"),
                    "must be set when seccomp type is Localhost",
                    origin,
                )
            )
        else:
            errs.extend(validate_local_descending_path(localhost, (*path, "localhostProfile")))
    elif isinstance(localhost, str):
        errs.append(
            invalid(
                (*path, "localhostProfile"),
                _go_seccomp(sp),
                "can only be set when seccomp type is Localhost",
                origin,
            )
        )
    return errs


_APPARMOR_TYPES = ["Localhost", "RuntimeDefault", "Unconfined"]


def validate_apparmor_profile_field(profile: Any, path: Path) -> list[FieldError]:
    """``ValidateAppArmorProfileField``."""
    if not isinstance(profile, dict):
        return []
    origin = "ValidateAppArmorProfileField"
    errs: list[FieldError] = []
    p_type = str_of(profile.get("type"))
    localhost = profile.get("localhostProfile")
    lp_path = (*path, "localhostProfile")
    if p_type == "Localhost":
        if not isinstance(localhost, str):
            errs.append(required(lp_path, "must be set when AppArmor type is Localhost", origin))
        else:
            stripped = localhost.strip(" \t\n\v\f\r\x85\xa0")
            if stripped != localhost:
                errs.append(
                    invalid(lp_path, localhost, "must not be padded with whitespace", origin)
                )
            elif stripped == "":
                errs.append(
                    required(lp_path, "must be set when AppArmor type is Localhost", origin)
                )
            if names.byte_len(localhost) > 4095:
                errs.append(too_long(lp_path, "may not be more than 4095 bytes", origin))
    elif p_type in ("RuntimeDefault", "Unconfined"):
        if isinstance(localhost, str):
            errs.append(
                invalid(
                    lp_path, localhost, "can only be set when AppArmor type is Localhost", origin
                )
            )
    elif p_type == "":
        errs.append(
            required((*path, "type"), "type is required when appArmorProfile is set", origin)
        )
    else:
        errs.append(not_supported((*path, "type"), p_type, _APPARMOR_TYPES, origin))
    return errs


_CTRL_RE = re.compile(r"[\x00-\x1f\x7f]+")
_NETBIOS_RE = re.compile(r'[^\\/:\*\?"<>|\.][^\\/:\*\?"<>|]{0,14}')
_DNS_LABEL = r"[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?"
_WINDOWS_DOMAIN_DNS_RE = re.compile(rf"{_DNS_LABEL}(?:\.{_DNS_LABEL})*")
_BAD_USER_CHARS_RE = re.compile(r'["/\\:;|=,\+\*\?<>@\[\]]')
_DOTS_SPACES_RE = re.compile(r"[\. ]+")


def validate_windows_security_context_options(options: Any, path: Path) -> list[FieldError]:
    """``validateWindowsSecurityContextOptions``."""
    if not isinstance(options, dict):
        return []
    origin = "validateWindowsSecurityContextOptions"
    errs: list[FieldError] = []
    spec_name = options.get("gmsaCredentialSpecName")
    if isinstance(spec_name, str):
        for msg in names.is_dns1123_subdomain(spec_name):
            errs.append(invalid((*path, "gmsaCredentialSpecName"), spec_name, msg, origin))
    cred = options.get("gmsaCredentialSpec")
    if isinstance(cred, str):
        cred_path = (*path, "gmsaCredentialSpec")
        if cred == "":
            errs.append(
                invalid(cred_path, cred, "gmsaCredentialSpec cannot be an empty string", origin)
            )
        elif names.byte_len(cred) > 64 * 1024:
            errs.append(
                invalid(cred_path, cred, "gmsaCredentialSpec size must be under 64 KiB", origin)
            )
    user_name = options.get("runAsUserName")
    if isinstance(user_name, str):
        errs.extend(_validate_run_as_user_name(user_name, (*path, "runAsUserName"), origin))
    return errs


def _validate_run_as_user_name(value: str, path: Path, origin: str) -> list[FieldError]:
    def err(detail: str) -> FieldError:
        return invalid(path, value, detail, origin)

    if value == "":
        return [err("runAsUserName cannot be an empty string")]
    if _CTRL_RE.search(value):
        return [err("runAsUserName cannot contain control characters")]
    parts = value.split("\\")
    if len(parts) > 2:
        return [err("runAsUserName cannot contain more than one backslash")]
    errs: list[FieldError] = []
    has_domain = len(parts) == 2
    domain, user = (parts[0], parts[1]) if has_domain else ("", parts[0])
    if names.byte_len(domain) >= 256:
        errs.append(err("runAsUserName's Domain length must be under 256 characters"))
    if has_domain and not (
        _NETBIOS_RE.fullmatch(domain) or _WINDOWS_DOMAIN_DNS_RE.fullmatch(domain)
    ):
        errs.append(err("runAsUserName's Domain doesn't match the NetBios nor the DNS format"))
    user_len = names.byte_len(user)
    if user_len == 0:
        errs.append(err("runAsUserName's User cannot be empty"))
    elif user_len > 104:
        errs.append(err("runAsUserName's User length must not be longer than 104 characters"))
    if _DOTS_SPACES_RE.fullmatch(user):
        errs.append(err("runAsUserName's User cannot contain only periods or spaces"))
    if _BAD_USER_CHARS_RE.search(user):
        errs.append(
            err("runAsUserName's User cannot contain the following characters: \"/\\:;|=,+*?<>@[]")
        )
    return errs


# ---------------------------------------------------------------------------------------------
# The container security context


def _go_security_context(sc: dict[str, Any]) -> dict[str, Any]:
    """The internal ``core.SecurityContext`` as Go's json.Marshal prints it: Go field names in
    declaration order, absent pointers as null."""

    def caps(value: Any) -> Any:
        if not isinstance(value, dict):
            return None
        add, drop = value.get("add"), value.get("drop")
        return {
            "Add": add if isinstance(add, list) else None,
            "Drop": drop if isinstance(drop, list) else None,
        }

    def selinux(value: Any) -> Any:
        if not isinstance(value, dict):
            return None
        return {k.capitalize(): str_of(value.get(k)) for k in ("user", "role", "type", "level")}

    def windows(value: Any) -> Any:
        if not isinstance(value, dict):
            return None
        return {
            "GMSACredentialSpecName": opt_str(value.get("gmsaCredentialSpecName")),
            "GMSACredentialSpec": opt_str(value.get("gmsaCredentialSpec")),
            "RunAsUserName": opt_str(value.get("runAsUserName")),
            "HostProcess": opt_bool(value.get("hostProcess")),
        }

    def profile(value: Any) -> Any:
        return _go_seccomp(value) if isinstance(value, dict) else None

    return {
        "Capabilities": caps(sc.get("capabilities")),
        "Privileged": opt_bool(sc.get("privileged")),
        "SELinuxOptions": selinux(sc.get("seLinuxOptions")),
        "WindowsOptions": windows(sc.get("windowsOptions")),
        "RunAsUser": opt_int(sc.get("runAsUser")),
        "RunAsGroup": opt_int(sc.get("runAsGroup")),
        "RunAsNonRoot": opt_bool(sc.get("runAsNonRoot")),
        "ReadOnlyRootFilesystem": opt_bool(sc.get("readOnlyRootFilesystem")),
        "AllowPrivilegeEscalation": opt_bool(sc.get("allowPrivilegeEscalation")),
        "ProcMount": opt_str(sc.get("procMount")),
        "SeccompProfile": profile(sc.get("seccompProfile")),
        "AppArmorProfile": profile(sc.get("appArmorProfile")),
    }


def validate_security_context(sc: Any, path: Path, host_users: bool) -> list[FieldError]:
    """``ValidateSecurityContext``: a container's ``securityContext`` (``path`` is its path)."""
    if not isinstance(sc, dict):
        return []
    origin = "ValidateSecurityContext"
    errs: list[FieldError] = []
    privileged = opt_bool(sc.get("privileged"))
    if privileged and not ALLOW_PRIVILEGED:
        errs.append(forbidden((*path, "privileged"), "disallowed by cluster policy", origin))
    run_as_user = opt_int(sc.get("runAsUser"))
    if run_as_user is not None:
        for msg in names.is_valid_user_id(run_as_user):
            errs.append(invalid((*path, "runAsUser"), run_as_user, msg, origin))
    run_as_group = opt_int(sc.get("runAsGroup"))
    if run_as_group is not None:
        for msg in names.is_valid_group_id(run_as_group):
            errs.append(invalid((*path, "runAsGroup"), run_as_group, msg, origin))
    proc_mount = opt_str(sc.get("procMount"))
    if proc_mount is not None:
        if proc_mount not in ("Default", "Unmasked"):
            errs.append(
                not_supported(
                    (*path, "procMount"),
                    proc_mount,
                    ["Default", "Unmasked"],
                    "ValidateProcMountType",
                )
            )
        if host_users and proc_mount == "Unmasked":
            errs.append(
                invalid(
                    (*path, "procMount"),
                    proc_mount,
                    "`hostUsers` must be false to use `Unmasked`",
                    origin,
                )
            )
    seccomp = sc.get("seccompProfile")
    if isinstance(seccomp, dict):  # else validateSeccompProfileField finds nothing
        errs.extend(validate_seccomp_profile_field(seccomp, (*path, "seccompProfile")))
    if sc.get("allowPrivilegeEscalation") is False:
        if privileged:
            errs.append(
                invalid(
                    path,
                    _go_security_context(sc),
                    "cannot set `allowPrivilegeEscalation` to false and `privileged` to true",
                    origin,
                )
            )
        capabilities = opt_dict(sc.get("capabilities"))
        if capabilities is not None:
            for cap in as_list(capabilities.get("add")):
                if cap == "CAP_SYS_ADMIN":
                    errs.append(
                        invalid(
                            path,
                            _go_security_context(sc),
                            "cannot set `allowPrivilegeEscalation` to false and "
                            "`capabilities.Add` CAP_SYS_ADMIN",
                            origin,
                        )
                    )
    _validate_options_and_apparmor(sc, path, errs)
    return errs


def _validate_options_and_apparmor(sc: dict[str, Any], path: Path, errs: list[FieldError]) -> None:
    """The Windows options and the AppArmor profile of a security context (the pod's or a
    container's, at ``path``), added to ``errs``; absent ones are not looked at (their checks
    find nothing)."""
    options = sc.get("windowsOptions")
    if isinstance(options, dict):
        errs.extend(validate_windows_security_context_options(options, (*path, "windowsOptions")))
    profile = sc.get("appArmorProfile")
    if isinstance(profile, dict):
        errs.extend(validate_apparmor_profile_field(profile, (*path, "appArmorProfile")))


# ---------------------------------------------------------------------------------------------
# The pod security context

_SYSCTL_SEGMENT = "[a-z0-9]([-_a-z0-9]*[a-z0-9])?"
_SYSCTL_FMT = "(" + _SYSCTL_SEGMENT + "[\\./])*" + _SYSCTL_SEGMENT
_SYSCTL_RE = re.compile(_SYSCTL_FMT)
_SYSCTL_MSG = f"must have at most 253 characters and match regex ^{_SYSCTL_FMT}$"

_IPC_SYSCTLS = frozenset(
    {
        "kernel.sem",
        "kernel.shmall",
        "kernel.shmmax",
        "kernel.shmmni",
        "kernel.shm_rmid_forced",
        "kernel.shm",
        "kernel.msgmax",
        "kernel.msgmnb",
        "kernel.msgmni",
        "kernel.msg",
    }
)


def is_valid_sysctl_name(name: str) -> bool:
    """``IsValidSysctlName``."""
    return names.byte_len(name) <= 253 and _SYSCTL_RE.fullmatch(name) is not None


def _normalize_sysctl(name: str) -> str:
    """``sysctl.NormalizeName``: a name written with '/' separators, in the '.' form."""
    first = min((i for i in (name.find("."), name.find("/")) if i >= 0), default=-1)
    if first == -1 or name[first] == ".":
        return name
    return name.translate(str.maketrans("./", "/."))


def sysctl_namespace(name: str) -> str:
    """``sysctl.GetNamespace``: "Net", "IPC" or "" (unknown)."""
    name = _normalize_sysctl(name)
    star = name.find("*")
    if star >= 0:
        name = name[:star]
    if name in _IPC_SYSCTLS:
        return "IPC"
    if name.startswith("net."):
        return "Net"
    if name.startswith("fs.mqueue."):
        return "IPC"
    return ""


def _validate_sysctls(sysctls: list[Any], spec: dict[str, Any], path: Path) -> list[FieldError]:
    """``validateSysctls`` with ``ValidateHostSysctl`` (namespaced sysctls are refused in pods
    that share the host's network or IPC namespace: no old pod allows them)."""
    origin = "validateSysctls"
    errs: list[FieldError] = []
    seen: set[str] = set()
    host_network = spec.get("hostNetwork") is True
    host_ipc = spec.get("hostIPC") is True
    for i, item in enumerate(sysctls):
        if not isinstance(item, dict):
            continue
        name = str_of(item.get("name"))
        name_path = (*path, i, "name")
        if name == "":
            errs.append(required(name_path, origin=origin))
        elif not is_valid_sysctl_name(name):
            errs.append(invalid(name_path, name, _SYSCTL_MSG, origin))
        elif name in seen:
            errs.append(duplicate(name_path, name, origin))
        namespace = sysctl_namespace(name)
        if host_network and namespace == "Net":
            errs.append(
                invalid(
                    name_path,
                    name,
                    "may not be specified when 'hostNetwork' is true",
                    "ValidateHostSysctl",
                )
            )
        elif host_ipc and namespace == "IPC":
            errs.append(
                invalid(
                    name_path,
                    name,
                    "may not be specified when 'hostIPC' is true",
                    "ValidateHostSysctl",
                )
            )
        seen.add(name)
    return errs


def validate_pod_security_context(spec: dict[str, Any], path: Path) -> list[FieldError]:
    """``validatePodSpecSecurityContext``: ``path`` is the spec's path (``("spec",)``).

    The pod's security context always exists on the server (defaulted to empty), so the checks
    that read ``hostPID`` and friends from the spec run even without ``securityContext``."""
    origin = "validatePodSpecSecurityContext"
    sc = spec.get("securityContext")
    if sc is None:
        sc = {}
    if not isinstance(sc, dict):
        return []
    fld = (*path, "securityContext")
    if not sc:  # the defaulted {}: only the check that reads the spec can fail
        return _validate_share_process_namespace(spec, path)
    moved = release.at_least("1.37")  # validateShareProcessNamespace runs after this one
    errs: list[FieldError] = []
    fs_group = opt_int(sc.get("fsGroup"))
    if fs_group is not None:
        for msg in names.is_valid_group_id(fs_group):
            errs.append(invalid((*fld, "fsGroup"), fs_group, msg, origin))
    run_as_user = opt_int(sc.get("runAsUser"))
    if run_as_user is not None:
        for msg in names.is_valid_user_id(run_as_user):
            errs.append(invalid((*fld, "runAsUser"), run_as_user, msg, origin))
    run_as_group = opt_int(sc.get("runAsGroup"))
    if run_as_group is not None:
        for msg in names.is_valid_group_id(run_as_group):
            errs.append(invalid((*fld, "runAsGroup"), run_as_group, msg, origin))
    for g, gid in enumerate(as_list(sc.get("supplementalGroups"))):
        gid_int = opt_int(gid)
        if gid_int is None:
            continue
        for msg in names.is_valid_group_id(gid_int):
            errs.append(invalid((*fld, "supplementalGroups", g), gid_int, msg, origin))
    if not moved:
        errs.extend(_validate_share_process_namespace(spec, path))
    sysctls = as_list(sc.get("sysctls"))
    if sysctls:
        errs.extend(_validate_sysctls(sysctls, spec, (*fld, "sysctls")))
    fs_policy = sc.get("fsGroupChangePolicy")
    if isinstance(fs_policy, str) and fs_policy not in ("Always", "OnRootMismatch"):
        errs.append(
            not_supported(
                (*fld, "fsGroupChangePolicy"),
                fs_policy,
                ["Always", "OnRootMismatch"],
                "validateFSGroupChangePolicy",
            )
        )
    seccomp = sc.get("seccompProfile")
    if isinstance(seccomp, dict):
        errs.extend(validate_seccomp_profile_field(seccomp, (*fld, "seccompProfile")))
    _validate_options_and_apparmor(sc, fld, errs)
    sg_policy = sc.get("supplementalGroupsPolicy")
    if isinstance(sg_policy, str) and sg_policy not in ("Merge", "Strict"):
        errs.append(
            not_supported(
                (*fld, "supplementalGroupsPolicy"),
                sg_policy,
                ["Merge", "Strict"],
                "validateSupplementalGroupsPolicy",
            )
        )
    change_policy = sc.get("seLinuxChangePolicy")
    if isinstance(change_policy, str):
        if allow_only_recursive_selinux_change_policy():
            if change_policy != "Recursive":
                errs.append(
                    not_supported(
                        (*fld, "seLinuxChangePolicy"),
                        change_policy,
                        ["Recursive"],
                        "validateSELinuxChangePolicy",
                    )
                )
        elif change_policy not in ("MountOption", "Recursive"):
            errs.append(
                not_supported(
                    (*fld, "seLinuxChangePolicy"),
                    change_policy,
                    ["MountOption", "Recursive"],
                    "validateSELinuxChangePolicy",
                )
            )
    if moved:
        errs.extend(_validate_share_process_namespace(spec, path))
    return errs


def _validate_share_process_namespace(spec: dict[str, Any], path: Path) -> list[FieldError]:
    """The shareProcessNamespace check (``path`` is the spec's): ``validatePodSpecSecurityContext``
    makes it on the pod security context up to 1.36, ``validateShareProcessNamespace`` on the
    spec from 1.37."""
    if spec.get("shareProcessNamespace") is True and spec.get("hostPID") is True:
        at: Path = (*path, "shareProcessNamespace")
        origin = "validateShareProcessNamespace"
        if not release.at_least("1.37"):
            at = (*path, "securityContext", "shareProcessNamespace")
            origin = "validatePodSpecSecurityContext"
        detail = "ShareProcessNamespace and HostPID cannot both be enabled"
        return [invalid(at, True, detail, origin)]
    return []


def host_users(spec: dict[str, Any]) -> bool:
    """``hostUsers`` as ValidatePodSpec computes it: true unless the pod sets ``spec.hostUsers``
    false (v1 keeps it in the spec; the internal form in the security context)."""
    return spec.get("hostUsers") is not False


_KINDS = ("initContainers", "containers", "ephemeralContainers")  # VisitContainersWithPath


def _all_containers(spec: dict[str, Any]) -> list[tuple[dict[str, Any], str, int]]:
    """``VisitContainersWithPath``: init containers, containers, ephemeral containers, each with
    its list's key and its index (its path is ``(*spec_path, key, index)``)."""
    out: list[tuple[dict[str, Any], str, int]] = []
    for key in _KINDS:
        ctrs = spec.get(key)
        if isinstance(ctrs, list):
            for i, ctr in enumerate(ctrs):
                if isinstance(ctr, dict):
                    out.append((ctr, key, i))
    return out


def validate_host_users(spec: dict[str, Any], path: Path) -> list[FieldError]:
    """``validateHostUsers``: a pod with ``hostUsers: false`` may not share the host's
    namespaces nor use volume devices. ``path`` is the spec's path."""
    if host_users(spec):
        return []
    origin = "validateHostUsers"
    errs: list[FieldError] = []
    for key, shown in (
        ("hostNetwork", "hostNetwork"),
        ("hostPID", "HostPID"),
        ("hostIPC", "HostIPC"),
    ):
        if spec.get(key) is True:
            errs.append(forbidden((*path, shown), "when `hostUsers` is false", origin))
    for ctr, key, i in _all_containers(spec):
        if as_list(ctr.get("volumeDevices")):
            errs.append(
                forbidden((*path, key, i, "volumeDevices"), "when `hostUsers` is false", origin)
            )
    return errs


def validate_windows_host_process_pod(spec: dict[str, Any], path: Path) -> list[FieldError]:
    """``validateWindowsHostProcessPod``. ``path`` is the spec's path."""
    origin = "validateWindowsHostProcessPod"
    errs: list[FieldError] = []
    pod_sc = opt_dict(spec.get("securityContext")) or {}
    pod_win = opt_dict(pod_sc.get("windowsOptions"))
    pod_hp = opt_bool(pod_win.get("hostProcess")) if pod_win is not None else None
    host_network = spec.get("hostNetwork") is True
    count = hp_count = 0
    for key in _KINDS:  # VisitContainersWithPath, the paths built only for an error
        ctrs = spec.get(key)
        if not isinstance(ctrs, list):
            continue
        for i, ctr in enumerate(ctrs):
            if not isinstance(ctr, dict):
                continue
            count += 1
            sc = ctr.get("securityContext")
            win = sc.get("windowsOptions") if isinstance(sc, dict) else None
            ctr_hp = opt_bool(win.get("hostProcess")) if isinstance(win, dict) else None
            if pod_hp is not None and ctr_hp is not None and pod_hp != ctr_hp:
                errs.append(
                    invalid(
                        (*path, key, i, "securityContext", "windowsOptions", "hostProcess"),
                        ctr_hp,
                        "pod hostProcess value must be identical if both are specified, was "
                        + ("true" if pod_hp else "false"),
                        origin,
                    )
                )
            if ctr_hp is True or (ctr_hp is None and pod_hp is True):
                hp_count += 1
    if hp_count > 0:
        if hp_count != count:
            errs.append(
                invalid(
                    path,
                    "",
                    "If pod contains any hostProcess containers then all containers must be "
                    "HostProcess containers",
                    origin,
                )
            )
        if not host_network:
            errs.append(
                invalid(
                    (*path, "hostNetwork"),
                    False,
                    "hostNetwork must be true if pod contains any hostProcess containers",
                    origin,
                )
            )
        if not ALLOW_PRIVILEGED:
            errs.append(
                forbidden(path, "hostProcess containers are disallowed by cluster policy", origin)
            )
    return errs
