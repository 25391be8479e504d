"""The pure parts of the server-aware preflight: where a pod's field is in the TFJob, and what a
pod counts against a ResourceQuota. The server's side is tests/integration/test_preflight.py."""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import pytest

from tfjob_kit import model
from tfjob_kit.kube import preflight

JOB: dict[str, Any] = {
    "apiVersion": "kubeflow.org/v1",
    "kind": "TFJob",
    "metadata": {"name": "j"},
    "spec": {
        "tfReplicaSpecs": {
            "worker": {
                "replicas": 2,
                "template": {
                    "metadata": {"labels": {"example.com/a b": "x"}},
                    "spec": {
                        "containers": [
                            {
                                "name": "tensorflow",
                                "image": "tf:2",
                                "volumeMounts": [{"name": "a", "mountPath": "/a"}] * 2,
                            }
                        ]
                    },
                },
            }
        }
    },
}


@pytest.mark.parametrize(
    ("field", "path"),
    [
        (
            "spec.containers[0].volumeMounts[1].name",
            "$.spec.tfReplicaSpecs.worker.template.spec.containers[0].volumeMounts[1].name",
        ),
        (
            "metadata.labels[example.com/a b]",
            "$.spec.tfReplicaSpecs.worker.template.metadata.labels['example.com/a b']",
        ),
        ("metadata.name", "$.metadata.name"),
        # TF_CONFIG, which the operator appends: the list it went into
        (
            "spec.containers[0].env[0].value",
            "$.spec.tfReplicaSpecs.worker.template.spec.containers[0].env",
        ),
        ("", "$.spec.tfReplicaSpecs.worker.template.spec"),
    ],
)
def test_pod_field_path(field: str, path: str) -> None:
    [replica] = model.replicas(JOB)
    assert preflight.pod_field_path(replica, field) == path


def container(cpu: str, *, restart: str | None = None, limit: str | None = None) -> dict[str, Any]:
    resources: dict[str, Any] = {"requests": {"cpu": cpu}}
    if limit:
        resources["limits"] = {"cpu": limit, "memory": "1Gi"}
    out: dict[str, Any] = {"name": f"c{cpu}", "resources": resources}
    if restart:
        out["restartPolicy"] = restart
    return out


def test_pod_amounts_sum_containers_and_sidecars_or_the_largest_init() -> None:
    pod = {
        "spec": {
            "initContainers": [container("3"), container("1", restart="Always")],
            "containers": [container("1", limit="2"), container("500m")],
        }
    }
    amounts = preflight.pod_amounts(pod)
    # running: 1 + 0.5 + the 1 of the sidecar = 2.5 (the init container's 3 ran before the
    # sidecar started, so it counts alone: 3); the larger wins
    assert amounts["requests.cpu"] == 3
    assert amounts["limits.cpu"] == 2
    # a limit without a request is the request (the API server's defaulting)
    assert amounts["requests.memory"] == amounts["limits.memory"] == 2**30
    assert amounts["pods"] == 1


def test_overhead_counts() -> None:
    pod = {"spec": {"containers": [container("1")], "overhead": {"cpu": "250m"}}}
    assert preflight.pod_amounts(pod)["requests.cpu"] == Fraction(5, 4)
