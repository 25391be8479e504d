"""Helm charts training-operator and tfjob: lint, rendered objects, RBAC, Pod Security, the
generated CRD, and every TFJob the tfjob chart renders judged by tfjob-kit's own validator."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml

from tfjob_kit.cluster import build
from tfjob_kit.cluster.paths import load_versions
from tfjob_kit.findings import Severity
from tfjob_kit.validate import validate_text

ROOT = Path(__file__).resolve().parents[2]
OPERATOR = ROOT / "charts" / "training-operator"
TFJOB = ROOT / "charts" / "tfjob"
CHARTS = (OPERATOR, TFJOB)
RELEASE_NAMESPACE = "kubeflow"
CERT_DIR = "/tmp/k8s-webhook-server/serving-certs"
VWC_NAME = "validator.training-operator.kubeflow.org"
REQUIRED_SCENARIOS = {"ps-worker", "chief-gpu", "gang-volcano", "tensorboard-pvc"}

Manifest = dict[str, Any]


@cache
def _helm() -> str:
    # `make test` builds helm first (make cluster-build); a missing helm is a failure.
    return str(build.helm_path())


@cache
def _kube_version() -> str:
    # The helm binary built without its Kubernetes ldflags defaults to v1.20, below the charts'
    # kubeVersion: render against the pinned cluster version instead.
    return load_versions(ROOT).kubernetes


def _run_helm(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [_helm(), *args], capture_output=True, text=True, check=False, timeout=120
    )


def _template(chart: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return _run_helm(
        "template",
        chart.name,
        str(chart),
        "--namespace",
        RELEASE_NAMESPACE,
        "--kube-version",
        _kube_version(),
        *args,
    )


@cache
def _render_text(chart: Path, args: tuple[str, ...] = ()) -> str:
    result = _template(chart, *args)
    assert result.returncode == 0, result.stderr
    return result.stdout


def _render(chart: Path, *args: str) -> list[Manifest]:
    return [doc for doc in yaml.safe_load_all(_render_text(chart, args)) if doc]


def _only(docs: list[Manifest], kind: str) -> Manifest:
    found = [d for d in docs if d["kind"] == kind]
    assert len(found) == 1, f"expected one {kind}, found {len(found)}"
    return found[0]


def _scenarios(chart: Path) -> list[Path]:
    return sorted((chart / "ci").glob("*-values.yaml"))


def _value_sets() -> list[tuple[Path, tuple[str, ...]]]:
    sets: list[tuple[Path, tuple[str, ...]]] = []
    for chart in CHARTS:
        sets.append((chart, ()))
        sets.extend((chart, ("-f", str(path))) for path in _scenarios(chart))
    sets.append((OPERATOR, ("--set", "webhook.enabled=false", "--set", "gangScheduler=volcano")))
    return sets


def _value_set_id(value_set: tuple[Path, tuple[str, ...]]) -> str:
    chart, args = value_set
    return f"{chart.name}:{Path(args[1]).name if args and args[0] == '-f' else ' '.join(args)}"


VALUE_SETS = _value_sets()


# --------------------------------------------------------------------------- both charts


@pytest.mark.parametrize("chart", CHARTS, ids=lambda c: c.name)
def test_lint_strict(chart: Path) -> None:
    result = _run_helm("lint", "--strict", str(chart), "--kube-version", _kube_version())
    assert result.returncode == 0, result.stdout + result.stderr
    for scenario in _scenarios(chart):
        result = _run_helm(
            "lint", "--strict", str(chart), "-f", str(scenario), "--kube-version", _kube_version()
        )
        assert result.returncode == 0, f"{scenario.name}: {result.stdout}{result.stderr}"


@pytest.mark.parametrize("chart", CHARTS, ids=lambda c: c.name)
def test_chart_conventions(chart: Path) -> None:
    meta = yaml.safe_load((chart / "Chart.yaml").read_text())
    assert meta["apiVersion"] == "v2"
    assert meta["kubeVersion"] == ">=1.27.0-0"
    assert meta["version"] == "0.1.0"
    assert meta["appVersion"]
    values = (chart / "values.yaml").read_text().splitlines()
    assert values[0] == "# yaml-language-server: $schema=values.schema.json"
    schema = yaml.safe_load((chart / "values.schema.json").read_text())
    assert schema["$schema"] == "http://json-schema.org/draft-07/schema#"
    jsonschema.Draft7Validator.check_schema(schema)
    assert schema["additionalProperties"] is False
    helpers = (chart / "templates" / "_helpers.tpl").read_text()
    for helper in ("name", "fullname", "chart", "labels", "selectorLabels", "serviceAccountName"):
        assert f'define "{chart.name}.{helper}"' in helpers
    assert (chart / "templates" / "validation.yaml").is_file()
    assert (chart / "README.md").is_file()


def _undocumented_values(path: Path) -> list[str]:
    """Leaf keys of values.yaml with no comment above them or above one of their parents."""
    keys: list[tuple[int, str, bool]] = []  # (indent, key, comment right above)
    previous = ""
    for line in path.read_text().splitlines():
        stripped = line.strip()
        if stripped and not stripped.startswith(("#", "-")) and ":" in stripped:
            keys.append(
                (
                    len(line) - len(line.lstrip()),
                    stripped.split(":", 1)[0],
                    previous.startswith("#"),
                )
            )
        if stripped:
            previous = stripped
    missing: list[str] = []
    parents: list[tuple[int, bool]] = []
    for index, (indent, key, commented) in enumerate(keys):
        while parents and parents[-1][0] >= indent:
            parents.pop()
        documented = commented or any(c for _, c in parents)
        is_leaf = index + 1 == len(keys) or keys[index + 1][0] <= indent
        if is_leaf and not documented:
            missing.append(key)
        parents.append((indent, commented))
    return missing


@pytest.mark.parametrize("chart", CHARTS, ids=lambda c: c.name)
def test_every_value_has_a_comment(chart: Path) -> None:
    missing = _undocumented_values(chart / "values.yaml")
    assert not missing, f"{chart.name}/values.yaml keys without a comment: {missing}"


@pytest.mark.parametrize("value_set", VALUE_SETS, ids=_value_set_id)
def test_every_object_has_chart_labels(value_set: tuple[Path, tuple[str, ...]]) -> None:
    chart, args = value_set
    for doc in _render(chart, *args):
        labels = doc["metadata"].get("labels") or {}
        where = f"{doc['kind']}/{doc['metadata']['name']}"
        assert labels.get("app.kubernetes.io/name") == chart.name, where
        assert labels.get("helm.sh/chart") == f"{chart.name}-0.1.0", where
        assert labels.get("app.kubernetes.io/instance"), where


def _pod_specs(doc: Manifest) -> Iterator[tuple[str, Manifest]]:
    name = f"{doc['kind']}/{doc['metadata']['name']}"
    if doc["kind"] in ("Deployment", "StatefulSet", "DaemonSet", "Job"):
        yield name, doc["spec"]["template"]["spec"]
    elif doc["kind"] == "TFJob":
        for replica, spec in doc["spec"]["tfReplicaSpecs"].items():
            yield f"{name}[{replica}]", spec["template"]["spec"]


def _assert_restricted(where: str, pod: Manifest) -> None:
    """Pod Security Standard "restricted", as far as the rendered pod spec can show it."""
    pod_context = pod.get("securityContext") or {}
    assert not pod.get("hostNetwork") and not pod.get("hostPID") and not pod.get("hostIPC"), where
    for volume in pod.get("volumes") or []:
        assert "hostPath" not in volume, f"{where}: hostPath volume {volume['name']}"
    containers = [*(pod.get("initContainers") or []), *pod["containers"]]
    for container in containers:
        at = f"{where} container {container['name']}"
        context = container.get("securityContext") or {}
        assert context.get("allowPrivilegeEscalation") is False, at
        assert not context.get("privileged"), at
        assert "ALL" in ((context.get("capabilities") or {}).get("drop") or []), at
        assert not (context.get("capabilities") or {}).get("add"), at
        non_root = context.get("runAsNonRoot", pod_context.get("runAsNonRoot"))
        assert non_root is True, at
        assert context.get("runAsUser", pod_context.get("runAsUser")) != 0, at
        seccomp = context.get("seccompProfile") or pod_context.get("seccompProfile") or {}
        assert seccomp.get("type") in ("RuntimeDefault", "Localhost"), at
        assert context.get("readOnlyRootFilesystem") is True, at
        mounts = {m["mountPath"]: m["name"] for m in container.get("volumeMounts") or []}
        volumes = {v["name"]: v for v in pod.get("volumes") or []}
        assert "emptyDir" in volumes[mounts["/tmp"]], f"{at}: /tmp is not an emptyDir"
        assert container.get("resources", {}).get("limits"), f"{at}: no resource limits"


@pytest.mark.parametrize("value_set", VALUE_SETS, ids=_value_set_id)
def test_every_workload_is_restricted(value_set: tuple[Path, tuple[str, ...]]) -> None:
    chart, args = value_set
    workloads = [spec for doc in _render(chart, *args) for spec in _pod_specs(doc)]
    assert workloads
    for where, pod in workloads:
        _assert_restricted(where, pod)


# --------------------------------------------------------------------------- training-operator


def _operator_container(docs: list[Manifest]) -> Manifest:
    containers: list[Manifest] = _only(docs, "Deployment")["spec"]["template"]["spec"]["containers"]
    assert [c["name"] for c in containers] == ["training-operator"]
    return containers[0]


def test_operator_defaults() -> None:
    docs = _render(OPERATOR)
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
    service = _only(docs, "Service")
    secret = _only(docs, "Secret")
    assert container["args"] == [
        "--enable-scheme=tfjob",
        "--webhook-server-port=9443",
        f"--webhook-service-name={service['metadata']['name']}",
        f"--webhook-secret-name={secret['metadata']['name']}",
        "--metrics-bind-address=:8080",
        "--health-probe-bind-address=:8081",
        "--leader-elect",
        "--controller-threads=1",
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


def test_operator_version_matches_versions_toml() -> None:
    meta = yaml.safe_load((OPERATOR / "Chart.yaml").read_text())
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
def test_operator_gang_scheduler_flag(args: tuple[str, ...], expected: str | None) -> None:
    flags = [
        a
        for a in _operator_container(_render(OPERATOR, *args))["args"]
        if a.startswith("--gang-scheduler-name")
    ]
    assert flags == ([expected] if expected else [])


def test_operator_optional_flags() -> None:
    args = _operator_container(
        _render(
            OPERATOR,
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


def test_operator_webhook_certificates() -> None:
    docs = _render(OPERATOR)
    secret = _only(docs, "Secret")
    assert secret["type"] == "Opaque"
    assert "data" not in secret and "stringData" not in secret
    assert "helm.sh/resource-policy" not in (secret["metadata"].get("annotations") or {})
    pod = _only(docs, "Deployment")["spec"]["template"]["spec"]
    volumes = {v["name"]: v for v in pod["volumes"]}
    mounts = {m["mountPath"]: m for m in pod["containers"][0]["volumeMounts"]}
    cert_volume = volumes[mounts[CERT_DIR]["name"]]
    assert cert_volume["secret"]["secretName"] == secret["metadata"]["name"]
    assert mounts[CERT_DIR].get("readOnly") is True
    assert "emptyDir" in volumes[mounts["/tmp"]["name"]]


def test_operator_webhook_configuration() -> None:
    docs = _render(OPERATOR)
    service = _only(docs, "Service")
    assert {(p["name"], p["port"], p["targetPort"]) for p in service["spec"]["ports"]} == {
        ("metrics", 8080, "metrics"),
        ("webhook", 443, "webhook"),
    }
    vwc = _only(docs, "ValidatingWebhookConfiguration")
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


def test_operator_webhook_disabled() -> None:
    docs = _render(OPERATOR, "--set", "webhook.enabled=false")
    assert not [d for d in docs if d["kind"] == "ValidatingWebhookConfiguration"]
    service = _only(docs, "Service")
    assert [p["port"] for p in service["spec"]["ports"]] == [8080]
    # The operator still runs its certificate rotator and needs the Secret and its flags.
    assert _only(docs, "Secret")
    args = _operator_container(docs)["args"]
    assert f"--webhook-service-name={service['metadata']['name']}" in args


def _rules(docs: list[Manifest], kind: str) -> list[Manifest]:
    rules: list[Manifest] = _only(docs, kind)["rules"]
    return rules


def _grants(rules: list[Manifest]) -> set[tuple[str, str, str]]:
    return {
        (group, resource, verb)
        for rule in rules
        for group in rule["apiGroups"]
        for resource in rule["resources"]
        for verb in rule["verbs"]
    }


def test_operator_rbac_least_privilege() -> None:
    docs = _render(OPERATOR)
    cluster_rules = _rules(docs, "ClusterRole")
    for rule in [*cluster_rules, *_rules(docs, "Role")]:
        for field in ("apiGroups", "resources", "verbs"):
            assert "*" not in rule[field], rule
    grants = _grants(cluster_rules)
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
    role_grants = _grants(_rules(docs, "Role"))
    assert ("coordination.k8s.io", "leases", "update") in role_grants
    assert ("", "events", "create") in role_grants
    assert {("", "secrets", v) for v in ("get", "list", "watch", "update")} <= role_grants


def test_operator_clusterrole_within_upstream() -> None:
    """Nothing beyond what the upstream operator's own role grants (copied by the build)."""
    upstream_path = build.operator_clusterrole_path(load_versions(ROOT))
    upstream = [
        d
        for d in yaml.safe_load_all(upstream_path.read_text())
        if d and d.get("kind") == "ClusterRole"
    ]
    allowed = _grants([r for d in upstream for r in d["rules"]])
    extra = _grants(_rules(_render(OPERATOR), "ClusterRole")) - allowed
    assert not extra, f"beyond the upstream role: {sorted(extra)}"


