"""The wait of tfjob.kit.tfjob tells the truth: it ends within seconds, naming the object and
quoting the server, when a job cannot succeed, and keeps waiting through transient states.

The local cluster has no kubelet. The image-pull and crash-loop cases use kwok stages that
stand in for it (components/kwok/pod-stages.yaml, selected by the pod annotation
``tfjob-kit.dev/kubelet-failure``): they set the container status reasons and messages the v1.34
kubelet sets (ErrImagePull then ImagePullBackOff, InvalidImageName, CrashLoopBackOff). Every
other answer here (the operator's FailedCreatePod event, the scheduler's Unschedulable, Volcano's
PodGroup events) comes from the real component.
"""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path
from typing import Any

from ._ansible import PlayResult, run_tasks
from ._cluster import Cluster
from .test_module_tfjob import tfjob as module_tfjob

IMAGE = "registry.example.com/mnist:1.0"


def tfjob(name: str, namespace: str, workers: int = 1, **options: Any) -> dict[str, Any]:
    """test_module_tfjob's job, one worker unless told."""
    return module_tfjob(name, namespace, workers, **options)


def apply_and_wait(
    cluster: Cluster, tmp_path: Path, job: dict[str, Any], **options: Any
) -> tuple[PlayResult, float]:
    """tfjob.kit.tfjob with wait (timeout 300 s) and the preflight and offline validation off,
    so that the cluster sees the job as it is; then tfjob_info on it. Returns the results and
    the seconds the playbook took."""
    name, namespace = job["metadata"]["name"], job["metadata"]["namespace"]
    started = time.monotonic()
    result = run_tasks(
        tmp_path,
        cluster.kubeconfig,
        [
            {
                "tfjob.kit.tfjob": {
                    "definition": job,
                    "validate": "off",
                    "preflight": False,
                    "wait": True,
                    "wait_timeout": 300,
                    **options,
                }
            },
            {"tfjob.kit.tfjob_info": {"name": name, "namespace": namespace, "events": 0}},
        ],
    )
    return result, time.monotonic() - started


def fatal(result: dict[str, Any]) -> list[tuple[str, str]]:
    return [(p["object"], p["reason"]) for p in result["jobs"][0]["problems"] if p["fatal"]]


def test_an_undefined_volume_mount_fails_with_the_failed_create_pod_reason_in_seconds(
    cluster: Cluster, namespace: str, tmp_path: Path
) -> None:
    job = tfjob(
        "no-volume",
        namespace,
        workers=2,
        container={"volumeMounts": [{"name": "ckpt", "mountPath": "/ckpt"}]},
    )
    result, took = apply_and_wait(cluster, tmp_path, job)
    applied, info = result.results
    print(
        f"\nundefined volumeMount, preflight off: the wait failed after {applied['duration']:.1f}s"
        f" (the task; the whole playbook {took:.1f}s; wait_timeout 300)"
    )
    assert applied["failed"], applied
    reason = 'spec.containers[0].volumeMounts[0].name: Not found: "ckpt"'
    message = applied["msg"]
    assert message.startswith(
        f"TFJob {namespace}/no-volume cannot reach Succeeded (it is Created): "
        f"TFJob {namespace}/no-volume: FailedCreatePod: Error creating: Pod "
    ), message
    assert reason in message and "timed out" not in message
    assert applied["jobs"][0]["action"] == "created"
    assert fatal(applied) == [(f"TFJob {namespace}/no-volume", "FailedCreatePod")]
    # tfjob_info reads the same diagnosis
    assert fatal(info) == fatal(applied)
    assert reason in info["jobs"][0]["problems"][0]["message"]
    assert cluster.items("pods", "-n", namespace) == []


