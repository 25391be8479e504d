"""What Kubeflow Trainer v2 (v2.3.0) and JobSet create for a TrainJob, computed offline: each pod's
stable address and the environment its containers get, ``$(VAR)`` references resolved as the
kubelet resolves them.

The TrainJob's runtime is found among the documents given (a TrainingRuntime of its namespace, or a
ClusterTrainingRuntime). JobSet makes one Job per replica of each replicated job, named
``<trainjob>-<replicated job>-<job index>``, whose pods have the hostname
``<job name>-<completion index>`` in the subdomain ``<trainjob>`` (JobSet's headless Service, unless
``network.subdomain`` names another). Trainer's ``plainML`` (a runtime without a framework policy)
sets the pod count of the replicated job labelled as the trainer to the TrainJob's ``numNodes`` and
upserts ``spec.trainer.env`` into its container named ``node``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from tfjob_kit.model import as_dict, as_int, as_list

TRAINER_GROUP = "trainer.kubeflow.org"
ANCESTOR_LABEL = "trainer.kubeflow.org/trainjob-ancestor-step"
# The trainer's replicated job and container, as plainML finds them.
NODE = "node"
COMPLETION_INDEX_ANNOTATION = "batch.kubernetes.io/job-completion-index"
_REFERENCE = re.compile(r"\$\$|\$\(([A-Za-z_][A-Za-z0-9_.-]*)\)")
_ANNOTATION = re.compile(r"metadata\.annotations\['(.+)'\]")
_LABEL = re.compile(r"metadata\.labels\['(.+)'\]")


def expand(value: str, known: dict[str, str]) -> str:
    """Kubernetes' expansion of an env value: ``$(VAR)`` of a variable defined earlier becomes
    its value, ``$$`` a ``$``; any other reference stays as written."""

    def one(match: re.Match[str]) -> str:
        if match.group(0) == "$$":
            return "$"
        return known.get(match.group(1), match.group(0))

    return _REFERENCE.sub(one, value)


def resolve_env(env: Iterable[Any], metadata: dict[str, Any]) -> dict[str, str]:
    """A container's environment as the kubelet builds it from its ``env`` list: values expanded
    in order, downward-API labels, annotations, name and namespace read from the pod's
    ``metadata``. Other sources (secrets, config maps, resources) are left out."""
    known: dict[str, str] = {}
    for item in env:
        item = as_dict(item)
        name = item.get("name")
        if not isinstance(name, str):
            continue
        if isinstance(item.get("value"), str):
            known[name] = expand(item["value"], known)
            continue
        path = as_dict(as_dict(item.get("valueFrom")).get("fieldRef")).get("fieldPath", "")
        value = _field(str(path), metadata)
        if value is not None:
            known[name] = value
    return known


def _field(path: str, metadata: dict[str, Any]) -> str | None:
    for pattern, key in ((_ANNOTATION, "annotations"), (_LABEL, "labels")):
        match = pattern.fullmatch(path)
        if match:
            return str(as_dict(metadata.get(key)).get(match.group(1), ""))
    if path in ("metadata.name", "metadata.namespace"):
        return str(metadata.get(path.split(".")[1], ""))
    return None


@dataclass
class PodPlan:
    """One pod of the TrainJob: where it runs in the JobSet, its address and environment."""

    replicated_job: str
    job_index: int
    index: int
    hostname: str
    subdomain: str
    # container name -> its resolved environment
    env: dict[str, dict[str, str]] = field(default_factory=dict)

    @property
    def address(self) -> str:
        return f"{self.hostname}.{self.subdomain}"


def find_runtime(trainjob: dict[str, Any], documents: Iterable[Any]) -> dict[str, Any] | None:
    """The runtime ``spec.runtimeRef`` names, among ``documents``: a TrainingRuntime of the
    TrainJob's namespace, or a ClusterTrainingRuntime (the default kind)."""
    ref = as_dict(as_dict(trainjob.get("spec")).get("runtimeRef"))
    kind = ref.get("kind") or "ClusterTrainingRuntime"
    namespace = as_dict(trainjob.get("metadata")).get("namespace") or "default"
    for doc in documents:
        doc = as_dict(doc)
        meta = as_dict(doc.get("metadata"))
        if doc.get("kind") != kind or meta.get("name") != ref.get("name"):
            continue
        if kind == "TrainingRuntime" and (meta.get("namespace") or "default") != namespace:
            continue
        return doc
    return None


def pods(trainjob: dict[str, Any], runtime: dict[str, Any]) -> list[PodPlan]:
    """Every pod of ``trainjob`` on ``runtime``, in the order JobSet lists its replicated
    jobs."""
    name = str(as_dict(trainjob.get("metadata")).get("name", ""))
    spec = as_dict(trainjob.get("spec"))
    trainer = as_dict(spec.get("trainer"))
    runtime_spec = as_dict(runtime.get("spec"))
    jobset = as_dict(as_dict(runtime_spec.get("template")).get("spec"))
    subdomain = as_dict(jobset.get("network")).get("subdomain") or name
    nodes = as_int(
        trainer.get("numNodes"), as_int(as_dict(runtime_spec.get("mlPolicy")).get("numNodes"), 1)
    )
    found: list[PodPlan] = []
    for rjob in as_list(jobset.get("replicatedJobs")):
        rjob = as_dict(rjob)
        template = as_dict(rjob.get("template"))
        is_trainer = (
            as_dict(as_dict(template.get("metadata")).get("labels")).get(ANCESTOR_LABEL)
            == "trainer"
        )
        job_spec = as_dict(template.get("spec"))
        count = (
            nodes
            if is_trainer
            else as_int(job_spec.get("completions"), as_int(job_spec.get("parallelism"), 1))
        )
        pod_template = as_dict(job_spec.get("template"))
        for job_index in range(as_int(rjob.get("replicas"), 1)):
            for index in range(count):
                hostname = f"{name}-{rjob.get('name')}-{job_index}-{index}"
                metadata = {
                    **as_dict(pod_template.get("metadata")),
                    "annotations": {
                        **as_dict(as_dict(pod_template.get("metadata")).get("annotations")),
                        COMPLETION_INDEX_ANNOTATION: str(index),
                    },
                }
                plan = PodPlan(str(rjob.get("name")), job_index, index, hostname, str(subdomain))
                for container in as_list(as_dict(pod_template.get("spec")).get("containers")):
                    container = as_dict(container)
                    env = as_list(container.get("env"))
                    if is_trainer and container.get("name") == NODE:
                        env = _upsert(env, as_list(trainer.get("env")))
                    plan.env[str(container.get("name"))] = resolve_env(env, metadata)
                found.append(plan)
    return found


def _upsert(env: list[Any], extra: list[Any]) -> list[Any]:
    """plainML's merge: a variable of ``extra`` replaces the one of the same name in place, or
    is appended."""
    merged = list(env)
    names = [as_dict(e).get("name") for e in merged]
    for item in extra:
        name = as_dict(item).get("name")
        if name in names:
            merged[names.index(name)] = item
        else:
            merged.append(item)
            names.append(name)
    return merged
