"""The kueue chart: its objects, and the facts it takes from the Kueue Go module pinned in
versions.toml ([kueue]), compared here with the module itself: the controller's RBAC
(config/components/rbac), its webhooks (config/components/webhook, with its kustomization's
namespaceSelector), the Configuration's fields, the image and the CRDs with their conversion
webhooks."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from tfjob_kit.cluster import build
from tfjob_kit.installs import kueue as installs_kueue
from tfjob_kit.versions import load_versions

from ._chart import (
    ROOT,
    Chart,
    Doc,
    Shared,
    Triple,
    go_json_tags,
    nested_keys,
    of_kind,
    one,
    rule_triples,
    scenarios,
)

MODULE = "sigs.k8s.io/kueue"
CONFIG_FILE = "controller_manager_config.yaml"
NAMESPACE = "kueue-system"  # the tests' release namespace (_chart.SETUP), upstream's own
INTEGRATIONS = ["kubeflow.org/tfjob", "trainer.kubeflow.org/trainjob"]
# The resources of the integrations the chart enables, and of Kueue's own API group.
MANAGED_TFJOB = ("kubeflow.org", "tfjobs")
MANAGED = {MANAGED_TFJOB, ("trainer.kubeflow.org", "trainjobs")}
KUEUE_GROUP = "kueue.x-k8s.io"


@pytest.fixture(scope="module")
def module(go: str) -> Path:
    """sigs.k8s.io/kueue at the pinned version, from the Go module cache."""
    versions = load_versions(ROOT)
    return build.Builder(versions, ROOT, go=go).module_download_dir(MODULE, versions.kueue)


def _container(docs: list[Doc]) -> Doc:
    containers: list[Doc] = one(docs, "Deployment")["spec"]["template"]["spec"]["containers"]
    assert [c["name"] for c in containers] == ["kueue-controller-manager"]
    return containers[0]


def _configuration(docs: list[Doc]) -> Doc:
    data = one(docs, "ConfigMap")["data"]
    assert list(data) == [CONFIG_FILE]
    config: Doc = yaml.safe_load(data[CONFIG_FILE])
    return config


def _yaml_docs(path: Path) -> list[Doc]:
    return [d for d in yaml.safe_load_all(path.read_text(encoding="utf-8")) if d]


def test_defaults(kueue: Chart, module: Path) -> None:
    docs = kueue.rendered()
    assert sorted(d["kind"] for d in docs) == sorted(
        [
            "ServiceAccount",
            "ConfigMap",
            "Secret",
            "ClusterRole",
            "ClusterRoleBinding",
            "Role",
            "RoleBinding",
            "Service",
            "Deployment",
            "MutatingWebhookConfiguration",
            "ValidatingWebhookConfiguration",
        ]
    )
    container = _container(docs)
    # The module names its staging image; the release image is the same path, promoted to
    # registry.k8s.io, with the release tag.
    kustomization = yaml.safe_load(
        (module / "config" / "components" / "manager" / "kustomization.yaml").read_text("utf-8")
    )
    (staging,) = [i["newName"] for i in kustomization["images"] if i["name"] == "controller"]
    assert staging.endswith("/kueue/kueue")
    assert container["image"] == f"registry.k8s.io/kueue/kueue:{load_versions(ROOT).kueue}"
    assert container["args"] == [f"--config=/config/{CONFIG_FILE}"]
    mounts = {m["mountPath"]: m["name"] for m in container["volumeMounts"]}
    assert mounts == {
        "/config": "config",
        "/tmp": "tmp",
        "/tmp/k8s-webhook-server/serving-certs": "webhook-cert",
    }
    assert [p["name"] for p in one(docs, "Service")["spec"]["ports"]] == ["webhook"]


def test_the_configuration_names_the_charts_objects(kueue: Chart) -> None:
    docs = kueue.rendered()
    config = _configuration(docs)
    assert config["apiVersion"] == "config.kueue.x-k8s.io/v1beta2"
    service = one(docs, "Service")["metadata"]["name"]
    assert config["internalCertManagement"] == {
        "enable": True,
        "webhookServiceName": service,
        "webhookSecretName": one(docs, "Secret")["metadata"]["name"],
    }
    # Kueue's rotator injects the CA into the configurations named after the Service, less its
    # "-webhook-service" suffix (pkg/util/cert).
    base = service.removesuffix("-webhook-service")
    assert base != service
    for kind in ("Mutating", "Validating"):
        name = one(docs, f"{kind}WebhookConfiguration")["metadata"]["name"]
        assert name == f"{base}-{kind.lower()}-webhook-configuration"
    assert config["namespace"] == NAMESPACE
    assert config["integrations"] == {"frameworks": INTEGRATIONS}
    assert config["manageJobsWithoutQueueName"] is False
    assert config["featureGates"] == {"VisibilityOnDemand": False}
    assert config["waitForPodsReady"] == {"timeout": "5m", "blockAdmission": False}
    assert config["metrics"] == {"bindAddress": "0"}
    leases = [r for r in one(docs, "Role")["rules"] if r.get("resources") == ["leases"]]
    names = {n for r in leases for n in r.get("resourceNames", [])}
    assert names == {config["leaderElection"]["resourceName"]}


def test_waitforpodsready_off_is_the_feature_gate(kueue: Chart) -> None:
    config = _configuration(kueue.rendered("--set", "waitForPodsReady.enabled=false"))
    assert "waitForPodsReady" not in config
    assert config["featureGates"] == {"VisibilityOnDemand": False, "DisableWaitForPodsReady": True}


def test_every_configuration_field_is_one_the_controller_reads(kueue: Chart, module: Path) -> None:
    """Every field the chart writes, in every scenario, is a JSON field of the module's config
    API (v1beta2) or of the component-base leader election it embeds, and every feature gate is
    one the module defines."""
    api = module / "apis" / "config" / "v1beta2"
    known = go_json_tags(api / "configuration_types.go") | {"apiVersion", "kind"}
    known |= {"leaderElect", "resourceName", "leaseDuration", "renewDeadline", "retryPeriod"}
    known |= {"matchExpressions", "key", "operator", "values"}  # metav1.LabelSelector
    features = (module / "pkg" / "features" / "kube_features.go").read_text(encoding="utf-8")
    for args in SHARED.scenarios:
        config = _configuration(kueue.rendered(*args))
        gates = set(config["featureGates"])
        assert nested_keys(config) - gates <= known, (args, nested_keys(config) - gates - known)
        for gate in gates:
            assert f'{gate} featuregate.Feature = "{gate}"' in features, gate


def _upstream_rules(module: Path) -> set[Triple]:
    """What the module's manager is granted: its ClusterRole, its leader election Role and its
    Secrets Role."""
    folder = module / "config" / "components" / "rbac"
    rules: list[Doc] = []
    for name in ("role.yaml", "leader_election_role.yaml", "manager_secrets_role.yaml"):
        (role,) = _yaml_docs(folder / name)
        rules += role["rules"]
    return rule_triples(rules)


# What the chart leaves out of the module's grants, and why.
LEFT_OUT = {
    "apps": "Deployments and StatefulSets are integrations this chart leaves off",
    "autoscaling.x-k8s.io": "ProvisioningRequests need a cluster autoscaler",
    "batch": "batch Jobs are an integration this chart leaves off",
    "flowcontrol.apiserver.k8s.io": "the visibility API's flow control; visibility is off",
    "leaderworkerset.x-k8s.io": "an integration this chart leaves off",
    "ray.io": "an integration this chart leaves off",
    "sparkoperator.k8s.io": "an integration this chart leaves off",
    "workload.codeflare.dev": "an integration this chart leaves off",
}
# Single resources left out within a group the chart keeps.
LEFT_OUT_RESOURCES = {
    ("kubeflow.org", kind)
    for plural in ("jaxjobs", "mpijobs", "paddlejobs", "pytorchjobs", "xgboostjobs")
    for kind in (plural, f"{plural}/finalizers", f"{plural}/status")
} | {
    ("", "pods/finalizers"),  # the pod integration's finalizer
    ("", "configmaps"),  # leader election by ConfigMap: Kueue elects with a Lease
}


def test_rbac_is_upstreams_less_the_integrations_left_off(kueue: Chart, module: Path) -> None:
    """The ClusterRole and the Role together grant what the module's manager is granted, less
    the groups and resources of the integrations (and features) the chart leaves off; get and
    update of webhook configurations are limited to the chart's own two, Secrets and the Lease
    stay in the release namespace, and leader election gets no list, watch, patch or delete."""
    upstream = _upstream_rules(module)
    docs = kueue.rendered()
    ours = rule_triples(one(docs, "ClusterRole")["rules"]) | rule_triples(
        one(docs, "Role")["rules"]
    )
    election = {("coordination.k8s.io", "leases", v) for v in ("list", "watch", "patch", "delete")}
    expected = {
        t
        for t in upstream
        if t[0] not in LEFT_OUT and (t[0], t[1]) not in LEFT_OUT_RESOURCES and t not in election
    }
    assert ours == expected, (ours - expected, expected - ours)
    # Every group left out is one the module grants (a bump that drops one updates LEFT_OUT).
    assert set(LEFT_OUT) <= {t[0] for t in upstream}
    namespaced = rule_triples(one(docs, "Role")["rules"])
    assert {t[1] for t in namespaced} == {"secrets", "leases"}
    updates = [
        rule
        for rule in one(docs, "ClusterRole")["rules"]
        if rule["apiGroups"] == ["admissionregistration.k8s.io"] and "update" in rule["verbs"]
    ]
    names = {n for rule in updates for n in rule["resourceNames"]}
    kinds = ("Mutating", "Validating")
    assert names == {one(docs, f"{k}WebhookConfiguration")["metadata"]["name"] for k in kinds}
    with_metrics = one(kueue.rendered("--set", "metrics.enabled=true"), "ClusterRole")["rules"]
    assert rule_triples(with_metrics) - rule_triples(one(docs, "ClusterRole")["rules"]) == {
        ("authentication.k8s.io", "tokenreviews", "create"),
        ("authorization.k8s.io", "subjectaccessreviews", "create"),
    }


def _upstream_webhooks(module: Path) -> tuple[dict[str, Doc], dict[str, Any]]:
    """config/components/webhook/manifests.yaml by webhook name, and the namespaceSelector its
    kustomization gives the jobs' webhooks."""
    folder = module / "config" / "components" / "webhook"
    hooks = {
        hook["name"]: {**hook, "kind": config["kind"]}
        for config in _yaml_docs(folder / "manifests.yaml")
        for hook in config["webhooks"]
    }
    kustomization = yaml.safe_load((folder / "kustomization.yaml").read_text(encoding="utf-8"))
    (patch,) = kustomization["patches"]
    (patched,) = yaml.safe_load(patch["patch"])["webhooks"]
    return hooks, patched["namespaceSelector"]


