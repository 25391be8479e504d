"""The server-aware preflight (kube/preflight.py) against the real API server: what the
operator would create is dry-run, what the pods name must exist, and quotas hold the whole job.

Every test works in a namespace of its own (the ``namespace`` fixture creates and deletes it);
the one cluster-scoped object made here (a PriorityClass) has a unique name and is deleted.
"""

from __future__ import annotations

import contextlib
import copy
import json
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from tfjob_kit import validate
from tfjob_kit.findings import SERVER, Finding, Severity
from tfjob_kit.kube import preflight
from tfjob_kit.kube.client import Client
from tfjob_kit.kube.connection import Connection
from tfjob_kit.kube.task import Request, TaskError, run
from tfjob_kit.podcheck import release
from tfjob_kit.versions import load_versions

from ._ansible import run_playbook, run_tasks
from ._cluster import Cluster

BIN = Path(sys.executable).parent
WORKER = "$.spec.tfReplicaSpecs.Worker.template.spec"


def tfjob(namespace: str, name: str = "pre", workers: int = 2, cpu: str = "100m") -> dict[str, Any]:
    container: dict[str, Any] = {
        "name": "tensorflow",
        "image": "registry.example.com/mnist:1.0",
        "resources": {"requests": {"cpu": cpu, "memory": "64Mi"}, "limits": {"cpu": cpu}},
    }
    return {
        "apiVersion": "kubeflow.org/v1",
        "kind": "TFJob",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {
            "runPolicy": {"cleanPodPolicy": "None"},
            "tfReplicaSpecs": {
                "Worker": {
                    "replicas": workers,
                    "restartPolicy": "Never",
                    "template": {"spec": {"containers": [container]}},
                }
            },
        },
    }


def worker(job: dict[str, Any]) -> dict[str, Any]:
    spec: dict[str, Any] = job["spec"]["tfReplicaSpecs"]["Worker"]["template"]["spec"]
    return spec


def with_undefined_mount(job: dict[str, Any]) -> dict[str, Any]:
    job = copy.deepcopy(job)
    worker(job)["containers"][0]["volumeMounts"] = [{"name": "ckpt", "mountPath": "/ckpt"}]
    return job


@pytest.fixture
def client(cluster: Cluster) -> Iterator[Client]:
    with Client(Connection(kubeconfig=str(cluster.kubeconfig))) as admin:
        yield admin


def check(client: Client, job: dict[str, Any]) -> list[Finding]:
    return preflight.check(client, [preflight.Target("job.yaml", 1, job)])


def by_path(findings: list[Finding]) -> dict[str, Finding]:
    return {f.path: f for f in findings}


def tfjobs(cluster: Cluster, namespace: str) -> list[dict[str, Any]]:
    return cluster.items("tfjobs.kubeflow.org", "-n", namespace)


def test_a_valid_job_passes(client: Client, namespace: str) -> None:
    job = tfjob(namespace)
    # A quantity written as a number, as YAML users write GPUs: the server takes it.
    worker(job)["containers"][0]["resources"]["limits"]["nvidia.com/gpu"] = 1
    assert check(client, job) == []


def test_a_namespace_that_does_not_exist_is_one_finding(client: Client) -> None:
    absent = f"it-absent-{uuid.uuid4().hex[:8]}"
    [finding] = check(client, with_undefined_mount(tfjob(absent)))
    assert finding.rule == "missing-reference"
    assert finding.path == "$.metadata.namespace"
    assert finding.message.startswith(f"namespace {absent!r} does not exist")


