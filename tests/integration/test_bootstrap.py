"""playbooks/site.yml, submit.yml and teardown.yml with inventories/local, on the local cluster:
idempotent bootstrap, least-privilege operator, Volcano gang scheduling of GPU jobs, and a
teardown that leaves the cluster as it found it."""

from __future__ import annotations

import os
import subprocess
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
import yaml

from snippets import block
from tfjob_kit.cluster.build import helm_path

from ._ansible import BIN, REPO, ansible_env, run_playbook, run_readme_shell
from ._cluster import Cluster

# The operator's namespace: the role's default, a namespace of its own (SECURITY.md).
OPERATOR_NS = yaml.safe_load((REPO / "roles/training_operator/defaults/main.yml").read_text())[
    "training_operator_namespace"
]
OPERATOR = f"system:serviceaccount:{OPERATOR_NS}:training-operator"
VERBS = ("get", "list", "watch", "create", "update", "patch", "delete", "deletecollection")
KINDS = (
    "namespaces",
    "crds",
    "clusterroles",
    "clusterrolebindings",
    "validatingwebhookconfigurations",
    "mutatingwebhookconfigurations",
)


def playbook(cluster: Cluster, name: str, *extra: str, inventory: str = "inventories/local") -> str:
    """Run playbooks/<name> against the session's cluster: with inventories/local, the local
    cluster by name (or by kubeconfig when the session uses an external one); with another
    inventory, by kubeconfig."""
    env = ansible_env(cluster.kubeconfig)
    if inventory != "inventories/local":  # a real cluster's inventory: helm is on PATH
        target = ["-e", f"tfjob_kit_kubeconfig={cluster.kubeconfig}"]
        env["PATH"] = f"{helm_path().parent}{os.pathsep}{env['PATH']}"
    elif cluster.name:
        target = ["-e", f"local_cluster_name={cluster.name}"]
    else:  # an external cluster (TFJOB_KIT_KUBECONFIG): no embedded cluster to start
        target = [
            "-e",
            "tfjob_kit_local_cluster=false",
            "-e",
            f"tfjob_kit_kubeconfig={cluster.kubeconfig}",
            "-e",
            f"local_cluster_helm={helm_path()}",
        ]
    proc = run_playbook(
        name,
        *target,
        *extra,
        kubeconfig=cluster.kubeconfig,
        inventory=inventory,
        env=env,
        timeout=1200,
    )
    output = proc.stdout + proc.stderr
    assert proc.returncode == 0, output[-8000:]
    return output


def recap_changed(output: str) -> int:
    line = next(x for x in output.splitlines() if x.startswith("localhost "))
    return int(line.split("changed=")[1].split()[0])


def snapshot(cluster: Cluster) -> dict[str, set[str]]:
    """Cluster-wide objects by kind (test namespaces, created and removed by other tests
    without waiting, are left out)."""
    return {
        kind: {
            o["metadata"]["name"]
            for o in cluster.items(kind)
            if not (kind == "namespaces" and o["metadata"]["name"].startswith("it-"))
        }
        for kind in KINDS
    }


# The README's bootstrap block: site.yml, submit.yml with examples/gang, teardown.yml, one line
# each, run as written (``bootstrapped`` runs the first and the last, around this file's tests).
README_SITE, README_SUBMIT, README_TEARDOWN = block(
    "test tests/integration/test_bootstrap.py::test_readme_bootstrap_commands"
).splitlines()


def readme_line(cluster: Cluster, line: str, name: str) -> str:
    """One line of the README's bootstrap block, as a user runs it in a shell: inventories/local
    finds the session's cluster by ``TFJOB_KIT_CLUSTER``. On an external cluster
    (``TFJOB_KIT_KUBECONFIG``, no cluster name) the same playbook runs by kubeconfig."""
    assert line.startswith(f"ansible-playbook -i inventories/local playbooks/{name} "), line
    if not cluster.name:
        extra = line.split("#", 1)[0].split()[4:]
        return playbook(cluster, name, *extra)
    return run_readme_shell(line, cluster.kubeconfig, cluster.name)


