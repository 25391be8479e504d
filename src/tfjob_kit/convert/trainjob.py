"""From a TFJob to a Kubeflow Trainer v2 TrainJob and the TrainingRuntime of its own it runs on.

Trainer v2 (v2.3.0) has no TensorFlow runtime. Its ``plainML`` policy, which applies to a runtime
without a framework policy, sets the pod count of the replicated job labelled as the trainer
(``numNodes``) and copies the TrainJob's ``spec.trainer.env`` into that job's container named
``node``; it does nothing for the other replicated jobs. A TFJob with a chief, parameter servers or
an evaluator needs each of those counted and addressed in every pod's TF_CONFIG, and every pod's
template kept (volumes, GPUs, images differ by role), so each TFJob becomes a TrainingRuntime of
its own (named as the job, in its namespace) and a TrainJob that references it:

* each replica type is one replicated job of one Indexed Job (``<type>``, the workers ``node``,
  the trainer; with no workers, the type that decides success is the trainer);
* each pod's address is JobSet's stable name ``<job>-<replicated job>-0-<index>.<job>`` (the
  headless Service JobSet makes is named as the job), on the tensorflow container's port;
* each pod's TF_CONFIG is an env value, readable in the pod spec: the cluster spec ``explain``
  gives the TFJob (keys, order and counts as the operator writes them), with the addresses above
  and the task index as ``$(TFJOB_KIT_TASK_INDEX)``, a variable declared just before it from the
  Job's ``batch.kubernetes.io/job-completion-index`` annotation (the Job controller appends its
  own JOB_COMPLETION_INDEX after the container's env, too late for a reference to expand);
* the JobSet succeeds when the replica type that decides a TFJob's success completes (the
  chief's, else the workers' Job), so parameter servers, which never exit, do not hold it open.

A workers-only job whose pods need nothing but what a TrainJob's own trainer fields say (image,
command, args, env, resources) runs instead on the ClusterTrainingRuntime tfjob-kit ships for
MultiWorkerMirroredStrategy, with its TF_CONFIG in the TrainJob's ``trainer.env``
(``multiworker.py``).

What has no equivalent, or changes meaning, is returned as a :class:`Note`.
"""

from __future__ import annotations

import copy
import json
from typing import Any

from tfjob_kit import explain, model
from tfjob_kit.convert import multiworker
from tfjob_kit.convert.notes import ConversionError, Note
from tfjob_kit.convert.v1 import to_v1
from tfjob_kit.manifests import shorten
from tfjob_kit.model import as_dict, as_list
from tfjob_kit.podcheck import names
from tfjob_kit.runtimes import MULTIWORKER
from tfjob_kit.trainjob import (
    ANCESTOR_LABEL,
    COMPLETION_INDEX_ANNOTATION,
    NODE,
    POD_SUFFIX,
    TRAINER_GROUP,
)

TRAINER_API_VERSION = "trainer.kubeflow.org/v1alpha1"
FRAMEWORK_LABEL = "trainer.kubeflow.org/framework"
INDEX_VARIABLE = "TFJOB_KIT_TASK_INDEX"
VOLCANO_QUEUE_ANNOTATION = "scheduling.volcano.sh/queue-name"
# Pods naming one of these make a gang: Trainer's Volcano PodGroup (kube-batch became Volcano).
GANG_SCHEDULERS = ("volcano", "kube-batch")
# What `convert --gang-scheduler` takes: gang the pods with Volcano, or not at all.
GANG_CHOICES = ("volcano", "none")
# JobSet's webhook: a pod name <job>-<replicated job>-<job index>-<pod index> plus a five-letter
# suffix (trainjob.POD_SUFFIX) must be a DNS-1035 label (63 characters, starting with a letter).
NAME_LIMIT = names.DNS1035_LABEL_MAX_LENGTH


def replicated_job(replica: model.Replica, trainer: str) -> str:
    """The replicated job a replica type becomes: ``node`` for the trainer, else its type."""
    return NODE if replica.type == trainer else replica.lower