def test_undefined_volume_mount_fails_with_the_servers_reason_and_creates_nothing(
    cluster: Cluster, namespace: str
) -> None:
    job = with_undefined_mount(tfjob(namespace, "hang"))
    request = Request(
        definition=job,
        validate="warn",  # the offline prediction aside: the preflight must catch it itself
        wait=True,
        wait_timeout=300,
        connection=Connection(kubeconfig=str(cluster.kubeconfig)),
    )
    with pytest.raises(TaskError) as failure:
        run(request)
    message = str(failure.value)
    assert "nothing was applied" in message
    assert f"pod {namespace}/hang-worker-1" in message
    assert f"{WORKER}.containers[0].volumeMounts[0].name" in message
    assert 'spec.containers[0].volumeMounts[0].name: Not found: "ckpt"' in message
    server = f"the API server rejects pod {namespace}/hang-worker-1"
    findings = failure.value.result["findings"]
    [found] = [f for f in findings if f["message"].startswith(server)]
    assert found["rule"] == "server-rejects-pod"
    assert found["path"] == f"{WORKER}.containers[0].volumeMounts[0].name"
    assert tfjobs(cluster, namespace) == []


def test_the_operators_service_is_dry_run_too(client: Client, namespace: str) -> None:
    # The pod passes; its Service has two ports (this one and the tfjob-port the operator adds),
    # so the unnamed one is refused, and both are 2222/TCP.
    job = tfjob(namespace, "svc")
    worker(job)["containers"][0]["ports"] = [{"containerPort": 2222}]
    found = check(client, job)
    assert {f.rule for f in found} == {"server-rejects-service"}, found
    assert {f.origin for f in found} == {SERVER}
    named = by_path(found)[f"{WORKER}.containers[0].ports[0].name"]
    assert named.message.startswith(
        f"the API server rejects Service {namespace}/svc-worker-1: spec.ports[0].name: Required"
    ), named.message
    assert "FailedCreateService" in named.message
    # The second port of one number: the same words offline and from the server.
    offline = [f for f in validate.check_object(job) if f.rule == "server-rejects-service"]
    assert {f.path for f in offline} == {f.path for f in found}
    duplicate = by_path(found)[f"{WORKER}.containers[0].ports"].message
    key = '{"Name":"","Protocol":"TCP","AppProtocol":null,"Port":2222,'
    assert f"spec.ports[1]: Duplicate value: {key}" in duplicate


def test_pod_security_restricted_rejects_a_privileged_template(
    cluster: Cluster, client: Client, namespace: str
) -> None:
    cluster.kubectl(
        "label", "namespace", namespace, "pod-security.kubernetes.io/enforce=restricted"
    )
    job = tfjob(namespace)
    worker(job)["containers"][0]["securityContext"] = {"privileged": True}
    [finding] = check(client, job)
    assert finding.rule == "server-rejects-pod"
    assert finding.severity == Severity.ERROR
    assert finding.path == WORKER
    assert 'violates PodSecurity "restricted:latest"' in finding.message
    assert "privileged" in finding.message


def test_limit_range_maximum(cluster: Cluster, client: Client, namespace: str) -> None:
    limits = {
        "apiVersion": "v1",
        "kind": "LimitRange",
        "metadata": {"name": "max-cpu", "namespace": namespace},
        "spec": {"limits": [{"type": "Container", "max": {"cpu": "1"}}]},
    }
    cluster.kubectl("apply", "-f", "-", stdin=json.dumps(limits))
    assert check(client, tfjob(namespace, cpu="1")) == []
    [finding] = check(client, tfjob(namespace, cpu="2"))
    assert finding.rule == "server-rejects-pod"
    assert "maximum cpu usage per Container is 1, but limit is 2" in finding.message


def _quota(cluster: Cluster, namespace: str, hard: dict[str, str]) -> None:
    quota = {
        "apiVersion": "v1",
        "kind": "ResourceQuota",
        "metadata": {"name": "team", "namespace": namespace},
        "spec": {"hard": hard},
    }
    cluster.kubectl("apply", "-f", "-", stdin=json.dumps(quota))

    def counted() -> bool:
        status = cluster.get("resourcequota", "team", "-n", namespace).get("status") or {}
        return set(status.get("hard") or {}) == set(hard) and "used" in status

    cluster.wait_for("the quota controller to count the quota", counted, namespace)


