"""Pod template mutations for the pod-level checks of ``podcheck.pod`` (``ValidatePodSpec``'s
own fields and ``ValidatePodCreate``'s create-only checks), with the edge values that pass beside
the ones that fail.

Left out, because an admission plugin decides them before validation on a real server:
``priority``, ``priorityClassName``, ``preemptionPolicy`` (Priority) and ``runtimeClassName``
(RuntimeClass). ``restartPolicy`` is left out because the operator replaces the template's."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from . import Mutation

Template = dict[str, Any]


def _spec(**fields: Any) -> Callable[[Template], None]:
    def mutate(t: Template) -> None:
        t["spec"].update(fields)

    return mutate


def _dns(**config: Any) -> Callable[[Template], None]:
    return _spec(dnsConfig=config)


def _pod_security(**fields: Any) -> Callable[[Template], None]:
    def mutate(t: Template) -> None:
        t["spec"].setdefault("securityContext", {}).update(fields)

    return mutate


def _container(**fields: Any) -> Callable[[Template], None]:
    def mutate(t: Template) -> None:
        t["spec"]["containers"][0].update(fields)

    return mutate


def _all(*mutations: Callable[[Template], None]) -> Callable[[Template], None]:
    def mutate(t: Template) -> None:
        for m in mutations:
            m(t)

    return mutate


def _claim(**fields: Any) -> dict[str, Any]:
    return {"name": "gpu", **fields}


_LONG_SEARCH = "s" * 60 + ".example.com"  # 72 characters: 29 of them make 2087 with spaces

MUTATIONS: list[Mutation] = [
    # dnsPolicy: validateDNSPolicy, and dnsConfig: validatePodDNSConfig
    Mutation("ok-dnsPolicy Default", _spec(dnsPolicy="Default")),
    Mutation("ok-dnsPolicy ClusterFirstWithHostNet", _spec(dnsPolicy="ClusterFirstWithHostNet")),
    Mutation("dnsPolicy unknown", _spec(dnsPolicy="Cluster")),
    Mutation("dnsPolicy None without dnsConfig", _spec(dnsPolicy="None")),
    Mutation("dnsPolicy None without nameservers", _spec(dnsPolicy="None", dnsConfig={})),
    Mutation(
        "ok-dnsPolicy None with a nameserver",
        _spec(dnsPolicy="None", dnsConfig={"nameservers": ["10.0.0.10"]}),
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
    Mutation("ok-hostname", _spec(hostname="worker-0")),
    Mutation("hostname with a dot", _spec(hostname="worker.0")),
    Mutation("hostname upper case", _spec(hostname="Worker")),
    Mutation("hostname of 64 characters", _spec(hostname="h" * 64)),
    Mutation("ok-subdomain", _spec(subdomain="tfjob")),
    Mutation("subdomain with a dot", _spec(subdomain="tf.job")),
    Mutation("ok-setHostnameAsFQDN", _spec(setHostnameAsFQDN=True, hostname="w", subdomain="s")),
    # activeDeadlineSeconds and terminationGracePeriodSeconds
    Mutation("ok-activeDeadlineSeconds 1", _spec(activeDeadlineSeconds=1)),
    Mutation("activeDeadlineSeconds 0", _spec(activeDeadlineSeconds=0)),
    Mutation("activeDeadlineSeconds negative", _spec(activeDeadlineSeconds=-5)),
    Mutation("ok-activeDeadlineSeconds max int32", _spec(activeDeadlineSeconds=2147483647)),
    Mutation("activeDeadlineSeconds over int32", _spec(activeDeadlineSeconds=2147483648)),
    Mutation("ok-terminationGracePeriodSeconds 0", _spec(terminationGracePeriodSeconds=0)),
    Mutation("ok-terminationGracePeriodSeconds negative", _spec(terminationGracePeriodSeconds=-1)),
    # serviceAccountName (an existing account: the admission plugin looks it up first)
    Mutation("ok-serviceAccountName default", _spec(serviceAccountName="default")),
    Mutation("ok-serviceAccount alias", _spec(serviceAccount="default")),
    # nodeName and schedulingGates
    Mutation("ok-nodeName", _spec(nodeName="node-0")),
    Mutation("nodeName upper case", _spec(nodeName="Node_0")),
    Mutation("ok-schedulingGate", _spec(schedulingGates=[{"name": "example.com/gate"}])),
    Mutation("schedulingGate not qualified", _spec(schedulingGates=[{"name": "a gate"}])),
    Mutation(
        "schedulingGates duplicated",
        _spec(schedulingGates=[{"name": "example.com/gate"}, {"name": "example.com/gate"}]),
    ),
    Mutation(
        "nodeName with schedulingGates",
        _spec(nodeName="node-0", schedulingGates=[{"name": "example.com/gate"}]),
    ),
    # readinessGates
    Mutation("ok-readinessGate", _spec(readinessGates=[{"conditionType": "example.com/ready"}])),
    Mutation("readinessGate not qualified", _spec(readinessGates=[{"conditionType": "is ready"}])),
    Mutation("readinessGate empty", _spec(readinessGates=[{"conditionType": ""}])),
    # hostAliases: ValidateHostAliases
    Mutation("ok-hostAlias", _spec(hostAliases=[{"ip": "10.0.0.5", "hostnames": ["ps.example"]}])),
    Mutation("ok-hostAlias IPv6", _spec(hostAliases=[{"ip": "2001:db8::5", "hostnames": ["ps"]}])),
    Mutation("ok-hostAlias with leading zeros", _spec(hostAliases=[{"ip": "010.0.0.5"}])),
    Mutation("hostAlias without an IP", _spec(hostAliases=[{"hostnames": ["ps"]}])),
    Mutation("hostAlias IP not an IP", _spec(hostAliases=[{"ip": "ps.example"}])),
    Mutation(
        "hostAlias hostname upper case",
        _spec(hostAliases=[{"ip": "10.0.0.5", "hostnames": ["ok", "PS"]}]),
    ),
    # os: validateOS, validateLinux, validateWindows
    Mutation("ok-os linux", _spec(os={"name": "linux"})),
    Mutation("ok-os windows", _spec(os={"name": "windows"})),
    Mutation("os unknown", _spec(os={"name": "plan9"})),
    Mutation("os without a name", _spec(os={})),
    Mutation(
        "linux pod with windowsOptions",
        _all(_spec(os={"name": "linux"}), _pod_security(windowsOptions={"runAsUserName": "u"})),
    ),
    Mutation(
        "linux container with windowsOptions",
        _all(
            _spec(os={"name": "linux"}),
            _container(securityContext={"windowsOptions": {"runAsUserName": "u"}}),
        ),
    ),
    Mutation(
        "windows pod with linux pod fields",
        _all(
            _spec(os={"name": "windows"}, hostPID=True, hostIPC=True, shareProcessNamespace=False),
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
        _spec(os={"name": "windows"}, hostUsers=True),
    ),
    Mutation(
        "windows container with linux fields",
        _all(
            _spec(os={"name": "windows"}),
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
        _all(_spec(os={"name": "windows"}), _pod_security(windowsOptions={"runAsUserName": "u"})),
    ),
    # hostNetwork: validatePodHostNetworkDeps (the operator's tfjob-port is 2222)
    Mutation("ok-hostNetwork", _spec(hostNetwork=True)),
    Mutation(
        "hostNetwork with another hostPort",
        _all(
            _spec(hostNetwork=True),
            _container(ports=[{"name": "tfjob-port", "containerPort": 2222, "hostPort": 3333}]),
        ),
    ),
    # hostUsers: validateHostUsers
    Mutation("ok-hostUsers false", _spec(hostUsers=False)),
    Mutation("hostUsers false with hostNetwork", _spec(hostUsers=False, hostNetwork=True)),
    Mutation("hostUsers false with hostPID", _spec(hostUsers=False, hostPID=True)),
    Mutation("hostUsers false with hostIPC", _spec(hostUsers=False, hostIPC=True)),
    Mutation("ok-hostUsers true with hostPID", _spec(hostUsers=True, hostPID=True)),
    # ephemeralContainers: forbidden on create
    Mutation(
        "ephemeralContainers",
        _spec(ephemeralContainers=[{"name": "debug", "image": "busybox:1.36"}]),
    ),
    Mutation(
        "ephemeral container with a bad name and ports",
        _spec(
            ephemeralContainers=[
                {"name": "Debug", "image": "busybox:1.36", "ports": [{"containerPort": 80}]}
            ]
        ),
    ),
    Mutation(
        "ephemeral container named like a container",
        _spec(ephemeralContainers=[{"name": "tensorflow", "image": "busybox:1.36"}]),
    ),
    Mutation(
        "ephemeral container with refused fields",
        _spec(
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
        _spec(
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
        "ok-resourceClaim by name", _spec(resourceClaims=[_claim(resourceClaimName="gpu-claim")])
    ),
    Mutation(
        "ok-resourceClaim by template",
        _spec(resourceClaims=[_claim(resourceClaimTemplateName="gpu-template")]),
    ),
    Mutation("resourceClaim without a source", _spec(resourceClaims=[_claim()])),
    Mutation(
        "resourceClaim with both sources",
        _spec(resourceClaims=[_claim(resourceClaimName="a", resourceClaimTemplateName="b")]),
    ),
    Mutation(
        "resourceClaim without a name", _spec(resourceClaims=[{"resourceClaimName": "gpu-claim"}])
    ),
    Mutation(
        "resourceClaim name upper case",
        _spec(resourceClaims=[{"name": "GPU", "resourceClaimName": "gpu-claim"}]),
    ),
    Mutation(
        "resourceClaims duplicated",
        _spec(
            resourceClaims=[
                _claim(resourceClaimName="a"),
                _claim(resourceClaimName="b"),
            ]
        ),
    ),
    Mutation(
        "resourceClaimName not a subdomain",
        _spec(resourceClaims=[_claim(resourceClaimName="Claim_A")]),
    ),
    Mutation(
        "resourceClaimTemplateName not a subdomain",
        _spec(resourceClaims=[_claim(resourceClaimTemplateName="-template")]),
    ),
    # fields with no check of their own
    Mutation("ok-enableServiceLinks false", _spec(enableServiceLinks=False)),
    Mutation("ok-shareProcessNamespace", _spec(shareProcessNamespace=True)),
    Mutation("ok-imagePullSecrets", _spec(imagePullSecrets=[{"name": "registry"}])),
]
