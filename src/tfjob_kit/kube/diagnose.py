"""Why a job is not progressing, read from what the cluster says about it (pure).

From the job, its pods, the events about them, its Volcano PodGroup and what the cluster can
allocate, ``diagnose`` lists the problems, each naming the object and quoting the server's
reason and message. A problem is *fatal* when waiting longer cannot help:

* ``FailedCreatePod`` / ``FailedCreateService`` events of the job (Volcano's job controller says
  ``FailedCreate``): the API server rejected an
  object the operator builds from the job (a pod template mistake, say). The operator retries
  forever with the same template. Rejections that can pass later (an exceeded ResourceQuota, an
  unreachable admission webhook) are reported but not fatal; a webhook that has failed for
  longer than ``WEBHOOK_GRACE`` (60 s) and still fails is fatal (its server is gone: a
  configuration left behind blocks the job until someone acts). A name already taken
  (AlreadyExists) is the operator's lagging cache at first, fatal once it has recurred for
  ``ALREADY_EXISTS_GRACE`` (60 s): another object holds the name.
* ``ErrImagePull``, ``ImagePullBackOff``, ``InvalidImageName`` (and the kubelet's other
  image-pull reasons) in a container status: the kubelet cannot get the image.
* ``CrashLoopBackOff`` of a pod that decides the job's success (``model.success_decider``: every
  chief/master, else worker 0, or every worker with ``successPolicy: AllWorkers``). Other
  replicas' crash loops are reported, not fatal.
* A pod the scheduler reports ``Unschedulable`` for longer than the grace (default 60 s), unless
  a node autoscaler said it is adding nodes for it (cluster-autoscaler's ``TriggeredScaleUp``,
  Karpenter's ``Nominated``). Before the grace it is reported, not fatal.
* A job that can never fit: it needs more of a resource than all of the cluster's nodes can
  allocate together, or a single pod needs more than the largest node, and the scheduler (pod
  condition or PodGroup) reports it unschedulable, with no scale-up under way; or its Volcano
  PodGroup needs more than its queue's ``capability``.

* A pod lost with its node (not fatal: what follows is the operator's, by the replica's
  restartPolicy): a live pod with a ``DisruptionTarget`` condition (PodGC's ``DeletionByPodGC``
  when its node is gone, a preemption, an eviction), and a pod the events show an earlier
  incarnation of (another uid) that was assigned to a node the cluster no longer has
  (``NodeDeleted``): PodGC deleted it with its node, and the replica it was is named.

* A job submitted to Kueue that Kueue will never admit as things stand, in the words of its
  Workload: its LocalQueue or ClusterQueue does not exist, the ClusterQueue is inactive, or the
  job asks for more than the queue's maximum capacity. Waiting for quota, and an eviction
  (preempted, or pods not ready in time: Kueue requeues the job), are reported, not fatal.

Everything else (Pending while nodes scale up, a PodGroup Pending or Inqueue that could fit,
``ContainerCreating``) is transient: at most a problem that is not fatal.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from tfjob_kit import kueue, model, quantity
from tfjob_kit.timestamps import seconds

DEFAULT_UNSCHEDULABLE_GRACE = 60.0
# How long the scheduler's "does not fit" must stand before a job bigger than the cluster is
# fatal: time for a node autoscaler to announce a scale-up on the pods.
CAPACITY_SETTLE = 10.0

# The training-operator's reasons, and Volcano's job controller's (FailedCreate, on the Job).
CREATE_FAILURES = ("FailedCreatePod", "FailedCreateService", "FailedCreate")
# Words of a creation failure that can pass without changing the job.
TRANSIENT_CREATE = (
    "exceeded quota",
    "failed calling webhook",
    "the server is currently unable",
    "etcdserver",
    "connection refused",
    "Timeout:",
)
# An admission webhook the API server cannot call: transient, unless it lasts this long.
WEBHOOK_DOWN = "failed calling webhook"
WEBHOOK_GRACE = 60.0
# The API server's AlreadyExists: on a busy cluster the operator's cache lags behind its own
# creations, it creates a pod or Service again and the name is taken, by its own object, which
# its next sync finds. An object of that name that is not the job's blocks it for good: fatal
# once the event has recurred for this long.
ALREADY_EXISTS = "already exists"
ALREADY_EXISTS_GRACE = 60.0
# Container waiting reasons of the kubelet that mean the image will not come
# (pkg/kubelet/images/types.go and the CRI's registry and signature errors).
IMAGE_FAILURES = (
    "ErrImagePull",
    "ImagePullBackOff",
    "InvalidImageName",
    "ErrImageNeverPull",
    "RegistryUnavailable",
    "SignatureValidationFailed",
)
SCALE_UP = ("TriggeredScaleUp", "Nominated")
NO_SCALE_UP = ("NotTriggerScaleUp",)
_TYPE_LABEL = "training.kubeflow.org/replica-type"
_INDEX_LABEL = "training.kubeflow.org/replica-index"
_VOLCANO_TASK = "volcano.sh/task-spec"
_VOLCANO_INDEX = "volcano.sh/task-index"
# The scheduler's event on binding a pod (kube-scheduler's and Volcano's wording).
_ASSIGNED = re.compile(r"^Successfully assigned (?P<pod>\S+) to (?P<node>\S+)$")


@dataclass(frozen=True)
class Problem:
    """One reason the job is not progressing, as the server tells it."""

    kind: str  # of the object: TFJob, Job, Pod, PodGroup
    name: str  # namespace/name
    reason: str  # the server's reason (event reason, container waiting reason, condition reason)
    message: str  # the server's message, as is
    fatal: bool

    @property
    def object(self) -> str:
        return f"{self.kind} {self.name}"

    def line(self) -> str:
        return f"{self.object}: {self.reason}: {self.message}"

    def as_dict(self) -> dict[str, Any]:
        return {
            "object": self.object,
            "kind": self.kind,
            "name": self.name,
            "reason": self.reason,
            "message": self.message,
            "fatal": self.fatal,
        }


@dataclass
class Capacity:
    """What the cluster's nodes can allocate: in all, and the most any one node can."""

    nodes: int = 0
    total: dict[str, Fraction] = field(default_factory=dict)
    largest: dict[str, Fraction] = field(default_factory=dict)
    names: set[str] = field(default_factory=set)


