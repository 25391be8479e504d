"""The volcano chart: scheduler, controllers, admission webhooks and their certificate, CRDs and
queues; lint, render and policy checks (no cluster)."""

from __future__ import annotations

import base64
import json
import shutil
import subprocess
import sys
from collections.abc import Iterable
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
import yaml
from cryptography import x509

from tfjob_kit import images
from tfjob_kit.cluster.build import binary
from tfjob_kit.convert import to_volcano

from ._chart import (
    CHARTS,
    ROOT,
    Chart,
    Doc,
    Shared,
    of_kind,
    one,
    pod_specs,
    scenarios,
    sets,
)

PATH = CHARTS / "volcano"

WEBHOOK_KINDS = ("MutatingWebhookConfiguration", "ValidatingWebhookConfiguration")


def test_volcano_default_render_has_every_component(volcano: Chart) -> None:
    docs = volcano.render()
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
    volcano: Chart, values: list[str]
) -> None:
    """The chart's command lines parse with the vc-scheduler / vc-controller-manager /
    vc-webhook-manager built from versions.toml (`--version` exits right after flag parsing; an
    unknown flag exits 2)."""
    for deployment in of_kind(volcano.render(*sets(*values)), "Deployment"):
        container = deployment["spec"]["template"]["spec"]["containers"][0]
        executable = binary(container["name"], "volcano")  # fails when Volcano is not built
        result = subprocess.run(
            [str(executable), *container["args"], "--version"],
            capture_output=True,
            text=True,
            check=False,
            timeout=60,
        )
        assert result.returncode == 0, result.stderr[-2000:]


def test_volcano_leader_election_and_log_level_are_values(volcano: Chart) -> None:
    docs = volcano.render(*sets("scheduler.leaderElect=false", "controllers.logLevel=2"))
    scheduler = one(docs, "Deployment", "scheduler")["spec"]["template"]["spec"]
    assert "--leader-elect=false" in scheduler["containers"][0]["args"]
    controllers = one(docs, "Deployment", "controllers")["spec"]["template"]["spec"]
    assert "-v=2" in controllers["containers"][0]["args"]
    # Without leader election the scheduler gets no Lease permissions at all.
    roles = [r["metadata"]["name"] for r in of_kind(docs, "Role")]
    assert roles == ["rel-volcano-controllers-leader-election"]


def test_volcano_tuning_follows_the_values(volcano: Chart) -> None:
    """The scheduling period and the webhooks' timeout: Volcano's own defaults (1s; Kubernetes'
    10 s, which vc-webhook-manager leaves unset), and what the values say."""
    for values, period, timeout in (
        ((), "1s", 10),
        (("scheduler.schedulePeriod=250ms", "admission.timeoutSeconds=25"), "250ms", 25),
    ):
        docs = volcano.render(*sets(*values))
        args = one(docs, "Deployment", "scheduler")["spec"]["template"]["spec"]["containers"][0][
            "args"
        ]
        assert [a for a in args if a.startswith("--schedule-period")] == [
            f"--schedule-period={period}"
        ]
        timeouts = [
            w["timeoutSeconds"] for d in docs if d["kind"] in WEBHOOK_KINDS for w in d["webhooks"]
        ]
        assert len(timeouts) == 6 and set(timeouts) == {timeout}


def test_volcano_tuning_follows_the_role_variables(volcano: Chart, tmp_path: Path) -> None:
    """The role's tuning variables reach the chart through volcano_chart_values."""
    deployment = images.role_deployment(
        "volcano",
        {"volcano_schedule_period": "2s", "volcano_webhook_timeout_seconds": "20"},
        {},
        ROOT,
    )
    assert deployment is not None
    composed = tmp_path / "values.json"
    composed.write_text(json.dumps(deployment.values))
    docs = volcano.render("-f", str(composed))
    args = one(docs, "Deployment", "scheduler")["spec"]["template"]["spec"]["containers"][0]["args"]
    assert "--schedule-period=2s" in args
    timeouts = {
        w["timeoutSeconds"] for d in docs if d["kind"] in WEBHOOK_KINDS for w in d["webhooks"]
    }
    assert timeouts == {20}


