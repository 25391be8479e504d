"""Semantic rules: what the training-operator's webhook rejects, and what users trip on.

Each rule has an id, a default severity, a one-line summary (shown in SARIF and `tfjob-kit rules`)
and a check that yields (JSON path, message) pairs. Messages say how to fix the problem. Checks
read the object through :mod:`tfjob_kit.model`, so wrong types never crash them: the schema
reports those.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from tfjob_kit import model, quantity, schema
from tfjob_kit.findings import Finding, Severity, child_path
from tfjob_kit.model import Replica, as_dict, as_int, as_list

Check = Callable[[dict[str, Any], list[Replica]], Iterator[tuple[str, str]]]


@dataclass(frozen=True)
class Rule:
    id: str
    severity: Severity
    summary: str
    check: Check


RULES: dict[str, Rule] = {}

# Findings the loader, the schema and cross-document checks produce; listed so that they can be
# re-levelled too.
BUILTIN = {
    "yaml-syntax": (Severity.ERROR, "The document is not valid YAML, or not JSON-compatible."),
    "input-limit": (Severity.ERROR, "The input exceeds a size, depth or alias-expansion limit."),
    "not-an-object": (Severity.ERROR, "The document is not a mapping (a Kubernetes object)."),
    "schema": (Severity.ERROR, "The TFJob does not match the kubeflow.org/v1 JSON Schema."),
    "podgroup-by-hand": (
        Severity.WARNING,
        "A PodGroup written next to a TFJob collides with the operator's.",
    ),
}


def rule(rule_id: str, severity: Severity, summary: str) -> Callable[[Check], Check]:
    def register(check: Check) -> Check:
        if rule_id in RULES or rule_id in BUILTIN:
            raise ValueError(f"rule {rule_id} registered twice")
        RULES[rule_id] = Rule(rule_id, severity, summary, check)
        return check

    return register


def all_rule_ids() -> list[str]:
    return sorted([*BUILTIN, *RULES])


def default_severity(rule_id: str) -> Severity:
    if rule_id in BUILTIN:
        return BUILTIN[rule_id][0]
    return RULES[rule_id].severity


def summary(rule_id: str) -> str:
    if rule_id in BUILTIN:
        return BUILTIN[rule_id][1]
    return RULES[rule_id].summary


def run(content: dict[str, Any]) -> list[Finding]:
    """Findings of every rule on one TFJob object, at default severity."""
    reps = model.replicas(content)
    findings = []
    for item in RULES.values():
        for path, message in item.check(content, reps):
            findings.append(Finding(item.id, item.severity, message, path))
    return findings


# --------------------------------------------------------------------------- metadata

_DNS1035 = re.compile(r"^[a-z]([-a-z0-9]*[a-z0-9])?$")


@rule(
    "deprecated-api-version",
    Severity.ERROR,
    "TFJob API versions other than kubeflow.org/v1 are not served by training-operator v1.9.",
)
def _deprecated_api_version(job: dict[str, Any], reps: list[Replica]) -> Iterator[tuple[str, str]]:
    version = job.get("apiVersion")
    if version in model.LEGACY_API_VERSIONS:
        yield (
            "$.apiVersion",
            (
                f"{version} is not served by training-operator v1.9: run `tfjob-kit convert` to "
                "get "
                "a kubeflow.org/v1 TFJob"
            ),
        )


@rule(
    "name-invalid",
    Severity.ERROR,
    "metadata.name must be a DNS-1035 label (the operator's webhook rejects anything else).",
)
def _name_invalid(job: dict[str, Any], reps: list[Replica]) -> Iterator[tuple[str, str]]:
    meta = as_dict(job.get("metadata"))
    name = meta.get("name")
    if isinstance(name, str):
        if len(name) > 63:
            yield "$.metadata.name", f"name is {len(name)} characters; at most 63 are allowed"
        elif not _DNS1035.match(name):
            yield (
                "$.metadata.name",
                (
                    f"{name!r} is not a DNS-1035 label: use lower-case letters, digits and '-', "
                    "start with a letter and end with a letter or digit"
                ),
            )
    generate = meta.get("generateName")
    if (
        name is None
        and isinstance(generate, str)
        and generate
        and not _DNS1035.match(generate + "x")
    ):
        yield (
            "$.metadata.generateName",
            (
                f"{generate!r} does not make DNS-1035 names: use lower-case letters, digits "
                "and '-', starting with a letter"
            ),
        )


@rule(
    "generate-name-only",
    Severity.WARNING,
    "generateName without name works with `kubectl create` only.",
)
def _generate_name_only(job: dict[str, Any], reps: list[Replica]) -> Iterator[tuple[str, str]]:
    meta = as_dict(job.get("metadata"))
    if not meta.get("name") and meta.get("generateName"):
        yield (
            "$.metadata",
            (
                "only generateName is set: `kubectl apply`, server-side apply and Ansible need "
                "metadata.name, and every `kubectl create` makes another job; set metadata.name"
            ),
        )


@rule(
    "pod-name-too-long",
    Severity.ERROR,
    "Pod and Service names <job>-<type>-<index> must fit in 63 characters.",
)
def _pod_name_too_long(job: dict[str, Any], reps: list[Replica]) -> Iterator[tuple[str, str]]:
    name = model.job_name(job)
    if not name or len(name) > 63:
        return
    for replica in reps:
        if replica.count < 1:
            continue
        longest = model.pod_name(name, replica.type, replica.count - 1)
        if len(longest) > 63:
            spare = 63 - (len(longest) - len(name))
            yield (
                replica.path,
                (
                    f"pod/service name {longest!r} is {len(longest)} characters (max 63): the "
                    f"operator cannot create its Service and the job hangs; shorten the job name "
                    f"to at most {max(spare, 0)} characters"
                ),
            )


# --------------------------------------------------------------------------- replica types


@rule(
    "replica-type-unknown",
    Severity.ERROR,
    "Replica types are Chief, Master, PS, Worker and Evaluator.",
)
def _replica_type_unknown(job: dict[str, Any], reps: list[Replica]) -> Iterator[tuple[str, str]]:
    for replica in reps:
        if not replica.known:
            yield (
                replica.path,
                (
                    f"unknown replica type {replica.key!r}: the operator would still create pods "
                    "for it and put it in TF_CONFIG; use Chief, PS, Worker or Evaluator"
                ),
            )


@rule(
    "replica-type-case",
    Severity.WARNING,
    "Replica types should be spelled Chief, Master, PS, Worker, Evaluator.",
)
def _replica_type_case(job: dict[str, Any], reps: list[Replica]) -> Iterator[tuple[str, str]]:
    for replica in reps:
        if replica.known and replica.key != replica.type:
            yield (
                replica.path,
                (
                    f"replica type {replica.key!r} should be spelled {replica.type!r} (the "
                    "operator "
                    "canonicalises it, but webhook checks and tools compare it as written)"
                ),
            )


@rule(
    "replica-type-duplicate", Severity.ERROR, "Two replica types that differ only in case collide."
)
def _replica_type_duplicate(job: dict[str, Any], reps: list[Replica]) -> Iterator[tuple[str, str]]:
    seen: dict[str, str] = {}
    for replica in reps:
        if replica.known:
            if replica.type in seen:
                yield (
                    replica.path,
                    (
                        f"{replica.key!r} and {seen[replica.type]!r} are the same replica type "
                        f"({replica.type}); keep one"
                    ),
                )
            else:
                seen[replica.type] = replica.key


@rule("chief-multiple", Severity.ERROR, "At most one Chief or Master replica type.")
def _chief_multiple(job: dict[str, Any], reps: list[Replica]) -> Iterator[tuple[str, str]]:
    chiefs = [r for r in reps if r.type in model.CHIEF_TYPES]
    if len(chiefs) > 1:
        names = " and ".join(repr(r.key) for r in chiefs)
        yield chiefs[1].path, f"{names} both define the chief: keep only Chief"


@rule("chief-replicas", Severity.ERROR, "Chief/Master must have exactly one replica.")
def _chief_replicas(job: dict[str, Any], reps: list[Replica]) -> Iterator[tuple[str, str]]:
    for replica in reps:
        if replica.type in model.CHIEF_TYPES and replica.count > 1:
            yield (
                replica.path + ".replicas",
                (
                    f"{replica.key} has {replica.count} replicas; TensorFlow has exactly one "
                    "chief: "
                    "set replicas: 1 and add Workers instead"
                ),
            )


@rule("evaluator-replicas", Severity.ERROR, "Evaluator must have at most one replica.")
def _evaluator_replicas(job: dict[str, Any], reps: list[Replica]) -> Iterator[tuple[str, str]]:
    for replica in reps:
        if replica.type == "Evaluator" and replica.count > 1:
            yield (
                replica.path + ".replicas",
                (
                    f"Evaluator has {replica.count} replicas; TensorFlow runs a single evaluator: "
                    "set replicas: 1"
                ),
            )


@rule("master-legacy", Severity.INFO, "Master is the legacy name of Chief.")
def _master_legacy(job: dict[str, Any], reps: list[Replica]) -> Iterator[tuple[str, str]]:
    for replica in reps:
        if replica.type == "Master":
            yield (
                replica.path,
                (
                    "Master is the legacy name of Chief; TF_CONFIG will say 'master'. Prefer Chief "
                    "unless your code reads 'master'"
                ),
            )


@rule("replicas-zero", Severity.WARNING, "A replica type with replicas: 0 creates no pods.")
def _replicas_zero(job: dict[str, Any], reps: list[Replica]) -> Iterator[tuple[str, str]]:
    for replica in reps:
        if replica.spec.get("replicas") == 0:
            yield (
                replica.path + ".replicas",
                (f"{replica.key} has replicas: 0 and creates no pods; remove it or set a count"),
            )


@rule(
    "no-success-decider",
    Severity.ERROR,
    "A job needs a Chief/Master or Worker: nothing else can make it succeed.",
)
def _no_success_decider(job: dict[str, Any], reps: list[Replica]) -> Iterator[tuple[str, str]]:
    if reps and not model.success_decider(job)[1]:
        yield (
            "$.spec.tfReplicaSpecs",
            (
                "no Chief, Master or Worker with replicas > 0: PS and Evaluator never decide "
                "success, so the job would run forever; add a Worker or a Chief"
            ),
        )


@rule(
    "success-policy-without-workers",
    Severity.ERROR,
    "successPolicy AllWorkers needs Worker replicas.",
)
def _success_policy(job: dict[str, Any], reps: list[Replica]) -> Iterator[tuple[str, str]]:
    spec = as_dict(job.get("spec"))
    if spec.get("successPolicy") == "AllWorkers" and not any(
        r.type == "Worker" and r.count > 0 for r in reps
    ):
        yield "$.spec.successPolicy", "successPolicy AllWorkers without Worker replicas"


# --------------------------------------------------------------------------- containers


@rule("containers-missing", Severity.ERROR, "Every replica template needs containers.")
def _containers_missing(job: dict[str, Any], reps: list[Replica]) -> Iterator[tuple[str, str]]:
    for replica in reps:
        if not replica.containers:
            where = replica.path + (".template.spec" if replica.template else "")
            yield where, f"{replica.key} has no containers: add a container named 'tensorflow'"


@rule(
    "tensorflow-container-missing",
    Severity.ERROR,
    "Every replica needs a container named 'tensorflow' (TF_CONFIG goes there).",
)
def _tensorflow_missing(job: dict[str, Any], reps: list[Replica]) -> Iterator[tuple[str, str]]:
    for replica in reps:
        if replica.containers and replica.tensorflow_container() is None:
            names = [c.get("name") for c in replica.containers if isinstance(c, dict)]
            yield (
                replica.path + ".template.spec.containers",
                (
                    f"no container named 'tensorflow' in {replica.key} (found {names}): the "
                    "webhook "
                    "rejects the job, and the operator injects TF_CONFIG only there; rename the "
                    "training container"
                ),
            )


@rule("image-missing", Severity.ERROR, "Every container needs an image.")
def _image_missing(job: dict[str, Any], reps: list[Replica]) -> Iterator[tuple[str, str]]:
    for replica in reps:
        for path, container in replica.all_containers:
            image = container.get("image")
            if image is None or (isinstance(image, str) and not image.strip()):
                yield path + ".image", f"container {container.get('name')!r} has no image"


_PLACEHOLDER = re.compile(
    r"[<>]|\$\{|\$\(|\{\{|your[-_]|YOUR[-_]|changeme|CHANGEME|REPLACE|<none>|TODO", re.I
)


@rule("image-placeholder", Severity.ERROR, "The image is a placeholder left from a tutorial.")
def _image_placeholder(job: dict[str, Any], reps: list[Replica]) -> Iterator[tuple[str, str]]:
    for replica in reps:
        for path, container in replica.all_containers:
            image = container.get("image")
            if isinstance(image, str) and _PLACEHOLDER.search(image):
                yield (
                    path + ".image",
                    (
                        f"image {image!r} looks like a placeholder: put the registry, repository "
                        "and tag of your training image here"
                    ),
                )


@rule("image-latest", Severity.WARNING, "Images should be pinned to a tag or digest.")
def _image_latest(job: dict[str, Any], reps: list[Replica]) -> Iterator[tuple[str, str]]:
    for replica in reps:
        for path, container in replica.all_containers:
            image = container.get("image")
            if not isinstance(image, str) or not image or _PLACEHOLDER.search(image):
                continue
            if "@" in image:
                continue
            last = image.rsplit("/", 1)[-1]
            tag = last.split(":", 1)[1] if ":" in last else ""
            if tag in ("", "latest"):
                yield (
                    path + ".image",
                    (
                        f"image {image!r} is {'untagged' if not tag else ':latest'}: replicas may "
                        "run different code after a push; pin a version tag or a digest"
                    ),
                )


@rule("tf-config-set", Severity.ERROR, "TF_CONFIG is set by the operator, not by hand.")
def _tf_config_set(job: dict[str, Any], reps: list[Replica]) -> Iterator[tuple[str, str]]:
    for replica in reps:
        found = replica.tensorflow_container()
        if found is None:
            continue
        index, container = found
        for env_index, env in enumerate(as_list(container.get("env"))):
            if isinstance(env, dict) and env.get("name") == "TF_CONFIG":
                yield (
                    f"{replica.path}.template.spec.containers[{index}].env[{env_index}]",
                    "TF_CONFIG is injected by the operator for each replica; a hand-set "
                    "value duplicates it and every replica would get the same task: remove it",
                )


@rule("duplicate-container-name", Severity.ERROR, "Container names must be unique in a pod.")
def _duplicate_container(job: dict[str, Any], reps: list[Replica]) -> Iterator[tuple[str, str]]:
    for replica in reps:
        seen: set[str] = set()
        for path, container in replica.all_containers:
            name = container.get("name")
            if isinstance(name, str):
                if name in seen:
                    yield path + ".name", f"container name {name!r} is used twice in {replica.key}"
                seen.add(name)


@rule("duplicate-env", Severity.WARNING, "An environment variable is defined twice.")
def _duplicate_env(job: dict[str, Any], reps: list[Replica]) -> Iterator[tuple[str, str]]:
    for replica in reps:
        for path, container in replica.all_containers:
            seen: set[str] = set()
            for index, env in enumerate(as_list(container.get("env"))):
                name = as_dict(env).get("name")
                if isinstance(name, str):
                    if name in seen:
                        yield (
                            f"{path}.env[{index}]",
                            (f"{name} is defined twice; only the last value takes effect"),
                        )
                    seen.add(name)


# --------------------------------------------------------------------------- resources


def _resources(container: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    resources = as_dict(container.get("resources"))
    return as_dict(resources.get("requests")), as_dict(resources.get("limits"))


@rule(
    "gpu-request-limit-mismatch",
    Severity.ERROR,
    "GPU requests must equal limits (extended resources cannot be overcommitted).",
)
def _gpu_mismatch(job: dict[str, Any], reps: list[Replica]) -> Iterator[tuple[str, str]]:
    for replica in reps:
        for path, container in replica.all_containers:
            requests, limits = _resources(container)
            if model.GPU_RESOURCE not in requests:
                continue
            request = quantity.parse(requests[model.GPU_RESOURCE])
            where = child_path(path + ".resources.requests", model.GPU_RESOURCE)
            if model.GPU_RESOURCE not in limits:
                yield (
                    where,
                    (
                        f"{model.GPU_RESOURCE} is requested but has no limit: set "
                        "resources.limits to the same number (requests may be omitted)"
                    ),
                )
            elif request is not None and request != quantity.parse(limits[model.GPU_RESOURCE]):
                yield (
                    where,
                    (
                        f"{model.GPU_RESOURCE} request {requests[model.GPU_RESOURCE]} "
                        f"differs from limit {limits[model.GPU_RESOURCE]}: they must be "
                        "equal"
                    ),
                )


@rule("gpu-not-integer", Severity.ERROR, "GPUs are whole devices.")
def _gpu_not_integer(job: dict[str, Any], reps: list[Replica]) -> Iterator[tuple[str, str]]:
    for replica in reps:
        for path, container in replica.all_containers:
            for kind, values in zip(("requests", "limits"), _resources(container), strict=True):
                if model.GPU_RESOURCE in values:
                    amount = quantity.parse(values[model.GPU_RESOURCE])
                    if amount is not None and (amount.denominator != 1 or amount < 0):
                        yield (
                            child_path(f"{path}.resources.{kind}", model.GPU_RESOURCE),
                            (
                                f"{values[model.GPU_RESOURCE]!r} GPUs: GPUs are whole devices; use "
                                "a whole number (time-slicing shares a GPU without fractions)"
                            ),
                        )


@rule("gpu-on-ps", Severity.WARNING, "Parameter servers rarely need GPUs.")
def _gpu_on_ps(job: dict[str, Any], reps: list[Replica]) -> Iterator[tuple[str, str]]:
    for replica in reps:
        if replica.type != "PS":
            continue
        for path, container in replica.all_containers:
            limits = _resources(container)[1]
            amount = quantity.parse(limits.get(model.GPU_RESOURCE))
            if amount:
                yield (
                    child_path(path + ".resources.limits", model.GPU_RESOURCE),
                    (
                        "PS replicas hold variables and do no compute: the GPU stays idle; remove "
                        "it "
                        "unless your PS really computes"
                    ),
                )


@rule("request-exceeds-limit", Severity.ERROR, "A resource request may not exceed its limit.")
def _request_exceeds(job: dict[str, Any], reps: list[Replica]) -> Iterator[tuple[str, str]]:
    for replica in reps:
        for path, container in replica.all_containers:
            requests, limits = _resources(container)
            for name, value in requests.items():
                if name == model.GPU_RESOURCE or name not in limits:
                    continue
                request, limit = quantity.parse(value), quantity.parse(limits[name])
                if request is not None and limit is not None and request > limit:
                    yield (
                        child_path(path + ".resources.requests", name),
                        (
                            f"request {value} of {name} exceeds its limit {limits[name]}: the API "
                            "server rejects the pods"
                        ),
                    )


# --------------------------------------------------------------------------- policies


@rule(
    "run-policy-misplaced",
    Severity.ERROR,
    "cleanPodPolicy, backoffLimit and friends belong under spec.runPolicy.",
)
def _run_policy_misplaced(job: dict[str, Any], reps: list[Replica]) -> Iterator[tuple[str, str]]:
    spec = as_dict(job.get("spec"))
    for name in schema.run_policy_fields():
        if name in spec:
            yield (
                f"$.spec.{name}",
                (
                    f"spec.{name} is silently ignored by training-operator v1: move it to "
                    f"spec.runPolicy.{name}"
                ),
            )


@rule(
    "clean-pod-policy-case",
    Severity.ERROR,
    "cleanPodPolicy is matched exactly: anything but None/Running deletes all pods.",
)
def _clean_pod_policy_case(job: dict[str, Any], reps: list[Replica]) -> Iterator[tuple[str, str]]:
    run_policy = as_dict(as_dict(job.get("spec")).get("runPolicy"))
    value = run_policy.get("cleanPodPolicy")
    if isinstance(value, str):
        exact = {v.lower(): v for v in ("All", "Running", "None")}.get(value.lower())
        if exact is not None and exact != value:
            yield (
                "$.spec.runPolicy.cleanPodPolicy",
                (
                    f"{value!r} must be spelled {exact!r}: the operator compares exactly and "
                    "treats "
                    "any other value as All (every pod is deleted when the job ends)"
                ),
            )


@rule(
    "restart-policy-overridden",
    Severity.WARNING,
    "The replica restartPolicy overwrites the pod template's restartPolicy.",
)
def _restart_overridden(job: dict[str, Any], reps: list[Replica]) -> Iterator[tuple[str, str]]:
    for replica in reps:
        template_policy = replica.pod_spec.get("restartPolicy")
        if isinstance(template_policy, str) and template_policy != replica.pod_restart_policy:
            explicit = "restartPolicy" in replica.spec
            yield (
                f"{replica.path}.template.spec.restartPolicy",
                (
                    f"template restartPolicy {template_policy} is overwritten with "
                    f"{replica.pod_restart_policy} (the replica's "
                    f"{'restartPolicy' if explicit else 'default restartPolicy'} "
                    f"{replica.restart_policy}); set {replica.path[2:]}.restartPolicy: "
                    f"{template_policy} instead"
                ),
            )


@rule(
    "restart-always-decider",
    Severity.WARNING,
    "restartPolicy Always on the replica that decides success: the job never completes.",
)
def _restart_always(job: dict[str, Any], reps: list[Replica]) -> Iterator[tuple[str, str]]:
    deciders = model.success_decider(job)[1]
    for replica in reps:
        if replica.type in deciders and replica.restart_policy == "Always":
            yield (
                replica.path + ".restartPolicy",
                (
                    f"{replica.key} decides success but restarts even after exiting 0, so the job "
                    "never succeeds: use OnFailure or ExitCode"
                ),
            )


# --------------------------------------------------------------------------- scheduling


@rule(
    "min-available-too-large",
    Severity.ERROR,
    "schedulingPolicy.minAvailable larger than the total replica count never schedules.",
)
def _min_available(job: dict[str, Any], reps: list[Replica]) -> Iterator[tuple[str, str]]:
    policy = as_dict(as_dict(as_dict(job.get("spec")).get("runPolicy")).get("schedulingPolicy"))
    minimum = as_int(policy.get("minAvailable"), 0)
    total = sum(r.count for r in reps)
    if reps and minimum > total:
        yield (
            "$.spec.runPolicy.schedulingPolicy.minAvailable",
            (
                f"minAvailable {minimum} exceeds the {total} pods of the job: the gang can never "
                "be "
                f"placed and every pod stays Pending; set it to {total} or less"
            ),
        )


@rule(
    "gang-scheduling-by-hand",
    Severity.WARNING,
    "PodGroup annotations and schedulerName are set by the operator in gang mode.",
)
def _gang_by_hand(job: dict[str, Any], reps: list[Replica]) -> Iterator[tuple[str, str]]:
    for replica in reps:
        annotations = as_dict(as_dict(replica.template.get("metadata")).get("annotations"))
        for key in ("scheduling.k8s.io/group-name", "volcano.sh/task-spec"):
            if key in annotations:
                yield (
                    child_path(f"{replica.path}.template.metadata.annotations", key),
                    (
                        f"{key} is set by the operator when it runs with --gang-scheduler-name; "
                        "a hand-made PodGroup is not cleaned up with the job and can deadlock it: "
                        "use spec.runPolicy.schedulingPolicy instead"
                    ),
                )


@rule(
    "kube-batch-scheduler",
    Severity.WARNING,
    "kube-batch is archived and cannot run on Kubernetes 1.22 or later.",
)
def _kube_batch(job: dict[str, Any], reps: list[Replica]) -> Iterator[tuple[str, str]]:
    for replica in reps:
        if replica.pod_spec.get("schedulerName") == "kube-batch":
            yield (
                f"{replica.path}.template.spec.schedulerName",
                (
                    "kube-batch is archived and waits on APIs removed in Kubernetes 1.22/1.25, so "
                    "these pods would stay Pending: use Volcano (schedulerName volcano, and run "
                    "the "
                    "operator with --gang-scheduler-name=volcano)"
                ),
            )
