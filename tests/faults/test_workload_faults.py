"""Workload faults: a component the jobs depend on dies under them, or the ground they run on
goes away. The first three on the fault suite's shared cluster (``cluster up`` restarts what
they kill); the node deletion on a cluster of its own (no gang scheduler, three GPU nodes).

* the training-operator is SIGKILLed while a TFJob runs and restarted with ``tfjob-kit cluster
  up``: the job completes with the very pods it had (same UIDs);
* vc-scheduler is SIGKILLed, then gang jobs are submitted, more than the GPUs hold at once (they
  wait: the operator makes a gang's pods only once vc-scheduler admits its PodGroup); after
  ``cluster up`` restarts it they all run, and a watch of every pod change of the test shows no
  gang split at any moment (the check is run against the real default scheduler too, which
  splits, so it is known to be able to fail);
* the operator's admission webhook is registered but its backend is dead: ``tfjob.kit.tfjob``
  (through ansible-playbook) names the webhook, its ValidatingWebhookConfiguration and the
  Service, and says how to recover; the advice works;
* a node is deleted under a running job: what the real operator does with the lost replica, and
  what ``tfjob.kit.tfjob_info`` reports.

Volcano's admission webhooks with their backend gone (configurations left behind, what every
pod creation then meets) are tested in tests/integration/test_leftover_webhooks.py and
test_volcano_admission.py; the module's error for any webhook it cannot call is unit-tested
(tests/unit/test_kube_logic.py).
"""

from __future__ import annotations

import copy
import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from faults.conftest import SHARED_NODES, SHARED_UP_FLAGS, MakeCluster
from integration._ansible import run_tasks
from integration._cluster import Cluster
from integration.test_module_errors import assert_clean_failure
from integration.test_module_tfjob import tfjob
from tfjob_kit.cluster import procs
from tfjob_kit.cluster.nodes import GPU_RESOURCE, NodePlan

TFJOB_KIT = Path(sys.executable).parent / "tfjob-kit"
JOB_LABEL = "training.kubeflow.org/job-name"


# ---- helpers -------------------------------------------------------------------------------
def kill(cluster: Cluster, process: str) -> procs.ProcRecord:
    """SIGKILL the cluster's recorded ``process`` and wait until it is gone."""
    assert cluster.name
    (record,) = [r for r in procs.records(cluster.name) if r.name == process]
    assert record.alive(), f"{process} was not running"
    os.kill(record.pid, signal.SIGKILL)
    procs.wait(f"{process} to die", lambda: not record.alive(), 30)
    return record


