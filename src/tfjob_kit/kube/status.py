"""A job's state in words (phase, conditions, replica statuses) and waiting for one.

TFJobs report conditions (Created, Running, Restarting, Succeeded, Failed, Suspended). Volcano
Jobs report a phase; it is read as the same vocabulary (Completed is also Succeeded; Aborted and
Terminated are also Failed), so the same wait_for/fail_on work for both backends.
"""

from __future__ import annotations

import heapq
import itertools
import queue
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from tfjob_kit import kueue
from tfjob_kit.kube import diagnose, follow
from tfjob_kit.kube.api_errors import KubeError
from tfjob_kit.kube.client import Client, core_path, resource_path
from tfjob_kit.kube.kinds import TFJOB, TRAINJOB, WORKLOAD, Resource

CONDITION_ORDER = ("Created", "Suspended", "Running", "Restarting", "Succeeded", "Failed")
# Volcano phases after which the job's pods do not run again.
VOLCANO_FINISHED = ("Completed", "Failed", "Aborted", "Terminated")
VOLCANO_ALIASES = {
    "Completed": "Succeeded",
    "Aborted": "Failed",
    "Terminated": "Failed",
    "Pending": "Created",
    "Completing": "Running",
    "Aborting": "Failed",
    "Terminating": "Failed",
}
# A TrainJob's conditions (Trainer v2.3), in the order a job goes through them; Complete is also
# Succeeded, so that one wait_for serves TFJobs and TrainJobs.
TRAINJOB_ORDER = ("Suspended", "Complete", "Failed")
# What wait_for and fail_on may name: the TFJob conditions, the Volcano phases a job rests in
# (Pending, and the finished ones) and the TrainJob conditions, under their own names. The
# tfjob.kit.tfjob module's wait_for/fail_on choices are a copy that tests/unit/test_drift.py
# holds equal.
WAIT_CONDITIONS = tuple(
    dict.fromkeys((*CONDITION_ORDER, "Pending", *VOLCANO_FINISHED, *TRAINJOB_ORDER))
)


Key = tuple[Resource, str, str]


class WaitError(KubeError):
    """A wait ended without the wanted condition: a failure condition, a fatal problem, a
    timeout, a deletion. ``statuses`` holds what was last known of each job, problems too."""

    def __init__(
        self, message: str, reason: str, statuses: dict[Key, JobStatus] | None = None
    ) -> None:
        super().__init__(message, reason)
        self.statuses = dict(statuses or {})


@dataclass
class JobStatus:
    phase: str
    true: frozenset[str]
    reason: str = ""
    message: str = ""
    conditions: list[dict[str, Any]] = field(default_factory=list)
    replica_statuses: dict[str, Any] = field(default_factory=dict)
    start_time: str | None = None
    completion_time: str | None = None
    problems: list[dict[str, Any]] = field(default_factory=list)
    # Where a job submitted to Kueue stands (kueue.Admission), None for the others.
    queue: dict[str, Any] | None = None

    def as_dict(self) -> dict[str, Any]:
        return {
            "phase": self.phase,
            "reason": self.reason,
            "message": self.message,
            "conditions": self.conditions,
            "replica_statuses": self.replica_statuses,
            "start_time": self.start_time,
            "completion_time": self.completion_time,
            "problems": self.problems,
            "queue": self.queue,
        }


