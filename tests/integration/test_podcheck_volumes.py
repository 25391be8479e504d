"""podcheck.volumes against the real API server: every volume mutation of tests/podcases is
dry-run as a Pod (``dryRun=All`` in namespace default), and the server's causes (field and
message, as a multiset) must equal what ``set_defaults``, ``mount_service_account_token`` (the
ServiceAccount admission plugin), ``validate_volumes`` and ``validate_volume_mounts`` say
offline; ``ok-`` mutations must pass on both sides.

The pods are posted as raw JSON over HTTPS: the generated Python client checks bodies against
its models first and would refuse the invalid ones before the server sees them."""

from __future__ import annotations

import copy
from collections.abc import Iterator
from typing import Any

import pytest

from podcases import Mutation, accepted
from podcases.volumes import DIVISORS, MUTATIONS, claim, vol
from tfjob_kit.podcheck import volumes
from tfjob_kit.podcheck.pod import validate_pod

from ._cluster import Cluster
from ._dryrun import Causes, PodDryRun

BASE: dict[str, Any] = {
    "metadata": {"labels": {"app": "podcheck"}},
    "spec": {
        "containers": [
            {
                "name": "tensorflow",
                "image": "tensorflow/tensorflow:2.15.0",
                "volumeMounts": [{"name": "scratch", "mountPath": "/scratch"}],
            }
        ],
        "volumes": [{"name": "scratch", "emptyDir": {}}],
    },
}


@pytest.fixture(scope="module")
def dry_run(cluster: Cluster) -> Iterator[PodDryRun]:
    with PodDryRun(cluster.kubeconfig) as server:
        yield server


def pod_of(mutation: Mutation, name: str = "podcheck-volumes") -> dict[str, Any]:
    template = copy.deepcopy(BASE)
    mutation.mutate(template)
    meta = {"name": name, **template["metadata"]}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": template["spec"]}


def offline(pod: dict[str, Any]) -> Causes:
    spec = copy.deepcopy(pod["spec"])
    volumes.set_defaults(spec)
    volumes.mount_service_account_token(spec)
    valid, errs = volumes.validate_volumes(spec, ("spec",), pod_name=pod["metadata"]["name"])
    for key in ("initContainers", "containers"):
        for i, container in enumerate(spec.get(key, [])):
            errs.extend(volumes.validate_volume_mounts(container, valid, ("spec", key, i)))
    return sorted((e.field, e.body) for e in errs)


@pytest.mark.parametrize(
    "mutation", [*MUTATIONS, *DIVISORS], ids=[m.name for m in [*MUTATIONS, *DIVISORS]]
)
def test_volume_mutation_as_the_server_says(dry_run: PodDryRun, mutation: Mutation) -> None:
    pod = pod_of(mutation)
    server = dry_run.causes(pod)
    assert offline(pod) == server
    assert (not server) == accepted(mutation.name), server
    # and through the whole pod validation, which calls this module's entry points
    assert sorted((e.field, e.body) for e in validate_pod(pod)) == server


# Checks that depend on the pod's name: the claims generic ephemeral volumes make are named
# <pod>-<volume>.
NAMED = [
    ("ok-ephemeral-claim-name-fits", "p" * 200, vol({"name": "v" * 52, **claim()})),
    ("ephemeral-claim-name-too-long", "p" * 200, vol({"name": "v" * 53, **claim()})),
    (
        "pvc-references-ephemeral-claim",
        "trainer-worker-0",
        vol(
            [
                {"name": "scratch", **claim()},
                {
                    "name": "data",
                    "persistentVolumeClaim": {"claimName": "trainer-worker-0-scratch"},
                },
            ]
        ),
    ),
]


@pytest.mark.parametrize(("case", "pod_name", "mutate"), NAMED, ids=[n[0] for n in NAMED])
def test_claim_names_as_the_server_says(
    dry_run: PodDryRun, case: str, pod_name: str, mutate: Any
) -> None:
    pod = pod_of(Mutation(case, mutate), pod_name)
    server = dry_run.causes(pod)
    assert offline(pod) == server
    assert sorted((e.field, e.body) for e in validate_pod(pod)) == server
    assert (not server) == accepted(case), server
