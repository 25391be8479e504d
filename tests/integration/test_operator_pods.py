"""operator_objects against the real training-operator: the pods it creates from real TFJobs
carry exactly the metadata the model predicts, and every spec field the model sets; its headless
Services are the model's (operator_services), their ports as a set (the operator takes them from
a Go map, in random order).

The local cluster's operator runs with ``--gang-scheduler-name=volcano``, so the pods are the
gang ones (schedulerName and PodGroup annotations); the PodGroup is compared too. The server
adds its own defaults to the spec (protocols, dnsPolicy, the ServiceAccount volume...): the
model's spec must be contained in the created pod's, with the env and ports of each container
equal, as lists, to the created ones.
"""

from __future__ import annotations

import json
import time
from typing import Any

from tfjob_kit import model, operator_objects
from tfjob_kit.cluster import rendezvous

from ._cluster import Cluster

IMAGE = "tensorflow/tensorflow:2.15.0"
RUN_DURATION = "tfjob-kit.dev/run-duration"


def _container(name: str = "tensorflow", **extra: Any) -> dict[str, Any]:
    return {"name": name, "image": IMAGE, **extra}


def _replica(count: int, *containers: dict[str, Any], **extra: Any) -> dict[str, Any]:
    template: dict[str, Any] = {"spec": {"containers": list(containers or [_container()])}}
    template.update(extra.pop("template", {}))
    return {"replicas": count, "template": template, **extra}


# A hand-set TF_CONFIG (rule tf-config-set): the operator appends its own after it, and the
# last of two env entries of one name is the one the process gets.
HAND_SET_ENV = [{"name": "A", "value": "1"}, {"name": "TF_CONFIG", "value": '{"hand": "set"}'}]

JOBS: list[dict[str, Any]] = [
    {  # chief, PS and workers; template labels, annotations, finalizers, a custom port
        "metadata": {"name": "mix", "annotations": {"team": "ml"}},
        "spec": {
            "tfReplicaSpecs": {
                "Chief": _replica(1, restartPolicy="ExitCode"),
                "PS": _replica(
                    1,
                    _container(
                        ports=[
                            {"name": "tfjob-port", "containerPort": 3333},
                            # A UDP port: the Service's port is TCP (the operator sets none).
                            {"name": "stats", "containerPort": 8125, "protocol": "UDP"},
                        ]
                    ),
                    restartPolicy="OnFailure",
                ),
                "Worker": _replica(
                    2,
                    _container(env=HAND_SET_ENV),
                    template={
                        "metadata": {
                            "name": "ignored",
                            "labels": {"app": "mix", "training.kubeflow.org/replica-index": "9"},
                            "annotations": {"note": "x"},
                        },
                        "spec": {
                            "restartPolicy": "Always",
                            "containers": [_container(env=HAND_SET_ENV)],
                        },
                    },
                ),
            }
        },
    },
    {  # one pod: no TF_CONFIG (the webhook requires a container named tensorflow)
        "metadata": {"name": "single"},
        "spec": {"tfReplicaSpecs": {"Worker": _replica(1, _container("main"), _container())}},
    },
    {  # lower-case keys, sparse TF_CONFIG, tensorflow not the first container, own scheduler
        "metadata": {"name": "sparse", "labels": {"job": "label"}},
        "spec": {
            "enableDynamicWorker": True,
            "tfReplicaSpecs": {
                "ps": _replica(1),
                "worker": _replica(
                    2,
                    _container("sidecar", command=["sleep", "1d"]),
                    _container(),
                    template={
                        "spec": {
                            "schedulerName": "volcano",
                            "containers": [
                                _container("sidecar", command=["sleep", "1d"]),
                                _container(),
                            ],
                        }
                    },
                ),
                "Evaluator": _replica(1),
            },
        },
    },
]


def _job(body: dict[str, Any], namespace: str) -> dict[str, Any]:
    job = {"apiVersion": model.API_VERSION, "kind": model.KIND, **json.loads(json.dumps(body))}
    job["metadata"]["namespace"] = namespace
    job["spec"]["runPolicy"] = {"cleanPodPolicy": "None"}
    # The jobs run until the namespace goes: a finished job's PodGroup is deleted by the operator,
    # and the local cluster's pods finish seconds after all of a job's pods run.
    for spec in job["spec"]["tfReplicaSpecs"].values():
        metadata = spec["template"].setdefault("metadata", {})
        metadata.setdefault("annotations", {})[RUN_DURATION] = "1h"
    return job


def _contained(expected: Any, actual: Any, where: str) -> list[str]:
    """Where `expected` is not contained in `actual`: dict keys recursively, lists item by item
    with the same length, anything else equal."""
    if isinstance(expected, dict):
        if not isinstance(actual, dict):
            return [f"{where}: {actual!r} is not an object"]
        return [
            problem
            for key, value in expected.items()
            for problem in _contained(value, actual.get(key), f"{where}.{key}")
        ]
    if isinstance(expected, list):
        if not isinstance(actual, list) or len(actual) != len(expected):
            return [f"{where}: {actual!r} != {expected!r}"]
        return [
            problem
            for index, (e, a) in enumerate(zip(expected, actual, strict=True))
            for problem in _contained(e, a, f"{where}[{index}]")
        ]
    return [] if expected == actual else [f"{where}: {actual!r} != {expected!r}"]