def capacity(nodes: Iterable[dict[str, Any]]) -> Capacity:
    found = Capacity()
    for node in nodes:
        found.nodes += 1
        found.names.add(str((node.get("metadata") or {}).get("name") or ""))
        allocatable = (node.get("status") or {}).get("allocatable") or {}
        for name, value in allocatable.items():
            amount = quantity.parse(value)
            if amount is None:
                continue
            found.total[name] = found.total.get(name, Fraction(0)) + amount
            found.largest[name] = max(found.largest.get(name, Fraction(0)), amount)
    return found


def event_time(event: dict[str, Any]) -> float | None:
    return (
        seconds(event.get("lastTimestamp"))
        or seconds(event.get("eventTime"))
        or seconds(event.get("firstTimestamp"))
        or seconds((event.get("metadata") or {}).get("creationTimestamp"))
    )


def _amount(text: Fraction) -> str:
    return str(int(text)) if text.denominator == 1 else f"{float(text):g}"


def pod_requests(pod_spec: dict[str, Any]) -> dict[str, Fraction]:
    """What the scheduler counts for one pod: the containers' requests (limits where a request
    is missing, as the API server defaults them), at least each init container's, plus the
    overhead."""

    def requests(container: Any) -> dict[str, Fraction]:
        resources = model.as_dict(model.as_dict(container).get("resources"))
        values = {
            **model.as_dict(resources.get("limits")),
            **model.as_dict(resources.get("requests")),
        }
        parsed = {k: quantity.parse(v) for k, v in values.items()}
        return {k: v for k, v in parsed.items() if v is not None}

    total: dict[str, Fraction] = {}
    for container in model.as_list(pod_spec.get("containers")):
        for name, value in requests(container).items():
            total[name] = total.get(name, Fraction(0)) + value
    for container in model.as_list(pod_spec.get("initContainers")):
        for name, value in requests(container).items():
            total[name] = max(total.get(name, Fraction(0)), value)
    for name, value in model.as_dict(pod_spec.get("overhead")).items():
        amount = quantity.parse(value)
        if amount is not None:
            total[name] = total.get(name, Fraction(0)) + amount
    return total


