"""The training-operator chart: lint, rendered objects, RBAC, Pod Security, the webhook and the
generated CRD."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tfjob_kit import images
from tfjob_kit.cluster import build
from tfjob_kit.versions import load_versions

from ._chart import (
    CHARTS,
    ROOT,
    Chart,
    Doc,
    Shared,
    one,
    rule_triples,
    scenarios,
    sets,
)

PATH = CHARTS / "training-operator"
RELEASE_NAMESPACE = "training-operator"
CERT_DIR = "/tmp/k8s-webhook-server/serving-certs"
VWC_NAME = "validator.training-operator.kubeflow.org"


def _operator_container(docs: list[Doc]) -> Doc:
    containers: list[Doc] = one(docs, "Deployment")["spec"]["template"]["spec"]["containers"]
    assert [c["name"] for c in containers] == ["training-operator"]
    return containers[0]


def test_operator_defaults(operator: Chart) -> None:
    docs = operator.rendered()
    kinds = sorted(d["kind"] for d in docs)
    assert kinds == sorted(
        [
            "ServiceAccount",
            "Secret",
            "ClusterRole",
            "ClusterRoleBinding",
            "Role",
            "RoleBinding",
            "Service",
            "Deployment",
            "ValidatingWebhookConfiguration",
        ]
    )
    container = _operator_container(docs)
    assert container["image"] == "ghcr.io/kubeflow/training-v1/training-operator:v1-93c5489"
    assert container["command"] == ["/manager"]
    service = one(docs, "Service")
    secret = one(docs, "Secret")
    assert container["args"] == [
        "--enable-scheme=tfjob",
        "--webhook-server-port=9443",
        f"--webhook-service-name={service['metadata']['name']}",
        f"--webhook-secret-name={secret['metadata']['name']}",
        "--metrics-bind-address=:8080",
        "--health-probe-bind-address=:8081",
        "--leader-elect",
        "--controller-threads=1",
        "--kube-api-qps=20",
        "--kube-api-burst=30",
    ]
    # A release named like the chart gets the upstream names (what the local cluster uses).
    assert service["metadata"]["name"] == "training-operator"
    assert secret["metadata"]["name"] == "training-operator-webhook-cert"
    env = {e["name"]: e for e in container["env"]}
    assert env["MY_POD_NAMESPACE"]["valueFrom"]["fieldRef"]["fieldPath"] == "metadata.namespace"
    probes = (container["livenessProbe"]["httpGet"], container["readinessProbe"]["httpGet"])
    ports = {p["name"]: p["containerPort"] for p in container["ports"]}
    assert [(p["path"], ports[p["port"]]) for p in probes] == [
        ("/healthz", 8081),
        ("/readyz", 8081),
    ]
    assert ports["webhook"] == 9443 and ports["metrics"] == 8080


def test_operator_version_matches_versions_toml(operator: Chart) -> None:
    meta = yaml.safe_load((operator.path / "Chart.yaml").read_text())
    assert meta["appVersion"] == load_versions(ROOT).training_operator


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        ((), None),
        (("--set", "gangScheduler=volcano"), "--gang-scheduler-name=volcano"),
        (
            ("--set", "gangScheduler=scheduler-plugins-scheduler"),
            "--gang-scheduler-name=scheduler-plugins-scheduler",
        ),
    ],
)
def test_operator_gang_scheduler_flag(
    operator: Chart, args: tuple[str, ...], expected: str | None
) -> None:
    flags = [
        a
        for a in _operator_container(operator.rendered(*args))["args"]
        if a.startswith("--gang-scheduler-name")
    ]
    assert flags == ([expected] if expected else [])


def test_operator_optional_flags(operator: Chart) -> None:
    args = _operator_container(
        operator.rendered(
            "--set",
            "leaderElect=false",
            "--set",
            "watchNamespace=team-a",
            "--set",
            "controllerThreads=4",
            "--set",
            "extraArgs={--zap-log-level=debug}",
        )
    )["args"]
    assert "--leader-elect" not in args
    assert "--namespace=team-a" in args
    assert "--controller-threads=4" in args
    assert args[-1] == "--zap-log-level=debug"


def test_operator_tuning_flags_follow_the_values(operator: Chart) -> None:
    args = _operator_container(
        operator.render(*sets("controllerThreads=8", "kubeApiQps=200", "kubeApiBurst=400"))
    )["args"]
    tuning = [a for a in args if a.startswith(("--controller-threads", "--kube-api-"))]
    assert tuning == ["--controller-threads=8", "--kube-api-qps=200", "--kube-api-burst=400"]


def test_operator_tuning_flags_follow_the_role_variables(operator: Chart, tmp_path: Path) -> None:
    """The role's tuning variables reach the flags through its chart values
    (training_operator_chart_values), numbers given as strings included (extra vars)."""
    values = images.role_deployment(
        "training_operator",
        {
            "training_operator_controller_threads": 4,
            "training_operator_kube_api_qps": "150",
            "training_operator_kube_api_burst": 300,
        },
        {},
        ROOT,
    )
    assert values is not None
    composed = tmp_path / "values.json"
    composed.write_text(json.dumps(values.values))
    args = _operator_container(operator.render("-f", str(composed)))["args"]
    tuning = [a for a in args if a.startswith(("--controller-threads", "--kube-api-"))]
    assert tuning == ["--controller-threads=4", "--kube-api-qps=150", "--kube-api-burst=300"]


def test_operator_tuning_flags_are_the_operators_own(operator: Chart, go: str) -> None:
    """The chart's defaults are the operator's: the flags' defaults in the pinned release's
    source (cmd/training-operator.v1/main.go, through the Go module cache)."""
    versions = load_versions(ROOT)
    module = build.Builder(versions, ROOT, go=go).module_download_dir(
        "github.com/kubeflow/training-operator", versions.training_operator
    )
    text = (module / "cmd" / "training-operator.v1" / "main.go").read_text()
    values = yaml.safe_load((operator.path / "values.yaml").read_text())
    for flag, key in (
        ("controller-threads", "controllerThreads"),
        ("kube-api-qps", "kubeApiQps"),
        ("kube-api-burst", "kubeApiBurst"),
    ):
        found = re.search(rf'IntVar\(&\w+, "{flag}", (\d+),', text)
        assert found, f"--{flag} is not an int flag of the operator"
        assert values[key] == int(found[1]), key


def _go_int_flags(go: str, version: str) -> set[str]:
    """The int and string flags upstream's cmd/training-operator.v1 declares at ``version``
    (from the Go module cache)."""
    module = build.Builder(load_versions(ROOT), ROOT, go=go).module_download_dir(
        "github.com/kubeflow/training-operator", version
    )
    text = (module / "cmd" / "training-operator.v1" / "main.go").read_text()
    return set(re.findall(r'flag\.\w+\(&[\w.]+, "([a-z-]+)"', text))


def test_operator_flags_follow_the_operator_version(operator: Chart, go: str) -> None:
    """Every flag the chart passes is one the release it runs declares: the pinned release by
    default, the upgrade-from release (versions.toml) with operatorVersion, which leaves out
    what that release lacks."""
    versions = load_versions(ROOT)
    old = versions.training_operator_upgrade_from
    for version, extra in ((versions.training_operator, ()), (old, sets(f"operatorVersion={old}"))):
        docs = operator.render(*extra)
        args = _operator_container(docs)["args"]
        passed = {a.split("=", 1)[0].lstrip("-") for a in args}
        assert passed <= _go_int_flags(go, version), (version, passed - _go_int_flags(go, version))
        labels = one(docs, "Deployment")["metadata"]["labels"]
        assert labels["app.kubernetes.io/version"] == version
    old_args = _operator_container(operator.render(*sets(f"operatorVersion={old}")))["args"]
    assert not [a for a in old_args if a.startswith("--kube-api-")]
    assert "--controller-threads=1" in old_args


def test_operator_installs_only_the_tfjob_scheme_and_crd(operator: Chart) -> None:
    """Other operators' kubeflow.org kinds (mpijobs of mpi-operator v2, pytorchjobs, ...) are
    never the chart's: one scheme enabled, one CRD shipped, no role on other kinds' objects."""
    for docs in (operator.rendered(), operator.render(*sets("operatorVersion=v1.8.1"))):
        args = _operator_container(docs)["args"]
        assert [a for a in args if a.startswith("--enable-scheme")] == ["--enable-scheme=tfjob"]
        for kind in ("ClusterRole", "Role"):
            for rule in one(docs, kind)["rules"]:
                if "kubeflow.org" in rule.get("apiGroups", []):
                    kinds = {r.split("/")[0] for r in rule["resources"]}
                    assert kinds <= {"tfjobs"}, rule
    assert [p.name for p in (operator.path / "crds").iterdir()] == ["tfjobs.kubeflow.org.yaml"]


def test_operator_webhook_certificates(operator: Chart) -> None:
    docs = operator.rendered()
    secret = one(docs, "Secret")
    assert secret["type"] == "Opaque"
    assert "data" not in secret and "stringData" not in secret
    assert "helm.sh/resource-policy" not in (secret["metadata"].get("annotations") or {})
    pod = one(docs, "Deployment")["spec"]["template"]["spec"]
    volumes = {v["name"]: v for v in pod["volumes"]}
    mounts = {m["mountPath"]: m for m in pod["containers"][0]["volumeMounts"]}
    cert_volume = volumes[mounts[CERT_DIR]["name"]]
    assert cert_volume["secret"]["secretName"] == secret["metadata"]["name"]
    assert mounts[CERT_DIR].get("readOnly") is True
    assert "emptyDir" in volumes[mounts["/tmp"]["name"]]


def test_operator_webhook_configuration(operator: Chart) -> None:
    docs = operator.rendered()
    service = one(docs, "Service")
    assert {(p["name"], p["port"], p["targetPort"]) for p in service["spec"]["ports"]} == {
        ("metrics", 8080, "metrics"),
        ("webhook", 443, "webhook"),
    }
    vwc = one(docs, "ValidatingWebhookConfiguration")
    assert vwc["metadata"]["name"] == VWC_NAME
    [webhook] = vwc["webhooks"]
    assert webhook["failurePolicy"] == "Fail"
    assert webhook["sideEffects"] == "None"
    assert webhook["admissionReviewVersions"] == ["v1"]
    assert "caBundle" not in webhook["clientConfig"]  # owned by the operator's rotator
    assert webhook["clientConfig"]["service"] == {
        "name": service["metadata"]["name"],
        "namespace": RELEASE_NAMESPACE,
        "path": "/validate-kubeflow-org-v1-tfjob",
        "port": 443,
    }
    assert webhook["rules"] == [
        {
            "apiGroups": ["kubeflow.org"],
            "apiVersions": ["v1"],
            "operations": ["CREATE", "UPDATE"],
            "resources": ["tfjobs"],
            "scope": "Namespaced",
        }
    ]


def test_operator_webhook_disabled(operator: Chart) -> None:
    docs = operator.rendered("--set", "webhook.enabled=false")
    assert not [d for d in docs if d["kind"] == "ValidatingWebhookConfiguration"]
    service = one(docs, "Service")
    assert [p["port"] for p in service["spec"]["ports"]] == [8080]
    # The operator still runs its certificate rotator and needs the Secret and its flags.
    assert one(docs, "Secret")
    args = _operator_container(docs)["args"]
    assert f"--webhook-service-name={service['metadata']['name']}" in args


def _rules(docs: list[Doc], kind: str) -> list[Doc]:
    rules: list[Doc] = one(docs, kind)["rules"]
    return rules


def test_operator_rbac_least_privilege(operator: Chart) -> None:
    docs = operator.rendered()
    cluster_rules = _rules(docs, "ClusterRole")  # no wildcard: test_rbac_is_least_privilege
    grants = rule_triples(cluster_rules)
    kubeflow = {resource for group, resource, _ in grants if group == "kubeflow.org"}
    assert kubeflow == {"tfjobs", "tfjobs/status", "tfjobs/finalizers"}
    assert not {r for g, r, _ in grants if g == "" and r == "secrets"}, (
        "Secrets are reached through the namespaced Role only"
    )
    for needed in [
        ("", "pods", "create"),
        ("", "services", "create"),
        ("", "events", "create"),
        ("kubeflow.org", "tfjobs/status", "update"),
        ("scheduling.volcano.sh", "podgroups", "watch"),
        ("scheduling.x-k8s.io", "podgroups", "watch"),
        ("admissionregistration.k8s.io", "validatingwebhookconfigurations", "update"),
    ]:
        assert needed in grants, needed
    named = [r for r in cluster_rules if r.get("resourceNames")]
    assert named == [
        {
            "apiGroups": ["admissionregistration.k8s.io"],
            "resources": ["validatingwebhookconfigurations"],
            "resourceNames": [VWC_NAME],
            "verbs": ["get", "update"],
        }
    ]
    role_grants = rule_triples(_rules(docs, "Role"))
    assert ("coordination.k8s.io", "leases", "update") in role_grants
    assert ("", "events", "create") in role_grants
    assert {("", "secrets", v) for v in ("get", "list", "watch", "update")} <= role_grants


def test_operator_clusterrole_within_upstream(operator: Chart) -> None:
    """Nothing beyond what the upstream operator's own role grants (copied by the build)."""
    upstream_path = build.operator_clusterrole_path(load_versions(ROOT))
    upstream = [
        d
        for d in yaml.safe_load_all(upstream_path.read_text())
        if d and d.get("kind") == "ClusterRole"
    ]
    allowed = rule_triples([r for d in upstream for r in d["rules"]])
    extra = rule_triples(_rules(operator.rendered(), "ClusterRole")) - allowed
    assert not extra, f"beyond the upstream role: {sorted(extra)}"