def test_resource_quota_is_checked_against_the_whole_job(
    cluster: Cluster, client: Client, namespace: str
) -> None:
    _quota(cluster, namespace, {"requests.cpu": "3", "count/pods": "10"})
    assert check(client, tfjob(namespace, workers=3, cpu="1")) == []
    # No one pod exceeds the quota (the dry runs pass); the four together do.
    [finding] = check(client, tfjob(namespace, workers=4, cpu="1"))
    assert finding.rule == "quota-exceeded"
    assert finding.path == "$.spec.tfReplicaSpecs"
    assert f"ResourceQuota {namespace}/team leaves 3" in finding.message
    assert "requests.cpu 4 in all (Worker 4 x 1)" in finding.message


def test_resource_quota_holds_the_jobs_of_one_apply_together(
    cluster: Cluster, client: Client, namespace: str
) -> None:
    _quota(cluster, namespace, {"requests.cpu": "3"})
    first, second = tfjob(namespace, "first", cpu="1"), tfjob(namespace, "second", cpu="1")
    assert check(client, first) == check(client, second) == []
    targets = [preflight.Target("a.yaml", 1, first), preflight.Target("b.yaml", 1, second)]
    [finding] = preflight.check(client, targets)
    assert (finding.source, finding.rule) == ("b.yaml", "quota-exceeded")
    assert (
        "needs requests.cpu 2 in all (Worker 2 x 1), and the 1 jobs before it in this apply "
        f"need 2, but ResourceQuota {namespace}/team leaves 3"
    ) in finding.message


def test_resource_quota_counts_pods(cluster: Cluster, client: Client, namespace: str) -> None:
    _quota(cluster, namespace, {"pods": "2"})
    assert check(client, tfjob(namespace, workers=2)) == []
    [finding] = check(client, tfjob(namespace, workers=3))
    assert finding.rule == "quota-exceeded"
    assert "pods 3 in all" in finding.message


@pytest.fixture
def priority_class(cluster: Cluster) -> Iterator[str]:
    name = f"it-preflight-{uuid.uuid4().hex[:8]}"
    try:
        yield name
    finally:
        cluster.kubectl("delete", "priorityclass", name, "--ignore-not-found", check=False)


def test_missing_references(
    cluster: Cluster, client: Client, namespace: str, priority_class: str
) -> None:
    job = tfjob(namespace)
    spec = worker(job)
    spec["serviceAccountName"] = "trainer"
    spec["priorityClassName"] = priority_class
    spec["volumes"] = [
        {"name": "data", "persistentVolumeClaim": {"claimName": "imagenet"}},
        {"name": "conf", "configMap": {"name": "train-conf"}},
        {"name": "maybe", "secret": {"secretName": "not-needed", "optional": True}},
    ]
    container = spec["containers"][0]
    container["volumeMounts"] = [
        {"name": "data", "mountPath": "/data"},
        {"name": "conf", "mountPath": "/conf"},
        {"name": "maybe", "mountPath": "/maybe"},
    ]
    container["env"] = [
        {"name": "KEY", "valueFrom": {"secretKeyRef": {"name": "wandb", "key": "api-key"}}}
    ]
    found = by_path(check(client, job))
    expected = {
        f"{WORKER}.serviceAccountName": f"ServiceAccount {namespace}/trainer",
        f"{WORKER}.priorityClassName": f"PriorityClass {priority_class}",
        f"{WORKER}.volumes[0].persistentVolumeClaim.claimName": (
            f"PersistentVolumeClaim {namespace}/imagenet"
        ),
        f"{WORKER}.volumes[1].configMap.name": f"ConfigMap {namespace}/train-conf",
        f"{WORKER}.containers[0].env[0].valueFrom.secretKeyRef.name": f"Secret {namespace}/wandb",
    }
    assert set(found) == set(expected)
    for path, what in expected.items():
        assert found[path].rule == "missing-reference"
        assert found[path].message.startswith(f"{what} does not exist: ")
    # Once they exist, the same job passes.
    cluster.kubectl("create", "serviceaccount", "trainer", "-n", namespace)
    cluster.kubectl("create", "configmap", "train-conf", "-n", namespace)
    cluster.kubectl(
        "create", "secret", "generic", "wandb", "-n", namespace, "--from-literal=api-key=x"
    )
    cluster.kubectl("create", "priorityclass", priority_class, "--value=10")
    claim = {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": {"name": "imagenet", "namespace": namespace},
        "spec": {"accessModes": ["ReadOnlyMany"], "resources": {"requests": {"storage": "1Gi"}}},
    }
    cluster.kubectl("apply", "-f", "-", stdin=json.dumps(claim))
    assert check(client, job) == []


