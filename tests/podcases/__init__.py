"""Mutated TFJobs for the differential test of the offline pod validation against the real API
server (tests/integration/test_pod_validation_agrees.py).

A :class:`Mutation` changes a replica's pod TEMPLATE (``{"metadata": ..., "spec": ...}``) in
place; each area module (``meta``, ``pod``, ``scheduling``, ``resources``, ``containers``,
``security``, ``volumes``) exports ``MUTATIONS``, invalid and valid variants of the checks of its
area. A :class:`JobMutation` changes the whole TFJob (its metadata, or several replicas at once).
:func:`generate` makes seeded cases: a random realistic base TFJob (PS/Worker/Chief/Evaluator
mixes, gang or not), one mutation (sometimes two) applied to one replica or to the job.
"""

from __future__ import annotations

import copy
import importlib
import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

AREAS = ("meta", "pod", "scheduling", "resources", "containers", "security", "volumes")
IMAGE = "tensorflow/tensorflow:2.15.0"

# A case's verdict is in its name: "ok-" ones are accepted, the others refused, on the window's
# oldest minor. Where a newer minor changes the verdict (a gate turns on, a check tightens), an
# area module's VERDICT_CHANGES says so: {case name: (minor, accepted from that minor on)}.
VerdictChanges = dict[str, tuple[str, bool]]


def accepted(name: str, minor: str | None = None, changes: VerdictChanges | None = None) -> bool:
    """Whether a server of ``minor`` (default: the one the pod checks follow) accepts the case
    ``name``; ``changes``: the verdict changes of cases outside the areas (default: the areas')."""
    from tfjob_kit.podcheck import release
    from tfjob_kit.versions import minor_order

    minor = minor or release.minor()
    change = (verdict_changes() if changes is None else changes).get(name)
    if change is not None and minor_order(minor) >= minor_order(change[0]):
        return change[1]
    return name.startswith("ok-")


def verdict_changes() -> VerdictChanges:
    """Every area's VERDICT_CHANGES."""
    found: VerdictChanges = {}
    for area in AREAS:
        found.update(getattr(importlib.import_module(f"podcases.{area}"), "VERDICT_CHANGES", {}))
    return found


@dataclass(frozen=True)
class Mutation:
    """A change to a pod template ``{"metadata": {...}, "spec": {...}}``, made in place."""

    name: str
    mutate: Callable[[dict[str, Any]], None]


@dataclass(frozen=True)
class JobMutation:
    """A change to a whole TFJob, made in place."""

    name: str
    mutate: Callable[[dict[str, Any]], None]


Template = dict[str, Any]
"""A pod template: ``{"metadata": {...}, "spec": {...}}``."""
Mutate = Callable[[Template], None]


def all_of(*steps: Mutate) -> Mutate:
    """One mutation made of several, applied in order."""

    def mutate(t: Template) -> None:
        for step in steps:
            step(t)

    return mutate


def set_spec(**fields: Any) -> Mutate:
    """Set fields of the pod spec, each case with a copy of its own (the offline validation
    defaults pods in place)."""

    def mutate(t: Template) -> None:
        t.setdefault("spec", {}).update(copy.deepcopy(fields))

    return mutate


def area_mutations() -> dict[str, list[Mutation]]:
    """Each area module's MUTATIONS, for the modules that exist."""
    found: dict[str, list[Mutation]] = {}
    for area in AREAS:
        try:
            module = importlib.import_module(f"{__name__}.{area}")
        except ModuleNotFoundError as exc:
            if exc.name != f"{__name__}.{area}":
                raise
            continue
        found[area] = list(module.MUTATIONS)
    return found


@dataclass
class Case:
    """One generated TFJob: the mutations applied (qualified names: ``<area>: <name>``), where
    (a replica key, ``all replicas`` or ``job``), and the job."""

    id: str
    mutations: tuple[str, ...]
    targets: tuple[str, ...]
    job: dict[str, Any]

    @property
    def mutation(self) -> str:
        """The primary mutation (the one a disagreement is booked to)."""
        return self.mutations[0]


# ----------------------------------------------------------------------------- job mutations


def _job_meta(key: str, value: Any) -> Callable[[dict[str, Any]], None]:
    def mutate(job: dict[str, Any]) -> None:
        meta = job["metadata"]
        if isinstance(value, dict):
            meta.setdefault(key, {}).update(value)
        else:
            meta[key] = value

    return mutate


def _rename(suffix: str) -> Callable[[dict[str, Any]], None]:
    def mutate(job: dict[str, Any]) -> None:
        job["metadata"]["name"] = suffix.replace("{name}", job["metadata"]["name"])

    return mutate