def test_an_image_that_cannot_be_pulled_fails_the_wait(
    cluster: Cluster, namespace: str, tmp_path: Path
) -> None:
    job = tfjob(
        "no-image",
        namespace,
        workers=2,
        annotations={"tfjob-kit.dev/kubelet-failure": "image-pull"},
    )
    result, _ = apply_and_wait(cluster, tmp_path, job)
    applied, info = result.results
    assert applied["failed"], applied
    problems = fatal(applied)
    assert problems and all(r in ("ErrImagePull", "ImagePullBackOff") for _, r in problems)
    assert problems[0][0].startswith(f"Pod {namespace}/no-image-worker-")
    assert f'failed to pull and unpack image "{IMAGE}"' in applied["msg"]
    # tfjob_info, run just after, sees the pull failure (still ErrImagePull, or already backed
    # off: the kubelet's stand-in backs off a second after the first failure)
    seen = fatal(info)
    assert seen and {r for _, r in seen} <= {"ErrImagePull", "ImagePullBackOff"}, seen

    # Once the cluster says every pod backs off, tfjob_info says ImagePullBackOff for each,
    # quoting the pod's container status
    def backed_off() -> list[tuple[str, str, str]]:
        pods = cluster.items("pods", "-n", namespace)
        waiting = [
            (p["metadata"]["name"], s["name"], (s.get("state") or {}).get("waiting") or {})
            for p in pods
            for s in p["status"].get("containerStatuses") or []
        ]
        if {pod for pod, _, _ in waiting} != {p["metadata"]["name"] for p in pods} or any(
            w.get("reason") != "ImagePullBackOff" for _, _, w in waiting
        ):
            return []
        assert len(pods) == 2, [p["metadata"]["name"] for p in pods]
        return [(pod, container, w["message"]) for pod, container, w in waiting]

    statuses = cluster.wait_for("both pods in ImagePullBackOff", backed_off, namespace, 60)
    [later] = run_tasks(
        tmp_path,
        cluster.kubeconfig,
        [{"tfjob.kit.tfjob_info": {"name": "no-image", "namespace": namespace, "events": 0}}],
    ).results
    assert sorted(
        (p["object"], p["reason"], p["message"]) for p in later["jobs"][0]["problems"]
    ) == sorted(
        (f"Pod {namespace}/{pod}", "ImagePullBackOff", f"container {container}: {message}")
        for pod, container, message in statuses
    )
    assert fatal(later) and all(p["fatal"] for p in later["jobs"][0]["problems"])
    assert all(f'Back-off pulling image "{IMAGE}"' in m for _, _, m in statuses)


def test_an_invalid_image_name_fails_the_wait(
    cluster: Cluster, namespace: str, tmp_path: Path
) -> None:
    job = tfjob(
        "bad-image",
        namespace,
        container={"image": "registry.example.com/mnist:1.0:x"},
        annotations={"tfjob-kit.dev/kubelet-failure": "invalid-image"},
    )
    result, _ = apply_and_wait(cluster, tmp_path, job)
    applied = result[0]
    assert applied["failed"], applied
    assert fatal(applied) == [(f"Pod {namespace}/bad-image-worker-0", "InvalidImageName")]
    assert (
        'Failed to apply default image tag "registry.example.com/mnist:1.0:x": couldn\'t parse '
        'image name "registry.example.com/mnist:1.0:x": invalid reference format'
    ) in applied["msg"]


def test_a_crash_loop_of_the_chief_fails_the_wait(
    cluster: Cluster, namespace: str, tmp_path: Path
) -> None:
    job = tfjob(
        "crashes",
        namespace,
        workers=1,
        chief=True,
        chief_annotations={"tfjob-kit.dev/kubelet-failure": "crash-loop"},
    )
    result, _ = apply_and_wait(cluster, tmp_path, job)
    applied = result[0]
    assert applied["failed"], applied
    assert fatal(applied) == [(f"Pod {namespace}/crashes-chief-0", "CrashLoopBackOff")]
    assert (
        f"back-off 10s restarting failed container=tensorflow pod=crashes-chief-0_{namespace}("
    ) in applied["msg"]


def test_a_crash_loop_of_worker_0_without_a_chief_fails_the_wait(
    cluster: Cluster, namespace: str, tmp_path: Path
) -> None:
    job = tfjob(
        "worker-crashes",
        namespace,
        workers=1,
        annotations={"tfjob-kit.dev/kubelet-failure": "crash-loop"},
    )
    result, _ = apply_and_wait(cluster, tmp_path, job)
    applied = result[0]
    assert applied["failed"], applied
    assert fatal(applied) == [(f"Pod {namespace}/worker-crashes-worker-0", "CrashLoopBackOff")]


def test_a_gang_bigger_than_the_cluster_fails_the_wait(
    cluster: Cluster, namespace: str, tmp_path: Path
) -> None:
    nodes = cluster.items("nodes")
    gpus = sum(int(n["status"]["allocatable"].get("nvidia.com/gpu", "0")) for n in nodes)
    per_node = max(int(n["status"]["allocatable"].get("nvidia.com/gpu", "0")) for n in nodes)
    workers = gpus // per_node + 1  # each pod fits a node, all of them do not fit the cluster
    job = tfjob(
        "too-big",
        namespace,
        workers=workers,
        container={"resources": {"limits": {"nvidia.com/gpu": per_node}}},
    )
    result, _ = apply_and_wait(cluster, tmp_path, job)
    applied = result[0]
    print(f"\ngang of {workers}x{per_node} GPUs on {gpus}: failed after {applied['duration']:.1f}s")
    assert applied["failed"], applied
    assert fatal(applied) == [(f"TFJob {namespace}/too-big", "NeverFits")]
    assert (
        f"its {workers} pods request {workers * per_node} nvidia.com/gpu in all, more than the "
        f"{len(nodes)} nodes of the cluster can allocate together ({gpus})"
    ) in applied["msg"]
    # the scheduler's own word, quoted: Volcano's PodGroup event
    assert f"the scheduler says: PodGroup {namespace}/too-big: " in applied["msg"]


