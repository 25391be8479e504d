"""The nvidia_device_plugin role on the local cluster when a GPU node advertises no GPU (its
driver or container runtime is missing): the role fails and names that node, from what the
cluster says, instead of only timing out. The happy path is the role's Molecule scenario."""

from __future__ import annotations

import io
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from tfjob_kit.cluster import local
from tfjob_kit.cluster.build import helm_path
from tfjob_kit.cluster.nodes import NodePlan, gpu_labels, node_manifests

from ._cluster import Cluster
from .conftest import session_name
from .test_coexistence import run_role

NODE = "gpu-without-driver"


@pytest.fixture(scope="module")
def bare() -> Iterator[Cluster]:
    name = session_name("dp-role")
    try:
        kubeconfig = local.up(local.UpOptions(name=name, addons=False), out=io.StringIO())
        yield Cluster(kubeconfig, name)
    finally:
        local.down(name, out=io.StringIO())


def test_a_gpu_node_that_advertises_no_gpu_is_named(bare: Cluster, tmp_path: Path) -> None:
    plan = NodePlan(cpu_nodes=1, gpu_nodes=0, prefix=NODE)
    node = node_manifests(plan)[0]
    node["metadata"]["name"] = NODE
    node["metadata"]["labels"].update(gpu_labels(plan))
    assert "nvidia.com/gpu" not in node["status"]["allocatable"]
    bare.kubectl("apply", "-f", "-", stdin=yaml.safe_dump(node))
    try:
        rc, output, _ = run_role(
            tmp_path,
            bare,
            "nvidia_device_plugin",
            {
                "nvidia_device_plugin_helm_binary": str(helm_path()),
                "nvidia_device_plugin_wait_timeout": 6,
            },
        )
        said = " ".join(output.split())
        assert rc != 0
        assert "GPUs are not allocatable on every GPU node" in said, output[-4000:]
        assert f"Nodes without nvidia.com/gpu: {NODE}." in said, output[-4000:]
    finally:
        bare.kubectl("delete", "node", NODE, "--ignore-not-found", check=False)
