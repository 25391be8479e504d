"""`cluster up`'s tuning options on a small cluster of its own: the training-operator and
vc-scheduler processes run with the flags asked for, a gang TFJob still succeeds, and an `up`
of the running cluster with other values restarts exactly the process concerned."""

from __future__ import annotations

import io
from dataclasses import replace
from pathlib import Path

import pytest
import yaml

from tfjob_kit.cluster import local
from tfjob_kit.cluster.nodes import NodePlan
from tfjob_kit.cluster.paths import ClusterError
from tfjob_kit.cluster.procs import records

from ._cluster import Cluster
from .conftest import session_name

NAMESPACE = "tuning"


def _argv(name: str) -> dict[str, tuple[int, list[str]]]:
    """Each live process of the cluster's records: its pid and its command line as the kernel
    has it (/proc/<pid>/cmdline), not as the record says."""
    found = {}
    for record in records(name):
        if record.alive():
            raw = Path(f"/proc/{record.pid}/cmdline").read_bytes()
            found[record.name] = (record.pid, raw.decode().rstrip("\0").split("\0"))
    return found


def _flags(argv: list[str], *prefixes: str) -> list[str]:
    return [a for a in argv if a.startswith(prefixes)]


TUNING_FLAGS = ("--controller-threads", "--kube-api-qps", "--kube-api-burst")


def _run_tfjob(cluster: Cluster, job: str) -> None:
    """A gang TFJob (1 PS, 2 workers) submitted with kubectl, to Succeeded."""
    replica = {
        "restartPolicy": "Never",
        "template": {
            "spec": {
                "containers": [
                    {
                        "name": "tensorflow",
                        "image": "docker.io/tensorflow/tensorflow:2.16.1",
                        "resources": {"requests": {"cpu": "100m"}},
                    }
                ]
            }
        },
    }
    manifest = {
        "apiVersion": "kubeflow.org/v1",
        "kind": "TFJob",
        "metadata": {"name": job, "namespace": NAMESPACE},
        "spec": {
            "tfReplicaSpecs": {
                "PS": {"replicas": 1, **replica},
                "Worker": {"replicas": 2, **replica},
            }
        },
    }
    cluster.kubectl("apply", "-f", "-", stdin=yaml.safe_dump(manifest))

    def succeeded() -> bool:
        status = cluster.get("tfjob", "-n", NAMESPACE, job).get("status", {})
        return any(
            c.get("type") == "Succeeded" and c.get("status") == "True"
            for c in status.get("conditions") or []
        )

    cluster.wait_for(f"TFJob {job} Succeeded", succeeded, NAMESPACE, timeout=180)


def test_tuning_options_reach_the_processes_and_a_running_cluster_follows() -> None:
    name = session_name("t-tuning")
    opts = local.UpOptions(
        name=name,
        nodes=NodePlan(cpu_nodes=1, gpu_nodes=1),
        webhook=False,
        tfjob_run_seconds=1.0,
        operator_threads=3,
        operator_qps=55,
        operator_burst=77,
        schedule_period="300ms",
    )
    try:
        cluster = Cluster(local.up(opts, out=io.StringIO()), name)
        first = _argv(name)
        assert _flags(first["training-operator"][1], *TUNING_FLAGS) == [
            "--controller-threads=3",
            "--kube-api-qps=55",
            "--kube-api-burst=77",
        ]
        assert _flags(first["vc-scheduler"][1], "--schedule-period") == ["--schedule-period=300ms"]
        cluster.kubectl("create", "namespace", NAMESPACE)
        _run_tfjob(cluster, "tuned")

        # Bad values on the running cluster: a clear error naming the option; nothing restarts.
        with pytest.raises(ClusterError, match=r"operator_qps is 0; it must be a whole number"):
            local.up(replace(opts, operator_qps=0), out=io.StringIO())
        assert {k: pid for k, (pid, _) in _argv(name).items()} == {
            k: pid for k, (pid, _) in first.items()
        }

        # Other tuning on the running cluster: the operator and vc-scheduler restart with it,
        # the other processes keep running.
        log = io.StringIO()
        retuned = replace(opts, operator_qps=40, schedule_period="1s")
        local.up(retuned, out=log)
        second = _argv(name)
        assert _flags(second["training-operator"][1], *TUNING_FLAGS) == [
            "--controller-threads=3",
            "--kube-api-qps=40",
            "--kube-api-burst=77",
        ]
        assert _flags(second["vc-scheduler"][1], "--schedule-period") == ["--schedule-period=1s"]
        restarted = {k for k in first if second[k][0] != first[k][0]}
        assert restarted == {"training-operator", "vc-scheduler"}, log.getvalue()
        assert "restarting vc-scheduler: --schedule-period 300ms -> 1s" in log.getvalue()
        _run_tfjob(cluster, "retuned")

        # The same values again: nothing restarts.
        log = io.StringIO()
        local.up(retuned, out=log)
        assert {k: pid for k, (pid, _) in _argv(name).items()} == {
            k: pid for k, (pid, _) in second.items()
        }
        assert "restarting" not in log.getvalue()
    finally:
        local.down(name, out=io.StringIO())