def _resources(hook: Doc) -> set[tuple[str, str]]:
    return {
        (group, resource.split("/")[0])
        for rule in hook["rules"]
        for group in rule["apiGroups"]
        for resource in rule["resources"]
    }


def test_webhooks_are_upstreams_for_kueues_kinds_and_the_two_integrations(
    kueue: Chart, module: Path
) -> None:
    """The chart registers exactly the module's webhooks of Kueue's own kinds and of TFJobs and
    TrainJobs, each as the module has it (rules, path, failure policy, side effects), the jobs'
    with the kustomization's namespaceSelector (kube-system and the release namespace), served
    by the chart's Service."""
    upstream, selector = _upstream_webhooks(module)
    wanted = {
        name
        for name, hook in upstream.items()
        if all(group == KUEUE_GROUP or (group, r) in MANAGED for group, r in _resources(hook))
    }
    docs = kueue.rendered()
    service = one(docs, "Service")["metadata"]
    ours = {}
    for kind in ("MutatingWebhookConfiguration", "ValidatingWebhookConfiguration"):
        for hook in one(docs, kind)["webhooks"]:
            target = hook["clientConfig"]["service"]
            assert (target["name"], target["namespace"], target["port"]) == (
                service["name"],
                service["namespace"],
                443,
            )
            assert "caBundle" not in hook["clientConfig"]
            ours[hook["name"]] = {**hook, "kind": kind}
    assert set(ours) == wanted
    for name, hook in ours.items():
        theirs = upstream[name]
        for key in ("kind", "rules", "failurePolicy", "sideEffects", "admissionReviewVersions"):
            assert hook[key] == theirs[key], (name, key)
        assert hook["clientConfig"]["service"]["path"] == theirs["clientConfig"]["service"]["path"]
        jobs = _resources(hook) <= MANAGED
        assert hook.get("namespaceSelector") == (selector if jobs else None), name