def trainer_type(reps: list[model.Replica]) -> str:
    """The replica type plainML counts (numNodes): the workers, else the type that decides
    success."""
    counted = [r.type for r in reps if r.count > 0]
    if "Worker" in counted:
        return "Worker"
    deciders = model.deciders(reps)
    if not deciders:
        raise ConversionError(
            "nothing decides the job's success (no Chief, Master or Worker replica): a TrainJob "
            "would never complete"
        )
    return deciders[0]


def address(job: str, rjob: str, index: int | str, port: int) -> str:
    """Pod ``index`` of replicated job ``rjob``: its hostname in the JobSet's subdomain."""
    return f"{job}-{rjob}-0-{index}.{job}:{port}"


def cluster_spec(job: str, reps: list[model.Replica], trainer: str) -> dict[str, list[str]]:
    """TF_CONFIG's ``cluster`` for the TrainJob: the TFJob's, with JobSet's addresses."""
    cluster = {
        r.lower: [address(job, replicated_job(r, trainer), i, r.port) for i in range(r.count)]
        for r in reps
    }
    return dict(sorted(cluster.items()))


def tf_config_value(cluster: dict[str, list[str]], kind: str) -> str:
    """The TF_CONFIG env value of every pod of lower-case type ``kind``: the operator's JSON
    (``explain.task_tf_config``), its task index a reference to INDEX_VARIABLE."""
    text = explain.task_tf_config(cluster, False, kind, 0, explain.encode_cluster(cluster))
    fixed = '"index":0},"environment":"cloud"}'
    if not text.endswith(fixed):  # pragma: no cover - the operator's shape is fixed
        raise AssertionError(text)
    return text[: -len(fixed)] + f'"index":$({INDEX_VARIABLE})}},"environment":"cloud"}}'


def _index_variable() -> dict[str, Any]:
    path = f"metadata.annotations['{COMPLETION_INDEX_ANNOTATION}']"
    return {"name": INDEX_VARIABLE, "valueFrom": {"fieldRef": {"fieldPath": path}}}


def _check_names(job: str, reps: list[model.Replica], trainer: str) -> None:
    if not model.is_dns1123_label(job) or not job[:1].isalpha():
        raise ConversionError(
            f"the job's name {shorten(job)!r} cannot name a TrainJob: JobSet names pods and its "
            "Service after it, so it must be a DNS-1035 label (lower-case letters, digits and "
            "'-', starting with a letter, at most 63 characters)"
        )
    for replica in reps:
        rjob = replicated_job(replica, trainer)
        longest = f"{job}-{rjob}-0-{max(replica.count - 1, 0)}{POD_SUFFIX}"
        if len(longest) > NAME_LIMIT:
            room = NAME_LIMIT - (len(longest) - len(job))
            raise ConversionError(
                f"the job's name is too long for a TrainJob: JobSet names the {replica.type} "
                f"pods like {longest!r} ({len(longest)} characters with its random suffix, "
                f"over {NAME_LIMIT}); names of at most {room} characters fit (a TFJob's pods "
                f"are named {model.pod_name(job, replica.type, replica.count - 1)!r})"
            )


def _replicas(job: dict[str, Any]) -> list[model.Replica]:
    """The replica types that have pods, each a known one."""
    reps = [r for r in model.replicas(job) if r.count > 0]
    if not reps:
        raise ConversionError("the job has no replicas")
    for replica in reps:
        if not replica.known:
            raise ConversionError(f"{replica.path}: replica type {shorten(replica.key)!r} unknown")
    return reps


def _is_gang(reps: list[model.Replica], scheduling: dict[str, Any], notes: list[Note]) -> bool:
    """Whether the job is gang-scheduled: a schedulingPolicy, or pods naming a gang scheduler."""
    schedulers = {r.pod_spec.get("schedulerName") for r in reps}
    if "kube-batch" in schedulers:
        notes.append(
            Note(
                "$.spec.tfReplicaSpecs",
                "changed",
                "schedulerName kube-batch: Trainer gang-schedules with Volcano (kube-batch's "
                "successor), so the pods name the volcano scheduler",
            )
        )
    return bool(scheduling) or bool(schedulers & set(GANG_SCHEDULERS))