def test_missing_volcano_queue(client: Client, namespace: str) -> None:
    job = tfjob(namespace)
    job["spec"]["runPolicy"]["schedulingPolicy"] = {"queue": "default"}
    assert check(client, job) == []  # the PodGroup dry run passes, the queue exists
    job["spec"]["runPolicy"]["schedulingPolicy"] = {"queue": f"nowhere-{namespace}"}
    [finding] = check(client, job)
    assert finding.rule == "missing-reference"
    assert finding.path == "$.spec.runPolicy.schedulingPolicy.queue"
    assert finding.message.startswith(f"Volcano Queue nowhere-{namespace} does not exist")


def test_the_operators_webhook_judges_the_tfjob(client: Client, namespace: str) -> None:
    job = tfjob(namespace)
    worker(job)["containers"][0]["name"] = "main"  # the webhook wants a tensorflow container
    found = preflight.check(client, [preflight.Target("job.yaml", 1, job)], the_jobs=True)
    [finding] = [f for f in found if f.rule == "server-rejects-tfjob"]
    assert finding.severity == Severity.ERROR
    assert (
        'admission webhook "validator.tfjob.training-operator.kubeflow.org" denied the request'
        in finding.message
    )
    assert finding.path == "$.spec.tfReplicaSpecs.Worker.template.spec.containers"


@contextlib.contextmanager
def _admission_policy(
    cluster: Cluster, namespace: str, rule: dict[str, Any], expression: str, message: str
) -> Iterator[str]:
    """A ValidatingAdmissionPolicy on the resources rule names, denying what fails expression
    with message, bound to namespace only; deleted afterwards."""
    name = f"it-preflight-{namespace}"
    policy = {
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "ValidatingAdmissionPolicy",
        "metadata": {"name": name},
        "spec": {
            "failurePolicy": "Fail",
            "matchConstraints": {"resourceRules": [{**rule, "operations": ["CREATE"]}]},
            "validations": [{"expression": expression, "message": message}],
        },
    }
    binding = {
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "ValidatingAdmissionPolicyBinding",
        "metadata": {"name": name},
        "spec": {
            "policyName": name,
            "validationActions": ["Deny"],
            "matchResources": {
                "namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": namespace}}
            },
        },
    }
    try:
        cluster.kubectl(
            "apply",
            "-f",
            "-",
            stdin=json.dumps({"apiVersion": "v1", "kind": "List", "items": [policy, binding]}),
        )
        yield name
    finally:
        for kind in ("validatingadmissionpolicybinding", "validatingadmissionpolicy"):
            cluster.kubectl("delete", kind, name, "--ignore-not-found", check=False)


@pytest.fixture
def admission_policy(cluster: Cluster, namespace: str) -> Iterator[str]:
    """A ValidatingAdmissionPolicy on pods, bound to the test's namespace only."""
    with _admission_policy(
        cluster,
        namespace,
        {"apiGroups": [""], "apiVersions": ["v1"], "resources": ["pods"]},
        "object.spec.containers.all(c, c.image.startsWith('registry.example.com/'))",
        "images come from registry.example.com",
    ) as name:
        yield name


