"""Into a kubeflow.org/v1 TFJob: legacy TFJobs (v1alpha1 list form, v1alpha2, v1beta1, v1beta2) and
T9k TensorFlowTrainingJobs (batch.tensorstack.dev/v1beta1); :func:`to_v1` picks by kind and version.
"""

from __future__ import annotations

import copy
import json
from typing import Any

from tfjob_kit import model, schema
from tfjob_kit.convert.notes import ConversionError, Note
from tfjob_kit.findings import child_path, json_path
from tfjob_kit.model import as_dict, as_list

T9K_API_VERSION = "batch.tensorstack.dev/v1beta1"
T9K_KIND = "TensorFlowTrainingJob"
_METADATA_KEPT = ("name", "generateName", "namespace", "labels", "annotations")
_CLEAN_POLICIES = {"all": "All", "running": "Running", "none": "None"}


def _metadata(source: dict[str, Any], notes: list[Note]) -> dict[str, Any]:
    meta = as_dict(source.get("metadata"))
    kept = {k: copy.deepcopy(meta[k]) for k in _METADATA_KEPT if k in meta}
    for key in meta:
        if key not in _METADATA_KEPT:
            notes.append(
                Note(
                    child_path("$.metadata", key),
                    "dropped",
                    f"metadata.{key} is server-owned and not carried over",
                )
            )
    return kept


def _canonical_key(key: str, path: str, notes: list[Note]) -> str:
    canonical = model.canonical_type(key)
    if canonical is None:
        notes.append(
            Note(
                path,
                "changed",
                f"unknown replica type {key!r} kept as is; tfjob-kit validate flags it",
            )
        )
        return key
    if canonical != key:
        notes.append(Note(path, "changed", f"replica type {key!r} renamed to {canonical!r}"))
    return canonical


def _move_template_restart_policy(replica: dict[str, Any], path: str, notes: list[Note]) -> None:
    """A template restartPolicy without a replica restartPolicy is what the user meant; the
    operator would overwrite it with Never, so make it the replica's policy."""
    pod_spec = as_dict(as_dict(replica.get("template")).get("spec"))
    policy = pod_spec.get("restartPolicy")
    if isinstance(policy, str) and "restartPolicy" not in replica:
        replica["restartPolicy"] = policy
        del pod_spec["restartPolicy"]
        notes.append(
            Note(
                f"{path}.template.spec.restartPolicy",
                "changed",
                f"template restartPolicy {policy} moved to the replica's restartPolicy "
                "(the operator overwrites the template's)",
            )
        )


def legacy_to_v1(job: dict[str, Any]) -> tuple[dict[str, Any], list[Note]]:
    """A v1alpha1/v1alpha2/v1beta1/v1beta2 TFJob as a kubeflow.org/v1 TFJob."""
    version = job.get("apiVersion")
    if job.get("kind") != model.KIND or version not in model.LEGACY_API_VERSIONS:
        raise ConversionError(f"not a legacy TFJob: {version} {job.get('kind')}")
    notes: list[Note] = [Note("$.apiVersion", "changed", f"{version} -> {model.API_VERSION}")]
    spec = as_dict(job.get("spec"))
    replicas, handled = _legacy_replicas(spec, str(version), notes)
    out_spec: dict[str, Any] = {"tfReplicaSpecs": replicas}
    run_policy = _legacy_run_policy(spec, notes)
    if run_policy:
        out_spec["runPolicy"] = run_policy
    handled |= {"runPolicy", *schema.run_policy_fields()}
    for name in ("successPolicy", "enableDynamicWorker"):
        if name in spec:
            out_spec[name] = copy.deepcopy(spec[name])
            handled.add(name)
    for name in sorted(set(spec) - handled):
        notes.append(
            Note(
                f"$.spec.{name}",
                "dropped",
                f"spec.{name} has no v1 equivalent: {json.dumps(spec[name])}",
            )
        )
    out = {
        "apiVersion": model.API_VERSION,
        "kind": model.KIND,
        "metadata": _metadata(job, notes),
        "spec": out_spec,
    }
    _note_generate_name(out, notes)
    return out, notes