def _success_policy(
    spec: dict[str, Any], reps: list[model.Replica], trainer: str, notes: list[Note]
) -> dict[str, Any]:
    """The JobSet succeeds when the Job of the type that decides a TFJob's success does."""
    deciders = model.deciders(reps)
    decider = replicated_job(next(r for r in reps if r.type in deciders), trainer)
    workers = next((r for r in reps if r.type == "Worker"), None)
    alone = deciders == ["Worker"] and spec.get("successPolicy") != "AllWorkers"
    if alone and workers is not None and workers.count > 1:
        notes.append(
            Note(
                workers.path,
                "changed",
                "the TrainJob completes when every worker completes, not when worker 0 does "
                "(a Job completes when all its pods do)",
            )
        )
    return {"operator": "All", "targetReplicatedJobs": [decider]}


def to_trainjob(
    document: dict[str, Any], gang_scheduler: str | None = None
) -> tuple[list[dict[str, Any]], list[Note]]:
    """A TFJob (or anything to_v1 accepts) as [TrainingRuntime, TrainJob]. ``gang_scheduler``:
    what the training-operator ganged the job's pods with (its ``--gang-scheduler-name``, which the
    TFJob itself does not show): ``volcano`` or ``none``; by default the job decides (a
    schedulingPolicy, or pods naming volcano or kube-batch)."""
    if gang_scheduler not in (None, *GANG_CHOICES):
        raise ValueError(f"gang_scheduler must be one of {GANG_CHOICES}, not {gang_scheduler!r}")
    job, notes = to_v1(document)
    name = model.job_name(job)
    metadata = as_dict(job.get("metadata"))
    if "name" not in metadata:
        raise ConversionError("the job has no metadata.name: TrainJob pod addresses are made of it")
    reps = _replicas(job)
    trainer = trainer_type(reps)
    _check_names(name, reps, trainer)
    spec = as_dict(job.get("spec"))
    run_policy = as_dict(spec.get("runPolicy"))
    scheduling = as_dict(run_policy.get("schedulingPolicy"))
    gang = _is_gang(reps, scheduling, notes) if gang_scheduler is None else gang_scheduler != "none"
    cluster = cluster_spec(name, reps, trainer) if explain.is_distributed(reps) else None
    if multiworker.fits(reps, run_policy, gang):
        (worker,) = reps
        tf_config = None if cluster is None else tf_config_value(cluster, worker.lower)
        _restart_policy(worker, notes)  # ExitCode: Never, as the runtime's
        _success_policy(spec, reps, trainer, notes)
        ref = {"apiGroup": TRAINER_GROUP, "kind": "ClusterTrainingRuntime", "name": MULTIWORKER}
        notes += _not_carried_over(spec, run_policy, scheduling, reps, gang)
        spec_trainer = multiworker.trainer(worker, tf_config, notes)
        return [_trainjob(metadata, run_policy, gang, ref, spec_trainer)], notes
    jobs = [_replicated_job(r, trainer, cluster, run_policy, gang, notes) for r in reps]
    nodes = next(r.count for r in reps if r.type == trainer)
    runtime_spec: dict[str, Any] = {
        "mlPolicy": {"numNodes": nodes},
        "template": {
            "spec": {
                "successPolicy": _success_policy(spec, reps, trainer, notes),
                "replicatedJobs": jobs,
            }
        },
    }
    if gang:
        runtime_spec["podGroupPolicy"] = {"volcano": {}}
    namespace = {"namespace": metadata["namespace"]} if "namespace" in metadata else {}
    runtime = {
        "apiVersion": TRAINER_API_VERSION,
        "kind": "TrainingRuntime",
        "metadata": {"name": name, **namespace, "labels": {FRAMEWORK_LABEL: "tensorflow"}},
        "spec": runtime_spec,
    }
    notes += _not_carried_over(spec, run_policy, scheduling, reps, gang)
    ref = {"apiGroup": TRAINER_GROUP, "kind": "TrainingRuntime", "name": name}
    return [runtime, _trainjob(metadata, run_policy, gang, ref, {"numNodes": nodes})], notes


