"""podcheck.validate_pod against the real API server, for the metadata and pod-level checks
(``tests/podcases/meta.py`` and ``tests/podcases/pod.py``): each mutated template becomes the
Pod the operator makes of it (``operator_objects.operator_pods`` of a one-Worker TFJob), which is
dry-run in namespace default (``dryRun=All``). The server's causes (field and message) must equal
what ``validate_pod`` says, and ``ok-`` mutations must pass on both sides. A few cases change the
Pod itself, for the metadata a template cannot reach (name, generateName, ownerReferences).

The pods are posted as raw JSON: the generated Python client checks bodies against its models
first and would refuse some invalid ones before the server sees them."""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from podcases import Mutation, accepted
from podcases.meta import MUTATIONS as META
from podcases.pod import MUTATIONS as POD
from tfjob_kit import operator_objects
from tfjob_kit.podcheck.pod import validate_pod

from ._cluster import Cluster
from ._dryrun import Causes, PodDryRun

Pod = dict[str, Any]


@pytest.fixture(scope="module")
def dry_run(cluster: Cluster) -> Iterator[PodDryRun]:
    with PodDryRun(cluster.kubeconfig) as server:
        yield server


def operator_pod(mutate: Callable[[dict[str, Any]], None]) -> Pod:
    """The Pod the operator makes for worker 0 of a TFJob whose Worker template is mutated."""
    template: dict[str, Any] = {
        "metadata": {"labels": {"app": "podcheck"}},
        "spec": {"containers": [{"name": "tensorflow", "image": "tensorflow/tensorflow:2.15.0"}]},
    }
    mutate(template)
    job = {
        "apiVersion": "kubeflow.org/v1",
        "kind": "TFJob",
        "metadata": {
            "name": "podcheck",
            "namespace": "default",
            "uid": operator_objects.PLACEHOLDER_UID,
        },
        "spec": {"tfReplicaSpecs": {"Worker": {"replicas": 1, "template": template}}},
    }
    return operator_objects.operator_pods(job)[0][1]


def offline(pod: Pod) -> Causes:
    """validate_pod's errors as the server prints its causes: the field, then the message
    without the field in front (the Status message carries that)."""
    return sorted((e.field, e.message.removeprefix(f"{e.field}: ")) for e in validate_pod(pod))


def agree(server: Causes, mine: Causes, *, messages: bool = True) -> None:
    assert sorted({f for f, _ in mine}) == sorted({f for f, _ in server})
    if messages:
        assert mine == server


CASES = [*META, *POD]


@pytest.mark.parametrize("mutation", CASES, ids=[m.name for m in CASES])
def test_template_mutation_as_the_server_says(dry_run: PodDryRun, mutation: Mutation) -> None:
    pod = operator_pod(mutation.mutate)
    server = dry_run.causes(copy.deepcopy(pod))
    agree(server, offline(pod))
    assert (not server) == accepted(mutation.name), server


def _meta(**fields: Any) -> Callable[[Pod], None]:
    def mutate(pod: Pod) -> None:
        pod["metadata"].update(fields)

    return mutate


def _no_name(**fields: Any) -> Callable[[Pod], None]:
    def mutate(pod: Pod) -> None:
        del pod["metadata"]["name"]
        pod["metadata"].update(fields)

    return mutate


def _owner(**fields: Any) -> dict[str, Any]:
    ref = {"apiVersion": "kubeflow.org/v1", "kind": "TFJob", "name": "podcheck", "uid": "u1"}
    ref.update(fields)
    return {k: v for k, v in ref.items() if v is not None}


# (case, change to the operator's Pod, whether the messages can agree: a generated name has a
# random suffix the server shows in its message)
POD_CASES: list[tuple[str, Callable[[Pod], None], bool]] = [
    ("ok-name with dots", _meta(name="podcheck.worker-0"), True),
    ("ok-name of 253 characters", _meta(name="n" * 253), True),
    ("name of 254 characters", _meta(name="n" * 254), True),
    ("name upper case", _meta(name="Podcheck-Worker-0"), True),
    ("name ending in a dash", _meta(name="podcheck-"), True),
    ("ok-generateName", _no_name(generateName="podcheck-worker-"), True),
    ("ok-generateName of 254 characters, one a dash", _no_name(generateName="g" * 253 + "-"), True),
    ("generateName upper case", _no_name(generateName="Podcheck-"), False),
    ("generateName of 255 characters", _no_name(generateName="g" * 254 + "-"), False),
    ("name missing", _no_name(), True),
    ("ok-namespace from the request", _meta(namespace=None), True),
    ("ok-generation set on create", _meta(generation=-3), True),
    (
        "ok-managedFields written on create",
        _meta(managedFields=[{"operation": "Bogus", "fieldsType": "X", "manager": "a\tb"}]),
        True,
    ),
    ("ok-two owners", _meta(ownerReferences=[_owner(), _owner(kind="Job", uid="u2")]), True),
    (
        "two controllers",
        _meta(ownerReferences=[_owner(controller=True), _owner(name="other", controller=True)]),
        True,
    ),
    ("Event owner", _meta(ownerReferences=[_owner(apiVersion="v1", kind="Event")]), True),
    (
        "owner missing fields",
        _meta(ownerReferences=[{"apiVersion": "", "kind": "", "name": "", "uid": ""}]),
        True,
    ),
    ("owner apiVersion without a version", _meta(ownerReferences=[_owner(apiVersion="a/")]), True),
    ("owner apiVersion a slash", _meta(ownerReferences=[_owner(apiVersion="/")]), True),
    (
        "second owner without a uid",
        _meta(ownerReferences=[_owner(), _owner(kind="Job", uid=None)]),
        True,
    ),
    (
        "owner apiVersion with two slashes",
        _meta(ownerReferences=[_owner(apiVersion="a/b/c")]),
        True,
    ),
]


@pytest.mark.parametrize(("case", "mutate", "messages"), POD_CASES, ids=[c[0] for c in POD_CASES])
def test_pod_metadata_as_the_server_says(
    dry_run: PodDryRun, case: str, mutate: Callable[[Pod], None], messages: bool
) -> None:
    pod = operator_pod(lambda _: None)
    mutate(pod)
    pod["metadata"] = {k: v for k, v in pod["metadata"].items() if v is not None}
    server = dry_run.causes(copy.deepcopy(pod))
    agree(server, offline(pod), messages=messages)
    assert (not server) == accepted(case), server
