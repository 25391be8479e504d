"""The local cluster's TensorFlow rendezvous stand-in: which pods may finish (pure logic)."""

from __future__ import annotations

from typing import Any

from tfjob_kit.cluster.rendezvous import PEERS_ANNOTATION, members, to_release
from tfjob_kit.kube.resources import TFJOB, VOLCANO_JOB


def pod(name: str, phase: str, released: bool = False, deleting: bool = False) -> dict[str, Any]:
    meta: dict[str, Any] = {
        "name": name,
        "annotations": {PEERS_ANNOTATION: "t"} if released else {},
    }
    if deleting:
        meta["deletionTimestamp"] = "t"
    return {"metadata": meta, "status": {"phase": phase}}


def test_members_count_every_replica_of_a_tfjob_and_every_task_pod_of_a_volcano_job() -> None:
    tfjob = {
        "spec": {"tfReplicaSpecs": {"PS": {"replicas": 2}, "Worker": {"replicas": 4}, "Chief": {}}}
    }
    assert members(TFJOB, tfjob) == 7  # replicas defaults to 1
    volcano = {
        "spec": {"tasks": [{"name": "ps", "replicas": 1}, {"name": "worker", "replicas": 3}]}
    }
    assert members(VOLCANO_JOB, volcano) == 4
    assert members(TFJOB, {}) == 0


def test_nothing_is_released_while_a_peer_is_missing_or_pending() -> None:
    assert to_release([pod("a", "Running"), pod("b", "Running")], expected=3) == []
    assert to_release([pod("a", "Running"), pod("b", "Pending")], expected=2) == []
    # a pod being deleted is no peer
    assert to_release([pod("a", "Running"), pod("b", "Running", deleting=True)], 2) == []
    # an unknown job (expected 0) releases nothing
    assert to_release([pod("a", "Running")], expected=0) == []


def test_running_pods_are_released_once_every_peer_started_and_only_once() -> None:
    pods = [pod("ps", "Succeeded"), pod("w0", "Running"), pod("w1", "Running", released=True)]
    assert [p["metadata"]["name"] for p in to_release(pods, expected=3)] == ["w0"]