@pytest.fixture(scope="module")
def bootstrapped(cluster: Cluster) -> Iterator[dict[str, Any]]:
    """The README's site.yml line, site.yml again, this file's tests, the README's teardown."""
    before = snapshot(cluster)
    first = readme_line(cluster, README_SITE, "site.yml")
    second = playbook(cluster, "site.yml")
    state: dict[str, Any] = {"before": before, "first": first, "second": second}
    yield state
    state["teardown"] = readme_line(cluster, README_TEARDOWN, "teardown.yml")
    assert "nothing the toolkit installed is left" in state["teardown"]
    after = snapshot(cluster)
    assert after == before, {k: (before[k] ^ after[k]) for k in KINDS if before[k] != after[k]}


def test_site_twice_changes_nothing_the_second_time(bootstrapped: dict[str, Any]) -> None:
    assert recap_changed(bootstrapped["first"]) > 0
    assert recap_changed(bootstrapped["second"]) == 0, bootstrapped["second"][-3000:]
    assert "Succeeded" in bootstrapped["second"]  # the smoke TFJob ran again, to the end


def test_readme_bootstrap_commands(cluster: Cluster, bootstrapped: dict[str, Any]) -> None:
    """The README's submit.yml line on the bootstrapped cluster: every TFJob of examples/gang
    applied and waited for until it succeeds (its site.yml and teardown.yml lines are this
    file's fixture: the first run, and the teardown that must leave the cluster as it was)."""
    try:
        output = readme_line(cluster, README_SUBMIT, "submit.yml")
        assert recap_changed(output) > 0 and "failed=0" in output, output[-4000:]
        jobs = {j["metadata"]["name"]: j for j in cluster.items("tfjobs", "-n", "default")}
        gang = (REPO / "examples" / "gang").glob("*.yaml")
        expected = {yaml.safe_load(p.read_text())["metadata"]["name"] for p in gang}
        assert set(jobs) >= expected, (sorted(jobs), sorted(expected))
        for name in expected:
            conditions = jobs[name].get("status", {}).get("conditions", [])
            assert any(c["type"] == "Succeeded" and c["status"] == "True" for c in conditions), name
    finally:
        cluster.kubectl("delete", "tfjobs", "--all", "-n", "default", "--wait=false", check=False)


def _can(cluster: Cluster, verb: str, resource: str, namespace: str | None) -> bool:
    name, _, sub = resource.partition("/")
    args = ["auth", "can-i", verb, name, "--as", OPERATOR]
    args += ["--subresource", sub] if sub else []
    args += ["-n", namespace] if namespace else ["--all-namespaces"]
    return cluster.kubectl(*args, check=False).stdout.strip() == "yes"


def _grants(rules: list[dict[str, Any]]) -> dict[str, set[str]]:
    grants: dict[str, set[str]] = {}
    for rule in rules:
        if rule.get("resourceNames"):
            continue  # named objects only: checked below through the broad verbs they lack
        for group in rule.get("apiGroups", []):
            for resource in rule.get("resources", []):
                key = f"{resource.split('/')[0]}.{group}".rstrip(".") + (
                    f"/{resource.split('/')[1]}" if "/" in resource else ""
                )
                grants.setdefault(key, set()).update(rule["verbs"])
    return grants