def test_operator_bindings() -> None:
    docs = _render(OPERATOR)
    account = _only(docs, "ServiceAccount")["metadata"]["name"]
    for kind, role_kind in (("ClusterRoleBinding", "ClusterRole"), ("RoleBinding", "Role")):
        binding = _only(docs, kind)
        assert binding["roleRef"]["name"] != "cluster-admin"
        assert binding["roleRef"] == {
            "apiGroup": "rbac.authorization.k8s.io",
            "kind": role_kind,
            "name": _only(docs, role_kind)["metadata"]["name"],
        }
        assert binding["subjects"] == [
            {"kind": "ServiceAccount", "name": account, "namespace": RELEASE_NAMESPACE}
        ]
    assert _only(docs, "Role")["metadata"]["namespace"] == RELEASE_NAMESPACE
    assert _only(docs, "Deployment")["spec"]["template"]["spec"]["serviceAccountName"] == account


@pytest.mark.parametrize("value_set", VALUE_SETS, ids=_value_set_id)
def test_no_binding_to_cluster_admin(value_set: tuple[Path, tuple[str, ...]]) -> None:
    chart, args = value_set
    for doc in _render(chart, *args):
        if doc["kind"] in ("ClusterRoleBinding", "RoleBinding"):
            assert doc["roleRef"]["name"] not in ("cluster-admin", "admin", "edit"), doc