def _trainjob(
    metadata: dict[str, Any],
    run_policy: dict[str, Any],
    gang: bool,
    runtime_ref: dict[str, Any],
    trainer: dict[str, Any],
) -> dict[str, Any]:
    """The TrainJob on ``runtime_ref``: the TFJob's name, labels and annotations, ``trainer``, its
    deadline and suspension, and the Volcano queue as Trainer reads it."""
    name = metadata["name"]
    meta: dict[str, Any] = {"name": name}
    if "namespace" in metadata:
        meta["namespace"] = metadata["namespace"]
    for key in ("labels", "annotations"):
        if isinstance(metadata.get(key), dict) and metadata[key]:
            meta[key] = copy.deepcopy(metadata[key])
    spec: dict[str, Any] = {"runtimeRef": runtime_ref, "trainer": trainer}
    for key in ("activeDeadlineSeconds", "suspend"):
        if key in run_policy:
            spec[key] = run_policy[key]
    scheduling = as_dict(run_policy.get("schedulingPolicy"))
    if gang and "queue" in scheduling:
        meta.setdefault("annotations", {})[VOLCANO_QUEUE_ANNOTATION] = scheduling["queue"]
    return {"apiVersion": TRAINER_API_VERSION, "kind": "TrainJob", "metadata": meta, "spec": spec}


def _replicated_job(
    replica: model.Replica,
    trainer: str,
    cluster: dict[str, list[str]] | None,
    run_policy: dict[str, Any],
    gang: bool,
    notes: list[Note],
) -> dict[str, Any]:
    """One replica type as a replicated job: one Indexed Job of ``count`` pods."""
    rjob = replicated_job(replica, trainer)
    template = copy.deepcopy(replica.template)
    pod_spec = template["spec"] = as_dict(template.get("spec"))
    pod_spec["restartPolicy"] = _restart_policy(replica, notes)
    scheduling = as_dict(run_policy.get("schedulingPolicy"))
    if gang:
        pod_spec["schedulerName"] = "volcano"
        if "priorityClass" in scheduling:
            pod_spec["priorityClassName"] = scheduling["priorityClass"]
    found = replica.tensorflow_container()
    if found is None:
        notes.append(
            Note(
                f"{replica.path}.template.spec.containers",
                "dropped",
                "no container is named tensorflow: no TF_CONFIG, as the operator gives none",
            )
        )
    else:
        index, _ = found
        container = pod_spec["containers"][index]
        if rjob == NODE:
            container["name"] = NODE
            notes.append(
                Note(
                    f"{replica.path}.template.spec.containers[{index}].name",
                    "changed",
                    f"the tensorflow container is named {NODE!r}: Trainer's plainML finds the "
                    "trainer's container by that name",
                )
            )
        _set_port(container, replica.port)
        if cluster is not None:
            _set_tf_config(replica, container, index, cluster, notes)
    job_spec: dict[str, Any] = {
        "completionMode": "Indexed",
        "parallelism": replica.count,
        "completions": replica.count,
        "template": template,
    }
    if "backoffLimit" in run_policy:
        job_spec["backoffLimit"] = run_policy["backoffLimit"]
    elif pod_spec["restartPolicy"] == "Never":
        job_spec["backoffLimit"] = 0  # a failed pod fails the job, as in a TFJob
    result: dict[str, Any] = {"name": rjob, "replicas": 1, "template": {"spec": job_spec}}
    if rjob == NODE:
        result["template"]["metadata"] = {"labels": {ANCESTOR_LABEL: "trainer"}}
    return result