def test_operator_can_do_exactly_what_its_roles_list(
    cluster: Cluster, bootstrapped: dict[str, Any]
) -> None:
    role = cluster.get("clusterrole", "training-operator")
    bindings = cluster.items("clusterrolebindings")
    assert not [
        b
        for b in bindings
        if b["roleRef"]["name"] == "cluster-admin"
        and any(s.get("kind") == "ServiceAccount" for s in b.get("subjects") or [])
    ]
    grants = _grants(role["rules"])
    assert grants and all("*" not in verbs for verbs in grants.values())
    # Rules for resources this cluster does not serve (scheduler-plugins' PodGroups, for a
    # scheduler not installed) cannot be asked about; the rest are.
    served = set(cluster.kubectl("api-resources", "-o", "name").stdout.split())
    grants = {r: v for r, v in grants.items() if r.split("/")[0] in served}
    assert "tfjobs.kubeflow.org" in grants and "podgroups.scheduling.volcano.sh" in grants
    checks = [
        (verb, resource, "default", verb in verbs)
        for resource, verbs in grants.items()
        for verb in VERBS
    ]
    namespaced = _grants(cluster.get("role", "training-operator", "-n", OPERATOR_NS)["rules"])
    checks += [
        (verb, resource, OPERATOR_NS, True)
        for resource, verbs in namespaced.items()
        for verb in verbs
    ]
    with ThreadPoolExecutor(8) as pool:
        answers = list(pool.map(lambda c: _can(cluster, c[0], c[1], c[2]), checks))
    wrong = [
        (verb, resource, ns, expected)
        for (verb, resource, ns, expected), got in zip(checks, answers, strict=True)
        if got != expected
    ]
    assert not wrong, f"can-i disagrees with the roles (verb, resource, namespace, listed): {wrong}"
    for verb, resource in (
        ("delete", "nodes"),
        ("get", "secrets"),
        ("create", "clusterroles"),
        ("impersonate", "users"),
    ):
        assert not _can(cluster, verb, resource, "default"), f"operator can {verb} {resource}"


def gpu_job(name: str, namespace: str) -> dict[str, Any]:
    return {
        "apiVersion": "kubeflow.org/v1",
        "kind": "TFJob",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {
            "runPolicy": {"cleanPodPolicy": "None", "schedulingPolicy": {"minAvailable": 6}},
            "tfReplicaSpecs": {
                "Worker": {
                    "replicas": 6,
                    "restartPolicy": "Never",
                    "template": {
                        "spec": {
                            "containers": [
                                {
                                    "name": "tensorflow",
                                    "image": "registry.example.com/resnet:1",
                                    "resources": {
                                        "limits": {"nvidia.com/gpu": 1, "cpu": "1", "memory": "1Gi"}
                                    },
                                }
                            ]
                        }
                    },
                }
            },
        },
    }


def test_volcano_runs_gpu_jobs_one_after_the_other(
    cluster: Cluster, namespace: str, tmp_path: Path, bootstrapped: dict[str, Any]
) -> None:
    """Two jobs of 6 GPUs each on 8 GPUs: gang scheduling places one whole job, then the other;
    never a part of both (the default scheduler would place 6 + 2 and deadlock)."""
    jobs = tmp_path / "jobs"
    jobs.mkdir()
    for name in ("gang-a", "gang-b"):
        (jobs / f"{name}.yaml").write_text(yaml.safe_dump(gpu_job(name, namespace)))
    playbook(
        cluster, "submit.yml", "-e", f"tfjob_kit_jobs_dir={jobs}", "-e", "tfjob_kit_wait=false"
    )
    running_together = []
    groups: dict[str, dict[str, Any]] = {}  # the operator deletes them when a job ends
    deadline = time.monotonic() + 240
    while time.monotonic() < deadline:
        pods = cluster.items("pods", "-n", namespace)
        active: dict[str, int] = {}
        for pod in pods:
            if pod["spec"].get("nodeName") and pod["status"].get("phase") in ("Pending", "Running"):
                job = pod["metadata"]["labels"]["training.kubeflow.org/job-name"]
                active[job] = active.get(job, 0) + 1
        if len(active) > 1:
            running_together.append(active)
        for group in cluster.items("podgroups.scheduling.volcano.sh", "-n", namespace):
            groups.setdefault(group["metadata"]["name"], group)
        states = {
            j["metadata"]["name"]: [
                c["type"]
                for c in j.get("status", {}).get("conditions", [])
                if c["status"] == "True"
            ]
            for j in cluster.items("tfjobs", "-n", namespace)
        }
        if all("Succeeded" in s for s in states.values()) and len(states) == 2:
            break
        time.sleep(0.3)
    else:
        raise AssertionError(
            f"the jobs did not both succeed: {states}\n{cluster.diagnostics(namespace)}"
        )
    assert not running_together, f"both jobs held GPUs at once: {running_together[:3]}"
    assert set(groups) == {"gang-a", "gang-b"}
    for name, group in groups.items():
        assert group["spec"]["minMember"] == 6
        assert group["metadata"]["ownerReferences"][0]["kind"] == "TFJob", name


