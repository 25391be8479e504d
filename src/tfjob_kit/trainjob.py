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
from tfjob_kit.podcheck import names

TRAINER_GROUP = "trainer.kubeflow.org"
ANCESTOR_LABEL = "trainer.kubeflow.org/trainjob-ancestor-step"
# The trainer's replicated job and container, as plainML finds them.
NODE = "node"
COMPLETION_INDEX_ANNOTATION = "batch.kubernetes.io/job-completion-index"
# JobSet's webhook: a Job's name <jobset>-<replicated job>-<job index>, and a pod's name, that and
# -<pod index> plus a five-letter suffix, must each be a DNS-1035 label.
POD_SUFFIX = "-abcde"
JOBSET_POD_NAME_TOO_LONG = (
    "JobSet name is too long, pod names generated for this JobSet will exceed 63 characters"
)
JOBSET_JOB_NAME_TOO_LONG = (
    "JobSet name is too long, job names generated for this JobSet will exceed 63 characters"
)
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
    """One pod of the TrainJob: where it runs in the JobSet, its address, the environment of each
    container and the pod object as the Job controller creates it (``pod``: its name ends in
    ``xxxxx`` where the server generates five characters)."""

    replicated_job: str
    job_index: int
    index: int
    hostname: str
    subdomain: str
    # container name -> its resolved environment
    env: dict[str, dict[str, str]] = field(default_factory=dict)
    pod: dict[str, Any] = field(default_factory=dict)
    trainer: bool = False  # a pod of the replicated job Trainer fills from spec.trainer

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
    jobs. ``runtimePatches`` are not applied."""
    name = str(as_dict(trainjob.get("metadata")).get("name", ""))
    trainer = as_dict(as_dict(trainjob.get("spec")).get("trainer"))
    runtime_spec = as_dict(runtime.get("spec"))
    jobset = as_dict(as_dict(runtime_spec.get("template")).get("spec"))
    subdomain = str(as_dict(jobset.get("network")).get("subdomain") or name)
    ml_policy = runtime_spec.get("mlPolicy")
    nodes = as_int(trainer.get("numNodes"), as_int(as_dict(ml_policy).get("numNodes"), 1))
    found: list[PodPlan] = []
    for rjob in as_list(jobset.get("replicatedJobs")):
        rjob = as_dict(rjob)
        template = as_dict(rjob.get("template"))
        is_trainer = (
            as_dict(as_dict(template.get("metadata")).get("labels")).get(ANCESTOR_LABEL)
            == "trainer"
        )
        job_spec = as_dict(template.get("spec"))
        pod_template = as_dict(job_spec.get("template"))
        pod_spec = as_dict(pod_template.get("spec"))
        if is_trainer:
            pod_spec = _fill_trainer(pod_spec, trainer, resources=ml_policy is not None)
        count = (
            nodes
            if is_trainer
            else as_int(job_spec.get("completions"), as_int(job_spec.get("parallelism"), 1))
        )
        # Trainer runs every replicated job it fills with one Job (replicas is set to 1).
        for job_index in range(1 if is_trainer else as_int(rjob.get("replicas"), 1)):
            job = f"{name}-{rjob.get('name')}-{job_index}"
            for index in range(count):
                pod = _pod(trainjob, pod_template, pod_spec, job, index, subdomain)
                plan = PodPlan(
                    str(rjob.get("name")),
                    job_index,
                    index,
                    pod["spec"]["hostname"],
                    subdomain,
                    pod=pod,
                    trainer=is_trainer,
                )
                for container in as_list(pod["spec"].get("containers")):
                    container = as_dict(container)
                    plan.env[str(container.get("name"))] = resolve_env(
                        as_list(container.get("env")), pod["metadata"]
                    )
                found.append(plan)
    return found


def _fill_trainer(
    pod_spec: dict[str, Any], trainer: dict[str, Any], *, resources: bool
) -> dict[str, Any]:
    """The trainer's pod spec with the TrainJob's ``spec.trainer`` in its ``node`` container:
    image, command and args replace the runtime's, env is upserted, and (with an mlPolicy)
    resourcesPerNode is merged over the runtime's resources, key by key."""
    containers = []
    for container in as_list(pod_spec.get("containers")):
        container = dict(as_dict(container))
        if container.get("name") == NODE:
            for key in ("image", "command", "args"):
                if trainer.get(key) is not None:
                    container[key] = trainer[key]
            if trainer.get("env"):
                container["env"] = _upsert(as_list(container.get("env")), as_list(trainer["env"]))
            per_node = trainer.get("resourcesPerNode")
            if resources and isinstance(per_node, dict):
                container["resources"] = _merge_resources(
                    as_dict(container.get("resources")), per_node
                )
        containers.append(container)
    return {**pod_spec, "containers": containers}


def _merge_resources(base: dict[str, Any], override: dict[str, Any]) -> dict[str, Any]:
    merged = dict(base)
    for key, value in override.items():
        if key in ("limits", "requests") and isinstance(value, dict):
            merged[key] = {**as_dict(base.get(key)), **value}
        else:
            merged[key] = value
    return merged


def _pod(
    trainjob: dict[str, Any],
    pod_template: dict[str, Any],
    pod_spec: dict[str, Any],
    job: str,
    index: int,
    subdomain: str,
) -> dict[str, Any]:
    """The pod the Job controller creates for completion ``index`` of ``job`` (an Indexed Job of
    JobSet: hostname ``<job>-<index>``, the JobSet's subdomain)."""
    meta = as_dict(trainjob.get("metadata"))
    template_meta = as_dict(pod_template.get("metadata"))
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": f"{job}-{index}-xxxxx",
            "namespace": meta.get("namespace") or "default",
            "labels": {
                **as_dict(template_meta.get("labels")),
                "jobset.sigs.k8s.io/jobset-name": str(meta.get("name", "")),
                "batch.kubernetes.io/job-name": job,
                "batch.kubernetes.io/job-completion-index": str(index),
            },
            "annotations": {
                **as_dict(template_meta.get("annotations")),
                COMPLETION_INDEX_ANNOTATION: str(index),
            },
        },
        "spec": {
            **pod_spec,
            "hostname": pod_spec.get("hostname") or f"{job}-{index}",
            "subdomain": subdomain,
        },
    }


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


def longest_names(plans: Iterable[PodPlan]) -> dict[str, tuple[str, str]]:
    """Per replicated job, the longest Job and pod names JobSet's webhook checks: its last job
    index, and its last pod index followed by :data:`POD_SUFFIX`."""
    found: dict[str, tuple[str, str]] = {}
    for plan in plans:
        job = plan.hostname[: -len(f"-{plan.index}")]
        pod = plan.hostname + POD_SUFFIX
        before = found.get(plan.replicated_job, ("", ""))
        found[plan.replicated_job] = (
            job if len(job) >= len(before[0]) else before[0],  # the last of the longest
            pod if len(pod) >= len(before[1]) else before[1],
        )
    return found


def jobset_name_errors(plans: Iterable[PodPlan]) -> list[str]:
    """What JobSet's webhook says of the names the TrainJob's JobSet would give its Jobs and pods
    (``validateJobSetCreate``): its messages, each with the name it is about."""
    errors: list[str] = []
    for job, pod in longest_names(plans).values():
        for name, too_long in ((job, JOBSET_JOB_NAME_TOO_LONG), (pod, JOBSET_POD_NAME_TOO_LONG)):
            for message in names.is_dns1035_label(name):
                if "must be no more than 63 characters" in message:
                    message = too_long
                errors.append(f"{name!r}: {message}")
    return list(dict.fromkeys(errors))
