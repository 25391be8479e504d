"""The issue-3 acceptance tests: the local cluster runs real workloads end to end."""

from __future__ import annotations

import json
import re
import textwrap
from pathlib import Path
from typing import Any

import yaml

from tfjob_kit import explain
from tfjob_kit.cluster import local

from ._cluster import Cluster

GPU = "nvidia.com/gpu"


def _condition(obj: dict[str, Any], kind: str) -> bool:
    return any(
        c.get("type") == kind and c.get("status") == "True"
        for c in obj.get("status", {}).get("conditions") or []
    )


def _tfjob(
    name: str,
    replicas: dict[str, int],
    *,
    restart_policy: str = "Never",
    annotations: dict[str, dict[str, str]] | None = None,
    gpus: int = 0,
) -> str:
    """A TFJob manifest as a user would write it (YAML text)."""
    specs: dict[str, Any] = {}
    for rtype, count in replicas.items():
        resources: dict[str, Any] = {"requests": {"cpu": "100m"}}
        if gpus:
            resources["limits"] = {GPU: gpus}
        template: dict[str, Any] = {
            "spec": {
                "containers": [
                    {
                        "name": "tensorflow",
                        "image": "docker.io/tensorflow/tensorflow:2.16.1",
                        "command": ["python", "-c", "print('simulated')"],
                        "resources": resources,
                    }
                ]
            }
        }
        if annotations and rtype in annotations:
            template["metadata"] = {"annotations": annotations[rtype]}
        specs[rtype] = {"replicas": count, "restartPolicy": restart_policy, "template": template}
    doc = {
        "apiVersion": "kubeflow.org/v1",
        "kind": "TFJob",
        "metadata": {"name": name},
        "spec": {"runPolicy": {"cleanPodPolicy": "None"}, "tfReplicaSpecs": specs},
    }
    return yaml.safe_dump(doc, sort_keys=False)


def _write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / f"{name}.yaml"
    path.write_text(text)
    return path


def _pods(cluster: Cluster, namespace: str, job: str) -> list[dict[str, Any]]:
    return cluster.items("pods", "-n", namespace, "-l", f"training.kubeflow.org/job-name={job}")


def _tfjob_status(cluster: Cluster, namespace: str, job: str) -> dict[str, Any]:
    result: dict[str, Any] = cluster.get("tfjob", "-n", namespace, job)
    return result


def _count(items: list[dict[str, Any]], n: int) -> list[dict[str, Any]] | None:
    return items if len(items) == n else None


def _with_condition(cluster: Cluster, namespace: str, job: str, kind: str) -> dict[str, Any] | None:
    status = _tfjob_status(cluster, namespace, job)
    return status if _condition(status, kind) else None


def test_gpu_nodes_advertise_gpus(cluster: Cluster) -> None:
    gpu_nodes = cluster.items("nodes", "-l", "nvidia.com/gpu.present=true")
    assert gpu_nodes, "no GPU nodes"
    for node in gpu_nodes:
        labels = node["metadata"]["labels"]
        assert node["metadata"]["annotations"]["kwok.x-k8s.io/node"] == "fake"
        assert labels["feature.node.kubernetes.io/pci-10de.present"] == "true"
        allocatable = int(node["status"]["allocatable"][GPU])
        assert allocatable > 0
        assert labels["nvidia.com/gpu.count"] == str(allocatable)
        assert _condition(node, "Ready")
    cpu_nodes = cluster.items("nodes", "-l", "tfjob-kit.dev/node-kind=cpu")
    assert all(GPU not in n["status"]["allocatable"] for n in cpu_nodes)


def test_deployment_pods_run_on_fake_nodes(cluster: Cluster, namespace: str) -> None:
    cluster.kubectl(
        "create", "deployment", "web", "-n", namespace, "--image=nginx:1.27", "--replicas=3"
    )
    fake = {n["metadata"]["name"] for n in cluster.items("nodes", "-l", "type=kwok")}

    def running() -> list[dict[str, Any]] | None:
        pods = cluster.items("pods", "-n", namespace, "-l", "app=web")
        ok = [p for p in pods if p["status"].get("phase") == "Running" and _condition(p, "Ready")]
        return pods if len(ok) == 3 else None

    pods = cluster.wait_for("3 Running deployment pods", running, namespace)
    assert {p["spec"]["nodeName"] for p in pods} <= fake
    cluster.kubectl("rollout", "status", "deployment/web", "-n", namespace, "--timeout=60s")


