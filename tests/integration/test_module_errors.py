"""The failures users hit, through real playbooks: each reads clearly, without a traceback."""

from __future__ import annotations

import copy
from pathlib import Path

import yaml

from ._ansible import PlayResult, run_tasks
from ._cluster import Cluster
from .test_module_tfjob import tfjob


def assert_clean_failure(result: PlayResult, index: int = 0) -> str:
    task = result[index]
    assert task.get("failed"), task
    # ansible-core 2.19 records "(traceback unavailable)" for every fail_json without one.
    assert "module_stderr" not in task, task
    assert "Traceback" not in str(task.get("exception", "")), task
    assert "Traceback" not in result.output
    message: str = task["msg"]
    return message


def test_unreachable_api_server(cluster: Cluster, tmp_path: Path) -> None:
    result = run_tasks(
        tmp_path,
        cluster.kubeconfig,
        [
            {
                "tfjob.kit.tfjob": {
                    "definition": tfjob("x", "default"),
                    "kubeconfig": None,
                    "host": "https://127.0.0.1:1",
                    "validate_certs": False,
                }
            },
            {"tfjob.kit.tfjob_info": {"host": "https://127.0.0.1:1", "validate_certs": False}},
        ],
    )
    for index in (0, 1):
        message = assert_clean_failure(result, index)
        assert message.startswith(
            "cannot reach the Kubernetes API server at https://127.0.0.1:1: "
        ), message
        assert "Connection refused" in message


def test_forbidden_names_verb_and_resource(
    cluster: Cluster, namespace: str, tmp_path: Path
) -> None:
    # A service account that may read TFJobs but not change them.
    token = cluster.service_account_token(
        namespace, "reader", "tfjob-reader", "get,list", "tfjobs.kubeflow.org"
    )
    config = yaml.safe_load(cluster.kubeconfig.read_text())
    server = config["clusters"][0]["cluster"]
    auth = {
        "kubeconfig": None,
        "host": server["server"],
        "api_key": token,
        "ca_cert": server["certificate-authority"],
    }
    result = run_tasks(
        tmp_path,
        cluster.kubeconfig,
        [
            {"tfjob.kit.tfjob_info": {"namespace": namespace, **auth}},
            {"tfjob.kit.tfjob": {"definition": tfjob("denied", namespace), **auth}},
        ],
    )
    assert not result[0].get("failed") and result[0]["jobs"] == []
    message = assert_clean_failure(result, 1)
    assert (
        f"forbidden by RBAC: user 'system:serviceaccount:{namespace}:reader' may not "
        f"'patch' tfjobs.kubeflow.org in namespace '{namespace}'"
    ) in message, message
    assert token not in result.output  # api_key is no_log


def test_conflict_with_another_field_manager(
    cluster: Cluster, namespace: str, tmp_path: Path
) -> None:
    job = tfjob("shared", namespace)
    job["metadata"]["labels"]["team"] = "vision"
    cluster.kubectl(
        "apply",
        "--server-side",
        "--field-manager=other-pipeline",
        "-f",
        "-",
        stdin=yaml.safe_dump(job),
    )
    mine = copy.deepcopy(job)
    mine["metadata"]["labels"]["team"] = "speech"
    result = run_tasks(
        tmp_path,
        cluster.kubeconfig,
        [
            {"tfjob.kit.tfjob": {"definition": mine}},
            {"tfjob.kit.tfjob": {"definition": mine, "force_conflicts": True}},
        ],
    )
    message = assert_clean_failure(result, 0)
    assert "conflict with field manager(s) other-pipeline over .metadata.labels.team" in message, (
        message
    )
    assert "force_conflicts: true" in message
    assert result[1]["changed"] and result[1]["jobs"][0]["action"] == "updated"
    held = cluster.get("tfjob", "shared", "-n", namespace)
    assert held["metadata"]["labels"]["team"] == "speech"


def test_crd_not_installed_names_the_role(bare_cluster: Cluster, tmp_path: Path) -> None:
    result = run_tasks(
        tmp_path,
        bare_cluster.kubeconfig,
        [
            {"tfjob.kit.tfjob": {"definition": tfjob("x", "default")}},
            {"tfjob.kit.tfjob": {"definition": tfjob("x", "default"), "backend": "volcano"}},
            {"tfjob.kit.tfjob_info": {}},
        ],
    )
    for index, role in (
        (0, "tfjob.kit.training_operator"),
        (1, "tfjob.kit.volcano"),
        (2, "tfjob.kit.training_operator"),
    ):
        message = assert_clean_failure(result, index)
        assert (
            f"CRD is not installed on this cluster. Install it with the {role} role" in message
        ), message
