"""kube/diagnose.py: from a job, its pods and the events about them to problems, fatal or not.

The objects are shaped as the local cluster's API server returned them (a TFJob, its pods,
events of the training-operator, Volcano and the scheduler, a PodGroup, a Queue, nodes),
trimmed to the fields that are read.
"""

from __future__ import annotations

import copy
from datetime import UTC, datetime
from fractions import Fraction
from typing import Any

import pytest

from tfjob_kit.kube import diagnose
from tfjob_kit.kube.diagnose import Capacity, Problem

NOW = datetime(2026, 11, 26, 12, 0, 0, tzinfo=UTC).timestamp()
NS = "training"
UID = "ef53d9ea-3603-4dac-adbe-e6bfc32d6d08"


def at(seconds_ago: float) -> str:
    return datetime.fromtimestamp(NOW - seconds_ago, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def container(**resources: Any) -> dict[str, Any]:
    return {
        "name": "tensorflow",
        "image": "registry.example.com/mnist:1.0",
        "resources": resources,
    }


def tfjob(
    workers: int = 2,
    chief: bool = False,
    gpus: int = 0,
    success_policy: str | None = None,
) -> dict[str, Any]:
    limits = {"cpu": "1", "memory": "1Gi", **({"nvidia.com/gpu": gpus} if gpus else {})}

    def replica(count: int) -> dict[str, Any]:
        return {
            "replicas": count,
            "restartPolicy": "Never",
            "template": {"spec": {"containers": [container(limits=limits)]}},
        }

    specs = {"Worker": replica(workers)}
    if chief:
        specs["Chief"] = replica(1)
    spec: dict[str, Any] = {"tfReplicaSpecs": specs}
    if success_policy:
        spec["successPolicy"] = success_policy
    return {
        "apiVersion": "kubeflow.org/v1",
        "kind": "TFJob",
        "metadata": {"name": "mnist", "namespace": NS, "uid": UID},
        "spec": spec,
        "status": {"conditions": [{"type": "Created", "status": "True"}]},
    }


def pod(
    replica: str = "worker",
    index: int = 0,
    waiting: tuple[str, str] | None = None,
    unschedulable: tuple[float, str] | None = None,
) -> dict[str, Any]:
    name = f"mnist-{replica}-{index}"
    status: dict[str, Any] = {"phase": "Pending"}
    if waiting:
        status["containerStatuses"] = [
            {
                "name": "tensorflow",
                "image": "registry.example.com/mnist:1.0",
                "ready": False,
                "restartCount": 0,
                "state": {"waiting": {"reason": waiting[0], "message": waiting[1]}},
            }
        ]
    if unschedulable:
        status["conditions"] = [
            {
                "type": "PodScheduled",
                "status": "False",
                "reason": "Unschedulable",
                "message": unschedulable[1],
                "lastTransitionTime": at(unschedulable[0]),
            }
        ]
    return {
        "metadata": {
            "name": name,
            "namespace": NS,
            "uid": f"uid-{name}",
            "labels": {
                "training.kubeflow.org/job-name": "mnist",
                "training.kubeflow.org/replica-type": replica,
                "training.kubeflow.org/replica-index": str(index),
            },
        },
        "status": status,
    }


def event(
    kind: str,
    name: str,
    reason: str,
    message: str,
    seconds_ago: float = 1,
    uid: str | None = None,
    type_: str = "Warning",
    first_ago: float | None = None,
) -> dict[str, Any]:
    involved = {"kind": kind, "namespace": NS, "name": name}
    if uid:
        involved["uid"] = uid
    return {
        "metadata": {"name": f"{name}.{reason}", "namespace": NS},
        "involvedObject": involved,
        "reason": reason,
        "message": message,
        "type": type_,
        "count": 3,
        "firstTimestamp": at(first_ago if first_ago is not None else seconds_ago),
        "lastTimestamp": at(seconds_ago),
    }


def node(name: str, gpus: int = 0) -> dict[str, Any]:
    allocatable = {"cpu": "32", "memory": "256Gi", "pods": "110"}
    if gpus:
        allocatable["nvidia.com/gpu"] = str(gpus)
    return {"metadata": {"name": name}, "status": {"allocatable": allocatable}}


CLUSTER = diagnose.capacity(
    [node("cpu-0"), node("cpu-1"), node("gpu-0", gpus=4), node("gpu-1", gpus=4)]
)
FAILED_CREATE = (
    'Error creating: Pod "mnist-worker-0" is invalid: '
    'spec.containers[0].volumeMounts[0].name: Not found: "ckpt"'
)
SCHEDULER = (
    "0/4 nodes are available: 2 Insufficient nvidia.com/gpu, 2 node(s) didn't match Pod's "
    "node affinity/selector. preemption: 0/4 nodes are available: 2 No preemption victims "
    "found for incoming pod, 2 Preemption is not helpful for scheduling."
)


def run(
    job: dict[str, Any],
    pods: list[dict[str, Any]] | None = None,
    events: list[dict[str, Any]] | None = None,
    **options: Any,
) -> list[Problem]:
    cluster = options.pop("cluster", None)
    if isinstance(cluster, Capacity):
        options["cluster"] = lambda: cluster
    elif cluster is not None:
        options["cluster"] = cluster
    return diagnose.diagnose(job, pods or [], events or [], diagnose.Context(now=NOW, **options))


def test_failed_create_pod_is_fatal_and_quotes_the_server() -> None:
    found = run(tfjob(), events=[event("TFJob", "mnist", "FailedCreatePod", FAILED_CREATE)])
    assert found == [Problem("TFJob", f"{NS}/mnist", "FailedCreatePod", FAILED_CREATE, True)]
    assert found[0].line() == f"TFJob {NS}/mnist: FailedCreatePod: {FAILED_CREATE}"
    service = 'Error creating: Service "mnist-worker-0" is invalid: spec.ports[0].port: Invalid'
    found = run(tfjob(), events=[event("TFJob", "mnist", "FailedCreateService", service)])
    assert [(p.reason, p.fatal) for p in found] == [("FailedCreateService", True)]


def test_a_webhook_that_stays_down_past_the_grace_is_fatal() -> None:
    webhook = (
        'Error creating: Internal error occurred: failed calling webhook "mutatepod.volcano.sh": '
        'failed to call webhook: Post "https://volcano-admission.volcano-system.svc:443/pods/'
        'mutate?timeout=10s": service "volcano-admission" not found'
    )
    grace = diagnose.WEBHOOK_GRACE

    def found(first_ago: float, last_ago: float) -> list[tuple[bool, str]]:
        events = [
            event("TFJob", "mnist", "FailedCreatePod", webhook, last_ago, first_ago=first_ago)
        ]
        return [(p.fatal, p.message) for p in run(tfjob(), events=events)]

    # Failing for longer than the grace and still failing: fatal, and the user is told how to
    # find the configuration.
    [(fatal, message)] = found(grace + 30, 2)
    assert fatal and message.startswith(webhook)
    assert f"(for {grace + 30:.0f}s: an admission webhook" in message
    assert f"`tfjob-kit webhooks -n {NS}`" in message
    # Within the grace, or no longer failing (last seen before the grace): not fatal.
    assert found(grace - 5, 2) == [(False, webhook)]
    assert found(grace + 300, grace + 10) == [(False, webhook)]


def test_a_webhook_failure_counts_from_when_the_wait_saw_it_recur() -> None:
    """An aggregated event keeps the first time of an earlier outage: a blip an hour later is
    not fatal at once; only one the wait sees recur for the whole grace is."""
    webhook = 'Error creating: Internal error occurred: failed calling webhook "w.example.com": x'
    grace = diagnose.WEBHOOK_GRACE
    webhooks = diagnose.WebhookFailures()

    def fatal(now: float, last_at: float) -> bool:
        seen = event("TFJob", "mnist", "FailedCreatePod", webhook, NOW - last_at, first_ago=3600)
        context = diagnose.Context(now=now, webhooks=webhooks)
        found = diagnose.diagnose(tfjob(), [], [seen], context)
        return [p.fatal for p in found] == [True]

    assert not fatal(NOW, NOW - 1)  # first seen now, though the event began an hour ago
    assert not fatal(NOW + grace - 1, NOW + grace - 2)  # still within the grace
    assert fatal(NOW + grace + 1, NOW + grace)  # recurring for the whole grace
    # It stopped (not seen for the grace): forgotten, and a new blip starts the count again.
    assert not fatal(NOW + 3 * grace, NOW + grace)
    assert webhook not in webhooks
    assert not fatal(NOW + 3 * grace + 1, NOW + 3 * grace)


def test_create_failures_that_can_pass_are_not_fatal() -> None:
    quota = (
        'Error creating: pods "mnist-worker-1" is forbidden: exceeded quota: compute, '
        "requested: requests.cpu=1, used: requests.cpu=8, limited: requests.cpu=8"
    )
    webhook = (
        'Error creating: Internal error occurred: failed calling webhook "pods.example.com": '
        'Post "https://hook.svc:443/validate": dial tcp 10.0.0.1:443: connect: connection refused'
    )
    events = [
        event("TFJob", "mnist", "FailedCreatePod", quota),
        event("TFJob", "mnist", "FailedCreatePod", webhook, seconds_ago=2),
    ]
    assert [(p.message, p.fatal) for p in run(tfjob(), events=events)] == [
        (webhook, False),
        (quota, False),
    ]


def test_a_name_already_taken_is_fatal_only_once_it_has_lasted() -> None:
    """The operator's cache a step behind its own creation (seen in a .ci/run: the smoke job's
    Service created twice) passes; a name held by another object for the grace does not."""
    taken = 'Error creating: services "mnist-worker-1" already exists'

    def found(first_ago: float, seconds_ago: float) -> list[tuple[bool, str]]:
        seen = event("TFJob", "mnist", "FailedCreateService", taken, seconds_ago, None, "Warning")
        seen["firstTimestamp"] = at(first_ago)
        return [(p.fatal, p.message) for p in run(tfjob(), events=[seen])]

    grace = diagnose.ALREADY_EXISTS_GRACE
    assert found(1, 1) == [(False, taken)]
    assert found(grace - 5, 2) == [(False, taken)]
    assert found(grace + 300, grace + 10) == [(False, taken)]  # it stopped recurring
    ((fatal, message),) = found(grace + 10, 2)
    assert fatal and message.startswith(taken + f" (for {grace + 10:.0f}s: an object of that")


def test_events_of_another_object_an_older_job_or_an_earlier_spec_are_not_read() -> None:
    events = [
        event("TFJob", "other", "FailedCreatePod", FAILED_CREATE),
        event("TFJob", "mnist", "FailedCreatePod", FAILED_CREATE, uid="uid-of-a-deleted-job"),
        event("Pod", "mnist-worker-0", "FailedCreatePod", FAILED_CREATE),
        event(
            "TFJob", "mnist", "SuccessfulCreatePod", "Created pod: mnist-worker-0", type_="Normal"
        ),
    ]
    assert run(tfjob(), events=events) == []
    old = [event("TFJob", "mnist", "FailedCreatePod", FAILED_CREATE, seconds_ago=30)]
    assert run(tfjob(), events=old, since=NOW - 10) == []
    assert len(run(tfjob(), events=old, since=NOW - 60)) == 1


@pytest.mark.parametrize(
    ("reason", "message"),
    [
        (
            "ErrImagePull",
            'rpc error: code = NotFound desc = failed to pull and unpack image "registry.'
            'example.com/mnist:1.0": failed to resolve reference "registry.example.com/mnist:1.0"'
            ": registry.example.com/mnist:1.0: not found",
        ),
        (
            "ImagePullBackOff",
            'Back-off pulling image "registry.example.com/mnist:1.0": ErrImagePull: rpc error',
        ),
        (
            "InvalidImageName",
            'Failed to apply default image tag "registry.example.com/Mnist:1.0": couldn\'t '
            'parse image name "registry.example.com/Mnist:1.0": invalid reference format',
        ),
    ],
)
def test_image_failures_of_any_pod_are_fatal(reason: str, message: str) -> None:
    found = run(tfjob(workers=3), [pod("worker", 2, waiting=(reason, message))])
    assert found == [
        Problem("Pod", f"{NS}/mnist-worker-2", reason, f"container tensorflow: {message}", True)
    ]


def test_waiting_for_a_container_to_be_created_is_no_problem() -> None:
    creating = pod(waiting=("ContainerCreating", ""))
    assert run(tfjob(), [creating, pod("worker", 1)]) == []


CRASH = "back-off 40s restarting failed container=tensorflow pod=mnist-{0}_training(uid-{0})"


@pytest.mark.parametrize(
    ("job", "replica", "index", "fatal"),
    [
        (tfjob(chief=True), "chief", 0, True),
        (tfjob(chief=True), "worker", 0, False),  # the chief decides success
        (tfjob(), "worker", 0, True),  # no chief: worker 0 decides
        (tfjob(), "worker", 1, False),
        (tfjob(success_policy="AllWorkers"), "worker", 1, True),
        (tfjob(), "ps", 0, False),
    ],
)
def test_crash_loop_is_fatal_only_for_a_replica_that_decides_success(
    job: dict[str, Any], replica: str, index: int, fatal: bool
) -> None:
    message = CRASH.format(f"{replica}-{index}")
    found = run(job, [pod(replica, index, waiting=("CrashLoopBackOff", message))])
    assert [(p.reason, p.message, p.fatal) for p in found] == [
        ("CrashLoopBackOff", f"container tensorflow: {message}", fatal)
    ]


def test_unschedulable_is_fatal_after_the_grace_with_the_schedulers_message() -> None:
    young = run(tfjob(), [pod(unschedulable=(20, SCHEDULER))], cluster=CLUSTER)
    assert [(p.reason, p.fatal) for p in young] == [("Unschedulable", False)]
    assert young[0].message.startswith(SCHEDULER) and "20s of the 60s grace" in young[0].message
    old = run(tfjob(), [pod(unschedulable=(61, SCHEDULER))], cluster=CLUSTER)
    assert old == [Problem("Pod", f"{NS}/mnist-worker-0", "Unschedulable", SCHEDULER, True)]
    short = run(
        tfjob(), [pod(unschedulable=(20, SCHEDULER))], cluster=CLUSTER, unschedulable_grace=10
    )
    assert [p.fatal for p in short] == [True]


def test_a_scale_up_under_way_keeps_an_unschedulable_pod_waiting() -> None:
    pending = pod(unschedulable=(300, SCHEDULER))
    scale_up = event(
        "Pod",
        "mnist-worker-0",
        "TriggeredScaleUp",
        "pod triggered scale-up: [{gpu-pool 2->4 (max: 8)}]",
        seconds_ago=250,
        type_="Normal",
    )
    found = run(tfjob(), [pending], [scale_up], cluster=CLUSTER)
    assert [(p.reason, p.fatal) for p in found] == [("Unschedulable", False)]
    assert "a node autoscaler is adding nodes: pod triggered scale-up" in found[0].message
    # the autoscaler's later word that it will not help ends the wait again
    gave_up = event(
        "Pod",
        "mnist-worker-0",
        "NotTriggerScaleUp",
        "pod didn't trigger scale-up: 1 max node group size reached",
        seconds_ago=5,
        type_="Normal",
    )
    assert [p.fatal for p in run(tfjob(), [pending], [scale_up, gave_up], cluster=CLUSTER)] == [
        True
    ]


GANG_SAYS = "resource in cluster is overused: overused nvidia.com/gpu"


def podgroup(min_resources: dict[str, str], queue: str = "default") -> dict[str, Any]:
    return {
        "apiVersion": "scheduling.volcano.sh/v1beta1",
        "kind": "PodGroup",
        "metadata": {
            "name": "mnist",
            "namespace": NS,
            "uid": "pg-uid",
            "ownerReferences": [
                {"apiVersion": "kubeflow.org/v1", "kind": "TFJob", "name": "mnist", "uid": UID}
            ],
        },
        "spec": {"minMember": 3, "minResources": min_resources, "queue": queue},
        "status": {"phase": "Pending"},
    }


def test_a_gang_bigger_than_the_cluster_is_fatal_once_the_scheduler_says_so() -> None:
    job = tfjob(workers=3, gpus=4)  # 12 GPUs; the cluster has 8
    group = podgroup({"nvidia.com/gpu": "12"})
    said = event("PodGroup", "mnist", "Unschedulable", GANG_SAYS, seconds_ago=1, first_ago=12)
    found = run(job, events=[said], podgroups=[group], cluster=CLUSTER)
    assert [(p.object, p.reason, p.fatal) for p in found] == [
        (f"TFJob {NS}/mnist", "NeverFits", True)
    ]
    assert found[0].message == (
        "its 3 pods request 12 nvidia.com/gpu in all, more than the 4 nodes of the cluster can "
        f"allocate together (8); the scheduler says: PodGroup {NS}/mnist: {GANG_SAYS}"
    )
    # Just said: a node autoscaler gets a few seconds to announce a scale-up.
    fresh = event("PodGroup", "mnist", "Unschedulable", GANG_SAYS, seconds_ago=1, first_ago=2)
    assert run(job, events=[fresh], podgroups=[group], cluster=CLUSTER) == []
    # Nothing said by the scheduler yet: not judged.
    assert run(job, podgroups=[group], cluster=CLUSTER) == []


def test_a_gang_that_could_fit_is_transient() -> None:
    job = tfjob(workers=2, gpus=4)  # 8 GPUs: the whole cluster, but it fits
    group = podgroup({"nvidia.com/gpu": "8"})
    said = event(
        "PodGroup",
        "mnist",
        "Unschedulable",
        "0/2 tasks in gang unschedulable: pod group is not ready, 2 Pending, 2 minAvailable; "
        "Pending: 2 Unschedulable",
        first_ago=300,
    )
    assert run(job, events=[said], podgroups=[group], cluster=CLUSTER) == []


def test_one_pod_bigger_than_any_node_never_fits() -> None:
    job = tfjob(workers=1, gpus=6)
    found = run(job, [pod(unschedulable=(15, SCHEDULER))], cluster=CLUSTER)
    reasons = [(p.reason, p.fatal) for p in found]
    assert ("NeverFits", True) in reasons and ("Unschedulable", False) in reasons
    never = next(p for p in found if p.reason == "NeverFits")
    assert never.message.startswith(
        "a Worker pod requests 6 nvidia.com/gpu, more than any node can allocate (at most 4)"
    )
    assert never.message.endswith(f"the scheduler says: Pod {NS}/mnist-worker-0: {SCHEDULER}")


def test_the_cluster_is_read_only_when_the_scheduler_reports_the_job_unschedulable() -> None:
    calls: list[int] = []

    def read() -> Capacity:
        calls.append(1)
        return CLUSTER

    assert run(tfjob(workers=3, gpus=4), [pod()], cluster=read) == []
    assert calls == []
    found = run(tfjob(workers=3, gpus=4), [pod(unschedulable=(30, SCHEDULER))], cluster=read)
    assert calls == [1] and "NeverFits" in [p.reason for p in found]
    # no capacity known (no RBAC to list nodes): the check is skipped
    assert [p.reason for p in run(tfjob(workers=3, gpus=4), [pod(unschedulable=(30, "x"))])] == [
        "Unschedulable"
    ]


def test_a_podgroup_needing_more_than_its_queue_may_use_is_fatal() -> None:
    queue: dict[str, Any] = {
        "apiVersion": "scheduling.volcano.sh/v1beta1",
        "kind": "Queue",
        "metadata": {"name": "small"},
        "spec": {"capability": {"cpu": "2", "memory": "4Gi"}, "weight": 1},
    }
    group = podgroup({"cpu": "3", "memory": "3Gi"}, queue="small")
    said = event(
        "PodGroup",
        "mnist",
        "Unschedulable",
        "queue resource quota insufficient: insufficient cpu",
        type_="Normal",
    )
    found = run(tfjob(workers=3), events=[said], podgroups=[group], queues={"small": queue})
    assert found == [
        Problem(
            "PodGroup",
            f"{NS}/mnist",
            "QueueCapability",
            "the PodGroup needs 3 cpu (minResources) but queue small may use at most 2 "
            "(spec.capability); Volcano says: queue resource quota insufficient: insufficient cpu",
            True,
        )
    ]
    roomy = copy.deepcopy(queue)
    roomy["spec"]["capability"]["cpu"] = "16"
    assert run(tfjob(workers=3), podgroups=[group], queues={"small": roomy}) == []
    # a PodGroup of another job is not this job's
    other = copy.deepcopy(group)
    other["metadata"]["ownerReferences"][0]["uid"] = "another"
    assert run(tfjob(workers=3), podgroups=[other], queues={"small": queue}) == []


def test_fatal_problems_come_first() -> None:
    found = run(
        tfjob(chief=True),
        [
            pod("worker", 1, waiting=("CrashLoopBackOff", CRASH.format("worker-1"))),
            pod("chief", 0, waiting=("ImagePullBackOff", "Back-off pulling image")),
        ],
    )
    assert [(p.reason, p.fatal) for p in found] == [
        ("ImagePullBackOff", True),
        ("CrashLoopBackOff", False),
    ]


def test_pod_requests_count_as_the_scheduler_counts() -> None:
    spec = {
        "initContainers": [container(requests={"cpu": "4"}), container(limits={"memory": "1Gi"})],
        "containers": [
            container(requests={"cpu": "500m"}, limits={"cpu": "1", "nvidia.com/gpu": "2"}),
            container(requests={"cpu": "1500m", "memory": "512Mi"}),
        ],
        "overhead": {"cpu": "250m"},
    }
    assert diagnose.pod_requests(spec) == {
        "cpu": Fraction(4) + Fraction(1, 4),  # the init container's 4 beats 0.5 + 1.5
        "nvidia.com/gpu": Fraction(2),  # the limit stands in for the missing request
        "memory": Fraction(2**30),  # the init container's 1Gi beats 512Mi
    }
    assert CLUSTER.total["nvidia.com/gpu"] == 8 and CLUSTER.largest["nvidia.com/gpu"] == 4
    assert CLUSTER.nodes == 4


def test_a_volcano_job_is_read_by_its_tasks() -> None:
    job = {
        "apiVersion": "batch.volcano.sh/v1alpha1",
        "kind": "Job",
        "metadata": {"name": "mnist", "namespace": NS, "uid": UID},
        "spec": {
            "tasks": [
                {"name": "chief", "replicas": 1, "template": {"spec": {"containers": []}}},
                {"name": "worker", "replicas": 2, "template": {"spec": {"containers": []}}},
            ]
        },
    }

    def volcano_pod(task: str, index: int) -> dict[str, Any]:
        made = pod(task, index, waiting=("CrashLoopBackOff", "back-off"))
        made["metadata"]["labels"] = {"volcano.sh/job-name": "mnist"}
        made["metadata"]["annotations"] = {
            "volcano.sh/task-spec": task,
            "volcano.sh/task-index": str(index),
        }
        return made

    # Volcano's job controller reports a pod the server rejects as FailedCreate on the Job
    rejected = (
        'Error creating pods: [pods "mnist-worker-0" is invalid: '
        'spec.containers[0].volumeMounts[0].name: Not found: "ckpt"]'
    )
    said = event("Job", "mnist", "FailedCreate", rejected)
    assert run(job, events=[said]) == [
        Problem("Job", f"{NS}/mnist", "FailedCreate", rejected, True)
    ]
    found = run(job, [volcano_pod("chief", 0), volcano_pod("worker", 0)])
    assert [(p.name, p.fatal) for p in found] == [
        (f"{NS}/mnist-chief-0", True),
        (f"{NS}/mnist-worker-0", False),
    ]
    assert [(t, n) for t, n, _ in diagnose.job_templates(job)] == [("chief", 1), ("worker", 2)]


def test_as_dict_names_the_object() -> None:
    problem = Problem("Pod", f"{NS}/mnist-worker-0", "ErrImagePull", "not found", True)
    assert problem.as_dict() == {
        "object": f"Pod {NS}/mnist-worker-0",
        "kind": "Pod",
        "name": f"{NS}/mnist-worker-0",
        "reason": "ErrImagePull",
        "message": "not found",
        "fatal": True,
    }


def assigned(name: str, node_name: str, uid: str) -> dict[str, Any]:
    return event(
        "Pod",
        name,
        "Scheduled",
        f"Successfully assigned {NS}/{name} to {node_name}",
        60,
        uid,
        "Normal",
    )


def test_a_pod_lost_with_a_deleted_node_is_named_with_its_replica() -> None:
    now = pod("worker", 1)
    now["spec"] = {"nodeName": "gpu-0"}
    events = [
        assigned("mnist-worker-1", "gpu-9", "uid-old"),  # the earlier pod, on a node now gone
        assigned("mnist-worker-1", "gpu-0", "uid-mnist-worker-1"),  # the pod of now
        assigned("mnist-worker-0", "gpu-1", "uid-old-0"),  # an earlier pod on a node still there
    ]
    calls: list[int] = []

    def read() -> Capacity:
        calls.append(1)
        return CLUSTER

    found = run(tfjob(workers=2), [pod("worker", 0), now], events, cluster=read)
    assert calls == [1]
    assert [p.as_dict() for p in found] == [
        {
            "object": f"Pod {NS}/mnist-worker-1",
            "kind": "Pod",
            "name": f"{NS}/mnist-worker-1",
            "reason": "NodeDeleted",
            "message": f"replica Worker 1: its pod {NS}/mnist-worker-1 (uid uid-old) was lost "
            "with node gpu-9, which no longer exists (the scheduler had assigned the pod to it); "
            "the pod now is uid uid-mnist-worker-1 on node gpu-0",
            "fatal": False,
        }
    ]
    # the job failed and its lost pod was not made again
    gone = run(tfjob(workers=2), [pod("worker", 0)], events[:1], cluster=CLUSTER)
    assert [(p.reason, p.message.endswith("no pod of that name exists now")) for p in gone] == [
        ("NodeDeleted", True)
    ]
    # A succeeded job whose pods were cleaned up, on nodes scaled away since: nothing was lost.
    done = tfjob(workers=2)
    done["status"]["conditions"].append({"type": "Succeeded", "status": "True"})
    assert run(done, [], events[:1], cluster=CLUSTER) == []
    # without earlier pods the nodes are not read
    assert run(tfjob(workers=2), [now], events[1:2], cluster=read) == [] and calls == [1]


def test_earlier_pods_are_found_from_the_events_not_by_counting_replicas() -> None:
    """The server takes replicas up to 2^31 - 1: the earlier pods are looked up by the names
    the events carry (the count only bounds the index), not by making every pod's name."""
    events = [
        assigned("mnist-worker-2147483646", "gpu-9", "uid-last"),  # the highest index
        assigned("mnist-worker-01", "gpu-9", "uid-zero"),  # no index the operator writes
        assigned("mnist-worker-2147483647", "gpu-9", "uid-over"),  # past the count
        assigned("mnist-worker-" + "9" * 30, "gpu-9", "uid-long"),
    ]
    found = run(tfjob(workers=2**31 - 1), [], events, cluster=CLUSTER)
    assert [(p.reason, p.name) for p in found] == [("NodeDeleted", f"{NS}/mnist-worker-2147483646")]
    assert found[0].message.startswith("replica Worker 2147483646: its pod")


def test_a_disruption_condition_is_reported_not_fatal() -> None:
    doomed = pod("worker", 0)
    doomed["spec"] = {"nodeName": "gpu-9"}
    doomed["status"] = {
        "phase": "Failed",
        "conditions": [
            {
                "type": "DisruptionTarget",
                "status": "True",
                "reason": "DeletionByPodGC",
                "message": "PodGC: node no longer exists",
            }
        ],
    }
    assert [p.line() for p in run(tfjob(workers=1), [doomed])] == [
        f"Pod {NS}/mnist-worker-0: DeletionByPodGC: replica worker 0 on node gpu-9: "
        "PodGC: node no longer exists"
    ]


def test_a_gang_still_forming_waits_past_the_grace_and_a_formed_one_does_not() -> None:
    """Volcano calls a gang's pods Unschedulable ("pod group is not ready") while the operator
    is still creating the rest of them: minutes for a 1,000-worker job. Not fatal until every
    pod the PodGroup wants exists; then the grace applies as to any pod."""
    says = "pod group is not ready, 3 minAvailable, 2 Pending; Pending: 2 Unschedulable"
    group = podgroup({"cpu": "3"})  # minMember 3, of a 3-worker job
    two = [pod(index=i, unschedulable=(300, says)) for i in range(2)]
    forming = run(tfjob(workers=3), two, podgroups=[group], cluster=CLUSTER)
    assert [(p.reason, p.fatal) for p in forming] == [("Unschedulable", False)] * 2
    assert "(the gang is forming: 2 of its 3 pods exist)" in forming[0].message
    three = [*two, pod(index=2, unschedulable=(300, says))]
    formed = run(tfjob(workers=3), three, podgroups=[group], cluster=CLUSTER)
    assert [(p.reason, p.fatal) for p in formed] == [("Unschedulable", True)] * 3
    # The grace counts from the gang's last pod: the conditions date from its first ones.
    for index, created in enumerate((300, 200, 10)):
        three[index]["metadata"]["creationTimestamp"] = at(created)
    just = run(tfjob(workers=3), three, podgroups=[group], cluster=CLUSTER)
    assert [(p.reason, p.fatal) for p in just] == [("Unschedulable", False)] * 3
    assert "(for 10s of the 60s grace)" in just[0].message
    three[2]["metadata"]["creationTimestamp"] = at(61)
    late = run(tfjob(workers=3), three, podgroups=[group], cluster=CLUSTER)
    assert [p.fatal for p in late] == [True] * 3
    # A PodGroup wanting more pods than the job has can never form: the grace applies.
    group["spec"]["minMember"] = 5
    never = run(tfjob(workers=3), three, podgroups=[group], cluster=CLUSTER)
    assert [p.fatal for p in never if p.reason == "Unschedulable"] == [True] * 3
    # Another job's PodGroup says nothing about this one.
    group["metadata"]["ownerReferences"][0]["uid"] = "another"
    group["spec"]["minMember"] = 3
    alone = run(tfjob(workers=3), two, podgroups=[group], cluster=CLUSTER)
    assert [p.fatal for p in alone] == [True, True]