def test_operator_crd_is_generated_and_current() -> None:
    result = subprocess.run(
        [sys.executable, str(ROOT / "tools" / "gen_chart_crds.py"), "--check"],
        capture_output=True,
        text=True,
        check=False,
        cwd=ROOT,
    )
    assert result.returncode == 0, result.stderr
    crd_file = OPERATOR / "crds" / "tfjobs.kubeflow.org.yaml"
    assert crd_file.read_text().startswith(
        "# generated by tools/gen_chart_crds.py from schemas/, do not edit\n"
    )
    assert [p.name for p in (OPERATOR / "crds").iterdir()] == [crd_file.name]


OPERATOR_FAILURES = [
    (
        ("--set", "replicaCount=2", "--set", "leaderElect=false"),
        "replicaCount is 2 but leaderElect is false",
    ),
    (("--set", "serviceAccount.create=false"), "serviceAccount.name is empty"),
    (("--set", "gangScheduler=kube-batch"), "kube-batch is archived"),
    (("--set", "gangScheduler=default-scheduler"), "does not gang-schedule"),
    (("--set", "image.tag="), "image.tag and image.digest are both empty"),
    (
        ("--set", "extraArgs={--gang-scheduler-name=volcano}"),
        "sets --gang-scheduler-name, which the chart sets itself",
    ),
]


