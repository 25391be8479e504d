"""The nvidia_device_plugin role's decisions (``tfjob.kit.nvidia_device_plugin_*`` filters):
which nodes are GPU nodes, and which of them advertise no GPU.
``roles/nvidia_device_plugin/tasks/present.yml`` says what each result is for.
"""

from __future__ import annotations

from collections.abc import Sequence

from tfjob_kit.installs.objects import Obj, meta_of

GPU = "nvidia.com/gpu"
# The keys of the node queries: one query per label (a label selector is an AND, a GPU node
# carries any one of the labels).
NODE_QUERY = "nodes_"


def node_queries(labels: Sequence[str]) -> dict[str, Obj]:
    """``objects_info`` queries for the nodes that carry each GPU label."""
    return {
        f"{NODE_QUERY}{index}": {"kind": "Node", "label_selectors": [label]}
        for index, label in enumerate(labels, start=1)
    }


def gpu_nodes(objects: Obj) -> list[str]:
    """The names of the nodes the node queries found, each once, sorted."""
    names = {
        str(meta_of(node).get("name"))
        for key, found in objects.items()
        if key.startswith(NODE_QUERY)
        for node in found or []
    }
    return sorted(names)


def allocatable_gpus(node: Obj) -> int:
    """The GPUs a node advertises (``status.allocatable``), 0 when it says none."""
    value = ((node.get("status") or {}).get("allocatable") or {}).get(GPU, "0")
    try:
        return int(value)
    except (TypeError, ValueError):
        return 0


def without_gpus(nodes: Sequence[Obj]) -> list[str]:
    """The names of the nodes that advertise no allocatable GPU."""
    return [str(meta_of(node).get("name")) for node in nodes if allocatable_gpus(node) == 0]
