"""The embedded local cluster: ``tfjob-kit cluster up | down | status | kubeconfig``.

A kwokctl ``binary``-runtime cluster (real etcd, kube-apiserver, kube-controller-manager,
kube-scheduler; kwok simulates the nodes and the pods' lifecycle) plus, as "addons", the real
Kubeflow training-operator and Volcano scheduler/controller-manager running as local
processes. ``down`` stops every process and removes the cluster's directory.

This module only orchestrates; each job has a module of its own:

* ``options``: ``UpOptions`` and the defaults (the CLI's too).
* ``paths``: where everything lives (``cluster_dir``, ``kubeconfig_path``, ...), private files.
* ``kubectl``: the kubectl runner.
* ``procs``: our processes' records (spawn, stop, liveness) and the cluster's state file.
* ``kwok``: kwokctl's configuration (etcd over mutual TLS), creating, restarting (in place)
  and deleting the cluster.
* ``nodes``: the simulated CPU and GPU nodes.
* ``identity``: each local process's ServiceAccount, kubeconfig and renewed token.
* ``addons``: starting Volcano and the rendezvous stand-in; ``training_operator``: the operator
  and its validating webhook (the chart's objects, pointed at the local process);
  ``volcano_admission``: vc-webhook-manager and the chart's webhook configurations, likewise.
* ``chart_rbac``: what the charts grant and name, rendered with the built helm.

Everything listens on 127.0.0.1 only, the cluster's directory and files are this user's alone,
and no addon runs with admin credentials (see ``identity``).
"""

from __future__ import annotations

import contextlib
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TextIO

from tfjob_kit import runtimes
from tfjob_kit.cluster import build, jobset, kueue, trainer
from tfjob_kit.cluster.addons import start_addons, start_rendezvous
from tfjob_kit.cluster.identity import LOCAL_NAMESPACE
from tfjob_kit.cluster.kubectl import Kubectl
from tfjob_kit.cluster.kwok import (
    check_components,
    create_cluster,
    delete_cluster,
    gave_up_waiting,
    restrict,
    start_cluster,
    stopped_components,
)
from tfjob_kit.cluster.nodes import node_manifests
from tfjob_kit.cluster.options import DEFAULT_NAME, GANG_SCHEDULERS, UpOptions, default_name
from tfjob_kit.cluster.paths import (
    ClusterError,
    cluster_dir,
    kubeconfig_path,
    kwok_workdir,
    logs_dir,
)
from tfjob_kit.cluster.ports import release
from tfjob_kit.cluster.procs import (
    kwok_pids,
    load_state,
    records,
    rss_kib,
    save_state,
    say,
    wait,
)
from tfjob_kit.cluster.training_operator import OPERATOR_NAMESPACE
from tfjob_kit.versions import Versions, VersionsError, load_versions, minor_of, repo_root

__all__ = [
    "DEFAULT_NAME",
    "GANG_SCHEDULERS",
    "LOCAL_NAMESPACE",
    "MARKER",
    "UpOptions",
    "cluster_dir",
    "default_name",
    "down",
    "is_running",
    "kubeconfig_path",
    "status",
    "up",
]

MARKER = ("kube-public", "tfjob-kit-local-cluster")


def _marker(opts: UpOptions, versions: Versions) -> dict[str, Any]:
    """A ConfigMap telling tools (roles, playbooks) they talk to the tfjob-kit local cluster.

    Its data says which components already run as local processes, so a bootstrap role can
    skip deploying them (their pods would only be simulated by kwok) and must not replace
    the webhook Service / ValidatingWebhookConfiguration that point at the local operator.
    """
    namespace, name = MARKER
    data = {
        "cluster": opts.name,
        "kubernetes": versions.kubernetes,
        "kwok": versions.kwok,
        "training-operator": versions.training_operator if opts.addons else "",
        "volcano": versions.volcano if opts.addons else "",
        "operator-namespace": OPERATOR_NAMESPACE if opts.addons else "",
        "webhook": "local" if opts.addons and opts.webhook else "off",
        "gang-scheduler": opts.gang_scheduler if opts.addons else "",
        "jobset": versions.jobset if opts.runs_jobset else "",
        "trainer": versions.trainer if opts.trainer else "",
        "kueue": versions.kueue if opts.kueue else "",
    }
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": namespace},
        "data": data,
    }


def is_running(name: str = DEFAULT_NAME) -> bool:
    kc = kubeconfig_path(name)
    if not kc.exists():
        return False
    try:
        return Kubectl(kc).ready()
    except ClusterError:
        return False


def _ready_nodes(kubectl: Kubectl) -> int:
    """How many of the fake nodes are Ready: one list (``kubectl wait`` on nodes reads them one
    by one, over three minutes for a thousand)."""
    ready = '{range .items[*]}{.status.conditions[?(@.type=="Ready")].status}{"\\n"}{end}'
    proc = kubectl.run("get", "nodes", "-l", "type=kwok", "-o", f"jsonpath={ready}", check=False)
    return proc.stdout.split().count("True") if proc.returncode == 0 else 0