LEFTOVER_WEBHOOK: dict[str, Any] = {
    "apiVersion": "admissionregistration.k8s.io/v1",
    "kind": "ValidatingWebhookConfiguration",
    "metadata": {"name": "volcano-admission-service-pods-validate"},
    "webhooks": [
        {
            "name": "validatepod.volcano.sh",
            "admissionReviewVersions": ["v1"],
            "sideEffects": "None",
            "failurePolicy": "Ignore",
            "clientConfig": {
                "service": {
                    "name": "volcano-admission-service",
                    "namespace": "volcano-system",
                    "path": "/pods/validate",
                }
            },
            "rules": [
                {
                    "apiGroups": [""],
                    "apiVersions": ["v1"],
                    "operations": ["CREATE"],
                    "resources": ["pods"],
                }
            ],
        }
    ],
}


USERS_NAMESPACE = {
    "apiVersion": "v1",
    "kind": "Namespace",
    "metadata": {
        "name": OPERATOR_NS,
        "labels": {"team": "ml-platform", "pod-security.kubernetes.io/enforce": "baseline"},
        "annotations": {"example.com/owner": "platform-team"},
    },
}
# A full Kubeflow keeps its Secrets in `kubeflow`, the operator's default namespace before.
KUBEFLOW = [
    {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "kubeflow"}},
    {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": "mysql-secret", "namespace": "kubeflow"},
        "stringData": {"password": "kubeflow-db"},
    },
]
USERS_CONFIGMAP = {
    "apiVersion": "v1",
    "kind": "ConfigMap",
    "metadata": {
        "name": "platform-config",
        "namespace": OPERATOR_NS,
        "labels": {"app": "platform"},
    },
    "data": {"profile": "full"},
}


