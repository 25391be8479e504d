"""What the training-operator (v1.9) makes of a TFJob: replica types, names, ports, policies.

Pure functions over the parsed object; they tolerate wrong types (validation reports those) and
never raise on odd input.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from tfjob_kit.findings import child_path, json_path

GROUP = "kubeflow.org"
API_VERSION = "kubeflow.org/v1"
KIND = "TFJob"
LEGACY_API_VERSIONS = (
    "kubeflow.org/v1alpha1",
    "kubeflow.org/v1alpha2",
    "kubeflow.org/v1beta1",
    "kubeflow.org/v1beta2",
)
REPLICA_TYPES = ("Chief", "Master", "PS", "Worker", "Evaluator")
CHIEF_TYPES = ("Chief", "Master")
DEFAULT_PORT = 2222
PORT_NAME = "tfjob-port"
CONTAINER_NAME = "tensorflow"
GPU_RESOURCE = "nvidia.com/gpu"
_CANONICAL = {name.lower(): name for name in REPLICA_TYPES}
# Kubernetes' DNS-1123 label (IsDNS1123Label): lower-case letters, digits and '-', at most 63.
_DNS1123_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?")
DNS1123_LABEL_RULE = "a DNS-1123 label: lower-case letters, digits and '-', at most 63"


def is_dns1123_label(value: Any) -> bool:
    return isinstance(value, str) and _DNS1123_LABEL.fullmatch(value) is not None


def canonical_type(key: str) -> str | None:
    """The operator's canonical spelling of a replica type key, or None for an unknown type."""
    return _CANONICAL.get(key.lower()) if isinstance(key, str) else None


