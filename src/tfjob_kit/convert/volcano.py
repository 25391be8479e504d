"""From a TFJob to a Volcano batch.volcano.sh/v1alpha1 Job whose containers build TF_CONFIG from
the host files of Volcano's svc plugin (as in the Volcano TensorFlow example).
"""

from __future__ import annotations

import copy
import json
import shlex
from typing import Any

from tfjob_kit import explain, model
from tfjob_kit.convert.notes import ConversionError, Note
from tfjob_kit.convert.v1 import to_v1
from tfjob_kit.manifests import shorten
from tfjob_kit.model import as_dict, as_list

VOLCANO_API_VERSION = "batch.volcano.sh/v1alpha1"
VOLCANO_RETRYABLE_EXIT_CODES = (130, 137, 143)


def _check_task(replica: model.Replica) -> None:
    """A Volcano task name is a DNS-1123 label; it names the task's host file and is a word of
    the TF_CONFIG script, so nothing else may reach the script (a replica type is kept as
    written)."""
    if not model.is_dns1123_label(replica.lower):
        raise ConversionError(
            f"{replica.path}: replica type {shorten(replica.key)!r} cannot be a Volcano task name "
            f"({model.DNS1123_LABEL_RULE})"
        )
    if not 1 <= replica.port <= 65535:
        raise ConversionError(
            f"{replica.path}: port of the tensorflow container is out of range (1 to 65535)"
        )


def _tf_config_script(task: str, tasks: list[tuple[str, int]]) -> str:
    """POSIX sh that exports TF_CONFIG from Volcano's /etc/volcano/<task>.host files. Task names
    are DNS-1123 labels and ports numbers (_check_task); they are quoted all the same."""
    cluster = ",".join(
        f'\\"{name}\\":[$(h {shlex.quote(name)} {int(port)})]' for name, port in tasks
    )
    return (
        'h() { sed -e "s/.*/\\"&:$2\\"/" "/etc/volcano/$1.host" | tr \'\\n\' \',\' '
        "| sed 's/,$//'; }; "
        f'export TF_CONFIG="{{\\"cluster\\":{{{cluster}}},'
        f'\\"task\\":{{\\"type\\":\\"{task}\\",\\"index\\":${{VK_TASK_INDEX}}}},'
        '\\"environment\\":\\"cloud\\"}"; '
        'exec "$@"'
    )


def to_volcano(document: dict[str, Any]) -> tuple[dict[str, Any], list[Note]]:
    """A TFJob (or anything to_v1 accepts) as a Volcano batch.volcano.sh/v1alpha1 Job."""
    job, notes = to_v1(document)
    reps = model.replicas(job)
    spec = as_dict(job.get("spec"))
    run_policy = as_dict(spec.get("runPolicy"))
    scheduling = as_dict(run_policy.get("schedulingPolicy"))
    deciders = model.success_decider(job, reps)[1]
    for replica in reps:
        _check_task(replica)
    distributed = explain.is_distributed(reps)
    cluster_tasks = [(r.lower, r.port) for r in sorted(reps, key=lambda r: r.lower)]
    tasks = [
        _task(replica, spec, replica.type in deciders, distributed, cluster_tasks, notes)
        for replica in reps
    ]
    vc_spec: dict[str, Any] = {
        "minAvailable": scheduling.get("minAvailable", sum(r.count for r in reps)),
        "schedulerName": "volcano",
        "plugins": {"env": [], "svc": []},
        "policies": [{"event": "PodEvicted", "action": "RestartJob"}],
        "tasks": tasks,
    }
    vc_spec["queue"] = scheduling.get("queue", "default")  # no admission webhook may default it
    if "priorityClass" in scheduling:
        vc_spec["priorityClassName"] = scheduling["priorityClass"]
    if "backoffLimit" in run_policy:
        vc_spec["maxRetry"] = run_policy["backoffLimit"]
    if "ttlSecondsAfterFinished" in run_policy:
        vc_spec["ttlSecondsAfterFinished"] = run_policy["ttlSecondsAfterFinished"]
    notes += _not_carried_over(spec, run_policy, scheduling)
    metadata = as_dict(job.get("metadata"))
    out = {
        "apiVersion": VOLCANO_API_VERSION,
        "kind": "Job",
        "metadata": {k: v for k, v in metadata.items() if k != "generateName"},
        "spec": vc_spec,
    }
    if not model.job_name(job) or "name" not in metadata:
        notes.append(
            Note(
                "$.metadata.name", "changed", "Volcano host names come from metadata.name: set one"
            )
        )
    return out, notes