def test_volcano_webhooks_only_with_admission(volcano: Chart) -> None:
    docs = volcano.render()
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

    ignore = volcano.render(*sets("admission.failurePolicy=Ignore"))
    assert {
        w["failurePolicy"] for d in ignore if d["kind"] in WEBHOOK_KINDS for w in d["webhooks"]
    } == {"Ignore"}

    off = volcano.render(*sets("admission.enabled=false"))
    assert not [d for d in off if d["kind"] in WEBHOOK_KINDS]
    assert not [d for d in off if "admission" in d["metadata"]["name"]]
    assert len(of_kind(off, "Deployment")) == 2


def test_volcano_local_cluster_values_render_only_crds_and_queues(volcano: Chart) -> None:
    docs = volcano.render(
        *sets("admission.enabled=false", "scheduler.enabled=false", "controllers.enabled=false"),
        crds=True,
    )
    assert {d["kind"] for d in docs} == {"CustomResourceDefinition", "Queue"}


def test_volcano_default_queue_is_rendered(volcano: Chart) -> None:
    queue = one(volcano.render(), "Queue")
    assert queue["apiVersion"] == "scheduling.volcano.sh/v1beta1"
    assert queue["metadata"]["name"] == "default"
    assert queue["spec"] == {"weight": 1, "reclaimable": True}
    assert queue["metadata"]["labels"]["volcano.tfjob-kit.io/chart-managed-queue"] == "true"

    docs = volcano.render(
        *sets(
            "queues[0].name=default",
            "queues[1].name=research",
            "queues[1].weight=3",
            "queues[1].reclaimable=false",
            "queues[1].capability.nvidia\\.com/gpu=8",
        )
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


def test_volcano_render_generates_the_certificate_afresh(volcano: Chart) -> None:
    """Two renders with the same values differ in the webhook certificate, and only there
    (test_render_is_deterministic, with `_mask_generated_cert`).

    Idempotence on a cluster: templates/admission.yaml `lookup`s the release's TLS Secret and, when
    it exists, reuses its CA, certificate and key verbatim, so a second `helm upgrade` renders
    byte-identical objects (Secret, caBundles, the pods' checksum/tls annotation). genCA and
    genSignedCert run only when there is no Secret. `helm template` cannot look anything up, so
    each render here generates a new certificate -- and nothing else may differ: no random names,
    timestamps or revision annotations anywhere.
    """
    first = volcano.render()
    second = volcano.render()
    ca = [one(d, "Secret", "admission-tls")["data"]["ca.crt"] for d in (first, second)]
    assert ca[0] != ca[1]  # no cluster to look up: a fresh CA each time
    text = volcano.render_text()
    assert "genCA" not in text and "Revision" not in text


def test_volcano_certificate_matches_the_service(volcano: Chart, tmp_path: Path) -> None:
    openssl = shutil.which("openssl")
    assert openssl, "openssl is not installed"
    docs = volcano.render()
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


def test_volcano_certificate_is_valid_for_a_year_and_says_when_it_expires(volcano: Chart) -> None:
    """A new CA and serving certificate last admission.certValidityDays (365 by default, not
    ten years), and the Secret records the end, which the next upgrade reads to rotate them."""
    for values, days in (((), 365), (("admission.certValidityDays=90",), 90)):
        secret = one(volcano.render(*sets(*values)), "Secret", "admission-tls")
        now = datetime.now(UTC)
        recorded = datetime.fromisoformat(secret["metadata"]["annotations"][NOT_AFTER])
        for key in ("ca.crt", "tls.crt"):
            cert = x509.load_pem_x509_certificate(base64.b64decode(secret["data"][key]))
            ends = cert.not_valid_after_utc
            assert abs(ends - (now + timedelta(days=days))) < timedelta(minutes=5), (key, ends)
            assert timedelta(0) <= ends - recorded < timedelta(minutes=1), (key, recorded)


def test_volcano_crds_are_the_generated_subset(volcano: Chart) -> None:
    crds = of_kind(volcano.render(crds=True), "CustomResourceDefinition")
    assert {c["metadata"]["name"] for c in crds} == {
        "podgroups.scheduling.volcano.sh",
        "queues.scheduling.volcano.sh",
        "jobs.batch.volcano.sh",
        "commands.bus.volcano.sh",
        "hypernodes.topology.volcano.sh",
        "numatopologies.nodeinfo.volcano.sh",
    }
    assert {c["apiVersion"] for c in crds} == {"apiextensions.k8s.io/v1"}


def test_volcano_crds_file_is_up_to_date(go: str) -> None:
    # the generator reads the Volcano Go module
    result = subprocess.run(
        [sys.executable, str(ROOT / "tools" / "gen_upstream_crds.py"), "--check", "volcano"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stderr


def test_volcano_controller_role_follows_the_enabled_controllers(volcano: Chart) -> None:
    def rules(*values: str) -> set[tuple[str, str]]:
        role = one(volcano.render(*sets(*values)), "ClusterRole", "controllers")
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


def test_volcano_reads_no_secret_and_only_the_svc_plugin_writes_configmaps(volcano: Chart) -> None:
    """Only Volcano's ssh job plugin uses Secrets (its key pair), and tfjob-kit's Volcano Jobs
    (convert --to volcano) use the env and svc plugins: by default no Volcano component may
    touch a Secret. The svc plugin's <job>-svc ConfigMap needs get/create/update/delete in the
    jobs' namespaces -- never list or watch, so no component can read ConfigMaps wholesale."""
    for values in ((), ("admission.enabled=false",)):
        docs = volcano.render(*sets(*values))
        assert _grants(docs, "secrets") == {}, values
        assert _grants(docs, "configmaps") == {
            "rel-volcano-controllers": {"get", "create", "update", "delete"}
        }, values
    without_svc = volcano.render(*sets("controllers.jobPlugins={env}"))
    assert _grants(without_svc, "configmaps") == {}
    assert _grants(without_svc, "services")["rel-volcano-controllers"] == {"get", "list", "watch"}
    with_ssh = volcano.render(*sets("controllers.jobPlugins={env,svc,ssh}"))
    assert _grants(with_ssh, "secrets") == {
        "rel-volcano-controllers": {"get", "create", "update", "delete"}
    }


def test_tfjob_kit_volcano_jobs_use_only_the_default_job_plugins() -> None:
    """The plugins `convert --to volcano` writes are the ones the chart grants by default."""
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
    defaults = yaml.safe_load((PATH / "values.yaml").read_text())["controllers"]
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
def test_volcano_roles_never_exceed_upstream(volcano: Chart, component: str) -> None:
    """Each permission the chart grants (ClusterRole + leader-election Role) is also granted by
    the ClusterRole of Volcano's own rendered install manifest, cached by `tfjob-kit cluster
    build` -- the chart only removes what the component does not use."""
    # the copy from Volcano's installer/volcano-development.yaml (fails when it is not built)
    upstream_file = binary(f"rbac/volcano-{component}.yaml", "volcano")
    upstream = _permissions(yaml.safe_load(upstream_file.read_text(encoding="utf-8"))["rules"])
    docs = volcano.render()
    ours = {
        permission
        for kind in ("ClusterRole", "Role")
        for role in of_kind(docs, kind)
        if role["metadata"]["labels"]["app.kubernetes.io/component"] == component
        for permission in _permissions(role["rules"])
    }
    assert ours, component
    assert ours <= upstream, sorted(ours - upstream)


def test_volcano_admission_role_is_limited_to_its_webhook_configurations(volcano: Chart) -> None:
    docs = volcano.render()
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
        (["scheduler.schedulePeriod=fast"], "/scheduler/schedulePeriod"),
        (["scheduler.schedulePeriod=1"], "/scheduler/schedulePeriod"),
        (["scheduler.schedulePeriod=0s"], "scheduler.schedulePeriod=0s: the pause"),
        (["scheduler.schedulePeriod=0.0ms"], "must be more than zero"),
        (["admission.timeoutSeconds=0"], "/admission/timeoutSeconds"),
        (["admission.timeoutSeconds=31"], "/admission/timeoutSeconds"),
    ],
)
def test_volcano_validation_refuses_mistakes(
    volcano: Chart, values: list[str], message: str
) -> None:
    assert message in volcano.render_error(*sets(*values))


# --- what the checks every chart gets (test_every_chart.py) need to know of this one -------

# The local cluster's values render only CRDs and queues, no pod at all.
LOCAL_CLUSTER = ("-f", str(PATH / "ci" / "local-cluster-values.yaml"))
# The defaults, each ci/ file, and a subset of the admission webhooks.
SCENARIOS = scenarios(
    "volcano", sets("admission.enabledAdmissions={/podgroups/mutate,/pods/validate}")
)


SHARED = Shared(
    "volcano", "volcano", SCENARIOS, without_pods=(LOCAL_CLUSTER,), mask=_mask_generated_cert
)


def test_volcano_local_admission_is_the_charts_pointed_at_the_local_process() -> None:
    """The local cluster's vc-webhook-manager: the chart's webhook configurations (names,
    rules, failurePolicy, selectors) with only where they call changed, the caBundle the
    certificate the process serves, the chart Deployment's own arguments."""
    from tfjob_kit.cluster import chart_rbac, volcano_admission
    from tfjob_kit.cluster.identity import LOCAL_NAMESPACE

    chart = chart_rbac.rendered(volcano_admission.PROCESS, LOCAL_NAMESPACE)
    charted = {d["metadata"]["name"]: d for d in chart if d["kind"] in WEBHOOK_KINDS}
    service, *configs = volcano_admission.webhook_objects(31234, b"the CA")
    assert service["spec"] == {"type": "ExternalName", "externalName": "localhost"}
    assert service["metadata"]["namespace"] == LOCAL_NAMESPACE
    assert {c["metadata"]["name"] for c in configs} == set(charted)
    for config in configs:
        assert "labels" not in config["metadata"]
        original = charted[config["metadata"]["name"]]
        assert config["kind"] == original["kind"]
        for hook, theirs in zip(config["webhooks"], original["webhooks"], strict=True):
            rest = {k: v for k, v in hook.items() if k != "clientConfig"}
            assert rest == {k: v for k, v in theirs.items() if k != "clientConfig"}
            assert hook["clientConfig"] == {
                "service": {**theirs["clientConfig"]["service"], "port": 31234},
                "caBundle": base64.b64encode(b"the CA").decode(),
            }
    # The chart's Secret: the certificate is for the Service's name, signed by its ca.crt.
    secret = one(chart, "Secret", "admission-tls")
    cert = x509.load_pem_x509_certificate(base64.b64decode(secret["data"]["tls.crt"]))
    names = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert f"{service['metadata']['name']}.{LOCAL_NAMESPACE}.svc" in names.get_values_for_type(
        x509.DNSName
    )
    # The process is told what the chart tells the pod, but for in-pod paths and ports.
    (deployment,) = [
        d
        for d in chart
        if d["kind"] == "Deployment"
        and d["spec"]["template"]["spec"]["containers"][0]["name"] == volcano_admission.PROCESS
    ]
    args = deployment["spec"]["template"]["spec"]["containers"][0]["args"]
    local_args = volcano_admission.chart_args()
    assert set(local_args) < set(args)
    assert any(a.startswith("--enabled-admission=") for a in local_args)
    assert not any(a.split("=")[0] in volcano_admission.LOCAL_FLAGS for a in local_args)


def test_volcano_role_knows_the_local_clusters_namespace() -> None:
    """The role keeps the local cluster's own webhook configurations (they call a Service in
    that namespace) while their server answers: its copy of the namespace is the cluster's."""
    from tfjob_kit.cluster.identity import LOCAL_NAMESPACE

    role_vars = yaml.safe_load((ROOT / "roles" / "volcano" / "vars" / "main.yml").read_text())
    assert role_vars["volcano_local_namespace"] == LOCAL_NAMESPACE