def job_templates(job: dict[str, Any]) -> list[tuple[str, int, dict[str, Any]]]:
    """(replica type or task name, pod count, pod spec) of a TFJob or a Volcano Job."""
    spec = model.as_dict(job.get("spec"))
    if job.get("kind") == "TFJob":
        return [(r.type, r.count, r.pod_spec) for r in model.replicas(job)]
    return [
        (
            str(model.as_dict(t).get("name") or ""),
            model.as_int(model.as_dict(t).get("replicas"), 1),
            model.as_dict(model.as_dict(model.as_dict(t).get("template")).get("spec")),
        )
        for t in model.as_list(spec.get("tasks"))
    ]


def _decides_success(job: dict[str, Any], pod: dict[str, Any]) -> bool:
    metadata = pod.get("metadata") or {}
    labels = metadata.get("labels") or {}
    annotations = metadata.get("annotations") or {}
    kind = str(labels.get(_TYPE_LABEL) or annotations.get(_VOLCANO_TASK) or "").lower()
    index = str(labels.get(_INDEX_LABEL) or annotations.get(_VOLCANO_INDEX) or "0")
    deciders: list[str]
    if job.get("kind") == "TFJob":
        _, deciders = model.success_decider(job)
        policy = model.as_dict(job.get("spec")).get("successPolicy")
    else:
        tasks = {n.lower() for n, _, _ in job_templates(job)}
        chiefs: list[str] = [t for t in ("chief", "master") if t in tasks]
        deciders = chiefs or (["worker"] if "worker" in tasks else [])
        policy = None
    lowered = [d.lower() for d in deciders]
    if kind not in lowered:
        return False
    return kind != "worker" or policy == "AllWorkers" or index == "0"


def _where(obj: dict[str, Any]) -> str:
    metadata = obj.get("metadata") or {}
    return f"{metadata.get('namespace', '')}/{metadata.get('name', '')}"


def _uid(obj: dict[str, Any]) -> str:
    return str((obj.get("metadata") or {}).get("uid") or "")


def _about(event: dict[str, Any], obj: dict[str, Any], kind: str) -> bool:
    involved = event.get("involvedObject") or {}
    metadata = obj.get("metadata") or {}
    if involved.get("kind") != kind or involved.get("name") != metadata.get("name"):
        return False
    uid = involved.get("uid")
    return not uid or not metadata.get("uid") or uid == metadata.get("uid")