def test_tfjob_ps_workers_gets_pods_services_tf_config_and_succeeds(
    cluster: Cluster, namespace: str, tmp_path: Path
) -> None:
    job = "dist-mnist"
    text = _tfjob(job, {"PS": 1, "Worker": 2})
    manifest = yaml.safe_load(text)
    cluster.apply_file(_write(tmp_path, job, text), namespace)

    def three_pods() -> list[dict[str, Any]] | None:
        pods = _pods(cluster, namespace, job)
        return pods if len(pods) == 3 else None

    pods = cluster.wait_for("3 TFJob pods", three_pods, namespace)
    services = cluster.wait_for(
        "3 services",
        lambda: _count(cluster.items("services", "-n", namespace), 3),
        namespace,
    )
    names = sorted(p["metadata"]["name"] for p in pods)
    assert names == [f"{job}-ps-0", f"{job}-worker-0", f"{job}-worker-1"]
    assert sorted(s["metadata"]["name"] for s in services) == names
    assert all(s["spec"].get("clusterIP") == "None" for s in services), "not headless"

    # Ground truth written out by hand, and the library's prediction (`tfjob-kit explain`):
    # the operator-injected value must equal both (the library's byte for byte).
    cluster_spec = {
        "ps": [f"{job}-ps-0.{namespace}.svc:2222"],
        "worker": [f"{job}-worker-{i}.{namespace}.svc:2222" for i in range(2)],
    }
    for pod in pods:
        labels = pod["metadata"]["labels"]
        rtype = labels["training.kubeflow.org/replica-type"]
        index = int(labels["training.kubeflow.org/replica-index"])
        container = next(c for c in pod["spec"]["containers"] if c["name"] == "tensorflow")
        env = {e["name"]: e.get("value") for e in container.get("env", [])}
        assert json.loads(env["TF_CONFIG"]) == {
            "cluster": cluster_spec,
            "task": {"type": rtype, "index": index},
            "environment": "cloud",
        }
        assert env["TF_CONFIG"] == explain.tf_config(manifest, rtype, index, namespace)

    # The operator writes the Succeeded condition from the replica counts it last saw (a worker
    # may still count as active), and its next reconcile of the finished job moves what is
    # active to succeeded (common/job.go, ReconcileJobs): wait for that status.
    def settled() -> dict[str, Any] | None:
        status = _with_condition(cluster, namespace, job, "Succeeded")
        workers = ((status or {}).get("status") or {}).get("replicaStatuses", {}).get("Worker", {})
        return status if status and not workers.get("active") else None

    final = cluster.wait_for("TFJob Succeeded, no replica active", settled, namespace, timeout=120)
    assert final["status"]["replicaStatuses"]["Worker"].get("succeeded") == 2


def test_exit_code_137_is_retried(cluster: Cluster, namespace: str, tmp_path: Path) -> None:
    job = "retry137"
    manifest = _tfjob(
        job,
        {"Worker": 1},
        restart_policy="ExitCode",
        annotations={"Worker": {"tfjob-kit.dev/exit-code": "137"}},
    )
    cluster.apply_file(_write(tmp_path, job, manifest), namespace)
    first = cluster.wait_for("the worker pod", lambda: _pods(cluster, namespace, job), namespace)[
        0
    ]["metadata"]["uid"]

    def restarted() -> dict[str, Any] | None:
        status = _tfjob_status(cluster, namespace, job)
        uids = {p["metadata"]["uid"] for p in _pods(cluster, namespace, job)}
        return status if _condition(status, "Restarting") and uids and first not in uids else None

    # The first pod fails with 137 (retryable): the operator deletes and recreates it.
    status = cluster.wait_for("a Restarting condition and a new pod", restarted, namespace)
    assert not _condition(status, "Failed")
    cluster.kubectl("delete", "tfjob", "-n", namespace, job, "--wait=false")