def test_operator_bindings(operator: Chart) -> None:
    docs = operator.rendered()
    account = one(docs, "ServiceAccount")["metadata"]["name"]
    for kind, role_kind in (("ClusterRoleBinding", "ClusterRole"), ("RoleBinding", "Role")):
        binding = one(docs, kind)
        assert binding["roleRef"] == {
            "apiGroup": "rbac.authorization.k8s.io",
            "kind": role_kind,
            "name": one(docs, role_kind)["metadata"]["name"],
        }
        assert binding["subjects"] == [
            {"kind": "ServiceAccount", "name": account, "namespace": RELEASE_NAMESPACE}
        ]
    assert one(docs, "Role")["metadata"]["namespace"] == RELEASE_NAMESPACE
    assert one(docs, "Deployment")["spec"]["template"]["spec"]["serviceAccountName"] == account


def test_operator_crd_is_generated_and_current(operator: Chart) -> None:
    result = subprocess.run(
        [sys.executable, str(ROOT / "tools" / "gen_chart_crds.py"), "--check"],
        capture_output=True,
        text=True,
        check=False,
        cwd=ROOT,
    )
    assert result.returncode == 0, result.stderr
    crd_file = operator.path / "crds" / "tfjobs.kubeflow.org.yaml"
    assert crd_file.read_text().startswith(
        "# generated by tools/gen_chart_crds.py from schemas/, do not edit\n"
    )
    assert [p.name for p in (operator.path / "crds").iterdir()] == [crd_file.name]


