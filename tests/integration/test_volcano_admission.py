"""Volcano's real admission webhooks on the local cluster (vc-webhook-manager as a local process,
registered with the chart's webhook configurations), the volcano role's uninstall leaving none
of them behind, and the role with a Volcano the toolkit did not install (refused, or adopted and
left by teardown).

The module brings up a cluster of its own: its tests stop the webhook server, install and
uninstall the release and plant another Volcano, which the session's cluster must not see.
"""

from __future__ import annotations

import io
import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from tfjob_kit.cluster import local, volcano_admission
from tfjob_kit.cluster.build import helm_path
from tfjob_kit.cluster.procs import records

from ._ansible import BIN, REPO, ansible_env, run_tasks
from ._cluster import Cluster
from .conftest import session_name
from .test_module_tfjob import tfjob

RECORD = "tfjob-kit-adopted-volcano"
PREFIX = "volcano-admission-service-"


@pytest.fixture(scope="module")
def vc_cluster() -> Iterator[Cluster]:
    name = session_name("vcadm")
    kubeconfig = local.up(local.UpOptions(name=name, tfjob_run_seconds=3.0), out=io.StringIO())
    try:
        yield Cluster(kubeconfig, name)
    finally:
        local.down(name, out=io.StringIO())


@pytest.fixture
def ns(vc_cluster: Cluster) -> Iterator[str]:
    name = f"it-{uuid.uuid4().hex[:8]}"
    vc_cluster.kubectl("create", "namespace", name)
    try:
        yield name
    finally:
        vc_cluster.kubectl("delete", "namespace", name, "--wait=false", check=False)


def volcano_role(cluster: Cluster, tmp_path: Path, **variables: Any) -> dict[str, Any]:
    """One run of the tfjob.kit.volcano role, as the local inventory configures it: its exit
    status and output."""
    role_vars = {
        "volcano_admission_enabled": False,
        "volcano_helm_binary": str(helm_path()),
        "volcano_wait_timeout": 120,
        **variables,
    }
    play = [
        {
            "name": "Volcano",
            "hosts": "localhost",
            "gather_facts": False,
            "roles": [{"role": "tfjob.kit.volcano", "vars": role_vars}],
        }
    ]
    (tmp_path / "volcano.yml").write_text(yaml.safe_dump(play))
    proc = subprocess.run(
        [
            str(BIN / "ansible-playbook"),
            "-i",
            "localhost,",
            "-c",
            "local",
            "-e",
            f"ansible_python_interpreter={BIN / 'python'}",
            str(tmp_path / "volcano.yml"),
        ],
        cwd=REPO,
        env=ansible_env(cluster.kubeconfig),
        capture_output=True,
        text=True,
        timeout=400,
        check=False,
    )
    return {"rc": proc.returncode, "output": proc.stdout + proc.stderr}


def webhook_configurations(cluster: Cluster) -> list[str]:
    return sorted(
        f"{kind}/{o['metadata']['name']}"
        for kind in ("validatingwebhookconfigurations", "mutatingwebhookconfigurations")
        for o in cluster.items(kind)
        if o["metadata"]["name"].startswith(PREFIX)
    )


def podgroup(name: str, namespace: str, queue: str = "default") -> str:
    return yaml.safe_dump(
        {
            "apiVersion": "scheduling.volcano.sh/v1beta1",
            "kind": "PodGroup",
            "metadata": {"name": name, "namespace": namespace},
            "spec": {"minMember": 1, "queue": queue},
        }
    )


def test_the_charts_webhook_configurations_are_registered(vc_cluster: Cluster) -> None:
    """Every webhook configuration the chart installs, by its name, calling the local server."""
    expected = sorted(
        f"{kind.lower()}s/{name}" for kind, name in volcano_admission.configuration_names()
    )
    assert webhook_configurations(vc_cluster) == expected
    hook = vc_cluster.get("validatingwebhookconfiguration", f"{PREFIX}jobs-validate")
    (webhook,) = hook["webhooks"]
    assert webhook["failurePolicy"] == "Fail"
    assert webhook["clientConfig"]["service"]["path"] == "/jobs/validate"