@pytest.mark.parametrize(
    ("args", "message"), OPERATOR_FAILURES, ids=[m for _, m in OPERATOR_FAILURES]
)
def test_operator_validation_fails(args: tuple[str, ...], message: str) -> None:
    result = _template(OPERATOR, *args)
    assert result.returncode != 0
    assert message in result.stderr


# --------------------------------------------------------------------------- tfjob


def test_tfjob_required_scenarios_exist() -> None:
    names = {p.name.removesuffix("-values.yaml") for p in _scenarios(TFJOB)}
    assert names >= REQUIRED_SCENARIOS


@pytest.mark.parametrize(
    "scenario", [None, *_scenarios(TFJOB)], ids=lambda p: "default" if p is None else p.name
)
def test_tfjob_renders_a_valid_tfjob(scenario: Path | None) -> None:
    args = ("-f", str(scenario)) if scenario else ()
    text = _render_text(TFJOB, args)
    report = validate_text(text, source=f"tfjob chart ({scenario.name if scenario else 'default'})")
    assert report.checked == 1
    errors = [f for f in report.findings if f.severity >= Severity.ERROR]
    assert not errors, [f.as_dict() for f in errors]
    job = _only(_render(TFJOB, *args), "TFJob")
    for replica, spec in job["spec"]["tfReplicaSpecs"].items():
        assert replica in ("Chief", "PS", "Worker", "Evaluator")
        assert spec["replicas"] > 0
        containers = spec["template"]["spec"]["containers"]
        assert containers[0]["name"] == "tensorflow"
        assert containers[0]["ports"] == [
            {"name": "tfjob-port", "containerPort": 2222, "protocol": "TCP"}
        ]
        assert "restartPolicy" not in spec["template"]["spec"]


