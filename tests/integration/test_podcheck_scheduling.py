"""podcheck.scheduling and podcheck.resources against the real API server: every mutation of
tests/podcases/scheduling.py and tests/podcases/resources.py is dry-run as a Pod (``dryRun=All``
in namespace default), and the server's causes (field and message, as a multiset) must equal
what ``resources.set_defaults``, ``validate_scheduling``, ``validate_pod_resources`` and
``validate_container_resources`` say offline; ``ok-`` mutations pass on both sides. A quantity
the decoder refuses fails the whole request (400, no causes): offline it is one
``resource.ParseQuantity`` error whose detail ends the server's message.

For the pods the server accepts, the resource lists it returns (defaulted and rounded, each
quantity as ``Quantity.String`` prints it) must be what ``set_defaults`` and ``read_quantity``
make of the template's.

The pods are posted as raw JSON (``_dryrun``): the generated Python client's models would refuse
the invalid ones before the server sees them."""

from __future__ import annotations

import copy
import random
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from podcases import Mutation, accepted
from podcases.resources import MUTATIONS as RESOURCES
from podcases.scheduling import MUTATIONS as SCHEDULING
from tfjob_kit.podcheck import resources, scheduling
from tfjob_kit.podcheck.field import FieldError, as_listed

from ._cluster import Cluster
from ._dryrun import DECODE, Causes, PodDryRun

CASES: list[Mutation] = [*SCHEDULING, *RESOURCES]
BASE: dict[str, Any] = {
    "metadata": {"labels": {"app": "podcheck"}},
    "spec": {"containers": [{"name": "tensorflow", "image": "tensorflow/tensorflow:2.15.0"}]},
}
Answer = tuple[Causes, dict[str, Any]]


def _requests(resource: str, text: str) -> Any:
    """Request ``text`` of ``resource``; a limit too where the server wants one."""

    def mutate(t: dict[str, Any]) -> None:
        limits = {resource: text} if not resources.is_overcommit_allowed(resource) else None
        t["spec"]["containers"][0]["resources"] = {"requests": {resource: text}} | (
            {"limits": limits} if limits else {}
        )

    return mutate


def pod_of(mutation: Mutation, index: int) -> dict[str, Any]:
    template = copy.deepcopy(BASE)
    mutation.mutate(template)
    meta = {"name": f"podcheck-sched-{index}", **template["metadata"]}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": template["spec"]}


def offline_errors(pod: dict[str, Any]) -> list[FieldError]:
    spec = copy.deepcopy(pod["spec"])
    resources.set_defaults(spec)
    path = ("spec",)
    errs = scheduling.validate_scheduling(spec, path, pod["metadata"].get("labels"))
    errs.extend(resources.validate_pod_resources(spec, path))
    claims = resources.pod_claim_names(spec)
    for key in ("containers", "initContainers"):
        for i, container in enumerate(spec.get(key, [])):
            errs.extend(resources.validate_container_resources(container, claims, (*path, key, i)))
    return as_listed(errs)


@pytest.fixture(scope="module")
def answers(cluster: Cluster) -> Iterator[dict[str, tuple[dict[str, Any], Answer]]]:
    pods = [pod_of(case, i) for i, case in enumerate(CASES)]
    with PodDryRun(cluster.kubeconfig) as dry_run, ThreadPoolExecutor(8) as pool:
        got = list(pool.map(dry_run.answer, copy.deepcopy(pods)))
    yield {case.name: (pod, answer) for case, pod, answer in zip(CASES, pods, got, strict=True)}


def test_case_names_are_unique() -> None:
    names = [case.name for case in CASES]
    assert len(names) == len(set(names))


@pytest.mark.parametrize("case", CASES, ids=[case.name for case in CASES])
def test_same_errors_as_the_server(
    answers: dict[str, tuple[dict[str, Any], Answer]], case: Mutation
) -> None:
    pod, (server, _stored) = answers[case.name]
    errs = offline_errors(pod)
    decode = [e for e in errs if e.origin == "resource.ParseQuantity"]
    if server and server[0][0] == DECODE:
        assert len(server) == 1 and decode, (server, errs)
        assert any(server[0][1].endswith(e.detail) for e in decode), (server, decode)
    else:
        assert not decode, decode
        assert sorted((e.field, e.body) for e in errs) == server
    assert (not server) == accepted(case.name), server


def test_both_verdicts_are_covered(answers: dict[str, tuple[dict[str, Any], Answer]]) -> None:
    refused = sum(1 for _pod, (server, _stored) in answers.values() if server)
    accepted = len(answers) - refused
    assert refused >= 150 and accepted >= 60, (refused, accepted)


