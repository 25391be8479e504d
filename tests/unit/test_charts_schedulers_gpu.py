"""Helm charts volcano, kube-batch and nvidia-device-plugin: lint, render, policy checks.

Everything here runs `helm lint` / `helm template` (no cluster). helm comes from the tool cache
(`tfjob-kit cluster build`); the tests that need it are skipped when it has not been built.
"""

from __future__ import annotations

import base64
import json
import re
import shutil
import subprocess
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml

from tfjob_kit.cluster.paths import load_versions

ROOT = Path(__file__).resolve().parents[2]
CHARTS = ROOT / "charts"
VOLCANO = CHARTS / "volcano"
KUBE_BATCH = CHARTS / "kube-batch"
DEVICE_PLUGIN = CHARTS / "nvidia-device-plugin"

Doc = dict[str, Any]


KUBE = load_versions(ROOT).kubernetes.lstrip("v")  # the pinned cluster line, e.g. 1.34.4
LEGACY_KUBE = "1.21.0"  # the newest line kube-batch can run on
NAMESPACES = {VOLCANO: "volcano-system", KUBE_BATCH: "kube-system", DEVICE_PLUGIN: "gpu"}
KUBE_VERSIONS = {VOLCANO: KUBE, KUBE_BATCH: LEGACY_KUBE, DEVICE_PLUGIN: KUBE}


@pytest.fixture(scope="module")
def helm() -> str:
    from tfjob_kit.cluster.build import helm_path
    from tfjob_kit.cluster.paths import ClusterError

    try:
        return str(helm_path())
    except ClusterError as err:
        pytest.skip(f"helm is not built: {err}")


