"""status.wait over what the watches report, and follow.Follower's list-watch-relist loop.

The cluster side is a script of updates (what kube/follow.py's threads put on their queue), or
a lister and a watcher that answer as the API server does (a list with a resourceVersion, watch
events, a 410 Expired, a 403 on watch). tests/integration/test_wait_diagnosis.py runs the same
wait against the real cluster.

What the wait does in time (it ends when the event comes, at its timeout and not before, reads a
job again every few ticks) is observed on a virtual clock (``Virtual``): the wait's ``clock`` and
its reads of the queue advance it, so each test knows exactly when each thing happened and no
assertion depends on how fast the machine is.
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest

from tfjob_kit.kube import diagnose, follow, status
from tfjob_kit.kube.api_errors import KubeError
from tfjob_kit.kube.kinds import TFJOB

NS = "training"
KEY = (TFJOB, NS, "mnist")
FAILED_CREATE = (
    'Error creating: Pod "mnist-worker-0" is invalid: '
    'spec.containers[0].volumeMounts[0].name: Not found: "ckpt"'
)


def job(*conditions: str) -> dict[str, Any]:
    return {
        "apiVersion": "kubeflow.org/v1",
        "kind": "TFJob",
        "metadata": {"name": "mnist", "namespace": NS, "uid": "u1", "resourceVersion": "7"},
        "spec": {"tfReplicaSpecs": {"Worker": {"replicas": 1, "template": {"spec": {}}}}},
        "status": {"conditions": [{"type": c, "status": "True"} for c in conditions]},
    }


def event(reason: str, message: str, kind: str = "TFJob", name: str = "mnist") -> dict[str, Any]:
    return {
        "metadata": {"name": f"{name}.1", "namespace": NS, "resourceVersion": "9"},
        "involvedObject": {"kind": kind, "name": name, "namespace": NS},
        "reason": reason,
        "message": message,
        "type": "Warning",
        "lastTimestamp": "2026-11-26T12:00:00Z",
    }


JOBS = follow.Source(TFJOB, NS, field_selector="metadata.name=mnist")
PODS = follow.Source("pods", NS, "training.kubeflow.org/job-name in (mnist)")
EVENTS = follow.Source("events", NS)


# How long the threads of a Scripted or a Follower are given to act before a test gives up on
# them: a hang guard, not a speed claim (they act in milliseconds).
HANG_SECONDS = 60


class Scripted:
    """A Follower whose updates are given: each step is put on the queue after its delay."""

    def __init__(self, steps: list[tuple[float, follow.Update]]) -> None:
        self.steps = steps
        self.updates: queue.Queue[follow.Update] = queue.Queue()
        self.stopped = threading.Event()

    def __call__(self, client: Any, sources: list[follow.Source]) -> Scripted:
        self.sources = sources
        return self

    def __enter__(self) -> Scripted:
        def feed() -> None:
            for delay, update in self.steps:
                if self.stopped.wait(delay):
                    return
                self.updates.put(update)

        threading.Thread(target=feed, daemon=True).start()
        return self

    def __exit__(self, *_: object) -> None:
        self.stopped.set()


class Virtual:
    """A Follower in virtual time, for status.wait's ``follower``, ``clock`` and ``wall``: each
    update is given when the clock reaches its time; a read of the queue that would block
    advances the clock by its timeout instead of sleeping. The tests' times are multiples of
    1/32 s (TICK is 1/16 s), so the arithmetic is exact."""

    def __init__(self, steps: list[tuple[float, follow.Update]]) -> None:
        self.pending = sorted(steps, key=lambda step: step[0])  # (time, update)
        self.now = 0.0
        self.updates = self  # the wait reads followed.updates.get / get_nowait

    def __call__(self, client: Any, sources: list[follow.Source]) -> Virtual:
        self.sources = sources
        return self

    def __enter__(self) -> Virtual:
        return self

    def __exit__(self, *_: object) -> None:
        pass

    def clock(self) -> float:
        return self.now

    def wall(self) -> float:
        return 1.8e9 + self.now

    def get(self, timeout: float) -> follow.Update:
        if self.pending and self.pending[0][0] <= self.now + timeout:
            at, update = self.pending.pop(0)
            self.now = max(self.now, at)
            return update
        self.now += timeout
        raise queue.Empty

    def get_nowait(self) -> follow.Update:
        return self.get(0.0)


TICK = 1 / 16


def wait(
    script: Scripted | Virtual, timeout: float = HANG_SECONDS, tick: float = 0.05, **options: Any
) -> dict[Any, status.JobStatus]:
    return status.wait(
        None,  # type: ignore[arg-type]  # the scripted follower never calls the client
        [KEY],
        wait_for=["Succeeded"],
        fail_on=["Failed"],
        timeout=timeout,
        tick=tick,
        follower=script,  # type: ignore[arg-type]
        **options,
    )


def test_the_wait_follows_jobs_pods_events_and_podgroups_by_watch() -> None:
    script = Scripted([(0, follow.Reset(JOBS, [job("Created", "Succeeded")]))])
    assert wait(script)[KEY].phase == "Succeeded"
    assert script.sources == [JOBS, PODS, EVENTS, follow.Source(status.PODGROUP, NS)]


def virtual_wait(virtual: Virtual, timeout: float, **options: Any) -> dict[Any, status.JobStatus]:
    """The wait on the virtual follower's clock, one tick of TICK at a time."""
    return wait(virtual, timeout, tick=TICK, clock=virtual.clock, wall=virtual.wall, **options)


