"""Pod template mutations for the pod-level checks of ``podcheck.pod`` (``ValidatePodSpec``'s
own fields and ``ValidatePodCreate``'s create-only checks), with the edge values that pass beside
the ones that fail.

Left out, because an admission plugin decides them before validation on a real server:
``priority``, ``priorityClassName``, ``preemptionPolicy`` (Priority) and ``runtimeClassName``
(RuntimeClass). ``restartPolicy`` is left out because the operator replaces the template's."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from . import Mutation, Template, VerdictChanges, all_of, set_spec


def _dns(**config: Any) -> Callable[[Template], None]:
    return set_spec(dnsConfig=config)


def _pod_security(**fields: Any) -> Callable[[Template], None]:
    def mutate(t: Template) -> None:
        t["spec"].setdefault("securityContext", {}).update(fields)

    return mutate


def _container(**fields: Any) -> Callable[[Template], None]:
    def mutate(t: Template) -> None:
        t["spec"]["containers"][0].update(fields)

    return mutate


def _claim(**fields: Any) -> dict[str, Any]:
    return {"name": "gpu", **fields}


_LONG_SEARCH = "s" * 60 + ".example.com"  # 72 characters: 29 of them make 2087 with spaces

MUTATIONS: list[Mutation] = [
    # dnsPolicy: validateDNSPolicy, and dnsConfig: validatePodDNSConfig
    Mutation("ok-dnsPolicy Default", set_spec(dnsPolicy="Default")),
    Mutation("ok-dnsPolicy ClusterFirstWithHostNet", set_spec(dnsPolicy="ClusterFirstWithHostNet")),
    Mutation("dnsPolicy unknown", set_spec(dnsPolicy="Cluster")),
    Mutation("dnsPolicy None without dnsConfig", set_spec(dnsPolicy="None")),
    Mutation("dnsPolicy None without nameservers", set_spec(dnsPolicy="None", dnsConfig={})),
    Mutation(
        "ok-dnsPolicy None with a nameserver",
        set_spec(dnsPolicy="None", dnsConfig={"nameservers": ["10.0.0.10"]}),
    ),
    Mutation("ok-three nameservers", _dns(nameservers=["10.0.0.1", "10.0.0.2", "2001:db8::1"])),
    Mutation(
        "four nameservers", _dns(nameservers=["10.0.0.1", "10.0.0.2", "10.0.0.3", "10.0.0.4"])
    ),
    Mutation("nameserver not an IP", _dns(nameservers=["dns.example.com"])),
    Mutation("nameserver of three octets", _dns(nameservers=["10.0.0"])),
    Mutation("ok-nameserver with leading zeros", _dns(nameservers=["010.000.000.010"])),
    Mutation("ok-nameserver IPv4-mapped IPv6", _dns(nameservers=["::ffff:10.0.0.1"])),
    Mutation("nameserver IPv6 with a zone", _dns(nameservers=["fe80::1%eth0"])),
    Mutation("ok-search with a trailing dot", _dns(searches=["example.com."])),
    Mutation("ok-search '.'", _dns(searches=["."])),
    Mutation("ok-search with an underscore", _dns(searches=["_srv._tcp.example.com"])),
    Mutation("search upper case", _dns(searches=["Example.com"])),
    Mutation("search with a space", _dns(searches=["a b"])),
    Mutation("ok-32 searches", _dns(searches=[f"s{i}.example.com" for i in range(32)])),
    Mutation("33 searches", _dns(searches=[f"s{i}.example.com" for i in range(33)])),
    Mutation("search list over 2048 characters", _dns(searches=[_LONG_SEARCH] * 29)),
    Mutation("search list of 2048 characters", _dns(searches=["s" * 2048])),
    Mutation("dns option without a name", _dns(options=[{"value": "2"}])),
    Mutation("ok-dns option", _dns(options=[{"name": "ndots", "value": "2"}])),
    # hostname and subdomain
    Mutation("ok-hostname", set_spec(hostname="worker-0")),
    Mutation("hostname with a dot", set_spec(hostname="worker.0")),
    Mutation("hostname upper case", set_spec(hostname="Worker")),
    Mutation("hostname of 64 characters", set_spec(hostname="h" * 64)),
    Mutation("ok-subdomain", set_spec(subdomain="tfjob")),
    Mutation("subdomain with a dot", set_spec(subdomain="tf.job")),
    Mutation("ok-setHostnameAsFQDN", set_spec(setHostnameAsFQDN=True, hostname="w", subdomain="s")),
    # hostnameOverride: dropped while HostnameOverride is off (1.34), then validatePodHostName
    Mutation("ok-hostnameOverride", set_spec(hostnameOverride="worker-0.example")),
    Mutation("ok-hostnameOverride upper case", set_spec(hostnameOverride="Worker_0")),
    Mutation("ok-hostnameOverride empty", set_spec(hostnameOverride="")),
    Mutation(
        "ok-hostnameOverride of 65 with setHostnameAsFQDN and hostNetwork",
        set_spec(
            hostnameOverride="h" * 65,
            setHostnameAsFQDN=True,
            hostname="w",
            subdomain="s",
            hostNetwork=True,
        ),
    ),
    # schedulingGroup: dropped while GenericWorkload is off (every minor of the window; 1.34 and
    # 1.35 do not know the field), so not even a bad name is refused
    Mutation("ok-schedulingGroup", set_spec(schedulingGroup={"podGroupName": "group-a"})),
    Mutation("ok-schedulingGroup bad name", set_spec(schedulingGroup={"podGroupName": "Group A"})),
    # activeDeadlineSeconds and terminationGracePeriodSeconds
    Mutation("ok-activeDeadlineSeconds 1", set_spec(activeDeadlineSeconds=1)),
    Mutation("activeDeadlineSeconds 0", set_spec(activeDeadlineSeconds=0)),
    Mutation("activeDeadlineSeconds negative", set_spec(activeDeadlineSeconds=-5)),
    Mutation("ok-activeDeadlineSeconds max int32", set_spec(activeDeadlineSeconds=2147483647)),
    Mutation("activeDeadlineSeconds over int32", set_spec(activeDeadlineSeconds=2147483648)),
    Mutation("ok-terminationGracePeriodSeconds 0", set_spec(terminationGracePeriodSeconds=0)),
    Mutation(
        "ok-terminationGracePeriodSeconds negative", set_spec(terminationGracePeriodSeconds=-1)
    ),
    # serviceAccountName (an existing account: the admission plugin looks it up first)
    Mutation("ok-serviceAccountName default", set_spec(serviceAccountName="default")),
    Mutation("ok-serviceAccount alias", set_spec(serviceAccount="default")),
    # nodeName and schedulingGates
    Mutation("ok-nodeName", set_spec(nodeName="node-0")),
    Mutation("nodeName upper case", set_spec(nodeName="Node_0")),
    Mutation("ok-schedulingGate", set_spec(schedulingGates=[{"name": "example.com/gate"}])),
    Mutation("schedulingGate not qualified", set_spec(schedulingGates=[{"name": "a gate"}])),
    Mutation(
        "schedulingGates duplicated",
        set_spec(schedulingGates=[{"name": "example.com/gate"}, {"name": "example.com/gate"}]),
    ),
    Mutation(
        "nodeName with schedulingGates",
        set_spec(nodeName="node-0", schedulingGates=[{"name": "example.com/gate"}]),
    ),
    # readinessGates
    Mutation("ok-readinessGate", set_spec(readinessGates=[{"conditionType": "example.com/ready"}])),
    Mutation(
        "readinessGate not qualified", set_spec(readinessGates=[{"conditionType": "is ready"}])
    ),
    Mutation("readinessGate empty", set_spec(readinessGates=[{"conditionType": ""}])),
    # hostAliases: ValidateHostAliases
    Mutation(
        "ok-hostAlias", set_spec(hostAliases=[{"ip": "10.0.0.5", "hostnames": ["ps.example"]}])
    ),
    Mutation(
        "ok-hostAlias IPv6", set_spec(hostAliases=[{"ip": "2001:db8::5", "hostnames": ["ps"]}])
    ),
    Mutation("ok-hostAlias with leading zeros", set_spec(hostAliases=[{"ip": "010.0.0.5"}])),
    Mutation("hostAlias without an IP", set_spec(hostAliases=[{"hostnames": ["ps"]}])),
    Mutation("hostAlias IP not an IP", set_spec(hostAliases=[{"ip": "ps.example"}])),
    Mutation(
        "hostAlias hostname upper case",
        set_spec(hostAliases=[{"ip": "10.0.0.5", "hostnames": ["ok", "PS"]}]),
    ),
    # os: validateOS, validateLinux, validateWindows
    Mutation("ok-os linux", set_spec(os={"name": "linux"})),
    Mutation("ok-os windows", set_spec(os={"name": "windows"})),
    Mutation("os unknown", set_spec(os={"name": "plan9"})),
    Mutation("os without a name", set_spec(os={})),
    Mutation(
        "linux pod with windowsOptions",
        all_of(
            set_spec(os={"name": "linux"}), _pod_security(windowsOptions={"runAsUserName": "u"})
        ),
    ),
    Mutation(
        "linux container with windowsOptions",
        all_of(
            set_spec(os={"name": "linux"}),
            _container(securityContext={"windowsOptions": {"runAsUserName": "u"}}),
        ),
    ),
    Mutation(
        "windows pod with linux pod fields",
        all_of(
            set_spec(
                os={"name": "windows"}, hostPID=True, hostIPC=True, shareProcessNamespace=False
            ),
            _pod_security(
                runAsUser=1000,
                runAsGroup=1000,
                fsGroup=1000,
                supplementalGroups=[5],
                seccompProfile={"type": "RuntimeDefault"},
                seLinuxOptions={"level": "s0"},
                sysctls=[{"name": "net.core.somaxconn", "value": "1024"}],
            ),
        ),
    ),
    Mutation(
        "windows pod with hostUsers",
        set_spec(os={"name": "windows"}, hostUsers=True),
    ),
    Mutation(
        "windows container with linux fields",
        all_of(
            set_spec(os={"name": "windows"}),
            _container(
                securityContext={
                    "runAsUser": 1000,
                    "privileged": False,
                    "readOnlyRootFilesystem": True,
                    "allowPrivilegeEscalation": False,
                    "capabilities": {"drop": ["ALL"]},
                }
            ),
        ),
    ),
    Mutation(
        "ok-windows pod with windowsOptions",
        all_of(
            set_spec(os={"name": "windows"}), _pod_security(windowsOptions={"runAsUserName": "u"})
        ),
    ),
    # hostNetwork: validatePodHostNetworkDeps (the operator's tfjob-port is 2222)
    Mutation("ok-hostNetwork", set_spec(hostNetwork=True)),
    Mutation(
        "hostNetwork with another hostPort",
        all_of(
            set_spec(hostNetwork=True),
            _container(ports=[{"name": "tfjob-port", "containerPort": 2222, "hostPort": 3333}]),
        ),
    ),
    # hostUsers: validateHostUsers
    Mutation("ok-hostUsers false", set_spec(hostUsers=False)),
    Mutation("hostUsers false with hostNetwork", set_spec(hostUsers=False, hostNetwork=True)),
    Mutation("hostUsers false with hostPID", set_spec(hostUsers=False, hostPID=True)),
    Mutation("hostUsers false with hostIPC", set_spec(hostUsers=False, hostIPC=True)),
    Mutation("ok-hostUsers true with hostPID", set_spec(hostUsers=True, hostPID=True)),
    # ephemeralContainers: forbidden on create
    Mutation(
        "ephemeralContainers",
        set_spec(ephemeralContainers=[{"name": "debug", "image": "busybox:1.36"}]),
    ),
    Mutation(
        "ephemeral container with a bad name and ports",
        set_spec(
            ephemeralContainers=[
                {"name": "Debug", "image": "busybox:1.36", "ports": [{"containerPort": 80}]}
            ]
        ),
    ),
    Mutation(
        "ephemeral container named like a container",
        set_spec(ephemeralContainers=[{"name": "tensorflow", "image": "busybox:1.36"}]),
    ),
    Mutation(
        "ephemeral container with refused fields",
        set_spec(
            ephemeralContainers=[
                {
                    "name": "debug",
                    "image": " busybox:1.36",
                    "targetContainerName": "missing",
                    "ports": [],
                    "resources": {"limits": {}},
                    "resizePolicy": [],
                    "readinessProbe": {"exec": {"command": ["true"]}},
                    "lifecycle": {},
                    "restartPolicy": "Always",
                    "volumeMounts": [
                        {"name": "scratch", "mountPath": "/s", "subPath": "a"},
                        {"name": "scratch", "mountPath": "/t", "subPathExpr": "$(X)"},
                    ],
                }
            ],
            volumes=[{"name": "scratch", "emptyDir": {}}],
        ),
    ),
    Mutation(
        "ephemeral container with empty resources",
        set_spec(
            ephemeralContainers=[
                {
                    "name": "debug",
                    "image": "busybox:1.36",
                    "targetContainerName": "tensorflow",
                    "resources": {},
                }
            ]
        ),
    ),
    # resourceClaims: validatePodResourceClaims
    Mutation(
        "ok-resourceClaim by name", set_spec(resourceClaims=[_claim(resourceClaimName="gpu-claim")])
    ),
    Mutation(
        "ok-resourceClaim by template",
        set_spec(resourceClaims=[_claim(resourceClaimTemplateName="gpu-template")]),
    ),
    Mutation("resourceClaim without a source", set_spec(resourceClaims=[_claim()])),
    Mutation(
        "resourceClaim with both sources",
        set_spec(resourceClaims=[_claim(resourceClaimName="a", resourceClaimTemplateName="b")]),
    ),
    Mutation(
        "resourceClaim without a name",
        set_spec(resourceClaims=[{"resourceClaimName": "gpu-claim"}]),
    ),
    Mutation(
        "resourceClaim name upper case",
        set_spec(resourceClaims=[{"name": "GPU", "resourceClaimName": "gpu-claim"}]),
    ),
    Mutation(
        "resourceClaims duplicated",
        set_spec(
            resourceClaims=[
                _claim(resourceClaimName="a"),
                _claim(resourceClaimName="b"),
            ]
        ),
    ),
    Mutation(
        "resourceClaimName not a subdomain",
        set_spec(resourceClaims=[_claim(resourceClaimName="Claim_A")]),
    ),
    Mutation(
        "resourceClaimTemplateName not a subdomain",
        set_spec(resourceClaims=[_claim(resourceClaimTemplateName="-template")]),
    ),
    # fields with no check of their own
    Mutation("ok-enableServiceLinks false", set_spec(enableServiceLinks=False)),
    Mutation("ok-shareProcessNamespace", set_spec(shareProcessNamespace=True)),
    Mutation("ok-imagePullSecrets", set_spec(imagePullSecrets=[{"name": "registry"}])),
]

# From 1.35 HostnameOverride is on: the field is kept and checked. From 1.36
# StrictIPCIDRValidation is on: the legacy IP fields refuse leading zeros and IPv4-mapped IPv6.
VERDICT_CHANGES: VerdictChanges = {
    "ok-hostnameOverride upper case": ("1.35", False),
    "ok-hostnameOverride empty": ("1.35", False),
    "ok-hostnameOverride of 65 with setHostnameAsFQDN and hostNetwork": ("1.35", False),
    "ok-nameserver with leading zeros": ("1.36", False),
    "ok-nameserver IPv4-mapped IPv6": ("1.36", False),
    "ok-hostAlias with leading zeros": ("1.36", False),
}