def _legacy_replicas(
    spec: dict[str, Any], version: str, notes: list[Note]
) -> tuple[dict[str, Any], set[str]]:
    """The replica specs as v1 tfReplicaSpecs (v1alpha1's list, or the map), and the spec
    fields they came from."""
    replicas: dict[str, Any] = {}
    if "replicaSpecs" in spec and version == "kubeflow.org/v1alpha1":
        for index, item in enumerate(as_list(spec.get("replicaSpecs"))):
            item = copy.deepcopy(as_dict(item))
            path = f"$.spec.replicaSpecs[{index}]"
            key = _canonical_key(str(item.pop("tfReplicaType", "Master")), path, notes)
            port = item.pop("tfPort", None)
            if port is not None and port != model.DEFAULT_PORT:
                notes.append(
                    Note(
                        f"{path}.tfPort",
                        "changed",
                        f"tfPort {port} must become a container port named "
                        f"{model.PORT_NAME} on the tensorflow container",
                    )
                )
                _ensure_port(item, int(port))
            for extra in sorted(set(item) - {"replicas", "template", "restartPolicy"}):
                notes.append(
                    Note(
                        f"{path}.{extra}",
                        "dropped",
                        f"{extra} has no v1 equivalent: {json.dumps(item[extra])}",
                    )
                )
                del item[extra]
            _move_template_restart_policy(item, path, notes)
            replicas[key] = item
        handled = {"replicaSpecs"}
    else:
        for key, replica in as_dict(spec.get("tfReplicaSpecs")).items():
            path = json_path("spec", "tfReplicaSpecs", key)
            item = copy.deepcopy(as_dict(replica))
            _move_template_restart_policy(item, path, notes)
            replicas[_canonical_key(key, path, notes)] = item
        handled = {"tfReplicaSpecs"}
    return replicas, handled


def _legacy_run_policy(spec: dict[str, Any], notes: list[Note]) -> dict[str, Any]:
    """The runPolicy, with the RunPolicy fields older versions kept in spec moved into it."""
    run_policy = copy.deepcopy(as_dict(spec.get("runPolicy")))
    spec_run_policy = schema.run_policy_fields()
    for name in spec_run_policy:
        if name in spec:
            run_policy[name] = copy.deepcopy(spec[name])
            notes.append(Note(f"$.spec.{name}", "changed", f"moved to spec.runPolicy.{name}"))
    clean = run_policy.get("cleanPodPolicy")
    if (
        isinstance(clean, str)
        and clean.lower() in _CLEAN_POLICIES
        and clean != _CLEAN_POLICIES[clean.lower()]
    ):
        run_policy["cleanPodPolicy"] = _CLEAN_POLICIES[clean.lower()]
        notes.append(
            Note(
                "$.spec.runPolicy.cleanPodPolicy",
                "changed",
                f"cleanPodPolicy {clean!r} spelled {_CLEAN_POLICIES[clean.lower()]!r}",
            )
        )
    return run_policy


def _note_generate_name(job: dict[str, Any], notes: list[Note]) -> None:
    meta = as_dict(job.get("metadata"))
    if "name" not in meta and "generateName" in meta:
        notes.append(
            Note(
                "$.metadata.generateName",
                "changed",
                "only generateName is set: fine for `kubectl create`, but apply and "
                "Ansible need metadata.name",
            )
        )


def t9k_to_v1(job: dict[str, Any]) -> tuple[dict[str, Any], list[Note]]:
    """A T9k TensorFlowTrainingJob as a kubeflow.org/v1 TFJob."""
    if job.get("kind") != T9K_KIND:
        raise ConversionError(f"not a {T9K_KIND}: {job.get('kind')}")
    notes: list[Note] = []
    spec = as_dict(job.get("spec"))
    replicas = _t9k_replicas(spec, notes)
    out_spec: dict[str, Any] = {"tfReplicaSpecs": replicas}
    run_policy = _t9k_run_policy(spec, notes)
    notes += _t9k_dropped(spec)
    if run_policy:
        out_spec["runPolicy"] = run_policy
    out = {
        "apiVersion": model.API_VERSION,
        "kind": model.KIND,
        "metadata": _metadata(job, notes),
        "spec": out_spec,
    }
    return out, notes


def _t9k_replicas(spec: dict[str, Any], notes: list[Note]) -> dict[str, Any]:
    """The replicaSpecs list as tfReplicaSpecs, by type."""
    replicas: dict[str, Any] = {}
    for index, item in enumerate(as_list(spec.get("replicaSpecs"))):
        item = copy.deepcopy(as_dict(item))
        path = f"$.spec.replicaSpecs[{index}]"
        rtype = str(item.pop("type", ""))
        key = _canonical_key(rtype, f"{path}.type", notes) if rtype else f"Unnamed{index}"
        if key in replicas:
            notes.append(
                Note(
                    f"{path}.type", "dropped", f"a second {key} replica spec cannot be carried over"
                )
            )
            continue
        if item.get("restartPolicy") == "ExitCode":
            notes.append(
                Note(
                    f"{path}.restartPolicy",
                    "changed",
                    "ExitCode: T9k retries exit codes 130, 137, 143 and 138; the "
                    "training-operator retries every code >= 128 and fails on 1-127",
                )
            )
        for extra in sorted(set(item) - {"replicas", "template", "restartPolicy"}):
            notes.append(
                Note(
                    f"{path}.{extra}",
                    "dropped",
                    f"{extra} has no TFJob equivalent: {json.dumps(item[extra])}",
                )
            )
            del item[extra]
        replicas[key] = item
    return replicas


