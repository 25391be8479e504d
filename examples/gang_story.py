"""Seed 003's story, measured on the local cluster: why distributed TensorFlow needs gangs.

Two TFJobs (examples/gang/) each need 6 GPUs: 1 parameter server and 3 workers with 2 GPUs.
The local cluster has 8. They are submitted together twice, on the same fake nodes:

* with the training-operator's default (no gang scheduling): each pod goes to the default
  scheduler on its own, so the second job is partly placed: its placed pods hold GPUs and wait
  for peers that cannot be placed (a TensorFlow task does nothing until every task in its
  TF_CONFIG is up; the local cluster's rendezvous stand-in models that);
* with Volcano gang scheduling: a job's pods are created and placed all together or not at all,
  so the jobs run one after the other and nothing waits while holding GPUs;
* with Kueue: each job is submitted to a LocalQueue whose ClusterQueue's nominal GPU quota is
  the cluster's GPUs; Kueue admits a job whole when the quota has room for all of it and keeps
  the other suspended (no pod made) until then, with waitForPodsReady on (the kueue chart's
  timeout, 5 minutes) to take back the quota of a job whose pods do not all start.

The pods are polled while the jobs run; the numbers printed are what was observed.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

import yaml

from tfjob_kit.cluster import local
from tfjob_kit.cluster.kubectl import Kubectl
from tfjob_kit.cluster.procs import load_state
from tfjob_kit.cluster.rendezvous import members
from tfjob_kit.kube import task
from tfjob_kit.kube.client import Client
from tfjob_kit.kube.connection import Connection
from tfjob_kit.kube.kinds import TFJOB
from tfjob_kit.kube.status import job_status
from tfjob_kit.model import GPU_RESOURCE
from tfjob_kit.report.timeline import Lane, Panel, pod_gpus

JOBS_DIR = Path(__file__).resolve().parent / "gang"
SCHEDULERS = {
    "none": "default scheduler (no gang)",
    "volcano": "Volcano gang scheduling",
    "kueue": "Kueue (whole jobs admitted by quota)",
}
# The Kueue run's queue: a ClusterQueue of the cluster's GPUs (and more CPU and memory than the
# nodes have: GPUs are the constraint), a LocalQueue of that name in the run's namespace.
KUEUE_QUEUE = "tfjob-kit-gang"


@dataclass
class JobTimeline:
    name: str
    members: int = 0
    gpus: int = 0
    first_placed: float | None = None
    all_placed: float | None = None
    finished: float | None = None
    result: str = "Pending"
    partly_placed_s: float = 0.0
    held_gpu_s: float = 0.0  # GPUs held by placed pods while the job was only partly placed
    worst: str = ""  # the most pods placed while partly placed, and why the rest were not
    # At each look: (seconds, GPUs of its running pods if all are placed, else 0, GPUs of its
    # running pods if only some are placed, else 0): the timeline picture's lane.
    samples: list[tuple[float, float, float]] = field(default_factory=list)
    _worst_key: tuple[int, bool] = field(default=(0, False), repr=False)
    _partly_seen: bool = field(default=False, repr=False)  # partly placed at the last look


def _unschedulable(pods: list[dict[str, Any]]) -> str:
    for pod in pods:
        for condition in pod.get("status", {}).get("conditions") or []:
            if condition.get("type") == "PodScheduled" and condition.get("status") == "False":
                # "0/4 nodes are available: 4 Insufficient nvidia.com/gpu. preemption: ..."
                return str(condition.get("message", "")).split(". ")[0].strip()
    return ""


def _observe(
    client: Client, namespace: str, names: list[str], timeout: float, interval: float = 0.2
) -> dict[str, JobTimeline]:
    timelines = {n: JobTimeline(n) for n in names}
    start = last = time.monotonic()
    while True:
        now = time.monotonic()
        elapsed, dt = now - start, now - last
        last = now
        for name, line in timelines.items():
            job = client.get(TFJOB, namespace, name)
            state = job_status(TFJOB, job)
            line.members = members(TFJOB, job or {})
            pods = client.pods(namespace, TFJOB.selector(name))
            placed = [p for p in pods if p.get("spec", {}).get("nodeName")]
            active = [
                p for p in placed if p.get("status", {}).get("phase") not in ("Succeeded", "Failed")
            ]
            line.gpus = sum(pod_gpus(p) for p in pods) or line.gpus
            if placed and line.first_placed is None:
                line.first_placed = elapsed
            if line.members and len(placed) >= line.members and line.all_placed is None:
                line.all_placed = elapsed
            partly = 0 < len(placed) < line.members and line.finished is None
            # Only time between two looks that both saw the job partly placed counts: a gang's
            # pods are bound by one API call each, so a single look can land between the binds
            # of a placement the scheduler made all at once. A real stall is seen look after look.
            stalled = partly and line._partly_seen
            if stalled:
                line.partly_placed_s += dt
                line.held_gpu_s += dt * sum(pod_gpus(p) for p in active)
            line._partly_seen = partly
            running = sum(pod_gpus(p) for p in active)
            whole = bool(line.members) and len(placed) >= line.members
            # The picture counts as the table does: held from the second look that saw it so.
            line.samples.append((elapsed, running if whole else 0, running if stalled else 0))
            # The look with the most pods placed, and among those one that already says why the
            # rest wait: the scheduler writes a pod's PodScheduled=False condition only after it
            # has tried that pod, which may come a look after the first pods were bound.
            waiting = _unschedulable([p for p in pods if p not in placed]) if partly else ""
            if partly and (len(placed), bool(waiting)) > line._worst_key:
                line._worst_key = (len(placed), bool(waiting))
                line.worst = (
                    f"{len(placed)} of {line.members} pods placed, holding "
                    f"{sum(pod_gpus(p) for p in placed)} GPUs; the other "
                    f"{line.members - len(placed)} Pending" + (f": {waiting}" if waiting else "")
                )
            if state.phase in ("Succeeded", "Failed") and line.finished is None:
                line.finished, line.result = elapsed, state.phase
        if all(t.finished is not None for t in timelines.values()):
            return timelines
        if elapsed > timeout:
            for line in timelines.values():
                if line.finished is None:
                    line.result = f"stalled ({timeout:.0f}s)"
            return timelines
        time.sleep(interval)


def cluster_gpus(kubectl: Kubectl) -> int:
    """The GPUs the cluster's nodes can allocate, all together."""
    nodes = (kubectl.get_json("nodes") or {}).get("items") or []
    return sum(
        int(((n.get("status") or {}).get("allocatable") or {}).get(GPU_RESOURCE, 0) or 0)
        for n in nodes
    )