def test_an_admission_policy_on_pods_counts(
    cluster: Cluster, client: Client, namespace: str, admission_policy: str
) -> None:
    job = tfjob(namespace)
    worker(job)["containers"][0]["image"] = "docker.io/tensorflow/tensorflow:2.15.0"

    def denied() -> list[Finding]:
        return check(client, job)  # the policy takes effect within a second or two

    [finding] = cluster.wait_for("the admission policy to deny", denied, namespace, timeout=30)
    assert finding.rule == "server-rejects-pod"
    assert finding.path == WORKER
    assert f"ValidatingAdmissionPolicy '{admission_policy}'" in finding.message
    assert "images come from registry.example.com" in finding.message
    assert check(client, tfjob(namespace)) == []


def test_an_admission_policy_on_podgroups_counts_and_nothing_is_created(
    cluster: Cluster, namespace: str
) -> None:
    # A policy on Volcano's PodGroups (a custom resource): gangs of at most 2 pods here.
    rule = {
        "apiGroups": ["scheduling.volcano.sh"],
        "apiVersions": ["*"],
        "resources": ["podgroups"],
    }
    message = "gangs in this namespace are at most 2 pods"
    with (
        _admission_policy(cluster, namespace, rule, "object.spec.minMember <= 2", message) as name,
        Client(Connection(kubeconfig=str(cluster.kubeconfig))) as client,
    ):
        small, big = tfjob(namespace, "small", workers=2), tfjob(namespace, "big", workers=3)
        for job in (small, big):
            job["spec"]["runPolicy"]["schedulingPolicy"] = {"queue": "default"}

        def denied() -> list[Finding]:
            return check(client, big)  # the policy takes effect within a second or two

        [finding] = cluster.wait_for("the admission policy to deny", denied, namespace, timeout=30)
        assert finding.rule == "server-rejects-podgroup"
        assert finding.severity == Severity.ERROR
        assert finding.path == "$.spec.runPolicy.schedulingPolicy"
        assert finding.message.startswith(
            f"the API server rejects PodGroup {namespace}/big, which the operator creates for "
            f"the gang: ValidatingAdmissionPolicy '{name}' with binding '{name}' denied request: "
            f"{message}"
        )
        assert check(client, small) == []  # the pods and the PodGroup of a gang of 2 pass
        request = Request(
            definition=big,
            validate="warn",
            connection=Connection(kubeconfig=str(cluster.kubeconfig)),
        )
        with pytest.raises(TaskError) as failure:
            run(request)
    assert "nothing was applied" in str(failure.value)
    assert message in str(failure.value)
    assert tfjobs(cluster, namespace) == []
    assert cluster.items("podgroups.scheduling.volcano.sh", "-n", namespace) == []
    assert cluster.items("pods", "-n", namespace) == []


def _kubeconfig_for(cluster: Cluster, token: str, path: Path) -> Path:
    admin = yaml.safe_load(cluster.kubeconfig.read_text())
    entry = admin["clusters"][0]
    config = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [entry],
        "users": [{"name": "limited", "user": {"token": token}}],
        "contexts": [{"name": "limited", "context": {"cluster": entry["name"], "user": "limited"}}],
        "current-context": "limited",
    }
    path.write_text(yaml.safe_dump(config))
    return path


def test_credentials_that_may_not_create_pods_warn_and_go_on(
    cluster: Cluster, namespace: str, tmp_path: Path
) -> None:
    # Everything the preflight reads, but not pods/create nor services/create.
    token = cluster.service_account_token(
        namespace,
        "submitter",
        "submitter",
        "get,list",
        "secrets,configmaps,persistentvolumeclaims,serviceaccounts,resourcequotas",
    )
    kubeconfig = _kubeconfig_for(cluster, token, tmp_path / "limited.yaml")
    job = tfjob(namespace)
    worker(job)["volumes"] = [{"name": "conf", "configMap": {"name": "absent"}}]
    with Client(Connection(kubeconfig=str(kubeconfig))) as limited:
        found = by_path(check(limited, job))
    warning = found["$.spec.tfReplicaSpecs.Worker.template"]
    assert warning.rule == "preflight-incomplete"
    assert warning.severity == Severity.WARNING
    account = f"system:serviceaccount:{namespace}:submitter"
    assert f'user "{account}" may not create pods in namespace "{namespace}"' in warning.message
    services = found["$.spec.tfReplicaSpecs.Worker"]
    assert services.rule == "preflight-incomplete"
    assert f'may not create services in namespace "{namespace}"' in services.message
    assert "grant create on services in that namespace" in services.message
    # The rest of the preflight still ran.
    assert found[f"{WORKER}.volumes[0].configMap.name"].rule == "missing-reference"


