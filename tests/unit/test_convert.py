"""Conversions carry everything over or say what they could not."""

from __future__ import annotations

import copy
import json
import re
import shlex
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tfjob_kit import convert, explain, schema
from tfjob_kit.manifests import load_path
from tfjob_kit.validate import check_object

SEEDS = Path(__file__).resolve().parent.parent / "data" / "seeds"


def seed(name: str, kind: str | None = None) -> dict[str, Any]:
    docs = [d.content for d in load_path(str(SEEDS / name)) if kind is None or d.kind == kind]
    doc: dict[str, Any] = docs[0]
    return doc


def test_v1beta1_master_job() -> None:
    job, notes = convert.to_v1(seed("seed001-v1beta1-master-gpu.yaml"))
    assert job["apiVersion"] == "kubeflow.org/v1"
    master = job["spec"]["tfReplicaSpecs"]["Master"]
    assert master["restartPolicy"] == "OnFailure"
    assert "restartPolicy" not in master["template"]["spec"]
    paths = {n.path for n in notes}
    assert "$.spec.tfReplicaSpecs.MASTER" in paths
    rules = {f.rule for f in check_object(job)}
    assert rules == {"image-placeholder", "master-legacy"}  # the image stays the user's job


def test_v1beta1_generate_name_and_spec_level_policies() -> None:
    source = seed("seed000-v1beta1-generatename.yaml")
    source["spec"]["cleanPodPolicy"] = "all"
    source["spec"]["backoffLimit"] = 2
    source["spec"]["mystery"] = {"x": 1}
    job, notes = convert.to_v1(source)
    assert job["metadata"] == {"generateName": "tfjob", "namespace": "kubeflow"}
    assert job["spec"]["runPolicy"] == {"cleanPodPolicy": "All", "backoffLimit": 2}
    dropped = [n for n in notes if n.kind == "dropped"]
    assert [n.path for n in dropped] == ["$.spec.mystery"] and '{"x": 1}' in dropped[0].message
    assert any(n.path == "$.metadata.generateName" for n in notes)


def test_v1beta1_spec_level_managed_by_moves_to_run_policy() -> None:
    """managedBy was missing from convert's own list of RunPolicy fields: it was dropped."""
    source = seed("seed000-v1beta1-generatename.yaml")
    source["spec"]["managedBy"] = "kueue.x-k8s.io/multikueue"
    job, notes = convert.to_v1(source)
    assert job["spec"]["runPolicy"] == {"managedBy": "kueue.x-k8s.io/multikueue"}
    assert "managedBy" not in job["spec"]
    assert convert.Note("$.spec.managedBy", "changed", "moved to spec.runPolicy.managedBy") in notes
    assert not [n for n in notes if n.kind == "dropped"]
    assert not [f for f in check_object(job) if f.rule in ("schema", "run-policy-misplaced")]


@pytest.mark.parametrize("field", schema.run_policy_fields())
def test_v1beta1_every_run_policy_field_at_spec_level_is_moved(field: str) -> None:
    source = seed("seed000-v1beta1-generatename.yaml")
    source["spec"][field] = {"placeholder": field}
    job, notes = convert.to_v1(source)
    assert job["spec"]["runPolicy"] == {field: {"placeholder": field}}
    assert field not in job["spec"]
    assert [n.kind for n in notes if n.path == f"$.spec.{field}"] == ["changed"]


def test_v1alpha1_list_form() -> None:
    source = {
        "apiVersion": "kubeflow.org/v1alpha1",
        "kind": "TFJob",
        "metadata": {"name": "old"},
        "spec": {
            "tfImage": "x",
            "replicaSpecs": [
                {
                    "tfReplicaType": "MASTER",
                    "replicas": 1,
                    "tfPort": 2223,
                    "template": {
                        "spec": {
                            "containers": [{"name": "tensorflow", "image": "a:1"}],
                            "restartPolicy": "OnFailure",
                        }
                    },
                },
                {
                    "tfReplicaType": "WORKER",
                    "replicas": 2,
                    "template": {"spec": {"containers": [{"name": "tensorflow", "image": "a:1"}]}},
                },
            ],
        },
    }
    job, notes = convert.to_v1(source)
    assert sorted(job["spec"]["tfReplicaSpecs"]) == ["Master", "Worker"]
    master = job["spec"]["tfReplicaSpecs"]["Master"]
    assert master["template"]["spec"]["containers"][0]["ports"] == [
        {"name": "tfjob-port", "containerPort": 2223}
    ]
    assert {n.path for n in notes if n.kind == "dropped"} == {"$.spec.tfImage"}
    config = json.loads(explain.tf_config(job, "Worker", 0, "ml") or "{}")
    assert config["cluster"]["master"] == ["old-master-0.ml.svc:2223"]