def _printed(items: Any) -> dict[str, str] | None:
    """A resource list as the server prints it: each quantity's String."""
    if items is None:
        return None
    out: dict[str, str] = {}
    for name, value in items.items():
        quantity = resources.read_quantity(value)
        assert quantity is not None, (name, value)
        out[name] = quantity.string()
    return out


def _lists(spec: dict[str, Any]) -> dict[str, Any]:
    found: dict[str, Any] = {"overhead": spec.get("overhead")}
    pod_level = spec.get("resources") or {}
    for kind in ("limits", "requests"):
        found[f"pod.{kind}"] = pod_level.get(kind)
    for key in ("initContainers", "containers"):
        for container in spec.get(key, []):
            for kind in ("limits", "requests"):
                found[f"{key}.{container['name']}.{kind}"] = (container.get("resources") or {}).get(
                    kind
                )
    return found


def test_resource_defaults_and_quantity_strings(
    answers: dict[str, tuple[dict[str, Any], Answer]],
) -> None:
    compared = 0
    for name, (pod, (server, stored)) in answers.items():
        if server:
            continue
        spec = copy.deepcopy(pod["spec"])
        resources.set_defaults(spec)
        ours = {k: _printed(v) for k, v in _lists(spec).items()}
        theirs = {k: v or None for k, v in _lists(stored["spec"]).items()}
        ours = {k: v or None for k, v in ours.items()}
        assert ours == theirs, name
        compared += sum(len(v) for v in ours.values() if v)
    assert compared >= 60


def _random_quantities(seed: int, count: int) -> list[str]:
    """Quantity spellings from every part of resource.Quantity's grammar, and a little past it."""
    rng = random.Random(seed)
    suffixes = ["", "", "m", "n", "u", "k", "M", "G", "T", "P", "E", "Ki", "Mi", "Gi", "Ti"]
    suffixes += ["Pi", "Ei", "e3", "e-5", "E2", "e+7", "e-12", "e20", "E-1", "K", "i", "e", "x"]
    out: list[str] = []
    for _ in range(count):
        text = rng.choice(["", "", "", "+", "-"]) + "0" * rng.choice([0, 0, 0, 1, 2])
        text += "".join(rng.choices("0123456789", k=rng.choice([0, 1, 1, 2, 3, 5, 9, 19, 25])))
        if rng.random() < 0.4:
            text += "." + "".join(rng.choices("0123456789", k=rng.choice([0, 1, 2, 3, 7, 12])))
        out.append(text + rng.choice(suffixes))
    return out


RANDOM = [
    Mutation(f"random-{i}-{text}", _requests(resource, text))
    for i, (resource, text) in enumerate(
        zip(
            ["cpu", "memory", "nvidia.com/gpu", "ephemeral-storage"] * 60,
            _random_quantities(1134, 240),
            strict=True,
        )
    )
]


@pytest.fixture(scope="module")
def random_answers(cluster: Cluster) -> Iterator[dict[str, tuple[dict[str, Any], Answer]]]:
    pods = [pod_of(case, i) for i, case in enumerate(RANDOM)]
    with PodDryRun(cluster.kubeconfig) as dry_run, ThreadPoolExecutor(8) as pool:
        got = list(pool.map(dry_run.answer, copy.deepcopy(pods)))
    yield {case.name: (pod, answer) for case, pod, answer in zip(RANDOM, pods, got, strict=True)}


def test_random_quantities_as_the_server(
    random_answers: dict[str, tuple[dict[str, Any], Answer]],
) -> None:
    """Seeded random spellings as requests (limits too for the GPU): the same verdict, causes
    and decode errors, and the same printed values where the server accepts them."""
    verdicts = {"decode": 0, "invalid": 0, "ok": 0}
    for name, (pod, (server, stored)) in random_answers.items():
        errs = offline_errors(pod)
        decode = [e.detail for e in errs if e.origin == "resource.ParseQuantity"]
        if server and server[0][0] == DECODE:
            verdicts["decode"] += 1
            assert decode and server[0][1].endswith(decode[0]), (name, server, decode)
            continue
        assert not decode, (name, decode)
        assert sorted((e.field, e.body) for e in errs) == server, name
        if server:
            verdicts["invalid"] += 1
            continue
        verdicts["ok"] += 1
        spec = copy.deepcopy(pod["spec"])
        resources.set_defaults(spec)
        ours = {k: _printed(v) or None for k, v in _lists(spec).items()}
        assert ours == {k: v or None for k, v in _lists(stored["spec"]).items()}, name
    assert min(verdicts.values()) >= 20, verdicts


