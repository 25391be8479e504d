"""The embedded local cluster (kwok + real control plane + training-operator + Volcano)."""

from tfjob_kit.cluster.build import build_all, kubectl_path
from tfjob_kit.cluster.local import (
    UpOptions,
    cluster_dir,
    down,
    is_running,
    kubeconfig_path,
    status,
    up,
)
from tfjob_kit.cluster.nodes import NodePlan
from tfjob_kit.cluster.paths import ClusterError

__all__ = [
    "ClusterError",
    "NodePlan",
    "UpOptions",
    "build_all",
    "cluster_dir",
    "down",
    "is_running",
    "kubeconfig_path",
    "kubectl_path",
    "status",
    "up",
]