def test_t9k_cleanup_policy_and_unknown_fields() -> None:
    source = seed("seed004-t9k-tensorflowtrainingjob.yaml")
    source["spec"]["runPolicy"] = {
        "cleanUpPolicy": "Unfinished",
        "backoffLimit": 3,
        "activeDeadlineSeconds": 600,
        "extra": True,
    }
    source["spec"]["replicaSpecs"].append(
        {"type": "ps", "replicas": 1, "template": source["spec"]["replicaSpecs"][0]["template"]}
    )
    job, notes = convert.to_v1(source)
    assert job["spec"]["runPolicy"] == {
        "backoffLimit": 3,
        "activeDeadlineSeconds": 600,
        "cleanPodPolicy": "Running",
        "schedulingPolicy": {"queue": "default"},
    }
    assert sorted(job["spec"]["tfReplicaSpecs"]) == ["PS", "Worker"]
    assert "$.spec.runPolicy.extra" in {n.path for n in notes if n.kind == "dropped"}


def test_unsupported_kind() -> None:
    with pytest.raises(convert.ConversionError, match="cannot convert"):
        convert.to_v1({"apiVersion": "v1", "kind": "Pod"})


def test_to_volcano_shape() -> None:
    tfjob = seed("seed003-volcano-podgroup.yaml", kind="TFJob")
    tfjob["spec"]["runPolicy"] = {
        "backoffLimit": 4,
        "cleanPodPolicy": "All",
        "schedulingPolicy": {"queue": "research"},
    }
    for replica in tfjob["spec"]["tfReplicaSpecs"].values():
        replica["template"]["spec"]["containers"][0]["command"] = ["python", "/dist_mnist.py"]
    vcjob, notes = convert.to_volcano(tfjob)
    spec = vcjob["spec"]
    assert vcjob["apiVersion"] == "batch.volcano.sh/v1alpha1" and vcjob["kind"] == "Job"
    assert spec["minAvailable"] == 6 and spec["schedulerName"] == "volcano"
    assert spec["queue"] == "research" and spec["maxRetry"] == 4
    assert spec["plugins"] == {"env": [], "svc": []}
    assert [t["name"] for t in spec["tasks"]] == ["ps", "worker"]
    worker = spec["tasks"][1]
    assert {"event": "TaskCompleted", "action": "CompleteJob"} in worker["policies"]
    container = worker["template"]["spec"]["containers"][0]
    assert container["command"][:2] == ["sh", "-c"]
    assert {"name": "tfjob-port", "containerPort": 2222} in container["ports"]
    assert "$.spec.runPolicy.cleanPodPolicy" in {n.path for n in notes if n.kind == "dropped"}


def test_to_volcano_without_command_reports_it() -> None:
    tfjob = seed("seed003-volcano-podgroup.yaml", kind="TFJob")
    _, notes = convert.to_volcano(tfjob)  # the seed's containers rely on the image ENTRYPOINT
    assert any("ENTRYPOINT" in n.message for n in notes if n.kind == "dropped")


