"""What the toolkit reads of Kueue offline (tfjob_kit.kueue), the queue option of the tfjob task
(jobs.prepare), the Kueue preflight's answer to a Kueue that did not take a job, and the wait's
reading of a job's Workload (status.wait on a virtual clock). The real Kueue runs the same paths
in tests/integration/test_kueue.py."""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import pytest
from test_wait import JOBS, KEY, NS, TICK, Virtual, job

from tfjob_kit import kueue
from tfjob_kit.kube import follow, jobs, kueue_preflight, status
from tfjob_kit.kube.kinds import TFJOB, TRAINJOB, WORKLOAD
from tfjob_kit.manifests import load_text

GPU = "nvidia.com/gpu"


def _queue(resources: list[dict[str, Any]], cohort: str | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "resourceGroups": [
            {
                "coveredResources": [r["name"] for r in resources],
                "flavors": [{"name": "a", "resources": resources}],
            }
        ]
    }
    if cohort:
        spec["cohortName"] = cohort
    return {"spec": spec}


def test_a_cluster_queue_kueue_has_not_judged_yet_is_not_called_inactive() -> None:
    """Kueue writes the Active condition a moment after the ClusterQueue is created: until then
    nothing is refused (the preflight ran too early once, on `make demo`'s fresh queue)."""
    fresh: dict[str, Any] = {"status": {}}
    assert kueue.inactive(fresh) is None
    stopped = {"status": {"conditions": [{"type": "Active", "status": "False", "reason": "R"}]}}
    assert kueue.inactive(stopped) == "R"
    active = {"status": {"conditions": [{"type": "Active", "status": "True"}]}}
    assert kueue.inactive(active) is None


def test_what_a_queue_can_ever_admit() -> None:
    alone = _queue([{"name": GPU, "nominalQuota": "8", "borrowingLimit": "4"}])
    assert kueue.capacity(alone) == {GPU: Fraction(8)}  # no cohort: nothing to borrow
    limited = _queue([{"name": GPU, "nominalQuota": "8", "borrowingLimit": "4"}], "c")
    assert kueue.capacity(limited) == {GPU: Fraction(12)}
    unbounded = _queue([{"name": GPU, "nominalQuota": "8"}], "c")
    assert kueue.capacity(unbounded) == {GPU: None}
    wanted = kueue.demand([(3, {GPU: Fraction(4), "cpu": Fraction(1, 2)})])
    assert wanted == {GPU: Fraction(12), "cpu": Fraction(3, 2)}
    assert kueue.never_fits(wanted, kueue.capacity(alone)) == [
        f"12 {GPU} where it admits at most 8"
    ]
    # within the limit, unbounded, or a resource the queue does not cover: not judged never
    for most in (kueue.capacity(limited), kueue.capacity(unbounded), {}):
        assert kueue.never_fits(wanted, most) == []


def _workload(*conditions: tuple[str, str, str, str]) -> dict[str, Any]:
    return {
        "metadata": {"name": "tfjob-mnist-1", "namespace": NS, "ownerReferences": [{"uid": "u1"}]},
        "status": {
            "admission": {"clusterQueue": "ml"},
            "conditions": [
                {"type": t, "status": s, "reason": r, "message": m} for t, s, r, m in conditions
            ],
        },
    }


WAITING = ("QuotaReserved", "False", "Pending", f"insufficient unused quota for {GPU}")
NO_QUEUE = ("QuotaReserved", "False", "Inadmissible", "LocalQueue ml doesn't exist")
TOO_BIG = ("QuotaReserved", "False", "Pending", "podset request (8) > maximum capacity (4)")
ADMITTED = ("Admitted", "True", "Admitted", "The workload is admitted")
EVICTED = ("Evicted", "True", "Preempted", "Preempted to accommodate a higher priority Workload")


