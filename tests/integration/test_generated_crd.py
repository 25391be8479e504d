"""The CRD generated from schemas/ on a real API server: client and server judge alike, and the
runnable example reaches Succeeded with the TF_CONFIG `tfjob-kit explain` predicts."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from tfjob_kit import explain
from tfjob_kit.validate import validate_text

from ._cluster import Cluster

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "tfjobs" / "dist-mnist.yaml"


def _job(name: str, **run_policy: Any) -> str:
    return yaml.safe_dump(
        {
            "apiVersion": "kubeflow.org/v1",
            "kind": "TFJob",
            "metadata": {"name": name},
            "spec": {
                "runPolicy": run_policy,
                "tfReplicaSpecs": {
                    "Worker": {
                        "replicas": 2,
                        "restartPolicy": "OnFailure",
                        "template": {
                            "spec": {
                                "containers": [
                                    {
                                        "name": "tensorflow",
                                        "image": "docker.io/tensorflow/tensorflow:2.16.1",
                                        "command": ["python", "-c", "print(1)"],
                                    }
                                ]
                            }
                        },
                    }
                },
            },
        }
    )


def test_the_served_crd_is_the_generated_one(cluster: Cluster) -> None:
    crd = cluster.get("crd", "tfjobs.kubeflow.org")
    assert crd["metadata"]["annotations"]["tfjob-kit.dev/generated-from"] == "schemas/tfjob-v1.json"
    served = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
    policy = served["properties"]["spec"]["properties"]["runPolicy"]["properties"]
    assert policy["cleanPodPolicy"]["enum"] == ["All", "Running", "None"]


@pytest.mark.parametrize(
    ("run_policy", "path"),
    [
        ({"cleanPodPolicy": "none"}, "$.spec.runPolicy.cleanPodPolicy"),
        ({"backoffLimit": -1}, "$.spec.runPolicy.backoffLimit"),
        ({"managedBy": "someone-else"}, "$.spec.runPolicy.managedBy"),
    ],
)
def test_server_rejects_what_validate_reports(
    cluster: Cluster, namespace: str, run_policy: dict[str, Any], path: str
) -> None:
    text = _job("bad-policy", **run_policy)
    findings = validate_text(text).findings
    assert any(f.path == path and str(f.severity) == "error" for f in findings), findings
    proc = cluster.kubectl(
        "apply", "--server-side", "-n", namespace, "-f", "-", stdin=text, check=False
    )
    assert proc.returncode != 0
    assert path.removeprefix("$.") in proc.stderr, proc.stderr


def test_valid_job_is_accepted_by_both(cluster: Cluster, namespace: str) -> None:
    text = _job("good-policy", cleanPodPolicy="Running", backoffLimit=2)
    assert [f for f in validate_text(text).findings if str(f.severity) == "error"] == []
    cluster.kubectl(
        "apply", "--server-side", "--dry-run=server", "-n", namespace, "-f", "-", stdin=text
    )


def test_example_dist_mnist_succeeds_with_predicted_tf_config(
    cluster: Cluster, namespace: str
) -> None:
    manifest = yaml.safe_load(EXAMPLE.read_text())
    manifest["metadata"]["namespace"] = namespace
    cluster.kubectl("apply", "--server-side", "-f", "-", stdin=yaml.safe_dump(manifest))
    plan = explain.plan(manifest)
    expected = {pod.name: pod.tf_config for replica in plan.replicas for pod in replica.pods}

    def pods() -> list[dict[str, Any]] | None:
        found = cluster.items(
            "pods", "-n", namespace, "-l", "training.kubeflow.org/job-name=dist-mnist"
        )
        return found if len(found) == len(expected) else None

    for pod in cluster.wait_for("the example's pods", pods, namespace):
        (container,) = [c for c in pod["spec"]["containers"] if c["name"] == "tensorflow"]
        env = {e["name"]: e.get("value") for e in container.get("env", [])}
        assert env["TF_CONFIG"] == expected[pod["metadata"]["name"]]
        assert json.loads(env["TF_CONFIG"])["cluster"]["worker"]

    def succeeded() -> dict[str, Any] | None:
        job: dict[str, Any] = cluster.get("tfjob", "-n", namespace, "dist-mnist")
        done = any(
            c["type"] == "Succeeded" and c["status"] == "True"
            for c in job.get("status", {}).get("conditions", [])
        )
        return job if done else None

    cluster.wait_for("the example to succeed", succeeded, namespace, timeout=120)


def test_realistic_valid_jobs_are_accepted_by_the_server(cluster: Cluster, namespace: str) -> None:
    """The benchmark corpus (security contexts, probes, volumes, GPUs...) is valid for
    `validate`; the served CRD must accept every job too (a float64 int64 bound once
    rejected every runAsUser)."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
    from corpus import tfjob

    jobs = [tfjob(index) for index in range(40)]
    for job in jobs:
        job["metadata"]["namespace"] = namespace
    text = yaml.safe_dump_all(jobs)
    assert [f for f in validate_text(text).findings if str(f.severity) == "error"] == []
    cluster.kubectl(
        "apply", "--server-side", "--dry-run=server", "-n", namespace, "-f", "-", stdin=text
    )
