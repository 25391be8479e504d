"""The jobset chart: its objects, and the facts it takes from the JobSet Go module pinned in
versions.toml ([jobset]), compared here with the module itself: the controller's RBAC
(config/components/rbac), its webhooks (config/components/webhook, with kustomize's patches),
the Configuration's fields and the CRD."""

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

MODULE = "sigs.k8s.io/jobset"
CONFIG_FILE = "controller_manager_config.yaml"
VWC = "jobset-validating-webhook-configuration"
MWC = "jobset-mutating-webhook-configuration"
CERT_DIR = "/tmp/k8s-webhook-server/serving-certs"


@pytest.fixture(scope="module")
def module(go: str) -> Path:
    """sigs.k8s.io/jobset at the pinned version, from the Go module cache."""
    versions = load_versions(ROOT)
    return build.Builder(versions, ROOT, go=go).module_download_dir(MODULE, versions.jobset)


def _container(docs: list[Doc]) -> Doc:
    containers: list[Doc] = one(docs, "Deployment")["spec"]["template"]["spec"]["containers"]
    assert [c["name"] for c in containers] == ["jobset-controller"]
    return containers[0]


def _configuration(docs: list[Doc]) -> Doc:
    data = one(docs, "ConfigMap")["data"]
    assert list(data) == [CONFIG_FILE]
    config: Doc = yaml.safe_load(data[CONFIG_FILE])
    return config


def test_defaults(jobset: Chart) -> None:
    docs = jobset.rendered()
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
    assert container["image"] == "registry.k8s.io/jobset/jobset:v0.12.0"
    assert container["args"] == [f"--config=/config/{CONFIG_FILE}"]
    mounts = {m["mountPath"]: m["name"] for m in container["volumeMounts"]}
    assert mounts == {"/config": "config", "/tmp": "tmp", CERT_DIR: "webhook-cert"}
    service = one(docs, "Service")
    assert [p["name"] for p in service["spec"]["ports"]] == ["webhook"]
    assert {r["metadata"]["name"] for r in of_kind(docs, "ClusterRole")} == {"jobset"}


def test_the_configuration_names_the_charts_objects(jobset: Chart) -> None:
    docs = jobset.rendered()
    config = _configuration(docs)
    assert config["apiVersion"] == "config.jobset.x-k8s.io/v1alpha1"
    assert config["kind"] == "Configuration"
    certs = config["internalCertManagement"]
    assert certs == {
        "enable": True,
        "webhookServiceName": one(docs, "Service")["metadata"]["name"],
        "webhookSecretName": one(docs, "Secret")["metadata"]["name"],
    }
    assert config["webhook"] == {"port": 9443}
    assert config["metrics"] == {"bindAddress": "0"}  # off: no token or access reviews needed
    assert config["leaderElection"] == {
        "leaderElect": True,
        "resourceName": "6d4f6a47.jobset.x-k8s.io",
    }
    leases = [rule for rule in one(docs, "Role")["rules"] if rule.get("resources") == ["leases"]]
    assert {"6d4f6a47.jobset.x-k8s.io"} == {n for r in leases for n in r.get("resourceNames", [])}
    # the pods roll when the Configuration changes
    other = jobset.rendered("--set", "kubeApiQps=50")
    annotation = "tfjob-kit.io/config-hash"

    def config_hash(rendered: list[Doc]) -> str:
        return str(
            one(rendered, "Deployment")["spec"]["template"]["metadata"]["annotations"][annotation]
        )

    assert config_hash(docs) != config_hash(other)


def test_every_configuration_field_is_one_the_controller_reads(jobset: Chart, module: Path) -> None:
    """The Configuration decodes strictly (serializer.EnableStrict): an unknown field stops the
    controller. Every field the chart writes, in every scenario, is a JSON field of the module's
    config API."""
    known = go_json_tags(module / "api" / "config" / "v1alpha1" / "configuration_types.go")
    known |= {"apiVersion", "kind", "leaderElect", "resourceName"}  # TypeMeta, component-base
    for args in SHARED.scenarios:
        config = _configuration(jobset.rendered(*args))
        features = set(config.get("featureGates") or {})
        assert nested_keys(config) - features <= known, (
            args,
            nested_keys(config) - features - known,
        )


def _upstream_rules(module: Path, name: str) -> list[Doc]:
    path = module / "config" / "components" / "rbac" / name
    (role,) = [d for d in yaml.safe_load_all(path.read_text(encoding="utf-8")) if d]
    rules: list[Doc] = role["rules"]
    return rules


def test_rbac_is_upstreams_with_the_webhook_configurations_named(
    jobset: Chart, module: Path
) -> None:
    """The ClusterRole grants exactly what the controller's kubebuilder markers ask for
    (config/components/rbac/role.yaml), except that get and update of the webhook
    configurations are limited to the controller's own two; with metrics, the two reviews of
    upstream's metrics role (auth_proxy_role.yaml)."""
    upstream = rule_triples(_upstream_rules(module, "role.yaml"))
    docs = jobset.rendered()
    rules = one(docs, "ClusterRole")["rules"]
    assert rule_triples(rules) == upstream
    for rule in rules:
        if "admissionregistration.k8s.io" in rule["apiGroups"] and "update" in rule["verbs"]:
            assert rule["resourceNames"] in ([MWC], [VWC]), rule
    with_metrics = one(jobset.rendered("--set", "metrics.enabled=true"), "ClusterRole")["rules"]
    reviews = rule_triples(_upstream_rules(module, "auth_proxy_role.yaml"))
    assert rule_triples(with_metrics) == upstream | reviews