def _validate(
    kubeconfig: Path, namespace: str, path: Path, *options: str
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [
            str(BIN / "tfjob-kit"),
            "validate",
            "--server",
            "--kubeconfig",
            str(kubeconfig),
            "-n",
            namespace,
            *options,
            str(path),
        ],
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )


def test_validate_server_cli(cluster: Cluster, namespace: str, tmp_path: Path) -> None:
    good = tmp_path / "good.yaml"
    good.write_text(yaml.safe_dump(tfjob(namespace)))
    proc = _validate(cluster.kubeconfig, namespace, good)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    job = tfjob(namespace)
    del job["metadata"]["namespace"]  # -n names it
    worker(job)["volumes"] = [{"name": "conf", "configMap": {"name": "absent"}}]
    bad = tmp_path / "bad.yaml"
    bad.write_text(yaml.safe_dump(job))
    proc = _validate(cluster.kubeconfig, namespace, bad)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert (
        f"{bad}:1:{WORKER}.volumes[0].configMap.name: [missing-reference] error: "
        f'ConfigMap {namespace}/absent does not exist: configmaps "absent" not found'
    ) in proc.stdout
    proc = _validate(tmp_path / "no-such-kubeconfig", namespace, good)
    assert proc.returncode == 2
    assert "--server: cannot use" in proc.stderr


def test_validate_server_and_the_module_judge_as_the_clusters_minor(
    cluster: Cluster, namespace: str, tmp_path: Path
) -> None:
    """Offline, `--server` and tfjob.kit.tfjob follow the server's minor (the session's cluster
    runs release.minor(): the default, or make test-versions' minor); --kubernetes-version wins.
    A lifecycle.stopSignal is dropped by every minor of the window (ContainerStopSignals is
    alpha), and the finding names the minor it judged as."""
    job = tfjob(namespace, "minor")
    worker(job)["containers"][0]["lifecycle"] = {"stopSignal": "SIGUSR1"}
    path = tmp_path / "minor.yaml"
    path.write_text(yaml.safe_dump(job))
    said = f"[field-dropped] warning: Kubernetes {release.minor()}'s API server drops this field"
    proc = _validate(cluster.kubeconfig, namespace, path)
    assert proc.returncode == 0 and said in proc.stdout, proc.stdout + proc.stderr
    other = next(m for m in reversed(release.window()) if m != release.minor())
    proc = _validate(cluster.kubeconfig, namespace, path, "--kubernetes-version", other)
    assert f"Kubernetes {other}'s API server drops" in proc.stdout, proc.stdout + proc.stderr
    result = run(
        Request(
            definition=job,
            validate="warn",
            check_mode=True,
            connection=Connection(kubeconfig=str(cluster.kubeconfig)),
        )
    )
    dropped = [f for f in result["findings"] if f["rule"] == "field-dropped"]
    assert len(dropped) == 1 and f"Kubernetes {release.minor()}'s" in dropped[0]["message"]


