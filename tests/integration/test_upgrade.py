"""Upgrades (README "Upgrades"): site.yml takes a training-operator installed from upstream's
v1.8.1 manifests (versions.toml [training-operator] upgrade_from) to the toolkit's chart while a
TFJob runs, then the toolkit's own release to changed values.

One local cluster for the module. Its operator process starts at v1.8.1 and upstream's
standalone overlay is applied from the v1.8.1 module download (the CRDs, namespace kubeflow,
RBAC, Service and Deployment, whose pod kwok simulates); the toolkit's chart replaces it in a
namespace of its own (the role's default). A TFJob is held running: its Chief runs,
its Worker waits for a node label the test adds only after the upgrade, and the Chief finishes
only once every replica runs (the rendezvous), so the job is still running when the new operator
takes over, whatever the machine's speed.
"""

from __future__ import annotations

import io
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from tfjob_kit.cluster import local
from tfjob_kit.cluster.kubectl import Kubectl
from tfjob_kit.cluster.nodes import NodePlan
from tfjob_kit.cluster.paths import logs_dir
from tfjob_kit.cluster.procs import records
from tfjob_kit.cluster.training_operator import install_upstream
from tfjob_kit.versions import load_versions

from ._ansible import REPO, run_playbook
from ._cluster import Cluster
from .conftest import session_name

NAMESPACE = "upgrade-jobs"
HOLD = "tfjob-kit.dev/test-hold"
VERSIONS = load_versions(REPO)
OLD, NEW = VERSIONS.training_operator_upgrade_from, VERSIONS.training_operator
# The local cluster's own options: no GPU nodes (no device plugin), no smoke job, no gang
# scheduler (the held Worker must not keep the Chief from running).
SITE = ("-e", "tfjob_kit_scheduler=none", "-e", "tfjob_kit_smoke_test=false")


PYTORCHJOB: dict[str, Any] = {
    "apiVersion": "kubeflow.org/v1",
    "kind": "PyTorchJob",
    "metadata": {"name": "pt", "namespace": NAMESPACE},
    "spec": {
        "pytorchReplicaSpecs": {
            "Master": {
                "replicas": 1,
                "restartPolicy": "Never",
                "template": {
                    "spec": {
                        "containers": [{"name": "pytorch", "image": "pt:2"}],
                        "nodeSelector": {HOLD: "never"},
                    }
                },
            }
        }
    },
}


def _binding(kind: str, name: str, role: str, *accounts: tuple[str, str]) -> dict[str, Any]:
    return {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": kind,
        "metadata": {"name": name, **({"namespace": NAMESPACE} if kind == "RoleBinding" else {})},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": role},
        "subjects": [{"kind": "ServiceAccount", "namespace": ns, "name": n} for ns, n in accounts],
    }


_ROLE = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "rules": []}
OPERATOR = ("kubeflow", "training-operator")  # upstream's install
# Where the toolkit's chart goes: the role's default, a namespace of its own.
OPERATOR_NS = yaml.safe_load((REPO / "roles/training_operator/defaults/main.yml").read_text())[
    "training_operator_namespace"
]
RBAC = [
    {**_ROLE, "metadata": {"name": "tfjob-kit-test-shared"}},
    {**_ROLE, "metadata": {"name": "tfjob-kit-test-extra"}},
    # the operator's account and another subject: stays whole
    _binding(
        "ClusterRoleBinding",
        "tfjob-kit-test-shared",
        "tfjob-kit-test-shared",
        OPERATOR,
        ("kube-system", "tfjob-kit-test-other"),
    ),
    # the operator's account only: removed, but its ClusterRole stays (a RoleBinding uses it)
    _binding("ClusterRoleBinding", "tfjob-kit-test-own", "tfjob-kit-test-extra", OPERATOR),
    _binding(
        "RoleBinding",
        "tfjob-kit-test-uses-extra",
        "tfjob-kit-test-extra",
        ("kube-system", "tfjob-kit-test-other"),
    ),
]


# A workload of the operator's namespace that runs as the operator's account.
ACCOUNT_USER = {
    "apiVersion": "batch/v1",
    "kind": "CronJob",
    "metadata": {"name": "tfjob-kit-test-report", "namespace": "kubeflow"},
    "spec": {
        "schedule": "0 0 1 1 *",
        "suspend": True,
        "jobTemplate": {
            "spec": {
                "template": {
                    "spec": {
                        "serviceAccountName": "training-operator",
                        "restartPolicy": "Never",
                        "containers": [{"name": "report", "image": "busybox:1.36"}],
                    }
                }
            }
        },
    },
}


