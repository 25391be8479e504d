"""tfjob.kit.tfjob and tfjob.kit.tfjob_info in real playbooks against the local cluster."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import yaml

from tfjob_kit import explain

from ._ansible import run_tasks
from ._cluster import Cluster


def tfjob(
    name: str,
    namespace: str,
    workers: int = 2,
    chief: bool = False,
    annotations: dict[str, str] | None = None,
    chief_annotations: dict[str, str] | None = None,
    pod_spec: dict[str, Any] | None = None,
    container: dict[str, Any] | None = None,
    scheduling_policy: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """A small TFJob: `workers` workers (and a chief), `annotations` on the workers' template
    (`chief_annotations` on the chief's); `pod_spec` and `container` fields merged into every
    template's pod spec and container, `scheduling_policy` in the runPolicy."""

    def replica(count: int, notes: dict[str, str] | None) -> dict[str, Any]:
        template: dict[str, Any] = {
            "spec": {
                "containers": [
                    {
                        "name": "tensorflow",
                        "image": "registry.example.com/mnist:1.0",
                        "resources": {
                            "requests": {"cpu": "100m", "memory": "128Mi"},
                            "limits": {"cpu": "100m", "memory": "128Mi"},
                        },
                        **copy.deepcopy(container or {}),
                    }
                ],
                **copy.deepcopy(pod_spec or {}),
            }
        }
        if notes:
            template["metadata"] = {"annotations": notes}
        return {"replicas": count, "restartPolicy": "Never", "template": template}

    specs = {"Worker": replica(workers, annotations)}
    if chief:
        specs["Chief"] = replica(1, chief_annotations)
    return {
        "apiVersion": "kubeflow.org/v1",
        "kind": "TFJob",
        "metadata": {"name": name, "namespace": namespace, "labels": {"suite": "module"}},
        "spec": {
            "runPolicy": {
                "cleanPodPolicy": "None",
                **({"schedulingPolicy": scheduling_policy} if scheduling_policy else {}),
            },
            "tfReplicaSpecs": specs,
        },
    }


def write(tmp_path: Path, name: str, *docs: dict[str, Any]) -> Path:
    path = tmp_path / name
    path.write_text(yaml.safe_dump_all(docs, sort_keys=False))
    return path


def names(cluster: Cluster, kind: str, namespace: str) -> list[str]:
    return [o["metadata"]["name"] for o in cluster.items(kind, "-n", namespace)]


def test_create_again_edit_check_mode(cluster: Cluster, namespace: str, tmp_path: Path) -> None:
    job = tfjob("lifecycle", namespace)
    edited = copy.deepcopy(job)
    edited["spec"]["tfReplicaSpecs"]["Worker"]["template"]["spec"]["containers"][0]["image"] = (
        "registry.example.com/mnist:2.0"
    )
    fresh = tfjob("only-checked", namespace)
    task = {"tfjob.kit.tfjob": {"src": str(write(tmp_path, "job.yaml", job))}}
    result = run_tasks(
        tmp_path,
        cluster.kubeconfig,
        [
            task,
            task,
            {"tfjob.kit.tfjob": {"src": str(write(tmp_path, "edited.yaml", edited))}, "diff": True},
            {"tfjob.kit.tfjob": {"definition": fresh}, "check_mode": True},
            {"tfjob.kit.tfjob": {"definition": job}, "check_mode": True, "diff": True},
        ],
    )
    assert result.rc == 0, result.output
    created, again, edit, checked_new, checked_edit = result.results
    assert created["changed"] and created["jobs"][0]["action"] == "created"
    assert not again["changed"] and again["jobs"][0]["action"] == "unchanged"
    assert edit["changed"] and edit["jobs"][0]["action"] == "updated"
    (diff,) = edit["diff"]
    assert diff["before"]["spec"]["tfReplicaSpecs"]["Worker"]["template"]["spec"]["containers"][0][
        "image"
    ].endswith(":1.0")
    assert diff["after"]["spec"]["tfReplicaSpecs"]["Worker"]["template"]["spec"]["containers"][0][
        "image"
    ].endswith(":2.0")
    assert "managedFields" not in diff["after"]["metadata"]
    # Check mode reports the change and changes nothing.
    assert checked_new["changed"] and checked_new["jobs"][0]["action"] == "created"
    assert checked_edit["changed"] and checked_edit["jobs"][0]["action"] == "updated"
    assert checked_edit["diff"][0]["after"]["spec"]["tfReplicaSpecs"]["Worker"]["template"]["spec"][
        "containers"
    ][0]["image"].endswith(":1.0")
    assert names(cluster, "tfjobs", namespace) == ["lifecycle"]
    held = cluster.get("tfjob", "lifecycle", "-n", namespace, "--show-managed-fields")
    assert held["spec"]["tfReplicaSpecs"]["Worker"]["template"]["spec"]["containers"][0][
        "image"
    ].endswith(":2.0")
    managers = {m["manager"] for m in held["metadata"]["managedFields"]}
    assert "tfjob-kit" in managers


def test_invalid_document_fails_located_and_creates_nothing(
    cluster: Cluster, namespace: str, tmp_path: Path
) -> None:
    good = tfjob("good", namespace)
    bad = tfjob("bad", namespace)
    bad["spec"]["runPolicy"]["cleanPodPolicy"] = "none"  # lower case: the operator rejects it
    del bad["spec"]["tfReplicaSpecs"]["Worker"]["template"]["spec"]["containers"][0]["name"]
    path = write(tmp_path, "jobs.yaml", good, bad)
    result = run_tasks(
        tmp_path,
        cluster.kubeconfig,
        [
            {"tfjob.kit.tfjob": {"src": str(path)}},
            {"tfjob.kit.tfjob": {"src": str(path), "validate": "warn"}, "check_mode": True},
        ],
    )
    strict, warned = result.results
    assert strict["failed"]
    message = strict["msg"]
    assert message.startswith("nothing was applied; 3 problems in the input")
    assert f"{path}: document 2: $.spec.runPolicy.cleanPodPolicy: 'none'" in message
    assert (
        f"{path}: document 2: $.spec.tfReplicaSpecs.Worker.template.spec.containers[0]: "
        "missing required field 'name'" in message
    )
    assert "document 1" not in message
    assert {f["document"] for f in strict["findings"]} == {2}
    # With validate: warn the findings are warnings and the API server judges: it rejects the
    # bad document in the dry run, so still nothing is created.
    assert warned["failed"]
    assert "TFJob" in warned["msg"] and "bad" in warned["msg"]
    assert any("cleanPodPolicy" in w for w in warned.get("warnings", []))
    assert names(cluster, "tfjobs", namespace) == []


def test_wait_for_succeeded_and_tf_config(cluster: Cluster, namespace: str, tmp_path: Path) -> None:
    job = tfjob("waits", namespace, workers=2, chief=True)
    result = run_tasks(
        tmp_path,
        cluster.kubeconfig,
        [
            {
                "tfjob.kit.tfjob": {
                    "definition": job,
                    "wait": True,
                    "wait_for": ["Succeeded"],
                    "wait_timeout": 180,
                }
            },
            {"tfjob.kit.tfjob_info": {"name": "waits", "namespace": namespace}},
            {"tfjob.kit.tfjob_info": {"namespace": namespace, "label_selector": "suite=module"}},
            {"tfjob.kit.tfjob_info": {"namespace": namespace, "label_selector": "suite=other"}},
        ],
    )
    assert result.rc == 0, result.output
    applied, info, listed, none = result.results
    # The tasks run with ignore_errors: a failed wait is the module's message, not rc.
    assert not applied.get("failed"), applied.get("msg")
    (job_result,) = applied["jobs"]
    assert job_result["phase"] == "Succeeded", job_result
    assert job_result["replica_statuses"]["Chief"] == {"succeeded": 1}
    assert {c["type"] for c in job_result["conditions"]} >= {"Created", "Succeeded"}
    # The TF_CONFIG returned is the one the operator injected into each pod.
    pods = cluster.items("pods", "-n", namespace, "-l", "training.kubeflow.org/job-name=waits")
    assert sorted(job_result["tf_config"]["tasks"]) == sorted(p["metadata"]["name"] for p in pods)
    for pod in pods:
        env = {e["name"]: e.get("value") for e in pod["spec"]["containers"][0].get("env", [])}
        assert json.loads(env["TF_CONFIG"]) == explain.pod_tf_config(
            job_result["tf_config"], pod["metadata"]["name"]
        )
    (described,) = info["jobs"]
    assert described["phase"] == "Succeeded"
    assert sorted(p["name"] for p in described["pods"]) == [
        "waits-chief-0",
        "waits-worker-0",
        "waits-worker-1",
    ]
    assert all(p["node"] and p["phase"] == "Succeeded" for p in described["pods"])
    assert any(e["reason"] == "SuccessfulCreatePod" for e in described["events"])
    assert [j["name"] for j in listed["jobs"]] == ["waits"]
    assert none["jobs"] == []


def test_failing_chief_ends_the_wait_with_the_reason(
    cluster: Cluster, namespace: str, tmp_path: Path
) -> None:
    job = tfjob(
        "breaks",
        namespace,
        workers=1,
        chief=True,
        chief_annotations={"tfjob-kit.dev/exit-code": "3"},
    )
    result = run_tasks(
        tmp_path,
        cluster.kubeconfig,
        [
            {
                "tfjob.kit.tfjob": {
                    "definition": job,
                    "wait": True,
                    "wait_for": ["Succeeded"],
                    "fail_on": ["Failed"],
                    "wait_timeout": 300,
                }
            },
        ],
    )
    (failed,) = result.results
    assert failed["failed"]
    message = failed["msg"]
    assert message.startswith(f"TFJob {namespace}/breaks reached Failed"), message
    assert "pod breaks-chief-0" in message and "exited with code 3" in message
    assert failed["jobs"][0]["action"] == "created"


def test_absent_removes_job_pods_and_services(
    cluster: Cluster, namespace: str, tmp_path: Path
) -> None:
    job = tfjob("removed", namespace, workers=2)
    job["spec"]["runPolicy"]["cleanPodPolicy"] = "None"  # keep pods after success
    path = write(tmp_path, "job.yaml", job)
    result = run_tasks(
        tmp_path,
        cluster.kubeconfig,
        [
            {"tfjob.kit.tfjob": {"src": str(path), "wait": True, "wait_timeout": 180}},
            {"tfjob.kit.tfjob": {"src": str(path), "state": "absent"}, "check_mode": True},
            {
                "tfjob.kit.tfjob": {
                    "src": str(path),
                    "state": "absent",
                    "wait": True,
                    "wait_timeout": 120,
                }
            },
            {"tfjob.kit.tfjob": {"src": str(path), "state": "absent"}},
        ],
    )
    assert result.rc == 0, result.output
    _, checked, removed, again = result.results
    assert checked["changed"] and checked["jobs"][0]["action"] == "deleted"
    assert removed["changed"] and removed["jobs"][0]["action"] == "deleted"
    assert not again["changed"] and again["jobs"][0]["action"] == "absent"
    selector = "training.kubeflow.org/job-name=removed"
    assert names(cluster, "tfjobs", namespace) == []
    assert cluster.items("pods", "-n", namespace, "-l", selector) == []
    assert cluster.items("services", "-n", namespace, "-l", selector) == []


def test_volcano_backend_and_conversion(cluster: Cluster, namespace: str, tmp_path: Path) -> None:
    t9k = {
        "apiVersion": "batch.tensorstack.dev/v1beta1",
        "kind": "TensorFlowTrainingJob",
        "metadata": {"name": "t9k", "namespace": namespace},
        "spec": {
            "runPolicy": {"cleanUpPolicy": "Unfinished"},
            "replicaSpecs": [
                {
                    "type": "worker",
                    "replicas": 2,
                    "template": tfjob("x", namespace)["spec"]["tfReplicaSpecs"]["Worker"][
                        "template"
                    ],
                }
            ],
        },
    }
    path = write(tmp_path, "t9k.yaml", t9k)
    result = run_tasks(
        tmp_path,
        cluster.kubeconfig,
        [
            {"tfjob.kit.tfjob": {"src": str(path)}},
            {
                "tfjob.kit.tfjob": {
                    "src": str(path),
                    "convert": True,
                    "wait": True,
                    "wait_timeout": 180,
                }
            },
            {
                "tfjob.kit.tfjob": {
                    "definition": tfjob("gang", namespace),
                    "backend": "volcano",
                    "wait": True,
                    "wait_for": ["Succeeded"],
                    "wait_timeout": 180,
                }
            },
        ],
    )
    refused, converted, volcano = result.results
    assert refused["failed"] and "set convert: true" in refused["msg"]
    assert not converted.get("failed"), converted.get("msg")
    assert converted["jobs"][0]["kind"] == "TFJob"
    assert converted["jobs"][0]["phase"] == "Succeeded"
    assert not volcano.get("failed"), volcano.get("msg")
    (vcjob,) = volcano["jobs"]
    assert (vcjob["kind"], vcjob["api_version"]) == ("Job", "batch.volcano.sh/v1alpha1")
    assert vcjob["phase"] == "Completed"
    held = cluster.get("jobs.batch.volcano.sh", "gang", "-n", namespace)
    assert held["spec"]["schedulerName"] == "volcano"