def test_volcano_tf_config_script_builds_what_the_operator_would(tmp_path: Path) -> None:
    tfjob = {
        "apiVersion": "kubeflow.org/v1",
        "kind": "TFJob",
        "metadata": {"name": "mnist"},
        "spec": {
            "tfReplicaSpecs": {
                role: {
                    "replicas": count,
                    "template": {
                        "spec": {
                            "containers": [
                                {
                                    "name": "tensorflow",
                                    "image": "tf:1",
                                    "command": ["python", "-c"],
                                    "args": ["print('hi')"],
                                }
                            ]
                        }
                    },
                }
                for role, count in (("PS", 1), ("Worker", 2))
            }
        },
    }
    vcjob, _ = convert.to_volcano(tfjob)
    worker = vcjob["spec"]["tasks"][1]["template"]["spec"]["containers"][0]
    hosts = tmp_path / "volcano"
    hosts.mkdir()
    (hosts / "ps.host").write_text("mnist-ps-0.mnist\n")
    (hosts / "worker.host").write_text("mnist-worker-0.mnist\nmnist-worker-1.mnist\n")
    script = worker["command"][2].replace("/etc/volcano", str(hosts))
    command = ["sh", "-c", script, "--", "sh", "-c", 'printf %s "$TF_CONFIG"']
    result = subprocess.run(
        command,
        env={"VK_TASK_INDEX": "1", "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        check=True,
    )
    assert json.loads(result.stdout) == {
        "cluster": {
            "ps": ["mnist-ps-0.mnist:2222"],
            "worker": ["mnist-worker-0.mnist:2222", "mnist-worker-1.mnist:2222"],
        },
        "task": {"type": "worker", "index": 1},
        "environment": "cloud",
    }
    assert worker["command"][3:] == ["--", "python", "-c", "print('hi')"]


def volcano_job(role: str = "Worker", port: object = 2222) -> dict[str, Any]:
    return {
        "apiVersion": "kubeflow.org/v1",
        "kind": "TFJob",
        "metadata": {"name": "mnist"},
        "spec": {
            "tfReplicaSpecs": {
                name: {
                    "replicas": 1,
                    "template": {
                        "spec": {
                            "containers": [
                                {
                                    "name": "tensorflow",
                                    "image": "tf:1",
                                    "command": ["python"],
                                    "ports": [{"name": "tfjob-port", "containerPort": port}],
                                }
                            ]
                        }
                    },
                }
                for name in ("PS", role)
            }
        },
    }


@pytest.mark.parametrize(
    "role", ["w;touch${IFS}/tmp/owned", "w$(id)", "w`id`", 'w"x', "w'x", "w x", "w|id", "W\n", "-w"]
)
def test_to_volcano_refuses_replica_types_a_shell_would_read(role: str) -> None:
    """Unknown replica types reach convert as written (validate flags them, convert did not
    look); the type became the task name, the host file name and a word in `sh -c`."""
    with pytest.raises(convert.ConversionError, match="DNS-1123"):
        convert.to_volcano(volcano_job(role))


@pytest.mark.parametrize("port", [0, 70000, 10**5000, -1], ids=["0", "70000", "5001 digits", "-1"])
def test_to_volcano_refuses_ports_out_of_range(port: int) -> None:
    with pytest.raises(convert.ConversionError, match="port"):
        convert.to_volcano(volcano_job(port=port))


def test_to_volcano_script_words_are_only_names_and_ports() -> None:
    vcjob, _ = convert.to_volcano(volcano_job("Evaluator", 3333))
    script = vcjob["spec"]["tasks"][0]["template"]["spec"]["containers"][0]["command"][2]
    calls = [shlex.split(call) for call in re.findall(r"\$\((h [^)]*)\)", script)]
    assert sorted(calls) == [["h", "evaluator", "3333"], ["h", "ps", "3333"]]


# --- to a Kubeflow Trainer v2 TrainJob (the real controllers run every example in
# tests/integration/test_trainer.py) -----------------------------------------------------------


def _dist_mnist() -> dict[str, Any]:
    docs = load_path(str(Path(__file__).resolve().parents[2] / "examples/tfjobs/dist-mnist.yaml"))
    doc: dict[str, Any] = docs[0].content
    return doc


def test_trainjob_tf_config_is_explains_with_jobsets_addresses() -> None:
    """With the index reference resolved and JobSet's names mapped to the operator's, each TF_CONFIG
    is byte for byte explain's."""
    job = _dist_mnist()
    (runtime, trainjob), _ = convert.to_trainjob(job)
    assert trainjob["spec"]["runtimeRef"] == {
        "apiGroup": "trainer.kubeflow.org",
        "kind": "TrainingRuntime",
        "name": "dist-mnist",
    }
    assert trainjob["spec"]["trainer"] == {"numNodes": 2} == runtime["spec"]["mlPolicy"]
    template = runtime["spec"]["template"]["spec"]
    assert template["successPolicy"] == {"operator": "All", "targetReplicatedJobs": ["node"]}
    for rjob, kind in (("ps", "ps"), ("node", "worker")):
        (spec,) = [j for j in template["replicatedJobs"] if j["name"] == rjob]
        (container,) = spec["template"]["spec"]["template"]["spec"]["containers"]
        index_var, tf_config = container["env"][-2:]
        assert index_var["name"] == "TFJOB_KIT_TASK_INDEX"
        assert "job-completion-index" in index_var["valueFrom"]["fieldRef"]["fieldPath"]
        value = tf_config["value"]
        for index in range(2 if kind == "worker" else 1):
            ours = value.replace("$(TFJOB_KIT_TASK_INDEX)", str(index))
            for t, trainer_name in (("ps", "ps"), ("worker", "node")):
                for i in range(2):
                    ours = ours.replace(
                        f"dist-mnist-{trainer_name}-0-{i}.dist-mnist:",
                        f"dist-mnist-{t}-{i}.default.svc:",
                    )
            assert ours == explain.tf_config(job, kind.capitalize(), index)
    assert {j["name"] for j in template["replicatedJobs"]} == {"ps", "node"}


def test_trainjob_names_that_no_longer_fit() -> None:
    """A TFJob's pods are named <job>-<type>-<i>; JobSet's <job>-<replicated job>-0-<i> plus a
    five-letter suffix: a name that fits a TFJob can be too long for a TrainJob."""
    job = _dist_mnist()
    job["metadata"]["name"] = "n" * 49  # the TFJob's pods: 49 + len("-worker-1") = 58
    with pytest.raises(convert.ConversionError, match=r"names of at most 48 characters fit"):
        convert.to_trainjob(job)
    job["metadata"]["name"] = "n" * 48  # 48 + len("-node-0-1-abcde") = 63
    convert.to_trainjob(job)
    job["metadata"]["name"] = "1abc"  # a DNS-1123 label, not a DNS-1035 one
    with pytest.raises(convert.ConversionError, match="DNS-1035"):
        convert.to_trainjob(job)
    del job["metadata"]["name"]
    job["metadata"]["generateName"] = "tf-"
    with pytest.raises(convert.ConversionError, match=r"metadata\.name"):
        convert.to_trainjob(job)


def test_trainjob_notes_say_what_changes() -> None:
    job = _dist_mnist()
    (runtime, _), notes = convert.to_trainjob(job)
    said = {(n.path, n.kind) for n in notes}
    assert ("$.spec.runPolicy.cleanPodPolicy", "dropped") in said
    assert ("$.spec.runPolicy.backoffLimit", "changed") in said
    assert ("$.spec.tfReplicaSpecs.Worker.restartPolicy", "changed") in said  # ExitCode
    assert ("$.spec.tfReplicaSpecs.Worker", "changed") in said  # worker 0 no longer decides
    jobs = runtime["spec"]["template"]["spec"]["replicatedJobs"]
    assert all(j["template"]["spec"]["backoffLimit"] == 3 for j in jobs)
    assert "podGroupPolicy" not in runtime["spec"]


def test_trainjob_gang_under_volcano() -> None:
    """kube-batch (seed 003) becomes Volcano's gang: a PodGroup of every pod, the queue kept."""
    tfjob = seed("seed003-kube-batch-podgroup.yaml", "TFJob")
    (runtime, trainjob), notes = convert.to_trainjob(tfjob)
    assert runtime["spec"]["podGroupPolicy"] == {"volcano": {}}
    for rjob in runtime["spec"]["template"]["spec"]["replicatedJobs"]:
        assert rjob["template"]["spec"]["template"]["spec"]["schedulerName"] == "volcano"
    assert any("kube-batch" in n.message for n in notes)
    job = _dist_mnist()
    job["spec"]["runPolicy"]["schedulingPolicy"] = {"queue": "research", "minAvailable": 2}
    (runtime, trainjob), notes = convert.to_trainjob(job)
    assert trainjob["metadata"]["annotations"] == {"scheduling.volcano.sh/queue-name": "research"}
    assert any(n.path.endswith("minAvailable") for n in notes)


def test_trainjob_gang_scheduler_is_the_users_choice() -> None:
    """The operator's --gang-scheduler-name does not show in a TFJob: the user says it."""
    job = _dist_mnist()
    (runtime, _), _ = convert.to_trainjob(job, gang_scheduler="volcano")
    assert runtime["spec"]["podGroupPolicy"] == {"volcano": {}}
    tfjob = seed("seed003-kube-batch-podgroup.yaml", "TFJob")
    (runtime, _), _ = convert.to_trainjob(tfjob, gang_scheduler="none")
    assert "podGroupPolicy" not in runtime["spec"]
    with pytest.raises(ValueError, match="gang_scheduler"):
        convert.to_trainjob(job, gang_scheduler="kube-batch")


def _multiworker() -> dict[str, Any]:
    path = Path(__file__).resolve().parents[2] / "examples/tfjobs/multiworker.yaml"
    doc: dict[str, Any] = load_path(str(path))[0].content
    return doc


def test_workers_only_jobs_run_on_the_shipped_multiworker_runtime() -> None:
    """A workers-only job whose pods need only the TrainJob's trainer fields is one TrainJob on
    tensorflow-multiworker, its TF_CONFIG in trainer.env, after the user's env."""
    (job,), notes = convert.to_trainjob(_multiworker())
    assert job["spec"]["runtimeRef"] == {
        "apiGroup": "trainer.kubeflow.org",
        "kind": "ClusterTrainingRuntime",
        "name": "tensorflow-multiworker",
    }
    trainer = job["spec"]["trainer"]
    assert trainer["numNodes"] == 3 and trainer["image"] == "tensorflow/tensorflow:2.15.0"
    assert [e["name"] for e in trainer["env"]] == ["TF_CPP_MIN_LOG_LEVEL", "TF_CONFIG"]
    assert "$(TFJOB_KIT_TASK_INDEX)" in trainer["env"][-1]["value"]
    assert trainer["resourcesPerNode"]["limits"] == {"cpu": "2", "memory": "4Gi"}
    assert any("tensorflow-multiworker" in n.message for n in notes)


def _worker(job: dict[str, Any]) -> dict[str, Any]:
    worker: dict[str, Any] = job["spec"]["tfReplicaSpecs"]["Worker"]
    return worker


CHANGES = {
    "node-selector": lambda j: _worker(j)["template"]["spec"].update(nodeSelector={"gpu": "a"}),
    "on-failure": lambda j: _worker(j).update(restartPolicy="OnFailure"),
    "backoff-limit": lambda j: j["spec"].update(runPolicy={"backoffLimit": 2}),
    "chief": lambda j: j["spec"]["tfReplicaSpecs"].update(Chief=copy.deepcopy(_worker(j))),
    "port": lambda j: _worker(j)["template"]["spec"]["containers"][0].update(
        ports=[{"name": "tfjob-port", "containerPort": 3333}]
    ),
    "pod-annotation": lambda j: _worker(j)["template"].update(metadata={"annotations": {"a": "b"}}),
}


@pytest.mark.parametrize("change", CHANGES.values(), ids=CHANGES.keys())
def test_anything_more_gets_a_runtime_of_its_own(change: Any) -> None:
    job = _multiworker()
    change(job)
    docs, _ = convert.to_trainjob(job)
    assert [d["kind"] for d in docs] == ["TrainingRuntime", "TrainJob"]


def test_a_gang_gets_a_runtime_of_its_own() -> None:
    """The PodGroup policy is a runtime's."""
    docs, _ = convert.to_trainjob(_multiworker(), gang_scheduler="volcano")
    assert [d["kind"] for d in docs] == ["TrainingRuntime", "TrainJob"]