def _task(
    replica: model.Replica,
    spec: dict[str, Any],
    decides: bool,
    distributed: bool,
    cluster_tasks: list[tuple[str, int]],
    notes: list[Note],
) -> dict[str, Any]:
    """The Volcano task of one replica type: its pod template (TF_CONFIG injected where the job
    is distributed) and the policies that carry its restart and success rules."""
    template = copy.deepcopy(replica.template)
    pod_spec = template["spec"] = as_dict(template.get("spec"))
    task: dict[str, Any] = {"name": replica.lower, "replicas": replica.count}
    pod_spec["restartPolicy"] = replica.pod_restart_policy
    policies = _task_policies(replica, spec, decides, notes)
    if policies:
        task["policies"] = policies
    found = replica.tensorflow_container()
    if distributed and found is not None:
        _inject_tf_config(replica, pod_spec["containers"][found[0]], found[0], cluster_tasks, notes)
    task["template"] = template
    return task


def _task_policies(
    replica: model.Replica, spec: dict[str, Any], decides: bool, notes: list[Note]
) -> list[dict[str, Any]]:
    policies: list[dict[str, Any]] = []
    if replica.restart_policy == "ExitCode":
        policies.extend(
            {"exitCode": code, "action": "RestartTask"} for code in VOLCANO_RETRYABLE_EXIT_CODES
        )
        notes.append(
            Note(
                f"{replica.path}.restartPolicy",
                "changed",
                "ExitCode: Volcano matches exit codes one by one; "
                f"{', '.join(map(str, VOLCANO_RETRYABLE_EXIT_CODES))} restart the "
                "task, other codes >= 128 fail it",
            )
        )
    if decides:
        policies.append({"event": "TaskCompleted", "action": "CompleteJob"})
        if (
            replica.type == "Worker"
            and spec.get("successPolicy") != "AllWorkers"
            and replica.count > 1
        ):
            notes.append(
                Note(
                    f"{replica.path}",
                    "changed",
                    "the Volcano job completes when every worker completes, not when worker 0 does",
                )
            )
    return policies


def _inject_tf_config(
    replica: model.Replica,
    container: dict[str, Any],
    index: int,
    cluster_tasks: list[tuple[str, int]],
    notes: list[Note],
) -> None:
    """The tensorflow container's command wrapped in the script that writes TF_CONFIG from
    Volcano's host files, and the port the other tasks reach it on."""
    command = as_list(container.get("command"))
    if not command:
        notes.append(
            Note(
                f"{replica.path}.template.spec.containers[{index}]",
                "dropped",
                "TF_CONFIG cannot be injected: the tensorflow container runs "
                "the image ENTRYPOINT; set its command",
            )
        )
        return
    script = _tf_config_script(replica.lower, cluster_tasks)
    container["command"] = [
        "sh",
        "-c",
        script,
        "--",
        *command,
        *as_list(container.pop("args", [])),
    ]
    ports = container.setdefault("ports", [])
    if not any(as_dict(p).get("name") == model.PORT_NAME for p in ports):
        ports.append({"name": model.PORT_NAME, "containerPort": replica.port})


def _not_carried_over(
    spec: dict[str, Any], run_policy: dict[str, Any], scheduling: dict[str, Any]
) -> list[Note]:
    """The TFJob fields a Volcano Job has no equivalent for."""
    notes = [
        Note(
            f"$.spec.runPolicy.{key}",
            "dropped",
            f"runPolicy.{key} ({json.dumps(run_policy[key])}) has no Volcano Job equivalent",
        )
        for key in ("cleanPodPolicy", "activeDeadlineSeconds", "suspend", "managedBy")
        if key in run_policy
    ]
    notes += [
        Note(
            f"$.spec.runPolicy.schedulingPolicy.{key}",
            "dropped",
            f"schedulingPolicy.{key} has no Volcano Job equivalent",
        )
        for key in ("minResources", "scheduleTimeoutSeconds")
        if key in scheduling
    ]
    if spec.get("enableDynamicWorker"):
        notes.append(
            Note("$.spec.enableDynamicWorker", "dropped", "Volcano Jobs have no dynamic workers")
        )
    return notes