def _every_template(change: Callable[[dict[str, Any]], None]) -> Callable[[dict[str, Any]], None]:
    def mutate(job: dict[str, Any]) -> None:
        for spec in job["spec"]["tfReplicaSpecs"].values():
            change(spec["template"])

    return mutate


def _every_replica(key: str, value: Any) -> Callable[[dict[str, Any]], None]:
    def mutate(job: dict[str, Any]) -> None:
        for spec in job["spec"]["tfReplicaSpecs"].values():
            spec[key] = value

    return mutate


def _lower_keys(job: dict[str, Any]) -> None:
    specs = job["spec"]["tfReplicaSpecs"]
    job["spec"]["tfReplicaSpecs"] = {key.lower(): spec for key, spec in specs.items()}


def _template_label(key: str, value: str) -> Callable[[dict[str, Any]], None]:
    def change(template: dict[str, Any]) -> None:
        template.setdefault("metadata", {}).setdefault("labels", {})[key] = value

    return change


def _owner(**fields: Any) -> Callable[[dict[str, Any]], None]:
    ref = {"apiVersion": "v1", "kind": "ConfigMap", "name": "owner", "uid": "1234", **fields}
    return _job_meta("ownerReferences", [{k: v for k, v in ref.items() if v is not None}])


JOB_MUTATIONS: list[JobMutation] = [
    # valid
    JobMutation(
        "ok-job label with a prefixed key", _job_meta("labels", {"example.com/team": "ml"})
    ),
    JobMutation("ok-job label value of 63", _job_meta("labels", {"v": "a" * 63})),
    JobMutation("ok-job label with an empty value", _job_meta("labels", {"empty": ""})),
    JobMutation(
        "ok-job annotation with a long value", _job_meta("annotations", {"note": "x" * 5000})
    ),
    JobMutation("ok-job name with digits and dashes", _rename("{name}-2-b")),
    JobMutation("ok-job finalizer domain-qualified", _job_meta("finalizers", ["example.com/x"])),
    JobMutation("ok-job owner reference", _owner()),
    JobMutation("ok-replica keys in lower case", _lower_keys),
    JobMutation(
        "ok-every template labelled", _every_template(_template_label("app.kubernetes.io/x", "y"))
    ),
    JobMutation("ok-every replica restartPolicy Always", _every_replica("restartPolicy", "Always")),
    # invalid
    JobMutation("job label key with a space", _job_meta("labels", {"team name": "ml"})),
    JobMutation("job label value of 64", _job_meta("labels", {"v": "a" * 64})),
    JobMutation("job label key with two slashes", _job_meta("labels", {"a/b/c": "x"})),
    JobMutation("job label value with a slash", _job_meta("labels", {"v": "a/b"})),
    JobMutation("job annotation key upper-case prefix", _job_meta("annotations", {"A.com/x": "y"})),
    JobMutation(
        "job annotations over 256 KiB", _job_meta("annotations", {"big": "x" * (256 * 1024)})
    ),
    JobMutation("job name upper case", _rename("Job-{name}")),
    JobMutation("job name ending in a dash", _rename("{name}-")),
    JobMutation("job finalizer with a space", _job_meta("finalizers", ["bad finalizer"])),
    JobMutation("job owner reference without uid", _owner(uid=None)),
    JobMutation("job owner reference without name", _owner(name=None)),
    JobMutation(
        "every template label value invalid", _every_template(_template_label("v", "-bad"))
    ),
    JobMutation(
        "every replica restartPolicy Sometimes", _every_replica("restartPolicy", "Sometimes")
    ),
]


# ----------------------------------------------------------------------------- base jobs

_MIXES = (
    ("Worker",),
    ("PS", "Worker"),
    ("Chief", "Worker"),
    ("Chief", "PS", "Worker"),
    ("Chief", "PS", "Worker", "Evaluator"),
    ("Worker", "Evaluator"),
)
_WORDS = ("mnist", "bert", "resnet", "wide-deep", "ctr", "seq2seq", "gan", "vit")


def _container(rng: random.Random, rtype: str) -> dict[str, Any]:
    container: dict[str, Any] = {
        "name": "tensorflow",
        "image": IMAGE,
        "command": ["python", "/opt/train.py"],
    }
    if rng.random() < 0.4:
        container["args"] = [f"--epochs={rng.randint(1, 50)}"]
    if rng.random() < 0.4:
        container["env"] = [{"name": "MODEL_DIR", "value": "/scratch/model"}]
    if rng.random() < 0.5:
        cpu = rng.choice(("250m", "500m", "1"))
        memory = rng.choice(("256Mi", "512Mi", "1Gi"))
        container["resources"] = {
            "requests": {"cpu": cpu, "memory": memory},
            "limits": {"cpu": cpu, "memory": memory},
        }
        if rtype == "Worker" and rng.random() < 0.3:
            container["resources"]["limits"]["nvidia.com/gpu"] = 1
    return container