def test_progress_is_told_each_look_that_read_a_job() -> None:
    """What tfjob-kit wait shows as it goes: each look's statuses, the last one the end."""
    virtual = Virtual(
        [
            (0, follow.Reset(JOBS, [job("Created")])),
            (0.5, follow.Reset(JOBS, [job("Created", "Running")])),
            (1.0, follow.Reset(JOBS, [job("Created", "Running", "Succeeded")])),
        ]
    )
    seen: list[str] = []
    virtual_wait(virtual, 10, progress=lambda current: seen.append(current[KEY].phase))
    assert list(dict.fromkeys(seen)) == ["Created", "Running", "Succeeded"]
    assert seen[-1] == "Succeeded"


def test_progress_shows_the_job_before_a_wait_that_ends_on_its_first_look() -> None:
    """The server refused the pods before the wait began: the first look ends the wait, and
    what it read is still shown (tfjob-kit wait's progress lines come before its verdict)."""
    virtual = Virtual(
        [
            (0, follow.Reset(JOBS, [job("Created")])),
            (0, follow.Reset(EVENTS, [event("FailedCreatePod", FAILED_CREATE)])),
        ]
    )
    seen: list[str] = []
    with pytest.raises(status.WaitError) as caught:
        virtual_wait(virtual, 10, progress=lambda current: seen.append(current[KEY].phase))
    assert caught.value.reason == "diagnosed"
    assert seen == ["Created"]


def test_a_failed_create_event_ends_the_wait_at_once_with_the_servers_reason() -> None:
    """The event comes 2 ticks in; the wait ends then, not at the next periodic read (5 ticks)
    nor at its timeout (30 s)."""
    virtual = Virtual(
        [
            (0, follow.Reset(JOBS, [job("Created")])),
            (0, follow.Reset(EVENTS, [])),
            (2 * TICK, follow.Change(EVENTS, "ADDED", event("FailedCreatePod", FAILED_CREATE))),
        ]
    )
    with pytest.raises(status.WaitError) as caught:
        virtual_wait(virtual, timeout=30)
    assert virtual.now == 2 * TICK, f"ended at tick {virtual.now / TICK:g}"
    assert caught.value.reason == "diagnosed"
    assert str(caught.value) == (
        f"TFJob {NS}/mnist cannot reach Succeeded (it is Created): "
        f"TFJob {NS}/mnist: FailedCreatePod: {FAILED_CREATE}"
    )
    problems = caught.value.statuses[KEY].problems
    assert [(p["reason"], p["fatal"]) for p in problems] == [("FailedCreatePod", True)]


def test_a_broken_watch_is_reported_and_the_relisted_state_counts() -> None:
    error = KubeError("watch closed", "unreachable")
    script = Scripted(
        [
            (0, follow.Reset(JOBS, [job("Created")])),
            (0.05, follow.Broken(JOBS, error, permanent=False)),
            (0.1, follow.Reset(JOBS, [job("Created", "Running", "Succeeded")])),
        ]
    )
    assert wait(script)[KEY].phase == "Succeeded"