def cluster_versions(opts: UpOptions, versions: Versions) -> Versions:
    """The versions the cluster runs: Kubernetes at ``opts.kubernetes_version``, else at the
    minor an existing cluster was made with, else versions.toml's. A cluster is not moved to
    another minor: that is a new cluster."""
    made = load_state(opts.name).get("kubernetes") if cluster_dir(opts.name).exists() else None
    chosen = versions.for_kubernetes(opts.kubernetes_version or made or versions.kubernetes)
    if made and minor_of(chosen.kubernetes) != minor_of(made):
        raise ClusterError(
            f"cluster {opts.name!r} runs Kubernetes {made}, not {chosen.kubernetes}: remove it "
            f"first (`tfjob-kit cluster down --name {opts.name}`) or name another cluster"
        )
    return chosen


def up(opts: UpOptions | None = None, out: TextIO | None = None) -> Path:
    """Start (or reuse) the local cluster; returns the kubeconfig path."""
    opts = opts or UpOptions()
    out = out or sys.stderr
    root = repo_root()
    versions = cluster_versions(opts, load_versions(root))
    started = time.monotonic()
    needed = [
        *build.CORE,
        *(build.ADDONS if opts.addons else ()),
        *(["jobset"] if opts.runs_jobset else []),
        *(["trainer"] if opts.trainer else []),
        *(["kueue"] if opts.kueue else []),
    ]
    build.build_all(needed, with_kubectl=None, out=out, versions=versions)

    kc = kubeconfig_path(opts.name)
    if cluster_dir(opts.name).exists():
        if not is_running(opts.name):
            _restart(opts, versions, out)
        elif stopped := stopped_components(opts.name):
            # The API server answers, yet the controller-manager or the scheduler may be gone:
            # they were killed, or (on a cluster made before they ran without leader election)
            # exited when they could not renew their leader lease, as after an etcd outage.
            say(
                out,
                f"[up] cluster {opts.name!r} answers, but {', '.join(stopped)} stopped: "
                "starting them in place",
            )
            _start_in_place(opts, versions, out)
    if is_running(opts.name):
        say(out, f"[up] reusing running cluster {opts.name!r}")
    else:
        say(out, f"[up] creating kwok cluster {opts.name!r} (Kubernetes {versions.kubernetes})")
        create_cluster(opts, versions, root, out)
    restrict(opts.name)
    kubectl = Kubectl(kc)

    wait("the API server", _serving(opts, versions, kubectl, out), opts.timeout)

    state = load_state(opts.name)
    state.update(
        {"name": opts.name, "kubernetes": versions.kubernetes, "nodes": opts.nodes.__dict__}
    )
    say(
        out,
        f"[up] fake nodes: {opts.nodes.cpu_nodes} CPU, {opts.nodes.gpu_nodes} GPU x "
        f"{opts.nodes.gpus_per_node} nvidia.com/gpu",
    )
    kubectl.apply(node_manifests(opts.nodes))
    expected = opts.nodes.cpu_nodes + opts.nodes.gpu_nodes
    wait(
        f"{expected} nodes to be Ready",
        lambda: _ready_nodes(kubectl) >= expected,
        opts.timeout,
        interval=1.0,
    )
    if opts.addons:
        start_addons(opts, versions, kubectl, state, out)
        save_state(opts.name, state)  # their ports, for an `up` after a later step failed
    if opts.runs_jobset:
        jobset.CONTROLLER.start(opts.name, versions.jobset, versions, kubectl, opts.timeout, out)
        start_rendezvous(opts.name, kubectl, out)  # running already with the addons
    if opts.trainer:
        trainer.CONTROLLER.start(opts.name, versions.trainer, versions, kubectl, opts.timeout, out)
        kubectl.apply(runtimes.shipped())  # past the controller's webhook, now that it serves
    if opts.kueue:  # last: it manages the TFJobs and TrainJobs of the CRDs above
        kueue.CONTROLLER.start(opts.name, versions.kueue, versions, kubectl, opts.timeout, out)
    state["addons"] = opts.addons
    state["jobset"] = opts.runs_jobset
    state["trainer"] = opts.trainer
    state["kueue"] = opts.kueue
    kubectl.apply([_marker(opts, versions)])
    save_state(opts.name, state)
    say(out, f"[up] ready in {time.monotonic() - started:.0f}s; export KUBECONFIG={kc}")
    return kc