def _wait_pods(cluster: Cluster, namespace: str, count: int) -> list[dict[str, Any]]:
    deadline = time.monotonic() + 90
    found: list[dict[str, Any]] = []
    while time.monotonic() < deadline:
        found = cluster.items("pods", "-n", namespace)
        if len(found) >= count:
            return found
        time.sleep(1)
    raise AssertionError(
        f"{len(found)} of {count} pods after 90 s\n{cluster.diagnostics(namespace)}"
    )


def _service_problems(
    cluster: Cluster, namespace: str, stored: list[dict[str, Any]]
) -> tuple[set[str], list[str]]:
    """The names of the Services the model predicts, and where the real ones differ."""
    predicted = [
        service
        for job in stored
        for _, service in operator_objects.operator_services(job, one_per_type=False)
    ]
    deadline = time.monotonic() + 60
    while True:
        real = {s["metadata"]["name"]: s for s in cluster.items("services", "-n", namespace)}
        if len(real) >= len(predicted) or time.monotonic() > deadline:
            break
        time.sleep(1)
    problems = []
    for service in predicted:
        name = service["metadata"]["name"]
        found = real.get(name)
        if found is None:
            problems.append(f"Service {name}: not created")
            continue
        for key in ("labels", "ownerReferences"):
            if service["metadata"][key] != found["metadata"].get(key):
                problems.append(f"Service {name}.metadata.{key}: {found['metadata'].get(key)}")
        for key in ("clusterIP", "selector"):
            if service["spec"][key] != found["spec"].get(key):
                problems.append(f"Service {name}.spec.{key}: {found['spec'].get(key)}")
        ports = {(p.get("name", ""), p["port"], "TCP") for p in service["spec"]["ports"]}
        real_ports = {(p.get("name", ""), p["port"], p["protocol"]) for p in found["spec"]["ports"]}
        if ports != real_ports:
            problems.append(f"Service {name}.spec.ports: {real_ports} != {ports}")
    return {s["metadata"]["name"] for s in predicted} ^ set(real), problems


def test_the_operator_creates_the_pods_the_model_predicts(cluster: Cluster, namespace: str) -> None:
    jobs = [_job(body, namespace) for body in JOBS]
    cluster.kubectl(
        "create", "-f", "-", stdin=json.dumps({"apiVersion": "v1", "kind": "List", "items": jobs})
    )
    expected_count = sum(r.count for job in jobs for r in model.replicas(job))
    created = {p["metadata"]["name"]: p for p in _wait_pods(cluster, namespace, expected_count)}
    stored = {j["metadata"]["name"]: j for j in cluster.items("tfjobs", "-n", namespace)}
    problems: list[str] = []
    predicted_names = set()
    for job in jobs:
        real_job = stored[job["metadata"]["name"]]
        for _replica, pod in operator_objects.operator_pods(
            real_job, gang_scheduler=operator_objects.VOLCANO, one_per_type=False
        ):
            name = pod["metadata"]["name"]
            predicted_names.add(name)
            real = created.get(name)
            if real is None:
                problems.append(f"{name}: not created")
                continue
            meta, real_meta = pod["metadata"], dict(real["metadata"])
            # The local cluster's rendezvous stamps running pods (not the operator's doing).
            real_meta["annotations"] = {
                k: v
                for k, v in real_meta.get("annotations", {}).items()
                if k != rendezvous.PEERS_ANNOTATION
            }
            for key in ("namespace", "labels", "annotations", "finalizers", "ownerReferences"):
                if meta.get(key) != real_meta.get(key):
                    problems.append(
                        f"{name}.metadata.{key}: {real_meta.get(key)} != {meta.get(key)}"
                    )
            problems += _contained(pod["spec"], real["spec"], f"{name}.spec")
            for index, container in enumerate(real["spec"]["containers"]):
                ours = pod["spec"]["containers"][index]
                for key in ("env", "ports"):
                    names = [(e.get("name"), e.get("value")) for e in container.get(key, [])]
                    if key == "ports":
                        names = [
                            (p.get("name"), p["containerPort"]) for p in container.get(key, [])
                        ]
                    mine = [
                        (e.get("name"), e.get("value" if key == "env" else "containerPort"))
                        for e in ours.get(key, [])
                    ]
                    if names != mine:
                        problems.append(f"{name}.spec.containers[{index}].{key}: {names} != {mine}")
        group = operator_objects.pod_group(real_job)
        assert group is not None
        real_group = cluster.get(
            "podgroups.scheduling.volcano.sh", "-n", namespace, group["metadata"]["name"]
        )
        for key in ("annotations", "ownerReferences"):
            if group["metadata"].get(key) != real_group["metadata"].get(key):
                problems.append(f"PodGroup {key}: {real_group['metadata'].get(key)}")
        problems += _contained(group["spec"], real_group["spec"], "PodGroup.spec")
    assert predicted_names == set(created), (predicted_names, set(created))
    unmatched, service_problems = _service_problems(cluster, namespace, list(stored.values()))
    assert not unmatched, f"Services predicted or created, not both: {unmatched}"
    assert not problems + service_problems, "\n".join(problems + service_problems)
    # What tf-config-set says: the hand-set TF_CONFIG stays, before the operator's.
    worker = created[f"{jobs[0]['metadata']['name']}-worker-0"]["spec"]["containers"][0]["env"]
    values = [e["value"] for e in worker if e["name"] == "TF_CONFIG"]
    assert len(values) == 2 and values[0] == HAND_SET_ENV[1]["value"]
    assert json.loads(values[1])["task"] == {"type": "worker", "index": 0}
