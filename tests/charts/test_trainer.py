"""The trainer chart: its objects, and the facts it takes from the Kubeflow Trainer Go module
pinned in versions.toml ([trainer]), compared here with the module itself: the controller's RBAC
(manifests/base/rbac/role.yaml), its webhooks (manifests/base/webhook, with kustomize's patches),
the Configuration's fields, the release image and the CRDs."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tfjob_kit.cluster import build
from tfjob_kit.versions import load_versions

from ._chart import (
    ROOT,
    Chart,
    Doc,
    Shared,
    go_json_tags,
    nested_keys,
    of_kind,
    one,
    rule_triples,
    scenarios,
)

MODULE = "github.com/kubeflow/trainer/v2"
CONFIG_FILE = "controller_manager_config.yaml"
VWC = "validator.trainer.kubeflow.org"
MWC = "defaulter.trainer.kubeflow.org"
LEASE = "trainer.kubeflow.org"
CERT_DIR = "/tmp/k8s-webhook-server/serving-certs"


@pytest.fixture(scope="module")
def module(go: str) -> Path:
    """github.com/kubeflow/trainer/v2 at the pinned version, from the Go module cache."""
    versions = load_versions(ROOT)
    return build.Builder(versions, ROOT, go=go).module_download_dir(MODULE, versions.trainer)


def _container(docs: list[Doc]) -> Doc:
    containers: list[Doc] = one(docs, "Deployment")["spec"]["template"]["spec"]["containers"]
    assert [c["name"] for c in containers] == ["trainer-controller-manager"]
    return containers[0]


def _configuration(docs: list[Doc]) -> Doc:
    data = one(docs, "ConfigMap")["data"]
    assert list(data) == [CONFIG_FILE]
    config: Doc = yaml.safe_load(data[CONFIG_FILE])
    return config


def _upstream_manager(module: Path) -> list[Doc]:
    path = module / "manifests" / "base" / "manager" / "manager.yaml"
    return [d for d in yaml.safe_load_all(path.read_text(encoding="utf-8")) if d]


def test_defaults(trainer: Chart, module: Path) -> None:
    docs = trainer.rendered()
    kinds = sorted(d["kind"] for d in docs)
    assert kinds == sorted(
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
    # the module's image, with the release tag (its manifests name none)
    (deployment,) = [d for d in _upstream_manager(module) if d["kind"] == "Deployment"]
    (theirs,) = deployment["spec"]["template"]["spec"]["containers"]
    version = load_versions(ROOT).trainer
    assert container["image"] == f"{theirs['image']}:{version}"
    assert container["args"] == [f"--config=/config/{CONFIG_FILE}"]
    mounts = {m["mountPath"]: m["name"] for m in container["volumeMounts"]}
    assert mounts == {"/config": "config", "/tmp": "tmp", CERT_DIR: "webhook-cert"}
    # the module mounts its certificate Secret where the rotator looks, as the chart does
    assert {m["mountPath"] for m in theirs["volumeMounts"]} == {CERT_DIR}
    service = one(docs, "Service")
    assert [p["name"] for p in service["spec"]["ports"]] == ["webhook"]
    assert {r["metadata"]["name"] for r in of_kind(docs, "ClusterRole")} == {"trainer"}


def test_the_configuration_names_the_charts_objects(trainer: Chart, module: Path) -> None:
    docs = trainer.rendered()
    config = _configuration(docs)
    assert config["apiVersion"] == "config.trainer.kubeflow.org/v1alpha1"
    assert config["kind"] == "Configuration"
    assert config["certManagement"] == {
        "enable": True,
        "webhookServiceName": one(docs, "Service")["metadata"]["name"],
        "webhookSecretName": one(docs, "Secret")["metadata"]["name"],
    }
    assert config["webhook"] == {"port": 9443}
    assert config["metrics"] == {"bindAddress": "0", "secureServing": True}  # off
    path = module / "manifests" / "base" / "manager" / CONFIG_FILE
    upstream = yaml.safe_load(path.read_text(encoding="utf-8"))
    election = {k: v for k, v in upstream["leaderElection"].items() if k != "resourceNamespace"}
    assert config["leaderElection"] == election  # the module's, in the release namespace
    leases = [rule for rule in one(docs, "Role")["rules"] if rule.get("resources") == ["leases"]]
    assert {LEASE} == {n for r in leases for n in r.get("resourceNames", [])}
    # the pods roll when the Configuration changes
    other = trainer.rendered("--set", "kubeApiQps=20")
    annotation = "tfjob-kit.io/config-hash"

    def config_hash(rendered: list[Doc]) -> str:
        return str(
            one(rendered, "Deployment")["spec"]["template"]["metadata"]["annotations"][annotation]
        )

    assert config_hash(docs) != config_hash(other)


def test_every_configuration_field_is_one_the_controller_reads(
    trainer: Chart, module: Path
) -> None:
    """The Configuration decodes strictly: an unknown field stops the controller. Every field the
    chart writes, in every scenario, is a JSON field of the module's config API or of the
    component-base leader election it embeds."""
    types = module / "pkg" / "apis" / "config" / "v1alpha1" / "configuration_types.go"
    known = go_json_tags(types) | {"apiVersion", "kind"}
    known |= {"leaderElect", "resourceName", "leaseDuration", "renewDeadline", "retryPeriod"}
    for args in SHARED.scenarios:
        config = _configuration(trainer.rendered(*args))
        features = set(config.get("featureGates") or {})
        assert nested_keys(config) - features <= known, (
            args,
            nested_keys(config) - features - known,
        )


def _upstream_rules(module: Path) -> list[Doc]:
    path = module / "manifests" / "base" / "rbac" / "role.yaml"
    (role,) = [d for d in yaml.safe_load_all(path.read_text(encoding="utf-8")) if d]
    rules: list[Doc] = role["rules"]
    return rules


def test_rbac_is_upstreams_with_the_webhook_configurations_and_the_lease_named(
    trainer: Chart, module: Path
) -> None:
    """The ClusterRole and the Role together grant what the controller's kubebuilder markers ask
    for (manifests/base/rbac/role.yaml), except that get and update of the webhook configurations
    are limited to the controller's own two, and the Lease moves to the release namespace, by
    name (no list: leader election gets, creates and updates one Lease)."""
    upstream = rule_triples(_upstream_rules(module))
    docs = trainer.rendered()
    rules = one(docs, "ClusterRole")["rules"]
    leases = {t for t in upstream if t[1] == "leases"}
    assert rule_triples(rules) == upstream - leases
    assert rule_triples(one(docs, "Role")["rules"]) == leases - {
        ("coordination.k8s.io", "leases", "list")
    }
    for rule in rules:
        if "admissionregistration.k8s.io" in rule["apiGroups"] and "update" in rule["verbs"]:
            assert rule["resourceNames"] in ([MWC], [VWC]), rule
    with_metrics = one(trainer.rendered("--set", "metrics.enabled=true"), "ClusterRole")["rules"]
    reviews = {
        ("authentication.k8s.io", "tokenreviews", "create"),
        ("authorization.k8s.io", "subjectaccessreviews", "create"),
    }
    assert rule_triples(with_metrics) == (upstream - leases) | reviews


def _upstream_webhooks(module: Path) -> dict[str, Doc]:
    """manifests/base/webhook/manifests.yaml with kustomize's JSON patches applied (service
    names, configuration names, object selectors), by webhook name."""
    folder = module / "manifests" / "base" / "webhook"
    configs = {
        doc["kind"]: doc
        for doc in yaml.safe_load_all((folder / "manifests.yaml").read_text(encoding="utf-8"))
        if doc
    }
    patches = {
        "MutatingWebhookConfiguration": folder / "patch_mutating.yaml",
        "ValidatingWebhookConfiguration": folder / "patch_validating.yaml",
    }
    for kind, path in patches.items():
        for op in yaml.safe_load(path.read_text(encoding="utf-8")):
            if op["path"] == "/metadata/name":
                configs[kind]["metadata"]["name"] = op["value"]
                continue
            match = re.fullmatch(
                r"/webhooks/(\d+)/(objectSelector|clientConfig/service/name)", op["path"]
            )
            assert match and op["op"] in ("add", "replace"), op
            hook = configs[kind]["webhooks"][int(match[1])]
            if match[2] == "objectSelector":
                hook["objectSelector"] = op["value"]
            else:
                hook["clientConfig"]["service"]["name"] = op["value"]
    assert configs["MutatingWebhookConfiguration"]["metadata"]["name"] == MWC
    assert configs["ValidatingWebhookConfiguration"]["metadata"]["name"] == VWC
    return {
        hook["name"]: {**hook, "kind": kind}
        for kind, config in configs.items()
        for hook in config["webhooks"]
    }


def test_webhooks_are_upstreams(trainer: Chart, module: Path) -> None:
    """Same webhooks as the module's (names, paths, rules, object selectors, failure policy,
    side effects), in the two configurations whose names the rotator injects into, served by
    the chart's Service."""
    upstream = _upstream_webhooks(module)
    docs = trainer.rendered()
    assert one(docs, "MutatingWebhookConfiguration")["metadata"]["name"] == MWC
    assert one(docs, "ValidatingWebhookConfiguration")["metadata"]["name"] == VWC
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
    assert set(ours) == set(upstream)
    for name, hook in ours.items():
        theirs = upstream[name]
        for key in ("kind", "rules", "failurePolicy", "sideEffects", "admissionReviewVersions"):
            assert hook[key] == theirs[key], (name, key)
        assert hook.get("objectSelector") == theirs.get("objectSelector"), name
        assert hook["clientConfig"]["service"]["path"] == theirs["clientConfig"]["service"]["path"]