def cluster_up(cluster: Cluster) -> float:
    """``tfjob-kit cluster up --name`` as users run it (it restarts dead addons), with the
    shared cluster's sizes; its seconds."""
    assert cluster.name
    started = time.monotonic()
    proc = subprocess.run(
        [str(TFJOB_KIT), "cluster", "up", "--name", cluster.name, *SHARED_UP_FLAGS],
        capture_output=True,
        text=True,
        timeout=400,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return time.monotonic() - started


def gpu_job(name: str, namespace: str, workers: int, **options: Any) -> dict[str, Any]:
    """test_module_tfjob's job, each worker asking for one GPU."""
    return tfjob(
        name,
        namespace,
        workers,
        container={"resources": {"limits": {GPU_RESOURCE: 1}}},
        **options,
    )


def pods_of(cluster: Cluster, namespace: str, job: str) -> list[dict[str, Any]]:
    return cluster.items("pods", "-n", namespace, "-l", f"{JOB_LABEL}={job}")


def phase(cluster: Cluster, namespace: str, job: str) -> str | None:
    """The TFJob's latest True condition (its phase), None before it has one."""
    obj = cluster.get("tfjob", job, "-n", namespace)
    true = [c for c in obj.get("status", {}).get("conditions") or [] if c["status"] == "True"]
    return str(true[-1]["type"]) if true else None


def wait_phase(
    cluster: Cluster, namespace: str, job: str, phases: Iterable[str], timeout: float
) -> str:
    wanted = set(phases)

    def reached() -> str | None:
        now = phase(cluster, namespace, job)
        return now if now in wanted else None

    return cluster.wait_for(f"TFJob {job} {sorted(wanted)}", reached, namespace, timeout)


def all_running(cluster: Cluster, namespace: str, job: str, count: int) -> dict[str, str]:
    """{pod name: uid} once the job's ``count`` pods all run."""

    def running() -> dict[str, str] | None:
        pods = pods_of(cluster, namespace, job)
        if len(pods) == count and all(p["status"].get("phase") == "Running" for p in pods):
            return {p["metadata"]["name"]: p["metadata"]["uid"] for p in pods}
        return None

    return cluster.wait_for(f"the {count} pods of {job} to run", running, namespace, 120)


# ---- 1. the operator dies mid-job ----------------------------------------------------------
def test_the_operator_killed_mid_job_and_restarted_finishes_it_with_the_same_pods(
    shared_fault_cluster: Cluster,
) -> None:
    started = time.monotonic()
    cluster = shared_fault_cluster
    namespace = "operator-fault"
    cluster.kubectl("create", "namespace", namespace)
    # Pods run 60 s once their peers run: long enough that the job still runs after the
    # operator is back, even on a loaded machine (checked, not assumed).
    job = gpu_job("survivor", namespace, 3, annotations={"tfjob-kit.dev/run-duration": "60s"})
    cluster.kubectl("create", "-f", "-", stdin=json.dumps(job))
    before = all_running(cluster, namespace, "survivor", 3)
    dead = kill(cluster, "training-operator")
    took = cluster_up(cluster)
    assert cluster.name
    (back,) = [r for r in procs.records(cluster.name) if r.name == "training-operator"]
    assert back.alive() and back.pid != dead.pid
    running = {
        p["metadata"]["name"]
        for p in pods_of(cluster, namespace, "survivor")
        if p["status"].get("phase") == "Running"
    }
    assert running == set(before), "the job must still run when the operator is back"
    assert wait_phase(cluster, namespace, "survivor", ("Succeeded", "Failed"), 180) == "Succeeded"
    after = {
        p["metadata"]["name"]: p["metadata"]["uid"] for p in pods_of(cluster, namespace, "survivor")
    }
    assert after == before, "the restarted operator recreated pods"
    print(
        f"\noperator SIGKILLed mid-job; `cluster up` restarted it in {took:.1f}s; the job "
        f"Succeeded with its 3 pods' UIDs unchanged; test {time.monotonic() - started:.0f}s"
    )


# ---- 2. vc-scheduler dies while gangs wait ---------------------------------------------------
class PodWatch:
    """Every change of the namespace's pods, in the API server's order, from one
    ``kubectl get pods --watch`` (started before anything is created, so nothing is missed)."""

    def __init__(self, cluster: Cluster, namespace: str) -> None:
        self.events: list[tuple[str, dict[str, Any]]] = []
        self._proc = subprocess.Popen(
            cluster.runner.command(
                "get", "pods", "-n", namespace, "--watch", "--output-watch-events", "-o", "json"
            ),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        self._thread = threading.Thread(target=self._read, daemon=True)
        self._thread.start()

    def _read(self) -> None:
        assert self._proc.stdout
        decoder = json.JSONDecoder()
        buffer = ""
        for line in self._proc.stdout:
            buffer += line
            while buffer.strip():
                try:
                    item, end = decoder.raw_decode(buffer.lstrip())
                except ValueError:
                    break
                buffer = buffer.lstrip()[end:]
                self.events.append((item["type"], item["object"]))

    def stop(self) -> list[tuple[str, dict[str, Any]]]:
        """The events so far; fails if the watch ended by itself (a gap could hide a split)."""
        if self._proc.poll() is not None:
            assert self._proc.stderr
            raise AssertionError(f"the pod watch ended early: {self._proc.stderr.read()}")
        self._proc.terminate()
        self._proc.wait(10)
        self._thread.join(10)
        return list(self.events)


@dataclass
class Split:
    """A moment when a gang was partly bound while what it still lacked could not fit."""

    index: int
    partial: dict[str, int]
    lacking: int
    free: int


def gang_splits(
    events: list[tuple[str, dict[str, Any]]],
    group: Callable[[dict[str, Any]], str | None],
    size: int,
    capacity: int,
) -> tuple[list[Split], dict[str, list[int]]]:
    """Replay the watch. A gang scheduler binds a gang's pods only once all of them fit, so
    while some of a gang's pods are bound, the rest are reserved: the GPUs the partly bound
    gangs still lack never exceed the GPUs free (held by no bound, unfinished pod). A scheduler
    that binds what fits (a split) breaks that the moment it fills the cluster with part of a
    gang. Returns the moments it broke, and when (watch index) each group's pods were bound.

    Pods ask for one GPU each, so the sum is the per-node fit too (no fragmentation)."""
    live: dict[str, dict[str, Any]] = {}
    bound: dict[str, set[str]] = defaultdict(set)
    bound_at: dict[str, list[int]] = defaultdict(list)
    splits = []
    for index, (kind, pod) in enumerate(events):
        uid = pod["metadata"]["uid"]
        if kind == "DELETED":
            live.pop(uid, None)
        else:
            live[uid] = pod
        key = group(pod)
        if key is not None and pod["spec"].get("nodeName") and uid not in bound[key]:
            bound[key].add(uid)
            bound_at[key].append(index)
        held = sum(
            1
            for p in live.values()
            if p["spec"].get("nodeName") and p["status"].get("phase") not in ("Succeeded", "Failed")
        )
        partial = {k: len(v) for k, v in bound.items() if 0 < len(v) < size}
        lacking = sum(size - n for n in partial.values())
        if lacking > capacity - held:
            splits.append(Split(index, partial, lacking, capacity - held))
    return splits, dict(bound_at)


def test_gangs_pending_while_vc_scheduler_is_dead_are_scheduled_whole_after_it_restarts(
    shared_fault_cluster: Cluster,
) -> None:
    started = time.monotonic()
    plan = SHARED_NODES
    capacity = plan.gpu_nodes * plan.gpus_per_node
    cluster = shared_fault_cluster
    namespace = "gangs"
    cluster.kubectl("create", "namespace", namespace)
    watch = PodWatch(cluster, namespace)
    kill(cluster, "vc-scheduler")
    # Three gangs of 3 one-GPU workers on 8 GPUs: two fit at once, the third waits for one to
    # finish. Binding whatever fits would bind 8 of the 9 pods and split a gang.
    jobs = ("gang-a", "gang-b", "gang-c")
    for job in jobs:
        cluster.kubectl("create", "-f", "-", stdin=json.dumps(gpu_job(job, namespace, 3)))

    def all_pending() -> bool:
        # The operator creates a gang's pods once Volcano admitted its PodGroup (Inqueue),
        # which only vc-scheduler does: with it dead, the PodGroups wait (no phase yet), podless.
        groups = cluster.items("podgroups", "-n", namespace)
        pending = [g for g in groups if (g.get("status") or {}).get("phase") in (None, "Pending")]
        return len(pending) == 3 and cluster.items("pods", "-n", namespace) == []

    cluster.wait_for("the 3 PodGroups to wait", all_pending, namespace, 120)
    time.sleep(3)  # a while without vc-scheduler: still nothing (asserted below, not assumed)
    assert all_pending()
    took = cluster_up(cluster)
    for job in jobs:
        assert wait_phase(cluster, namespace, job, ("Succeeded", "Failed"), 180) == "Succeeded"

    # The check can fail: the default scheduler (pods of no gang) splits the same shape.
    for index in range(9):
        loose = {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": f"loose-{index}", "labels": {"loose": f"g{index % 3}"}},
            "spec": {
                "containers": [
                    {
                        "name": "c",
                        "image": "registry.example.com/mnist:1.0",
                        "resources": {"limits": {GPU_RESOURCE: "1"}},
                    }
                ]
            },
        }
        cluster.kubectl("create", "-n", namespace, "-f", "-", stdin=json.dumps(loose))

    def loose_bound() -> bool:
        pods = cluster.items("pods", "-n", namespace, "-l", "loose")
        return sum(1 for p in pods if p["spec"].get("nodeName")) == capacity

    cluster.wait_for("the default scheduler to fill the GPUs", loose_bound, namespace, 60)
    events = watch.stop()

    def job_of(pod: dict[str, Any]) -> str | None:
        labels = pod["metadata"].get("labels") or {}
        return labels.get(JOB_LABEL) or (f"loose {labels['loose']}" if "loose" in labels else None)

    splits, bound_at = gang_splits(events, job_of, 3, capacity)
    gang_splits_seen = [s for s in splits if any(not k.startswith("loose") for k in s.partial)]
    assert gang_splits_seen == [], f"Volcano split a gang: {gang_splits_seen}"
    assert any(k.startswith("loose") for s in splits for k in s.partial), (
        "the check did not see the default scheduler split the loose pods"
    )
    # Nothing was bound while vc-scheduler was dead; the third gang waited whole for room.
    assert all(len(bound_at[job]) == 3 for job in jobs), bound_at
    first = sorted(jobs, key=lambda j: bound_at[j][0])
    finished = [
        i
        for i, (_, p) in enumerate(events)
        if p["status"].get("phase") == "Succeeded" and job_of(p) in first[:2]
    ]
    assert bound_at[first[2]][0] > min(finished), "the third gang ran before any room freed"
    print(
        f"\nvc-scheduler SIGKILLed; 3 gangs of 3 GPUs pending on {capacity} GPUs; `cluster up` "
        f"in {took:.1f}s; all Succeeded; {len(events)} pod changes watched, no gang split (the "
        f"default scheduler's loose pods: {len(splits)} split moments); "
        f"test {time.monotonic() - started:.0f}s"
    )


# ---- 3. the operator's webhook backend is down ------------------------------------------------
def test_the_operator_webhook_down_names_it_and_says_how_to_recover(
    shared_fault_cluster: Cluster, tmp_path: Path
) -> None:
    started = time.monotonic()
    cluster = shared_fault_cluster
    namespace = "webhook-fault"
    cluster.kubectl("create", "namespace", namespace)
    # The operator's configuration (Volcano's admission has its own beside it).
    (config,) = [
        c
        for c in cluster.items("validatingwebhookconfigurations")
        if any("training-operator" in h["name"] for h in c["webhooks"])
    ]
    (hook,) = config["webhooks"]
    service = hook["clientConfig"]["service"]
    kill(cluster, "training-operator")
    job = tfjob("blocked", namespace, 1)
    result = run_tasks(tmp_path, cluster.kubeconfig, [{"tfjob.kit.tfjob": {"definition": job}}])
    message = assert_clean_failure(result)
    print(f"\nwhat the user sees: {message}")
    assert message.startswith(
        f"dry-run apply of TFJob {namespace}/blocked: the training-operator's admission webhook "
        f'"{hook["name"]}" (ValidatingWebhookConfiguration {config["metadata"]["name"]}), served '
        f"at Service {service['namespace']}/{service['name']} port {service['port']} "
        f"(https://{service['name']}.{service['namespace']}.svc:{service['port']}"
        f"{service['path']}?timeout={hook['timeoutSeconds']}s), cannot be called: "
    ), message
    assert "connection refused" in message
    assert "on the local cluster run `tfjob-kit cluster up`" in message
    assert (
        f"`kubectl delete validatingwebhookconfiguration {config['metadata']['name']}`" in message
    )
    assert "Nothing was applied" in message
    assert cluster.items("tfjobs", "-n", namespace) == []
    # the advice works
    cluster_up(cluster)
    result = run_tasks(tmp_path, cluster.kubeconfig, [{"tfjob.kit.tfjob": {"definition": job}}])
    assert not result[0].get("failed") and result[0]["changed"], result[0]
    print(f"test {time.monotonic() - started:.0f}s")


# ---- 4. a node is deleted under a running job ----------------------------------------------
def held_job(name: str, namespace: str, policy: str) -> dict[str, Any]:
    """Two one-GPU workers with ``policy`` and a PS that waits for a node pool to join: until
    it runs, TensorFlow's rendezvous holds the workers (they run and cannot finish)."""
    job = gpu_job(name, namespace, 2)
    specs = job["spec"]["tfReplicaSpecs"]
    specs["Worker"]["restartPolicy"] = policy
    ps = copy.deepcopy(specs["Worker"])
    ps["replicas"] = 1
    ps["template"]["spec"]["nodeSelector"] = {"tfjob-kit.dev/pool": "late"}
    ps["template"]["spec"]["containers"][0]["resources"] = {}
    specs["PS"] = ps
    return job


def test_a_node_deleted_under_running_jobs_follows_the_operator_and_tfjob_info_says_so(
    fault_cluster: MakeCluster, tmp_path: Path
) -> None:
    """What the real operator (v1.9.4) does when PodGC deletes the pods of a deleted node (it
    marks them Failed with a DisruptionTarget condition, then deletes them, 40 to 80 s after
    the node went): with restartPolicy OnFailure the lost worker is made again (after a
    ``TFJobRestarting`` when the operator saw the Failed pod before it was deleted) and the job
    succeeds. With Never the job fails ("TFJobFailed ... because 1 Worker replica(s) failed")
    if the operator saw the Failed pod; if it reads the pod only once it is gone (PodGC deletes
    it right after marking it) it makes it again like any missing replica, and the job
    succeeds. Both happened here, from run to run: the test accepts either for Never and holds
    the outcome to what the job then does. Either way tfjob_info names the lost pod, its
    replica and the deleted node."""
    started = time.monotonic()
    cluster = fault_cluster(
        nodes=NodePlan(cpu_nodes=1, gpu_nodes=3), tfjob_run_seconds=3, gang_scheduler="none"
    )
    namespace = "default"
    policies = {"lost-onfailure": "OnFailure", "lost-never": "Never"}
    for name, policy in policies.items():
        cluster.kubectl("create", "-f", "-", stdin=json.dumps(held_job(name, namespace, policy)))
    before: dict[str, dict[str, Any]] = {}
    for name in policies:
        workers = {f"{name}-worker-0", f"{name}-worker-1"}

        def running(name: str = name, workers: set[str] = workers) -> bool:
            pods = [
                p for p in pods_of(cluster, namespace, name) if p["metadata"]["name"] in workers
            ]
            return len(pods) == 2 and all(p["status"].get("phase") == "Running" for p in pods)

        cluster.wait_for(f"the workers of {name} to run", running, namespace, 120)
        for pod in pods_of(cluster, namespace, name):
            if pod["metadata"]["name"] in workers:
                before[pod["metadata"]["name"]] = pod
    doomed = {before[f"{name}-worker-0"]["spec"]["nodeName"] for name in policies}
    lost = {n: p for n, p in before.items() if p["spec"]["nodeName"] in doomed}
    deleted_at = time.monotonic()
    cluster.kubectl("delete", "node", *sorted(doomed))

    def settled() -> dict[str, str] | None:
        """For each job, what became of its lost workers: 'remade' or 'failed'."""
        outcome = {}
        for name in policies:
            now = {p["metadata"]["name"]: p for p in pods_of(cluster, namespace, name)}
            mine = [n for n in lost if n.startswith(f"{name}-")]
            if phase(cluster, namespace, name) == "Failed":
                outcome[name] = "failed"
            elif all(
                n in now and now[n]["metadata"]["uid"] != lost[n]["metadata"]["uid"] for n in mine
            ):
                outcome[name] = "remade"
            else:
                return None
        return outcome

    outcome = cluster.wait_for("PodGC and the operator to act", settled, namespace, 200)
    reacted = time.monotonic() - deleted_at
    assert outcome["lost-onfailure"] == "remade"
    # The PS's node pool joins: the rendezvous lets every worker finish.
    cluster.kubectl("label", "node", "tfjob-kit-cpu-0", "tfjob-kit.dev/pool=late")
    expected = {"remade": "Succeeded", "failed": "Failed"}
    for name in policies:
        final = wait_phase(cluster, namespace, name, ("Succeeded", "Failed"), 120)
        assert final == expected[outcome[name]], (name, outcome, final)
    result = run_tasks(
        tmp_path,
        cluster.kubeconfig,
        [{"tfjob.kit.tfjob_info": {"name": name, "namespace": namespace}} for name in policies],
    )
    for index, name in enumerate(policies):
        info = result[index]
        assert not info.get("failed"), info
        (job,) = info["jobs"]
        reported = {p["name"]: p for p in job["problems"] if p["reason"] == "NodeDeleted"}
        mine = {n: p for n, p in lost.items() if n.startswith(f"{name}-")}
        assert set(reported) == {f"{namespace}/{n}" for n in mine}, job["problems"]
        for pod_name, pod in mine.items():
            problem = reported[f"{namespace}/{pod_name}"]
            index_ = pod["metadata"]["labels"]["training.kubeflow.org/replica-index"]
            assert problem["message"].startswith(
                f"replica Worker {index_}: its pod {namespace}/{pod_name} (uid "
                f"{pod['metadata']['uid']}) was lost with node {pod['spec']['nodeName']}, which "
                "no longer exists"
            ), problem
            assert not problem["fatal"]
            print(f"\ntfjob_info on {name} ({job['phase']}): {problem['message']}")
        print(f"events: {[(e['reason'], e['message']) for e in job['events']][-4:]}")
    print(
        f"outcome {outcome}; PodGC and the operator acted {reacted:.0f}s after the node "
        f"deletion; test {time.monotonic() - started:.0f}s"
    )