def test_module_with_the_preflight_on_and_off(
    cluster: Cluster, namespace: str, tmp_path: Path
) -> None:
    job = with_undefined_mount(tfjob(namespace, "hang"))
    task = {"definition": job, "validate": "warn"}
    result = run_tasks(
        tmp_path,
        cluster.kubeconfig,
        [
            {"tfjob.kit.tfjob": task},
            {"tfjob.kit.tfjob": task, "check_mode": True},
            {"tfjob.kit.tfjob": {**task, "preflight": False}},
        ],
    )
    on, checked, off = result[0], result[1], result[2]
    for failed in (on, checked):
        assert failed["failed"] is True
        assert (
            "nothing was applied; the preflight against the cluster found 1 problem"
            in (failed["msg"])
        )
        assert f"{WORKER}.containers[0].volumeMounts[0].name" in failed["msg"]
        assert 'Not found: "ckpt"' in failed["msg"]
    assert off.get("failed") is not True, off
    assert off["changed"] is True
    assert [j["metadata"]["name"] for j in tfjobs(cluster, namespace)] == ["hang"]


# --------------------------------------------------------------------------- site.yml's access
# site.yml's first preflight asks the API server (SelfSubjectAccessReviews, through
# tfjob.kit.access_info) whether the credentials may do what the bootstrap does; the oracle is
# the server's RBAC authorizer, given a ServiceAccount that may do only a little.

# A ClusterRole that allows two of what the bootstrap needs, and two near misses: the right
# resource with the wrong verb (get namespaces) and in the wrong API group (extensions
# daemonsets).
LITTLE = [
    {"apiGroups": [""], "resources": ["nodes"], "verbs": ["list"]},
    {"apiGroups": ["apps"], "resources": ["deployments"], "verbs": ["create"]},
    {"apiGroups": [""], "resources": ["namespaces"], "verbs": ["get"]},
    {"apiGroups": ["extensions"], "resources": ["daemonsets"], "verbs": ["create"]},
]
# What site.yml then names, in its order: everything else it asks about.
NOT_ALLOWED = (
    "create customresourcedefinitions, create clusterroles, create clusterrolebindings, "
    "create validatingwebhookconfigurations, create namespaces, create daemonsets"
)


@contextlib.contextmanager
def _cluster_wide_account(
    cluster: Cluster, namespace: str, rules: list[dict[str, Any]], path: Path
) -> Iterator[Path]:
    """A kubeconfig with the token of a new ServiceAccount whose ClusterRole has the rules
    (bound cluster-wide); the ClusterRole and its binding are removed afterwards (the account
    goes with the namespace)."""
    name = f"tfjob-kit-test-{namespace}"
    rbac = "rbac.authorization.k8s.io"
    account = {"kind": "ServiceAccount", "namespace": namespace, "name": "installer"}
    objects: list[dict[str, Any]] = [
        {
            "apiVersion": "v1",
            "kind": "ServiceAccount",
            "metadata": {"name": "installer", "namespace": namespace},
        },
        {
            "apiVersion": f"{rbac}/v1",
            "kind": "ClusterRole",
            "metadata": {"name": name},
            "rules": rules,
        },
        {
            "apiVersion": f"{rbac}/v1",
            "kind": "ClusterRoleBinding",
            "metadata": {"name": name},
            "roleRef": {"apiGroup": rbac, "kind": "ClusterRole", "name": name},
            "subjects": [account],
        },
    ]
    try:
        cluster.kubectl(
            "create",
            "-f",
            "-",
            stdin=json.dumps({"apiVersion": "v1", "kind": "List", "items": objects}),
        )
        token = cluster.kubectl("create", "token", "installer", "-n", namespace).stdout.strip()
        yield _kubeconfig_for(cluster, token, path)
    finally:
        cluster.kubectl(
            "delete",
            f"clusterrolebinding/{name}",
            f"clusterrole/{name}",
            "--ignore-not-found",
            check=False,
        )


def _site_preflight(kubeconfig: Path, *extra: str) -> tuple[int, str]:
    """site.yml with --tags preflight (its cluster preflight, nothing installed), against the
    session's cluster through the kubeconfig given."""
    proc = run_playbook(
        "site.yml",
        "--tags",
        "preflight",
        "-e",
        "tfjob_kit_local_cluster=false",
        "-e",
        f"tfjob_kit_kubeconfig={kubeconfig}",
        *extra,
        kubeconfig=kubeconfig,
        timeout=300,
    )
    return proc.returncode, proc.stdout + proc.stderr