def kueue_queue(namespace: str, gpus: int) -> list[dict[str, Any]]:
    """The Kueue run's ResourceFlavor, ClusterQueue (nominal GPU quota: ``gpus``) and LocalQueue."""
    api = "kueue.x-k8s.io/v1beta2"
    quota = [
        {"name": "cpu", "nominalQuota": "1000"},
        {"name": "memory", "nominalQuota": "4Ti"},
        {"name": GPU_RESOURCE, "nominalQuota": str(gpus)},
    ]
    return [
        {"apiVersion": api, "kind": "ResourceFlavor", "metadata": {"name": KUEUE_QUEUE}},
        {
            "apiVersion": api,
            "kind": "ClusterQueue",
            "metadata": {"name": KUEUE_QUEUE},
            "spec": {
                "namespaceSelector": {},
                "resourceGroups": [
                    {
                        "coveredResources": ["cpu", "memory", GPU_RESOURCE],
                        "flavors": [{"name": KUEUE_QUEUE, "resources": quota}],
                    }
                ],
            },
        },
        {
            "apiVersion": api,
            "kind": "LocalQueue",
            "metadata": {"name": KUEUE_QUEUE, "namespace": namespace},
            "spec": {"clusterQueue": KUEUE_QUEUE},
        },
    ]