def _defaults(node: object, path: str = "") -> dict[str, object]:
    """JSON path -> default, for every property of a CRD schema that has one."""
    found: dict[str, object] = {}
    if isinstance(node, dict):
        for name, prop in (node.get("properties") or {}).items():
            if isinstance(prop, dict) and "default" in prop:
                found[f"{path}.{name}"] = prop["default"]
            found.update(_defaults(prop, f"{path}.{name}"))
        found.update(_defaults(node.get("items"), f"{path}[]"))
        found.update(_defaults(node.get("additionalProperties"), f"{path}.*"))
    return found


def test_operator_crd_defaults_are_upstreams(operator: Chart, go: str) -> None:
    """The API server fills the same defaults into a TFJob as with upstream's CRD of the pinned
    release (its manifests/base/crds): the pod template's `+default=` markers (a port's
    `protocol: TCP`, a secret reference's `name: ""`) and runPolicy.suspend. Kueue's Workload
    CRD defaults the same fields, and a job whose stored pod template lacked them never
    matches its Workload (Kueue deletes and re-creates it for ever)."""
    versions = load_versions(ROOT)
    module = build.Builder(versions, ROOT, go=go).module_download_dir(
        "github.com/kubeflow/training-operator", versions.training_operator
    )
    upstream = yaml.safe_load(
        (module / "manifests" / "base" / "crds" / "kubeflow.org_tfjobs.yaml").read_text()
    )
    ours = yaml.safe_load((operator.path / "crds" / "tfjobs.kubeflow.org.yaml").read_text())

    def schema_of(definition: dict[str, object]) -> object:
        return definition["spec"]["versions"][0]["schema"]["openAPIV3Schema"]  # type: ignore[index]

    theirs = _defaults(schema_of(upstream))
    assert ".spec.tfReplicaSpecs.*.template.spec.containers[].ports[].protocol" in theirs
    assert _defaults(schema_of(ours)) == theirs


