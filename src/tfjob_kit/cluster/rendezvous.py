"""The local cluster's stand-in for TensorFlow's start-up rendezvous.

A distributed TensorFlow task does no training until every task listed in its TF_CONFIG is
reachable: a job whose pods are only partly placed holds its resources and makes no progress.
That is the failure gang scheduling exists for, so the local cluster must show it. kwok plays
the kubelet; this process plays the part of TensorFlow that waits for peers. When every replica
of a TFJob (or every task pod of a Volcano Job, or every pod a JobSet pod's TF_CONFIG lists: a
TrainJob's) is running, it annotates the job's running pods with
``tfjob-kit.dev/peers-running``; kwok's finish stages (``components/kwok/pod-stages.yaml``) only
let an annotated pod complete successfully. A JobSet pod without a TF_CONFIG waits for nobody: it
is annotated once it runs. A pod told to fail (annotation ``tfjob-kit.dev/exit-code``) crashes
whether or not its peers are there, as a real one can.

Run by ``tfjob-kit cluster up`` as ``python -m tfjob_kit.cluster.rendezvous --kubeconfig K``
with a ServiceAccount that may only read jobs and pods and patch pods (``GRANTS``).

It sweeps when the jobs' pods change: it watches them (``kube.follow``) and sweeps at most every
``--interval`` seconds while they change, and every ``--resync`` seconds when nothing does. An
idle cluster costs it one open watch, where polling four times a second cost each local cluster
eight pod lists a second (about a tenth of a core, its API server's and its own).
"""

from __future__ import annotations

import argparse
import json
import queue
import re
import sys
import time
from collections import defaultdict
from collections.abc import Iterable
from datetime import UTC, datetime
from typing import Any

from tfjob_kit import model
from tfjob_kit.cluster.chart_rbac import Grants
from tfjob_kit.kube.api_errors import KubeError
from tfjob_kit.kube.client import Client
from tfjob_kit.kube.connection import Connection
from tfjob_kit.kube.follow import Broken, Follower, Source
from tfjob_kit.kube.kinds import TFJOB, VOLCANO_JOB, Resource

PEERS_ANNOTATION = "tfjob-kit.dev/peers-running"
GRANTS = Grants(
    cluster_rules=[
        {"apiGroups": [""], "resources": ["pods"], "verbs": ["list", "watch", "patch"]},
        {"apiGroups": ["kubeflow.org"], "resources": ["tfjobs"], "verbs": ["list"]},
        {"apiGroups": ["batch.volcano.sh"], "resources": ["jobs"], "verbs": ["list"]},
    ]
)
# A pod counts as present for its peers once it runs; one that already finished did meet them.
_STARTED = ("Running", "Succeeded")


def members(resource: Resource, job: dict[str, Any]) -> int:
    """How many tasks the job's TF_CONFIG lists: every replica (TFJob) or task pod (Volcano)."""
    if resource is TFJOB:
        return sum(r.count for r in model.replicas(job))
    tasks = (job.get("spec") or {}).get("tasks") or []
    return sum(int(t.get("replicas", 1)) for t in tasks if isinstance(t, dict))


def to_release(pods: Iterable[dict[str, Any]], expected: int) -> list[dict[str, Any]]:
    """The pods of one job to annotate: its running, not yet annotated pods, once all of the
    job's `expected` tasks have started (-1: at once)."""
    live = [p for p in pods if not p["metadata"].get("deletionTimestamp")]
    started = {
        p["metadata"]["name"] for p in live if (p.get("status") or {}).get("phase") in _STARTED
    }
    if expected == 0 or len(started) < expected:  # -1: nobody to wait for
        return []
    return [
        p
        for p in live
        if (p.get("status") or {}).get("phase") == "Running"
        and PEERS_ANNOTATION not in (p["metadata"].get("annotations") or {})
    ]


JOBSET_LABEL = "jobset.sigs.k8s.io/jobset-name"
_REFERENCE = re.compile(r"\$\([A-Za-z_][A-Za-z0-9_.-]*\)")


def tf_members(pod: dict[str, Any]) -> int | None:
    """How many tasks the TF_CONFIG in the pod's spec lists (its ``$(VAR)`` references, the task
    index, read as 0), or None when no container has one (not a TensorFlow pod)."""
    for container in (pod.get("spec") or {}).get("containers") or []:
        for env in container.get("env") or []:
            if env.get("name") == "TF_CONFIG" and isinstance(env.get("value"), str):
                try:
                    config = json.loads(_REFERENCE.sub("0", env["value"]))
                except ValueError:
                    return None
                cluster = config.get("cluster") if isinstance(config, dict) else None
                if isinstance(cluster, dict):
                    return sum(len(v) for v in cluster.values() if isinstance(v, list))
    return None