def _failure(output: str) -> dict[str, Any]:
    """The one failed task's result, as the default callback prints it."""
    failed = [line for line in output.splitlines() if "FAILED! => " in line]
    assert len(failed) == 1, output[-4000:]
    result: dict[str, Any] = json.loads(failed[0].split("FAILED! => ", 1)[1])
    return result


def test_site_preflight_refuses_a_kubernetes_outside_the_window(cluster: Cluster) -> None:
    # The session's cluster runs the window's default minor; a window that ends below it (as
    # for a newer server) and one that starts above it (an older server) are refused alike.
    versions = load_versions()
    running = ".".join(versions.kube_minor)
    below = f"1.{int(versions.kube_minor[1]) - 1}"
    above = f"1.{int(versions.kube_minor[1]) + 1}"
    for extra in (f"tfjob_kit_max_kubernetes={below}", f"tfjob_kit_min_kubernetes={above}"):
        rc, output = _site_preflight(cluster.kubeconfig, "-e", extra)
        assert rc == 2, output[-4000:]
        message = _failure(output)["msg"]
        assert message.startswith(f"the cluster runs Kubernetes {running}."), message
        assert "(make test-versions)" in message and "tfjob_kit_max_kubernetes" in message
    assert versions.in_window(running)


def test_site_preflight_names_each_permission_the_credentials_lack(
    cluster: Cluster, namespace: str, tmp_path: Path
) -> None:
    with _cluster_wide_account(cluster, namespace, LITTLE, tmp_path / "little.yaml") as little:
        # Check mode too: the reviews store nothing, so they are made.
        for extra in ((), ("--check",)):
            rc, output = _site_preflight(little, *extra)
            assert rc == 2, output[-4000:]
            assert "TASK [Preflight - the permissions the bootstrap needs]" in output
            message = _failure(output)["msg"]
            assert message.startswith(f"these credentials may not {NOT_ALLOWED}; "), message
            assert "cluster administrator's kubeconfig" in message
    rc, output = _site_preflight(cluster.kubeconfig)
    assert rc == 0, output[-4000:]
    assert "TASK [Preflight - the permissions the bootstrap needs]" in output
    assert "TASK [Preflight - no admission webhook left behind" in output
    assert "Install the gang scheduler" not in output  # --tags preflight stops there


def test_access_info_asks_each_review_as_given(
    cluster: Cluster, namespace: str, tmp_path: Path
) -> None:
    token = cluster.service_account_token(namespace, "submitter", "submitter", "create", "pods")
    kubeconfig = _kubeconfig_for(cluster, token, tmp_path / "limited.yaml")
    reviews = [
        {"verb": "create", "resource": "pods", "namespace": namespace},
        {"verb": "create", "resource": "pods"},  # cluster-wide: the Role does not reach there
        {"verb": "create", "resource": "pods", "namespace": "default"},
        {"verb": "delete", "resource": "pods", "namespace": namespace},
        {"verb": "create", "resource": "pods", "subresource": "eviction", "namespace": namespace},
    ]
    result = run_tasks(
        tmp_path,
        kubeconfig,
        [
            {"tfjob.kit.access_info": {"reviews": reviews}},
            {"tfjob.kit.access_info": {"reviews": [{"resource": "pods"}]}},
        ],
    )
    answered, malformed = result[0], result[1]
    assert answered.get("failed") is not True, answered
    assert answered["changed"] is False
    assert [r["allowed"] for r in answered["reviews"]] == [True, False, False, False, False]
    assert answered["denied"] == answered["reviews"][1:]
    assert answered["reviews"][0]["description"] == f"create pods in namespace '{namespace}'"
    assert "RBAC: allowed by RoleBinding" in answered["reviews"][0]["reason"]
    assert malformed["failed"] is True
    assert "verb" in malformed["msg"]
