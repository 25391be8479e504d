"""What Trainer v2 and JobSet create for a TrainJob, offline (``trainjob.py``): the pure parts.
tests/integration/test_trainer.py holds the whole against the real controllers' pods."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from tfjob_kit import convert, explain, trainjob
from tfjob_kit.manifests import load_path

ROOT = Path(__file__).resolve().parents[2]
DIST_MNIST = ROOT / "examples" / "tfjobs" / "dist-mnist.yaml"


@pytest.mark.parametrize(
    ("value", "known", "expected"),
    [
        ("$(A)-$(B)", {"A": "1", "B": "2"}, "1-2"),
        ("$(MISSING)", {}, "$(MISSING)"),  # an undefined reference stays as written
        ("$$(A)", {"A": "1"}, "$(A)"),  # $$ escapes
        ("$$$(A)", {"A": "1"}, "$1"),
        ("$A and $(A", {"A": "1"}, "$A and $(A"),
    ],
)
def test_expand_is_kubernetes_expansion(value: str, known: dict[str, str], expected: str) -> None:
    assert trainjob.expand(value, known) == expected


def test_resolve_env_in_order_with_the_downward_api() -> None:
    env = [
        {"name": "LATER", "value": "$(INDEX)"},  # defined after: not expanded
        {
            "name": "INDEX",
            "valueFrom": {"fieldRef": {"fieldPath": "metadata.annotations['idx']"}},
        },
        {"name": "POD", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}},
        {"name": "TEAM", "valueFrom": {"fieldRef": {"fieldPath": "metadata.labels['team']"}}},
        {"name": "BOTH", "value": "$(POD)/$(INDEX)/$(TEAM)"},
    ]
    metadata = {"name": "p", "annotations": {"idx": "3"}, "labels": {"team": "ml"}}
    assert trainjob.resolve_env(env, metadata) == {
        "LATER": "$(INDEX)",
        "INDEX": "3",
        "POD": "p",
        "TEAM": "ml",
        "BOTH": "p/3/ml",
    }


def _converted() -> list[dict[str, Any]]:
    (doc,) = load_path(str(DIST_MNIST))
    docs, _ = convert.to_trainjob(doc.content)
    return docs


def test_trainer_env_is_upserted_into_the_node_container_and_counts_follow_num_nodes() -> None:
    runtime, job = _converted()
    job["spec"]["trainer"] = {
        "numNodes": 3,
        "env": [{"name": "TF_CONFIG", "value": "{}"}, {"name": "EXTRA", "value": "x"}],
    }
    pods = trainjob.pods(job, runtime)
    assert [(p.replicated_job, p.index) for p in pods] == [
        ("ps", 0),
        ("node", 0),
        ("node", 1),
        ("node", 2),
    ]
    node = pods[1].env["node"]
    assert node["TF_CONFIG"] == "{}" and node["EXTRA"] == "x"  # replaced in place, appended
    assert list(node)[-1] == "EXTRA"
    assert pods[0].env["tensorflow"]["TF_CONFIG"] != "{}"  # only the trainer's container
    assert pods[3].address == "dist-mnist-node-0-2.dist-mnist"


def test_the_planned_tf_config_is_explains_for_the_tfjob() -> None:
    runtime, job = _converted()
    (doc,) = load_path(str(DIST_MNIST))
    for pod in trainjob.pods(job, runtime):
        container = "node" if pod.replicated_job == "node" else "tensorflow"
        ours = json.loads(pod.env[container]["TF_CONFIG"])
        kind = "Worker" if pod.replicated_job == "node" else "PS"
        theirs = json.loads(explain.tf_config(doc.content, kind, pod.index) or "")
        assert ours["task"] == theirs["task"]
        assert {k: len(v) for k, v in ours["cluster"].items()} == {
            k: len(v) for k, v in theirs["cluster"].items()
        }


def test_find_runtime_by_kind_name_and_namespace() -> None:
    runtime, job = _converted()
    assert trainjob.find_runtime(job, [runtime]) is runtime
    elsewhere = {**runtime, "metadata": {**runtime["metadata"], "namespace": "other"}}
    assert trainjob.find_runtime(job, [elsewhere]) is None
    cluster_wide = {**job, "spec": {**job["spec"], "runtimeRef": {"name": "dist-mnist"}}}
    assert (
        trainjob.find_runtime(cluster_wide, [runtime]) is None
    )  # the default kind is cluster-wide


def _explain(path: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "tfjob_kit.cli", "explain", str(path)],
        capture_output=True,
        text=True,
        check=False,
    )


def test_explain_a_trainjob(tmp_path: Path) -> None:
    path = tmp_path / "job.yaml"
    path.write_text(yaml.safe_dump_all(_converted()))
    proc = _explain(path)
    assert proc.returncode == 0, proc.stderr
    assert "TrainJob default/dist-mnist on TrainingRuntime dist-mnist: 3 pods" in proc.stdout
    assert "node job 0 index 1: dist-mnist-node-0-1.dist-mnist" in proc.stdout
    assert '"task":{"type":"worker","index":1}' in proc.stdout
    path.write_text(yaml.safe_dump(_converted()[1]))  # the TrainJob alone
    proc = _explain(path)
    assert proc.returncode == 1
    assert "runtime TrainingRuntime 'dist-mnist' is neither in the input" in proc.stderr
    # a TrainJob on the runtime the toolkit ships needs nothing else
    (doc,) = load_path(str(ROOT / "examples" / "tfjobs" / "multiworker.yaml"))
    (job,), _ = convert.to_trainjob(doc.content)
    path.write_text(yaml.safe_dump(job))
    proc = _explain(path)
    assert proc.returncode == 0, proc.stderr
    assert "on ClusterTrainingRuntime tensorflow-multiworker: 3 pods" in proc.stdout
    assert '"task":{"type":"worker","index":2}' in proc.stdout
