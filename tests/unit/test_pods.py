"""pods: the Pod and PodGroup objects the operator makes, on what the local cluster cannot show
(its operator runs with Volcano; tests/integration/test_operator_pods.py compares real pods)."""

from __future__ import annotations

import json
from typing import Any

from tfjob_kit import explain, model, operator_objects


def _job(**replicas: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": model.API_VERSION,
        "kind": model.KIND,
        "metadata": {"name": "j", "namespace": "ns", "uid": "u-1", "annotations": {"a": "b"}},
        "spec": {"tfReplicaSpecs": replicas},
    }


def _replica(count: int, **spec: Any) -> dict[str, Any]:
    container = {"name": "tensorflow", "image": "tf", **spec.pop("container", {})}
    return {"replicas": count, "template": {"spec": {"containers": [container], **spec}}}


def test_scheduler_plugins_label_and_own_scheduler_kept() -> None:
    job = _job(Worker=_replica(2, schedulerName="mine"))
    [(replica, pod)] = operator_objects.operator_pods(
        job, gang_scheduler="scheduler-plugins-scheduler"
    )
    assert replica.type == "Worker"
    assert pod["metadata"]["name"] == "j-worker-1"
    assert pod["metadata"]["labels"][operator_objects.PLUGINS_GROUP_LABEL] == "j"
    assert "annotations" not in pod["metadata"]
    assert pod["spec"]["schedulerName"] == "mine"


def test_no_gang_no_scheduler_and_restart_policy_mapped() -> None:
    job = _job(Worker=_replica(1, restartPolicy="Always"))
    job["spec"]["tfReplicaSpecs"]["Worker"]["restartPolicy"] = "ExitCode"
    [(_, pod)] = operator_objects.operator_pods(job)
    assert "schedulerName" not in pod["spec"]
    assert pod["spec"]["restartPolicy"] == "Never"
    assert "env" not in pod["spec"]["containers"][0]  # one pod: not distributed
    assert pod["metadata"]["ownerReferences"][0]["uid"] == "u-1"


def test_nulls_dropped_and_template_untouched() -> None:
    job = _job(PS=_replica(1, container={"env": None, "ports": None}), Worker=_replica(3))
    before = json.dumps(job, sort_keys=True)
    all_pods = operator_objects.operator_pods(job, one_per_type=False)
    assert json.dumps(job, sort_keys=True) == before
    assert [p["metadata"]["name"] for _, p in all_pods] == [
        "j-ps-0",
        "j-worker-0",
        "j-worker-1",
        "j-worker-2",
    ]
    ps = all_pods[0][1]["spec"]["containers"][0]
    assert ps["ports"] == [{"name": "tfjob-port", "containerPort": 2222}]
    assert [e["name"] for e in ps["env"]] == ["TF_CONFIG"]


def test_pod_group_sums_requests_else_limits_of_min_member_pods() -> None:
    job = _job(
        PS=_replica(1, container={"resources": {"limits": {"cpu": "500m"}}}),
        Worker=_replica(3, container={"resources": {"requests": {"cpu": "1", "memory": "1Gi"}}}),
    )
    job["spec"]["runPolicy"] = {"schedulingPolicy": {"minAvailable": 3, "queue": "q"}}
    group = operator_objects.pod_group(job)
    assert group is not None
    assert group["metadata"]["annotations"] == {"a": "b"}
    assert group["spec"] == {
        "minMember": 3,
        "queue": "q",
        "minResources": {"cpu": "2500m", "memory": str(2 * 2**30)},
    }
    assert operator_objects.pod_group(_job()) is None


