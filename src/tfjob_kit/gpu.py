"""GPU node preflight: what the NVIDIA driver reports, checked, and the Node labels it implies.

The logic lives in the Ansible collection's module_utils (plugins/module_utils/gpu.py, standard
library only), so that tfjob.kit.gpu_facts runs on a GPU host that has Python and the collection
but not tfjob-kit. The wheel ships the collection as ansible_collections/tfjob/kit; this module
re-exports its names for the library and the CLI.
"""

from __future__ import annotations

from ansible_collections.tfjob.kit.plugins.module_utils.gpu import (
    QUERY,
    TIMEOUT,
    Gpu,
    GpuFacts,
    PreflightError,
    check,
    collect,
    node_labels,
    parse_cuda_version,
    parse_query,
)

__all__ = [
    "QUERY",
    "TIMEOUT",
    "Gpu",
    "GpuFacts",
    "PreflightError",
    "check",
    "collect",
    "node_labels",
    "parse_cuda_version",
    "parse_query",
]
