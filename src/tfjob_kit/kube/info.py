"""What a job is doing: phase, conditions, replica statuses, pods, recent events, a log tail,
and the problems diagnose.py reads from them (the same the wait of tfjob.kit.tfjob reads)."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from tfjob_kit import kueue
from tfjob_kit.kube import diagnose, follow, status
from tfjob_kit.kube.api_errors import KubeError
from tfjob_kit.kube.client import Client
from tfjob_kit.kube.connection import Connection
from tfjob_kit.kube.kinds import TFJOB, TRAINJOB, VOLCANO_JOB, WORKLOAD, Resource

# Pod labels (TFJob, TrainJob) or annotations (Volcano) naming a pod's replica type and index:
# a TrainJob's are its replicated job (the workers' is `node`) and the Job's completion index.
_REPLICA_KEYS = {
    TFJOB.kind: ("training.kubeflow.org/replica-type", "training.kubeflow.org/replica-index"),
    TRAINJOB.kind: (
        "jobset.sigs.k8s.io/replicatedjob-name",
        "batch.kubernetes.io/job-completion-index",
    ),
}
BACKENDS = {"kubeflow": TFJOB, "volcano": VOLCANO_JOB, "trainer": TRAINJOB}
_VOLCANO_KEYS = ("volcano.sh/task-spec", "volcano.sh/task-index")


@dataclass
class Query:
    name: str | None = None
    namespace: str | None = None  # None: all namespaces (only without a name)
    label_selector: str | None = None
    backend: str = "kubeflow"  # kubeflow: TFJobs; volcano: Volcano Jobs; trainer: TrainJobs
    events: int = 10  # most recent events per job (0: none)
    log_lines: int = 0  # the chief's (else worker-0's) log tail (0: none)
    unschedulable_grace: float = diagnose.DEFAULT_UNSCHEDULABLE_GRACE


@dataclass
class _Around:
    """What the problems of a namespace's jobs are read from, read once per namespace."""

    client: Client
    cluster: status.ClusterReader
    events: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    podgroups: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    workloads: dict[str, list[dict[str, Any]]] = field(default_factory=dict)

    def _read(self, what: Resource | str, namespace: str) -> list[dict[str, Any]]:
        try:
            return follow.list_source(self.client, follow.Source(what, namespace))[0]
        except KubeError:  # not readable (RBAC) or no such resource (no Volcano): not judged
            return []

    def events_in(self, namespace: str) -> list[dict[str, Any]]:
        if namespace not in self.events:
            self.events[namespace] = self._read("events", namespace)
        return self.events[namespace]

    def podgroups_in(self, namespace: str) -> list[dict[str, Any]]:
        if namespace not in self.podgroups:
            self.podgroups[namespace] = self._read(status.PODGROUP, namespace)
        return self.podgroups[namespace]

    def workloads_in(self, namespace: str) -> list[dict[str, Any]]:
        """Kueue's Workloads of the namespace (read only for a job that names a queue)."""
        if namespace not in self.workloads:
            self.workloads[namespace] = self._read(WORKLOAD, namespace)
        return self.workloads[namespace]


def _pod_summary(pod: dict[str, Any], resource: Resource) -> dict[str, Any]:
    metadata = pod.get("metadata", {})
    labels = metadata.get("labels") or {}
    annotations = metadata.get("annotations") or {}
    type_key, index_key = _REPLICA_KEYS.get(resource.kind, _VOLCANO_KEYS)
    pod_status = pod.get("status", {})
    containers = pod_status.get("containerStatuses") or []
    exit_codes = [
        ((c.get("state") or {}).get("terminated") or {}).get("exitCode") for c in containers
    ]
    return {
        "name": metadata.get("name"),
        "replica_type": labels.get(type_key) or annotations.get(type_key),
        "replica_index": labels.get(index_key) or annotations.get(index_key),
        "node": pod.get("spec", {}).get("nodeName"),
        "phase": pod_status.get("phase"),
        "restarts": sum(int(c.get("restartCount") or 0) for c in containers),
        "exit_codes": [c for c in exit_codes if c is not None],
    }