def test_metrics_are_served_only_when_asked(trainer: Chart) -> None:
    docs = trainer.rendered("--set", "metrics.enabled=true")
    assert _configuration(docs)["metrics"] == {"bindAddress": ":8443", "secureServing": True}
    assert [p["name"] for p in one(docs, "Service")["spec"]["ports"]] == ["webhook", "metrics"]
    ports = {p["name"] for p in _container(docs)["ports"]}
    assert ports == {"health", "webhook", "metrics"}


def test_a_mirror_and_a_digest(trainer: Chart) -> None:
    docs = trainer.rendered("-f", str(trainer.path / "ci" / "mirror-values.yaml"))
    assert _container(docs)["image"] == (
        "mirror.example.com:5000/kubeflow/kubeflow/trainer/trainer-controller-manager@sha256:"
        "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
    )
    spec = one(docs, "Deployment")["spec"]["template"]["spec"]
    assert spec["imagePullSecrets"] == [{"name": "mirror-pull"}]


def test_the_crd_file_is_the_modules(go: str) -> None:
    result = subprocess.run(
        [sys.executable, str(ROOT / "tools" / "gen_upstream_crds.py"), "--check", "trainer"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    path = ROOT / "charts" / "trainer" / "crds" / "trainer-crds.yaml"
    crds = [d for d in yaml.safe_load_all(path.read_text(encoding="utf-8")) if d]
    assert [c["metadata"]["name"] for c in crds] == [
        "trainjobs.trainer.kubeflow.org",
        "trainingruntimes.trainer.kubeflow.org",
        "clustertrainingruntimes.trainer.kubeflow.org",
    ]
    assert {v["name"] for c in crds for v in c["spec"]["versions"]} == {"v1alpha1"}


FAILURES = [
    (("--set", "replicaCount=2", "--set", "leaderElect=false"), "replicaCount is 2"),
    (("--set", "serviceAccount.create=false"), "serviceAccount.name is empty"),
    (("--set", "image.tag="), "image.tag and image.digest are both empty"),
    (("--set", "kubeApiQps=0"), "kubeApiQps"),
    (("--set", "kubeApiBurst=0"), "kubeApiBurst"),
    (("--set", "featureGates.lower=true"), "invalid propertyName 'lower'"),
    (("--set", "webhook.timeoutSeconds=31"), "timeoutSeconds"),
    (("--set-json", 'fullnameOverride="' + "a" * 53 + '"'), "fullnameOverride"),
]


@pytest.mark.parametrize(("args", "message"), FAILURES, ids=[m for _, m in FAILURES])
def test_validation_fails(trainer: Chart, args: tuple[str, ...], message: str) -> None:
    result = trainer.template(*args)
    assert result.returncode != 0
    assert message in result.stderr, result.stderr


def test_the_configuration_is_json_whatever_the_values(trainer: Chart) -> None:
    """The Configuration is written as JSON, so a value cannot add a field or change a type."""
    docs = trainer.rendered("--set-json", 'featureGates={"A": true}')
    text = one(docs, "ConfigMap")["data"][CONFIG_FILE]
    assert json.loads(text)["featureGates"] == {"A": True}


# --- what the checks every chart gets (test_every_chart.py) need to know of this one -------

# The defaults and each ci/ file.
SCENARIOS = scenarios("trainer")

SHARED = Shared("trainer", "trainer", SCENARIOS)


def test_the_trainer_schema_is_the_crds() -> None:
    """schemas/trainer-v1alpha1.json, what validate checks Trainer's kinds against, is generated
    from the CRDs above; it names the version they come from."""
    result = subprocess.run(
        [sys.executable, str(ROOT / "tools" / "gen_trainer_schema.py"), "--check"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    generated = json.loads((ROOT / "schemas" / "trainer-v1alpha1.json").read_text("utf-8"))
    assert generated["x-tfjob-kit-trainer-version"] == load_versions(ROOT).trainer
    assert {"TrainJob", "TrainingRuntime", "ClusterTrainingRuntime"} <= set(generated["$defs"])