def _restart_policy(replica: model.Replica, notes: list[Note]) -> str:
    """A Job's pods restart Never or OnFailure."""
    policy = replica.restart_policy
    if policy == "ExitCode":
        notes.append(
            Note(
                f"{replica.path}.restartPolicy",
                "changed",
                "ExitCode: a Job's pods restart Never or OnFailure; Never here, so no exit code "
                "restarts a pod (the Job's backoffLimit counts failed pods)",
            )
        )
        return "Never"
    if policy == "Always":
        notes.append(
            Note(
                f"{replica.path}.restartPolicy",
                "changed",
                "Always: a Job's pods cannot restart Always; OnFailure here",
            )
        )
        return "OnFailure"
    return policy


def _set_port(container: dict[str, Any], port: int) -> None:
    ports = container.setdefault("ports", [])
    if isinstance(ports, list) and not any(
        as_dict(p).get("name") == model.PORT_NAME for p in ports
    ):
        ports.append({"name": model.PORT_NAME, "containerPort": port})


def _set_tf_config(
    replica: model.Replica,
    container: dict[str, Any],
    index: int,
    cluster: dict[str, list[str]],
    notes: list[Note],
) -> None:
    """The index variable and TF_CONFIG, last in the container's env (a user's TF_CONFIG goes:
    the operator's, appended after it, is the one a TFJob's pod sees)."""
    env = [
        e
        for e in as_list(container.get("env"))
        if as_dict(e).get("name") not in ("TF_CONFIG", INDEX_VARIABLE)
    ]
    if len(env) != len(as_list(container.get("env"))):
        notes.append(
            Note(
                f"{replica.path}.template.spec.containers[{index}].env",
                "changed",
                f"TF_CONFIG (and {INDEX_VARIABLE}) are the conversion's: the operator's TF_CONFIG, "
                "appended after the container's own, is what a TFJob's pod sees",
            )
        )
    value = tf_config_value(cluster, replica.lower)
    container["env"] = [*env, _index_variable(), {"name": "TF_CONFIG", "value": value}]


def _not_carried_over(
    spec: dict[str, Any],
    run_policy: dict[str, Any],
    scheduling: dict[str, Any],
    reps: list[model.Replica],
    gang: bool,
) -> list[Note]:
    """The TFJob fields a TrainJob has no equivalent for, or whose meaning changes."""
    notes = [
        Note(
            f"$.spec.runPolicy.{key}",
            "dropped",
            f"runPolicy.{key} ({json.dumps(run_policy[key])}) has no TrainJob equivalent",
        )
        for key in ("cleanPodPolicy", "ttlSecondsAfterFinished", "managedBy")
        if key in run_policy
    ]
    if "backoffLimit" in run_policy:
        notes.append(
            Note(
                "$.spec.runPolicy.backoffLimit",
                "changed",
                "backoffLimit counts failed pods of each replica type's Job, not of the whole job",
            )
        )
    total = sum(r.count for r in reps)
    if gang and scheduling.get("minAvailable", total) != total:
        notes.append(
            Note(
                "$.spec.runPolicy.schedulingPolicy.minAvailable",
                "changed",
                f"Trainer's Volcano PodGroup needs every pod ({total}), not "
                f"{scheduling['minAvailable']}",
            )
        )
    notes += [
        Note(
            f"$.spec.runPolicy.schedulingPolicy.{key}",
            "dropped",
            f"schedulingPolicy.{key} has no TrainJob equivalent",
        )
        for key in ("minResources", "scheduleTimeoutSeconds")
        if key in scheduling
    ]
    if spec.get("enableDynamicWorker"):
        notes.append(
            Note(
                "$.spec.enableDynamicWorker",
                "changed",
                "every pod's TF_CONFIG lists the whole cluster (the TFJob's lists only its own "
                "address and the parameter servers)",
            )
        )
    return notes
