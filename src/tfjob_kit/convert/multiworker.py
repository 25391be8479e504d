"""A workers-only TFJob as a TrainJob on the ClusterTrainingRuntime tfjob-kit ships for
MultiWorkerMirroredStrategy (``runtimes/tensorflow-multiworker.yaml``), when everything its
workers' pods need fits the TrainJob's own fields: one container (image, command, args, env,
resources, the default port), the runtime's restart policy, no gang, no limits of the TFJob's own.
Anything more, and the job gets a TrainingRuntime of its own (``trainjob.py``).

The TrainJob's ``trainer.env`` carries the workers' TF_CONFIG (Trainer's plainML appends it to the
container's env, after the runtime's TFJOB_KIT_TASK_INDEX), so the one runtime serves every job.
"""

from __future__ import annotations

from typing import Any

from tfjob_kit import model
from tfjob_kit.convert.notes import Note
from tfjob_kit.model import as_dict, as_list
from tfjob_kit.runtimes import MULTIWORKER, shipped_runtime

# What a worker's container may hold to fit the TrainJob's trainer fields.
CONTAINER_FIELDS = {"name", "image", "command", "args", "env", "resources", "ports"}
# runPolicy fields the TrainJob carries itself, or that no TrainJob has (reported either way).
RUN_POLICY_FIELDS = {
    "activeDeadlineSeconds",
    "suspend",
    "cleanPodPolicy",
    "ttlSecondsAfterFinished",
    "managedBy",
}


def _runtime_port() -> int:
    (job,) = shipped_runtime(MULTIWORKER)["spec"]["template"]["spec"]["replicatedJobs"]
    (container,) = job["template"]["spec"]["template"]["spec"]["containers"]
    port: int = container["ports"][0]["containerPort"]
    return port


def fits(reps: list[model.Replica], run_policy: dict[str, Any], gang: bool) -> bool:
    """Whether the job can run on the shipped multi-worker runtime as it is."""
    if gang or [r.type for r in reps] != ["Worker"] or set(run_policy) - RUN_POLICY_FIELDS:
        return False
    (worker,) = reps
    found = worker.tensorflow_container()
    if found is None or worker.containers != [found[1]]:
        return False
    if set(worker.template) - {"spec"} or set(worker.pod_spec) - {"containers", "restartPolicy"}:
        return False
    if worker.restart_policy not in ("Never", "ExitCode") or worker.port != _runtime_port():
        return False
    container = found[1]
    ports = as_list(container.get("ports"))
    return not set(container) - CONTAINER_FIELDS and all(
        as_dict(p).get("name") == model.PORT_NAME for p in ports
    )


def trainer(worker: model.Replica, tf_config: str | None, notes: list[Note]) -> dict[str, Any]:
    """The TrainJob's ``spec.trainer``: the workers' count and container, their TF_CONFIG last
    in the env."""
    found = worker.tensorflow_container()
    assert found is not None  # fits() said so
    container = found[1]
    result: dict[str, Any] = {"numNodes": worker.count}
    for ours, theirs in (("image", "image"), ("command", "command"), ("args", "args")):
        if theirs in container:
            result[ours] = container[theirs]
    if "resources" in container:
        result["resourcesPerNode"] = container["resources"]
    env = [e for e in as_list(container.get("env")) if as_dict(e).get("name") != "TF_CONFIG"]
    if tf_config is not None:
        env.append({"name": "TF_CONFIG", "value": tf_config})
    if env:
        result["env"] = env
    notes.append(
        Note(
            worker.path,
            "changed",
            f"the workers run on the ClusterTrainingRuntime {MULTIWORKER!r} that tfjob-kit ships "
            "(tfjob-kit cluster up --trainer applies it): their container is its 'node', their "
            "TF_CONFIG is the TrainJob's trainer.env",
        )
    )
    return result