def test_example_inventory_installs_and_teardown_removes_everything(bare_cluster: Cluster) -> None:
    """inventories/example (a real cluster's), on a cluster without the local addons: site.yml
    installs the CRDs and charts; teardown (keep_crds false there) leaves the cluster as it
    found it. What a simulated cluster cannot do is switched off: the GPU hosts are not
    reachable (--limit localhost), the charts' webhook and operator pods are simulated (no
    webhooks, no smoke job), and the context is the kubeconfig's own.

    The cluster holds what is the user's: the operator's namespace, made by a platform team
    before the install with labels of its own and a ConfigMap, which site.yml neither relabels
    nor teardown deletes (its labels, annotations, uid
    and the user's objects in it stay; the toolkit's release in it goes, and so does the
    namespace the toolkit created itself, nvidia-device-plugin), and a webhook configuration an
    upstream Volcano install left, which teardown names and leaves."""
    before = snapshot(bare_cluster)
    assert "tfjobs.kubeflow.org" not in before["crds"]
    assert not {OPERATOR_NS, "kubeflow"} & before["namespaces"]
    bare_cluster.kubectl(
        "apply", "-f", "-", stdin=yaml.safe_dump_all([USERS_NAMESPACE, USERS_CONFIGMAP, *KUBEFLOW])
    )
    namespace = bare_cluster.get("namespace", OPERATOR_NS)
    example = (
        "-e",
        "tfjob_kit_context=",
        "--limit",
        "localhost",
        "-e",
        "training_operator_webhook_enabled=false",
    )
    options = ("-e", "tfjob_kit_scheduler=none", "-e", "tfjob_kit_smoke_test=false", *example)
    leftover = f"ValidatingWebhookConfiguration/{LEFTOVER_WEBHOOK['metadata']['name']}"
    try:
        playbook(bare_cluster, "site.yml", *options, inventory="inventories/example")
        installed = snapshot(bare_cluster)
        assert {"tfjobs.kubeflow.org"} <= installed["crds"]
        assert {OPERATOR_NS, "nvidia-device-plugin"} <= installed["namespaces"]
        users = bare_cluster.get("namespace", OPERATOR_NS)
        assert users["metadata"]["labels"] == namespace["metadata"]["labels"]
        assert users["metadata"].get("annotations") == namespace["metadata"].get("annotations")
        created = bare_cluster.get("namespace", "nvidia-device-plugin")
        assert created["metadata"]["annotations"]["tfjob-kit.io/created-by"] == "tfjob-kit"
        assert bare_cluster.items("deployments", "-n", OPERATOR_NS)  # the operator went there
        # Its rotator may list the Secrets of its own namespace only, and there are only its own
        # and Helm's; a full Kubeflow's are out of its reach.
        assert {
            x["metadata"]["name"].rsplit(".", 1)[0]
            for x in bare_cluster.items("secrets", "-n", OPERATOR_NS)
        } == {"training-operator-webhook-cert", "sh.helm.release.v1.training-operator"}
        assert _can(bare_cluster, "list", "secrets", OPERATOR_NS)
        for verb in ("get", "list", "watch"):
            assert not _can(bare_cluster, verb, "secrets", "kubeflow"), verb
        # What an upstream Volcano install leaves behind (its admission pod registers these at
        # runtime, outside any release). It is not the toolkit's: teardown names it and leaves it.
        bare_cluster.kubectl("apply", "-f", "-", stdin=yaml.safe_dump(LEFTOVER_WEBHOOK))

        output = playbook(bare_cluster, "teardown.yml", *example, inventory="inventories/example")
        assert "nothing the toolkit installed is left" in output
        assert f"left as they are, not the toolkit's: {leftover}." in " ".join(output.split())
        kept = bare_cluster.get("namespace", OPERATOR_NS)
        assert kept["metadata"]["uid"] == namespace["metadata"]["uid"]
        assert kept["metadata"]["labels"] == namespace["metadata"]["labels"]
        assert kept["metadata"].get("annotations") == namespace["metadata"].get("annotations")
        assert "deletionTimestamp" not in kept["metadata"]
        config = bare_cluster.get("configmap", "platform-config", "-n", OPERATOR_NS)
        assert config["data"] == {"profile": "full"}
        left = [
            f"{kind}/{o['metadata']['name']}"
            for kind in (
                "deployments",
                "services",
                "serviceaccounts",
                "roles",
                "rolebindings",
                "secrets",
                "configmaps",
            )
            for o in bare_cluster.items(kind, "-n", OPERATOR_NS)
            if kind != "configmaps" or o["metadata"]["name"] != "platform-config"
        ]
        assert [
            x
            for x in left
            if not x.startswith(("serviceaccounts/default", "configmaps/kube-root-ca.crt"))
        ] == []
        after = snapshot(bare_cluster)
        assert after == {
            **before,
            "namespaces": before["namespaces"] | {OPERATOR_NS, "kubeflow"},
            "validatingwebhookconfigurations": before["validatingwebhookconfigurations"]
            | {LEFTOVER_WEBHOOK["metadata"]["name"]},
        }
    finally:
        bare_cluster.kubectl(
            "delete", "validatingwebhookconfiguration", leftover.split("/")[1], "--ignore-not-found"
        )
        for ns in (OPERATOR_NS, "kubeflow"):
            bare_cluster.kubectl("delete", "namespace", ns, "--ignore-not-found", "--wait=true")
    assert snapshot(bare_cluster) == before


CERT_NOT_AFTER = "volcano.tfjob-kit.io/certificate-not-after"


def _short_lived_certificate(days: int) -> tuple[bytes, bytes]:
    """A self-signed certificate and key that expire in `days` days (PEM)."""
    from datetime import UTC, datetime, timedelta

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "short-lived")])
    now = datetime.now(UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - timedelta(days=1))
        .not_valid_after(now + timedelta(days=days))
        .sign(key, hashes.SHA256())
    )
    return (
        cert.public_bytes(serialization.Encoding.PEM),
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        ),
    )