def test_exit_code_1_fails_the_job(cluster: Cluster, namespace: str, tmp_path: Path) -> None:
    job = "fail1"
    manifest = _tfjob(
        job,
        {"Worker": 2},
        restart_policy="ExitCode",
        annotations={"Worker": {"tfjob-kit.dev/exit-code": "1"}},
    )
    cluster.apply_file(_write(tmp_path, job, manifest), namespace)
    status = cluster.wait_for(
        "TFJob Failed",
        lambda: _with_condition(cluster, namespace, job, "Failed"),
        namespace,
        timeout=120,
    )
    assert not _condition(status, "Succeeded")
    failed = status["status"]["replicaStatuses"]["Worker"].get("failed", 0)
    assert failed >= 1


def test_gang_scheduling_holds_all_pods_until_gpus_free(
    cluster: Cluster, namespace: str, tmp_path: Path
) -> None:
    gpu_nodes = cluster.items("nodes", "-l", "nvidia.com/gpu.present=true")
    assert gpu_nodes, "the test cluster must have GPU nodes (the fixture creates them)"
    per_node = min(int(n["status"]["allocatable"][GPU]) for n in gpu_nodes)
    # A blocker holds one GPU node completely, so a job that needs every GPU node can't fit.
    blocker = textwrap.dedent(
        f"""\
        apiVersion: v1
        kind: Pod
        metadata:
          name: gpu-blocker
        spec:
          containers:
            - name: main
              image: busybox
              resources:
                limits:
                  {GPU}: {per_node}
        """
    )
    cluster.apply_file(_write(tmp_path, "blocker", blocker), namespace)
    cluster.wait_for(
        "the blocker to run",
        lambda: (
            cluster.get("pod", "-n", namespace, "gpu-blocker")["status"].get("phase") == "Running"
        ),
        namespace,
    )

    job = "gang"
    workers = len(gpu_nodes)
    manifest = _tfjob(job, {"Worker": workers}, gpus=per_node)
    cluster.apply_file(_write(tmp_path, job, manifest), namespace)
    pods = cluster.wait_for(
        f"{workers} gang pods",
        lambda: _count(_pods(cluster, namespace, job), workers),
        namespace,
    )
    assert all(p["spec"].get("schedulerName") == "volcano" for p in pods)
    podgroup = cluster.get("podgroups.scheduling.volcano.sh", "-n", namespace, job)
    assert podgroup["spec"]["minMember"] == workers

    # Once Volcano has judged the gang (the gang plugin marks its PodGroup Unschedulable at the
    # end of a scheduling cycle that could not place it whole): nothing bound, nothing started.
    cluster.wait_for(
        "Volcano to find the gang unschedulable",
        lambda: _condition(
            cluster.get("podgroups.scheduling.volcano.sh", "-n", namespace, job), "Unschedulable"
        ),
        namespace,
    )
    for pod in _pods(cluster, namespace, job):
        assert not pod["spec"].get("nodeName"), f"{pod['metadata']['name']} was bound"
        assert pod["status"].get("phase") == "Pending"

    cluster.kubectl("delete", "pod", "-n", namespace, "gpu-blocker", "--wait=true")

    def all_bound() -> list[dict[str, Any]] | None:
        pods = _pods(cluster, namespace, job)
        return pods if pods and all(p["spec"].get("nodeName") for p in pods) else None

    bound = cluster.wait_for("the gang to be bound", all_bound, namespace)
    assert len({p["spec"]["nodeName"] for p in bound}) == workers
    cluster.wait_for(
        "TFJob Succeeded",
        lambda: _with_condition(cluster, namespace, job, "Succeeded"),
        namespace,
        timeout=120,
    )