def _log_pod(pods: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The chief (or master), else worker 0 (a TrainJob's node 0), else the first pod."""

    def rank(pod: dict[str, Any]) -> tuple[int, str]:
        kind = str(pod.get("replica_type") or "").lower()
        index = str(pod.get("replica_index") or "0")
        if kind in ("chief", "master") and index == "0":
            return 0, ""
        if kind in ("worker", "node") and index == "0":
            return 1, ""
        return 2, str(pod.get("name"))

    return min(pods, key=rank, default=None)


def _events(
    client: Client, resource: Resource, namespace: str, name: str, limit: int
) -> list[dict[str, Any]]:
    items = client.events(namespace, resource.kind, name)
    items.sort(key=lambda e: str(e.get("lastTimestamp") or e.get("eventTime") or ""))
    return [
        {
            "type": e.get("type"),
            "reason": e.get("reason"),
            "message": e.get("message"),
            "count": e.get("count"),
            "last_seen": e.get("lastTimestamp") or e.get("eventTime"),
        }
        for e in items[-limit:]
    ]


def describe(
    client: Client,
    resource: Resource,
    obj: dict[str, Any],
    query: Query,
    around: _Around | None = None,
) -> dict[str, Any]:
    metadata = obj["metadata"]
    namespace, name = metadata["namespace"], metadata["name"]
    around = around or _Around(client, status.ClusterReader(client, time.monotonic))
    full = client.pods(namespace, resource.selector(name))
    pods = [_pod_summary(p, resource) for p in full]
    pods.sort(key=lambda p: str(p["name"]))
    podgroups = around.podgroups_in(namespace)
    queued = kueue.queue_of(obj) is not None
    workload = kueue.owned_workload(obj, around.workloads_in(namespace)) if queued else None
    problems = diagnose.diagnose(
        obj,
        full,
        around.events_in(namespace),
        diagnose.Context(
            now=time.time(),
            unschedulable_grace=query.unschedulable_grace,
            cluster=around.cluster.capacity,
            podgroups=podgroups,
            queues=around.cluster.queues(podgroups) if podgroups else {},
            workload=workload,
        ),
    )
    result: dict[str, Any] = {
        "kind": resource.kind,
        "api_version": resource.api_version,
        "namespace": namespace,
        "name": name,
        "created": metadata.get("creationTimestamp"),
        **status.job_status(resource, obj).as_dict(),
        "problems": [p.as_dict() for p in problems],
        "queue": kueue.admission(workload).as_dict() if workload else None,
        "pods": pods,
        "events": _events(client, resource, namespace, name, query.events) if query.events else [],
    }
    if query.log_lines:
        chosen = _log_pod(pods)
        log: dict[str, Any] = {"pod": None, "lines": []}
        if chosen is not None:
            log["pod"] = chosen["name"]
            try:
                text = client.pod_log(namespace, str(chosen["name"]), query.log_lines)
                log["lines"] = text.splitlines()
            except KubeError as exc:  # a pod without a log yet is not a failure of the query
                log["error"] = str(exc)
        result["log"] = log
    return result


def jobs(client: Client, resource: Resource, query: Query) -> list[dict[str, Any]]:
    """One job (name and namespace) or every job matching namespace and selector."""
    if query.name:
        obj = client.get(resource, query.namespace or "default", query.name)
        found = [obj] if obj is not None else []
    else:
        found = client.list_objects(resource, query.namespace, query.label_selector)
        found.sort(key=lambda o: (o["metadata"]["namespace"], o["metadata"]["name"]))
    around = _Around(client, status.ClusterReader(client, time.monotonic))
    return [describe(client, resource, obj, query, around) for obj in found]


def read(conn: Connection, query: Query) -> list[dict[str, Any]]:
    """The query's jobs, described. Raises KubeError."""
    resource = BACKENDS[query.backend]
    with Client(conn) as client:
        return jobs(client, resource, query)
