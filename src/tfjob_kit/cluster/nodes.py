"""Fake kwok nodes: CPU nodes and GPU nodes labelled as GPU feature discovery would."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

NODE_KIND_LABEL = "tfjob-kit.dev/node-kind"
GPU_RESOURCE = "nvidia.com/gpu"


@dataclass(frozen=True)
class NodePlan:
    cpu_nodes: int = 2
    gpu_nodes: int = 2
    gpus_per_node: int = 4
    gpu_product: str = "NVIDIA-A100-SXM4-40GB"
    cpu_per_node: int = 16
    memory_gi_per_node: int = 64
    prefix: str = "tfjob-kit"

    def __post_init__(self) -> None:
        for name in ("cpu_nodes", "gpu_nodes", "gpus_per_node"):
            if getattr(self, name) < 0:
                raise ValueError(f"{name} must be >= 0")
        if self.gpu_nodes and self.gpus_per_node < 1:
            raise ValueError("gpus_per_node must be >= 1 when there are GPU nodes")


def _node(name: str, labels: dict[str, str], resources: dict[str, str]) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": name,
            "annotations": {
                "kwok.x-k8s.io/node": "fake",
                "node.alpha.kubernetes.io/ttl": "0",
            },
            "labels": {
                "kubernetes.io/hostname": name,
                "kubernetes.io/os": "linux",
                "kubernetes.io/arch": "amd64",
                "type": "kwok",
                **labels,
            },
        },
        "spec": {},
        "status": {
            "allocatable": resources,
            "capacity": resources,
            "nodeInfo": {
                "architecture": "amd64",
                "operatingSystem": "linux",
                "kubeletVersion": "fake",
                "kubeProxyVersion": "fake",
                "containerRuntimeVersion": "kwok",
                "osImage": "kwok simulated node",
                "kernelVersion": "",
                "bootID": "",
                "machineID": "",
                "systemUUID": "",
            },
            "phase": "Running",
        },
    }


def gpu_labels(plan: NodePlan) -> dict[str, str]:
    """Labels NVIDIA GPU feature discovery + NFD put on a GPU node (device-plugin affinity)."""
    return {
        "nvidia.com/gpu.present": "true",
        "nvidia.com/gpu.count": str(plan.gpus_per_node),
        "nvidia.com/gpu.product": plan.gpu_product,
        "nvidia.com/gpu.memory": "40960",
        "nvidia.com/gpu.family": "ampere",
        "nvidia.com/gpu.compute.major": "8",
        "nvidia.com/gpu.compute.minor": "0",
        "nvidia.com/gpu.deploy.device-plugin": "true",
        "nvidia.com/gpu.deploy.gpu-feature-discovery": "true",
        "nvidia.com/mig.capable": "false",
        "nvidia.com/cuda.driver.major": "550",
        "nvidia.com/cuda.runtime.major": "12",
        "feature.node.kubernetes.io/pci-10de.present": "true",
    }


def node_manifests(plan: NodePlan) -> list[dict[str, Any]]:
    base = {
        "cpu": str(plan.cpu_per_node),
        "memory": f"{plan.memory_gi_per_node}Gi",
        "ephemeral-storage": "200Gi",
        "pods": "110",
    }
    nodes = [
        _node(f"{plan.prefix}-cpu-{i}", {NODE_KIND_LABEL: "cpu"}, dict(base))
        for i in range(plan.cpu_nodes)
    ]
    nodes += [
        _node(
            f"{plan.prefix}-gpu-{i}",
            {NODE_KIND_LABEL: "gpu", **gpu_labels(plan)},
            {**base, GPU_RESOURCE: str(plan.gpus_per_node)},
        )
        for i in range(plan.gpu_nodes)
    ]
    return nodes