def test_the_timeout_ends_the_wait_whatever_the_watches_do() -> None:
    """Broken watches (each one a wake-up of the wait) neither end it early nor keep it past
    its timeout: it ends at the timeout exactly, on the virtual clock (half a tick past the
    8th; a wait that slept whole ticks would end at the 9th)."""
    error = KubeError("connection refused", "unreachable")
    broken = [(i * TICK, follow.Broken(PODS, error, permanent=False)) for i in (1, 2, 3)]
    virtual = Virtual([(0, follow.Reset(JOBS, [job("Created")])), *broken])
    with pytest.raises(status.WaitError) as caught:
        virtual_wait(virtual, timeout=8.5 * TICK)
    assert virtual.now == 8.5 * TICK and not virtual.pending, virtual.now / TICK
    assert caught.value.reason == "timeout"
    assert str(caught.value) == (
        f"timed out after 0.53125s waiting for Succeeded: TFJob {NS}/mnist is Created"
    )
    never = Virtual([(0, follow.Broken(JOBS, error, permanent=False))])
    with pytest.raises(status.WaitError, match="was never read: connection refused"):
        virtual_wait(never, timeout=6.5 * TICK)
    assert never.now == 6.5 * TICK, never.now / TICK


def test_a_job_that_cannot_be_listed_ends_the_wait_with_the_servers_answer() -> None:
    forbidden = KubeError("forbidden by RBAC", "forbidden", 403)
    script = Scripted([(0, follow.Broken(JOBS, forbidden, permanent=True))])
    with pytest.raises(KubeError) as caught:
        wait(script, timeout=30)
    assert caught.value is forbidden


def test_a_deleted_job_and_a_fail_on_condition_end_the_wait() -> None:
    script = Scripted(
        [(0, follow.Reset(JOBS, [job("Created")])), (0.05, follow.Change(JOBS, "DELETED", job()))]
    )
    with pytest.raises(status.WaitError, match="was deleted while waiting for Succeeded"):
        wait(script)


def test_events_kept_are_the_jobs_own_and_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(status, "MAX_EVENTS", 5)
    view = status._View([KEY])
    view.apply(follow.Reset(JOBS, [job("Created")]))
    others = [event("BackOff", "x", "Pod", f"other-{i}") for i in range(20)]
    ours = [event(f"Reason{i}", "x", "Pod", f"mnist-worker-{i}") for i in range(20)]
    view.apply(follow.Reset(EVENTS, others + ours))
    assert len(view.events) == 5
    assert all(k[2].startswith("mnist-") for k in view.events)
    # the same series again (an event's name) replaces its entry
    view.apply(follow.Change(EVENTS, "MODIFIED", event("Reason19", "y", "Pod", "mnist-worker-19")))
    assert len(view.events) == 5


def test_two_series_of_one_reason_are_both_kept() -> None:
    """The operator's FailedCreatePod for a pod the quota refuses (passing) and for a pod the
    server finds invalid (fatal) are two series; the passing one must not hide the fatal one."""
    quota = event(
        "FailedCreatePod",
        'Error creating: pods "mnist-worker-1" is forbidden: exceeded quota: compute',
    )
    invalid = event("FailedCreatePod", FAILED_CREATE)
    invalid["metadata"]["name"] = "mnist.2"
    script = Scripted(
        [
            (0, follow.Reset(JOBS, [job("Created")])),
            (0, follow.Reset(EVENTS, [invalid, quota])),
        ]
    )
    with pytest.raises(status.WaitError) as caught:
        wait(script, timeout=30)
    problems = caught.value.statuses[KEY].problems
    assert sorted((p["fatal"], p["message"]) for p in problems) == [
        (False, quota["message"]),
        (True, FAILED_CREATE),
    ]


# -- follow.Follower against a lister and a watcher that answer as the API server does ------


class Server:
    """Lists give resourceVersion 10, 20, ...; each watch plays the next script entry."""

    def __init__(self, watches: list[list[tuple[str, dict[str, Any]]] | KubeError]) -> None:
        self.watches = watches
        self.lists = 0
        self.watched_from: list[str] = []

    def lister(self, client: Any, source: follow.Source) -> tuple[list[dict[str, Any]], str]:
        self.lists += 1
        return [job("Created")], str(self.lists * 10)

    def watcher(self, client: Any, source: follow.Source, version: str) -> Iterator[Any]:
        self.watched_from.append(version)
        if not self.watches:
            time.sleep(0.05)
            return iter([])
        script = self.watches.pop(0)
        if isinstance(script, KubeError):
            raise script
        return iter(script)


