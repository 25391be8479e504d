"""What ``tfjob-kit cluster up`` can be asked for, and the defaults: the one source of them.

The CLI (``commands/cluster_command.py``) takes its defaults from ``UpOptions`` and
``NodePlan``. The ``local_cluster`` role keeps a copy (Ansible reads YAML), which a unit test
holds equal to these.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field

from tfjob_kit.cluster.nodes import NodePlan

DEFAULT_NAME = "tfjob-kit"
# What the local training-operator gangs its pods with: Volcano (PodGroups, all or nothing), or
# nothing (the operator's default: every pod goes to the default scheduler on its own).
GANG_SCHEDULERS = ("volcano", "none")
# A Go duration as the charts' schema takes it (charts/volcano values.schema.json), e.g. 500ms.
GO_DURATION = re.compile(r"([0-9]+(\.[0-9]+)?(ns|us|ms|s|m|h))+")


@dataclass
class UpOptions:
    """One ``up``: the cluster's name, its simulated nodes, and what runs on it."""

    name: str = DEFAULT_NAME
    nodes: NodePlan = field(default_factory=NodePlan)
    # The Kubernetes minor it runs ("1.37"): "" is versions.toml's [kubernetes] version, or for
    # a cluster that exists, the minor it was made with; another is one of [kubernetes] releases.
    kubernetes_version: str = ""
    # Run the real training-operator, Volcano and the rendezvous stand-in as local processes.
    addons: bool = True
    # Register the operator's validating webhook (only with addons).
    webhook: bool = True
    # Run the real JobSet controller with its webhooks (what Kubeflow Trainer v2 builds on).
    jobset: bool = False
    # Run the real Kubeflow Trainer v2 controller-manager with its webhooks (and JobSet's).
    trainer: bool = False
    # Run the real Kueue controller-manager with its webhooks (TFJobs and TrainJobs queued).
    kueue: bool = False
    # How long a simulated TFJob pod runs before it exits (kwok's pod stages).
    tfjob_run_seconds: float = 5.0
    # How long a simulated pod of any other job runs.
    job_run_seconds: float = 2.0
    # Seconds to wait for each step.
    timeout: float = 300.0
    # One of GANG_SCHEDULERS.
    gang_scheduler: str = "volcano"
    # The training-operator's tuning (its flags --controller-threads, --kube-api-qps and
    # --kube-api-burst; these defaults are the operator's own, as in charts/training-operator).
    operator_threads: int = 1
    operator_qps: int = 20
    operator_burst: int = 30
    # The training-operator release the local process runs: "" (the pinned one, versions.toml's
    # [training-operator] version) or its upgrade_from (the upgrade tests start there).
    operator_version: str = ""
    # vc-scheduler's --schedule-period, a Go duration. Shorter than Volcano's 1s default (the
    # charts'): gangs on the local cluster start sooner, which keeps the tests quick.
    schedule_period: str = "500ms"

    @property
    def runs_jobset(self) -> bool:
        """JobSet runs when asked for, and under Trainer, which makes JobSets."""
        return self.jobset or self.trainer

    def tuning_problems(self) -> list[str]:
        """What is wrong with the tuning options, each naming the option (empty when all is
        well)."""
        problems = [
            f"{option} is {value}; it must be a whole number of at least 1"
            for option, value in (
                ("operator_threads", self.operator_threads),
                ("operator_qps", self.operator_qps),
                ("operator_burst", self.operator_burst),
            )
            if type(value) is not int or value < 1
        ]
        if not is_schedule_period(self.schedule_period):
            problems.append(
                f"schedule_period is {self.schedule_period!r}; it must be a Go duration of more "
                "than zero, such as 500ms or 2s"
            )
        return problems


def is_schedule_period(text: object) -> bool:
    """Whether ``text`` is a Go duration of more than zero (what vc-scheduler's
    --schedule-period takes and the charts' schema allows, zero excluded)."""
    return (
        isinstance(text, str)
        and GO_DURATION.fullmatch(text) is not None
        and re.search("[1-9]", text) is not None
    )


def default_name() -> str:
    """The cluster commands work on: ``$TFJOB_KIT_CLUSTER``, else ``tfjob-kit``."""
    return os.environ.get("TFJOB_KIT_CLUSTER") or DEFAULT_NAME