def test_huge_jobs_pod_group_and_pods_are_made_from_the_counts() -> None:
    """The server takes replicas up to 2^31 - 1: minResources multiplies a replica's requests by
    its pods counted (it added them pod by pod), and a pod whose TF_CONFIG etcd would refuse
    gets a stand-in for it (it listed every address of the job)."""
    worker = _replica(2**31 - 1, container={"resources": {"requests": {"cpu": "250m"}}})
    job = _job(PS=_replica(2, container={"resources": {"requests": {"cpu": "1"}}}), Worker=worker)
    group = operator_objects.pod_group(job)
    assert group is not None
    assert group["spec"]["minMember"] == 2**31 + 1
    assert group["spec"]["minResources"] == {"cpu": str(2 + (2**31 - 1) // 4) + "750m"}
    [(_, ps), (_, last)] = operator_objects.operator_pods(job)
    assert last["metadata"]["name"] == f"j-worker-{2**31 - 2}"
    for pod in (ps, last):
        [tf_config] = [e for e in pod["spec"]["containers"][0]["env"] if e["name"] == "TF_CONFIG"]
        assert tf_config["value"] == explain.UNBUILT_TF_CONFIG


def test_copy_is_fresh_plain_and_null_free() -> None:
    from collections import OrderedDict

    class Tagged(list[Any]):
        pass

    ordered: OrderedDict[str, Any] = OrderedDict(b=1, a=None, c={"d": None})
    ordered.move_to_end("b")
    source: dict[str, Any] = {
        "s": "x",
        "n": None,
        "i": 3,
        "f": 1.5,
        "t": True,
        "list": [None, "a", {"x": None, "y": [1, None, []]}, [None, {}]],
        "nested": {"a": {"b": None, "c": ["q"]}},
        "ordered": ordered,
        "tagged": Tagged([{"z": None}, None]),
    }
    shared = {"k": None, "v": [1]}
    source["one"] = source["two"] = shared
    before = json.dumps(source)
    copied = operator_objects._copy(source)
    assert json.dumps(source) == before
    assert copied == {
        "s": "x",
        "i": 3,
        "f": 1.5,
        "t": True,
        "list": [None, "a", {"y": [1, None, []]}, [None, {}]],
        "nested": {"a": {"c": ["q"]}},
        "ordered": {"c": {}, "b": 1},
        "tagged": [{}, None],
        "one": {"v": [1]},
        "two": {"v": [1]},
    }
    assert list(copied) == ["s", "i", "f", "t", "list", "nested", "ordered", "tagged", "one", "two"]
    assert list(copied["ordered"]) == ["c", "b"]
    assert type(copied["ordered"]) is dict and type(copied["tagged"]) is list
    assert copied["one"] is not copied["two"] and copied["one"]["v"] is not shared["v"]
    assert copied["list"][2] is not source["list"][2]
    assert operator_objects._copy([None, {"a": None}]) == [None, {}]
    assert operator_objects._copy("s") == "s" and operator_objects._copy(None) is None


def test_service_ports_are_a_map_of_the_tensorflow_containers_ports() -> None:
    # GetPortsFromJob: name -> number, so unnamed ports collapse into one "" (the last wins),
    # a name's last port wins, the tfjob-port is added unless a port is named so, and the
    # protocol is left to the server (TCP); other containers' ports are not looked at.
    ports = [
        {"containerPort": 1},
        {"containerPort": 2, "protocol": "UDP"},
        {"name": "web", "containerPort": 80},
    ]
    sidecar = {"name": "side", "image": "x", "ports": [{"name": "side", "containerPort": 9}]}
    job = _job(Worker=_replica(3, container={"ports": ports}))
    job["spec"]["tfReplicaSpecs"]["Worker"]["template"]["spec"]["containers"].insert(0, sidecar)
    [(replica, service)] = operator_objects.operator_services(job)
    assert [
        (p.name, p.port, p.container, p.index)
        for p in operator_objects.service_ports(replica) or []
    ] == [
        ("", 2, 1, 1),
        ("web", 80, 1, 2),
        ("tfjob-port", 2222, 1, None),
    ]
    assert service["metadata"]["name"] == "j-worker-2"
    assert service["spec"] == {
        "clusterIP": "None",
        "selector": service["metadata"]["labels"],
        "ports": [{"port": 2}, {"name": "web", "port": 80}, {"name": "tfjob-port", "port": 2222}],
    }
    # The pods' labels less the job-role (worker 0 of a job without a chief is the master).
    [(_, first)] = [
        s
        for s in operator_objects.operator_services(job, one_per_type=False)
        if s[1]["metadata"]["name"] == "j-worker-0"
    ]
    assert explain.JOB_ROLE_LABEL not in first["metadata"]["labels"]
    assert first["metadata"]["ownerReferences"][0]["uid"] == "u-1"


def test_no_tensorflow_container_no_service() -> None:
    job = _job(Worker=_replica(1))
    job["spec"]["tfReplicaSpecs"]["Worker"]["template"]["spec"]["containers"][0]["name"] = "main"
    assert operator_objects.operator_services(job) == []
