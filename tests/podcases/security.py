"""Pod template mutations for the security context checks (``podcheck.security``): the pod's
``securityContext`` (with ``hostNetwork``/``hostPID``/``hostIPC``/``shareProcessNamespace``,
which the server's internal form keeps there up to 1.36), each container's, ``hostUsers: false``
and Windows host-process pods."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

from . import Mutation, Template, VerdictChanges, all_of, set_spec


def _pod_sc(**fields: Any) -> Callable[[Template], None]:
    def mutate(t: Template) -> None:
        t["spec"].setdefault("securityContext", {}).update(copy.deepcopy(fields))

    return mutate


def _sc(**fields: Any) -> Callable[[Template], None]:
    """Set fields of the first container's securityContext."""

    def mutate(t: Template) -> None:
        t["spec"]["containers"][0].setdefault("securityContext", {}).update(copy.deepcopy(fields))

    return mutate


def _sysctls(*pairs: tuple[str, str]) -> Callable[[Template], None]:
    return _pod_sc(sysctls=[{"name": n, "value": v} for n, v in pairs])


def _sidecar_sc(**fields: Any) -> Callable[[Template], None]:
    def mutate(t: Template) -> None:
        t["spec"].setdefault("initContainers", []).append(
            {"name": "init", "image": "busybox", "securityContext": copy.deepcopy(fields)}
        )

    return mutate


NO_HOST_USERS = set_spec(hostUsers=False)
LOCAL = "Localhost"

