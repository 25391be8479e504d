"""podcheck.volumes against the real API server: every volume mutation of tests/podcases is
dry-run as a Pod (``dryRun=All`` in namespace default), and the server's causes (field and
message, as a multiset) must equal what ``set_defaults``, ``mount_service_account_token`` (the
ServiceAccount admission plugin), ``validate_volumes`` and ``validate_volume_mounts`` say
offline; ``ok-`` mutations must pass on both sides (on the oldest minor: VERDICT_CHANGES says
where a newer one changes the verdict).

The pods are posted as raw JSON over HTTPS: the generated Python client checks bodies against
its models first and would refuse the invalid ones before the server sees them."""

from __future__ import annotations

import copy
from collections.abc import Iterator
from typing import Any

import pytest

from podcases import Mutation, VerdictChanges, accepted
from podcases.volumes import DIVISORS, MUTATIONS, claim, projected, source, vol
from tfjob_kit.podcheck import volumes
from tfjob_kit.podcheck.field import as_listed
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
    return sorted((e.field, e.body) for e in as_listed(errs))


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


# The sources whose gates newer minors turn on, dropped before and checked after: image volumes
# (ImageVolume, from 1.35), clusterTrustBundle and podCertificate projections
# (ClusterTrustBundleProjection, PodCertificateRequest, from 1.37). Named as podcases' are ("ok-":
# accepted on the oldest minor); GATED_CHANGES as an area's VERDICT_CHANGES.
GATED = [
    Mutation(
        "ok-image-volume",
        vol(
            {"name": "model", "image": {"reference": "registry.k8s.io/pause:3.10"}},
            [{"name": "model", "mountPath": "/model", "readOnly": True, "subPath": "a"}],
        ),
    ),
    Mutation(
        "ok-image-volume-any-reference",
        source("model", {"image": {"reference": "Not A Reference!", "pullPolicy": "Never"}}),
    ),
    Mutation(
        "ok-image-volume-pull-policy",
        source("model", {"image": {"reference": "busybox", "pullPolicy": "<Sometimes>"}}),
    ),
    Mutation(
        "image-volume-as-device",
        vol(
            {"name": "model", "image": {"reference": "m:1"}},
            devices=[{"name": "model", "devicePath": "/dev/m"}],
        ),
    ),
    Mutation(
        "ok-cluster-trust-bundle-name",
        source(
            "ca",
            projected(
                {"clusterTrustBundle": {"name": "example.com:signer:b-1", "path": "a.pem"}},
                {"clusterTrustBundle": {"name": "plain", "path": "b.pem", "optional": True}},
            ),
        ),
    ),
    Mutation(
        "ok-cluster-trust-bundle-signer",
        source(
            "ca",
            projected(
                {
                    "clusterTrustBundle": {
                        "signerName": "example.com/signer",
                        "labelSelector": {"matchLabels": {"a": "b"}},
                        "path": "ca.pem",
                    }
                }
            ),
        ),
    ),
    Mutation(
        "ok-cluster-trust-bundle-names",
        source(
            "ca",
            projected(
                {"clusterTrustBundle": {"name": "a/b:c", "path": "x"}},
                {"clusterTrustBundle": {"name": ":x", "path": "y"}},
                {
                    "clusterTrustBundle": {
                        "name": "Bad_Name",
                        "labelSelector": {"matchExpressions": [{"key": "k", "operator": "Exists"}]},
                        "path": "z",
                    }
                },
                {"clusterTrustBundle": {"name": "", "path": ""}},
                {"clusterTrustBundle": {"name": "ok", "path": ""}},
            ),
        ),
    ),
    Mutation(
        "ok-cluster-trust-bundle-signers",
        source(
            "ca",
            projected(
                {"clusterTrustBundle": {"signerName": "", "path": "a"}},
                {"clusterTrustBundle": {"signerName": "Example.com/x", "path": "b"}},
                {
                    "clusterTrustBundle": {
                        "signerName": "example/a.B_c",
                        "labelSelector": {"matchLabels": {"bad key": "v"}},
                        "path": "c",
                    }
                },
                {"clusterTrustBundle": {"signerName": "a.b/c/d", "path": "/abs"}},
                {"clusterTrustBundle": {"path": "d"}},
                {"clusterTrustBundle": {}},
                {
                    "clusterTrustBundle": {
                        "name": "n",
                        "signerName": "example.com/s",
                        "labelSelector": {"matchLabels": {"z": "1", "a": "<2>"}},
                        "optional": False,
                        "path": "../e",
                    }
                },
                {"clusterTrustBundle": {"signerName": "x" * 250 + ".com/s", "path": "f"}},
            ),
        ),
    ),
    Mutation(
        "ok-cluster-trust-bundle-beside-secret",
        source(
            "ca",
            projected({"clusterTrustBundle": {"name": "x", "path": "a"}, "secret": {"name": "s"}}),
        ),
    ),
    Mutation(
        "ok-pod-certificate",
        source(
            "cert",
            projected(
                {
                    "podCertificate": {
                        "signerName": "example.com/signer",
                        "keyType": "ED25519",
                        "credentialBundlePath": "creds.pem",
                        "maxExpirationSeconds": 3600,
                        "userAnnotations": {"Example.com/Team": "ml"},
                    }
                }
            ),
        ),
    ),
    Mutation(
        "ok-pod-certificate-kubernetes-signer",
        source(
            "cert",
            projected(
                {
                    "podCertificate": {
                        "signerName": "kubernetes.io/kube-apiserver-client-pod",
                        "keyType": "RSA3072",
                        "credentialBundlePath": "creds",
                        "keyPath": "/key",
                        "certificateChainPath": "../chain",
                        "maxExpirationSeconds": 86401,
                    }
                },
                {
                    "podCertificate": {
                        "signerName": "example.com/s",
                        "keyType": "ECDSAP256",
                        "keyPath": "k",
                        "maxExpirationSeconds": 91 * 86400 + 1,
                    }
                },
            ),
        ),
    ),
    Mutation(
        "ok-pod-certificate-bad-fields",
        source(
            "cert",
            projected(
                {
                    "podCertificate": {
                        "signerName": "x",
                        "keyType": "<DSA>",
                        "maxExpirationSeconds": 100,
                        "userAnnotations": {
                            "NoPrefix": "a",
                            "a/b/c": "b",
                            "": "c",
                            "example.com/Bad Name": "d",
                        },
                    }
                },
                {
                    "podCertificate": {
                        "keyPath": "k",
                        "userAnnotations": {"example.com/big": "x" * (256 * 1024)},
                    }
                },
            ),
        ),
    ),
    Mutation(
        "ok-pod-certificate-duplicate-paths",
        source(
            "cert",
            projected(
                {"secret": {"name": "s", "items": [{"key": "a", "path": "tls.key"}]}},
                {
                    "podCertificate": {
                        "signerName": "example.com/s",
                        "keyType": "RSA4096",
                        "keyPath": "tls.key",
                        "certificateChainPath": "tls.key",
                    }
                },
            ),
        ),
    ),
]

GATED_CHANGES: VerdictChanges = {
    "ok-image-volume-pull-policy": ("1.35", False),
    "ok-cluster-trust-bundle-names": ("1.37", False),
    "ok-cluster-trust-bundle-signers": ("1.37", False),
    "ok-cluster-trust-bundle-beside-secret": ("1.37", False),
    "ok-pod-certificate-kubernetes-signer": ("1.37", False),
    "ok-pod-certificate-bad-fields": ("1.37", False),
    "ok-pod-certificate-duplicate-paths": ("1.37", False),
}


@pytest.mark.parametrize("mutation", GATED, ids=[m.name for m in GATED])
def test_gated_sources_as_the_server_says(dry_run: PodDryRun, mutation: Mutation) -> None:
    pod = pod_of(mutation)
    server = dry_run.causes(pod)
    assert offline(pod) == server
    assert (not server) == accepted(mutation.name, changes=GATED_CHANGES), server
    assert sorted((e.field, e.body) for e in validate_pod(pod)) == server