def site(cluster: Cluster, *extra: str) -> tuple[int, str]:
    """playbooks/site.yml with inventories/local on this module's cluster: rc and output."""
    assert cluster.name
    proc = run_playbook(
        "site.yml",
        "-e",
        f"local_cluster_name={cluster.name}",
        *SITE,
        *extra,
        kubeconfig=cluster.kubeconfig,
    )
    return proc.returncode, proc.stdout + proc.stderr


def changed(output: str) -> int:
    line = next(x for x in output.splitlines() if x.startswith("localhost "))
    return int(line.split("changed=")[1].split()[0])


def operator_process(name: str) -> tuple[int, list[str]]:
    found = [r for r in records(name) if r.name == "training-operator" and r.alive()]
    assert len(found) == 1, f"{len(found)} training-operator processes"
    return found[0].pid, list(found[0].argv)


def logged_versions(name: str) -> list[str]:
    """The versions the operator logged at each start, oldest first."""
    text = (logs_dir(name) / "training-operator.log").read_text(errors="replace")
    return re.findall(r'starting training-operator\s+\{"version": "([^"]+)"\}', text)


def tfjob(name: str, hold: bool) -> dict[str, Any]:
    replica: dict[str, Any] = {
        "replicas": 1,
        "restartPolicy": "Never",
        "template": {"spec": {"containers": [{"name": "tensorflow", "image": "tf:2"}]}},
    }
    worker = json.loads(json.dumps(replica))
    if hold:  # Pending until the test labels a node
        worker["template"]["spec"]["nodeSelector"] = {HOLD: "go"}
    return {
        "apiVersion": "kubeflow.org/v1",
        "kind": "TFJob",
        "metadata": {"name": name, "namespace": NAMESPACE},
        "spec": {"tfReplicaSpecs": {"Chief": replica, "Worker": worker}},
    }


def succeeded(cluster: Cluster, job: str) -> bool:
    status = cluster.get("tfjob", "-n", NAMESPACE, job).get("status", {})
    return any(
        c.get("type") == "Succeeded" and c.get("status") == "True"
        for c in status.get("conditions") or []
    )


def pod_uids(cluster: Cluster, job: str) -> dict[str, str]:
    pods = cluster.items("pods", "-n", NAMESPACE, "-l", f"training.kubeflow.org/job-name={job}")
    return {p["metadata"]["name"]: p["metadata"]["uid"] for p in pods}


@pytest.fixture(scope="module")
def upstream() -> Iterator[Cluster]:
    """A cluster whose training-operator is v1.8.1, installed from upstream's manifests."""
    name = session_name("up-upgrade")
    opts = local.UpOptions(
        name=name,
        nodes=NodePlan(cpu_nodes=2, gpu_nodes=0),
        tfjob_run_seconds=2.0,
        gang_scheduler="none",
        operator_version=OLD,
    )
    try:
        kubeconfig = local.up(opts, out=io.StringIO())
        applied = install_upstream(name, Kubectl(kubeconfig), VERSIONS, io.StringIO())
        assert "Deployment/training-operator" in applied
        yield Cluster(kubeconfig, name)
    finally:
        local.down(name, out=io.StringIO())