@pytest.mark.parametrize(
    ("conditions", "state", "never"),
    [
        ((WAITING,), "Waiting", False),
        ((NO_QUEUE,), "Waiting", True),
        ((TOO_BIG,), "Waiting", True),
        ((ADMITTED,), "Admitted", False),
        ((ADMITTED, EVICTED), "Evicted", False),
        ((), "Waiting", False),
    ],
    ids=["quota", "no-queue", "too-big", "admitted", "evicted", "new"],
)
def test_a_workload_says_where_its_job_stands(
    conditions: tuple[tuple[str, str, str, str], ...], state: str, never: bool
) -> None:
    standing = kueue.admission(_workload(*conditions))
    assert (standing.state, standing.never) == (state, never)
    assert standing.as_dict()["workload"] == "tfjob-mnist-1"


def test_an_eviction_is_kept_once_the_job_is_admitted_again() -> None:
    """Kueue keeps the last eviction in Requeued (and as "Previously: ..." in Evicted)."""
    message = "Preempted to accommodate a workload due to prioritization in the ClusterQueue"
    again = _workload(
        ADMITTED,
        ("Evicted", "False", "QuotaReserved", f"Previously: {message}"),
        ("Requeued", "True", "Preempted", message),
    )
    standing = kueue.admission(again)
    assert standing.state == "Admitted" and standing.evicted == ("Preempted", message)
    evicted = kueue.admission(_workload(ADMITTED, EVICTED))
    assert evicted.state == "Evicted" and evicted.evicted == ("Preempted", EVICTED[3])
    assert kueue.admission(_workload(ADMITTED)).evicted is None


def test_multikueue_says_which_worker_runs_the_job() -> None:
    """On a MultiKueue manager the Workload names the worker it was dispatched to."""
    dispatched = _workload(ADMITTED)
    dispatched["status"]["clusterName"] = "worker-a"
    assert kueue.admission(dispatched).as_dict()["worker"] == "worker-a"
    assert kueue.admission(_workload(WAITING)).worker == ""


def _prepare(text: str, **options: Any) -> list[jobs.Item]:
    return jobs.prepare(load_text(text, "jobs.yaml"), validate="off", **options)


TFJOB_TEXT = """
apiVersion: kubeflow.org/v1
kind: TFJob
metadata: {name: mnist, labels: {team: ml}}
spec:
  tfReplicaSpecs:
    Worker:
      replicas: 2
      template:
        spec:
          containers: [{name: tensorflow, image: tensorflow/tensorflow:2.15.0}]
"""


def test_the_queue_option_labels_every_job_and_keeps_its_labels() -> None:
    (item,) = _prepare(TFJOB_TEXT, queue="ml")
    assert item.body["metadata"]["labels"] == {"team": "ml", kueue.QUEUE_LABEL: "ml"}
    items = _prepare(TFJOB_TEXT, queue="ml", backend="trainer")
    (trainjob,) = [i for i in items if i.resource is TRAINJOB]
    assert kueue.queue_of(trainjob.body) == "ml"
    (unqueued,) = _prepare(TFJOB_TEXT)
    assert kueue.queue_of(unqueued.body) is None


@pytest.mark.parametrize(
    ("text", "options", "message"),
    [
        (
            TFJOB_TEXT.replace("{team: ml}", "{kueue.x-k8s.io/queue-name: other}"),
            {"queue": "ml"},
            "'other' differs from the queue option 'ml'",
        ),
        (TFJOB_TEXT, {"queue": "ml", "backend": "volcano"}, "Kueue does not manage Volcano Jobs"),
    ],
    ids=["another-queue", "volcano"],
)
def test_the_queue_option_refuses_what_kueue_would_not_do(
    text: str, options: dict[str, Any], message: str
) -> None:
    with pytest.raises(jobs.InvalidInputError) as caught:
        _prepare(text, **options)
    assert message in str(caught.value)


