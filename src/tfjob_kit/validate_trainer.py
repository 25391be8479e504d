"""Validation of Kubeflow Trainer v2 objects: TrainJob, TrainingRuntime, ClusterTrainingRuntime.

Each is checked against its schema (generated from the CRDs, :mod:`tfjob_kit.schema`) and its
metadata as the API server validates a custom resource's. A TrainJob is also checked on its
runtime, found in the same input or among the runtimes tfjob-kit ships
(:mod:`tfjob_kit.runtimes`): the pods JobSet creates from the two (:func:`trainjob.pods`) go
through the API server's pod validation (:mod:`tfjob_kit.podcheck`), and a TF_CONFIG in their
environment must name the TrainJob's own pods, each pod itself as its task. What only the server
knows (the CRDs' CEL rules, the webhooks of JobSet and Trainer) is for ``validate --server``.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from typing import Any

from tfjob_kit import kueue, runtimes, schema, trainjob
from tfjob_kit.findings import Finding, Severity, child_path, json_path
from tfjob_kit.model import as_dict, as_list
from tfjob_kit.podcheck import meta as podmeta
from tfjob_kit.podcheck import names
from tfjob_kit.podcheck.field import Path
from tfjob_kit.podcheck.pod import validate_pod
from tfjob_kit.rules.server import METADATA_RULE, POD_RULE, fix_hint, job_meta

TRAINJOB = "TrainJob"
CLUSTER_RUNTIME = "ClusterTrainingRuntime"
RUNTIME_NOT_FOUND = "trainjob-runtime-not-found"
TF_CONFIG_RULE = "trainjob-tf-config"
NAME_RULE = "jobset-rejects-name"
# The container fields Trainer fills from spec.trainer (the pod's name -> the TrainJob's).
_TRAINER_FIELDS = {
    "image": "image",
    "command": "command",
    "args": "args",
    "env": "env",
    "resources": "resourcesPerNode",
}


def is_trainer_object(content: Any) -> bool:
    """A TrainJob or (Cluster)TrainingRuntime of ``trainer.kubeflow.org``."""
    if not isinstance(content, dict) or content.get("kind") not in schema.TRAINER_KINDS:
        return False
    api_version = content.get("apiVersion")
    return isinstance(api_version, str) and api_version.startswith(trainjob.TRAINER_GROUP + "/")


def check_trainer_object(content: dict[str, Any], documents: Iterable[Any]) -> list[Finding]:
    """Findings at default severity for one Trainer object; ``documents``: the input's other
    objects (where a TrainJob's runtime may be)."""
    kind = str(content["kind"])
    found = schema.validate(content, kind)
    found.extend(_metadata(content, kind))
    if found or kind != TRAINJOB:
        return found  # the server refuses the object itself: its pods are never made
    ref = as_dict(as_dict(content.get("spec")).get("runtimeRef"))
    runtime = trainjob.find_runtime(content, documents) or trainjob.find_runtime(
        content, runtimes.shipped()
    )
    if runtime is None:
        shipped = ", ".join(r["metadata"]["name"] for r in runtimes.shipped())
        return [
            Finding(
                RUNTIME_NOT_FOUND,
                Severity.WARNING,
                f"the {ref.get('kind') or CLUSTER_RUNTIME} {ref.get('name')!r} is neither in "
                f"this input nor among the runtimes tfjob-kit ships ({shipped}), so the pods it "
                "makes are not checked; validate it together with its runtime, or fix the name",
                json_path("spec", "runtimeRef", "name"),
            )
        ]
    plans = trainjob.pods(content, runtime)
    name_errors = trainjob.jobset_name_errors(plans)
    found.extend(
        Finding(
            NAME_RULE,
            Severity.ERROR,
            f"JobSet's webhook refuses the JobSet Trainer makes of this TrainJob: {error}; "
            "shorten the TrainJob's name",
            json_path("metadata", "name"),
        )
        for error in name_errors
    )
    found.extend(
        f
        for f in _pods_rejected(content, runtime, plans)
        if not (name_errors and f.path == json_path("metadata", "name"))
    )
    found.extend(
        Finding(TF_CONFIG_RULE, Severity.ERROR, message, path)
        for path, message in _tf_config(content, plans)
    )
    found.extend(_kueue_gang(content, runtime))
    return found


def _kueue_gang(job: dict[str, Any], runtime: dict[str, Any]) -> list[Finding]:
    """A TrainJob queued in Kueue whose runtime also makes a PodGroup for a gang scheduler."""
    queue = kueue.queue_of(job)
    policy = as_dict(as_dict(runtime.get("spec")).get("podGroupPolicy"))
    gangs = [name for name in ("volcano", "coscheduling") if name in policy]
    if not queue or not gangs:
        return []
    meta = as_dict(runtime.get("metadata"))
    drop = (
        f"the podGroupPolicy ({gangs[0]}) of its {runtime.get('kind')} {meta.get('name')!r} "
        "(a runtime without one)"
    )
    message = kueue.double_gang(queue, drop)
    return [Finding(kueue.GANG_RULE, Severity.WARNING, message, json_path("spec", "runtimeRef"))]


def _metadata(content: dict[str, Any], kind: str) -> list[Finding]:
    if not isinstance(content.get("metadata"), dict) and content.get("metadata") is not None:
        return []  # the schema reports a wrong type
    meta = job_meta(content)
    namespaced = kind != CLUSTER_RUNTIME
    if not namespaced:
        meta.pop("namespace", None)
    errors = podmeta.validate_object_meta(
        meta, ("metadata",), name_rule=names.name_is_dns_subdomain, namespaced=namespaced
    )
    return [
        Finding(
            METADATA_RULE,
            Severity.ERROR,
            f"the API server rejects the {kind}: {error.message}; {fix_hint(error)}",
            json_path(*error.path),
        )
        for error in errors
    ]


def _pods_rejected(
    job: dict[str, Any], runtime: dict[str, Any], plans: list[trainjob.PodPlan]
) -> Iterator[Finding]:
    """What the API server says of each pod, once per (path, error) over pods alike."""
    seen: set[tuple[str, str]] = set()
    for plan in plans:
        pod = plan.pod
        for error in validate_pod(pod, namespace=pod["metadata"]["namespace"]):
            path, where = pod_source(job, runtime, plan, error.path)
            if (path, error.body) in seen:
                continue
            seen.add((path, error.body))
            yield Finding(
                POD_RULE,
                Severity.ERROR,
                f"the API server rejects pod {pod['metadata']['name']} (replicated job "
                f"{plan.replicated_job}): {error.message}; {fix_hint(error)} in {where}",
                path,
            )


def pod_source(
    job: dict[str, Any], runtime: dict[str, Any], plan: trainjob.PodPlan, path: Path
) -> tuple[str, str]:
    """(JSON path in the TrainJob, the words for where to fix it) of a pod's field."""
    if path[:2] in (("spec", "hostname"), ("spec", "subdomain")) or path[:1] == ("metadata",):
        return json_path("metadata", "name"), "the TrainJob's name (JobSet builds it in)"
    trainer = as_dict(as_dict(job.get("spec")).get("trainer"))
    if plan.trainer and path[:2] == ("spec", "containers") and len(path) > 3:
        container = as_dict(as_list(plan.pod["spec"].get("containers"))[int(path[2])])
        source = _TRAINER_FIELDS.get(str(path[3]))
        if container.get("name") == trainjob.NODE and source and trainer.get(source) is not None:
            return json_path("spec", "trainer", source), "the TrainJob's spec.trainer"
    meta = as_dict(runtime.get("metadata"))
    return json_path("spec", "runtimeRef", "name"), (
        f"the {runtime.get('kind')} {meta.get('name')!r} (replicated job "
        f"{plan.replicated_job}'s pod template)"
    )


def _tf_config(job: dict[str, Any], plans: list[trainjob.PodPlan]) -> Iterator[tuple[str, str]]:
    """A TF_CONFIG that does not describe the TrainJob's own pods: the first problem found, and
    how many pods have one."""
    tf_pods = {p.address for p in plans if any("TF_CONFIG" in env for env in p.env.values())}
    problems: list[str] = []
    for plan in plans:
        for container, env in plan.env.items():
            if "TF_CONFIG" in env:
                problem = _tf_config_problem(env["TF_CONFIG"], plan, tf_pods)
                if problem is not None:
                    problems.append(f"pod {plan.hostname} (container {container}): {problem}")
    if not problems:
        return
    more = f" (and {len(problems) - 1} more pods)" if len(problems) > 1 else ""
    yield (
        _tf_config_path(job),
        f"{problems[0]}{more}; TF_CONFIG must list the TrainJob's pods as JobSet names them "
        "(`tfjob-kit convert --to trainjob` writes it: convert again after changing the name "
        "or numNodes)",
    )


def _tf_config_problem(text: str, plan: trainjob.PodPlan, tf_pods: set[str]) -> str | None:
    try:
        config = json.loads(text)
    except ValueError:
        return f"TF_CONFIG is not JSON once its variables are expanded: {text[:200]}"
    cluster = as_dict(as_dict(config).get("cluster"))
    listed = {
        str(address).rsplit(":", 1)[0]: (role, index)
        for role, addresses in cluster.items()
        for index, address in enumerate(as_list(addresses))
    }
    strangers = sorted(set(listed) - tf_pods)
    if strangers:
        return f"TF_CONFIG lists {strangers[0]}, which is not a pod of this TrainJob"
    missing = sorted(tf_pods - set(listed))
    if missing:
        return f"TF_CONFIG leaves out the TrainJob's pod {missing[0]}"
    task = as_dict(as_dict(config).get("task"))
    role, index = task.get("type"), task.get("index")
    if listed.get(plan.address) != (role, index):
        own = listed.get(plan.address)
        return (
            f"TF_CONFIG's task is {role} {index}, but the cluster lists this pod as "
            f"{own[0]} {own[1]}"
            if own
            else f"TF_CONFIG's task is {role} {index}"
        )
    return None


def _tf_config_path(job: dict[str, Any]) -> str:
    env = as_list(as_dict(as_dict(job.get("spec")).get("trainer")).get("env"))
    for index, item in enumerate(env):
        if as_dict(item).get("name") == "TF_CONFIG":
            return child_path(json_path("spec", "trainer", "env"), index)
    return json_path("spec", "runtimeRef", "name")