def jobset_to_release(pods: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The pods of one JobSet to annotate: each running one without a TF_CONFIG, and the
    TensorFlow ones once as many have started as their TF_CONFIG lists."""
    members = [tf_members(p) for p in pods]  # each pod's TF_CONFIG parsed once
    plain = [p for p, m in zip(pods, members, strict=True) if m is None]
    tensorflow = [p for p, m in zip(pods, members, strict=True) if m is not None]
    expected = max((m for m in members if m is not None), default=0)
    return to_release(plain, -1) + to_release(tensorflow, expected)


def _jobs(client: Client, resource: Resource) -> dict[tuple[str, str], int]:
    try:
        items = client.list_objects(resource)
    except KubeError:  # the CRD is not installed (yet): no such jobs
        return {}
    return {
        (j["metadata"]["namespace"], j["metadata"]["name"]): members(resource, j) for j in items
    }


def sweep(client: Client) -> int:
    """One pass over every job; returns how many pods were released."""
    released = 0
    for resource in (TFJOB, VOLCANO_JOB):
        by_job: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)
        for pod in client.pods_everywhere(resource.job_label):
            meta = pod["metadata"]
            by_job[(meta["namespace"], meta["labels"][resource.job_label])].append(pod)
        if not by_job:
            continue  # no such pods: the jobs need not be read (an idle cluster, 4 times a second)
        expected = _jobs(client, resource)
        for key, pods in by_job.items():
            released += _annotate(client, key[0], to_release(pods, expected.get(key, 0)))
    by_jobset: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)
    for pod in client.pods_everywhere(JOBSET_LABEL):
        meta = pod["metadata"]
        by_jobset[(meta["namespace"], meta["labels"][JOBSET_LABEL])].append(pod)
    for (namespace, _), pods in by_jobset.items():
        released += _annotate(client, namespace, jobset_to_release(pods))
    return released


def _annotate(client: Client, namespace: str, pods: list[dict[str, Any]]) -> int:
    for pod in pods:
        stamp = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
        client.annotate_pod(namespace, pod["metadata"]["name"], {PEERS_ANNOTATION: stamp})
    return len(pods)


# The pods a sweep looks at, followed in every namespace.
SOURCES = [
    Source("pods", "", label_selector=label)
    for label in (TFJOB.job_label, VOLCANO_JOB.job_label, JOBSET_LABEL)
]


def serve(client: Client, follower: Follower, interval: float, resync: float) -> None:
    """Sweep whenever the followed pods change, at most every `interval` seconds (a burst of
    changes is one sweep), and every `resync` seconds when nothing changes. Returns when a sweep
    fails or a source is lost for good (an expired token): the caller reconnects."""
    last = 0.0
    while True:
        try:
            updates = [follower.updates.get(timeout=resync)]
        except queue.Empty:
            updates = []
        wait = last + interval - time.monotonic()
        if wait > 0:
            time.sleep(wait)
        while True:  # what arrived meanwhile is in this sweep too
            try:
                updates.append(follower.updates.get_nowait())
            except queue.Empty:
                break
        for update in updates:
            if isinstance(update, Broken):
                print(f"watch: {update.error}", file=sys.stderr, flush=True)
                if update.permanent:
                    return
        last = time.monotonic()
        try:
            count = sweep(client)
        except Exception as exc:  # API server restarting, a pod gone meanwhile, an odd
            # object, an expired token: log it, reconnect and try again; exiting would stall
            # every job of the cluster.
            print(f"sweep failed: {exc}", file=sys.stderr, flush=True)
            return
        if count:
            print(f"released {count} pod(s) whose peers all run", flush=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tfjob_kit.cluster.rendezvous")
    parser.add_argument("--kubeconfig", required=True)
    parser.add_argument("--interval", type=float, default=0.25)
    parser.add_argument("--resync", type=float, default=30.0)
    args = parser.parse_args(argv)
    while True:
        # A new client after any failure: it re-reads the kubeconfig's token file, which
        # `tfjob-kit cluster up` renews (the tokens are short-lived).
        try:
            with (
                Client(Connection(kubeconfig=args.kubeconfig)) as client,
                Follower(client, SOURCES) as follower,
            ):
                serve(client, follower, args.interval, args.resync)
        except Exception as exc:  # the kubeconfig unreadable for a moment (being renewed)
            print(f"connect failed: {exc}", file=sys.stderr, flush=True)
        time.sleep(args.interval)


if __name__ == "__main__":
    sys.exit(main())