def job_status(resource: Resource, obj: dict[str, Any] | None) -> JobStatus:
    if obj is None:
        return JobStatus("Absent", frozenset())
    status = obj.get("status") if isinstance(obj.get("status"), dict) else {}
    assert isinstance(status, dict)
    if resource is TRAINJOB:
        return _trainjob_status(status)
    if resource is TFJOB:
        conditions = [c for c in status.get("conditions") or [] if isinstance(c, dict)]
        true = [c for c in conditions if c.get("status") == "True"]
        latest = max(
            true,
            key=lambda c: (
                CONDITION_ORDER.index(c["type"]) if c.get("type") in CONDITION_ORDER else -1
            ),
            default=None,
        )
        return JobStatus(
            phase=str(latest["type"]) if latest else "Pending",
            true=frozenset(str(c.get("type")) for c in true),
            reason=str(latest.get("reason", "")) if latest else "",
            message=str(latest.get("message", "")) if latest else "",
            conditions=conditions,
            replica_statuses=dict(status.get("replicaStatuses") or {}),
            start_time=status.get("startTime"),
            completion_time=status.get("completionTime"),
        )
    state = status.get("state") if isinstance(status.get("state"), dict) else {}
    assert isinstance(state, dict)
    phase = str(state.get("phase") or "Pending")
    names = {phase} | ({VOLCANO_ALIASES[phase]} if phase in VOLCANO_ALIASES else set())
    counts = {
        k: status[k]
        for k in ("pending", "running", "succeeded", "failed", "terminating", "unknown")
        if status.get(k)
    }
    conditions = [c for c in status.get("conditions") or [] if isinstance(c, dict)]
    running = [c.get("lastTransitionTime") for c in conditions if c.get("status") == "Running"]
    return JobStatus(
        phase=phase,
        true=frozenset(names),
        reason=str(state.get("reason", "")),
        message=str(state.get("message", "")),
        conditions=conditions,
        replica_statuses={"tasks": dict(status.get("taskStatusCount") or {}), **counts},
        start_time=running[0] if running else None,
        completion_time=state.get("lastTransitionTime") if phase in VOLCANO_FINISHED else None,
    )


def _trainjob_status(status: dict[str, Any]) -> JobStatus:
    """A TrainJob's: its latest true condition, else Running once a Job of its JobSet has
    active pods (``jobsStatus``), else Created; the Jobs' counts by replicated job."""
    conditions = [c for c in status.get("conditions") or [] if isinstance(c, dict)]
    true = [c for c in conditions if c.get("status") == "True" and c.get("type") in TRAINJOB_ORDER]
    latest = max(true, key=lambda c: TRAINJOB_ORDER.index(c["type"]), default=None)
    jobs = {
        str(j.get("name")): {k: v for k, v in j.items() if k != "name" and v}
        for j in status.get("jobsStatus") or []
        if isinstance(j, dict)
    }
    phase = (
        str(latest["type"])
        if latest
        else ("Running" if any(j.get("active") for j in jobs.values()) else "Created")
    )
    names = {phase} | ({"Succeeded"} if phase == "Complete" else set())
    return JobStatus(
        phase=phase,
        true=frozenset(names),
        reason=str(latest.get("reason", "")) if latest else "",
        message=str(latest.get("message", "")) if latest else "",
        conditions=conditions,
        replica_statuses=jobs,
        completion_time=latest.get("lastTransitionTime")
        if phase == "Complete" and latest
        else None,
    )


def failed_pods(client: Client, resource: Resource, namespace: str, name: str) -> list[str]:
    """One line per failed pod or container of the job: where it ran and how it ended."""
    lines = []
    for pod in client.pods(namespace, resource.selector(name)):
        pod_name = pod["metadata"]["name"]
        node = pod.get("spec", {}).get("nodeName") or "no node"
        pod_status = pod.get("status", {})
        for container in pod_status.get("containerStatuses") or []:
            ended = (container.get("state") or {}).get("terminated") or (
                container.get("lastState") or {}
            ).get("terminated")
            if ended and ended.get("exitCode", 0) != 0:
                lines.append(
                    f"pod {pod_name} on {node}: container {container.get('name')} "
                    f"exited with code {ended.get('exitCode')} "
                    f"({ended.get('reason') or 'no reason'})"
                )
        if pod_status.get("phase") == "Failed" and not any(pod_name in x for x in lines):
            lines.append(
                f"pod {pod_name} on {node} failed: "
                f"{pod_status.get('reason') or pod_status.get('message') or 'no reason'}"
            )
    return lines