MUTATIONS: list[Mutation] = [
    # pod: ids
    Mutation(
        "pod: ids at their bounds",
        _pod_sc(runAsUser=0, runAsGroup=2147483647, fsGroup=0, supplementalGroups=[0, 2147483647]),
    ),
    Mutation("pod: runAsUser -1", _pod_sc(runAsUser=-1)),
    Mutation("pod: runAsUser 2^31", _pod_sc(runAsUser=2147483648)),
    Mutation("pod: runAsGroup -1", _pod_sc(runAsGroup=-1)),
    Mutation("pod: fsGroup -1", _pod_sc(fsGroup=-1)),
    Mutation(
        "pod: supplementalGroups with -1 and 2^31", _pod_sc(supplementalGroups=[1, -1, 2147483648])
    ),
    Mutation(
        "pod: runAsNonRoot with a root user is for the kubelet",
        _pod_sc(runAsNonRoot=True, runAsUser=0),
    ),
    # pod: namespaces
    Mutation("pod: shareProcessNamespace", set_spec(shareProcessNamespace=True)),
    Mutation(
        "pod: shareProcessNamespace and hostPID", set_spec(shareProcessNamespace=True, hostPID=True)
    ),
    Mutation(
        "pod: hostPID, hostIPC and hostNetwork",
        set_spec(hostPID=True, hostIPC=True, hostNetwork=True),
    ),
    # pod: sysctls
    Mutation(
        "sysctls: valid, with slashes",
        _sysctls(
            ("net.ipv4.ip_forward", "1"),
            ("kernel/shm_rmid_forced", "1"),
            ("net.ipv4.conf.eno2/100.rp_filter", "0"),
        ),
    ),
    Mutation("sysctls: empty name", _sysctls(("", "1"))),
    Mutation("sysctls: upper case name", _sysctls(("Net.IPv4", "1"))),
    Mutation("sysctls: name ending in a dot", _sysctls(("kernel.", "1"))),
    Mutation("sysctls: name too long", _sysctls(("a" * 254, "1"))),
    Mutation("sysctls: duplicate", _sysctls(("kernel.msgmax", "1"), ("kernel.msgmax", "2"))),
    Mutation(
        "sysctls: net with hostNetwork",
        all_of(
            set_spec(hostNetwork=True),
            _sysctls(("net.core.somaxconn", "1024"), ("kernel.domainname", "x")),
        ),
    ),
    Mutation(
        "sysctls: slash form of net with hostNetwork",
        all_of(set_spec(hostNetwork=True), _sysctls(("net/ipv4/ip_forward", "1"))),
    ),
    Mutation(
        "sysctls: ipc with hostIPC",
        all_of(
            set_spec(hostIPC=True),
            _sysctls(("kernel.shmmax", "1"), ("fs.mqueue.msg_max", "10"), ("kernel.sem", "1")),
        ),
    ),
    Mutation(
        "sysctls: net with hostIPC is fine",
        all_of(set_spec(hostIPC=True), _sysctls(("net.core.somaxconn", "1024"))),
    ),
    Mutation(
        "sysctls: bad and duplicate with hostNetwork",
        all_of(
            set_spec(hostNetwork=True), _sysctls(("net.x", "1"), ("net.x", "1"), ("net..y", "1"))
        ),
    ),
    # pod: policies
    Mutation(
        "fsGroupChangePolicy: OnRootMismatch",
        _pod_sc(fsGroup=1000, fsGroupChangePolicy="OnRootMismatch"),
    ),
    Mutation("fsGroupChangePolicy: unknown", _pod_sc(fsGroupChangePolicy="Never")),
    Mutation("supplementalGroupsPolicy: Strict", _pod_sc(supplementalGroupsPolicy="Strict")),
    Mutation("supplementalGroupsPolicy: unknown", _pod_sc(supplementalGroupsPolicy="Loose")),
    Mutation("seLinuxChangePolicy: Recursive", _pod_sc(seLinuxChangePolicy="Recursive")),
    Mutation(
        "seLinuxChangePolicy: MountOption",
        _pod_sc(seLinuxChangePolicy="MountOption"),
    ),
    Mutation("seLinuxChangePolicy: unknown", _pod_sc(seLinuxChangePolicy="Sometimes")),
    Mutation(
        "seLinuxOptions: any strings",
        _pod_sc(seLinuxOptions={"level": "s0:c123,c456", "type": "x"}),
    ),
    # pod: seccomp
    Mutation("pod seccomp: RuntimeDefault", _pod_sc(seccompProfile={"type": "RuntimeDefault"})),
    Mutation(
        "pod seccomp: Localhost with a relative path",
        _pod_sc(seccompProfile={"type": LOCAL, "localhostProfile": "profiles/a.json"}),
    ),
    Mutation("pod seccomp: no type", _pod_sc(seccompProfile={})),
    Mutation("pod seccomp: unknown type", _pod_sc(seccompProfile={"type": "Default"})),
    Mutation("pod seccomp: Localhost without a profile", _pod_sc(seccompProfile={"type": LOCAL})),
    Mutation(
        "pod seccomp: Localhost with an absolute path",
        _pod_sc(seccompProfile={"type": LOCAL, "localhostProfile": "/etc/p.json"}),
    ),
    Mutation(
        "pod seccomp: Localhost with '..'",
        _pod_sc(seccompProfile={"type": LOCAL, "localhostProfile": "a/../../b"}),
    ),
    Mutation(
        "pod seccomp: absolute with '..'",
        _pod_sc(seccompProfile={"type": LOCAL, "localhostProfile": "/a/.."}),
    ),
    Mutation(
        "pod seccomp: Unconfined with a profile",
        _pod_sc(seccompProfile={"type": "Unconfined", "localhostProfile": "a.json"}),
    ),
    # pod: AppArmor
    Mutation("pod AppArmor: RuntimeDefault", _pod_sc(appArmorProfile={"type": "RuntimeDefault"})),
    Mutation(
        "pod AppArmor: Localhost",
        _pod_sc(appArmorProfile={"type": LOCAL, "localhostProfile": "k8s-profile"}),
    ),
    Mutation("pod AppArmor: no type", _pod_sc(appArmorProfile={})),
    Mutation("pod AppArmor: unknown type", _pod_sc(appArmorProfile={"type": "Enforce"})),
    Mutation("pod AppArmor: Localhost without a profile", _pod_sc(appArmorProfile={"type": LOCAL})),
    Mutation(
        "pod AppArmor: Localhost with an empty profile",
        _pod_sc(appArmorProfile={"type": LOCAL, "localhostProfile": ""}),
    ),
    Mutation(
        "pod AppArmor: Localhost padded with spaces",
        _pod_sc(appArmorProfile={"type": LOCAL, "localhostProfile": " p "}),
    ),
    Mutation(
        "pod AppArmor: Localhost profile too long",
        _pod_sc(appArmorProfile={"type": LOCAL, "localhostProfile": "p" * 4096}),
    ),
    Mutation(
        "pod AppArmor: Unconfined with a profile",
        _pod_sc(appArmorProfile={"type": "Unconfined", "localhostProfile": "p"}),
    ),
    # pod: Windows options (no spec.os: accepted on any pod)
    Mutation(
        "pod windowsOptions: a domain user",
        _pod_sc(windowsOptions={"runAsUserName": "NT AUTHORITY\\NETWORK SERVICE"}),
    ),
    Mutation(
        "pod windowsOptions: gmsaCredentialSpecName not a subdomain",
        _pod_sc(windowsOptions={"gmsaCredentialSpecName": "Bad_Name"}),
    ),
    Mutation(
        "pod windowsOptions: empty gmsaCredentialSpec",
        _pod_sc(windowsOptions={"gmsaCredentialSpec": ""}),
    ),
    Mutation(
        "pod windowsOptions: empty runAsUserName", _pod_sc(windowsOptions={"runAsUserName": ""})
    ),
    Mutation(
        "pod windowsOptions: runAsUserName with a control character",
        _pod_sc(windowsOptions={"runAsUserName": "a\tb"}),
    ),
    Mutation(
        "pod windowsOptions: runAsUserName with two backslashes",
        _pod_sc(windowsOptions={"runAsUserName": "a\\b\\c"}),
    ),
    Mutation(
        "pod windowsOptions: runAsUserName domain and user faults",
        _pod_sc(windowsOptions={"runAsUserName": ".dom*ain\\us:er"}),
    ),
    Mutation(
        "pod windowsOptions: runAsUserName empty user",
        _pod_sc(windowsOptions={"runAsUserName": "domain\\"}),
    ),
    Mutation(
        "pod windowsOptions: runAsUserName only dots",
        _pod_sc(windowsOptions={"runAsUserName": "..."}),
    ),
    Mutation(
        "pod windowsOptions: runAsUserName user too long",
        _pod_sc(windowsOptions={"runAsUserName": "u" * 105}),
    ),
    Mutation(
        "pod windowsOptions: runAsUserName long DNS domain",
        _pod_sc(windowsOptions={"runAsUserName": ("d" * 60 + ".") * 4 + "com\\user"}),
    ),
    Mutation(
        "pod windowsOptions: runAsUserName domain of 256",
        _pod_sc(windowsOptions={"runAsUserName": "d" * 256 + "\\user"}),
    ),
    # host process pods
    Mutation(
        "hostProcess pod: with hostNetwork",
        all_of(set_spec(hostNetwork=True), _pod_sc(windowsOptions={"hostProcess": True})),
    ),
    Mutation("hostProcess pod: without hostNetwork", _pod_sc(windowsOptions={"hostProcess": True})),
    Mutation(
        "hostProcess: container only, without hostNetwork",
        _sc(windowsOptions={"hostProcess": True}),
    ),
    Mutation(
        "hostProcess: pod true, container false",
        all_of(
            set_spec(hostNetwork=True),
            _pod_sc(windowsOptions={"hostProcess": True}),
            _sc(windowsOptions={"hostProcess": False}),
        ),
    ),
    Mutation(
        "hostProcess: one of two containers",
        all_of(
            set_spec(hostNetwork=True),
            _sc(windowsOptions={"hostProcess": True}),
            _sidecar_sc(),
        ),
    ),
    # hostUsers
    Mutation("hostUsers false", NO_HOST_USERS),
    Mutation("hostUsers true", set_spec(hostUsers=True)),
    Mutation(
        "hostUsers false with hostNetwork, hostPID and hostIPC",
        all_of(NO_HOST_USERS, set_spec(hostNetwork=True, hostPID=True, hostIPC=True)),
    ),
    # container security context
    Mutation(
        "container: a restricted context",
        _sc(
            runAsNonRoot=True,
            runAsUser=1000,
            runAsGroup=1000,
            allowPrivilegeEscalation=False,
            readOnlyRootFilesystem=True,
            capabilities={"drop": ["ALL"]},
            seccompProfile={"type": "RuntimeDefault"},
        ),
    ),
    Mutation("container: privileged", _sc(privileged=True)),
    Mutation("container: runAsUser -1", _sc(runAsUser=-1)),
    Mutation("container: runAsGroup 2^31", _sc(runAsGroup=2147483648)),
    Mutation("container: procMount Default", _sc(procMount="Default")),
    Mutation("container: procMount unknown", _sc(procMount="Masked")),
    Mutation("container: procMount Unmasked with host users", _sc(procMount="Unmasked")),
    Mutation(
        "container: procMount Unmasked without host users",
        all_of(NO_HOST_USERS, _sc(procMount="Unmasked")),
    ),
    Mutation(
        "container: privileged without privilege escalation",
        _sc(privileged=True, allowPrivilegeEscalation=False),
    ),
    Mutation(
        "container: CAP_SYS_ADMIN without privilege escalation",
        _sc(allowPrivilegeEscalation=False, capabilities={"add": ["NET_ADMIN", "CAP_SYS_ADMIN"]}),
    ),
    Mutation(
        "container: SYS_ADMIN without privilege escalation (not the CAP_ name)",
        _sc(allowPrivilegeEscalation=False, capabilities={"add": ["SYS_ADMIN"]}),
    ),
    Mutation(
        "container: CAP_SYS_ADMIN with privilege escalation",
        _sc(allowPrivilegeEscalation=True, capabilities={"add": ["CAP_SYS_ADMIN"]}),
    ),
    Mutation(
        "container: both escalation faults, full context",
        _sc(
            privileged=True,
            allowPrivilegeEscalation=False,
            runAsUser=5,
            readOnlyRootFilesystem=True,
            capabilities={"add": ["CAP_SYS_ADMIN"], "drop": []},
            seLinuxOptions={"user": "u", "level": "s0"},
            seccompProfile={"type": "RuntimeDefault"},
            procMount="Default",
        ),
    ),
    Mutation("container: seccomp Localhost without a profile", _sc(seccompProfile={"type": LOCAL})),
    Mutation(
        "container: seccomp RuntimeDefault with a profile",
        _sc(seccompProfile={"type": "RuntimeDefault", "localhostProfile": "x"}),
    ),
    Mutation("container: AppArmor unknown type", _sc(appArmorProfile={"type": "Complain"})),
    Mutation(
        "container: AppArmor RuntimeDefault with a profile",
        _sc(appArmorProfile={"type": "RuntimeDefault", "localhostProfile": "x"}),
    ),
    Mutation(
        "container: windowsOptions bad gmsa name",
        _sc(windowsOptions={"gmsaCredentialSpecName": "-x"}),
    ),
    Mutation("init container: runAsUser -1", _sidecar_sc(runAsUser=-1)),
    Mutation(
        "init container: privileged without privilege escalation",
        _sidecar_sc(privileged=True, allowPrivilegeEscalation=False),
    ),
]

# SELinuxMount is on from 1.37: every seLinuxChangePolicy value is accepted, not only Recursive.
VERDICT_CHANGES: VerdictChanges = {"seLinuxChangePolicy: MountOption": ("1.37", True)}
