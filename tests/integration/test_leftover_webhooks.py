"""Webhook configurations left behind by an uninstall made by hand block pod creation, and the
toolkit says so: site.yml's preflight refuses to install, teardown.yml names them, and
tfjob.kit.admission_info finds nothing once they are gone (nor on a cluster whose webhooks
are served: the local operator's, behind a loopback address, and Volcano's where the local
cluster runs its vc-webhook-manager).

The leftovers are the volcano chart's own webhook configurations (rendered with the built helm,
with the pod webhooks an upstream install registers), pointed at the chart's Service in
volcano-system, which this cluster does not have: as after `kubectl delete namespace
volcano-system`. They carry no Helm release's labels, as an install that is not the
toolkit's would not. One cluster of its own (teardown.yml runs on it).
"""

from __future__ import annotations

import copy
import io
import json
import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from tfjob_kit.cluster import build, local
from tfjob_kit.versions import charts_dir, load_versions

from ._ansible import BIN, run_playbook, run_tasks
from ._cluster import Cluster
from .conftest import session_name

# Upstream Volcano's admission set: its pod webhooks are what blocks every pod.
ADMISSIONS = "{/jobs/mutate,/jobs/validate,/podgroups/validate,/pods/mutate,/pods/validate}"
KINDS = ("MutatingWebhookConfiguration", "ValidatingWebhookConfiguration")
FOREIGN = "leftover-operator-pods-validate"
POD_HOOKS = {
    ("MutatingWebhookConfiguration", "volcano-admission-service-pods-mutate"),
    ("ValidatingWebhookConfiguration", "volcano-admission-service-pods-validate"),
}


@pytest.fixture(scope="module")
def own_cluster() -> Iterator[Cluster]:
    name = session_name("webhooks")
    kubeconfig = local.up(local.UpOptions(name=name), out=io.StringIO())
    try:
        yield Cluster(kubeconfig, name)
    finally:
        local.down(name, out=io.StringIO())


def leftovers() -> list[dict[str, Any]]:
    """The chart's webhook configurations for a release in volcano-system, labels dropped."""
    rendered = subprocess.run(
        [
            str(build.helm_path()),
            "template",
            "volcano",
            str(charts_dir() / "volcano"),
            "--namespace",
            "volcano-system",
            "--kube-version",
            load_versions().kubernetes,
            "--set",
            f"admission.enabledAdmissions={ADMISSIONS}",
        ],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    ).stdout
    docs = [d for d in yaml.safe_load_all(rendered) if d and d["kind"] in KINDS]
    for doc in docs:
        doc["metadata"].pop("labels", None)
        assert all(
            h["clientConfig"]["service"]["namespace"] == "volcano-system" for h in doc["webhooks"]
        )
    assert {(d["kind"], d["metadata"]["name"]) for d in docs} >= POD_HOOKS
    return docs


def foreign(docs: list[dict[str, Any]]) -> dict[str, Any]:
    """Another operator's leftover: the chart's pod validator under names no role of the
    toolkit knows, calling a Service in a namespace that is gone."""
    doc = copy.deepcopy(
        next(d for d in docs if d["metadata"]["name"] == "volcano-admission-service-pods-validate")
    )
    doc["metadata"] = {"name": FOREIGN}
    for hook in doc["webhooks"]:
        hook["name"] = "validatepod.leftover.example.com"
        hook["clientConfig"]["service"].update(namespace="leftover-operator", name="webhook")
    return doc


def existing(cluster: Cluster, names: list[str]) -> list[dict[str, Any]]:
    """The objects of these kind/names the cluster has, ready to be applied again."""
    proc = cluster.kubectl("get", *names, "--ignore-not-found", "-o", "json")
    items: list[dict[str, Any]] = json.loads(proc.stdout)["items"] if proc.stdout.strip() else []
    for item in items:
        meta = item["metadata"]
        for key in ("resourceVersion", "uid", "creationTimestamp", "generation", "managedFields"):
            meta.pop(key, None)
        meta.get("annotations", {}).pop("kubectl.kubernetes.io/last-applied-configuration", None)
    return items


def as_list(items: list[dict[str, Any]]) -> str:
    return json.dumps({"apiVersion": "v1", "kind": "List", "items": items})


def check(cluster: Cluster, tmp_path: Path, namespace: str) -> dict[str, Any]:
    result = run_tasks(
        tmp_path,
        cluster.kubeconfig,
        [{"tfjob.kit.admission_info": {"namespaces": ["default", namespace, "no-such-ns"]}}],
    )
    assert not result[0].get("failed"), result[0]
    return result[0]


def playbook(cluster: Cluster, name: str, *extra: str) -> subprocess.CompletedProcess[str]:
    return run_playbook(
        name, "-e", f"local_cluster_name={cluster.name}", *extra, kubeconfig=cluster.kubeconfig
    )