def as_dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def as_list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def as_int(value: Any, default: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        return default
    return value


def is_tfjob(content: Any) -> bool:
    if not isinstance(content, dict) or content.get("kind") != KIND:
        return False
    api_version = content.get("apiVersion")
    return isinstance(api_version, str) and api_version.startswith(GROUP + "/")


_SPECS_PATH = "$.spec.tfReplicaSpecs"  # json_path("spec", "tfReplicaSpecs")
_TYPE_ORDER = {name: index for index, name in enumerate(REPLICA_TYPES)}


def _containers_at(pod_spec: dict[str, Any], spec_path: str) -> list[tuple[str, dict[str, Any]]]:
    """(JSON path, container) for the init containers and containers of a pod spec."""
    found = []
    for field in ("initContainers", "containers"):
        items = pod_spec.get(field)
        if isinstance(items, list):
            for index, container in enumerate(items):
                if isinstance(container, dict):
                    found.append((f"{spec_path}.{field}[{index}]", container))
    return found


@dataclass(init=False)
class Replica:
    """One entry of spec.tfReplicaSpecs as the operator sees it.

    What the rules read of it (template, pod spec, containers, the tensorflow container, the
    port, the JSON path) is worked out once, in ``__init__``, as plain attributes: every rule
    reads them for every replica, and a plain attribute is cheaper to read than a property or a
    first cached_property. Read-only by convention; the six fields make its repr and equality.
    """

    key: str  # as written
    type: str  # canonical (Chief, PS, ...) or the key itself when unknown
    known: bool
    count: int
    spec: dict[str, Any]
    restart_policy: str  # effective replica policy (default Never)

    def __init__(
        self,
        key: str,
        type: str,
        known: bool,
        count: int,
        spec: dict[str, Any],
        restart_policy: str,
    ) -> None:
        self.key = key
        self.type = type
        self.known = known
        self.count = count
        self.spec = spec
        self.restart_policy = restart_policy
        self.lower: str = type.lower()
        # The restartPolicy the operator writes into the pods.
        self.pod_restart_policy: str = "Never" if restart_policy == "ExitCode" else restart_policy
        template = spec.get("template")
        self.template: dict[str, Any] = template if isinstance(template, dict) else {}
        pod_spec = self.template.get("spec")
        self.pod_spec: dict[str, Any] = pod_spec if isinstance(pod_spec, dict) else {}
        containers = self.pod_spec.get("containers")
        self.containers: list[Any] = containers if isinstance(containers, list) else []
        self._tensorflow: tuple[int, dict[str, Any]] | None = None
        for index, container in enumerate(self.containers):
            if isinstance(container, dict) and container.get("name") == CONTAINER_NAME:
                self._tensorflow = index, container
                break
        self.port: int = self._port()
        if isinstance(key, str):
            # The cached properties below, set now (a JSON key is always a string); any other
            # key keeps computing them on first use, where json_path may refuse it.
            self.path = child_path(_SPECS_PATH, key)
            self.all_containers = _containers_at(self.pod_spec, self.path + ".template.spec")

    @cached_property
    def path(self) -> str:
        return json_path("spec", "tfReplicaSpecs", self.key)

    @cached_property
    def all_containers(self) -> list[tuple[str, dict[str, Any]]]:
        """(JSON path, container) for the init containers and containers of the replica."""
        return _containers_at(self.pod_spec, self.path + ".template.spec")

    def tensorflow_container(self) -> tuple[int, dict[str, Any]] | None:
        """(index, container) of the first container named tensorflow, or None."""
        return self._tensorflow

    def _port(self) -> int:
        """The tfjob-port of the tensorflow container, else 2222."""
        found = self._tensorflow
        if found is not None:
            for port in as_list(found[1].get("ports")):
                if isinstance(port, dict) and port.get("name") == PORT_NAME:
                    return as_int(port.get("containerPort"), DEFAULT_PORT)
        return DEFAULT_PORT


def replicas(content: Any) -> list[Replica]:
    """Replica specs in the operator's order: by canonical type order, then as written."""
    specs = as_dict(as_dict(as_dict(content).get("spec")).get("tfReplicaSpecs"))
    found = []
    for key, spec in specs.items():
        canonical = canonical_type(key)
        spec_dict = as_dict(spec)
        policy = spec_dict.get("restartPolicy")
        found.append(
            Replica(
                key,
                canonical or key,
                canonical is not None,
                max(as_int(spec_dict.get("replicas"), 1), 0),
                spec_dict,
                policy if isinstance(policy, str) and policy else "Never",
            )
        )
    last = len(_TYPE_ORDER)
    found.sort(key=lambda r: (_TYPE_ORDER.get(r.type, last), r.key))
    return found


def job_name(content: Any) -> str:
    meta = as_dict(as_dict(content).get("metadata"))
    name = meta.get("name")
    if isinstance(name, str) and name:
        return name
    generate = meta.get("generateName")
    if isinstance(generate, str) and generate:
        return generate + "xxxxx"
    return ""


def namespace(content: Any, default: str = "default") -> str:
    value = as_dict(as_dict(content).get("metadata")).get("namespace")
    return value if isinstance(value, str) and value else default


def pod_name(job: str, replica_type: str, index: int) -> str:
    """Pod and headless Service name the operator gives replica `index` of a type."""
    return f"{job}-{replica_type.lower()}-{index}"


def deciders(reps: list[Replica]) -> list[str]:
    """The replica types whose completion decides success (:func:`success_decider`'s list)."""
    counted = {r.type for r in reps if r.count > 0}
    chiefs = [t for t in CHIEF_TYPES if t in counted]
    if chiefs:
        return chiefs
    return ["Worker"] if "Worker" in counted else []


def success_decider(content: Any, reps: list[Replica] | None = None) -> tuple[str, list[str]]:
    """(explanation, replica types whose completion decides success). `reps`: the content's
    :func:`replicas` when the caller has them."""
    types = deciders(replicas(content) if reps is None else reps)
    if types == ["Worker"]:
        if as_dict(as_dict(content).get("spec")).get("successPolicy") == "AllWorkers":
            return (
                "the job succeeds when all workers succeed (successPolicy AllWorkers)",
                types,
            )
        return ("the job succeeds when worker 0 succeeds (no Chief/Master)", types)
    if types:
        return (f"the job succeeds when every {'/'.join(types)} replica succeeds", types)
    return ("nothing can decide success: there is no Chief, Master or Worker replica", [])