def _replicas(args: tuple[str, ...]) -> dict[str, Manifest]:
    specs: dict[str, Manifest] = _only(_render(TFJOB, *args), "TFJob")["spec"]["tfReplicaSpecs"]
    return specs


def _scenario(name: str) -> tuple[str, ...]:
    return ("-f", str(TFJOB / "ci" / f"{name}-values.yaml"))


def test_tfjob_zero_replicas_are_absent() -> None:
    assert set(_replicas(())) == {"PS", "Worker"}
    assert set(_replicas(("--set", "ps.replicas=0"))) == {"Worker"}


def test_tfjob_chief_gpu() -> None:
    replicas = _replicas(_scenario("chief-gpu"))
    for replica, gpus in (("Chief", 1), ("Worker", 2), ("PS", None)):
        pod = replicas[replica]["template"]["spec"]
        limits = pod["containers"][0]["resources"]["limits"]
        assert limits.get("nvidia.com/gpu") == gpus, replica
        tolerations = [t["key"] for t in pod.get("tolerations") or []]
        assert ("nvidia.com/gpu" in tolerations) == bool(gpus), replica
        assert (pod.get("runtimeClassName") == "nvidia") == bool(gpus), replica


def test_tfjob_gang_volcano() -> None:
    job = _only(_render(TFJOB, *_scenario("gang-volcano")), "TFJob")
    assert job["spec"]["runPolicy"]["schedulingPolicy"] == {
        "minAvailable": 5,
        "queue": "default",
        "scheduleTimeoutSeconds": 600,
    }
    for spec in job["spec"]["tfReplicaSpecs"].values():
        pod = spec["template"]
        assert pod["spec"]["schedulerName"] == "volcano"
        assert "scheduling.k8s.io/group-name" not in (pod["metadata"].get("annotations") or {})
    plain = _only(_render(TFJOB), "TFJob")
    assert "schedulingPolicy" not in plain["spec"]["runPolicy"]


def test_tfjob_run_policy() -> None:
    policy = _only(_render(TFJOB, *_scenario("ps-worker")), "TFJob")["spec"]["runPolicy"]
    assert policy == {
        "cleanPodPolicy": "Running",
        "backoffLimit": 3,
        "activeDeadlineSeconds": 7200,
        "ttlSecondsAfterFinished": 86400,
    }


def test_tfjob_checkpoint_claim_and_tensorboard() -> None:
    docs = _render(TFJOB, *_scenario("tensorboard-pvc"))
    claim = _only(docs, "PersistentVolumeClaim")
    assert claim["spec"]["resources"]["requests"]["storage"] == "5Gi"
    assert claim["metadata"]["annotations"]["helm.sh/resource-policy"] == "keep"
    job = _only(docs, "TFJob")
    name = job["metadata"]["name"]

    def claim_mount(pod: Manifest) -> Manifest:
        volumes = {v["name"]: v for v in pod["volumes"]}
        mounts: list[Manifest] = [
            m
            for m in pod["containers"][0]["volumeMounts"]
            if "persistentVolumeClaim" in volumes[m["name"]]
        ]
        [mount] = mounts
        volume = volumes[mount["name"]]["persistentVolumeClaim"]
        assert volume["claimName"] == claim["metadata"]["name"]
        return mount

    assert set(job["spec"]["tfReplicaSpecs"]) == {"Chief", "PS", "Worker", "Evaluator"}
    for spec in job["spec"]["tfReplicaSpecs"].values():
        mount = claim_mount(spec["template"]["spec"])
        assert (mount["mountPath"], mount["subPath"]) == ("/tmp/tensorflow", name)
        assert not mount.get("readOnly")
    deployment = _only(docs, "Deployment")
    pod = deployment["spec"]["template"]["spec"]
    mount = claim_mount(pod)
    assert (mount["mountPath"], mount["subPath"], mount["readOnly"]) == (
        "/tmp/tensorflow",
        name,
        True,
    )
    assert "--logdir=/tmp/tensorflow/train" in pod["containers"][0]["args"]
    service = _only(docs, "Service")
    selector = service["spec"]["selector"]
    assert selector == deployment["spec"]["selector"]["matchLabels"]
    assert selector["app.kubernetes.io/component"] == "tensorboard"
    for spec in job["spec"]["tfReplicaSpecs"].values():
        labels = spec["template"]["metadata"]["labels"]
        assert not selector.items() <= labels.items(), "the Service would select training pods"


