"""Control-plane faults: the API server killed mid-apply, etcd restarted under a running job,
every host process of the local cluster killed. The first two on the fault suite's shared
cluster (``cluster up`` restarts what they kill, in place); the last on a cluster of its own,
which it removes."""

from __future__ import annotations

import io
import os
import re
import signal
import subprocess
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

from integration._ansible import BIN, PlayResult, run_tasks
from integration._cluster import Cluster
from tfjob_kit.cluster import local
from tfjob_kit.cluster.nodes import NodePlan
from tfjob_kit.cluster.procs import kwok_pids, proc_start_time, records
from tfjob_kit.kube.apply import WORKERS

from .conftest import MakeCluster, shared_options

SMALL = NodePlan(cpu_nodes=1, gpu_nodes=2)
JOBS = 50


def component_pid(name: str, component: str) -> int:
    """The pid of one kwokctl component (etcd, kube-apiserver...) of this cluster alone: its
    pid file's process, whose command is the cluster's own binary."""
    binary = str(local.cluster_dir(name) / "bin" / component).encode()
    for pid in kwok_pids(name):
        try:
            argv0 = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")[0]
        except OSError:
            continue
        if argv0 == binary:
            return pid
    raise AssertionError(f"no running {component} of cluster {name}")


def gone(pid: int) -> bool:
    return proc_start_time(pid) is None


def until(what: str, check: Callable[[], bool], timeout: float, interval: float = 0.5) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:.0f}s waiting for {what}")
        time.sleep(interval)


def tfjob(
    name: str, namespace: str, suspend: bool = False, workers: int = 1, run: str = ""
) -> dict[str, Any]:
    """A small TFJob; suspended ones get no pods (the apply alone is under test). ``run``: how
    long its pods run once their peers run (kwok's per-pod knob), else the cluster's default."""
    container = {
        "name": "tensorflow",
        "image": "registry.example.com/mnist:1.0",
        "resources": {
            "requests": {"cpu": "100m", "memory": "128Mi"},
            "limits": {"cpu": "100m", "memory": "128Mi"},
        },
    }
    return {
        "apiVersion": "kubeflow.org/v1",
        "kind": "TFJob",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {
            "runPolicy": {"cleanPodPolicy": "None", "suspend": suspend},
            "tfReplicaSpecs": {
                "Worker": {
                    "replicas": workers,
                    "restartPolicy": "Never",
                    "template": {
                        "metadata": {"annotations": {"tfjob-kit.dev/run-duration": run}}
                        if run
                        else {},
                        "spec": {"containers": [container]},
                    },
                }
            },
        },
    }


def clean_failure(result: PlayResult) -> str:
    """The failed task's message; no traceback anywhere."""
    task = result[0]
    assert task.get("failed"), task
    assert "Traceback" not in result.output, result.output
    assert "Traceback" not in str(task.get("exception", "")), task
    assert "module_stderr" not in task, task
    message: str = task["msg"]
    return message