def test_a_gang_bigger_than_its_volcano_queue_fails_the_wait(
    cluster: Cluster, namespace: str, tmp_path: Path
) -> None:
    queue = f"small-{namespace}"
    cluster.kubectl(
        "create",
        "-f",
        "-",
        stdin=json.dumps(
            {
                "apiVersion": "scheduling.volcano.sh/v1beta1",
                "kind": "Queue",
                "metadata": {"name": queue},
                "spec": {"weight": 1, "capability": {"cpu": "1", "memory": "4Gi"}},
            }
        ),
    )
    try:
        job = tfjob(
            "over-queue",
            namespace,
            workers=2,
            container={"resources": {"limits": {"cpu": "1", "memory": "1Gi"}}},
            scheduling_policy={"queue": queue, "minAvailable": 2},
        )
        result, _ = apply_and_wait(cluster, tmp_path, job)
    finally:
        cluster.kubectl("delete", "queue", queue, "--ignore-not-found", check=False)
    applied = result[0]
    assert applied["failed"], applied
    assert fatal(applied) == [(f"PodGroup {namespace}/over-queue", "QueueCapability")]
    assert (
        f"the PodGroup needs 2 cpu (minResources) but queue {queue} may use at most 1 "
        "(spec.capability)"
    ) in applied["msg"]


def test_an_unschedulable_pod_fails_after_the_grace_with_the_schedulers_message(
    cluster: Cluster, namespace: str, tmp_path: Path
) -> None:
    job = tfjob("nowhere", namespace, pod_spec={"nodeSelector": {"tfjob-kit.dev/pool": "none"}})
    result, _ = apply_and_wait(cluster, tmp_path, job, unschedulable_grace=5)
    applied = result[0]
    assert applied["failed"], applied
    assert fatal(applied) == [(f"Pod {namespace}/nowhere-worker-0", "Unschedulable")]
    assert "node(s) didn't match Pod's node affinity/selector" in applied["msg"]
    # the grace was waited out (not a speed claim: load only lengthens it); 5 s less 1, as
    # the condition's lastTransitionTime has whole seconds
    assert applied["duration"] >= 5 - 1


def test_pending_while_a_node_joins_does_not_fail_the_wait(
    cluster: Cluster, namespace: str, tmp_path: Path
) -> None:
    """A pod that no node can take yet (as while a node pool scales up) is Unschedulable for a
    while; the wait keeps waiting, and succeeds once a node that fits joins."""
    pool = f"late-{namespace}"
    job = tfjob(
        "waits-for-node", namespace, pod_spec={"nodeSelector": {"tfjob-kit.dev/pool": pool}}
    )
    outcome: dict[str, Any] = {}

    def play() -> None:
        outcome["result"], outcome["took"] = apply_and_wait(
            cluster, tmp_path, job, unschedulable_grace=60
        )

    thread = threading.Thread(target=play)
    thread.start()
    node_name = f"tfjob-kit-{pool}"
    try:

        def unschedulable() -> bool:
            pods = cluster.items("pods", "-n", namespace)
            return any(
                c.get("reason") == "Unschedulable"
                for p in pods
                for c in p.get("status", {}).get("conditions") or []
            )

        cluster.wait_for("the pod to be Unschedulable", unschedulable, namespace, timeout=60)
        time.sleep(5)  # Unschedulable for a while: the wait must not end
        assert thread.is_alive(), outcome
        like = cluster.get("node", "tfjob-kit-cpu-0")
        node: dict[str, Any] = {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {
                "name": node_name,
                "labels": {**like["metadata"]["labels"], "tfjob-kit.dev/pool": pool},
                "annotations": {"kwok.x-k8s.io/node": "fake"},
            },
            "spec": {},
            "status": {
                "allocatable": like["status"]["allocatable"],
                "capacity": like["status"]["capacity"],
            },
        }
        node["metadata"]["labels"]["kubernetes.io/hostname"] = node_name
        cluster.kubectl("create", "-f", "-", stdin=json.dumps(node))
        thread.join(timeout=240)
    finally:
        cluster.kubectl("delete", "node", node_name, "--ignore-not-found", check=False)
    applied = outcome["result"][0]
    assert not applied.get("failed"), applied
    assert applied["jobs"][0]["phase"] == "Succeeded"