def run_once(
    cluster: str, scheduler: str, out: TextIO, timeout: float = 120.0
) -> dict[str, JobTimeline]:
    """Submit both jobs together with the operator set to `scheduler` (with Kueue: no gang, the
    jobs submitted to Kueue's queue); observe them. Jobs that never finish (partly placed jobs
    can hold each other's GPUs forever) are removed after `timeout`, so that the next run starts
    on the same empty nodes."""
    queued = scheduler == "kueue"
    kubeconfig = local.up(_as_it_runs(cluster, "none" if queued else scheduler, queued), out=out)
    namespace = f"tfjob-kit-gang-{scheduler}"
    kubectl = Kubectl(kubeconfig)
    kubectl.apply([{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}}])
    if queued:
        kubectl.apply(kueue_queue(namespace, cluster_gpus(kubectl)))
    docs = [yaml.safe_load(p.read_text("utf-8")) for p in sorted(JOBS_DIR.glob("*.yaml"))]
    names = [d["metadata"]["name"] for d in docs]
    connection = Connection(kubeconfig=str(kubeconfig))
    # A rerun starts from nothing: the previous run's jobs go first.
    task.run(
        task.Request(
            definition=docs, namespace=namespace, state="absent", wait=True, connection=connection
        )
    )
    queue = KUEUE_QUEUE if queued else None
    task.run(task.Request(definition=docs, namespace=namespace, queue=queue, connection=connection))
    with Client(connection) as client:
        timelines = _observe(client, namespace, names, timeout)
    if any(t.finished is None for t in timelines.values()):
        task.run(
            task.Request(
                definition=docs,
                namespace=namespace,
                state="absent",
                wait=True,
                connection=connection,
            )
        )
    return timelines


HEADERS = [
    "job",
    "needs",
    "first pod placed",
    "all placed",
    "finished",
    "result",
    "partly placed",
    "GPU·s held waiting",
]


def _fmt(value: float | None) -> str:
    return "-" if value is None else f"{value:.1f}s"


def rows(timelines: dict[str, JobTimeline]) -> list[list[str]]:
    return [
        [
            t.name,
            f"{t.members} pods / {t.gpus} GPUs",
            _fmt(t.first_placed),
            _fmt(t.all_placed),
            _fmt(t.finished),
            t.result,
            _fmt(t.partly_placed_s),
            f"{t.held_gpu_s:.0f}",
        ]
        for t in timelines.values()
    ]


def _as_it_runs(cluster: str, gang_scheduler: str, kueue: bool = False) -> local.UpOptions:
    """An ``up`` of the cluster that keeps what runs on it (JobSet, Trainer, Kueue: an ``up``
    without them would leave their processes running, and their fail-closed webhooks, while the
    cluster's record says they are off, so a restart would not bring them back), with the
    operator's gang scheduler, and Kueue too when asked."""
    state = load_state(cluster)
    return local.UpOptions(
        name=cluster,
        gang_scheduler=gang_scheduler,
        jobset=bool(state.get("jobset")),
        trainer=bool(state.get("trainer")),
        kueue=kueue or bool(state.get("kueue")),
    )


def story(cluster: str, out: TextIO) -> dict[str, dict[str, JobTimeline]]:
    """The three runs; the operator is left with Volcano gang scheduling (the cluster's default),
    Kueue running beside it (it leaves jobs without a queue label alone), recorded as running."""
    runs: dict[str, dict[str, JobTimeline]] = {}
    try:
        for scheduler in SCHEDULERS:
            runs[scheduler] = run_once(cluster, scheduler, out)
    finally:
        local.up(_as_it_runs(cluster, "volcano"), out=out)
    return runs


def panels(runs: dict[str, dict[str, JobTimeline]]) -> list[Panel]:
    """The story as a picture: a panel per scheduler, a lane per job."""
    return [
        Panel(
            SCHEDULERS[scheduler],
            [Lane(f"{t.name} ({t.gpus} GPUs)", t.samples) for t in timelines.values()],
        )
        for scheduler, timelines in runs.items()
    ]


def verdict(runs: dict[str, dict[str, JobTimeline]]) -> list[str]:
    """What the story must show; the problems, if it did not."""
    problems = []
    plain = runs["none"]
    if max(t.partly_placed_s for t in plain.values()) < 2.0:
        problems.append("without gang scheduling no job stayed partly placed for 2 s or more")
    # Without gangs, a stall that never ends is the story too (both jobs partly placed).
    for scheduler in ("volcano", "kueue"):
        for t in runs[scheduler].values():
            if t.partly_placed_s >= 1.0:
                problems.append(
                    f"{SCHEDULERS[scheduler]}: {t.name} was partly placed for "
                    f"{t.partly_placed_s:.1f}s"
                )
            if t.result != "Succeeded":
                problems.append(f"{SCHEDULERS[scheduler]}: {t.name} ended {t.result}")
    return problems