def test_api_server_killed_during_apply(shared_fault_cluster: Cluster, tmp_path: Path) -> None:
    cluster = shared_fault_cluster
    assert cluster.name
    namespace = "apply-fault"
    cluster.kubectl("create", "namespace", namespace)
    source = tmp_path / "jobs.yaml"
    source.write_text(
        yaml.safe_dump_all(
            [tfjob(f"job-{i:02d}", namespace, suspend=True) for i in range(JOBS)],
            sort_keys=False,
        )
    )
    task = [{"tfjob.kit.tfjob": {"src": str(source)}}]
    server = yaml.safe_load(cluster.kubeconfig.read_text())["clusters"][0]["cluster"]["server"]

    # The kill comes when the first TFJob past the module's WORKERS is stored: its request was
    # sent only once a worker had read the server's answer to an earlier one, so at least one
    # apply is confirmed, while most of the 50 are still to come. (At the first stored TFJob,
    # on a loaded machine, none of the answers may have been read yet.)
    watch = subprocess.Popen(
        cluster.runner.command(
            "get", "tfjobs.kubeflow.org", "-n", namespace, "--watch-only", "-o", "name"
        ),
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    first = tmp_path / "first"
    first.mkdir()
    played: list[PlayResult] = []
    runner = threading.Thread(
        target=lambda: played.append(run_tasks(first, cluster.kubeconfig, task, timeout=300))
    )
    apiserver = component_pid(cluster.name, "kube-apiserver")
    # Should the module store nothing, the watch ends (and the test fails) after 240 s.
    timer = threading.Timer(240, watch.kill)
    try:
        timer.start()
        runner.start()
        assert watch.stdout is not None
        for _ in range(WORKERS + 1):
            seen = watch.stdout.readline()
            assert seen.startswith("tfjob"), seen
        os.kill(apiserver, signal.SIGKILL)
    finally:
        timer.cancel()
        watch.kill()
        watch.wait()
        runner.join(300)
    assert played, "the playbook did not finish"
    message = clean_failure(played[0])
    print(f"\nthe module's message with the API server killed:\n{message}")
    assert f"cannot reach the Kubernetes API server at {server}" in message, message
    assert "tfjob-kit cluster up" in message, message

    # Back up: `cluster up` restarts the API server in place, the TFJobs stored are kept.
    output = io.StringIO()
    local.up(shared_options(cluster.name), out=output)
    assert "starting its stopped components in place" in output.getvalue(), output.getvalue()
    assert "kube-apiserver" in output.getvalue(), output.getvalue()
    stored = {o["metadata"]["uid"] for o in cluster.items("tfjobs", "-n", namespace)}
    assert 0 < len(stored) < JOBS, f"{len(stored)} TFJobs were stored before the kill"
    # The partial result is honest: what the server confirmed was stored, no more.
    confirmed = re.search(rf"(\d+) of the {JOBS} to apply (?:was|were) applied", message)
    assert confirmed, message
    assert 0 < int(confirmed[1]) <= len(stored), (confirmed[0], len(stored))
    assert "run the task again" in message, message

    (tmp_path / "second").mkdir()
    second = run_tasks(tmp_path / "second", cluster.kubeconfig, task)
    assert not second[0].get("failed"), second[0].get("msg")
    assert second[0]["changed"] is True
    actions = [j["action"] for j in second[0]["jobs"]]
    assert actions.count("created") == JOBS - len(stored), actions
    after = cluster.items("tfjobs", "-n", namespace)
    names = sorted(o["metadata"]["name"] for o in after)
    assert names == [f"job-{i:02d}" for i in range(JOBS)], names
    assert stored <= {o["metadata"]["uid"] for o in after}  # the stored ones kept, not recreated

    (tmp_path / "third").mkdir()
    third = run_tasks(tmp_path / "third", cluster.kubeconfig, task)
    assert not third[0].get("failed"), third[0].get("msg")
    assert third[0]["changed"] is False, [j["action"] for j in third[0]["jobs"]]
    assert len(cluster.items("tfjobs", "-n", namespace)) == JOBS


def test_etcd_restart_under_a_running_job(shared_fault_cluster: Cluster, tmp_path: Path) -> None:
    cluster = shared_fault_cluster
    name = cluster.name
    assert name
    namespace = "etcd-fault"
    cluster.kubectl("create", "namespace", namespace)
    job = tmp_path / "job.yaml"
    job.write_text(yaml.safe_dump(tfjob("survivor", namespace, workers=2, run="20s")))
    cluster.apply_file(job, namespace)

    def running() -> bool:
        pods = cluster.items("pods", "-n", namespace)
        return len(pods) == 2 and all(p["status"].get("phase") == "Running" for p in pods)

    cluster.wait_for("the job's pods to run", running, namespace, timeout=120)
    pods = {p["metadata"]["uid"] for p in cluster.items("pods", "-n", namespace)}
    etcd = component_pid(name, "etcd")
    os.kill(etcd, signal.SIGKILL)
    until("etcd to exit", lambda: gone(etcd), 10, interval=0.1)
    until("the API server to report itself not ready", lambda: not local.is_running(name), 60)
    output = io.StringIO()
    local.up(shared_options(name), out=output)
    stopped = re.search(r"\(stopped: ([^)]*)\)", output.getvalue())
    assert stopped and "etcd" in stopped[1].split(", "), output.getvalue()
    assert component_pid(name, "etcd") != etcd

    def succeeded() -> bool:
        conditions = cluster.get("tfjob", "survivor", "-n", namespace)["status"].get(
            "conditions", []
        )
        return any(c["type"] == "Succeeded" and c["status"] == "True" for c in conditions)

    cluster.wait_for("the job to succeed after etcd's restart", succeeded, namespace, timeout=120)
    # The pods that ran before the restart finished the job: none was recreated.
    assert {p["metadata"]["uid"] for p in cluster.items("pods", "-n", namespace)} == pods


def test_controller_manager_and_scheduler_killed(shared_fault_cluster: Cluster) -> None:
    """Both killed while the API server answers on (or, on a cluster made before they ran
    without leader election, exited when their lease lapsed): ``up`` starts them again."""
    cluster = shared_fault_cluster
    name = cluster.name
    assert name
    killed = [component_pid(name, c) for c in ("kube-controller-manager", "kube-scheduler")]
    for pid in killed:
        os.kill(pid, signal.SIGKILL)
    until("both to exit", lambda: all(gone(p) for p in killed), 10, interval=0.1)
    assert local.is_running(name)
    output = io.StringIO()
    local.up(shared_options(name), out=output)
    assert (
        f"cluster {name!r} answers, but kube-controller-manager, kube-scheduler stopped: "
        "starting them in place" in output.getvalue()
    ), output.getvalue()
    # The controller-manager gives a new namespace its default service account and deletes it
    # again; the scheduler binds a plain pod.
    namespace = "restarted-controllers"
    cluster.kubectl("create", "namespace", namespace)
    cluster.kubectl(
        "wait", "serviceaccount/default", "-n", namespace, "--for=create", "--timeout=90s"
    )
    cluster.kubectl(
        "run", "probe", "-n", namespace, "--image=registry.example.com/probe:1.0", "--restart=Never"
    )
    cluster.kubectl(
        "wait", "pod/probe", "-n", namespace, "--for=jsonpath={.spec.nodeName}", "--timeout=60s"
    )
    cluster.kubectl("delete", "namespace", namespace, "--wait=true", "--timeout=120s", timeout=150)


def kill_all(name: str) -> list[int]:
    """SIGKILL every host process of the cluster (kwokctl's components and the addons)."""
    pids = [*kwok_pids(name), *(r.pid for r in records(name))]
    for pid in pids:
        os.kill(pid, signal.SIGKILL)
    until("every process to exit", lambda: all(gone(p) for p in pids), 10, interval=0.1)
    return pids


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(
        [str(BIN / "tfjob-kit"), "cluster", *args],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert "Traceback" not in proc.stdout + proc.stderr, proc.stdout + proc.stderr
    return proc


def test_every_host_process_killed(fault_cluster: MakeCluster) -> None:
    cluster = fault_cluster(nodes=SMALL)
    name = cluster.name
    assert name
    cluster.kubectl("create", "namespace", "kept")
    kept = cluster.get("namespace", "kept")["metadata"]["uid"]
    pids = [*kwok_pids(name), *(r.pid for r in records(name))]
    assert len(pids) == 10, pids  # etcd, 3 control-plane, kwok; Volcano x3, operator, rendezvous
    ports = listening_ports(pids)
    assert ports
    kill_all(name)

    # Recovery in place: the same cluster, its objects kept, every process running again.
    up = cli("up", "--name", name, "--cpu-nodes", "1", "--gpu-nodes", "2")
    print(f"\n`cluster up` after SIGKILL of everything:\n{up.stderr}")
    assert up.returncode == 0, up.stdout + up.stderr
    assert "starting its stopped components in place" in up.stderr, up.stderr
    assert cluster.get("namespace", "kept")["metadata"]["uid"] == kept
    assert all(r.alive() for r in records(name))
    assert local.status(name)["running"]
    alive = [*kwok_pids(name), *(r.pid for r in records(name))]
    assert len(alive) == 10 and all(not gone(p) for p in alive), alive
    ports |= listening_ports(alive)

    # A restart that cannot work (etcd's binary gone): up stops and says exactly what to do,
    # leaving the cluster's data alone.
    pids = kill_all(name)
    etcd = local.cluster_dir(name) / "bin" / "etcd"
    etcd.rename(etcd.with_name("etcd.moved"))
    failed = cli("up", "--name", name, "--cpu-nodes", "1", "--gpu-nodes", "2")
    print(f"\n`cluster up` when the restart fails:\n{failed.stderr}")
    assert failed.returncode != 0
    assert f"cluster {name!r} could not be restarted" in failed.stderr, failed.stderr
    assert (
        f"tfjob-kit cluster down --name {name} && tfjob-kit cluster up --name {name}"
        in failed.stderr
    ), failed.stderr
    assert (local.cluster_dir(name) / "etcd").is_dir()  # the data is still there

    down = cli("down", "--name", name)
    assert down.returncode == 0, down.stdout + down.stderr
    assert all(gone(p) for p in [*alive, *pids])
    assert not local.cluster_dir(name).exists()
    mine = [p for p in running_pids() if name.encode() in cmdline(p)]
    assert not mine, [cmdline(p) for p in mine]
    # Nothing of the cluster listens on its ports (another cluster may have taken one since).
    owners = listening_owners()
    assert not [
        (port, owners[port])
        for port in ports
        if port in owners and name.encode() in cmdline(owners[port])
    ]


def cmdline(pid: int) -> bytes:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return b""


def _inodes(pid: int) -> set[str]:
    found = set()
    try:
        for fd in Path(f"/proc/{pid}/fd").iterdir():
            try:
                target = str(fd.readlink())
            except OSError:
                continue
            if target.startswith("socket:["):
                found.add(target[8:-1])
    except OSError:
        pass
    return found


def _listeners() -> dict[str, int]:
    """Listening TCP sockets: inode -> port."""
    out = {}
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            lines = Path(table).read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            if fields[3] == "0A":  # LISTEN
                out[fields[9]] = int(fields[1].rsplit(":", 1)[1], 16)
    return out


def listening_ports(pids: list[int]) -> set[int]:
    listeners = _listeners()
    return {listeners[i] for p in pids for i in _inodes(p) if i in listeners}


def running_pids() -> list[int]:
    return [int(p.name) for p in Path("/proc").iterdir() if p.name.isdigit()]


def listening_owners() -> dict[int, int]:
    """Listening TCP ports: port -> the pid holding it (of the processes we may read)."""
    listeners = _listeners()
    return {listeners[i]: pid for pid in running_pids() for i in _inodes(pid) if i in listeners}