def _run_helm(helm: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([helm, *args], capture_output=True, text=True, check=False)


def _template_args(
    chart: Path, namespace: str | None, kube: str | None, values: Iterable[str]
) -> list[str]:
    args = [
        "template",
        "rel",
        str(chart),
        "--namespace",
        namespace or NAMESPACES[chart],
        "--kube-version",
        kube or KUBE_VERSIONS[chart],
    ]
    for value in values:  # "json:key=[...]" is passed with --set-json
        args += ["--set-json", value[5:]] if value.startswith("json:") else ["--set", value]
    return args


def render(
    helm: str,
    chart: Path,
    *values: str,
    namespace: str | None = None,
    kube: str | None = None,
    crds: bool = False,
) -> list[Doc]:
    """`helm template` of chart with --set values; the documents, in output order."""
    args = _template_args(chart, namespace, kube, values)
    if crds:
        args.append("--include-crds")
    result = _run_helm(helm, *args)
    assert result.returncode == 0, result.stderr
    return [doc for doc in yaml.safe_load_all(result.stdout) if doc]


def render_text(helm: str, chart: Path, *values: str) -> str:
    result = _run_helm(helm, *_template_args(chart, None, None, values))
    assert result.returncode == 0, result.stderr
    return result.stdout


def render_error(
    helm: str, chart: Path, *values: str, namespace: str | None = None, kube: str | None = None
) -> str:
    """Render that must fail; helm's error output."""
    result = _run_helm(helm, *_template_args(chart, namespace, kube, values))
    assert result.returncode != 0, f"rendered although it should fail:\n{result.stdout[:2000]}"
    return result.stderr


def of_kind(docs: Iterable[Doc], kind: str) -> list[Doc]:
    return [doc for doc in docs if doc["kind"] == kind]


def one(docs: Iterable[Doc], kind: str, name_part: str = "") -> Doc:
    found = [d for d in of_kind(docs, kind) if name_part in d["metadata"]["name"]]
    assert len(found) == 1, f"expected one {kind} *{name_part}*, got {len(found)}"
    return found[0]


def pod_specs(docs: Iterable[Doc]) -> Iterator[tuple[str, Doc]]:
    for doc in docs:
        if doc["kind"] in ("Deployment", "DaemonSet", "StatefulSet"):
            yield doc["metadata"]["name"], doc["spec"]["template"]["spec"]
        elif doc["kind"] == "Pod":
            yield doc["metadata"]["name"], doc["spec"]


# --- lint ---------------------------------------------------------------------------------------


LINT_CASES = [
    (chart, values_file)
    for chart in (VOLCANO, KUBE_BATCH, DEVICE_PLUGIN)
    for values_file in [None, *sorted((chart / "ci").glob("*.yaml"))]
]


@pytest.mark.parametrize(
    ("chart", "values_file"),
    LINT_CASES,
    ids=[f"{c.name}-{f.stem if f else 'defaults'}" for c, f in LINT_CASES],
)
def test_helm_lint_strict(helm: str, chart: Path, values_file: Path | None) -> None:
    """`helm lint --strict` with the defaults and with each ci/*-values.yaml scenario."""
    extra = ["--values", str(values_file)] if values_file else []
    result = _run_helm(
        helm,
        "lint",
        "--strict",
        str(chart),
        "--namespace",
        NAMESPACES[chart],
        "--kube-version",
        KUBE_VERSIONS[chart],
        *extra,
    )
    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    assert "0 chart(s) failed" in output
    assert "[WARNING]" not in output and "[ERROR]" not in output, output
    # helm lint does not treat `fail` as fatal; it logs it. None may fire here.
    assert "Fail:" not in output, output


def _mapping_key_lines(node: yaml.Node) -> Iterator[int]:
    """0-based lines of the keys reachable from the root through mappings only (list items are
    data, e.g. a plugin list, and need no comment of their own)."""
    if isinstance(node, yaml.MappingNode):
        for key, value in node.value:
            yield key.start_mark.line
            yield from _mapping_key_lines(value)


@pytest.mark.parametrize("chart", [VOLCANO, KUBE_BATCH, DEVICE_PLUGIN], ids=lambda c: c.name)
def test_values_files_follow_the_conventions(chart: Path) -> None:
    text = (chart / "values.yaml").read_text(encoding="utf-8")
    lines = text.splitlines()
    assert lines[0] == "# yaml-language-server: $schema=values.schema.json"
    root = yaml.compose(text)
    assert root is not None
    for line in _mapping_key_lines(root):
        above = lines[line - 1].strip()
        assert above.startswith("#"), f"{chart.name}/values.yaml:{line + 1} has no comment above"
    schema = (chart / "values.schema.json").read_text(encoding="utf-8")
    assert '"http://json-schema.org/draft-07/schema#"' in schema
    chart_yaml = yaml.safe_load((chart / "Chart.yaml").read_text(encoding="utf-8"))
    assert chart_yaml["apiVersion"] == "v2" and chart_yaml["version"] == "0.1.0"
    assert chart_yaml["kubeVersion"] and chart_yaml["appVersion"]
    assert (chart / "templates" / "validation.yaml").is_file()
    assert (chart / "README.md").is_file()


# --- volcano ------------------------------------------------------------------------------------

WEBHOOK_KINDS = ("MutatingWebhookConfiguration", "ValidatingWebhookConfiguration")


def test_volcano_default_render_has_every_component(helm: str) -> None:
    docs = render(helm, VOLCANO)
    deployments = {d["metadata"]["name"] for d in of_kind(docs, "Deployment")}
    assert deployments == {
        "rel-volcano-scheduler",
        "rel-volcano-controllers",
        "rel-volcano-admission",
    }
    images = {c["image"] for _, spec in pod_specs(docs) for c in spec["containers"]}
    assert images == {
        f"docker.io/volcanosh/{name}:v1.14.1"
        for name in ("vc-scheduler", "vc-controller-manager", "vc-webhook-manager")
    }
    config = yaml.safe_load(one(docs, "ConfigMap", "scheduler")["data"]["volcano-scheduler.conf"])
    assert config["actions"] == "enqueue, allocate, backfill"
    plugins = {p["name"] for tier in config["tiers"] for p in tier["plugins"]}
    assert {
        "gang",
        "priority",
        "conformance",
        "drf",
        "predicates",
        "proportion",
        "nodeorder",
        "binpack",
    } <= plugins
    scheduler = one(docs, "Deployment", "scheduler")["spec"]["template"]["spec"]
    args = scheduler["containers"][0]["args"]
    assert "--scheduler-conf=/etc/volcano/volcano-scheduler.conf" in args
    assert "--leader-elect=true" in args and "-v=3" in args


@pytest.mark.parametrize("values", [[], ["scheduler.leaderElect=false", "scheduler.metrics=false"]])
def test_volcano_arguments_are_accepted_by_the_pinned_binaries(
    helm: str, values: list[str]
) -> None:
    """The chart's command lines parse with the vc-scheduler / vc-controller-manager built from
    versions.toml (`--version` exits right after flag parsing; an unknown flag exits 2)."""
    from tfjob_kit.cluster.build import binary
    from tfjob_kit.cluster.paths import ClusterError

    for deployment in of_kind(render(helm, VOLCANO, *values), "Deployment"):
        container = deployment["spec"]["template"]["spec"]["containers"][0]
        if container["name"] == "vc-webhook-manager":
            continue  # not built locally (the local cluster runs no webhook)
        try:
            executable = binary(container["name"], "volcano")
        except ClusterError as err:
            pytest.skip(f"Volcano is not built: {err}")
        result = subprocess.run(
            [str(executable), *container["args"], "--version"],
            capture_output=True,
            text=True,
            check=False,
            timeout=60,
        )
        assert result.returncode == 0, result.stderr[-2000:]


def test_volcano_leader_election_and_log_level_are_values(helm: str) -> None:
    docs = render(helm, VOLCANO, "scheduler.leaderElect=false", "controllers.logLevel=2")
    scheduler = one(docs, "Deployment", "scheduler")["spec"]["template"]["spec"]
    assert "--leader-elect=false" in scheduler["containers"][0]["args"]
    controllers = one(docs, "Deployment", "controllers")["spec"]["template"]["spec"]
    assert "-v=2" in controllers["containers"][0]["args"]
    # Without leader election the scheduler gets no Lease permissions at all.
    roles = [r["metadata"]["name"] for r in of_kind(docs, "Role")]
    assert roles == ["rel-volcano-controllers-leader-election"]


def test_volcano_webhooks_only_with_admission_and_with_chart_labels(helm: str) -> None:
    docs = render(helm, VOLCANO)
    hooks = [d for d in docs if d["kind"] in WEBHOOK_KINDS]
    names = {d["metadata"]["name"] for d in hooks}
    # vc-webhook-manager looks the configurations up by these fixed names.
    assert names == {
        "volcano-admission-service-jobs-mutate",
        "volcano-admission-service-jobs-validate",
        "volcano-admission-service-podgroups-validate",
        "volcano-admission-service-queues-mutate",
        "volcano-admission-service-queues-validate",
        "volcano-admission-service-hypernodes-validate",
    }
    secret = one(docs, "Secret", "admission-tls")
    for hook in hooks:
        labels = hook["metadata"]["labels"]
        assert labels["helm.sh/chart"] == "volcano-0.1.0"
        assert labels["app.kubernetes.io/managed-by"] == "Helm"
        assert labels["app.kubernetes.io/instance"] == "rel"
        assert labels["app.kubernetes.io/name"] == "volcano"
        for webhook in hook["webhooks"]:
            assert webhook["failurePolicy"] == "Fail"
            assert webhook["clientConfig"]["caBundle"] == secret["data"]["ca.crt"]
            assert webhook["clientConfig"]["service"]["name"] == "rel-volcano-admission"
            excluded = webhook["namespaceSelector"]["matchExpressions"][0]["values"]
            assert {"volcano-system", "kube-system"} <= set(excluded)
            if "queues" in hook["metadata"]["name"]:
                assert webhook["objectSelector"]["matchExpressions"] == [
                    {"key": "volcano.tfjob-kit.io/chart-managed-queue", "operator": "DoesNotExist"}
                ]

    ignore = render(helm, VOLCANO, "admission.failurePolicy=Ignore")
    assert {
        w["failurePolicy"] for d in ignore if d["kind"] in WEBHOOK_KINDS for w in d["webhooks"]
    } == {"Ignore"}

    off = render(helm, VOLCANO, "admission.enabled=false")
    assert not [d for d in off if d["kind"] in WEBHOOK_KINDS]
    assert not [d for d in off if "admission" in d["metadata"]["name"]]
    assert len(of_kind(off, "Deployment")) == 2


def test_volcano_local_cluster_values_render_only_crds_and_queues(helm: str) -> None:
    docs = render(
        helm,
        VOLCANO,
        "admission.enabled=false",
        "scheduler.enabled=false",
        "controllers.enabled=false",
        crds=True,
    )
    assert {d["kind"] for d in docs} == {"CustomResourceDefinition", "Queue"}


def test_volcano_default_queue_is_rendered(helm: str) -> None:
    queue = one(render(helm, VOLCANO), "Queue")
    assert queue["apiVersion"] == "scheduling.volcano.sh/v1beta1"
    assert queue["metadata"]["name"] == "default"
    assert queue["spec"] == {"weight": 1, "reclaimable": True}
    assert queue["metadata"]["labels"]["volcano.tfjob-kit.io/chart-managed-queue"] == "true"
    assert queue["metadata"]["labels"]["helm.sh/chart"] == "volcano-0.1.0"

    docs = render(
        helm,
        VOLCANO,
        "queues[0].name=default",
        "queues[1].name=research",
        "queues[1].weight=3",
        "queues[1].reclaimable=false",
        "queues[1].capability.nvidia\\.com/gpu=8",
    )
    research = one(docs, "Queue", "research")
    assert research["spec"] == {
        "weight": 3,
        "reclaimable": False,
        "capability": {"nvidia.com/gpu": 8},
    }


GENERATED = "<generated>"
NOT_AFTER = "volcano.tfjob-kit.io/certificate-not-after"


def _mask_generated_cert(docs: list[Doc]) -> list[Doc]:
    for doc in docs:
        if doc["kind"] == "Secret" and doc["metadata"]["name"].endswith("admission-tls"):
            doc["data"] = dict.fromkeys(doc["data"], GENERATED)
            doc["metadata"]["annotations"][NOT_AFTER] = GENERATED
        if doc["kind"] in WEBHOOK_KINDS:
            for webhook in doc["webhooks"]:
                webhook["clientConfig"]["caBundle"] = GENERATED
        if doc["kind"] == "Deployment":
            annotations = doc["spec"]["template"]["metadata"].get("annotations", {})
            if "checksum/tls" in annotations:
                annotations["checksum/tls"] = GENERATED
    return docs


def test_volcano_render_is_deterministic_except_the_generated_certificate(helm: str) -> None:
    """Two renders with the same values differ only in the webhook certificate.

    Idempotence on a cluster: templates/admission.yaml `lookup`s the release's TLS Secret and, when
    it exists, reuses its CA, certificate and key verbatim, so a second `helm upgrade` renders
    byte-identical objects (Secret, caBundles, the pods' checksum/tls annotation). genCA and
    genSignedCert run only when there is no Secret. `helm template` cannot look anything up, so
    each render here generates a new certificate -- and nothing else may differ: no random names,
    timestamps or revision annotations anywhere.
    """
    first = render(helm, VOLCANO)
    second = render(helm, VOLCANO)
    ca = [one(d, "Secret", "admission-tls")["data"]["ca.crt"] for d in (first, second)]
    assert ca[0] != ca[1]  # no cluster to look up: a fresh CA each time
    assert _mask_generated_cert(first) == _mask_generated_cert(second)
    text = render_text(helm, VOLCANO)
    assert "genCA" not in text and "Revision" not in text


def test_volcano_certificate_matches_the_service(helm: str, tmp_path: Path) -> None:
    openssl = shutil.which("openssl")
    if openssl is None:
        pytest.skip("openssl is not installed")
    docs = render(helm, VOLCANO)
    secret = one(docs, "Secret", "admission-tls")
    for key in ("ca.crt", "tls.crt"):
        (tmp_path / key).write_bytes(base64.b64decode(secret["data"][key]))
    verify = subprocess.run(
        [openssl, "verify", "-CAfile", str(tmp_path / "ca.crt"), str(tmp_path / "tls.crt")],
        capture_output=True,
        text=True,
        check=False,
    )
    assert verify.returncode == 0, verify.stdout + verify.stderr
    names = subprocess.run(
        [openssl, "x509", "-noout", "-ext", "subjectAltName", "-in", str(tmp_path / "tls.crt")],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert "DNS:rel-volcano-admission.volcano-system.svc" in names
    hook = one(docs, "ValidatingWebhookConfiguration", "jobs")
    assert hook["webhooks"][0]["clientConfig"]["caBundle"] == secret["data"]["ca.crt"]


def test_volcano_certificate_is_valid_for_a_year_and_says_when_it_expires(helm: str) -> None:
    """A new CA and serving certificate last admission.certValidityDays (365 by default, not
    ten years), and the Secret records the end, which the next upgrade reads to rotate them."""
    from datetime import UTC, datetime, timedelta

    from cryptography import x509

    for values, days in (((), 365), (("admission.certValidityDays=90",), 90)):
        secret = one(render(helm, VOLCANO, *values), "Secret", "admission-tls")
        now = datetime.now(UTC)
        recorded = datetime.fromisoformat(secret["metadata"]["annotations"][NOT_AFTER])
        for key in ("ca.crt", "tls.crt"):
            cert = x509.load_pem_x509_certificate(base64.b64decode(secret["data"][key]))
            ends = cert.not_valid_after_utc
            assert abs(ends - (now + timedelta(days=days))) < timedelta(minutes=5), (key, ends)
            assert timedelta(0) <= ends - recorded < timedelta(minutes=1), (key, recorded)


def test_volcano_crds_are_the_generated_subset(helm: str) -> None:
    crds = of_kind(render(helm, VOLCANO, crds=True), "CustomResourceDefinition")
    assert {c["metadata"]["name"] for c in crds} == {
        "podgroups.scheduling.volcano.sh",
        "queues.scheduling.volcano.sh",
        "jobs.batch.volcano.sh",
        "commands.bus.volcano.sh",
        "hypernodes.topology.volcano.sh",
        "numatopologies.nodeinfo.volcano.sh",
    }
    assert {c["apiVersion"] for c in crds} == {"apiextensions.k8s.io/v1"}


def test_volcano_crds_file_is_up_to_date() -> None:
    if shutil.which("go") is None:
        pytest.skip("go is not installed (the generator reads the Volcano Go module)")
    result = subprocess.run(
        [sys.executable, str(ROOT / "tools" / "gen_volcano_crds.py"), "--check"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stderr


def test_volcano_controller_role_follows_the_enabled_controllers(helm: str) -> None:
    def rules(*values: str) -> set[tuple[str, str]]:
        role = one(render(helm, VOLCANO, *values), "ClusterRole", "controllers")
        return {
            (g, r) for rule in role["rules"] for g in rule["apiGroups"] for r in rule["resources"]
        }

    everything = rules("controllers.jobPlugins={env,svc,ssh}")
    only_pg = rules(
        "controllers.enabledControllers={pg-controller}", "controllers.jobPlugins={ssh}"
    )
    assert ("batch.volcano.sh", "jobs") in everything
    assert ("", "secrets") in everything  # the job controller's ssh plugin, when asked for
    assert ("batch.volcano.sh", "jobs") not in only_pg
    assert ("", "secrets") not in only_pg  # job plugins need the job controller
    assert ("scheduling.volcano.sh", "podgroups") in only_pg


def _grants(docs: list[Doc], resource: str) -> dict[str, set[str]]:
    """Verbs on a core resource, by the role that grants them (every Role and ClusterRole)."""
    found: dict[str, set[str]] = {}
    for role in of_kind(docs, "ClusterRole") + of_kind(docs, "Role"):
        for rule in role["rules"]:
            if "" in rule["apiGroups"] and resource in rule["resources"]:
                found.setdefault(role["metadata"]["name"], set()).update(rule["verbs"])
    return found


def test_volcano_reads_no_secret_and_only_the_svc_plugin_writes_configmaps(helm: str) -> None:
    """Only Volcano's ssh job plugin uses Secrets (its key pair), and tfjob-kit's Volcano Jobs
    (convert --to volcano) use the env and svc plugins: by default no Volcano component may
    touch a Secret. The svc plugin's <job>-svc ConfigMap needs get/create/update/delete in the
    jobs' namespaces -- never list or watch, so no component can read ConfigMaps wholesale."""
    for values in ((), ("admission.enabled=false",)):
        docs = render(helm, VOLCANO, *values)
        assert _grants(docs, "secrets") == {}, values
        assert _grants(docs, "configmaps") == {
            "rel-volcano-controllers": {"get", "create", "update", "delete"}
        }, values
    without_svc = render(helm, VOLCANO, "controllers.jobPlugins={env}")
    assert _grants(without_svc, "configmaps") == {}
    assert _grants(without_svc, "services")["rel-volcano-controllers"] == {"get", "list", "watch"}
    with_ssh = render(helm, VOLCANO, "controllers.jobPlugins={env,svc,ssh}")
    assert _grants(with_ssh, "secrets") == {
        "rel-volcano-controllers": {"get", "create", "update", "delete"}
    }


def test_tfjob_kit_volcano_jobs_use_only_the_default_job_plugins() -> None:
    """The plugins `convert --to volcano` writes are the ones the chart grants by default."""
    from tfjob_kit.convert import to_volcano

    job = {
        "apiVersion": "kubeflow.org/v1",
        "kind": "TFJob",
        "metadata": {"name": "j"},
        "spec": {
            "tfReplicaSpecs": {
                kind: {
                    "replicas": 2,
                    "template": {
                        "spec": {
                            "containers": [
                                {"name": "tensorflow", "image": "tf:1", "command": ["python"]}
                            ]
                        }
                    },
                }
                for kind in ("PS", "Worker")
            }
        },
    }
    converted, _ = to_volcano(job)
    defaults = yaml.safe_load((VOLCANO / "values.yaml").read_text())["controllers"]
    assert set(converted["spec"]["plugins"]) <= set(defaults["jobPlugins"])


def _permissions(rules: Iterable[Doc]) -> set[tuple[str, str, str]]:
    return {
        (group, resource, verb)
        for rule in rules
        for group in rule.get("apiGroups", [])
        for resource in rule.get("resources", [])
        for verb in rule["verbs"]
    }


@pytest.mark.parametrize("component", ["scheduler", "controllers"])
def test_volcano_roles_never_exceed_upstream(helm: str, component: str) -> None:
    """Each permission the chart grants (ClusterRole + leader-election Role) is also granted by
    the ClusterRole of Volcano's own rendered install manifest, cached by `tfjob-kit cluster
    build` -- the chart only removes what the component does not use."""
    from tfjob_kit.cluster.build import binary
    from tfjob_kit.cluster.paths import ClusterError

    try:  # the copy from Volcano's installer/volcano-development.yaml
        upstream_file = binary(f"rbac/volcano-{component}.yaml", "volcano")
    except ClusterError as err:
        pytest.skip(f"Volcano is not built: {err}")
    upstream = _permissions(yaml.safe_load(upstream_file.read_text(encoding="utf-8"))["rules"])
    docs = render(helm, VOLCANO)
    ours = {
        permission
        for kind in ("ClusterRole", "Role")
        for role in of_kind(docs, kind)
        if role["metadata"]["labels"]["app.kubernetes.io/component"] == component
        for permission in _permissions(role["rules"])
    }
    assert ours, component
    assert ours <= upstream, sorted(ours - upstream)


def test_volcano_admission_role_is_limited_to_its_webhook_configurations(helm: str) -> None:
    docs = render(helm, VOLCANO)
    role = one(docs, "ClusterRole", "admission")
    named = {name for rule in role["rules"] for name in rule.get("resourceNames", [])}
    assert named == {d["metadata"]["name"] for d in docs if d["kind"] in WEBHOOK_KINDS}
    for rule in role["rules"]:
        if rule["apiGroups"] == ["admissionregistration.k8s.io"]:
            assert rule["verbs"] == ["get", "update"] and rule["resourceNames"]


@pytest.mark.parametrize(
    ("values", "message"),
    [
        (
            ["scheduler.replicas=2", "scheduler.leaderElect=false"],
            "scheduler.replicas=2 needs scheduler.leaderElect=true",
        ),
        (
            [
                "scheduler.config.tiers[0].plugins[0].name=priority",
                "scheduler.config.tiers[1].plugins[0].name=drf",
            ],
            "no `gang` plugin",
        ),
        (["scheduler.config.actions=enqueue\\, backfill"], "must include `allocate`"),
        (["queues[0].name=root"], "`root` is created and owned by vc-scheduler"),
        (["queues[0].name=a", "queues[1].name=a"], 'the name "a" is listed twice'),
        (["queues[0].name=a", "queues[0].parent=b"], 'has parent "b"'),
        (["json:admission.enabledAdmissions=[]"], "empty admission.enabledAdmissions"),
        (["admission.failurePolicy=Maybe"], "failurePolicy"),
        (["controllers.enabledControllers={cronjob-controller}"], "enabledControllers"),
        (["controllers.jobPlugins={mpi}"], "jobPlugins"),
        (["admission.certValidityDays=30"], "must be less than admission.certValidityDays=30"),
        (["admission.certValidityDays=36500"], "certValidityDays"),
    ],
)
def test_volcano_validation_refuses_mistakes(helm: str, values: list[str], message: str) -> None:
    assert message in render_error(helm, VOLCANO, *values)


# --- kube-batch ---------------------------------------------------------------------------------


def test_kube_batch_refuses_current_kubernetes(helm: str) -> None:
    # Helm itself enforces Chart.yaml's kubeVersion "<1.22.0-0" before rendering anything.
    error = render_error(helm, KUBE_BATCH, kube=KUBE)
    assert f"incompatible with Kubernetes v{KUBE}" in error


def test_kube_batch_template_guard_points_to_volcano(helm: str, tmp_path: Path) -> None:
    """templates/validation.yaml repeats the check for tools that skip Chart.yaml's kubeVersion
    (a vendored copy, a renderer without the check); seen here through such a copy."""
    copy = tmp_path / "kube-batch"
    shutil.copytree(KUBE_BATCH, copy)
    chart_yaml = copy / "Chart.yaml"
    text = chart_yaml.read_text(encoding="utf-8")
    chart_yaml.write_text(re.sub(r"(?m)^kubeVersion:.*\n", "", text), encoding="utf-8")
    result = _run_helm(
        helm, "template", "rel", str(copy), "-n", "kube-system", "--kube-version", KUBE
    )
    assert result.returncode != 0
    assert f"kube-batch cannot run on Kubernetes v{KUBE}" in result.stderr
    assert "Install the volcano chart instead" in result.stderr
    forced = _run_helm(
        helm,
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


def test_kube_batch_renders_v1_crds_on_legacy_kubernetes(helm: str) -> None:
    docs = render(helm, KUBE_BATCH, crds=True)
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


def test_kube_batch_validation(helm: str) -> None:
    assert "needs leaderElect=true" in render_error(helm, KUBE_BATCH, "replicas=2")
    assert 'defaultQueue="default" is not in queues' in render_error(
        helm, KUBE_BATCH, "queues[0].name=other"
    )
    docs = render(helm, KUBE_BATCH, "leaderElect=true", "replicas=2")
    role = one(docs, "Role")
    assert role["metadata"]["namespace"] == "kube-system"
    assert {v for rule in role["rules"] for v in rule["verbs"]} == {"create", "get", "update"}
    args = one(docs, "Deployment")["spec"]["template"]["spec"]["containers"][0]["args"]
    assert "--lock-object-namespace=kube-system" in args


# --- nvidia-device-plugin -----------------------------------------------------------------------


def test_device_plugin_daemonset_selects_gpu_nodes(helm: str) -> None:
    docs = render(helm, DEVICE_PLUGIN)
    daemonset = one(docs, "DaemonSet")
    spec = daemonset["spec"]["template"]["spec"]
    terms = spec["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"][
        "nodeSelectorTerms"
    ]
    assert terms == [
        {
            "matchExpressions": [
                {"key": "nvidia.com/gpu.present", "operator": "In", "values": ["true"]}
            ]
        },
        {
            "matchExpressions": [
                {
                    "key": "feature.node.kubernetes.io/pci-10de.present",
                    "operator": "In",
                    "values": ["true"],
                }
            ]
        },
    ]
    assert {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"} in spec[
        "tolerations"
    ]
    assert spec["priorityClassName"] == "system-node-critical"
    assert spec["automountServiceAccountToken"] is False
    container = spec["containers"][0]
    assert container["image"] == "nvcr.io/nvidia/k8s-device-plugin:v0.17.2"
    env = {e["name"]: e["value"] for e in container["env"]}
    mounts = {m["name"]: m["mountPath"] for m in container["volumeMounts"]}
    assert env["CONFIG_FILE"] == f"{mounts['config']}/config.yaml"
    assert mounts["device-plugins"] == "/var/lib/kubelet/device-plugins"
    # The DaemonSet must not select (and adopt) the helm test pod.
    selector = daemonset["spec"]["selector"]["matchLabels"]
    test_pod = one(docs, "Pod")
    assert not selector.items() <= test_pod["metadata"]["labels"].items()

    custom = render(
        helm,
        DEVICE_PLUGIN,
        "gpuNodeLabels={gpu-node,accelerator=nvidia}",
        "tolerations[0].key=dedicated",
        "tolerations[0].operator=Exists",
    )
    spec = one(custom, "DaemonSet")["spec"]["template"]["spec"]
    terms = spec["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"][
        "nodeSelectorTerms"
    ]
    assert [t["matchExpressions"][0]["operator"] for t in terms] == ["Exists", "In"]
    assert {"key": "dedicated", "operator": "Exists"} in spec["tolerations"]


def _plugin_config(docs: list[Doc]) -> Doc:
    config = yaml.safe_load(one(docs, "ConfigMap")["data"]["config.yaml"])
    assert isinstance(config, dict)
    return config


def test_device_plugin_config_and_time_slicing(helm: str) -> None:
    plain = _plugin_config(render(helm, DEVICE_PLUGIN))
    assert plain["version"] == "v1"
    assert plain["flags"]["migStrategy"] == "none"
    assert plain["flags"]["failOnInitError"] is True
    assert plain["flags"]["plugin"]["deviceListStrategy"] == ["envvar"]
    assert "sharing" not in plain

    docs = render(
        helm,
        DEVICE_PLUGIN,
        "sharing.timeSlicing.enabled=true",
        "sharing.timeSlicing.resources[0].name=nvidia.com/gpu",
        "sharing.timeSlicing.resources[0].replicas=8",
        "sharing.timeSlicing.failRequestsGreaterThanOne=true",
    )
    sliced = _plugin_config(docs)["sharing"]["timeSlicing"]
    assert sliced == {
        "renameByDefault": False,
        "failRequestsGreaterThanOne": True,
        "resources": [{"name": "nvidia.com/gpu", "replicas": 8}],
    }

    # The pods roll when the configuration changes.
    def checksum(d: list[Doc]) -> str:
        return str(
            one(d, "DaemonSet")["spec"]["template"]["metadata"]["annotations"]["checksum/config"]
        )

    assert checksum(docs) != checksum(render(helm, DEVICE_PLUGIN))


def test_device_plugin_runtime_class_only_when_enabled(helm: str) -> None:
    assert not of_kind(render(helm, DEVICE_PLUGIN), "RuntimeClass")
    docs = render(helm, DEVICE_PLUGIN, "runtimeClass.create=true")
    runtime_class = one(docs, "RuntimeClass")
    assert runtime_class["apiVersion"] == "node.k8s.io/v1"
    assert (runtime_class["metadata"]["name"], runtime_class["handler"]) == ("nvidia", "nvidia")
    assert one(docs, "Pod")["spec"]["runtimeClassName"] == "nvidia"


@pytest.mark.parametrize(
    ("values", "namespace", "message"),
    [
        ([], "default", "refusing to install into the `default` namespace"),
        (["sharing.timeSlicing.enabled=true", "sharing.mps.enabled=true"], None, "both true"),
        (
            [
                "sharing.timeSlicing.enabled=true",
                "sharing.timeSlicing.resources[0].name=nvidia.com/gpu",
                "sharing.timeSlicing.resources[0].replicas=1",
            ],
            None,
            "replicas >= 2",
        ),
        (
            ["sharing.timeSlicing.enabled=true", "sharing.timeSlicing.renameByDefault=true"],
            None,
            "set test.resourceName=nvidia.com/gpu.shared",
        ),
        (["sharing.mps.enabled=true", "config.migStrategy=mixed"], None, "migStrategy=none"),
        (["runtimeClass.create=true", "runtimeClassName=other"], None, "differs from"),
        (["config.migStrategy=all"], None, "migStrategy"),
    ],
)
def test_device_plugin_validation_refuses_mistakes(
    helm: str, values: list[str], namespace: str | None, message: str
) -> None:
    assert message in render_error(helm, DEVICE_PLUGIN, *values, namespace=namespace)


def test_device_plugin_default_namespace_when_allowed(helm: str) -> None:
    docs = render(helm, DEVICE_PLUGIN, "allowDefaultNamespace=true", namespace="default")
    assert one(docs, "DaemonSet")["metadata"]["namespace"] == "default"


# --- policy over every chart --------------------------------------------------------------------

VARIANTS: list[tuple[Path, list[str]]] = [
    (VOLCANO, []),
    (VOLCANO, ["admission.enabledAdmissions={/podgroups/mutate,/pods/validate}"]),
    (KUBE_BATCH, []),
    (KUBE_BATCH, ["leaderElect=true"]),
    (DEVICE_PLUGIN, []),
    (DEVICE_PLUGIN, ["runtimeClass.create=true", "sharing.timeSlicing.enabled=true"]),
]


@pytest.mark.parametrize(
    ("chart", "values"), VARIANTS, ids=[f"{c.name}-{i}" for i, (c, _) in enumerate(VARIANTS)]
)
def test_rbac_is_least_privilege(helm: str, chart: Path, values: list[str]) -> None:
    docs = render(helm, chart, *values)
    for role in of_kind(docs, "ClusterRole") + of_kind(docs, "Role"):
        for rule in role["rules"]:
            for field in ("apiGroups", "resources", "verbs"):
                assert "*" not in rule.get(field, []), f"{role['metadata']['name']}: {rule}"
            assert not rule.get("nonResourceURLs"), role["metadata"]["name"]
            assert rule["verbs"] and rule["resources"]
    for binding in of_kind(docs, "ClusterRoleBinding") + of_kind(docs, "RoleBinding"):
        assert binding["roleRef"]["name"] not in ("cluster-admin", "admin", "edit"), binding
        own = {r["metadata"]["name"] for r in of_kind(docs, binding["roleRef"]["kind"])}
        assert binding["roleRef"]["name"] in own, "bindings only grant the chart's own roles"
        for subject in binding["subjects"]:
            assert subject["kind"] == "ServiceAccount"
            assert subject["namespace"] == NAMESPACES[chart]
    if chart == DEVICE_PLUGIN:  # talks only to the kubelet socket
        assert not of_kind(docs, "ClusterRole") and not of_kind(docs, "Role")


@pytest.mark.parametrize(
    ("chart", "values"), VARIANTS, ids=[f"{c.name}-{i}" for i, (c, _) in enumerate(VARIANTS)]
)
def test_every_object_carries_the_chart_labels(helm: str, chart: Path, values: list[str]) -> None:
    for doc in render(helm, chart, *values):
        labels = doc["metadata"].get("labels", {})
        assert labels.get("helm.sh/chart") == f"{chart.name}-0.1.0", doc["metadata"]["name"]
        assert labels.get("app.kubernetes.io/instance") == "rel"
        assert labels.get("app.kubernetes.io/managed-by") == "Helm"


@pytest.mark.parametrize("chart", [VOLCANO, KUBE_BATCH], ids=lambda c: c.name)
def test_workloads_meet_pod_security_restricted(helm: str, chart: Path) -> None:
    for name, spec in pod_specs(render(helm, chart)):
        pod = spec.get("securityContext", {})
        assert pod.get("runAsNonRoot") is True and pod.get("runAsUser", 0) > 0, name
        assert pod["seccompProfile"]["type"] == "RuntimeDefault", name
        assert not spec.get("hostNetwork") and not spec.get("hostPID"), name
        assert not [v for v in spec.get("volumes", []) if "hostPath" in v], name
        for container in spec["containers"]:
            context = container["securityContext"]
            assert context["allowPrivilegeEscalation"] is False, name
            assert context["capabilities"]["drop"] == ["ALL"], name
            assert "add" not in context["capabilities"], name
            assert context["readOnlyRootFilesystem"] is True, name
            assert not context.get("privileged"), name


def test_device_plugin_is_as_restricted_as_it_can_be(helm: str) -> None:
    docs = render(helm, DEVICE_PLUGIN)
    spec = one(docs, "DaemonSet")["spec"]["template"]["spec"]
    assert spec["securityContext"]["seccompProfile"]["type"] == "RuntimeDefault"
    context = spec["containers"][0]["securityContext"]
    assert context["allowPrivilegeEscalation"] is False
    assert context["capabilities"] == {"drop": ["ALL"]}
    host_paths = [v["hostPath"]["path"] for v in spec["volumes"] if "hostPath" in v]
    assert host_paths == ["/var/lib/kubelet/device-plugins"]  # the one unavoidable exception
    test_pod = one(docs, "Pod")["spec"]
    assert test_pod["securityContext"]["runAsNonRoot"] is True


@pytest.mark.parametrize(
    ("chart", "values"), VARIANTS, ids=[f"{c.name}-{i}" for i, (c, _) in enumerate(VARIANTS)]
)
def test_pod_templates_match_the_kubernetes_schema(
    helm: str, chart: Path, values: list[str]
) -> None:
    """Every pod template is a valid core/v1 PodTemplateSpec of the pinned Kubernetes (closed
    objects: a misspelt or misplaced field fails here, not at install time)."""
    schema = json.loads((ROOT / "schemas" / "k8s" / "podtemplatespec.json").read_text())
    validator = jsonschema.Draft202012Validator(schema)
    for doc in render(helm, chart, *values):
        if doc["kind"] in ("Deployment", "DaemonSet"):
            template = doc["spec"]["template"]
        elif doc["kind"] == "Pod":
            template = {"metadata": doc["metadata"], "spec": doc["spec"]}
        else:
            continue
        errors = [f"{list(e.absolute_path)}: {e.message}" for e in validator.iter_errors(template)]
        assert not errors, f"{doc['metadata']['name']}: {errors}"


@pytest.mark.parametrize("chart", [KUBE_BATCH, DEVICE_PLUGIN], ids=lambda c: c.name)
def test_render_is_deterministic(helm: str, chart: Path) -> None:
    assert render_text(helm, chart) == render_text(helm, chart)