class _Placement:
    """Seeded random placement fields built from awkward strings (bad and good label keys and
    values, node names, operators), so that checks combine in ways the named cases do not."""

    GOOD = ("app", "team", "example.com/k", "a" * 63, "k8s.io/" + "b" * 63, "node-1", "1")
    BAD = ("", "a b", "x/", "Example.com/k", "-a", "a" * 64, "Node_1", "_x", "metadata.name")
    OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt", "", "in", "Equal")

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)

    def s(self) -> str:
        return self.rng.choice(self.BAD if self.maybe(0.08) else self.GOOD)

    def maybe(self, p: float) -> bool:
        return self.rng.random() < p

    def expr(self) -> dict[str, Any]:
        operator = self.rng.choice(self.OPERATORS) if self.maybe(0.1) else "Exists"
        out: dict[str, Any] = {"key": self.s(), "operator": operator}
        if self.maybe(0.1):
            out["values"] = [self.s() for _ in range(self.rng.randint(0, 3))]
        elif operator == "Exists" and self.maybe(0.5):
            out["operator"] = self.rng.choice(["In", "NotIn"])
            out["values"] = [self.s()]
        return out

    def selector(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if self.maybe(0.5):
            out["matchLabels"] = {self.s(): self.s() for _ in range(self.rng.randint(0, 2))}
        if self.maybe(0.5):
            out["matchExpressions"] = [self.expr() for _ in range(self.rng.randint(0, 2))]
        return out

    def keys(self) -> list[str]:
        return self.rng.choice([[], [self.s()], ["app"], ["app", "team"], [self.s(), "app"]])

    def term(self) -> dict[str, Any]:
        out: dict[str, Any] = {"topologyKey": "" if self.maybe(0.05) else "kubernetes.io/hostname"}
        if self.maybe(0.8):
            out["labelSelector"] = self.selector()
        if self.maybe(0.3):
            out["namespaces"] = [self.s()]
        if self.maybe(0.3):
            out["namespaceSelector"] = self.selector()
        if self.maybe(0.6):
            out["matchLabelKeys"] = self.keys()
        if self.maybe(0.4):
            out["mismatchLabelKeys"] = self.keys()
        return out

    def weight(self) -> int:
        return self.rng.choice([0, 101, -1]) if self.maybe(0.1) else self.rng.choice([1, 100])

    def spec(self) -> dict[str, Any]:
        rng = self.rng
        spec: dict[str, Any] = {}
        if self.maybe(0.3):
            spec["nodeSelector"] = {self.s(): self.s()}
        affinity: dict[str, Any] = {}
        if self.maybe(0.4):
            terms = [
                {
                    "matchExpressions": [self.expr()],
                    "matchFields": [self.expr()][: rng.randint(0, 1)],
                }
                for _ in range(rng.randint(0, 2))
            ]
            preferred = [
                {"weight": self.weight(), "preference": {"matchExpressions": [self.expr()]}}
            ]
            affinity["nodeAffinity"] = {
                "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": terms},
                "preferredDuringSchedulingIgnoredDuringExecution": preferred,
            }
        for kind in ("podAffinity", "podAntiAffinity"):
            if self.maybe(0.4):
                affinity[kind] = {
                    "requiredDuringSchedulingIgnoredDuringExecution": [self.term()],
                    "preferredDuringSchedulingIgnoredDuringExecution": [
                        {"weight": self.weight(), "podAffinityTerm": self.term()}
                    ],
                }
        spec["affinity"] = affinity
        if self.maybe(0.4):
            spec["tolerations"] = [
                {
                    "key": self.s(),
                    "operator": rng.choice(["Equal", "", "Equal", "In"]),
                    "value": self.s(),
                    "effect": rng.choice(["", "NoSchedule", "NoExecute", "NoExecute", "Never"]),
                    **({"tolerationSeconds": 10} if self.maybe(0.2) else {}),
                }
                for _ in range(rng.randint(1, 2))
            ]
        if self.maybe(0.5):
            spec["topologySpreadConstraints"] = [
                {
                    "maxSkew": rng.choice([0, 1, 2, 3, 4]),
                    "topologyKey": rng.choice(["", "zone", "zone", "kubernetes.io/hostname"]),
                    "whenUnsatisfiable": rng.choice(["DoNotSchedule", "ScheduleAnyway", "Never"]),
                    "labelSelector": self.selector(),
                    "matchLabelKeys": self.keys(),
                    **({"minDomains": rng.choice([0, 2])} if self.maybe(0.4) else {}),
                    **(
                        {"nodeTaintsPolicy": rng.choice(["Honor", "honor"])}
                        if self.maybe(0.3)
                        else {}
                    ),
                }
                for _ in range(rng.randint(1, 2))
            ]
        return spec


def _placement(spec: dict[str, Any], team: str | None) -> Any:
    def mutate(t: dict[str, Any]) -> None:
        t["spec"].update(copy.deepcopy(spec))
        if team:
            t["metadata"]["labels"]["team"] = team

    return mutate