def test_the_real_webhook_refuses_a_volcano_job_through_the_module(
    vc_cluster: Cluster, ns: str, tmp_path: Path
) -> None:
    """tfjob.kit.tfjob's Volcano backend: the converted job naming the root queue is refused with
    Volcano's own words; a valid one is admitted, and defaulted by /jobs/mutate."""
    refused_job = tfjob("to-root", ns, scheduling_policy={"queue": "root"})
    result = run_tasks(
        tmp_path,
        vc_cluster.kubeconfig,
        [
            {"tfjob.kit.tfjob": {"definition": refused_job, "backend": "volcano"}},
            {"tfjob.kit.tfjob": {"definition": tfjob("fine", ns), "backend": "volcano"}},
        ],
    )
    refused, admitted = result.results
    assert refused.get("failed"), refused
    assert 'admission webhook "validatejob.volcano.sh" denied the request' in refused["msg"]
    assert "can not submit job to root queue" in refused["msg"]
    assert "Traceback" not in refused["msg"]
    assert vc_cluster.gone("jobs.batch.volcano.sh", "to-root", ns)
    assert not admitted.get("failed"), admitted.get("msg")
    held = vc_cluster.get("jobs.batch.volcano.sh", "fine", "-n", ns)
    assert held["spec"]["queue"] == "default"
    assert all(task.get("minAvailable") is not None for task in held["spec"]["tasks"])


def test_the_real_webhook_refuses_a_volcano_job_and_a_podgroup(
    vc_cluster: Cluster, ns: str
) -> None:
    """kubectl: duplicate task names and minAvailable over the replicas; a PodGroup in a queue
    that does not exist."""
    task = {
        "name": "worker",
        "replicas": 1,
        "template": {
            "spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "busybox"}]}
        },
    }
    job = {
        "apiVersion": "batch.volcano.sh/v1alpha1",
        "kind": "Job",
        "metadata": {"name": "twice", "namespace": ns},
        "spec": {"minAvailable": 5, "schedulerName": "volcano", "tasks": [task, task]},
    }
    proc = vc_cluster.kubectl("create", "-f", "-", stdin=yaml.safe_dump(job), check=False)
    assert proc.returncode != 0
    assert 'admission webhook "validatejob.volcano.sh" denied the request' in proc.stderr
    assert "duplicated task name worker" in proc.stderr
    assert "job 'minAvailable' should not be greater than total replicas in tasks" in proc.stderr

    proc = vc_cluster.kubectl("create", "-f", "-", stdin=podgroup("pg", ns, "nowhere"), check=False)
    assert proc.returncode != 0
    assert 'admission webhook "validatepodgroup.volcano.sh" denied the request' in proc.stderr
    assert 'unable to find queue: queue.scheduling.volcano.sh "nowhere" not found' in proc.stderr
    vc_cluster.kubectl("create", "-f", "-", stdin=podgroup("pg", ns))


FOREIGN = [
    {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "other-volcano"}},
    {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "volcano-scheduler", "namespace": "other-volcano"},
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": {"app": "volcano-scheduler"}},
            "template": {
                "metadata": {"labels": {"app": "volcano-scheduler"}},
                "spec": {
                    "containers": [
                        {
                            "name": "volcano-scheduler",
                            "image": "docker.io/volcanosh/vc-scheduler:v1.13.0",
                        }
                    ]
                },
            },
        },
    },
]


def test_another_volcano_is_refused_or_adopted_and_left_by_teardown(
    vc_cluster: Cluster, tmp_path: Path
) -> None:
    """Upstream's Volcano in another namespace: the role refuses it by default, naming it and
    the variable; with volcano_existing: adopt it installs nothing and records it (a second run
    changes nothing); state absent leaves it and deletes only the record."""
    vc_cluster.kubectl("apply", "-f", "-", stdin=yaml.safe_dump_all(FOREIGN))
    try:
        refused = volcano_role(vc_cluster, tmp_path)
        assert refused["rc"] != 0
        assert (
            "found a Volcano the toolkit did not install: Deployment"
            " other-volcano/volcano-scheduler (image docker.io/volcanosh/vc-scheduler:v1.13.0)"
            in refused["output"]
        ), refused["output"][-3000:]
        assert "Set volcano_existing: adopt" in refused["output"]
        assert vc_cluster.gone("configmap", RECORD, "kube-system")

        adopted = volcano_role(vc_cluster, tmp_path, volcano_existing="adopt")
        assert adopted["rc"] == 0, adopted["output"][-3000:]
        assert "Volcano is adopted, not installed" in adopted["output"]
        record = vc_cluster.get("configmap", RECORD, "-n", "kube-system")
        assert record["metadata"]["labels"] == {"app.kubernetes.io/managed-by": "tfjob-kit"}
        assert {k: record["data"][k] for k in ("namespace", "kind", "version")} == {
            "namespace": "other-volcano",
            "kind": "volcano",
            "version": "v1.13.0",
        }
        assert record["data"]["adopted-at"].endswith("Z")
        # Nothing of Volcano installed: no release, no namespace of the role's.
        assert vc_cluster.items("secrets", "-A", "-l", "owner=helm,name=volcano") == []
        assert vc_cluster.gone("namespace", "volcano-system")

        again = volcano_role(vc_cluster, tmp_path, volcano_existing="adopt")
        assert again["rc"] == 0 and "changed=0" in again["output"], again["output"][-3000:]

        left = volcano_role(vc_cluster, tmp_path, volcano_state="absent")
        assert left["rc"] == 0, left["output"][-3000:]
        assert vc_cluster.get("deployment", "volcano-scheduler", "-n", "other-volcano")
        assert vc_cluster.gone("configmap", RECORD, "kube-system")
        # The uninstall was skipped: the local cluster's own webhooks are still registered.
        assert webhook_configurations(vc_cluster)
    finally:
        vc_cluster.kubectl("delete", "namespace", "other-volcano", "--wait=true", check=False)


