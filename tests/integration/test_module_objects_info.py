"""tfjob.kit.objects_info against the local cluster, side by side with kubernetes.core.k8s_info
(the oracle: the same reads, one module run each, in the same play): the same objects for each
query, in one module run; Secrets without their data; a kind the server does not serve and a
name that is not there read as nothing; a refusal names the query."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ._ansible import run_tasks
from ._cluster import Cluster
from .test_preflight import _kubeconfig_for

SECRET_VALUE = "objects-info-secret-value"


def _queries(namespace: str) -> dict[str, dict[str, Any]]:
    return {
        "by_name": {"kind": "ConfigMap", "namespace": namespace, "name": "one"},
        "by_names": {"kind": "ConfigMap", "namespace": namespace, "names": ["one", "no", "three"]},
        "no_names": {"kind": "ConfigMap", "namespace": namespace, "names": []},
        "missing": {"kind": "ConfigMap", "namespace": namespace, "name": "none"},
        "labelled": {"kind": "ConfigMap", "namespace": namespace, "label_selectors": ["app=oi"]},
        "everywhere": {"kind": "ConfigMap", "label_selectors": ["app=oi", "tier=b"]},
        "by_field": {
            "kind": "ConfigMap",
            "namespace": namespace,
            "field_selectors": ["metadata.name=two"],
        },
        "namespace": {"kind": "Namespace", "name": namespace},
        "crd": {
            "api_version": "apiextensions.k8s.io/v1",
            "kind": "CustomResourceDefinition",
            "name": "tfjobs.kubeflow.org",
        },
        "roles": {
            "api_version": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRole",
            "label_selectors": ["kubernetes.io/bootstrapping=rbac-defaults"],
        },
        "secret": {"kind": "Secret", "namespace": namespace, "name": "creds"},
        "unserved": {"api_version": "example.com/v1", "kind": "Gadget"},
    }


def _as_k8s_info(query: dict[str, Any]) -> list[dict[str, Any]]:
    """The k8s_info tasks that read what the query reads: one, or one per name of ``names``."""
    task = {k: v for k, v in query.items() if k != "names"}
    names = query.get("names", [task.get("name")])
    return [{"kubernetes.core.k8s_info": {**task, "name": name}} for name in names]


def _uids(objects: list[dict[str, Any]]) -> list[str]:
    return sorted(o["metadata"]["uid"] for o in objects)


def test_objects_info_reads_what_k8s_info_reads_in_one_run(
    cluster: Cluster, namespace: str, tmp_path: Path
) -> None:
    for name, labels in (("one", "app=oi,tier=a"), ("two", "app=oi,tier=b"), ("three", "")):
        cluster.kubectl("create", "configmap", name, "-n", namespace, "--from-literal=k=v")
        if labels:
            cluster.kubectl("label", "configmap", name, "-n", namespace, *labels.split(","))
    cluster.kubectl(
        "create", "secret", "generic", "creds", "-n", namespace, f"--from-literal=p={SECRET_VALUE}"
    )
    queries = _queries(namespace)
    tasks = {key: _as_k8s_info(query) for key, query in queries.items()}
    results = run_tasks(
        tmp_path,
        cluster.kubeconfig,
        [
            {"tfjob.kit.objects_info": {"queries": queries}},
            *(task for each in tasks.values() for task in each),
            {"kubernetes.core.k8s_cluster_info": {}},
        ],
    )
    ours, answers, info = results[0], iter(results.results[1:-1]), results.results[-1]
    oracle: dict[str, dict[str, Any]] = {}
    for key, each in tasks.items():  # a query of several names: its reads' objects together
        read = [next(answers) for _ in each]
        oracle[key] = {
            "resources": [o for r in read for o in r.get("resources", [])],
            "api_found": all(r.get("api_found") for r in read),
            "failed": any(r.get("failed") for r in read),
        }
    assert ours.get("failed") is not True, ours
    assert ours["changed"] is False
    assert set(ours["objects"]) == set(queries) == set(ours["api_found"])
    for key, answer in oracle.items():
        assert answer.get("failed") is not True, (key, answer)
        assert _uids(ours["objects"][key]) == _uids(answer["resources"]), key
        assert ours["api_found"][key] == answer["api_found"], key
    # The reads found what the test made, not nothing.
    counted = ("by_name", "by_names", "no_names", "missing", "labelled", "by_field")
    assert [len(ours["objects"][k]) for k in counted] == [1, 2, 0, 0, 2, 1]
    assert [o["metadata"]["name"] for o in ours["objects"]["everywhere"]] == ["two"]
    assert len(ours["objects"]["roles"]) > 10, "the API server's default ClusterRoles"
    assert ours["api_found"]["unserved"] is False
    # Items of a list carry their apiVersion and kind, as one object read by name does.
    for key in ("labelled", "roles", "by_name"):
        assert all(o["apiVersion"] and o["kind"] for o in ours["objects"][key]), key
    # The Secret without its data; kubernetes.core returns it with.
    (secret,) = ours["objects"]["secret"]
    assert "data" not in secret and secret["type"] == "Opaque"
    assert "p" in oracle["secret"]["resources"][0]["data"]
    assert SECRET_VALUE not in json.dumps(ours)
    # The server's version, as k8s_cluster_info reads it (the roles' version checks use it).
    assert ours["server_version"] == info["version"]["server"]["kubernetes"]["gitVersion"]
    assert ours["server_version"].startswith("v1.")


def test_objects_info_names_the_query_the_server_refused(
    cluster: Cluster, namespace: str, tmp_path: Path
) -> None:
    token = cluster.service_account_token(namespace, "reader", "reader", "get,list", "configmaps")
    kubeconfig = _kubeconfig_for(cluster, token, tmp_path / "reader.yaml")
    allowed = {"kind": "ConfigMap", "namespace": namespace}
    results = run_tasks(
        tmp_path,
        kubeconfig,
        [
            {"tfjob.kit.objects_info": {"queries": {"mine": allowed}}},
            {
                "tfjob.kit.objects_info": {
                    "queries": {"mine": allowed, "nodes": {"kind": "Node"}},
                }
            },
            {"tfjob.kit.objects_info": {"queries": {"bad": {"name": "x"}}}},
            {
                "tfjob.kit.objects_info": {
                    "queries": {"both": {"kind": "ConfigMap", "name": "x", "names": ["y"]}}
                }
            },
        ],
    )
    readable, forbidden, malformed, both = results.results
    assert readable.get("failed") is not True, readable
    assert readable["objects"]["mine"], "the namespace's kube-root-ca.crt"
    assert forbidden["failed"] is True
    assert forbidden["msg"].startswith("nodes: reading Node (v1): forbidden by RBAC"), forbidden
    assert f"system:serviceaccount:{namespace}:reader" in forbidden["msg"]
    assert malformed["failed"] is True
    assert malformed["msg"].startswith("queries.bad: missing required arguments: kind"), malformed
    assert both["failed"] is True
    exclusive = "queries.both: parameters are mutually exclusive: name|names"
    assert both["msg"].startswith(exclusive), both