class _Kueue:
    """A cluster whose LocalQueue and active ClusterQueue exist (what the preflight reads)."""

    def get(self, resource: Any, namespace: str, name: str) -> dict[str, Any]:
        if resource.kind == "LocalQueue":
            return {"spec": {"clusterQueue": "ml"}}
        active = {"type": "Active", "status": "True"}
        return {**_queue([{"name": GPU, "nominalQuota": "8"}]), "status": {"conditions": [active]}}


def test_a_kueue_that_did_not_suspend_the_dry_run_is_named_with_what_to_enable() -> None:
    (item,) = _prepare(TFJOB_TEXT, queue="ml")
    queued = kueue_preflight.QueuedJob("jobs.yaml", 1, TFJOB, item.body, {}, new=True)

    def running(_: kueue_preflight.QueuedJob) -> dict[str, Any]:
        return item.body  # as Kueue's webhook would not have left it: not suspended

    def suspended(_: kueue_preflight.QueuedJob) -> dict[str, Any]:
        return {**item.body, "spec": {**item.body["spec"], "runPolicy": {"suspend": True}}}

    client: Any = _Kueue()
    (finding,) = kueue_preflight.check(client, [queued], running)
    assert finding.rule == "kueue-queue" and finding.path == kueue.QUEUE_PATH
    assert "'kubeflow.org/tfjob'" in finding.message
    assert "managedJobsNamespaceSelector" in finding.message
    assert kueue_preflight.check(client, [queued], suspended) == []
    existing = kueue_preflight.QueuedJob("jobs.yaml", 1, TFJOB, item.body, {}, new=False)
    assert kueue_preflight.check(client, [existing], running) == []  # its webhook acts on create


WORKLOADS = follow.Source(WORKLOAD, NS)


def queued_wait(virtual: Virtual) -> dict[Any, status.JobStatus]:
    """The wait of a job submitted to Kueue (its Workloads watched), on the virtual clock."""
    return status.wait(
        None,  # type: ignore[arg-type]  # the virtual follower never calls the client
        [KEY],
        wait_for=["Succeeded"],
        fail_on=["Failed"],
        timeout=60,
        workloads=True,
        tick=TICK,
        clock=virtual.clock,
        wall=virtual.wall,
        follower=virtual,  # type: ignore[arg-type]
    )


def test_the_wait_reports_the_workload_and_ends_when_kueue_says_never() -> None:
    """A queued job waiting for quota is reported in Kueue's words and waited for; when its
    Workload says it can never be admitted, the wait ends then, not at the timeout."""
    waiting = _workload(WAITING)
    virtual = Virtual(
        [
            (0, follow.Reset(JOBS, [job("Created", "Suspended")])),
            (0, follow.Reset(WORKLOADS, [waiting])),
            (2, follow.Change(WORKLOADS, "MODIFIED", _workload(NO_QUEUE))),
        ]
    )
    with pytest.raises(status.WaitError) as caught:
        queued_wait(virtual)
    assert WORKLOAD in [s.what for s in virtual.sources]
    assert caught.value.reason == "diagnosed" and virtual.now == 2
    assert "Inadmissible: LocalQueue ml doesn't exist" in str(caught.value)
    assert caught.value.statuses[KEY].queue == {
        "workload": "tfjob-mnist-1",
        "state": "Waiting",
        "cluster_queue": "ml",
        "reason": "Inadmissible",
        "message": "LocalQueue ml doesn't exist",
        "evicted": None,
        "worker": "",
    }


def test_the_wait_reads_a_queued_job_only_with_its_workloads_listed() -> None:
    """A job already Succeeded when the wait starts still reports its queue: the wait reads it
    once the namespace's Workloads are listed too."""
    virtual = Virtual(
        [
            (0, follow.Reset(JOBS, [job("Succeeded")])),
            (1, follow.Reset(WORKLOADS, [_workload(ADMITTED)])),
        ]
    )
    reached = queued_wait(virtual)
    queue = reached[KEY].queue
    assert queue is not None and queue["state"] == "Admitted"
