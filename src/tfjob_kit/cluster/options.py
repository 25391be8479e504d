"""What ``tfjob-kit cluster up`` can be asked for, and the defaults: the one source of them.

The CLI (``cluster/cli.py``) takes its defaults from ``UpOptions`` and ``NodePlan``. The
``local_cluster`` role keeps a copy (Ansible reads YAML), which a unit test holds equal to these.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from tfjob_kit.cluster.nodes import NodePlan

DEFAULT_NAME = "tfjob-kit"
# What the local training-operator gangs its pods with: Volcano (PodGroups, all or nothing), or
# nothing (the operator's default: every pod goes to the default scheduler on its own).
GANG_SCHEDULERS = ("volcano", "none")


@dataclass
class UpOptions:
    """One ``up``: the cluster's name, its simulated nodes, and what runs on it."""

    name: str = DEFAULT_NAME
    nodes: NodePlan = field(default_factory=NodePlan)
    # Run the real training-operator, Volcano and the rendezvous stand-in as local processes.
    addons: bool = True
    # Register the operator's validating webhook (only with addons).
    webhook: bool = True
    # How long a simulated TFJob pod runs before it exits (kwok's pod stages).
    tfjob_run_seconds: float = 5.0
    # How long a simulated pod of any other job runs.
    job_run_seconds: float = 2.0
    # Seconds to wait for each step.
    timeout: float = 300.0
    # One of GANG_SCHEDULERS.
    gang_scheduler: str = "volcano"


def default_name() -> str:
    """The cluster commands work on: ``$TFJOB_KIT_CLUSTER``, else ``tfjob-kit``."""
    return os.environ.get("TFJOB_KIT_CLUSTER") or DEFAULT_NAME