LEFTOVER: dict[str, Any] = {
    "apiVersion": "admissionregistration.k8s.io/v1",
    "kind": "MutatingWebhookConfiguration",
    "metadata": {"name": f"{PREFIX}pods-mutate"},
    "webhooks": [
        {
            "name": "mutatepod.volcano.sh",
            "admissionReviewVersions": ["v1"],
            "sideEffects": "NoneOnDryRun",
            "failurePolicy": "Fail",
            "clientConfig": {
                "service": {
                    "name": "volcano-admission-service",
                    "namespace": "volcano-system",
                    "path": "/pods/mutate",
                }
            },
            "rules": [
                {
                    "apiGroups": [""],
                    "apiVersions": ["v1"],
                    "operations": ["CREATE"],
                    "resources": ["pods"],
                }
            ],
        }
    ],
}


def test_uninstall_leaves_no_webhook_that_blocks_pods(
    vc_cluster: Cluster, ns: str, tmp_path: Path
) -> None:
    """The known failure: a webhook server is gone and its configurations stay, so the API
    server refuses what they match. An upstream install's pods webhook left behind blocks every
    pod; it is not the toolkit's, so the role's uninstall leaves it and names it, and the
    admission check (teardown.yml's last) names it with its delete command. The uninstall keeps
    the local cluster's own configurations while their server answers (admission still works);
    once that server is gone too, its configurations block PodGroups, and the uninstall removes
    them: none of the local cluster's is left, and PodGroups are created."""
    pod = yaml.safe_dump(
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"generateName": "after-", "namespace": ns},
            "spec": {"containers": [{"name": "c", "image": "busybox"}]},
        }
    )
    leftover = f"MutatingWebhookConfiguration/{LEFTOVER['metadata']['name']}"
    local_configurations = webhook_configurations(vc_cluster)
    installed = volcano_role(vc_cluster, tmp_path)
    assert installed["rc"] == 0, installed["output"][-3000:]
    vc_cluster.kubectl("apply", "-f", "-", stdin=yaml.safe_dump(LEFTOVER))
    try:
        blocked = vc_cluster.kubectl("create", "-f", "-", stdin=pod, check=False)
        assert blocked.returncode != 0
        assert 'failed calling webhook "mutatepod.volcano.sh"' in blocked.stderr

        removed = volcano_role(vc_cluster, tmp_path, volcano_state="absent")
        assert removed["rc"] == 0, removed["output"][-3000:]
        assert f"left as they are, not the toolkit's: {leftover}." in " ".join(
            removed["output"].split()
        ), removed["output"][-3000:]
        assert webhook_configurations(vc_cluster) == sorted(
            [*local_configurations, f"mutatingwebhookconfigurations/{LEFTOVER['metadata']['name']}"]
        )
        check = run_tasks(
            tmp_path,
            vc_cluster.kubeconfig,
            [{"tfjob.kit.admission_info": {"namespaces": [ns]}}],
        )
        message = check.results[0]["message"]
        assert LEFTOVER["metadata"]["name"] in message, message
        assert f"kubectl delete mutatingwebhookconfiguration {LEFTOVER['metadata']['name']}" in (
            message
        ), message
    finally:
        vc_cluster.kubectl(
            "delete", "mutatingwebhookconfiguration", LEFTOVER["metadata"]["name"], check=False
        )
    vc_cluster.kubectl("create", "-f", "-", stdin=pod)
    refused = vc_cluster.kubectl("create", "-f", "-", stdin=podgroup("pg", ns, "no"), check=False)
    assert "unable to find queue" in refused.stderr

    assert vc_cluster.name
    for record in records(vc_cluster.name):
        if record.name == volcano_admission.PROCESS:
            record.stop()
    blocked = vc_cluster.kubectl("create", "-f", "-", stdin=podgroup("pg", ns), check=False)
    assert 'failed calling webhook "validatepodgroup.volcano.sh"' in blocked.stderr

    removed = volcano_role(vc_cluster, tmp_path, volcano_state="absent")
    assert removed["rc"] == 0, removed["output"][-3000:]
    assert webhook_configurations(vc_cluster) == []
    vc_cluster.kubectl("create", "-f", "-", stdin=pod)
    vc_cluster.kubectl("create", "-f", "-", stdin=podgroup("pg", ns))