def base_job(rng: random.Random, name: str) -> dict[str, Any]:
    """A realistic valid TFJob: a replica mix, a restart policy, containers with or without
    resources, a scratch volume, gang scheduling or not."""
    specs: dict[str, Any] = {}
    for rtype in rng.choice(_MIXES):
        count = (
            1 if rtype in ("Chief", "Evaluator") else rng.randint(1, 3 if rtype == "Worker" else 2)
        )
        spec: dict[str, Any] = {"containers": [_container(rng, rtype)]}
        if rng.random() < 0.3:
            spec["volumes"] = [{"name": "scratch", "emptyDir": {}}]
            spec["containers"][0]["volumeMounts"] = [{"name": "scratch", "mountPath": "/scratch"}]
        template: dict[str, Any] = {"spec": spec}
        if rng.random() < 0.4:
            template["metadata"] = {"labels": {"app": name}}
        specs[rtype] = {
            "replicas": count,
            "restartPolicy": rng.choice(("OnFailure", "Never", "ExitCode")),
            "template": template,
        }
    run_policy: dict[str, Any] = {"cleanPodPolicy": rng.choice(("None", "Running", "All"))}
    if rng.random() < 0.4:
        total = sum(s["replicas"] for s in specs.values())
        run_policy["schedulingPolicy"] = {"minAvailable": total}
    return {
        "apiVersion": "kubeflow.org/v1",
        "kind": "TFJob",
        "metadata": {"name": name},
        "spec": {"runPolicy": run_policy, "tfReplicaSpecs": specs},
    }


# ----------------------------------------------------------------------------- generator


def all_mutations() -> list[tuple[str, Mutation | JobMutation]]:
    """(qualified name, mutation): every area's template mutations and the job mutations."""
    found: list[tuple[str, Mutation | JobMutation]] = [
        (f"{area}: {m.name}", m) for area, items in area_mutations().items() for m in items
    ]
    found += [(f"job: {m.name}", m) for m in JOB_MUTATIONS]
    return found


def _apply(rng: random.Random, job: dict[str, Any], mutation: Mutation | JobMutation) -> str:
    if isinstance(mutation, JobMutation):
        mutation.mutate(job)
        return "job"
    specs = job["spec"]["tfReplicaSpecs"]
    if rng.random() < 0.1:
        for spec in specs.values():
            mutation.mutate(spec["template"])
        return "all replicas"
    key: str = rng.choice(sorted(specs))
    mutation.mutate(specs[key]["template"])
    return key


def _likely_valid(name: str) -> bool:
    """Mutations their authors name as edge values that pass (``ok-...``)."""
    return name.split(": ", 1)[-1].startswith("ok-")


NONE = JobMutation("ok-none (the base job as generated)", lambda job: None)


def generate(count: int = 520, seed: int = 11, extra_valid: int = 300) -> list[Case]:
    """At least `count` cases: every mutation the primary one of one case (so that every check an
    area covers is reached), then `extra_valid` cases drawn from the mutations named as passing
    (``ok-...``) and the unmutated base (so that valid jobs are not a minority), then random
    ones up to `count`; about one case in six gets a second, random, mutation."""
    rng = random.Random(seed)
    mutations = [*all_mutations(), (f"job: {NONE.name}", NONE)]
    passing = [i for i, (name, _) in enumerate(mutations) if _likely_valid(name)]
    order = list(range(len(mutations)))
    rng.shuffle(order)
    order += [rng.choice(passing) for _ in range(extra_valid)]
    while len(order) < count:
        order.append(rng.randrange(len(mutations)))
    cases = []
    for number, index in enumerate(order):
        name = f"g{number:04d}-{rng.choice(_WORDS)}"
        job = base_job(rng, name)
        chosen = [mutations[index]]
        if rng.random() < 0.16:
            chosen.append(mutations[rng.randrange(len(mutations))])
        targets = tuple(_apply(rng, job, m) for _, m in chosen)
        job = copy.deepcopy(job)  # no object shared between replicas or cases
        cases.append(Case(f"case-{number:04d}", tuple(n for n, _ in chosen), targets, job))
    return cases