def webhooks_cli(cluster: Cluster, namespace: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [
            str(BIN / "tfjob-kit"),
            "webhooks",
            "--kubeconfig",
            str(cluster.kubeconfig),
            "-n",
            namespace,
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def create_pod(cluster: Cluster, namespace: str) -> subprocess.CompletedProcess[str]:
    """A real creation (not a dry run: the check's own means)."""
    name = f"p-{uuid.uuid4().hex[:6]}"
    return cluster.kubectl("run", name, "-n", namespace, "--image=pause", check=False)


def test_leftover_webhooks_block_pods_and_are_named(own_cluster: Cluster, tmp_path: Path) -> None:
    cluster = own_cluster
    namespace = f"it-{uuid.uuid4().hex[:8]}"
    cluster.kubectl("create", "namespace", namespace)

    # A cluster whose webhooks are all served: nothing is reported, and no warning.
    clean = check(cluster, tmp_path, namespace)
    assert clean["webhooks"] == [] and clean["blocking"] == [], clean["message"]
    assert clean["configurations"] >= 1  # the local operator's webhook, at least
    assert clean["checked_namespaces"] == ["default", namespace]
    assert clean["missing_namespaces"] == ["no-such-ns"]
    assert not clean.get("warnings")
    assert create_pod(cluster, namespace).returncode == 0

    # The local cluster may serve the chart's configurations itself (same names): kept, put back.
    docs = leftovers()
    names = [f"{d['kind'].lower()}/{d['metadata']['name']}" for d in docs]
    served = existing(cluster, names)
    cluster.kubectl("apply", "-f", "-", stdin=as_list(docs))
    try:
        refused = create_pod(cluster, namespace)
        assert refused.returncode != 0
        assert 'failed calling webhook "mutatepod.volcano.sh"' in refused.stderr, refused.stderr
        assert 'service "volcano-admission" not found' in refused.stderr

        found = check(cluster, tmp_path, namespace)
        by_name = {(w["kind"], w["configuration"]): w for w in found["blocking"]}
        assert set(by_name) == {(d["kind"], d["metadata"]["name"]) for d in docs}
        mutate = by_name[("MutatingWebhookConfiguration", "volcano-admission-service-pods-mutate")]
        assert mutate["webhook"] == "mutatepod.volcano.sh"
        assert mutate["reason"] == "service-missing"
        assert (
            mutate["target"]
            == "Service volcano-system/volcano-admission port 443 path /pods/mutate"
        )
        assert f"Pod in namespace {namespace}" in mutate["blocks"]
        assert not mutate["toolkit"]
        assert any("PodGroup" in b for w in found["blocking"] for b in w["blocks"])
        for kind, name in POD_HOOKS:
            assert f"kubectl delete {kind.lower()} {name}" in found["message"]
        # The README's sample line.
        assert (
            "ValidatingWebhookConfiguration volcano-admission-service-podgroups-validate, webhook "
            "validatepodgroup.volcano.sh (failurePolicy Fail) calls Service volcano-system/"
            "volcano-admission port 443 path /podgroups/validate: its Service does not exist; it "
            "fails creating: Volcano PodGroup in namespace default"
        ) in found["message"]
        cli = webhooks_cli(cluster, namespace)
        assert cli.returncode == 1, cli.stdout + cli.stderr
        assert (
            "kubectl delete mutatingwebhookconfiguration volcano-admission-service-pods-mutate"
            in (cli.stdout)
        )

        # site.yml refuses before installing anything, naming them.
        site = playbook(cluster, "site.yml")
        output = site.stdout + site.stderr
        assert site.returncode != 0
        assert "Preflight - no admission webhook left behind" in output
        assert "Install the gang scheduler Volcano" not in output
        for kind, name in POD_HOOKS:
            assert f"kubectl delete {kind.lower()} {name}" in output, output[-4000:]
        assert "mutatepod.volcano.sh" in output and "not the toolkit's" in output

        # teardown.yml does its work, then names what blocks pods (and deletes none of it). The
        # volcano role may remove Volcano's own configurations; another operator's stays.
        cluster.kubectl("apply", "-f", "-", stdin=as_list([foreign(docs)]))
        names.append(f"validatingwebhookconfiguration/{FOREIGN}")
        teardown = playbook(cluster, "teardown.yml")
        output = teardown.stdout + teardown.stderr
        assert teardown.returncode != 0, output[-4000:]
        assert "teardown removed what the toolkit installed, but" in output, output[-4000:]
        assert f"kubectl delete validatingwebhookconfiguration {FOREIGN}" in output
        assert "validatepod.leftover.example.com" in output
        left = {o["metadata"]["name"] for o in existing(cluster, names)}
        assert FOREIGN in left
        for doc in docs:  # each one still there is named
            name = doc["metadata"]["name"]
            assert name not in left or f"{doc['kind'].lower()} {name}" in output, name
    finally:
        cluster.kubectl("delete", *names, "--ignore-not-found")
        if served:
            cluster.kubectl("apply", "-f", "-", stdin=as_list(served))

    # Deleted by hand (the message's commands): pods create again and the check is clean.
    assert create_pod(cluster, namespace).returncode == 0
    after = check(cluster, tmp_path, namespace)
    assert after["webhooks"] == [], after["message"]
    assert after["message"] == "no admission webhook blocks pod creation"
    cli = webhooks_cli(cluster, namespace)
    assert cli.returncode == 0 and cli.stdout == "no admission webhook blocks pod creation\n"