def collect(server: Server, count: int) -> list[follow.Update]:
    follower = follow.Follower(None, [JOBS], lister=server.lister, watcher=server.watcher)  # type: ignore[arg-type]
    got: list[follow.Update] = []
    with follower:
        while len(got) < count:
            got.append(follower.updates.get(timeout=HANG_SECONDS))
    return got


def changed(version: str) -> tuple[str, dict[str, Any]]:
    obj = job("Created", "Running")
    obj["metadata"]["resourceVersion"] = version
    return "MODIFIED", obj


def test_the_follower_lists_then_watches_from_the_lists_version_and_resumes() -> None:
    server = Server([[changed("11"), ("BOOKMARK", {"metadata": {"resourceVersion": "15"}})], []])
    got = collect(server, 2)
    assert [type(u).__name__ for u in got] == ["Reset", "Change"]
    deadline = time.monotonic() + HANG_SECONDS
    while len(server.watched_from) < 3 and time.monotonic() < deadline:
        time.sleep(0.01)
    # a watch the server ended is resumed from the last version seen (the bookmark's)
    assert server.watched_from[:3] == ["10", "15", "15"]
    assert server.lists == 1


def test_an_expired_version_or_a_dropped_watch_is_listed_and_watched_again() -> None:
    expired = KubeError("too old resource version: 10 (25)", "expired", 410)
    server = Server([expired, [changed("21")]])
    got = collect(server, 4)
    assert [type(u).__name__ for u in got] == ["Reset", "Broken", "Reset", "Change"]
    assert isinstance(got[1], follow.Broken) and not got[1].permanent
    assert server.watched_from[:2] == ["10", "20"]