def test_the_crd_file_is_the_modules_with_its_conversion_webhooks(go: str, module: Path) -> None:
    result = subprocess.run(
        [sys.executable, str(ROOT / "tools" / "gen_upstream_crds.py"), "--check", "kueue"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    path = ROOT / "charts" / "kueue" / "crds" / "kueue-crds.yaml"
    with path.open(encoding="utf-8") as stream:
        crds = [d for d in yaml.load_all(stream, Loader=yaml.CSafeLoader) if d]
    bases = module / "config" / "components" / "crd" / "bases"
    assert {c["metadata"]["name"] for c in crds} == {
        _yaml_docs(p)[0]["metadata"]["name"] for p in bases.glob("*.yaml")
    }
    converted = {
        c["metadata"]["name"]: c["spec"]["conversion"]["webhook"]["clientConfig"]["service"]
        for c in crds
        if "conversion" in c["spec"]
    }
    assert set(converted) == {
        f"{p}.kueue.x-k8s.io"
        for p in ("clusterqueues", "cohorts", "localqueues", "multikueueclusters", "workloads")
    }
    # What the chart's default release in upstream's namespace names.
    assert {(s["namespace"], s["name"], s["path"]) for s in converted.values()} == {
        (NAMESPACE, "kueue-webhook-service", "/convert")
    }


def test_metrics_are_served_only_when_asked(kueue: Chart) -> None:
    docs = kueue.rendered("--set", "metrics.enabled=true")
    assert _configuration(docs)["metrics"] == {"bindAddress": ":8443"}
    assert [p["name"] for p in one(docs, "Service")["spec"]["ports"]] == ["webhook", "metrics"]
    assert {p["name"] for p in _container(docs)["ports"]} == {"health", "webhook", "metrics"}


def test_a_multikueue_worker_grants_the_manager_workloads_and_the_managed_jobs(
    kueue: Chart,
) -> None:
    """multikueue.worker: a ServiceAccount (no token mounted anywhere) bound to the rules a
    manager's Kueue uses on a worker: its Workloads and their status, the jobs of the enabled
    integrations and their status, nothing else (tests/integration/test_multikueue.py connects
    a manager with exactly these)."""
    assert not of_kind(kueue.rendered(), "ClusterRoleBinding")[1:]
    workloads = {(KUEUE_GROUP, "workloads", v) for v in ("get", "list", "watch", "create")}
    workloads |= {
        (KUEUE_GROUP, r, v) for r in ("workloads", "workloads/status") for v in ("patch", "update")
    }
    workloads |= {(KUEUE_GROUP, "workloads", "delete"), (KUEUE_GROUP, "workloads/status", "get")}

    def jobs(group: str, plural: str) -> set[Triple]:
        verbs = ("create", "delete", "get", "list", "watch")
        return {(group, plural, v) for v in verbs} | {(group, f"{plural}/status", "get")}

    for args, managed in (
        (("--set", "multikueue.worker.enabled=true"), MANAGED),
        (("-f", str(kueue.path / "ci" / "multikueue-worker-values.yaml")), {MANAGED_TFJOB}),
    ):
        docs = kueue.rendered(*args)
        account = one(docs, "ServiceAccount", "multikueue")
        assert account["metadata"]["name"] == "kueue-multikueue"
        assert account["automountServiceAccountToken"] is False
        role = one(docs, "ClusterRole", "multikueue")
        expected = set(workloads).union(*(jobs(g, p) for g, p in managed))
        assert rule_triples(role["rules"]) == expected
        binding = one(docs, "ClusterRoleBinding", "multikueue")
        assert binding["roleRef"]["name"] == role["metadata"]["name"]
        assert binding["subjects"] == [
            {"kind": "ServiceAccount", "name": "kueue-multikueue", "namespace": NAMESPACE}
        ]


def _upstream_install(kueue: Chart, module: Path) -> dict[str, list[Doc]]:
    """The Deployment and ConfigMap of upstream's own chart (the module's charts/kueue), as the
    kueue role reads another install: by its label, less the toolkit's."""
    upstream = Chart(kueue.helm, module / "charts" / "kueue", "kueue", NAMESPACE, kueue.kube)
    docs = upstream.rendered()
    selector = yaml.safe_load((ROOT / "roles" / "kueue" / "vars" / "main.yml").read_text())[
        "kueue_other_selector"
    ]
    name, part_of = (term.split("=")[-1] for term in selector.split(","))
    assert (name, part_of) == ("kueue", "tfjob-kit")

    def labelled(kind: str) -> list[Doc]:
        return [
            d
            for d in of_kind(docs, kind)
            if d["metadata"]["labels"].get("app.kubernetes.io/name") == name
        ]

    assert all(
        d["metadata"]["labels"].get("app.kubernetes.io/part-of") == part_of
        for d in of_kind(kueue.rendered(), "Deployment")
    )
    return {"deployments": labelled("Deployment"), "config_maps": labelled("ConfigMap")}


def test_another_kueue_is_read_as_upstreams_chart_installs_it(kueue: Chart, module: Path) -> None:
    """An install of upstream's chart, as it comes, enables no TFJobs (v0.19): the kueue role
    refuses it, saying what to add; once its Configuration enables them, the role uses it."""
    other = _upstream_install(kueue, module)
    found = installs_kueue.survey(other, ["kubeflow.org/tfjob"])
    (problem,) = found["problems"]
    assert "(ConfigMap kueue-system/kueue-manager-config, key controller_manager_config.yaml)" in (
        problem
    )
    assert "does not enable kubeflow.org/tfjob: add it to integrations.frameworks" in problem
    (config_map,) = other["config_maps"]
    configuration = yaml.safe_load(config_map["data"][installs_kueue.CONFIG_KEY])
    configuration["integrations"]["frameworks"].append("kubeflow.org/tfjob")
    config_map["data"][installs_kueue.CONFIG_KEY] = yaml.safe_dump(configuration)
    assert installs_kueue.survey(other, ["kubeflow.org/tfjob"])["problems"] == []


def test_a_mirror_and_a_digest(kueue: Chart) -> None:
    docs = kueue.rendered("-f", str(kueue.path / "ci" / "mirror-values.yaml"))
    assert _container(docs)["image"] == (
        "mirror.example.com:5000/kubeflow/kueue/kueue@sha256:"
        "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
    )
    spec = one(docs, "Deployment")["spec"]["template"]["spec"]
    assert spec["imagePullSecrets"] == [{"name": "mirror-pull"}]


FAILURES = [
    (("--set", "replicaCount=2", "--set", "leaderElect=false"), "replicaCount is 2"),
    (("--set", "serviceAccount.create=false"), "serviceAccount.name is empty"),
    (("--set", "image.tag="), "image.tag and image.digest are both empty"),
    (("--set", "featureGates.VisibilityOnDemand=true"), "VisibilityOnDemand cannot be true"),
    (("--set-json", 'integrations=["batch/job"]'), "integrations"),
    (("--set-json", "integrations=[]"), "integrations"),
    (("--set", "waitForPodsReady.timeout=5"), "timeout"),
    (("--set", "kubeApiQps=0"), "kubeApiQps"),
    (("--set", "webhook.timeoutSeconds=31"), "timeoutSeconds"),
    (("--set-json", 'fullnameOverride="' + "a" * 31 + '"'), "fullnameOverride"),
]


@pytest.mark.parametrize(("args", "message"), FAILURES, ids=[m for _, m in FAILURES])
def test_validation_fails(kueue: Chart, args: tuple[str, ...], message: str) -> None:
    result = kueue.template(*args)
    assert result.returncode != 0
    assert message in result.stderr, result.stderr


def test_the_configuration_is_json_whatever_the_values(kueue: Chart) -> None:
    docs = kueue.rendered("--set-json", 'featureGates={"A": true}')
    text = one(docs, "ConfigMap")["data"][CONFIG_FILE]
    assert json.loads(text)["featureGates"] == {"VisibilityOnDemand": False, "A": True}


def test_the_jobs_webhooks_skip_the_release_namespace(kueue: Chart) -> None:
    rendered = kueue.rendered()
    hooks = [
        h
        for kind in ("Mutating", "Validating")
        for h in one(rendered, f"{kind}WebhookConfiguration")["webhooks"]
        if "namespaceSelector" in h
    ]
    assert len(hooks) == 4
    for hook in hooks:
        (expression,) = hook["namespaceSelector"]["matchExpressions"]
        assert expression["values"] == ["kube-system", NAMESPACE]
    assert of_kind(rendered, "APIService") == []


# --- what the checks every chart gets (test_every_chart.py) need to know of this one -------

# The defaults and each ci/ file.
SCENARIOS = scenarios("kueue")

SHARED = Shared("kueue", "kueue", SCENARIOS)