def test_volcano_admission_certificate_is_rotated_before_it_expires_and_checked(
    bare_cluster: Cluster, tmp_path: Path
) -> None:
    """`helm upgrade` keeps the webhooks' certificate while it has more than
    certRenewBeforeDays left, and makes a new one when it is closer to expiry or carries no
    recorded expiry (an older chart's 10-year certificate). The volcano role's check passes on
    a fresh certificate and fails, naming the Secret and the date, on one that expires soon."""
    import base64
    from datetime import UTC, datetime, timedelta

    namespace, release = "it-volcano-cert", "vccert"
    helm = [str(helm_path()), "--kubeconfig", str(bare_cluster.kubeconfig), "-n", namespace]
    # Only the webhook server and its Secret/configurations: no CRDs on the bare cluster.
    install = [
        *helm,
        "upgrade",
        "--install",
        release,
        str(REPO / "charts" / "volcano"),
        "--skip-crds",
        "--create-namespace",
        "--set",
        "scheduler.enabled=false",
        "--set",
        "controllers.enabled=false",
        "--set-json",
        "queues=[]",
    ]
    secret_name = f"{release}-volcano-admission-tls"

    def upgrade() -> dict[str, Any]:
        subprocess.run(install, check=True, capture_output=True, text=True, timeout=300)
        secret: dict[str, Any] = bare_cluster.get("secret", secret_name, "-n", namespace)
        return secret

    def check_role() -> subprocess.CompletedProcess[str]:
        play = [
            {
                "name": "Check",
                "hosts": "localhost",
                "gather_facts": False,
                "tasks": [
                    {
                        "name": "Check the certificate",
                        "ansible.builtin.include_role": {
                            "name": "tfjob.kit.volcano",
                            "tasks_from": "certificate.yml",
                        },
                        "vars": {"volcano_namespace": namespace, "volcano_release": release},
                    }
                ],
            }
        ]
        (tmp_path / "check.yml").write_text(yaml.safe_dump(play))
        return subprocess.run(
            [
                str(BIN / "ansible-playbook"),
                "-i",
                "localhost,",
                "-c",
                "local",
                "-e",
                f"ansible_python_interpreter={BIN / 'python'}",
                str(tmp_path / "check.yml"),
            ],
            cwd=REPO,
            env=ansible_env(bare_cluster.kubeconfig),
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )

    try:
        first = upgrade()
        ends = datetime.fromisoformat(first["metadata"]["annotations"][CERT_NOT_AFTER])
        assert abs(ends - datetime.now(UTC) - timedelta(days=365)) < timedelta(minutes=5)
        assert upgrade()["data"] == first["data"]  # far from expiry: kept, nothing rolls
        checked = check_role()
        assert checked.returncode == 0, checked.stdout[-3000:]
        assert "is valid until" in checked.stdout

        soon = (datetime.now(UTC) + timedelta(days=10)).strftime("%Y-%m-%dT%H:%M:%SZ")
        bare_cluster.kubectl(
            "annotate",
            "secret",
            secret_name,
            "-n",
            namespace,
            "--overwrite",
            f"{CERT_NOT_AFTER}={soon}",
        )
        rotated = upgrade()
        assert rotated["data"]["tls.crt"] != first["data"]["tls.crt"]
        assert rotated["data"]["ca.crt"] != first["data"]["ca.crt"]
        assert rotated["metadata"]["annotations"][CERT_NOT_AFTER] > soon
        hook = bare_cluster.get(
            "validatingwebhookconfiguration", "volcano-admission-service-jobs-validate"
        )
        assert hook["webhooks"][0]["clientConfig"]["caBundle"] == rotated["data"]["ca.crt"]

        bare_cluster.kubectl(
            "annotate", "secret", secret_name, "-n", namespace, f"{CERT_NOT_AFTER}-"
        )
        assert upgrade()["data"]["tls.crt"] != rotated["data"]["tls.crt"]  # no record: renewed

        cert, key = _short_lived_certificate(days=10)
        patch = {
            "data": {
                "tls.crt": base64.b64encode(cert).decode(),
                "tls.key": base64.b64encode(key).decode(),
            }
        }
        bare_cluster.kubectl(
            "patch",
            "secret",
            secret_name,
            "-n",
            namespace,
            "--type",
            "merge",
            "-p",
            yaml.safe_dump(patch),
        )
        checked = check_role()
        assert checked.returncode != 0
        assert f"Secret {namespace}/{secret_name}" in checked.stdout
        assert "within 30 days" in checked.stdout
        assert "BEGIN" not in checked.stdout  # the key is never printed
    finally:
        subprocess.run(
            [*helm, "uninstall", release, "--wait"], capture_output=True, check=False, timeout=300
        )
        bare_cluster.kubectl("delete", "namespace", namespace, "--ignore-not-found", "--wait=true")
