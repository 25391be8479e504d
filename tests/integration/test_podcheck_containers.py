"""The container and security context checks of the offline pod validation
(``podcheck.containers``, ``podcheck.security``) against the real API server.

Every mutation of ``tests/podcases/containers.py`` (its divisor and gated cases too) and
``tests/podcases/security.py`` is applied to the usual TFJob replica template; the pod made from
it is created with ``dryRun=All`` in the test cluster (nothing is stored) and validated offline
by ``podcheck.pod.validate_pod``, following the cluster's Kubernetes minor. Both must give the
same verdict and the same errors: the server's causes (field and message) are
the offline errors' fields and bodies. For the pods the server accepts, the defaults it filled
into the containers (pull policy, termination message, port protocols and host ports, probe
timings, handler defaults, the fields of disabled gates it dropped) must be what
``containers.set_defaults`` fills in.

The request goes over plain HTTPS (the kubeconfig's certificates) rather than the Python
client, whose models refuse some of the invalid pods before they are sent."""

from __future__ import annotations

import copy
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from podcases import Mutation
from podcases import containers as container_cases
from podcases import security as security_cases
from tfjob_kit.podcheck import containers
from tfjob_kit.podcheck.pod import validate_pod

from ._cluster import Cluster
from ._dryrun import PodDryRun, causes

CASES: list[Mutation] = [
    *container_cases.MUTATIONS,
    *container_cases.DIVISORS,
    *container_cases.GATED,
    *security_cases.MUTATIONS,
]
NAMESPACE = "default"  # dry runs store nothing; its default ServiceAccount always exists


def _template() -> dict[str, Any]:
    """A replica template as the examples write it, with what the operator adds to the pod."""
    return {
        "metadata": {"labels": {"app": "mnist"}},
        "spec": {
            "restartPolicy": "OnFailure",
            "containers": [
                {
                    "name": "tensorflow",
                    "image": "tensorflow/tensorflow:2.15.0",
                    "command": ["python", "/opt/mnist.py"],
                    "ports": [{"name": "tfjob-port", "containerPort": 2222}],
                    "env": [{"name": "TF_CONFIG", "value": '{"cluster":{}}'}],
                }
            ],
        },
    }


def _pod(case_index: int, case: Mutation) -> dict[str, Any]:
    template = _template()
    case.mutate(template)
    metadata = {**template.get("metadata", {}), "name": f"podcheck-ctr-{case_index}"}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": metadata, "spec": template["spec"]}


Verdicts = dict[str, tuple[dict[str, Any], int, dict[str, Any]]]


@pytest.fixture(scope="module")
def verdicts(cluster: Cluster) -> Iterator[Verdicts]:
    """Each case's pod and the server's answer (status, body), all dry runs in parallel."""
    pods = [_pod(i, case) for i, case in enumerate(CASES)]
    with PodDryRun(cluster.kubeconfig) as server, ThreadPoolExecutor(8) as pool:
        answers = list(pool.map(server, copy.deepcopy(pods)))
    yield {
        case.name: (pod, status, body)
        for case, pod, (status, body) in zip(CASES, pods, answers, strict=True)
    }


def test_case_names_are_unique() -> None:
    names = [case.name for case in CASES]
    assert len(names) == len(set(names))


@pytest.mark.parametrize("case", CASES, ids=[case.name for case in CASES])
def test_same_errors_as_the_server(verdicts: Verdicts, case: Mutation) -> None:
    pod, status, body = verdicts[case.name]
    want = causes(status, body)
    got = sorted((e.field, e.body) for e in validate_pod(copy.deepcopy(pod), namespace=NAMESPACE))
    assert got == want


def test_both_verdicts_are_covered(verdicts: Verdicts) -> None:
    """The cases are worth their name: many pods the server refuses, many it accepts."""
    refused = sum(1 for _pod, status, _body in verdicts.values() if status != 201)
    accepted = len(verdicts) - refused
    assert refused >= 100 and accepted >= 50, (refused, accepted)


def _defaulted(ctr: dict[str, Any]) -> dict[str, Any]:
    """What ``set_defaults`` decides in a container (values the server's JSON omits when zero
    are read as zero)."""

    def probe(p: Any) -> Any:
        if not isinstance(p, dict):
            return None
        http = p.get("httpGet") or {}
        return (
            [p.get(k) or 0 for k in ("timeoutSeconds", "periodSeconds", "successThreshold")],
            p.get("failureThreshold") or 0,
            (http.get("path"), http.get("scheme")),
            (p.get("grpc") or {}).get("service"),
        )

    def hook(h: Any) -> Any:
        return ((h or {}).get("httpGet") or {}).get("scheme") if isinstance(h, dict) else None

    def env(value_from: Any) -> Any:
        if not isinstance(value_from, dict):
            return None
        return (sorted(value_from), (value_from.get("fieldRef") or {}).get("apiVersion"))

    lifecycle = ctr.get("lifecycle")
    return {
        "imagePullPolicy": ctr.get("imagePullPolicy"),
        "terminationMessagePath": ctr.get("terminationMessagePath"),
        "terminationMessagePolicy": ctr.get("terminationMessagePolicy"),
        "ports": [(p.get("protocol"), p.get("hostPort", 0)) for p in ctr.get("ports", [])],
        "probes": [probe(ctr.get(k)) for k in ("livenessProbe", "readinessProbe", "startupProbe")],
        "lifecycle": None
        if lifecycle is None
        else (sorted(lifecycle), hook(lifecycle.get("postStart")), hook(lifecycle.get("preStop"))),
        "env": [env(e.get("valueFrom")) for e in ctr.get("env", [])],
        "restart": (ctr.get("restartPolicy"), ctr.get("restartPolicyRules")),
    }


def test_defaults_as_the_server_fills_them(verdicts: Verdicts) -> None:
    compared = 0
    for name, (pod, status, body) in verdicts.items():
        if status != 201:
            continue
        spec = copy.deepcopy(pod["spec"])
        containers.set_defaults(spec)
        for key in ("initContainers", "containers"):
            ours, theirs = spec.get(key, []), body["spec"].get(key, [])
            assert len(ours) == len(theirs), name
            for mine, server in zip(ours, theirs, strict=True):
                assert _defaulted(mine) == _defaulted(server), (name, key, mine["name"])
                compared += 1
    assert compared >= 50