OPERATOR_FAILURES = [
    (
        ("--set", "replicaCount=2", "--set", "leaderElect=false"),
        "replicaCount is 2 but leaderElect is false",
    ),
    (("--set", "serviceAccount.create=false"), "serviceAccount.name is empty"),
    (("--set", "gangScheduler=kube-batch"), "kube-batch is archived"),
    (("--set", "gangScheduler=default-scheduler"), "does not gang-schedule"),
    (("--set", "image.tag="), "image.tag and image.digest are both empty"),
    (("--set", "kubeApiQps=0"), "kubeApiQps"),
    (("--set", "kubeApiQps=-5"), "kubeApiQps"),
    (("--set", "kubeApiBurst=0"), "kubeApiBurst"),
    (("--set", "kubeApiQps=1.5"), "kubeApiQps"),
    (("--set", "controllerThreads=0"), "controllerThreads"),
    (("--set", "operatorVersion=latest"), "operatorVersion"),
    (
        ("--set", "extraArgs={--kube-api-qps=100}"),
        "sets --kube-api-qps, which the chart sets itself",
    ),
    (
        ("--set", "extraArgs={--gang-scheduler-name=volcano}"),
        "sets --gang-scheduler-name, which the chart sets itself",
    ),
]


@pytest.mark.parametrize(
    ("args", "message"), OPERATOR_FAILURES, ids=[m for _, m in OPERATOR_FAILURES]
)
def test_operator_validation_fails(operator: Chart, args: tuple[str, ...], message: str) -> None:
    result = operator.template(*args)
    assert result.returncode != 0
    assert message in result.stderr


# --- what the checks every chart gets (test_every_chart.py) need to know of this one -------

# The defaults, each ci/ file, and the values of the local cluster's bootstrap.
SCENARIOS = scenarios("training-operator", sets("webhook.enabled=false", "gangScheduler=volcano"))


SHARED = Shared("training-operator", "operator", SCENARIOS)