def _restart(opts: UpOptions, versions: Versions, out: TextIO) -> None:
    """Bring an existing cluster whose API server does not answer back in place: kwokctl
    starts the components that are not running, with etcd's data (the addons are ``up``'s
    next steps). A cluster whose first ``up`` never finished holds nothing yet: it is
    recreated. Otherwise a failed restart stops ``up``, saying what to do: its objects are
    not deleted without being asked."""
    name = opts.name
    if not load_state(name):
        say(out, f"[up] cluster {name!r} never finished starting: recreating it")
        down(name, out=out)
        return
    stopped = ", ".join(stopped_components(name)) or "none"
    say(
        out,
        f"[up] cluster {name!r} exists but its API server does not answer (stopped: "
        f"{stopped}): starting its stopped components in place",
    )
    _start_in_place(opts, versions, out)
    say(out, f"[up] cluster {name!r} restarted; its objects are kept")


def _serving(
    opts: UpOptions, versions: Versions, kubectl: Kubectl, out: TextIO
) -> Callable[[], bool]:
    """Whether the API server serves, for ``wait``. A component that stopped fails ``up`` at
    once, with its log's end; but one that only gave up waiting for the API server
    (``kwok.GAVE_UP_WAITING``) is started again, once, when the API server serves."""
    restarted = False

    def serving() -> bool:
        nonlocal restarted
        waited = [] if restarted else gave_up_waiting(opts.name)
        check_components(opts.name, but=waited)
        if not kubectl.ready():
            return False
        if waited:
            say(
                out,
                f"[up] {', '.join(waited)} gave up waiting for the API server as it started: "
                "starting it again",
            )
            _start_in_place(opts, versions, out)
            restarted = True
            return False
        return True

    return serving


def _start_in_place(opts: UpOptions, versions: Versions, out: TextIO) -> None:
    """kwokctl starts the cluster's stopped components; a failure says what to do."""
    name = opts.name
    try:
        start_cluster(name, versions, opts.timeout, out)
        wait("the restarted API server", lambda: is_running(name), opts.timeout)
    except ClusterError as exc:
        raise ClusterError(
            f"cluster {name!r} could not be restarted: {exc}\nIts logs are in "
            f"{logs_dir(name)}. To start it afresh (its objects are lost): "
            f"tfjob-kit cluster down --name {name} && tfjob-kit cluster up --name {name}"
        ) from None


def down(name: str = DEFAULT_NAME, out: TextIO | None = None) -> None:
    """Stop every process of the cluster and remove all of its files."""
    out = out or sys.stderr
    existed = cluster_dir(name).exists()
    directory = cluster_dir(name)
    for record in reversed(records(name)):
        record.stop()
    if directory.exists():
        delete_cluster(name, out)
    release(name)
    for path in (directory.parent, kwok_workdir()):
        with contextlib.suppress(OSError):
            path.rmdir()  # only when empty
    say(out, f"[down] cluster {name!r} removed" if existed else f"[down] no cluster {name!r}")


def _built_helm() -> str | None:
    """The helm `make cluster-build` built (the roles and playbooks use it locally)."""
    try:
        return str(build.helm_path())
    except (ClusterError, VersionsError):
        return None


def status(name: str = DEFAULT_NAME) -> dict[str, Any]:
    """Whether the cluster exists and runs, its processes (pid, liveness, memory) and nodes."""
    directory = cluster_dir(name)
    info: dict[str, Any] = {
        "name": name,
        "exists": directory.exists(),
        "running": False,
        "kubeconfig": str(kubeconfig_path(name)),
        "dir": str(directory),
        "logs": str(logs_dir(name)),
        "helm": _built_helm(),
    }
    if not directory.exists():
        return info
    info["running"] = is_running(name)
    state = load_state(name)
    info["addons"] = state.get("addons")
    info["webhook"] = state.get("webhook")
    procs: dict[str, Any] = {}
    rss = 0
    for pid in kwok_pids(name):
        kib = rss_kib(pid)
        rss += kib
        cmd = ""
        with contextlib.suppress(OSError, IndexError):
            cmd = Path(Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")[0].decode()).name
        procs[cmd or f"pid-{pid}"] = {"pid": pid, "alive": kib > 0, "rss_mib": kib // 1024}
    for record in records(name):
        alive = record.alive()
        kib = rss_kib(record.pid) if alive else 0
        rss += kib
        procs[record.name] = {"pid": record.pid, "alive": alive, "rss_mib": kib // 1024}
    info["processes"] = procs
    info["rss_mib_total"] = rss // 1024
    if info["running"]:
        kubectl = Kubectl(kubeconfig_path(name))
        nodes = kubectl.get_json("nodes") or {}
        info["nodes"] = [
            {
                "name": n["metadata"]["name"],
                "gpus": n.get("status", {}).get("allocatable", {}).get("nvidia.com/gpu", "0"),
                "ready": any(
                    c.get("type") == "Ready" and c.get("status") == "True"
                    for c in n.get("status", {}).get("conditions", [])
                ),
            }
            for n in nodes.get("items", [])
        ]
    return info
