"""The kube-batch chart (the archived gang scheduler, for Kubernetes before 1.22 only): the
version guards, the v1 CRDs, lint, render and policy checks (no cluster)."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

from ._chart import (
    CHARTS,
    KUBE,
    Chart,
    Doc,
    Shared,
    of_kind,
    one,
    scenarios,
    sets,
)

PATH = CHARTS / "kube-batch"


def test_kube_batch_refuses_current_kubernetes(kube_batch: Chart) -> None:
    # Helm itself enforces Chart.yaml's kubeVersion "<1.22.0-0" before rendering anything.
    error = kube_batch.render_error(kube=KUBE)
    assert f"incompatible with Kubernetes v{KUBE}" in error


def test_kube_batch_template_guard_points_to_volcano(kube_batch: Chart, tmp_path: Path) -> None:
    """templates/validation.yaml repeats the check for tools that skip Chart.yaml's kubeVersion
    (a vendored copy, a renderer without the check); seen here through such a copy."""
    copy = tmp_path / "kube-batch"
    shutil.copytree(kube_batch.path, copy)
    chart_yaml = copy / "Chart.yaml"
    text = chart_yaml.read_text(encoding="utf-8")
    chart_yaml.write_text(re.sub(r"(?m)^kubeVersion:.*\n", "", text), encoding="utf-8")
    result = kube_batch.run(
        "template", "rel", str(copy), "-n", "kube-system", "--kube-version", KUBE
    )
    assert result.returncode != 0
    assert f"kube-batch cannot run on Kubernetes v{KUBE}" in result.stderr
    assert "Install the volcano chart instead" in result.stderr
    forced = kube_batch.run(
        "template",
        "rel",
        str(copy),
        "-n",
        "kube-system",
        "--kube-version",
        KUBE,
        "--set",
        "allowUnsupportedKubernetes=true",
    )
    assert forced.returncode == 0, forced.stderr


def _assert_structural(schema: Doc, where: str) -> None:
    """Every node has a type (or is int-or-string), the rule apiextensions v1 enforces."""
    if schema.get("x-kubernetes-int-or-string"):
        return
    assert "type" in schema, f"{where} has no type"
    for name, child in schema.get("properties", {}).items():
        _assert_structural(child, f"{where}.{name}")
    if isinstance(schema.get("items"), dict):
        _assert_structural(schema["items"], f"{where}[]")
    if isinstance(schema.get("additionalProperties"), dict):
        _assert_structural(schema["additionalProperties"], f"{where}{{}}")


def test_kube_batch_renders_v1_crds_on_legacy_kubernetes(kube_batch: Chart) -> None:
    docs = kube_batch.render(crds=True)
    crds = {c["metadata"]["name"]: c for c in of_kind(docs, "CustomResourceDefinition")}
    assert set(crds) == {
        "podgroups.scheduling.incubator.k8s.io",
        "queues.scheduling.incubator.k8s.io",
    }
    for name, crd in crds.items():
        assert crd["apiVersion"] == "apiextensions.k8s.io/v1"
        # A *.k8s.io group is protected: without this annotation the API server refuses the CRD.
        assert crd["metadata"]["annotations"]["api-approved.kubernetes.io"].startswith("unapproved")
        (version,) = crd["spec"]["versions"]
        assert version["name"] == "v1alpha1"
        _assert_structural(version["schema"]["openAPIV3Schema"], name)
    podgroup = crds["podgroups.scheduling.incubator.k8s.io"]["spec"]["versions"][0]
    spec = podgroup["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]
    assert set(spec) == {"minMember", "queue", "priorityClassName", "minResources"}
    assert "subresources" not in podgroup  # kube-batch updates status with a plain Update
    queue = crds["queues.scheduling.incubator.k8s.io"]
    assert queue["spec"]["scope"] == "Cluster"
    assert (
        "weight"
        in queue["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"][
            "properties"
        ]
    )
    deployment = one(docs, "Deployment")
    assert deployment["spec"]["template"]["spec"]["containers"][0]["image"] == (
        "docker.io/kubesigs/kube-batch:v0.5"
    )
    default_queue = one(docs, "Queue")
    assert default_queue["apiVersion"] == "scheduling.incubator.k8s.io/v1alpha1"
    assert default_queue["spec"] == {"weight": 1}


def test_kube_batch_validation(kube_batch: Chart) -> None:
    assert "needs leaderElect=true" in kube_batch.render_error(*sets("replicas=2"))
    assert 'defaultQueue="default" is not in queues' in kube_batch.render_error(
        *sets("queues[0].name=other")
    )
    docs = kube_batch.render(*sets("leaderElect=true", "replicas=2"))
    role = one(docs, "Role")
    assert role["metadata"]["namespace"] == "kube-system"
    assert {v for rule in role["rules"] for v in rule["verbs"]} == {"create", "get", "update"}
    args = one(docs, "Deployment")["spec"]["template"]["spec"]["containers"][0]["args"]
    assert "--lock-object-namespace=kube-system" in args


# --- what the checks every chart gets (test_every_chart.py) need to know of this one -------

# The defaults, each ci/ file, and leader election with one replica.
SCENARIOS = scenarios("kube-batch", sets("leaderElect=true"))


SHARED = Shared("kube-batch", "kube_batch", SCENARIOS)
