"""Deterministic generator of realistic TFJob manifests for the benchmarks.

Each job looks like what people submit: PS/Worker or Chief/Worker topologies, GPU workers,
volumes for datasets and checkpoints, env, probes, resources, node selectors and tolerations.
About 4-5 KB of YAML per job.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import yaml

IMAGES = [
    "registry.example.com/ml/tf-dist-mnist:2.15.0",
    "tensorflow/tensorflow:2.15.0-gpu",
    "registry.example.com/research/resnet50-train:1.4.2",
    "registry.example.com/ml/bert-finetune:0.9.1",
]


def _container(rng: random.Random, rtype: str, gpus: int, job: str) -> dict[str, Any]:
    cpu = rng.choice(["1", "2", "4", "500m"])
    memory = rng.choice(["2Gi", "4Gi", "8Gi", "16Gi"])
    limits: dict[str, Any] = {"cpu": cpu, "memory": memory}
    requests: dict[str, Any] = {"cpu": cpu, "memory": memory}
    if gpus:
        limits["nvidia.com/gpu"] = gpus
        requests["nvidia.com/gpu"] = gpus
    return {
        "name": "tensorflow",
        "image": rng.choice(IMAGES),
        "imagePullPolicy": "IfNotPresent",
        "command": ["python", "/opt/train/main.py"],
        "args": [
            f"--batch_size={rng.choice([32, 64, 128, 256])}",
            f"--train_steps={rng.randrange(1000, 100000)}",
            f"--learning_rate={rng.choice(['0.001', '0.01', '0.0005'])}",
            "--model_dir=/mnt/checkpoints/" + job,
            "--data_dir=/mnt/data/imagenet",
        ],
        "env": [
            {"name": "TF_CPP_MIN_LOG_LEVEL", "value": "2"},
            {"name": "NCCL_DEBUG", "value": "WARN"},
            {"name": "JOB_ROLE", "value": rtype.lower()},
            {
                "name": "POD_NAME",
                "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}},
            },
            {
                "name": "WANDB_API_KEY",
                "valueFrom": {"secretKeyRef": {"name": "wandb", "key": "api-key"}},
            },
        ],
        "ports": [{"name": "tfjob-port", "containerPort": 2222, "protocol": "TCP"}],
        "resources": {"limits": limits, "requests": requests},
        "volumeMounts": [
            {"name": "data", "mountPath": "/mnt/data", "readOnly": True},
            {"name": "checkpoints", "mountPath": "/mnt/checkpoints", "subPath": job},
            {"name": "dshm", "mountPath": "/dev/shm"},
        ],
        "readinessProbe": {
            "tcpSocket": {"port": 2222},
            "initialDelaySeconds": 10,
            "periodSeconds": 15,
        },
        "securityContext": {
            "allowPrivilegeEscalation": False,
            "runAsNonRoot": True,
            "runAsUser": 1000,
            "capabilities": {"drop": ["ALL"]},
            "seccompProfile": {"type": "RuntimeDefault"},
        },
    }


def _replica(rng: random.Random, rtype: str, count: int, gpus: int, job: str) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "containers": [_container(rng, rtype, gpus, job)],
        "volumes": [
            {"name": "data", "persistentVolumeClaim": {"claimName": "imagenet", "readOnly": True}},
            {"name": "checkpoints", "persistentVolumeClaim": {"claimName": "tf-checkpoints"}},
            {"name": "dshm", "emptyDir": {"medium": "Memory", "sizeLimit": "1Gi"}},
        ],
    }
    if gpus:
        spec["nodeSelector"] = {"nvidia.com/gpu.present": "true"}
        spec["tolerations"] = [
            {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}
        ]
    return {
        "replicas": count,
        "restartPolicy": rng.choice(["OnFailure", "ExitCode", "Never"]),
        "template": {
            "metadata": {
                "labels": {
                    "app.kubernetes.io/part-of": "training",
                    "team": rng.choice(["vision", "nlp"]),
                },
                "annotations": {"sidecar.istio.io/inject": "false"},
            },
            "spec": spec,
        },
    }


def tfjob(index: int, seed: int = 7) -> dict[str, Any]:
    rng = random.Random(seed * 1_000_003 + index)
    name = f"{rng.choice(['mnist', 'resnet', 'bert', 'wide-deep'])}-{index}"
    gpus = rng.choice([0, 1, 2, 4])
    replicas: dict[str, Any] = {}
    if rng.random() < 0.4:
        replicas["Chief"] = _replica(rng, "Chief", 1, gpus, name)
    replicas["PS"] = _replica(rng, "PS", rng.randint(1, 2), 0, name)
    replicas["Worker"] = _replica(rng, "Worker", rng.randint(2, 8), gpus, name)
    total = sum(r["replicas"] for r in replicas.values())
    return {
        "apiVersion": "kubeflow.org/v1",
        "kind": "TFJob",
        "metadata": {
            "name": name,
            "namespace": rng.choice(["ml-team", "research", "default"]),
            "labels": {"app.kubernetes.io/name": "tfjob", "app.kubernetes.io/instance": name},
        },
        "spec": {
            "runPolicy": {
                "cleanPodPolicy": rng.choice(["None", "Running", "All"]),
                "backoffLimit": rng.randint(0, 5),
                "ttlSecondsAfterFinished": 3600,
                "schedulingPolicy": {"minAvailable": total, "queue": "default"},
            },
            "tfReplicaSpecs": replicas,
        },
    }


def write_corpus(directory: Path, count: int, per_file: int = 100) -> list[Path]:
    """Write count jobs as multi-document YAML files of per_file documents each."""
    directory.mkdir(parents=True, exist_ok=True)
    files = []
    for start in range(0, count, per_file):
        path = directory / f"tfjobs-{start // per_file:04d}.yaml"
        docs = [tfjob(i) for i in range(start, min(start + per_file, count))]
        path.write_text(yaml.safe_dump_all(docs, sort_keys=False))
        files.append(path)
    return files
