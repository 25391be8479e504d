"""Pod template mutations for the container checks (``podcheck.containers``): every check of
``validateContainers`` / ``validateInitContainers`` a template can reach, with the edge values
that pass beside the ones that fail, and the fields of gates off on 1.34 (EnvFiles,
ContainerRestartRules, ContainerStopSignals) that a server drops before it validates while
their gate is off. ``GATED`` has the cases of the checks those gates bring from 1.35."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

from . import Mutation, Template, VerdictChanges, all_of, set_spec


def _c0(t: Template) -> dict[str, Any]:
    container: dict[str, Any] = t["spec"]["containers"][0]
    return container


def _set(**fields: Any) -> Callable[[Template], None]:
    """Set fields of the first container."""

    def mutate(t: Template) -> None:
        _c0(t).update(copy.deepcopy(fields))

    return mutate


def _drop(key: str) -> Callable[[Template], None]:
    def mutate(t: Template) -> None:
        del _c0(t)[key]

    return mutate


def _sidecar(name: str = "sidecar", **fields: Any) -> dict[str, Any]:
    return {"name": name, "image": "busybox:1.36", "restartPolicy": "Always", **fields}


def _init(name: str = "init", **fields: Any) -> dict[str, Any]:
    return {"name": name, "image": "busybox:1.36", **fields}


def _add_init(*containers: dict[str, Any]) -> Callable[[Template], None]:
    def mutate(t: Template) -> None:
        t["spec"].setdefault("initContainers", []).extend(copy.deepcopy(containers))

    return mutate


def _add_container(*containers: dict[str, Any]) -> Callable[[Template], None]:
    def mutate(t: Template) -> None:
        t["spec"]["containers"].extend(copy.deepcopy(containers))

    return mutate


def _ephemeral(**fields: Any) -> Callable[[Template], None]:
    """Add an ephemeral container (a create refuses them; the server checks them first)."""

    def mutate(t: Template) -> None:
        container = {"name": "debug", "image": "busybox", **copy.deepcopy(fields)}
        t["spec"].setdefault("ephemeralContainers", []).append(container)

    return mutate


def _env(*items: dict[str, Any]) -> Callable[[Template], None]:
    return _set(env=list(items))


def _value_from(**source: Any) -> Callable[[Template], None]:
    return _env({"name": "X", "valueFrom": source})


def _field_ref(field_path: str, **extra: Any) -> Callable[[Template], None]:
    return _value_from(fieldRef={"fieldPath": field_path, **extra})


def _resource_ref(resource: str, **extra: Any) -> Callable[[Template], None]:
    return _value_from(resourceFieldRef={"resource": resource, **extra})


def _env_from(*items: dict[str, Any]) -> Callable[[Template], None]:
    return _set(envFrom=list(items))


def _ports(*ports: dict[str, Any]) -> Callable[[Template], None]:
    return _set(ports=list(ports))


def _probe(kind: str, **probe: Any) -> Callable[[Template], None]:
    return _set(**{kind: probe})


def _lifecycle(**hooks: Any) -> Callable[[Template], None]:
    return _set(lifecycle=hooks)


HTTP = {"httpGet": {"port": 8080}}
EXEC = {"exec": {"command": ["true"]}}

MUTATIONS: list[Mutation] = [
    # names and images
    Mutation("container name: a DNS-1123 label of 63", _set(name="a" * 63)),
    Mutation("container name: 64 characters", _set(name="a" * 64)),
    Mutation("container name: upper case", _set(name="TensorFlow")),
    Mutation("container name: underscore", _set(name="tensor_flow")),
    Mutation("container name: empty", _set(name="")),
    Mutation(
        "container names: duplicate",
        _add_container({"name": "tensorflow", "image": "busybox:1.36"}),
    ),
    Mutation(
        "container names: two empty",
        all_of(_set(name=""), _add_container({"name": "", "image": "busybox:1.36"})),
    ),
    Mutation("init container name: same as a container", _add_init(_init("tensorflow"))),
    Mutation("init container names: duplicate", _add_init(_init("a"), _init("a"))),
    Mutation("init container name: upper case", _add_init(_init("Init"))),
    Mutation("image: empty", _set(image="")),
    Mutation("image: missing", _drop("image")),
    Mutation("image: trailing space", _set(image="tensorflow/tensorflow:2.15.0 ")),
    Mutation("image: only a space", _set(image=" ")),
    Mutation("init image: leading tab", _add_init(_init(image="\tbusybox"))),
    Mutation("image: latest by default", _set(image="tensorflow/tensorflow")),
    Mutation("image: a digest", _set(image="busybox@sha256:" + "a" * 64)),
    Mutation("image: registry with port", _set(image="localhost:5000/tf/tf:2.15")),
    Mutation("image: explicit latest tag", _set(image="busybox:latest")),
    Mutation("image: tag and digest", _set(image="busybox:latest@sha256:" + "b" * 64)),
    Mutation("image: upper-case repository (unparsable)", _set(image="Busybox")),
    Mutation("image: upper-case registry host", _set(image="Example.COM/team/busybox")),
    Mutation("image: upper-case tag", _set(image="busybox:Latest")),
    Mutation("image: a bare 64-hex id", _set(image="c" * 64)),
    Mutation("image: short digest (unparsable)", _set(image="busybox@sha256:abc")),
    Mutation("image: spaces inside", _set(image="busy box")),
    # policies
    Mutation("imagePullPolicy: Never", _set(imagePullPolicy="Never")),
    Mutation("imagePullPolicy: lower case", _set(imagePullPolicy="always")),
    Mutation(
        "terminationMessagePolicy: FallbackToLogsOnError",
        _set(terminationMessagePolicy="FallbackToLogsOnError"),
    ),
    Mutation("terminationMessagePolicy: unknown", _set(terminationMessagePolicy="Logs")),
    Mutation("terminationMessagePath: custom", _set(terminationMessagePath="/tmp/done")),
    Mutation(
        "workingDir, args, stdin and tty", _set(workingDir="/w", args=["a"], stdin=True, tty=True)
    ),
    # ports
    Mutation(
        "port: named, UDP, hostPort",
        _ports({"name": "p-1", "containerPort": 53, "protocol": "UDP", "hostPort": 5353}),
    ),
    Mutation("port: SCTP", _ports({"containerPort": 9000, "protocol": "SCTP"})),
    Mutation("port: containerPort 0", _ports({"containerPort": 0})),
    Mutation("port: containerPort missing", _ports({"name": "web"})),
    Mutation("port: containerPort 65536", _ports({"containerPort": 65536})),
    Mutation("port: containerPort 65535", _ports({"containerPort": 65535})),
    Mutation("port: hostPort -1", _ports({"containerPort": 80, "hostPort": -1})),
    Mutation("port: hostPort 70000", _ports({"containerPort": 80, "hostPort": 70000})),
    Mutation("port: protocol HTTP", _ports({"containerPort": 80, "protocol": "HTTP"})),
    Mutation("port: protocol lower case", _ports({"containerPort": 80, "protocol": "tcp"})),
    Mutation("port name: 16 characters", _ports({"containerPort": 80, "name": "abcdefghijklmnop"})),
    Mutation("port name: 15 characters", _ports({"containerPort": 80, "name": "abcdefghijklmno"})),
    Mutation("port name: upper case", _ports({"containerPort": 80, "name": "Web"})),
    Mutation("port name: digits only", _ports({"containerPort": 80, "name": "8080"})),
    Mutation("port name: double hyphen", _ports({"containerPort": 80, "name": "a--b"})),
    Mutation("port name: leading hyphen", _ports({"containerPort": 80, "name": "-ab"})),
    Mutation("port name: several faults", _ports({"containerPort": 80, "name": "-A_"})),
    # The operator's Service takes the tensorflow container's ports, all TCP, and its tfjob-port.
    Mutation(
        "service ports: TCP and UDP on one number",
        _ports(
            {"name": "dns", "containerPort": 53},
            {"name": "dns-udp", "containerPort": 53, "protocol": "UDP"},
        ),
    ),
    Mutation(
        "service ports: 2222 not named tfjob-port", _ports({"name": "grpc", "containerPort": 2222})
    ),
    Mutation(
        "service ports: several, all named",
        _ports(
            {"name": "tfjob-port", "containerPort": 2222},
            {"name": "metrics", "containerPort": 9090},
        ),
    ),
    Mutation(
        "service ports: an unnamed one beside tfjob-port",
        _ports({"name": "tfjob-port", "containerPort": 2222}, {"containerPort": 9090}),
    ),
    Mutation(
        "port names: duplicate",
        _ports({"containerPort": 80, "name": "web"}, {"containerPort": 81, "name": "web"}),
    ),
    Mutation(
        "host ports: same port, protocol and IP in two containers",
        all_of(
            _ports({"containerPort": 80, "hostPort": 8080}),
            _add_container(
                {
                    "name": "b",
                    "image": "busybox",
                    "ports": [{"containerPort": 81, "hostPort": 8080}],
                }
            ),
        ),
    ),
    Mutation(
        "host ports: same port, other protocol",
        _ports(
            {"containerPort": 80, "hostPort": 8080},
            {"containerPort": 81, "hostPort": 8080, "protocol": "UDP"},
        ),
    ),
    Mutation(
        "host ports: same port, other hostIP",
        _ports(
            {"containerPort": 80, "hostPort": 8080, "hostIP": "10.0.0.1"},
            {"containerPort": 81, "hostPort": 8080, "hostIP": "10.0.0.2"},
        ),
    ),
    Mutation(
        "host ports: duplicate inside the second init container",
        _add_init(
            _init("a"),
            _init(
                "b",
                ports=[{"containerPort": 1, "hostPort": 99}, {"containerPort": 2, "hostPort": 99}],
            ),
        ),
    ),
    Mutation(
        "host ports: an init container may reuse a container's",
        all_of(
            _ports({"containerPort": 80, "hostPort": 8080}),
            _add_init(_init(ports=[{"containerPort": 80, "hostPort": 8080}])),
        ),
    ),
    Mutation(
        "hostNetwork: host ports default to container ports, and collide",
        all_of(
            set_spec(hostNetwork=True),
            _ports({"containerPort": 2222}),
            _add_container({"name": "b", "image": "busybox", "ports": [{"containerPort": 2222}]}),
        ),
    ),
    # env
    Mutation("env: relaxed name with spaces and dots", _env({"name": "my var.1", "value": "x"})),
    Mutation("env: name starting with a digit", _env({"name": "1ABC", "value": "x"})),
    Mutation("env: name with '='", _env({"name": "A=B", "value": "x"})),
    Mutation("env: name with a non-ASCII letter", _env({"name": "Ä", "value": "x"})),
    Mutation("env: empty name", _env({"name": "", "value": "x"})),
    Mutation("env: duplicate names are fine", _env({"name": "A", "value": "1"}, {"name": "A"})),
    Mutation("env: empty valueFrom", _value_from()),
    Mutation(
        "env: value and valueFrom",
        _env(
            {"name": "X", "value": "v", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}}
        ),
    ),
    Mutation(
        "env: two sources",
        _value_from(
            fieldRef={"fieldPath": "metadata.name"},
            secretKeyRef={"name": "s", "key": "k"},
        ),
    ),
    Mutation(
        "env: fileKeyRef to a volume the pod lacks",
        _value_from(fileKeyRef={"key": "K", "volumeName": "v", "path": "p"}),
    ),
    Mutation("fieldRef: metadata.name", _field_ref("metadata.name")),
    Mutation("fieldRef: status.podIPs", _field_ref("status.podIPs")),
    Mutation("fieldRef: spec.host (converted)", _field_ref("spec.host")),
    Mutation("fieldRef: a label", _field_ref("metadata.labels['app']")),
    Mutation(
        "fieldRef: an annotation in upper case",
        _field_ref("metadata.annotations['Example.COM/Key']"),
    ),
    Mutation(
        "fieldRef: a label key that is not a qualified name", _field_ref("metadata.labels['a b']")
    ),
    Mutation(
        "fieldRef: an annotation key with two slashes", _field_ref("metadata.annotations['a/b/c']")
    ),
    Mutation("fieldRef: all labels", _field_ref("metadata.labels")),
    Mutation("fieldRef: status.phase (convertible, not for env)", _field_ref("status.phase")),
    Mutation("fieldRef: unknown field", _field_ref("spec.containers")),
    Mutation("fieldRef: subscript of a plain field", _field_ref("metadata.name['x']")),
    Mutation("fieldRef: apiVersion v2", _field_ref("metadata.name", apiVersion="v2")),
    Mutation("fieldRef: empty fieldPath", _field_ref("")),
    Mutation(
        "resourceFieldRef: limits.cpu in millicores", _resource_ref("limits.cpu", divisor="1m")
    ),
    Mutation(
        "resourceFieldRef: requests.memory in Mi", _resource_ref("requests.memory", divisor="1Mi")
    ),
    Mutation("resourceFieldRef: hugepages", _resource_ref("limits.hugepages-2Mi", divisor="1Ki")),
    Mutation("resourceFieldRef: cpu divisor 2", _resource_ref("limits.cpu", divisor="2")),
    Mutation(
        "resourceFieldRef: cpu divisor 1000m (is 1)", _resource_ref("limits.cpu", divisor="1000m")
    ),
    Mutation("resourceFieldRef: memory divisor 3Mi", _resource_ref("limits.memory", divisor="3Mi")),
    Mutation(
        "resourceFieldRef: ephemeral divisor 1m",
        _resource_ref("requests.ephemeral-storage", divisor="1m"),
    ),
    Mutation(
        "resourceFieldRef: hugepages divisor 5",
        _resource_ref("requests.hugepages-1Gi", divisor="5"),
    ),
    Mutation("resourceFieldRef: unknown resource", _resource_ref("limits.gpu")),
    Mutation("resourceFieldRef: empty resource", _resource_ref("")),
    Mutation("resourceFieldRef: divisor 0 is unset", _resource_ref("limits.cpu", divisor="0")),
    Mutation(
        "configMapKeyRef: valid", _value_from(configMapKeyRef={"name": "cm", "key": "a.b_c-d"})
    ),
    Mutation("configMapKeyRef: no name", _value_from(configMapKeyRef={"key": "k"})),
    Mutation(
        "configMapKeyRef: bad name and key",
        _value_from(configMapKeyRef={"name": "CM", "key": "a b"}),
    ),
    Mutation("configMapKeyRef: key '..'", _value_from(configMapKeyRef={"name": "cm", "key": ".."})),
    Mutation("secretKeyRef: no key", _value_from(secretKeyRef={"name": "s"})),
    Mutation(
        "secretKeyRef: key too long", _value_from(secretKeyRef={"name": "s", "key": "k" * 254})
    ),
    Mutation(
        "secretKeyRef: optional",
        _value_from(secretKeyRef={"name": "s", "key": "k", "optional": True}),
    ),
    # envFrom
    Mutation(
        "envFrom: config map with a prefix",
        _env_from({"prefix": "P_", "configMapRef": {"name": "cm"}}),
    ),
    Mutation("envFrom: relaxed prefix", _env_from({"prefix": "1 x", "secretRef": {"name": "s"}})),
    Mutation(
        "envFrom: prefix with '='", _env_from({"prefix": "A=", "configMapRef": {"name": "cm"}})
    ),
    Mutation("envFrom: no source", _env_from({"prefix": "A"})),
    Mutation(
        "envFrom: two sources",
        _env_from({"configMapRef": {"name": "a"}, "secretRef": {"name": "b"}}),
    ),
    Mutation("envFrom: config map without a name", _env_from({"configMapRef": {}})),
    Mutation("envFrom: secret with a bad name", _env_from({"secretRef": {"name": "Bad_Name"}})),
    Mutation(
        "envFrom: name ending in '-' (a prefix rule)", _env_from({"configMapRef": {"name": "cm-"}})
    ),
    # probes
    Mutation("livenessProbe: httpGet, defaults filled", _probe("livenessProbe", **HTTP)),
    Mutation(
        "readinessProbe: tcpSocket by port name",
        _probe("readinessProbe", tcpSocket={"port": "tfjob-port"}),
    ),
    Mutation("startupProbe: grpc", _probe("startupProbe", grpc={"port": 9090})),
    Mutation(
        "livenessProbe: exec with thresholds",
        _probe(
            "livenessProbe",
            exec={"command": ["true"]},
            initialDelaySeconds=0,
            failureThreshold=10,
            terminationGracePeriodSeconds=5,
        ),
    ),
    Mutation("livenessProbe: no handler", _probe("livenessProbe", periodSeconds=5)),
    Mutation(
        "livenessProbe: two handlers",
        _probe("livenessProbe", exec={"command": ["a"]}, httpGet={"port": 80}),
    ),
    Mutation(
        "readinessProbe: three handlers",
        _probe("readinessProbe", httpGet={"port": 80}, tcpSocket={"port": 80}, grpc={"port": 80}),
    ),
    Mutation("livenessProbe: exec without a command", _probe("livenessProbe", exec={})),
    Mutation("livenessProbe: httpGet port 0", _probe("livenessProbe", httpGet={"port": 0})),
    Mutation(
        "livenessProbe: httpGet without a port", _probe("livenessProbe", httpGet={"path": "/h"})
    ),
    Mutation(
        "livenessProbe: httpGet port name too long",
        _probe("livenessProbe", httpGet={"port": "abcdefghijklmnopq"}),
    ),
    Mutation(
        "livenessProbe: httpGet scheme FTP",
        _probe("livenessProbe", httpGet={"port": 80, "scheme": "FTP"}),
    ),
    Mutation(
        "livenessProbe: httpGet header names",
        _probe(
            "livenessProbe",
            httpGet={
                "port": 80,
                "httpHeaders": [
                    {"name": "X-Ok", "value": "1"},
                    {"name": "bad header", "value": "2"},
                    {"name": "", "value": "3"},
                ],
            },
        ),
    ),
    Mutation(
        "livenessProbe: tcpSocket port 70000", _probe("livenessProbe", tcpSocket={"port": 70000})
    ),
    Mutation("livenessProbe: grpc port 0", _probe("livenessProbe", grpc={"port": 0})),
    Mutation("livenessProbe: grpc without a port", _probe("livenessProbe", grpc={"service": "x"})),
    Mutation(
        "livenessProbe: negative numbers",
        _probe(
            "livenessProbe",
            **EXEC,
            initialDelaySeconds=-1,
            timeoutSeconds=-2,
            periodSeconds=-3,
            failureThreshold=-5,
        ),
    ),
    Mutation(
        "livenessProbe: successThreshold 2", _probe("livenessProbe", **EXEC, successThreshold=2)
    ),
    Mutation(
        "livenessProbe: successThreshold -1", _probe("livenessProbe", **EXEC, successThreshold=-1)
    ),
    Mutation(
        "startupProbe: successThreshold 3", _probe("startupProbe", **EXEC, successThreshold=3)
    ),
    Mutation(
        "readinessProbe: successThreshold 3 is fine",
        _probe("readinessProbe", **EXEC, successThreshold=3),
    ),
    Mutation(
        "readinessProbe: terminationGracePeriodSeconds",
        _probe("readinessProbe", **EXEC, terminationGracePeriodSeconds=10),
    ),
    Mutation(
        "livenessProbe: terminationGracePeriodSeconds 0",
        _probe("livenessProbe", **EXEC, terminationGracePeriodSeconds=0),
    ),
    Mutation(
        "startupProbe: terminationGracePeriodSeconds -1",
        _probe("startupProbe", **EXEC, terminationGracePeriodSeconds=-1),
    ),
    # lifecycle
    Mutation(
        "lifecycle: preStop exec, postStart httpGet", _lifecycle(preStop=EXEC, postStart=HTTP)
    ),
    Mutation("lifecycle: preStop sleep 0", _lifecycle(preStop={"sleep": {"seconds": 0}})),
    Mutation(
        "lifecycle: preStop sleep equal to the grace period",
        _lifecycle(preStop={"sleep": {"seconds": 30}}),
    ),
    Mutation(
        "lifecycle: preStop sleep past the grace period",
        _lifecycle(preStop={"sleep": {"seconds": 31}}),
    ),
    Mutation("lifecycle: postStart sleep -1", _lifecycle(postStart={"sleep": {"seconds": -1}})),
    Mutation(
        "lifecycle: sleep within a longer grace period",
        all_of(
            set_spec(terminationGracePeriodSeconds=120),
            _lifecycle(preStop={"sleep": {"seconds": 100}}),
        ),
    ),
    Mutation("lifecycle: postStart without a handler", _lifecycle(postStart={})),
    Mutation(
        "lifecycle: preStop with two handlers",
        _lifecycle(preStop={"exec": {"command": ["a"]}, "sleep": {"seconds": 1}}),
    ),
    Mutation(
        "lifecycle: preStop tcpSocket bad port name",
        _lifecycle(preStop={"tcpSocket": {"port": "-x"}}),
    ),
    Mutation("lifecycle: empty", _lifecycle()),
    Mutation("lifecycle: stopSignal alone is dropped", _lifecycle(stopSignal="SIGKILL")),
    Mutation(
        "lifecycle: stopSignal beside a bad hook", _lifecycle(stopSignal="SIGFOO", postStart={})
    ),
    # container restart policy (dropped while ContainerRestartRules is off, up to 1.34)
    Mutation("container restartPolicy Never", _set(restartPolicy="Never")),
    Mutation(
        "container restartPolicy rules: bad action, no exit codes",
        _set(restartPolicy="Never", restartPolicyRules=[{"action": "Bogus"}]),
    ),
    # init containers and sidecars
    Mutation("init container: plain", _add_init(_init(command=["sh", "-c", "true"]))),
    Mutation("init container: lifecycle", _add_init(_init(lifecycle={"preStop": EXEC}))),
    Mutation(
        "init container: probes",
        _add_init(_init(livenessProbe=EXEC, readinessProbe=EXEC, startupProbe=EXEC)),
    ),
    Mutation(
        "init container: restartPolicy OnFailure with a lifecycle",
        _add_init(_init(restartPolicy="OnFailure", lifecycle={"preStop": EXEC})),
    ),
    Mutation(
        "sidecar: probes and lifecycle",
        _add_init(
            _sidecar(
                livenessProbe=EXEC,
                readinessProbe=HTTP,
                startupProbe=EXEC,
                lifecycle={"preStop": {"sleep": {"seconds": 5}}},
            )
        ),
    ),
    Mutation(
        "sidecar: liveness successThreshold 2",
        _add_init(_sidecar(livenessProbe={**EXEC, "successThreshold": 2})),
    ),
    Mutation(
        "sidecar: probe without a handler", _add_init(_sidecar(startupProbe={"periodSeconds": 1}))
    ),
    Mutation(
        "sidecar: lifecycle sleep past the grace period",
        _add_init(_sidecar(lifecycle={"postStart": {"sleep": {"seconds": 99}}})),
    ),
    Mutation(
        "sidecar: resizePolicy",
        _add_init(_sidecar(resizePolicy=[{"resourceName": "cpu", "restartPolicy": "NotRequired"}])),
    ),
    Mutation(
        "init container: resizePolicy",
        _add_init(
            _init(resizePolicy=[{"resourceName": "memory", "restartPolicy": "RestartContainer"}])
        ),
    ),
    Mutation(
        "sidecar: restartPolicyRules without exit codes",
        _add_init(_sidecar(restartPolicyRules=[{"action": "Restart"}])),
    ),
    Mutation(
        "sidecar: bad port and env",
        _add_init(_sidecar(ports=[{"containerPort": 0}], env=[{"name": ""}])),
    ),
    # resize policy
    Mutation(
        "resizePolicy: cpu and memory",
        _set(
            resizePolicy=[
                {"resourceName": "cpu", "restartPolicy": "NotRequired"},
                {"resourceName": "memory", "restartPolicy": "RestartContainer"},
            ]
        ),
    ),
    Mutation(
        "resizePolicy: duplicate",
        _set(
            resizePolicy=[
                {"resourceName": "cpu", "restartPolicy": "NotRequired"},
                {"resourceName": "cpu", "restartPolicy": "NotRequired"},
            ]
        ),
    ),
    Mutation(
        "resizePolicy: unknown resource and policy",
        _set(resizePolicy=[{"resourceName": "gpu", "restartPolicy": "Sometimes"}]),
    ),
    Mutation("resizePolicy: empty entry", _set(resizePolicy=[{}])),
    Mutation(
        "resizePolicy: RestartContainer in a pod that never restarts",
        all_of(
            set_spec(restartPolicy="Never"),
            _set(resizePolicy=[{"resourceName": "memory", "restartPolicy": "RestartContainer"}]),
        ),
    ),
    # several containers, errors in each
    Mutation(
        "errors in the second container and an init container",
        all_of(
            _add_container({"name": "ps", "image": "", "ports": [{"containerPort": -1}]}),
            _add_init(_init("init", imagePullPolicy="Sometimes", env=[{"name": "a=b"}])),
        ),
    ),
    Mutation("containers: empty list", set_spec(containers=[])),
    # ephemeral containers
    Mutation("ephemeral container: plain", _ephemeral(targetContainerName="tensorflow")),
    Mutation("ephemeral container: unknown target", _ephemeral(targetContainerName="nope")),
    Mutation("ephemeral container: a container's name", _ephemeral(name="tensorflow")),
    Mutation("ephemeral container: bad name and no image", _ephemeral(name="Debug", image="")),
    Mutation("ephemeral container: image with a trailing space", _ephemeral(image="busybox ")),
    Mutation(
        "ephemeral container: ports, probes, lifecycle",
        _ephemeral(
            ports=[{"containerPort": 80}],
            livenessProbe={"exec": {"command": ["true"]}},
            readinessProbe={"exec": {"command": ["true"]}},
            startupProbe={"exec": {"command": ["true"]}},
            lifecycle={},
        ),
    ),
    Mutation("ephemeral container: empty ports list", _ephemeral(ports=[])),
    Mutation("ephemeral container: empty resources", _ephemeral(resources={})),
    Mutation(
        "ephemeral container: resources with empty limits", _ephemeral(resources={"limits": {}})
    ),
    Mutation(
        "ephemeral container: resizePolicy and restartPolicy",
        _ephemeral(
            resizePolicy=[{"resourceName": "cpu", "restartPolicy": "NotRequired"}],
            restartPolicy="Always",
        ),
    ),
    Mutation(
        "ephemeral container: stopSignal only is dropped",
        _ephemeral(lifecycle={"stopSignal": "SIGTERM"}),
    ),
    Mutation(
        "ephemeral container: subPath mounts",
        all_of(
            set_spec(volumes=[{"name": "scratch", "emptyDir": {}}]),
            _ephemeral(
                volumeMounts=[
                    {"name": "scratch", "mountPath": "/a", "subPath": "x"},
                    {"name": "scratch", "mountPath": "/b", "subPathExpr": "$(POD)"},
                ]
            ),
        ),
    ),
    Mutation(
        "ephemeral container: bad env and security context",
        _ephemeral(env=[{"name": ""}], securityContext={"runAsUser": -1}),
    ),
    Mutation("ephemeral containers: duplicate names", all_of(_ephemeral(), _ephemeral())),
]

# Divisors whose Quantity.String decides: past E there is no suffix, so 1000E prints as "1"; a
# text ParseQuantity keeps (1e0, 01, +1) is not one of the allowed values. Each case is for
# env values here and for downward API volume files in podcases.volumes. Kept apart from MUTATIONS,
# which the golden snapshot draws from at random.
DIVISOR_CASES: list[tuple[str, str, bool]] = [  # (resource, divisor, the server accepts it)
    ("limits.cpu", "1000E", True),
    ("limits.cpu", "1000000000E", True),
    ("limits.memory", "1" + "0" * 21, True),
    ("requests.ephemeral-storage", "1e21", False),
    ("limits.memory", "1e0", False),
    ("limits.cpu", "01", False),
    ("requests.cpu", "+1", False),
    ("limits.memory", "1024Ki", True),
    ("limits.cpu", "0.001k", True),
]
DIVISORS: list[Mutation] = [
    Mutation(f"divisor {divisor} of {resource}", _resource_ref(resource, divisor=divisor))
    for resource, divisor, _ in DIVISOR_CASES
]

# The checks the gates that turn on after 1.34 bring (EnvFiles and ContainerRestartRules from
# 1.35, RestartAllContainersOnContainerExits from 1.36), and the one 1.36 adds to init containers.
# Kept apart from MUTATIONS, which the golden snapshot draws from at random.
_EMPTY_DIR = set_spec(volumes=[{"name": "v", "emptyDir": {}}])
_FILE_REF = {"key": "K", "volumeName": "v", "path": "env/file"}
_RULE = {"action": "Restart", "exitCodes": {"operator": "In", "values": [42]}}
_RESTART_ALL = {"action": "RestartAllContainers", "exitCodes": {"operator": "NotIn", "values": [0]}}
GATED: list[Mutation] = [
    Mutation(
        "env: fileKeyRef to an emptyDir", all_of(_EMPTY_DIR, _value_from(fileKeyRef=_FILE_REF))
    ),
    Mutation(
        "env: fileKeyRef to a configMap volume",
        all_of(
            set_spec(volumes=[{"name": "v", "configMap": {"name": "cm"}}]),
            _value_from(fileKeyRef=_FILE_REF),
        ),
    ),
    Mutation(
        "env: fileKeyRef bad key, volume name and path",
        all_of(
            _EMPTY_DIR,
            _value_from(fileKeyRef={"key": "a=b", "volumeName": "V_1", "path": "a/../b"}),
        ),
    ),
    Mutation("env: fileKeyRef empty", _value_from(fileKeyRef={})),
    Mutation(
        "env: fileKeyRef beside a secretKeyRef",
        all_of(
            _EMPTY_DIR, _value_from(fileKeyRef=_FILE_REF, secretKeyRef={"name": "s", "key": "k"})
        ),
    ),
    Mutation(
        "init container: fileKeyRef to a volume the pod lacks",
        _add_init(_init(env=[{"name": "X", "valueFrom": {"fileKeyRef": _FILE_REF}}])),
    ),
    Mutation(
        "container restartPolicy rules: a Restart rule",
        _set(restartPolicy="Never", restartPolicyRules=[_RULE]),
    ),
    Mutation(
        "container restartPolicy rules: RestartAllContainers",
        _set(restartPolicy="OnFailure", restartPolicyRules=[_RESTART_ALL]),
    ),
    Mutation(
        "container restartPolicy rules without restartPolicy", _set(restartPolicyRules=[_RULE])
    ),
    Mutation("container restartPolicy: Sometimes", _set(restartPolicy="Sometimes")),
    Mutation(
        "container restartPolicy rules: 21 rules, a bad operator, 256 exit codes",
        _set(
            restartPolicy="Never",
            restartPolicyRules=[
                {"action": "Restart", "exitCodes": {"operator": "Is", "values": list(range(256))}}
            ]
            + [_RULE] * 20,
        ),
    ),
    Mutation(
        "init container: restartPolicy Never with a rule",
        _add_init(_init(restartPolicy="Never", restartPolicyRules=[_RULE])),
    ),
    Mutation(
        "init container: rules without restartPolicy", _add_init(_init(restartPolicyRules=[_RULE]))
    ),
    Mutation(
        "sidecar: a RestartAllContainers rule",
        _add_init(_sidecar(restartPolicyRules=[_RESTART_ALL])),
    ),
    Mutation(
        "sidecar: RestartContainer resizePolicy",
        _add_init(
            _sidecar(resizePolicy=[{"resourceName": "memory", "restartPolicy": "RestartContainer"}])
        ),
    ),
    Mutation(
        "init container: two RestartContainer resize policies",
        _add_init(
            _init(
                resizePolicy=[
                    {"resourceName": "cpu", "restartPolicy": "NotRequired"},
                    {"resourceName": "memory", "restartPolicy": "RestartContainer"},
                    {"resourceName": "cpu", "restartPolicy": "RestartContainer"},
                ]
            )
        ),
    ),
    Mutation("ephemeral container: empty restartPolicyRules", _ephemeral(restartPolicyRules=[])),
    Mutation("resizePolicy: two empty entries", _set(resizePolicy=[{}, {}])),
]

# The verdicts the newer minors change: (minor, accepted from it on). This module's names carry
# no "ok-" (its differential test compares errors, not verdicts), so before that minor an entry
# says nothing true: most of these cases pass on 1.34, whose server drops the gated field, and a
# RestartAllContainers rule is refused by 1.35 alone.
VERDICT_CHANGES: VerdictChanges = {
    "container restartPolicy rules: bad action, no exit codes": ("1.35", False),
    "sidecar: restartPolicyRules without exit codes": ("1.35", False),
    "init container: resizePolicy": ("1.36", False),
    "env: fileKeyRef to an emptyDir": ("1.35", True),
    "env: fileKeyRef beside a secretKeyRef": ("1.35", False),
    "container restartPolicy rules: RestartAllContainers": ("1.36", True),
    "container restartPolicy rules without restartPolicy": ("1.35", False),
    "container restartPolicy: Sometimes": ("1.35", False),
    "container restartPolicy rules: 21 rules, a bad operator, 256 exit codes": ("1.35", False),
    "init container: rules without restartPolicy": ("1.35", False),
    "sidecar: a RestartAllContainers rule": ("1.36", True),
    "init container: two RestartContainer resize policies": ("1.36", False),
}