_PLACEMENT = _Placement(2024)
PLACEMENTS = [
    Mutation(f"placement-{i}", _placement(_PLACEMENT.spec(), _PLACEMENT.rng.choice([None, "a"])))
    for i in range(200)
]


def test_random_placements_as_the_server(cluster: Cluster) -> None:
    """Seeded random placement fields: the offline errors are the server's causes, with their
    multiplicity."""
    pods = [pod_of(case, i) for i, case in enumerate(PLACEMENTS)]
    with PodDryRun(cluster.kubeconfig) as dry_run, ThreadPoolExecutor(8) as pool:
        got = list(pool.map(dry_run.answer, copy.deepcopy(pods)))
    refused = 0
    for case, pod, (server, _stored) in zip(PLACEMENTS, pods, got, strict=True):
        assert sorted((e.field, e.body) for e in offline_errors(pod)) == server, case.name
        refused += bool(server)
    assert 20 <= refused <= len(PLACEMENTS) - 20, refused


def _random_resource_specs(seed: int, count: int) -> list[dict[str, Any]]:
    """Pods of 1-3 containers, maybe init containers and sidecars, maybe pod-level resources,
    with random requests and limits: request defaulting, pod-level defaults (hugepage limits,
    requests from the containers' aggregate) and the pod-level consistency checks."""
    rng = random.Random(seed)
    choices: dict[str, list[Any]] = {
        "cpu": ["100m", "0.5", "1", "2", "1500m", "1n", "250m", 3],
        "memory": ["64Mi", "1Gi", "512Mi", "1.5Gi", "100M", "1G"],
        "hugepages-2Mi": ["2Mi", "4Mi", "6Mi"],
        "nvidia.com/gpu": ["1"],
        "ephemeral-storage": ["1Gi", "500Mi"],
    }
    rare = {"hugepages-2Mi", "nvidia.com/gpu"}

    def pick(names: list[str]) -> dict[str, Any]:
        return {
            n: rng.choice(choices[n]) for n in names if rng.random() < (0.15 if n in rare else 0.5)
        }

    def requirements() -> dict[str, Any]:
        out: dict[str, Any] = {}
        for kind in ("limits", "requests"):
            if rng.random() < 0.7:
                out[kind] = pick(list(choices))
        return out

    specs: list[dict[str, Any]] = []
    for _ in range(count):
        spec: dict[str, Any] = {
            "containers": [
                {"name": f"c{j}", "image": "busybox:1.36", "resources": requirements()}
                for j in range(rng.randint(1, 3))
            ]
        }
        if rng.random() < 0.5:
            spec["initContainers"] = [
                {"name": f"i{j}", "image": "busybox:1.36", "resources": requirements()}
                | ({"restartPolicy": "Always"} if rng.random() < 0.4 else {})
                for j in range(rng.randint(1, 3))
            ]
        if rng.random() < 0.7:
            pod_level: dict[str, Any] = {}
            if rng.random() < 0.7:
                pod_level["limits"] = pick(["cpu", "memory", "hugepages-2Mi"])
            if rng.random() < 0.5:
                pod_level["requests"] = pick(["cpu", "memory", "hugepages-2Mi"])
            spec["resources"] = pod_level
        specs.append(spec)
    return specs


def _whole_spec(spec: dict[str, Any]) -> Any:
    def mutate(t: dict[str, Any]) -> None:
        t["spec"] = copy.deepcopy(spec)

    return mutate


RESOURCE_SPECS = [
    Mutation(f"resources-{i}", _whole_spec(spec))
    for i, spec in enumerate(_random_resource_specs(77, 300))
]


def test_random_resource_specs_as_the_server(cluster: Cluster) -> None:
    """Seeded random container, init, sidecar and pod-level resources: the server's causes, and
    for the pods it accepts the resource lists it would store."""
    pods = [pod_of(case, i) for i, case in enumerate(RESOURCE_SPECS)]
    with PodDryRun(cluster.kubeconfig) as dry_run, ThreadPoolExecutor(8) as pool:
        got = list(pool.map(dry_run.answer, copy.deepcopy(pods)))
    accepted = 0
    for case, pod, (server, stored) in zip(RESOURCE_SPECS, pods, got, strict=True):
        assert sorted((e.field, e.body) for e in offline_errors(pod)) == server, case.name
        if server:
            continue
        accepted += 1
        spec = copy.deepcopy(pod["spec"])
        resources.set_defaults(spec)
        ours = {k: _printed(v) or None for k, v in _lists(spec).items()}
        assert ours == {k: v or None for k, v in _lists(stored["spec"]).items()}, case.name
    assert 40 <= accepted <= len(RESOURCE_SPECS) - 40, accepted