def test_operator_webhook_rejects_invalid_tfjob(
    cluster: Cluster, namespace: str, tmp_path: Path
) -> None:
    webhooks = cluster.kubectl(
        "get",
        "validatingwebhookconfiguration",
        "validator.training-operator.kubeflow.org",
        check=False,
    )
    assert webhooks.returncode == 0, "the test cluster runs the operator webhook"
    bad = _tfjob("no-tf-container", {"Worker": 1}).replace("name: tensorflow", "name: main")
    proc = cluster.kubectl(
        "apply", "-n", namespace, "-f", str(_write(tmp_path, "bad", bad)), check=False
    )
    assert proc.returncode != 0
    assert "denied the request" in proc.stderr
    assert "tensorflow" in proc.stderr


def test_tensorflow_pods_wait_for_every_peer(
    cluster: Cluster, namespace: str, tmp_path: Path
) -> None:
    """As TensorFlow tasks do: placed workers keep running, doing nothing, while a peer cannot
    be placed; once it can, the whole job finishes."""
    job = "peers"
    doc = yaml.safe_load(_tfjob(job, {"PS": 1, "Worker": 2}))
    for spec in doc["spec"]["tfReplicaSpecs"].values():
        # The default scheduler places pods one by one (no gang): the PS alone cannot be placed.
        spec["template"]["spec"]["schedulerName"] = "default-scheduler"
    doc["spec"]["tfReplicaSpecs"]["PS"]["template"]["spec"]["nodeSelector"] = {
        "tfjob-kit.dev/peers-test": namespace
    }
    cluster.apply_file(_write(tmp_path, job, yaml.safe_dump(doc)), namespace)

    def workers_running() -> list[dict[str, Any]] | None:
        pods = [p for p in _pods(cluster, namespace, job) if p["status"].get("phase") == "Running"]
        return pods if len(pods) == 2 else None

    running = cluster.wait_for("the 2 workers to run", workers_running, namespace)
    assert {p["metadata"]["labels"]["training.kubeflow.org/replica-type"] for p in running} == {
        "worker"
    }
    # A job that can run, started after the workers ran: once it has succeeded, a TensorFlow
    # pod's whole run time has passed for the workers too, and they must still be waiting.
    control = "peers-control"
    cluster.apply_file(_write(tmp_path, control, _tfjob(control, {"Worker": 1})), namespace)
    cluster.wait_for(
        "the control job to succeed",
        lambda: _with_condition(cluster, namespace, control, "Succeeded"),
        namespace,
    )
    pods = {p["metadata"]["name"]: p for p in _pods(cluster, namespace, job)}
    assert [p["status"]["phase"] for p in pods.values()].count("Running") == 2
    assert pods[f"{job}-ps-0"]["status"]["phase"] == "Pending"
    assert not any(
        "tfjob-kit.dev/peers-running" in (p["metadata"].get("annotations") or {})
        for p in pods.values()
    )
    assert not _condition(_tfjob_status(cluster, namespace, job), "Succeeded")

    # Give the PS a node: it is placed, every peer runs, the job completes.
    node = next(n["metadata"]["name"] for n in cluster.items("nodes", "-l", "type=kwok"))
    cluster.kubectl("label", "node", node, f"tfjob-kit.dev/peers-test={namespace}")
    try:
        cluster.wait_for(
            "the job to succeed",
            lambda: _with_condition(cluster, namespace, job, "Succeeded"),
            namespace,
        )
    finally:
        cluster.kubectl("label", "node", node, "tfjob-kit.dev/peers-test-")


def test_addons_run_as_least_privilege_service_accounts(cluster: Cluster) -> None:
    # The local processes' identities live in their own namespace (local.LOCAL_NAMESPACE).
    accounts = [
        "tfjob-kit-local-training-operator",
        "tfjob-kit-local-vc-scheduler",
        "tfjob-kit-local-rendezvous",
    ]
    bindings = {b["metadata"]["name"]: b for b in cluster.items("clusterrolebindings")}
    for account in accounts:
        user = f"system:serviceaccount:{local.LOCAL_NAMESPACE}:{account}"
        binding = bindings[account]
        assert binding["roleRef"]["name"] == account  # its own role, never cluster-admin
        can = cluster.kubectl("auth", "can-i", "*", "*", "--as", user, check=False)
        assert can.stdout.strip() == "no", f"{user} is cluster-admin"
    operator = f"system:serviceaccount:{local.LOCAL_NAMESPACE}:tfjob-kit-local-training-operator"
    for verb, resource in (("create", "pods"), ("update", "tfjobs.kubeflow.org/status")):
        can = cluster.kubectl("auth", "can-i", verb, resource, "--as", operator, check=False)
        assert can.stdout.strip() == "yes", f"operator cannot {verb} {resource}"
    can = cluster.kubectl("auth", "can-i", "delete", "nodes", "--as", operator, check=False)
    assert can.stdout.strip() == "no"