def test_namespaced_rbac_is_the_secret_and_the_lease(jobset: Chart, module: Path) -> None:
    """Upstream's secrets role (manager_secrets_role.yaml) and leader election role, narrowed:
    the one Secret and the one Lease by name; no ConfigMaps (leader election uses a Lease)."""
    docs = jobset.rendered()
    ours = rule_triples(one(docs, "Role")["rules"])
    upstream = rule_triples(_upstream_rules(module, "manager_secrets_role.yaml"))
    upstream |= rule_triples(_upstream_rules(module, "leader_election_role.yaml"))
    assert ours <= upstream, ours - upstream
    named = {
        tuple(rule["resourceNames"])
        for rule in one(docs, "Role")["rules"]
        if "get" in rule["verbs"]
    }
    assert named == {("jobset-webhook-cert",), ("6d4f6a47.jobset.x-k8s.io",)}


def _upstream_webhooks(module: Path) -> dict[str, Doc]:
    """config/components/webhook/manifests.yaml with kustomize's patches applied (each patch
    replaces one webhook), by webhook name."""
    folder = module / "config" / "components" / "webhook"
    configs = {
        doc["kind"]: doc
        for doc in yaml.safe_load_all((folder / "manifests.yaml").read_text(encoding="utf-8"))
        if doc
    }
    patches = {
        "MutatingWebhookConfiguration": folder / "patches" / "mutating-patch.yaml",
        "ValidatingWebhookConfiguration": folder / "patches" / "validating-patch.yaml",
    }
    for kind, path in patches.items():
        for op in yaml.safe_load(path.read_text(encoding="utf-8")):
            assert op["op"] == "replace", op
            index = int(re.fullmatch(r"/webhooks/(\d+)", op["path"])[1])  # type: ignore[index]
            configs[kind]["webhooks"][index] = op["value"]
    return {
        hook["name"]: {**hook, "kind": kind}
        for kind, config in configs.items()
        for hook in config["webhooks"]
    }


def test_webhooks_are_upstreams(jobset: Chart, module: Path) -> None:
    """Same webhooks as the module's (names, paths, rules, the pods' object selector, failure
    policy, side effects), in the two configurations whose names the rotator injects into,
    served by the chart's Service."""
    upstream = _upstream_webhooks(module)
    docs = jobset.rendered()
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


def test_metrics_are_served_only_when_asked(jobset: Chart) -> None:
    docs = jobset.rendered("--set", "metrics.enabled=true")
    assert _configuration(docs)["metrics"] == {"bindAddress": ":8443"}
    assert [p["name"] for p in one(docs, "Service")["spec"]["ports"]] == ["webhook", "metrics"]
    ports = {p["name"] for p in _container(docs)["ports"]}
    assert ports == {"health", "webhook", "metrics"}


def test_a_mirror_and_a_digest(jobset: Chart) -> None:
    docs = jobset.rendered("-f", str(jobset.path / "ci" / "mirror-values.yaml"))
    assert _container(docs)["image"] == (
        "mirror.example.com:5000/jobset/jobset/jobset@sha256:"
        "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
    )
    spec = one(docs, "Deployment")["spec"]["template"]["spec"]
    assert spec["imagePullSecrets"] == [{"name": "mirror-pull"}]


def test_the_crd_file_is_the_modules(go: str) -> None:
    result = subprocess.run(
        [sys.executable, str(ROOT / "tools" / "gen_upstream_crds.py"), "--check", "jobset"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    text = (jobset_path := ROOT / "charts" / "jobset" / "crds" / "jobset-crds.yaml").read_text()
    (crd,) = [d for d in yaml.safe_load_all(text) if d]
    assert crd["metadata"]["name"] == "jobsets.jobset.x-k8s.io", jobset_path
    assert [v["name"] for v in crd["spec"]["versions"]] == ["v1alpha2"]


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
def test_validation_fails(jobset: Chart, args: tuple[str, ...], message: str) -> None:
    result = jobset.template(*args)
    assert result.returncode != 0
    assert message in result.stderr, result.stderr


def test_the_configuration_is_json_whatever_the_values(jobset: Chart) -> None:
    """The Configuration is written as JSON, so a value cannot add a field or change a type."""
    docs = jobset.rendered("--set-json", 'featureGates={"A": true}')
    text = one(docs, "ConfigMap")["data"][CONFIG_FILE]
    assert json.loads(text)["featureGates"] == {"A": True}


# --- what the checks every chart gets (test_every_chart.py) need to know of this one -------

# The defaults and each ci/ file.
SCENARIOS = scenarios("jobset")

SHARED = Shared("jobset", "jobset", SCENARIOS)
