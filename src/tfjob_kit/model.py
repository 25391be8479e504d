"""What the training-operator (v1.9) makes of a TFJob: replica types, names, ports, policies.

Pure functions over the parsed object; they tolerate wrong types (validation reports those) and
never raise on odd input.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from tfjob_kit.findings import json_path

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


@dataclass(frozen=True)
class Replica:
    """One entry of spec.tfReplicaSpecs as the operator sees it."""

    key: str  # as written
    type: str  # canonical (Chief, PS, ...) or the key itself when unknown
    known: bool
    count: int
    spec: dict[str, Any]
    restart_policy: str  # effective replica policy (default Never)

    @cached_property
    def path(self) -> str:
        return json_path("spec", "tfReplicaSpecs", self.key)

    @property
    def lower(self) -> str:
        return self.type.lower()

    @cached_property
    def template(self) -> dict[str, Any]:
        return as_dict(self.spec.get("template"))

    @cached_property
    def pod_spec(self) -> dict[str, Any]:
        return as_dict(self.template.get("spec"))

    @cached_property
    def containers(self) -> list[Any]:
        return as_list(self.pod_spec.get("containers"))

    @cached_property
    def all_containers(self) -> list[tuple[str, dict[str, Any]]]:
        """(JSON path, container) for the init containers and containers of the replica."""
        spec_path = self.path + ".template.spec"
        return [
            (f"{spec_path}.{field}[{index}]", container)
            for field in ("initContainers", "containers")
            for index, container in enumerate(as_list(self.pod_spec.get(field)))
            if isinstance(container, dict)
        ]

    def tensorflow_container(self) -> tuple[int, dict[str, Any]] | None:
        for index, container in enumerate(self.containers):
            if isinstance(container, dict) and container.get("name") == CONTAINER_NAME:
                return index, container
        return None

    @property
    def port(self) -> int:
        """The tfjob-port of the tensorflow container, else 2222."""
        found = self.tensorflow_container()
        if found is not None:
            for port in as_list(found[1].get("ports")):
                if isinstance(port, dict) and port.get("name") == PORT_NAME:
                    number = as_int(port.get("containerPort"), DEFAULT_PORT)
                    return number
        return DEFAULT_PORT

    @property
    def pod_restart_policy(self) -> str:
        """The restartPolicy the operator writes into the pods."""
        return "Never" if self.restart_policy == "ExitCode" else self.restart_policy


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
                key=key,
                type=canonical or key,
                known=canonical is not None,
                count=max(as_int(spec_dict.get("replicas"), 1), 0),
                spec=spec_dict,
                restart_policy=policy if isinstance(policy, str) and policy else "Never",
            )
        )
    order = {name: index for index, name in enumerate(REPLICA_TYPES)}
    found.sort(key=lambda r: (order.get(r.type, len(order)), r.key))
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


def success_decider(content: Any, reps: list[Replica] | None = None) -> tuple[str, list[str]]:
    """(explanation, replica types whose completion decides success). `reps`: the content's
    :func:`replicas` when the caller has them."""
    counted = {r.type: r for r in (replicas(content) if reps is None else reps) if r.count > 0}
    policy = as_dict(as_dict(content).get("spec")).get("successPolicy")
    chiefs = [t for t in CHIEF_TYPES if t in counted]
    if chiefs:
        return (f"the job succeeds when every {'/'.join(chiefs)} replica succeeds", chiefs)
    if "Worker" in counted:
        if policy == "AllWorkers":
            return (
                "the job succeeds when all workers succeed (successPolicy AllWorkers)",
                ["Worker"],
            )
        return ("the job succeeds when worker 0 succeeds (no Chief/Master)", ["Worker"])
    return ("nothing can decide success: there is no Chief, Master or Worker replica", [])