def _latest(events: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    return sorted(events, key=lambda e: event_time(e) or 0.0)


def _no_capacity() -> Capacity | None:
    return None


class WebhookFailures:
    """When the caller first saw each failing admission webhook recur. A caller that diagnoses a
    job again and again (the wait) keeps one: an aggregated event's firstTimestamp may be an
    earlier outage's, so a failure counts from when it was first seen recurring, and a pause
    longer than ``WEBHOOK_GRACE`` starts the count again."""

    def __init__(self) -> None:
        self._first: dict[str, float] = {}

    def __contains__(self, message: object) -> bool:
        return message in self._first

    def failing_since(self, message: str, first: float | None, seen: float, now: float) -> float:
        """Since when `message` counts as failing: `first` (the event's), moved up to when it
        was first seen recurring."""
        if now - seen >= WEBHOOK_GRACE:
            self._first.pop(message, None)
            return first if first is not None else now
        return max(first or now, self._first.setdefault(message, now))


@dataclass
class Context:
    """What a job's problems are read from besides the job, its pods and the events.

    ``now`` is seconds since the epoch; job events last seen before ``since`` are ignored (they
    are about an earlier spec). ``cluster`` reads what the nodes can allocate, only when the
    scheduler reported the job unschedulable or a pod was lost. ``webhooks`` is kept by a caller
    that diagnoses the job again and again (``WebhookFailures``); without it, a failing
    webhook counts from its event's first time."""

    now: float
    unschedulable_grace: float = DEFAULT_UNSCHEDULABLE_GRACE
    cluster: Callable[[], Capacity | None] = _no_capacity
    podgroups: list[dict[str, Any]] = field(default_factory=list)
    queues: dict[str, dict[str, Any]] = field(default_factory=dict)
    since: float | None = None
    webhooks: WebhookFailures | None = None
    # The Kueue Workload the job owns (a job submitted to a queue), None before Kueue makes it.
    workload: dict[str, Any] | None = None


class _Scene:
    """One job as the detectors read it, built once per diagnosis: its events by object, its
    live pods and PodGroups, the gang's state, what the scheduler said, and the cluster's
    capacity (read at most once, when a detector needs it)."""

    def __init__(
        self,
        job: dict[str, Any],
        pods: list[dict[str, Any]],
        events: list[dict[str, Any]],
        context: Context,
    ) -> None:
        self.job = job
        self.kind = str(job.get("kind") or "TFJob")
        self.context = context
        self.now = context.now
        # Oldest first, by the object they are about: read once, whatever the number of pods.
        self.by_object: dict[tuple[str, str], list[dict[str, Any]]] = {}
        for event in _latest(events):
            involved = event.get("involvedObject") or {}
            key = (str(involved.get("kind") or ""), str(involved.get("name") or ""))
            self.by_object.setdefault(key, []).append(event)
        self.live = sorted(
            (p for p in pods if not (p.get("metadata") or {}).get("deletionTimestamp")),
            key=lambda p: str((p.get("metadata") or {}).get("name")),
        )
        self.owned = [
            g
            for g in context.podgroups
            if any(
                r.get("uid") == _uid(job)
                for r in (g.get("metadata") or {}).get("ownerReferences") or []
            )
        ]
        self.forming = self._forming()
        # A formed gang is Unschedulable since its last pod came, whatever its pods' conditions
        # say: Volcano set them when the first pods came and keeps them while the gang forms.
        self.formed_at = (
            max(
                (seconds((p.get("metadata") or {}).get("creationTimestamp")) or 0.0)
                for p in self.live
            )
            if self.owned and self.live and not self.forming
            else None
        )
        self.scale_events = {_where(p): self._scale_events(p) for p in self.live}
        self.scaling_up = any(self.scaling(p) for p in self.live)
        self.unschedulable = [
            (pod, condition)
            for pod in self.live
            for condition in (pod.get("status") or {}).get("conditions") or []
            if _is_unschedulable(condition)
        ]
        self.group_says, self.group_since = self._group_says()
        self.earlier = _earlier_pods(job, pods, self.by_object)
        self._capacity: Capacity | None = None
        self._capacity_read = False

    def about(self, obj: dict[str, Any], obj_kind: str) -> list[dict[str, Any]]:
        """The events about `obj` (oldest first)."""
        name = str((obj.get("metadata") or {}).get("name") or "")
        return [e for e in self.by_object.get((obj_kind, name), []) if _about(e, obj, obj_kind)]

    def capacity(self) -> Capacity | None:
        """What the cluster's nodes can allocate (None or no nodes: not known)."""
        if not self._capacity_read:
            self._capacity, self._capacity_read = self.context.cluster(), True
        return self._capacity if self._capacity is not None and self._capacity.nodes else None

    def _forming(self) -> int:
        """A gang still forming: its PodGroup wants more pods than the operator has created yet
        (it creates them one request at a time: minutes for a 1,000-worker job). Volcano calls
        the created ones Unschedulable ("pod group is not ready") until the last exists; that is
        no reason to give up on them. The number it wants, else 0."""
        expected = sum(count for _, count, _ in job_templates(self.job))
        wanted = (
            min(model.as_int((g.get("spec") or {}).get("minMember"), 0), expected)
            for g in self.owned
        )
        return next((w for w in wanted if len(self.live) < w), 0)

    def _scale_events(self, pod: dict[str, Any]) -> list[dict[str, Any]]:
        return [e for e in self.about(pod, "Pod") if e.get("reason") in SCALE_UP + NO_SCALE_UP]

    def scaling(self, pod: dict[str, Any]) -> bool:
        """A node autoscaler said last that it is adding nodes for the pod."""
        scale = self.scale_events[_where(pod)]
        return bool(scale) and scale[-1].get("reason") in SCALE_UP

    def _group_says(self) -> tuple[str, float | None]:
        """What the job's PodGroups last said about being unschedulable, and since when."""
        says, since = "", None
        for group in self.owned:
            events = self.group_unschedulable_events(group)
            conditions = [
                c
                for c in (group.get("status") or {}).get("conditions") or []
                if c.get("type") == "Unschedulable" and c.get("status") == "True"
            ]
            if events:
                said = events[-1]
                says = f"PodGroup {_where(group)}: {said.get('message')}"
                first = seconds(said.get("firstTimestamp")) or event_time(said)
                since = first if first is not None else self.now
            elif conditions:
                says = f"PodGroup {_where(group)}: {conditions[-1].get('message')}"
                since = seconds(conditions[-1].get("lastTransitionTime")) or self.now
        return says, since

    def group_unschedulable_events(self, group: dict[str, Any]) -> list[dict[str, Any]]:
        return [e for e in self.about(group, "PodGroup") if e.get("reason") == "Unschedulable"]


def _is_unschedulable(condition: dict[str, Any]) -> bool:
    return (
        condition.get("type") == "PodScheduled"
        and condition.get("status") == "False"
        and condition.get("reason") == "Unschedulable"
    )


def _create_failures(scene: _Scene) -> list[Problem]:
    """The job's events that say the API server refused what the operator creates."""
    found = []
    for event in scene.about(scene.job, scene.kind):
        reason = str(event.get("reason") or "")
        if reason not in CREATE_FAILURES:
            continue
        seen = event_time(event)
        since = scene.context.since
        if since is not None and seen is not None and seen < since:
            continue
        message = str(event.get("message") or "")
        transient = any(word in message for word in TRANSIENT_CREATE)
        if transient and WEBHOOK_DOWN in message:
            transient, message = _webhook_down(scene, event, message, seen)
        elif ALREADY_EXISTS in message:
            transient, message = _already_exists(scene, event, message, seen)
        found.append(Problem(scene.kind, _where(scene.job), reason, message, not transient))
    return found


def _lasted(now: float, first: float | None, seen: float | None, grace: float) -> float | None:
    """How long a recurring event has recurred, if it still recurs (seen within `grace`) and
    began at least `grace` ago; else None."""
    if first is None or seen is None or not now - seen < grace <= now - first:
        return None
    return now - first


def _webhook_down(
    scene: _Scene, event: dict[str, Any], message: str, seen: float | None
) -> tuple[bool, str]:
    """(still transient, the message): a webhook that still fails (seen within the grace) and
    has failed for longer than the grace is fatal, and the message says what to do."""
    now, webhooks = scene.now, scene.context.webhooks
    first = seconds(event.get("firstTimestamp")) or seen
    if webhooks is not None and seen is not None:
        first = webhooks.failing_since(message, first, seen, now)
    lasted = _lasted(now, first, seen, WEBHOOK_GRACE)
    if lasted is None:
        return True, message
    namespace = (scene.job.get("metadata") or {}).get("namespace", "")
    return False, message + (
        f" (for {lasted:.0f}s: an admission webhook whose server is gone "
        f"blocks every creation it matches; `tfjob-kit webhooks -n {namespace}` names its "
        "configuration)"
    )


def _already_exists(
    scene: _Scene, event: dict[str, Any], message: str, seen: float | None
) -> tuple[bool, str]:
    """(transient, the message): the name taken by the operator's own object, which its next
    sync sees, unless the event still recurs ``ALREADY_EXISTS_GRACE`` after it began."""
    now = scene.now
    first = seconds(event.get("firstTimestamp")) or seen
    lasted = _lasted(now, first, seen, ALREADY_EXISTS_GRACE)
    if lasted is None:
        return True, message
    return False, message + (
        f" (for {lasted:.0f}s: an object of that name that is not the job's; the "
        "operator cannot make its own until it is deleted)"
    )


def _pod_problems(scene: _Scene) -> list[Problem]:
    """Each live pod's, by name: its containers' waits, then its conditions in their order."""
    found = []
    for pod in scene.live:
        found += _container_waits(scene, pod)
        for condition in (pod.get("status") or {}).get("conditions") or []:
            if condition.get("type") == "DisruptionTarget" and condition.get("status") == "True":
                found.append(_disrupted(pod, condition))
            if _is_unschedulable(condition):
                found.append(_unschedulable(scene, pod, condition))
    return found


def _container_waits(scene: _Scene, pod: dict[str, Any]) -> list[Problem]:
    """Image pulls that fail (fatal), crash loops (fatal where the pod decides success)."""
    found = []
    status = pod.get("status") or {}
    for container in [
        *(status.get("initContainerStatuses") or []),
        *(status.get("containerStatuses") or []),
    ]:
        waiting = (container.get("state") or {}).get("waiting") or {}
        reason = str(waiting.get("reason") or "")
        text = f"container {container.get('name')}: {waiting.get('message') or reason}"
        if reason in IMAGE_FAILURES:
            found.append(Problem("Pod", _where(pod), reason, text, True))
        elif reason == "CrashLoopBackOff":
            found.append(
                Problem("Pod", _where(pod), reason, text, _decides_success(scene.job, pod))
            )
    return found


def _disrupted(pod: dict[str, Any], condition: dict[str, Any]) -> Problem:
    """A pod being removed (its node gone, a preemption, an eviction): not fatal."""
    return Problem(
        "Pod",
        _where(pod),
        str(condition.get("reason") or "DisruptionTarget"),
        f"{_replica(pod)} on node {(pod.get('spec') or {}).get('nodeName')}: "
        f"{condition.get('message') or ''}".rstrip(": "),
        False,
    )


def _unschedulable(scene: _Scene, pod: dict[str, Any], condition: dict[str, Any]) -> Problem:
    """Fatal past the grace, unless a node autoscaler adds nodes or the gang still forms."""
    since_when = seconds(condition.get("lastTransitionTime"))
    if since_when is not None and scene.formed_at:
        since_when = max(since_when, scene.formed_at)
    age = scene.now - since_when if since_when is not None else 0.0
    message = str(condition.get("message") or "")
    scaling = scene.scaling(pod)
    if scaling:
        scale = scene.scale_events[_where(pod)][-1]
        message += f" (a node autoscaler is adding nodes: {scale.get('message')})"
    grace = scene.context.unschedulable_grace
    fatal = age >= grace and not scaling and not scene.forming
    if scene.forming:
        message += f" (the gang is forming: {len(scene.live)} of its {scene.forming} pods exist)"
    elif not fatal and not scaling:
        message += f" (for {age:.0f}s of the {grace:g}s grace)"
    return Problem("Pod", _where(pod), "Unschedulable", message, fatal)


def _queue_limits(scene: _Scene) -> list[Problem]:
    """PodGroups that need more than their Volcano queue may ever use."""
    found = []
    for group in scene.owned:
        events = scene.group_unschedulable_events(group)
        about_queue = [e for e in events if "queue" in str(e.get("message") or "")]
        found += _queue_problems(
            group, scene.context.queues, about_queue[-1] if about_queue else None
        )
    return found


def _lost_nodes(scene: _Scene) -> list[Problem]:
    """Earlier pods of the job's replicas, assigned to nodes the cluster no longer has."""
    cluster = scene.capacity() if scene.earlier else None
    if cluster is None:
        return []
    succeeded = any(
        c.get("type") == "Succeeded" and c.get("status") == "True"
        for c in model.as_list(model.as_dict(scene.job.get("status")).get("conditions"))
        if isinstance(c, dict)
    )
    found = []
    for replica, pod_name, uid, node, current in scene.earlier:
        if node in cluster.names:
            continue
        if current is None and succeeded:
            # A succeeded job's pods may be gone by its cleanPodPolicy, and their nodes
            # scaled away since: no sign that a node took a pod with it.
            continue
        now_is = (
            f"the pod now is uid {_uid(current)} on node "
            f"{(current.get('spec') or {}).get('nodeName') or '(not scheduled yet)'}"
            if current
            else "no pod of that name exists now"
        )
        found.append(
            Problem(
                "Pod",
                pod_name,
                "NodeDeleted",
                f"{replica}: its pod {pod_name} (uid {uid}) was lost with node {node}, "
                f"which no longer exists (the scheduler had assigned the pod to it); {now_is}",
                False,
            )
        )
    return found


def _never_fits_problems(scene: _Scene) -> list[Problem]:
    """A job the scheduler has called unschedulable for a while that no cluster of these
    nodes could hold."""
    told = [
        (
            seconds(c.get("lastTransitionTime")) or scene.now,
            f"Pod {_where(p)}: {c.get('message')}",
        )
        for p, c in scene.unschedulable
    ]
    if scene.group_says:
        told.append(
            (scene.group_since if scene.group_since is not None else scene.now, scene.group_says)
        )
    if scene.scaling_up or not told:
        return []
    cluster = scene.capacity()
    settle = min(CAPACITY_SETTLE, scene.context.unschedulable_grace)
    if cluster is None or scene.now - min(t for t, _ in told) < settle:
        return []
    return [
        Problem(
            scene.kind,
            _where(scene.job),
            "NeverFits",
            f"{message}; the scheduler says: {told[0][1]}",
            True,
        )
        for message in _never_fits(scene.job, cluster)
    ]


def _workload_problems(scene: _Scene) -> list[Problem]:
    """A job Kueue holds, in Kueue's words (its Workload's conditions): waiting for quota (not
    fatal), or never to be admitted as things stand (fatal: its LocalQueue or ClusterQueue is
    missing or inactive, or it asks for more than the queue's maximum); evicted (preempted, or
    its pods not ready in time: Kueue requeues it, not fatal)."""
    workload = scene.context.workload
    if workload is None:
        return []
    standing = kueue.admission(workload)
    if standing.state not in ("Waiting", "Evicted"):
        return []
    reason = standing.reason or standing.state
    return [Problem("Workload", _where(workload), reason, standing.message, standing.never)]


# The detectors, in the order their problems are listed (fatal ones first, then in this order).
DETECTORS: tuple[Callable[[_Scene], list[Problem]], ...] = (
    _workload_problems,
    _create_failures,
    _pod_problems,
    _queue_limits,
    _lost_nodes,
    _never_fits_problems,
)


def diagnose(
    job: dict[str, Any],
    pods: list[dict[str, Any]],
    events: list[dict[str, Any]],
    context: Context,
) -> list[Problem]:
    """The job's problems, fatal ones first. ``events`` may hold events of other objects (only
    the job's, its pods' and its PodGroups' are read)."""
    scene = _Scene(job, pods, events, context)
    problems = [problem for detector in DETECTORS for problem in detector(scene)]
    problems.sort(key=lambda p: not p.fatal)
    return problems


def _replica(pod: dict[str, Any]) -> str:
    """The replica a pod is, as its labels (TFJob) or annotations (Volcano) say."""
    metadata = pod.get("metadata") or {}
    labels = metadata.get("labels") or {}
    annotations = metadata.get("annotations") or {}
    kind = labels.get(_TYPE_LABEL) or annotations.get(_VOLCANO_TASK)
    index = labels.get(_INDEX_LABEL) or annotations.get(_VOLCANO_INDEX)
    return f"replica {kind} {index}" if kind is not None else "the pod"


def _named_pods(
    job_name: str,
    templates: list[tuple[str, int, dict[str, Any]]],
    by_object: dict[tuple[str, str], list[dict[str, Any]]],
) -> list[tuple[str, int, str]]:
    """(replica, index, pod name) of each pod name the job's replicas make that some event
    is about, in replica then index order: found from the events' names, so the work does not
    grow with the replica counts (which the server takes up to 2^31)."""
    found: list[tuple[int, int, str, str]] = []
    for kind, name in by_object:
        if kind != "Pod":
            continue
        for position, (replica, count, _) in enumerate(templates):
            prefix = model.pod_name(job_name, replica, 0)[:-1]
            digits = name[len(prefix) :]
            if not name.startswith(prefix) or not 0 < len(digits) < 19:
                continue
            if not (digits.isascii() and digits.isdigit()) or str(int(digits)) != digits:
                continue  # not an index the operator writes
            if int(digits) < count:
                found.append((position, int(digits), replica, name))
    return [(replica, index, name) for _, index, replica, name in sorted(found)]


def _earlier_pods(
    job: dict[str, Any],
    pods: list[dict[str, Any]],
    by_object: dict[tuple[str, str], list[dict[str, Any]]],
) -> list[tuple[str, str, str, str, dict[str, Any] | None]]:
    """Earlier incarnations of the job's pods (a pod name the job's replicas make, another uid
    than the pod of that name now, if any) that the events show the scheduler assigned to a
    node: (the replica, namespace/name, uid, node, the pod of that name now)."""
    job_name = str((job.get("metadata") or {}).get("name") or "")
    namespace = str((job.get("metadata") or {}).get("namespace") or "")
    by_name = {str((p.get("metadata") or {}).get("name") or ""): p for p in pods}
    found: list[tuple[str, str, str, str, dict[str, Any] | None]] = []
    for replica, index, name in _named_pods(job_name, job_templates(job), by_object):
        current = by_name.get(name)
        seen: set[str] = set()
        for event in by_object.get(("Pod", name), []):
            involved = event.get("involvedObject") or {}
            uid = str(involved.get("uid") or "")
            match = _ASSIGNED.match(str(event.get("message") or ""))
            if (
                event.get("reason") != "Scheduled"
                or match is None
                or not uid
                or uid in seen
                or (current is not None and uid == _uid(current))
                or str(involved.get("namespace") or namespace) != namespace
            ):
                continue
            seen.add(uid)
            found.append(
                (
                    f"replica {replica} {index}",
                    f"{namespace}/{name}",
                    uid,
                    match["node"],
                    current,
                )
            )
    return found


def _never_fits(job: dict[str, Any], cluster: Capacity) -> list[str]:
    need: dict[str, Fraction] = {}
    pods = 0
    found = []
    for replica, count, pod_spec in job_templates(job):
        one = pod_requests(pod_spec)
        pods += count
        for name, value in one.items():
            need[name] = need.get(name, Fraction(0)) + value * count
            largest = cluster.largest.get(name, Fraction(0))
            if count and value > largest:
                found.append(
                    f"a {replica} pod requests {_amount(value)} {name}, more than any node "
                    f"can allocate (at most {_amount(largest)})"
                )
    for name, value in sorted(need.items()):
        have = cluster.total.get(name, Fraction(0))
        if value > have:
            found.append(
                f"its {pods} pods request {_amount(value)} {name} in all, more than the "
                f"{cluster.nodes} nodes of the cluster can allocate together ({_amount(have)})"
            )
    return found


def _queue_problems(
    group: dict[str, Any], queues: dict[str, dict[str, Any]], said: dict[str, Any] | None
) -> list[Problem]:
    spec = group.get("spec") or {}
    queue = queues.get(str(spec.get("queue") or "default"))
    if queue is None:
        return []
    capability = model.as_dict(model.as_dict(queue.get("spec")).get("capability"))
    found = []
    for name, value in sorted(model.as_dict(spec.get("minResources")).items()):
        need, cap = quantity.parse(value), quantity.parse(capability.get(name))
        if need is not None and cap is not None and need > cap:
            message = (
                f"the PodGroup needs {value} {name} (minResources) but queue "
                f"{(queue.get('metadata') or {}).get('name')} may use at most {capability[name]} "
                "(spec.capability)"
            )
            if said is not None:
                message += f"; Volcano says: {said.get('message')}"
            found.append(Problem("PodGroup", _where(group), "QueueCapability", message, True))
    return found