PODGROUP = Resource(
    "scheduling.volcano.sh",
    "v1beta1",
    "podgroups",
    "PodGroup",
    "the tfjob.kit.volcano role (playbooks/site.yml with tfjob_kit_scheduler: volcano)",
    "",
)
QUEUE = Resource("scheduling.volcano.sh", "v1beta1", "queues", "Queue", PODGROUP.installed_by, "")
# Sources whose objects are the jobs' companions, not jobs (watched only where installed).
COMPANIONS = (PODGROUP, WORKLOAD)
# Events kept while waiting: the latest of each series about the jobs' own objects, at most this
# many in all (the oldest go first).
MAX_EVENTS = 2000
# A job nothing was told about is diagnosed again after this many ticks (a wait on 500 pending
# jobs read each of them every tick, most of a core).
REREAD_TICKS = 5
NODES_MAX_AGE = 30.0


class _View:
    """What the watches have told about the jobs: bounded by the jobs' own objects (the jobs,
    their pods and PodGroups, the latest of each event series about them).

    Indexed by job, so that reading one job's share costs what the job has, not what all the
    jobs have (a wait on 500 jobs reads each of them every tick). A pod is kept without its
    spec but for its node: a 1,000-worker job's pods each carry every worker's address in
    TF_CONFIG, which would make the memory grow with the square of the pods."""

    def __init__(self, keys: list[Key]) -> None:
        self.keys = keys
        self.names: dict[tuple[Resource, str], set[str]] = {}
        self.in_namespace: dict[str, set[str]] = {}  # every job's name, by namespace
        for resource, namespace, name in keys:
            self.names.setdefault((resource, namespace), set()).add(name)
            self.in_namespace.setdefault(namespace, set()).add(name)
        self.labels = {resource.job_label for resource, _, _ in keys}
        # The jobs something was told about since ``take_changed`` (more is harmless: a job
        # read again for nothing).
        self.changed: set[Key] = set(keys)
        self.jobs: dict[Key, dict[str, Any]] = {}
        self.listed: set[tuple[Resource, str]] = set()
        self.pods: dict[tuple[str, str], dict[str, Any]] = {}
        # (namespace, job label, its value) -> pod name -> pod
        self.pods_by_job: dict[tuple[str, str, str], dict[str, dict[str, Any]]] = {}
        self.podgroups: dict[tuple[str, str], dict[str, Any]] = {}
        # (namespace, owner's uid) -> PodGroup name -> PodGroup
        self.podgroups_by_owner: dict[tuple[str, str], dict[str, dict[str, Any]]] = {}
        # Kueue's Workloads, by (namespace, name) and by (namespace, owner's uid)
        self.workloads: dict[tuple[str, str], dict[str, Any]] = {}
        self.workloads_by_owner: dict[tuple[str, str], dict[str, Any]] = {}
        self.events: dict[tuple[str, str, str, str, str], dict[str, Any]] = {}
        # (namespace, kind, name) of the object an event is about -> its events, as in `events`
        self.events_about: dict[tuple[str, str, str], dict[tuple[str, ...], dict[str, Any]]] = {}
        # The eviction order of `events` (the oldest first), without a scan of them all: a heap
        # of (event time, first arrival, key), and each kept event's first arrival.
        self._oldest: list[tuple[float, int, tuple[str, str, str, str, str]]] = []
        self._arrivals = itertools.count()
        self.event_order: dict[tuple[str, str, str, str, str], int] = {}
        self.broken: dict[str, str] = {}

    def _touch(self, namespace: str, name: str) -> None:
        """Mark changed the jobs of the namespace whose name is ``name`` or a prefix of it ending
        before a dash (a job's pods, Services and PodGroups are named so)."""
        names = self.in_namespace.get(namespace, set())
        mine = {name[:i] for i, c in enumerate(name) if c == "-"} | {name}
        for job_name in mine & names:
            self.changed.update(
                (resource, namespace, job_name)
                for resource, ns in self.names
                if ns == namespace and job_name in self.names[(resource, ns)]
            )

    def take_changed(self) -> set[Key]:
        changed, self.changed = self.changed, set()
        return changed

    def _job_of(self, namespace: str, name: str, prefixed: bool) -> bool:
        """``name`` is a job's, or (``prefixed``) starts with a job's name and a dash."""
        names = self.in_namespace.get(namespace, set())
        if name in names:
            return True
        # name starts with n + "-" exactly when a dash at len(n) ends a prefix equal to n.
        return prefixed and any(name[:i] in names for i, c in enumerate(name) if c == "-")

    def _keep_event(self, event: dict[str, Any]) -> tuple[str, str, str, str, str] | None:
        involved = event.get("involvedObject") or {}
        namespace = str((event.get("metadata") or {}).get("namespace") or "")
        kind, name = str(involved.get("kind") or ""), str(involved.get("name") or "")
        ours = kind in ("Pod", "PodGroup") or any(r.kind == kind for r, _ in self.names)
        if ours and self._job_of(namespace, name, prefixed=kind != "TFJob"):
            # An event's name stands for its series (same object, reason and message).
            series = str((event.get("metadata") or {}).get("name") or "")
            return namespace, kind, name, str(event.get("reason") or ""), series
        return None

    def apply(self, update: follow.Update) -> None:
        if isinstance(update, follow.Broken):
            self.broken[str(update.source.what)] = str(update.error)
            return
        source = update.source
        self.broken.pop(str(source.what), None)
        if isinstance(update, follow.Reset):
            self._reset(source, update.items)
        else:
            self._change(source, update.type, update.object)

    def _reset(self, source: follow.Source, items: list[dict[str, Any]]) -> None:
        ns = source.namespace
        self.changed.update(k for k in self.keys if k[1] == ns)
        if isinstance(source.what, Resource) and source.what not in COMPANIONS:
            self.listed.add((source.what, ns))
            for key in [k for k in self.jobs if k[0] is source.what and k[1] == ns]:
                del self.jobs[key]
        elif source.what == "pods":
            for pod_key in [k for k in self.pods if k[0] == ns]:
                self._drop_pod(pod_key)
        elif source.what == "events":
            for event_key in [k for k in self.events if k[0] == ns]:
                self._drop_event(event_key)
        elif source.what is WORKLOAD:
            self.listed.add((WORKLOAD, ns))
            for workload_key in [k for k in self.workloads if k[0] == ns]:
                self._drop_workload(workload_key)
        else:
            for group_key in [k for k in self.podgroups if k[0] == ns]:
                self._drop_podgroup(group_key)
        for item in items:
            self._change(source, "ADDED", item)

    def _pod_index(self, ns: str, pod: dict[str, Any]) -> list[tuple[str, str, str]]:
        labels = (pod.get("metadata") or {}).get("labels") or {}
        return [(ns, label, str(labels[label])) for label in self.labels if label in labels]

    def _drop_pod(self, pod_key: tuple[str, str]) -> None:
        old = self.pods.pop(pod_key, None)
        if old is not None:
            for index in self._pod_index(pod_key[0], old):
                self.pods_by_job.get(index, {}).pop(pod_key[1], None)

    @staticmethod
    def _owners(group: dict[str, Any]) -> list[str]:
        refs = (group.get("metadata") or {}).get("ownerReferences") or []
        return [str(r.get("uid")) for r in refs if isinstance(r, dict) and r.get("uid")]

    def _drop_podgroup(self, group_key: tuple[str, str]) -> None:
        old = self.podgroups.pop(group_key, None)
        if old is not None:
            for uid in self._owners(old):
                self.podgroups_by_owner.get((group_key[0], uid), {}).pop(group_key[1], None)

    def _drop_workload(self, workload_key: tuple[str, str]) -> None:
        old = self.workloads.pop(workload_key, None)
        if old is not None:
            for uid in self._owners(old):
                self.workloads_by_owner.pop((workload_key[0], uid), None)

    def readable(self, key: Key, workloads: bool) -> bool:
        """The job was listed, and (``workloads``: a queued job is read with its Workload) so
        were its namespace's Workloads, or they cannot be (Kueue is not installed)."""
        resource, namespace, _ = key
        if (resource, namespace) not in self.listed:
            return False
        return not workloads or (WORKLOAD, namespace) in self.listed or str(WORKLOAD) in self.broken

    def workload_of(self, key: Key, job: dict[str, Any]) -> dict[str, Any] | None:
        """The Workload Kueue made for the job (owned by it), if any."""
        uid = str((job.get("metadata") or {}).get("uid") or "")
        return self.workloads_by_owner.get((key[1], uid)) if uid else None

    def _drop_event(self, event_key: tuple[str, str, str, str, str]) -> None:
        if self.events.pop(event_key, None) is not None:
            self.events_about.get(event_key[:3], {}).pop(event_key, None)
            del self.event_order[event_key]

    def _pop_oldest(self) -> tuple[str, str, str, str, str]:
        """The kept event seen last the longest ago (the first kept of those seen at once).
        The heap holds an entry per arrival: one whose event has gone or arrived again since
        is passed over."""
        while True:
            when, order, event_key = heapq.heappop(self._oldest)
            current = self.events.get(event_key)
            if (
                current is not None
                and self.event_order[event_key] == order
                and (diagnose.event_time(current) or 0.0) == when
            ):
                return event_key

    def _change(self, source: follow.Source, kind: str, obj: dict[str, Any]) -> None:
        ns = source.namespace
        name = str((obj.get("metadata") or {}).get("name") or "")
        gone = kind == "DELETED"
        if source.what == "events":
            involved = obj.get("involvedObject") or {}
            self._touch(ns, str(involved.get("name") or ""))
        else:
            self._touch(ns, name)
        for label, value in ((obj.get("metadata") or {}).get("labels") or {}).items():
            if label in self.labels:  # a pod of a job whose name is no prefix of the pod's
                self._touch(ns, str(value))
        if source.what is WORKLOAD:
            # Kueue names a Workload after its job's kind, name and a hash: every job of the
            # namespace is read again (there are few).
            self.changed.update(k for k in self.keys if k[1] == ns)
            self._drop_workload((ns, name))
            if not gone:
                self.workloads[(ns, name)] = obj
                for uid in self._owners(obj):
                    self.workloads_by_owner[(ns, uid)] = obj
        elif isinstance(source.what, Resource) and source.what is not PODGROUP:
            key = (source.what, ns, name)
            if name in self.names.get((source.what, ns), set()):
                if gone:
                    self.jobs.pop(key, None)
                else:
                    self.jobs[key] = obj
        elif source.what == "pods":
            self._drop_pod((ns, name))
            if not gone:
                # What diagnose reads of a pod: its metadata, status and node (not the rest of
                # its spec, whose env holds TF_CONFIG).
                node = (obj.get("spec") or {}).get("nodeName")
                pod = {
                    "metadata": obj.get("metadata"),
                    "spec": {"nodeName": node} if node else {},
                    "status": obj.get("status"),
                }
                self.pods[(ns, name)] = pod
                for index in self._pod_index(ns, pod):
                    self.pods_by_job.setdefault(index, {})[name] = pod
        elif source.what == "events":
            event_key = self._keep_event(obj)
            if event_key is None:
                return
            if gone:
                self._drop_event(event_key)
                return
            if event_key not in self.events:
                self.event_order[event_key] = next(self._arrivals)
            self.events[event_key] = obj
            self.events_about.setdefault(event_key[:3], {})[event_key] = obj
            when = diagnose.event_time(obj) or 0.0
            heapq.heappush(self._oldest, (when, self.event_order[event_key], event_key))
            if len(self._oldest) > 4 * MAX_EVENTS:  # mostly passed-over entries: rebuilt
                self._oldest = [
                    (diagnose.event_time(e) or 0.0, self.event_order[k], k)
                    for k, e in self.events.items()
                ]
                heapq.heapify(self._oldest)
            while len(self.events) > MAX_EVENTS:
                self._drop_event(self._pop_oldest())
        elif self._job_of(ns, name, prefixed=True):
            self._drop_podgroup((ns, name))
            if not gone:
                self.podgroups[(ns, name)] = obj
                for uid in self._owners(obj):
                    self.podgroups_by_owner.setdefault((ns, uid), {})[name] = obj

    def pods_of(self, key: Key) -> list[dict[str, Any]]:
        resource, namespace, name = key
        return list(self.pods_by_job.get((namespace, resource.job_label, name), {}).values())

    def podgroups_of(self, key: Key, job: dict[str, Any]) -> list[dict[str, Any]]:
        """The PodGroups the job owns (the only ones diagnose reads)."""
        uid = str((job.get("metadata") or {}).get("uid") or "")
        return list(self.podgroups_by_owner.get((key[1], uid), {}).values()) if uid else []

    def events_of(
        self, key: Key, pods: list[dict[str, Any]], podgroups: list[dict[str, Any]]
    ) -> list[dict[str, Any]]:
        """The events about the job, its pods and its PodGroups (diagnose reads no others)."""
        resource, namespace, name = key
        about = [(resource.kind, name)]
        about += [("Pod", str((p.get("metadata") or {}).get("name") or "")) for p in pods]
        about += [("PodGroup", str((g.get("metadata") or {}).get("name") or "")) for g in podgroups]
        found: list[dict[str, Any]] = []
        for kind, obj in about:
            found.extend(self.events_about.get((namespace, kind, obj), {}).values())
        return found