def _t9k_run_policy(spec: dict[str, Any], notes: list[Note]) -> dict[str, Any]:
    """The runPolicy, with the T9k scheduler's queue as the PodGroup's."""
    run_policy: dict[str, Any] = {}
    source_policy = as_dict(spec.get("runPolicy"))
    for name in ("backoffLimit", "activeDeadlineSeconds"):
        if name in source_policy:
            run_policy[name] = source_policy[name]
    cleanup = source_policy.get("cleanUpPolicy")
    if cleanup is not None:
        mapped = {"None": "None", "All": "All", "Unfinished": "Running"}.get(str(cleanup))
        if mapped is None:
            notes.append(
                Note(
                    "$.spec.runPolicy.cleanUpPolicy",
                    "dropped",
                    f"cleanUpPolicy {cleanup!r} has no TFJob equivalent",
                )
            )
        else:
            run_policy["cleanPodPolicy"] = mapped
            if mapped != cleanup:
                notes.append(
                    Note(
                        "$.spec.runPolicy.cleanUpPolicy",
                        "changed",
                        f"cleanUpPolicy {cleanup} -> cleanPodPolicy {mapped} "
                        "(deletes the pods still running when the job ends)",
                    )
                )
    for name in sorted(
        set(source_policy) - {"backoffLimit", "activeDeadlineSeconds", "cleanUpPolicy"}
    ):
        notes.append(
            Note(
                f"$.spec.runPolicy.{name}",
                "dropped",
                f"runPolicy.{name} has no TFJob equivalent: {json.dumps(source_policy[name])}",
            )
        )
    t9k_scheduler = as_dict(as_dict(spec.get("scheduler")).get("t9kScheduler"))
    if t9k_scheduler.get("queue"):
        run_policy["schedulingPolicy"] = {"queue": t9k_scheduler["queue"]}
        notes.append(
            Note(
                "$.spec.scheduler.t9kScheduler.queue",
                "changed",
                f"queue {t9k_scheduler['queue']!r} becomes the Volcano queue of the "
                "job's PodGroup (needs the operator's --gang-scheduler-name=volcano)",
            )
        )
    if "priority" in t9k_scheduler:
        notes.append(
            Note(
                "$.spec.scheduler.t9kScheduler.priority",
                "dropped",
                f"priority {t9k_scheduler['priority']} is a T9k scheduler number; "
                "TFJobs take a PriorityClass name "
                "(spec.runPolicy.schedulingPolicy.priorityClass)",
            )
        )
    return run_policy


def _t9k_dropped(spec: dict[str, Any]) -> list[Note]:
    """The spec fields a TFJob has no place for."""
    notes: list[Note] = []
    if "tensorboardSpec" in spec:
        notes.append(
            Note(
                "$.spec.tensorboardSpec",
                "dropped",
                "TFJobs have no TensorBoard; deploy one next to the job (the tfjob "
                f"chart's tensorboard values): {json.dumps(spec['tensorboardSpec'])}",
            )
        )
    for name in sorted(set(spec) - {"replicaSpecs", "runPolicy", "scheduler", "tensorboardSpec"}):
        notes.append(
            Note(
                f"$.spec.{name}",
                "dropped",
                f"spec.{name} has no TFJob equivalent: {json.dumps(spec[name])}",
            )
        )
    return notes


def to_v1(document: dict[str, Any]) -> tuple[dict[str, Any], list[Note]]:
    """Any supported input as a v1 TFJob (a v1 TFJob is returned as a copy)."""
    if document.get("kind") == T9K_KIND:
        return t9k_to_v1(document)
    if document.get("kind") == model.KIND and document.get("apiVersion") == model.API_VERSION:
        return copy.deepcopy(document), []
    if (
        document.get("kind") == model.KIND
        and document.get("apiVersion") in model.LEGACY_API_VERSIONS
    ):
        return legacy_to_v1(document)
    raise ConversionError(
        f"cannot convert {document.get('apiVersion')} {document.get('kind')}: expected a TFJob "
        f"or a {T9K_KIND}"
    )


def _ensure_port(replica: dict[str, Any], port: int) -> None:
    pod_spec = as_dict(as_dict(replica.get("template")).get("spec"))
    for container in as_list(pod_spec.get("containers")):
        if isinstance(container, dict) and container.get("name") == model.CONTAINER_NAME:
            ports = container.setdefault("ports", [])
            if isinstance(ports, list) and not any(
                as_dict(p).get("name") == model.PORT_NAME for p in ports
            ):
                ports.append({"name": model.PORT_NAME, "containerPort": port})
