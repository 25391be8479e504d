"""The real JobSet controller on the local cluster (`tfjob-kit cluster up --jobset`), with the
chart's CRD, webhooks and identity: a JobSet runs to Completed through the Job controller and
kwok's pods, its pods get the stable names Trainer v2's pod addresses are made of, the
controller's own webhook refuses what JobSet refuses, and the controller may do only what the
chart grants it."""

from __future__ import annotations

import io
from collections.abc import Iterator
from typing import Any

import pytest
import yaml

from tfjob_kit.cluster import local
from tfjob_kit.cluster.identity import IDENTITIES, LOCAL_NAMESPACE
from tfjob_kit.cluster.jobset import CONTROLLER

from ._cluster import Cluster
from .conftest import session_name
from .test_cluster_security import LOOPBACK, _listeners

NAMESPACE = "default"
WEBHOOKS = "validatingwebhookconfigurations"
VWC = "jobset-validating-webhook-configuration"


@pytest.fixture(scope="module")
def jobset_cluster() -> Iterator[Cluster]:
    name = session_name("jobset")
    try:
        kubeconfig = local.up(
            local.UpOptions(name=name, addons=False, jobset=True), out=io.StringIO()
        )
        yield Cluster(kubeconfig, name)
    finally:
        local.down(name, out=io.StringIO())


def jobset(name: str, workers: int) -> dict[str, Any]:
    pod = {"restartPolicy": "Never", "containers": [{"name": "node", "image": "busybox:1.36"}]}
    return {
        "apiVersion": "jobset.x-k8s.io/v1alpha2",
        "kind": "JobSet",
        "metadata": {"name": name, "namespace": NAMESPACE},
        "spec": {
            "replicatedJobs": [
                {
                    "name": "worker",
                    "replicas": 1,
                    "template": {
                        "spec": {
                            "parallelism": workers,
                            "completions": workers,
                            "completionMode": "Indexed",
                            "backoffLimit": 0,
                            "template": {"spec": pod},
                        }
                    },
                }
            ]
        },
    }


def test_a_jobset_runs_to_completed(jobset_cluster: Cluster) -> None:
    jobset_cluster.kubectl("apply", "-f", "-", stdin=yaml.safe_dump(jobset("mnist", 3)))

    def completed() -> bool:
        found = jobset_cluster.get("jobset", "mnist", "-n", NAMESPACE)
        conditions = (found.get("status") or {}).get("conditions") or []
        return any(c["type"] == "Completed" and c["status"] == "True" for c in conditions)

    jobset_cluster.wait_for("JobSet mnist to complete", completed, NAMESPACE, timeout=120)
    pods = jobset_cluster.items(
        "pods", "-n", NAMESPACE, "-l", "jobset.sigs.k8s.io/jobset-name=mnist"
    )
    # <jobset>-<replicated job>-<job index>-<completion index>, in the subdomain <jobset>: the
    # stable DNS names a TF_CONFIG can address.
    names = sorted(
        (
            p["spec"]["hostname"],
            p["spec"]["subdomain"],
            p["metadata"]["annotations"]["batch.kubernetes.io/job-completion-index"],
        )
        for p in pods
    )
    assert names == [(f"mnist-worker-0-{i}", "mnist", str(i)) for i in range(3)]
    assert jobset_cluster.get("service", "mnist", "-n", NAMESPACE)["spec"]["clusterIP"] == "None"


def test_the_controllers_webhook_refuses_what_jobset_refuses(jobset_cluster: Cluster) -> None:
    long_name = "a" * 60
    proc = jobset_cluster.kubectl(
        "apply", "-f", "-", stdin=yaml.safe_dump(jobset(long_name, 1)), check=False
    )
    assert proc.returncode != 0
    assert "JobSet name is too long" in proc.stderr, proc.stderr
    assert jobset_cluster.gone("jobset", long_name, NAMESPACE)


@pytest.mark.parametrize(
    ("verb", "resource", "allowed"),
    [
        ("create", "jobs.batch", "yes"),
        ("update", "jobsets.jobset.x-k8s.io/status", "yes"),
        ("create", "pods", "no"),  # the Jobs create them
        ("list", "secrets", "no"),  # only its own namespace's, by the Role
        (
            "update",
            "validatingwebhookconfigurations/jobset-validating-webhook-configuration",
            "yes",
        ),
        (
            "update",
            "validatingwebhookconfigurations/validator.training-operator.kubeflow.org",
            "no",
        ),
    ],
)
def test_the_controller_runs_with_the_charts_rules(
    jobset_cluster: Cluster, verb: str, resource: str, allowed: str
) -> None:
    account = f"system:serviceaccount:{LOCAL_NAMESPACE}:{IDENTITIES[CONTROLLER.process]}"
    proc = jobset_cluster.kubectl(
        "auth", "can-i", verb, resource, "-n", NAMESPACE, f"--as={account}", check=False
    )
    assert proc.stdout.strip() == allowed, (verb, resource, proc.stdout, proc.stderr)


def test_the_controller_listens_on_loopback_only(jobset_cluster: Cluster) -> None:
    """Its webhook server and health probes: 127.0.0.1, the webhook on the port its
    configurations call; metrics off."""
    assert jobset_cluster.name
    listeners = _listeners(jobset_cluster.name)[CONTROLLER.process]
    assert listeners and all(address in LOOPBACK for address, _ in listeners), listeners
    config = jobset_cluster.get("validatingwebhookconfiguration", VWC)
    port = config["webhooks"][0]["clientConfig"]["service"]["port"]
    assert ("127.0.0.1", port) in listeners
    assert len(listeners) == 2, listeners  # the webhook and the health probes