class ClusterReader:
    """The nodes' capacity and the Volcano queues, read when a diagnosis needs them (and the
    credentials allow: without them those checks are skipped)."""

    def __init__(self, client: Client, clock: Callable[[], float]) -> None:
        self._client, self._clock = client, clock
        self._capacity: diagnose.Capacity | None = None
        self._read_at: float | None = None
        self._denied = False
        self._queues: dict[str, dict[str, Any] | None] = {}

    def capacity(self) -> diagnose.Capacity | None:
        if self._denied:
            return None
        if self._read_at is None or self._clock() - self._read_at >= NODES_MAX_AGE:
            try:
                with self._client.errors("listing nodes for"):
                    nodes = self._client.call("GET", core_path("nodes")).get("items") or []
            except KubeError:
                self._denied = True
                return None
            self._capacity, self._read_at = diagnose.capacity(nodes), self._clock()
        return self._capacity

    def queues(self, podgroups: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
        for group in podgroups:
            name = str((group.get("spec") or {}).get("queue") or "default")
            if name not in self._queues:
                client = self._client
                try:
                    with client.errors("reading", QUEUE, "", name):
                        self._queues[name] = client.call("GET", resource_path(QUEUE, None, name))
                except KubeError:  # not there, or not readable: the check is skipped
                    self._queues[name] = None
        return {k: v for k, v in self._queues.items() if v is not None}


def _sources(keys: list[Key], workloads: bool = False) -> list[follow.Source]:
    groups: dict[tuple[Resource, str], list[str]] = {}
    for resource, namespace, name in keys:
        groups.setdefault((resource, namespace), []).append(name)
    sources = []
    for (resource, namespace), names in groups.items():
        unique = sorted(set(names))
        only = f"metadata.name={unique[0]}" if len(unique) == 1 else None
        sources.append(follow.Source(resource, namespace, field_selector=only))
        sources.append(
            follow.Source("pods", namespace, f"{resource.job_label} in ({','.join(unique)})")
        )
    for namespace in dict.fromkeys(ns for _, ns in groups):
        sources.append(follow.Source("events", namespace))
        sources.append(follow.Source(PODGROUP, namespace))
        if workloads:
            sources.append(follow.Source(WORKLOAD, namespace))
    return sources


def wait(
    client: Client,
    jobs: list[Key],
    *,
    wait_for: list[str],
    fail_on: list[str],
    timeout: float,
    unschedulable_grace: float = diagnose.DEFAULT_UNSCHEDULABLE_GRACE,
    since: dict[Key, float] | None = None,
    workloads: bool = False,
    tick: float = 1.0,
    clock: Callable[[], float] = time.monotonic,
    wall: Callable[[], float] = time.time,
    follower: Callable[[Client, list[follow.Source]], follow.Follower] = follow.Follower,
    progress: Callable[[dict[Key, JobStatus]], None] | None = None,
) -> dict[Key, JobStatus]:
    """Until every job has a wait_for condition. Follows the jobs, their pods, their PodGroups
    and the namespaces' events with watches (diagnose.py reads them), and with ``workloads``
    (jobs submitted to Kueue) the namespaces' Kueue Workloads. Ends at once, raising
    WaitError with the reason, when a job reaches a fail_on condition, disappears, or has a
    fatal problem (the object and the server's reason named), or when the timeout passes
    (whatever the watches do: a broken watch is listed and watched again meanwhile).
    ``progress`` is given what is known of every job read so far, after each look that read
    one (the look that ends the wait too, before it ends)."""
    deadline = clock() + timeout
    wanted, failing = frozenset(wait_for), frozenset(fail_on)
    keys = list(dict.fromkeys(jobs))
    view = _View(keys)
    cluster = ClusterReader(client, clock)
    done: dict[Key, JobStatus] = {}
    current: dict[Key, JobStatus] = {}
    read_at: dict[Key, float] = {}
    webhooks = {key: diagnose.WebhookFailures() for key in keys}
    with follower(client, _sources(keys, workloads)) as followed:
        while True:
            _take_updates(followed, view, max(0.0, min(deadline, clock() + tick) - clock()))
            now = wall()
            # A job is read again when the watches told something about it, and every
            # REREAD_TICKS ticks otherwise (what diagnose says changes with time too).
            changed = view.take_changed()
            looked, ended = False, None
            for key in keys:
                if key in done or not view.readable(key, workloads):
                    continue
                if key not in changed and clock() - read_at.get(key, -1e9) < REREAD_TICKS * tick:
                    continue
                read_at[key] = clock()
                looked = True
                obj = view.jobs.get(key)
                if obj is None:
                    ended = _deleted(key, wait_for, current)
                    break
                context = diagnose.Context(
                    now=now,
                    unschedulable_grace=unschedulable_grace,
                    cluster=cluster.capacity,
                    since=(since or {}).get(key),
                    webhooks=webhooks[key],
                    workload=view.workload_of(key, obj),
                )
                status, problems = _judged(view, key, obj, cluster, context)
                current[key] = status
                if status.true & failing:
                    ended = _failed(client, key, status, failing, current)
                    break
                if status.true & wanted:
                    done[key] = status
                    continue
                fatal = [p for p in problems if p.fatal]
                if fatal:
                    ended = _cannot_reach(key, wait_for, fatal, current)
                    break
            if looked and progress:
                progress(dict(current))
            if ended:
                raise ended
            if len(done) == len(keys):
                return done
            if clock() >= deadline:
                raise _timed_out(keys, done, current, view, timeout, wait_for)


def _judged(
    view: _View, key: Key, obj: dict[str, Any], cluster: ClusterReader, context: diagnose.Context
) -> tuple[JobStatus, list[diagnose.Problem]]:
    """The job's status, with its problems and (submitted to Kueue) its admission."""
    status = job_status(key[0], obj)
    problems = _diagnose(view, key, obj, cluster, context)
    status.problems = [p.as_dict() for p in problems]
    status.queue = kueue.admission(context.workload).as_dict() if context.workload else None
    return status, problems


def _cannot_reach(
    key: Key, wait_for: list[str], fatal: list[diagnose.Problem], current: dict[Key, JobStatus]
) -> WaitError:
    what = key[0].describe(key[1], key[2])
    return WaitError(
        f"{what} cannot reach {' or '.join(wait_for)} (it is {current[key].phase}): "
        + "; ".join(p.line() for p in fatal),
        "diagnosed",
        current,
    )


def _deleted(key: Key, wait_for: list[str], current: dict[Key, JobStatus]) -> WaitError:
    gone = {**current, key: job_status(key[0], None)}
    what = key[0].describe(key[1], key[2])
    return WaitError(
        f"{what} was deleted while waiting for {' or '.join(wait_for)}", "deleted", gone
    )


def _diagnose(
    view: _View,
    key: Key,
    obj: dict[str, Any],
    cluster: ClusterReader,
    context: diagnose.Context,
) -> list[diagnose.Problem]:
    """The job's problems (diagnose.py), from what the watches hold: its pods, PodGroups and
    their events, and the queues of its PodGroups."""
    job_pods = view.pods_of(key)
    podgroups = view.podgroups_of(key, obj)
    queues = cluster.queues(podgroups) if podgroups else {}
    context = replace(context, podgroups=podgroups, queues=queues)
    return diagnose.diagnose(obj, job_pods, view.events_of(key, job_pods, podgroups), context)


def _take_updates(followed: follow.Follower, view: _View, timeout: float) -> None:
    """Apply what the watches told within `timeout` seconds (at least the first update, then
    all that are queued) to the view; a job or pod watch that broke for good ends the wait."""
    try:
        update = followed.updates.get(timeout=timeout)
        while True:
            view.apply(update)
            if (
                isinstance(update, follow.Broken)
                and update.permanent
                and isinstance(update.source.what, Resource)
                and update.source.what not in COMPANIONS
            ):
                raise update.error
            update = followed.updates.get_nowait()
    except queue.Empty:
        pass


def _failed(
    client: Client,
    key: Key,
    status: JobStatus,
    failing: frozenset[str],
    current: dict[Key, JobStatus],
) -> WaitError:
    """The error of a job that reached a fail_on condition: its reason, and its failed pods."""
    resource, namespace, name = key
    detail = "; ".join(filter(None, [status.reason, status.message]))
    pods = failed_pods(client, resource, namespace, name)
    return WaitError(
        f"{resource.describe(namespace, name)} reached {'/'.join(sorted(status.true & failing))}"
        f"{': ' + detail if detail else ''}" + ("".join(f"\n  {p}" for p in pods)),
        "failed",
        current,
    )


def _timed_out(
    keys: list[Key],
    done: dict[Key, JobStatus],
    current: dict[Key, JobStatus],
    view: _View,
    timeout: float,
    wait_for: list[str],
) -> WaitError:
    """The timeout's error: each job still waited for, its phase and its problems."""
    waiting = []
    for key in keys:
        if key in done:
            continue
        what = key[0].describe(key[1], key[2])
        if key not in current:
            waiting.append(f"{what} was never read: {'; '.join(view.broken.values())}")
            continue
        status = current[key]
        said = "".join(f" ({p['object']}: {p['reason']}: {p['message']})" for p in status.problems)
        waiting.append(f"{what} is {status.phase}{said}")
    return WaitError(
        f"timed out after {timeout:g}s waiting for {' or '.join(wait_for)}: " + "; ".join(waiting),
        "timeout",
        current,
    )


def wait_gone(
    client: Client,
    jobs: list[Key],
    *,
    timeout: float,
    interval: float = 1.0,
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], None] = time.sleep,
) -> None:
    """Until the jobs (and the runtimes deleted with them), their pods and their services are
    gone."""
    deadline = clock() + timeout
    while True:
        left = []
        for resource, namespace, name in jobs:
            what = resource.describe(namespace, name)
            if client.get(resource, namespace, name) is not None:
                left.append(what)
            if not resource.job_label:
                continue  # not a job (a TrainingRuntime): nothing runs under it
            selector = resource.selector(name)
            pods = client.pods(namespace, selector)
            services = client.services(namespace, selector)
            if pods or services:
                left.append(f"{len(pods)} pods and {len(services)} services of {what}")
        if not left:
            return
        if clock() >= deadline:
            raise WaitError(
                f"timed out after {timeout:g}s waiting for deletion: still there: "
                + "; ".join(left),
                "timeout",
            )
        sleep(interval)