def test_credentials_that_may_list_but_not_watch_get_a_list_every_few_seconds(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(follow, "POLL_SECONDS", 0.05)
    forbidden = KubeError("may not watch", "forbidden", 403)
    server = Server([forbidden])
    got = collect(server, 3)
    assert [type(u).__name__ for u in got] == ["Reset", "Reset", "Reset"]
    assert server.watched_from == ["10"]


def test_a_source_that_cannot_be_listed_is_given_up() -> None:
    class Denied(Server):
        def lister(self, client: Any, source: follow.Source) -> tuple[list[dict[str, Any]], str]:
            raise KubeError("forbidden", "forbidden", 403)

    got = collect(Denied([]), 1)
    assert isinstance(got[0], follow.Broken) and got[0].permanent


def _diagnosed(view: status._View, key: status.Key, namewide: bool) -> list[dict[str, Any]]:
    """diagnose's problems for a job: from the view's per-job reads, or (``namewide``) as the
    wait read them before it indexed by job: every pod with the job's label, every event and
    PodGroup of the namespace."""
    resource, namespace, name = key
    obj = view.jobs[key]
    if namewide:
        label = resource.job_label
        pods = [
            p
            for (ns, _), p in view.pods.items()
            if ns == namespace and p["metadata"].get("labels", {}).get(label) == name
        ]
        events = [e for (ns, *_), e in view.events.items() if ns == namespace]
        groups = [g for (ns, _), g in view.podgroups.items() if ns == namespace]
    else:
        pods = view.pods_of(key)
        groups = view.podgroups_of(key, obj)
        events = view.events_of(key, pods, groups)
    return [
        p.as_dict()
        for p in diagnose.diagnose(
            obj,
            pods,
            events,
            diagnose.Context(
                now=1.8e9,
                unschedulable_grace=60,
                podgroups=groups,
                queues={
                    "small": {"metadata": {"name": "small"}, "spec": {"capability": {"cpu": "1"}}}
                },
            ),
        )
    ]


def test_per_job_reads_diagnose_as_the_namespace_wide_ones() -> None:
    """Many jobs, whose names prefix each other, their pods, PodGroups and events, changed and
    deleted in a random order: each job's diagnosis from the per-job indexes is the one from
    reading the whole namespace; pods are kept without their spec."""
    import random

    rng = random.Random(13)
    names = ["a", "a-worker", "a-worker-0", "b", "bb", "c-ps"]
    keys = [(TFJOB, NS, n) for n in names]
    view = status._View(keys)
    jobs = []
    for index, name in enumerate(names):
        obj = job("Created")
        obj["metadata"].update(name=name, uid=f"uid-{index}")
        jobs.append(obj)
    view.apply(follow.Reset(follow.Source(TFJOB, NS), jobs))
    pod_source = follow.Source("pods", NS, "")
    group_source = follow.Source(status.PODGROUP, NS)
    reasons = ["FailedCreatePod", "FailedScheduling", "Unschedulable", "BackOff", "Pulled"]
    for step in range(3000):
        owner = rng.randrange(len(names))
        name = names[owner]
        what = rng.random()
        if what < 0.4:
            pod_name = f"{name}-{rng.choice(['worker', 'ps'])}-{rng.randrange(3)}"
            waiting = rng.choice([None, "ErrImagePull", "CrashLoopBackOff"])
            pod = {
                "metadata": {
                    "name": pod_name,
                    "uid": f"p-{pod_name}-{step % 3}",
                    "labels": {TFJOB.job_label: name, "training.kubeflow.org/replica-index": "0"},
                },
                "spec": {
                    "containers": [{"name": "tensorflow", "env": [{"value": "x" * 99}]}],
                    **({"nodeName": f"node-{step % 4}"} if step % 3 else {}),
                },
                "status": {
                    "phase": "Pending",
                    "containerStatuses": [
                        {"name": "tensorflow", "state": {"waiting": {"reason": waiting}}}
                    ]
                    if waiting
                    else [],
                    "conditions": [
                        {
                            "type": "PodScheduled",
                            "status": "False",
                            "reason": "Unschedulable",
                            "message": "0/3 nodes are available",
                            "lastTransitionTime": "2026-11-26T12:00:00Z",
                        },
                        *(
                            [{"type": "DisruptionTarget", "status": "True", "reason": "Gone"}]
                            if step % 5 == 0
                            else []
                        ),
                    ],
                },
            }
            kind = rng.choice(["ADDED", "MODIFIED", "DELETED"])
            view.apply(follow.Change(pod_source, kind, pod))
        elif what < 0.6:
            group_name = rng.choice([name, f"{name}-{rng.randrange(2)}"])
            group = {
                "metadata": {
                    "name": group_name,
                    "ownerReferences": [{"uid": f"uid-{rng.randrange(len(names))}"}],
                },
                "spec": {"minMember": 4, "queue": "small", "minResources": {"cpu": "4"}},
                "status": {
                    "conditions": [
                        {"type": "Unschedulable", "status": "True", "message": "gang: 1/4"}
                    ]
                },
            }
            kind = rng.choice(["ADDED", "MODIFIED", "DELETED"])
            view.apply(follow.Change(group_source, kind, group))
        else:
            about = rng.choice(
                [("TFJob", name), ("Pod", f"{name}-worker-{rng.randrange(3)}"), ("PodGroup", name)]
            )
            ev = event(rng.choice(reasons), f"message {rng.randrange(4)}", *about)
            ev["metadata"]["name"] = f"{about[1]}.{rng.randrange(5)}"
            ev["lastTimestamp"] = f"2026-11-26T12:{rng.randrange(60):02d}:00Z"
            kind = rng.choice(["ADDED", "MODIFIED", "MODIFIED", "DELETED"])
            view.apply(follow.Change(EVENTS, kind, ev))
        if step % 100 == 99:
            for key in keys:
                assert _diagnosed(view, key, False) == _diagnosed(view, key, True), key
    assert view.pods and all(set(p["spec"]) <= {"nodeName"} for p in view.pods.values())
    # The comparison saw problems of every kind read: the pods', the events', the PodGroups'.
    seen = {p["reason"] for key in keys for p in _diagnosed(view, key, False)}
    assert {"ErrImagePull", "FailedCreatePod", "QueueCapability", "Gone"} <= seen, seen
    assert any("on node node-" in p["message"] for k in keys for p in _diagnosed(view, k, False))


def test_the_events_dropped_first_are_the_oldest(monkeypatch: pytest.MonkeyPatch) -> None:
    """Against the rule written plainly (after each arrival beyond the bound, drop the kept
    event seen last the longest ago, the first kept of equals), over random arrivals, repeats
    of a series, deletions and relists."""
    import random

    monkeypatch.setattr(status, "MAX_EVENTS", 7)
    rng = random.Random(7)
    view = status._View([KEY])
    expected: dict[tuple[str, ...], dict[str, Any]] = {}
    for step in range(5000):
        ev = event(f"R{rng.randrange(3)}", "m", "Pod", f"mnist-worker-{rng.randrange(6)}")
        ev["metadata"]["name"] = f"s{rng.randrange(4)}"
        ev["lastTimestamp"] = f"2026-11-26T12:00:{rng.randrange(20):02d}Z"
        key = view._keep_event(ev)
        assert key is not None
        if step % 997 == 996:  # a relist: what the list holds replaces what was kept
            view.apply(follow.Reset(EVENTS, [ev]))
            expected = {key: ev}
            continue
        if rng.random() < 0.15:
            view.apply(follow.Change(EVENTS, "DELETED", ev))
            expected.pop(key, None)
            continue
        view.apply(follow.Change(EVENTS, "MODIFIED", ev))
        expected[key] = ev
        if len(expected) > 7:
            oldest = min(expected, key=lambda k: diagnose.event_time(expected[k]) or 0.0)
            del expected[oldest]
        assert list(view.events) == list(expected)
    assert len(view._oldest) <= 4 * 7 + 1  # the heap is rebuilt, not left to grow


def test_a_job_is_read_again_when_told_about_and_every_few_ticks_otherwise(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Two pending jobs; the watches tell about one of them (its pod) twice. Each is diagnosed
    when first listed, after each change told about it, and every REREAD_TICKS ticks between:
    not every tick, as a wait on 500 pending jobs did."""
    other = (TFJOB, NS, "other")
    reads: list[tuple[float, str]] = []
    real = diagnose.diagnose

    def counted(job: dict[str, Any], *args: Any, **kwargs: Any) -> list[diagnose.Problem]:
        reads.append((virtual.now, job["metadata"]["name"]))
        return real(job, *args, **kwargs)

    monkeypatch.setattr(diagnose, "diagnose", counted)
    second = job("Created")
    second["metadata"].update(name="other", uid="u2")
    pods = follow.Source("pods", NS, "")

    def pod(phase: str) -> dict[str, Any]:
        labels = {TFJOB.job_label: "mnist"}
        return {
            "metadata": {"name": "mnist-worker-0", "labels": labels},
            "status": {"phase": phase},
        }

    virtual = Virtual(
        [
            (0, follow.Reset(follow.Source(TFJOB, NS), [job("Created"), second])),
            (8 * TICK, follow.Change(pods, "ADDED", pod("Pending"))),
            (12 * TICK, follow.Change(pods, "MODIFIED", pod("Running"))),
        ]
    )
    with pytest.raises(status.WaitError, match="timed out"):
        status.wait(
            None,  # type: ignore[arg-type]
            [KEY, other],
            wait_for=["Succeeded"],
            fail_on=["Failed"],
            timeout=24 * TICK,
            tick=TICK,
            clock=virtual.clock,
            wall=virtual.wall,
            follower=virtual,  # type: ignore[arg-type]
        )
    assert status.REREAD_TICKS == 5
    mine = [t / TICK for t, name in reads if name == "mnist"]
    theirs = [t / TICK for t, name in reads if name == "other"]
    # 24 ticks: the other job is read when listed and every 5 ticks, not every tick; mnist at
    # once when its pod was added (tick 8) and changed (tick 12), and 5 ticks after each read.
    assert theirs == [0, 5, 10, 15, 20], theirs
    assert mine == [0, 5, 8, 12, 17, 22], mine


class BlockingWatch:
    """A watch whose read blocks until it is interrupted, as a TLS read does; it records which
    thread gives its connection back."""

    def __init__(self) -> None:
        self.woken = threading.Event()
        self.closed_by: list[str] = []

    def interrupt(self) -> None:
        self.woken.set()

    def close(self) -> None:
        self.closed_by.append(threading.current_thread().name)

    def __iter__(self) -> Iterator[tuple[str, dict[str, Any]]]:
        try:
            self.woken.wait(HANG_SECONDS)
            yield from ()
        finally:
            self.close()


def test_stop_wakes_each_watch_and_waits_for_its_thread_to_end() -> None:
    watch = BlockingWatch()
    follower = follow.Follower(
        None,  # type: ignore[arg-type]
        [JOBS],
        lister=lambda client, source: ([job("Created")], "10"),
        watcher=lambda client, source, version: watch,
    )
    with follower:
        assert isinstance(follower.updates.get(timeout=HANG_SECONDS), follow.Reset)
        deadline = time.monotonic() + HANG_SECONDS
        while not follower._open and time.monotonic() < deadline:
            time.sleep(0.01)
    # stop() returned: the watch was woken, and its own thread (not the caller) released it
    # and ended, so no thread reads on once the client closes.
    assert watch.woken.is_set()
    assert not any(t.is_alive() for t in follower._threads)
    assert watch.closed_by and all(name.startswith("follow-") for name in watch.closed_by)