def test_tfjob_existing_claim() -> None:
    docs = _render(
        TFJOB,
        "--set",
        "storage.enabled=true",
        "--set",
        "storage.existingClaim=data",
        "--set",
        "storage.perJobSubPath=false",
    )
    assert not [d for d in docs if d["kind"] == "PersistentVolumeClaim"]
    for spec in _only(docs, "TFJob")["spec"]["tfReplicaSpecs"].values():
        pod = spec["template"]["spec"]
        assert {"name": "checkpoints", "persistentVolumeClaim": {"claimName": "data"}} in pod[
            "volumes"
        ]
        assert {"name": "checkpoints", "mountPath": "/tmp/tensorflow"} in pod["containers"][0][
            "volumeMounts"
        ]


TFJOB_FAILURES = [
    (
        ("--set", "ps.replicas=0", "--set", "worker.replicas=0"),
        "chief, ps, worker and evaluator replicas are all 0",
    ),
    (("--set", "worker.replicas=0"), "no Chief and no Worker"),
    (("--set", "ps.resources.limits.nvidia\\.com/gpu=1"), "GPUs on PS"),
    (("--set", "ps.resources.requests.nvidia\\.com/gpu=1"), "GPUs on PS"),
    (("--set", "worker.resources.limits.nvidia\\.com/gpu=1"), "set worker.gpus instead"),
    (("--set", "tensorboard.enabled=true"), "tensorboard.enabled needs storage.enabled"),
    (
        ("--set", "gang.enabled=true", "--set", "gang.minAvailable=4"),
        "gang.minAvailable 4 exceeds the 3 pods of the job",
    ),
    (("--set", "gang.queue=research"), "but gang.enabled is false"),
    (
        (
            "--set",
            "chief.replicas=1",
            "--set",
            "worker.replicas=0",
            "--set",
            "successPolicy=AllWorkers",
        ),
        "successPolicy AllWorkers needs workers",
    ),
    (("--set", "env[0].name=TF_CONFIG", "--set", "env[0].value={}"), "env sets TF_CONFIG"),
    (("--set", "name=Mnist_Job"), "is not a DNS-1035 label"),
    (("--set", f"name=j{'x' * 55}"), "shorten name to at most 54 characters"),
    (("--set", "restartPolicy=Always"), "restartPolicy Always on worker"),
    (
        ("--set", "chief.replicas=1", "--set", "chief.restartPolicy=Always"),
        "restartPolicy Always on chief",
    ),
    (("--set", "storage.enabled=true", "--set", "storage.size="), "needs storage.size"),
]


@pytest.mark.parametrize(
    ("args", "message"), TFJOB_FAILURES, ids=[f"{i}:{m}" for i, (_, m) in enumerate(TFJOB_FAILURES)]
)
def test_tfjob_validation_fails(args: tuple[str, ...], message: str) -> None:
    result = _template(TFJOB, *args)
    assert result.returncode != 0, f"rendered although {message!r} was expected"
    assert message in result.stderr, result.stderr


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--set", "chief.replicas=2"), "/chief/replicas"),
        (("--set", "runPolicy.cleanPodPolicy=none"), "/runPolicy/cleanPodPolicy"),
        (("--set", "ps.gpus=1"), "/ps"),
        (("--set", "restartPolicy=Sometimes"), "/restartPolicy"),
    ],
)
def test_tfjob_schema_rejects(args: tuple[str, ...], message: str) -> None:
    result = _template(TFJOB, *args)
    assert result.returncode != 0
    assert message in result.stderr, result.stderr