def test_site_upgrades_upstream_v181_while_a_tfjob_runs(upstream: Cluster) -> None:
    cluster = upstream
    assert cluster.name
    assert logged_versions(cluster.name) == [OLD]
    cluster.kubectl("create", "namespace", NAMESPACE)
    cluster.kubectl("apply", "-f", "-", stdin=yaml.safe_dump(tfjob("long", hold=True)))

    def chief_running() -> bool:
        pods = cluster.items(
            "pods", "-n", NAMESPACE, "-l", "training.kubeflow.org/replica-type=chief"
        )
        return len(pod_uids(cluster, "long")) == 2 and any(
            p["status"].get("phase") == "Running" for p in pods
        )

    cluster.wait_for("the held TFJob's Chief running", chief_running, NAMESPACE, timeout=180)
    uids = pod_uids(cluster, "long")
    old_deployment = cluster.get("deployment", "-n", "kubeflow", "training-operator")
    pid = operator_process(cluster.name)[0]

    # Without training_operator_existing: refused, naming the install; nothing changes.
    rc, output = site(cluster)
    assert rc != 0
    assert (
        "found a training-operator the toolkit did not install: Deployment "
        "kubeflow/training-operator (image kubeflow/training-operator:v1-04f9f13, version "
        f"{OLD})" in output
    ), output[-4000:]
    assert "training_operator_existing: upgrade" in output
    same = cluster.get("deployment", "-n", "kubeflow", "training-operator")
    assert same["metadata"]["uid"] == old_deployment["metadata"]["uid"]
    assert not cluster.items("secrets", "-A", "-l", "owner=helm")
    assert operator_process(cluster.name)[0] == pid

    # upgrade with a PyTorchJob present: v1.8.1's Deployment has no --enable-scheme, so it
    # serves PyTorchJob too and the chart does not: refused, naming the job; nothing changes.
    cluster.kubectl("apply", "-f", "-", stdin=yaml.safe_dump(PYTORCHJOB))
    rc, output = site(cluster, "-e", "training_operator_existing=upgrade")
    assert rc != 0
    assert "training_operator_existing: upgrade would leave jobs without a controller" in output
    assert f"Found PyTorchJob: 1 ({NAMESPACE}/pt). Nothing was changed." in output, output[-4000:]
    assert "(it has no --enable-scheme: every scheme)" in output
    same = cluster.get("deployment", "-n", "kubeflow", "training-operator")
    assert same["metadata"]["uid"] == old_deployment["metadata"]["uid"]
    cluster.kubectl("delete", "pytorchjob", "-n", NAMESPACE, "pt", "--wait=true")
    # Bindings of the operator's account that are not only its own, and a ClusterRole that a
    # RoleBinding uses, stay; the binding whose only subject is the account goes.
    cluster.kubectl("apply", "-f", "-", stdin=yaml.safe_dump_all(RBAC))
    # A RoleBinding that uses the old ClusterRole keeps it, and the chart's has its name:
    # refused before anything is removed.
    uses_old = _binding("RoleBinding", "tfjob-kit-test-uses-old", "training-operator", OPERATOR)
    cluster.kubectl("apply", "-f", "-", stdin=yaml.safe_dump(uses_old))
    rc, output = site(cluster, "-e", "training_operator_existing=upgrade")
    assert rc != 0
    assert (
        "cannot upgrade the training-operator Deployment kubeflow/training-operator: ClusterRole "
        f"training-operator of the old install would stay (in use by RoleBinding {NAMESPACE}/"
        "tfjob-kit-test-uses-old, or naming other subjects than the operator's account)"
    ) in output, output[-4000:]
    same = cluster.get("deployment", "-n", "kubeflow", "training-operator")
    assert same["metadata"]["uid"] == old_deployment["metadata"]["uid"]
    cluster.kubectl("delete", "rolebinding", "-n", NAMESPACE, "tfjob-kit-test-uses-old")
    # Another workload runs as the operator's account (a CronJob, no pod yet): the account stays
    # with its bindings, and the chart's has its name: refused before anything is removed.
    # Refused where the chart goes into the old install's namespace (an upgrade in place); into
    # a namespace of its own (the default), the account simply stays.
    cluster.kubectl("apply", "-f", "-", stdin=yaml.safe_dump(ACCOUNT_USER))
    in_place = ("-e", "training_operator_namespace=kubeflow")
    rc, output = site(cluster, "-e", "training_operator_existing=upgrade", *in_place)
    assert rc != 0
    assert (
        "its ServiceAccount kubeflow/training-operator is used by CronJob kubeflow/"
        "tfjob-kit-test-report too, so it stays with its bindings"
    ) in " ".join(output.split()), output[-4000:]
    same = cluster.get("deployment", "-n", "kubeflow", "training-operator")
    assert same["metadata"]["uid"] == old_deployment["metadata"]["uid"]
    assert cluster.get("serviceaccount", "-n", "kubeflow", "training-operator")
    cluster.kubectl("delete", "cronjob", "-n", "kubeflow", "tfjob-kit-test-report")

    # With upgrade: the chart replaces it, the local process follows to the pinned release.
    rc, output = site(cluster, "-e", "training_operator_existing=upgrade")
    assert rc == 0, output[-8000:]
    assert "upgrading the training-operator Deployment kubeflow/training-operator" in output
    assert "ClusterRoleBinding tfjob-kit-test-own" in output
    assert (
        "Kept (it names other subjects too, or is in use): ClusterRoleBinding "
        "tfjob-kit-test-shared."
    ) in output
    assert (
        "The old operator also served PyTorchJob, MXJob, XGBoostJob, MPIJob, PaddleJob, which "
        "the toolkit's chart does not (TFJob only); there are no jobs of those kinds."
    ) in output, output[-4000:]
    shared = cluster.get("clusterrolebinding", "tfjob-kit-test-shared")
    assert {s["name"] for s in shared["subjects"]} == {"training-operator", "tfjob-kit-test-other"}
    assert cluster.get("clusterrole", "tfjob-kit-test-extra")["metadata"]["name"]
    assert cluster.get("clusterrole", "tfjob-kit-test-shared")["metadata"]["name"]
    assert cluster.get("rolebinding", "-n", NAMESPACE, "tfjob-kit-test-uses-extra")
    assert cluster.gone("clusterrolebinding", "tfjob-kit-test-own")
    assert logged_versions(cluster.name) == [OLD, NEW]
    new_pid, argv = operator_process(cluster.name)
    assert new_pid != pid and f"training-operator-{NEW}" in argv[0]
    # The chart runs in a namespace of its own; the old install's Deployment is gone.
    assert cluster.gone("deployment", "training-operator", "kubeflow")
    deployment = cluster.get("deployment", "-n", OPERATOR_NS, "training-operator")
    assert deployment["metadata"]["annotations"]["meta.helm.sh/release-name"] == "training-operator"
    assert deployment["metadata"]["labels"]["app.kubernetes.io/version"] == NEW
    crd = cluster.get("crd", "tfjobs.kubeflow.org", "--show-managed-fields")
    assert any(
        f["manager"] == "tfjob-kit" and f["operation"] == "Apply"
        for f in crd["metadata"]["managedFields"]
    ), crd["metadata"]["managedFields"]
    # Other kinds of upstream's install stay (another operator may serve them).
    assert cluster.get("crd", "pytorchjobs.kubeflow.org")["metadata"]["name"]

    # The running job kept its pods and finishes under the new operator.
    assert not succeeded(cluster, "long")
    assert pod_uids(cluster, "long") == uids
    node = cluster.items("nodes", "-l", "type=kwok")[0]["metadata"]["name"]
    cluster.kubectl("label", "node", node, f"{HOLD}=go")
    cluster.wait_for("the held TFJob to succeed", lambda: succeeded(cluster, "long"), NAMESPACE)
    assert pod_uids(cluster, "long") == uids
    cluster.kubectl("apply", "-f", "-", stdin=yaml.safe_dump(tfjob("after", hold=False)))
    cluster.wait_for("a new TFJob to succeed", lambda: succeeded(cluster, "after"), NAMESPACE)


def test_site_upgrades_the_toolkits_release_with_changed_values(upstream: Cluster) -> None:
    cluster = upstream
    assert cluster.name
    tuned = (
        "-e",
        "training_operator_controller_threads=3",
        "-e",
        "training_operator_kube_api_qps=40",
    )
    rc, output = site(cluster, *tuned)
    assert rc == 0, output[-8000:]
    revisions = {
        s["metadata"]["labels"]["version"]: s["metadata"]["labels"]["status"]
        for s in cluster.items(
            "secrets", "-n", OPERATOR_NS, "-l", "owner=helm,name=training-operator"
        )
    }
    assert revisions == {"1": "superseded", "2": "deployed"}
    argv = operator_process(cluster.name)[1]
    assert "--controller-threads=3" in argv and "--kube-api-qps=40" in argv
    assert logged_versions(cluster.name)[-1] == NEW
    # The same values again: nothing changes, nothing is refused.
    rc, output = site(cluster, *tuned)
    assert rc == 0, output[-8000:]
    assert changed(output) == 0, output[-8000:]
    assert Path(operator_process(cluster.name)[1][0]).name == "training-operator"
    assert Path(operator_process(cluster.name)[1][0]).parent.name == f"training-operator-{NEW}"