def test_addons_hit_no_rbac_denial(cluster: Cluster) -> None:
    """The operator's and Volcano's host processes, with their least-privilege accounts, were
    never denied anything: their logs (in the local cluster's directory) hold no RBAC denial.
    Only a local cluster of this machine has those logs: with ``TFJOB_KIT_KUBECONFIG`` (a
    cluster the session did not start) this test fails saying so; it never passes unread."""
    assert cluster.name, (
        "this test reads the local cluster's process logs, and TFJOB_KIT_KUBECONFIG gives a "
        "cluster without them: run the integration tests without TFJOB_KIT_KUBECONFIG"
    )
    logs = local.cluster_dir(cluster.name) / "logs"
    for process in ("training-operator", "vc-scheduler", "vc-controller-manager"):
        text = (logs / f"{process}.log").read_text(errors="replace")
        assert text, f"{process}.log is empty"
        # An RBAC denial reads 'is forbidden: User "system:serviceaccount:..." cannot ...';
        # other 'forbidden' errors (a namespace being deleted) are not about permissions.
        denials = re.findall(r'forbidden: User \\?"[^"\\]*\\?" cannot [^"]*', text, re.I)
        assert not denials, f"{process} hit RBAC denials: {denials[:3]}"


def test_volcano_job_with_env_and_svc_plugins_completes(
    cluster: Cluster, namespace: str, tmp_path: Path
) -> None:
    """Seed 003's shape: a batch.volcano.sh Job with ps/worker tasks (no TFJob operator)."""
    job = {
        "apiVersion": "batch.volcano.sh/v1alpha1",
        "kind": "Job",
        "metadata": {"name": "tf-dist"},
        "spec": {
            "minAvailable": 3,
            "schedulerName": "volcano",
            "queue": "default",
            "plugins": {"env": [], "svc": []},
            "policies": [{"event": "PodEvicted", "action": "RestartJob"}],
            "tasks": [
                {
                    "name": name,
                    "replicas": replicas,
                    **(
                        {"policies": [{"event": "TaskCompleted", "action": "CompleteJob"}]}
                        if name == "worker"
                        else {}
                    ),
                    "template": {
                        "spec": {
                            "restartPolicy": "Never",
                            "containers": [{"name": "tensorflow", "image": "tensorflow"}],
                        }
                    },
                }
                for name, replicas in (("ps", 1), ("worker", 2))
            ],
        },
    }
    path = _write(tmp_path, "vcjob", yaml.safe_dump(job))
    cluster.apply_file(path, namespace)

    def pods() -> list[dict[str, Any]] | None:
        return _count(cluster.items("pods", "-n", namespace, "-l", "volcano.sh/job-name"), 3)

    found = cluster.wait_for("3 Volcano Job pods", pods, namespace)
    worker = next(p for p in found if p["metadata"]["name"] == "tf-dist-worker-1")
    container = worker["spec"]["containers"][0]
    env = {e["name"]: e for e in container["env"]}
    assert env["VK_TASK_INDEX"]["value"] == "1"  # env plugin
    assert "VC_WORKER_HOSTS" in env  # svc plugin
    assert any(m["mountPath"] == "/etc/volcano" for m in container["volumeMounts"])

    def completed() -> bool:
        vcjob = cluster.get("jobs.batch.volcano.sh", "-n", namespace, "tf-dist")
        return bool(vcjob.get("status", {}).get("state", {}).get("phase") == "Completed")

    cluster.wait_for("the Volcano Job to complete", completed, namespace)
