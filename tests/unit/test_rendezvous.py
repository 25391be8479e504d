"""The local cluster's TensorFlow rendezvous stand-in: which pods may finish, and when it sweeps
(pure logic)."""

from __future__ import annotations

import queue
from typing import Any

from tfjob_kit.cluster.rendezvous import (
    PEERS_ANNOTATION,
    jobset_to_release,
    members,
    serve,
    tf_members,
    to_release,
)
from tfjob_kit.kube.api_errors import KubeError
from tfjob_kit.kube.follow import Broken, Change, Reset, Source
from tfjob_kit.kube.kinds import TFJOB, VOLCANO_JOB


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


class _Follower:
    """What serve reads: the updates queue, filled by the test."""

    def __init__(self, *updates: Any) -> None:
        self.updates: queue.Queue[Any] = queue.Queue()
        for update in updates:
            self.updates.put(update)


class _Client:
    """A cluster with no job pods; counts the sweeps (each lists the pods of both kinds)."""

    def __init__(self, follower: _Follower, then: Any = None) -> None:
        self.sweeps = 0
        self._follower, self._then = follower, then

    def pods_everywhere(self, label_selector: str) -> list[dict[str, Any]]:
        if label_selector == TFJOB.job_label:
            self.sweeps += 1
            if self._then is not None and self.sweeps == 2:
                self._follower.updates.put(self._then)  # the source is lost after two sweeps
        return []


def test_a_burst_of_changes_is_one_sweep_and_nothing_changing_is_none() -> None:
    source = Source("pods", "", TFJOB.job_label)
    changes = [Change(source, "MODIFIED", pod(f"w{i}", "Running")) for i in range(5)]
    follower = _Follower(Reset(source, []), *changes)
    lost = Broken(source, KubeError("token expired", status=401), permanent=True)
    client = _Client(follower, then=lost)
    # The first sweep takes the list and the five changes that came with it; the second comes
    # after `resync` with nothing changed; then the lost source ends serve (to reconnect).
    serve(client, follower, interval=0.0, resync=0.05)  # type: ignore[arg-type]
    assert client.sweeps == 2


def test_a_source_that_breaks_for_a_while_does_not_end_serve() -> None:
    source = Source("pods", "", VOLCANO_JOB.job_label)
    follower = _Follower(Broken(source, KubeError("connection reset"), permanent=False))
    lost = Broken(source, KubeError("forbidden", status=403), permanent=True)
    client = _Client(follower, then=lost)
    serve(client, follower, interval=0.0, resync=0.05)  # type: ignore[arg-type]
    assert client.sweeps == 2


def _jobset_pod(name: str, phase: str, tf_config: str | None) -> dict[str, Any]:
    found = pod(name, phase)
    env = [] if tf_config is None else [{"name": "TF_CONFIG", "value": tf_config}]
    found["spec"] = {"containers": [{"name": "node", "env": env}]}
    return found


def test_a_trainjobs_tensorflow_pods_wait_for_every_peer_their_tf_config_lists() -> None:
    """A JobSet pod with a TF_CONFIG (a converted TrainJob's: its task index a reference) waits
    for as many started pods as the TF_CONFIG lists; one without waits for nobody."""
    config = (
        '{"cluster":{"ps":["j-ps-0-0.j:2222"],"worker":["j-node-0-0.j:2222","j-node-0-1.j:2222"]},'
        '"task":{"type":"worker","index":$(TFJOB_KIT_TASK_INDEX)},"environment":"cloud"}'
    )
    assert tf_members(_jobset_pod("a", "Running", config)) == 3
    assert tf_members(_jobset_pod("a", "Running", None)) is None
    assert tf_members(_jobset_pod("a", "Running", "not json")) is None
    two = [_jobset_pod("ps", "Running", config), _jobset_pod("w0", "Running", config)]
    assert jobset_to_release(two) == []
    three = [*two, _jobset_pod("w1", "Succeeded", config)]  # one finished: it met its peers
    assert [p["metadata"]["name"] for p in jobset_to_release(three)] == ["ps", "w0"]
    plain = [_jobset_pod("x", "Running", None), _jobset_pod("y", "Pending", None)]
    assert [p["metadata"]["name"] for p in jobset_to_release(plain)] == ["x"]
