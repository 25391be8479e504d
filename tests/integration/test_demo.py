"""`make demo` end to end (examples/demo.py), twice, on a local cluster of its own.

The first run brings the cluster up, bootstraps it with site.yml, runs the seeds' five jobs and
seed 003's gang story; the second run must reuse everything (cached binaries, the running
cluster, the installed charts: site.yml changes nothing) and succeed again. The demo leaves its
cluster bootstrapped and switches its operator's gang scheduler back and forth, as it does for
users, so it does not run on the session's shared cluster (the run's guard holds that one to
what it was before each test); the test removes its cluster at the end.
"""

from __future__ import annotations

import io
import json
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from snippets import block
from tfjob_kit.cluster import local

from ._ansible import REPO, ansible_env
from ._cluster import Cluster
from .conftest import session_name

JOBS = {
    "dist-mnist (PS/Worker)": ("TFJob dist-mnist", "kubeflow", "PS:1 Worker:2", "Succeeded"),
    "GPU Chief": ("TFJob mnist-gpu", "kubeflow", "Chief:1 PS:1 Worker:2", "Succeeded"),
    "v1beta1 MASTER job, converted": ("TFJob example-tfjob", "kubeflow", "Master:1", "Succeeded"),
    "T9k TensorFlowTrainingJob, converted": (
        "TFJob tensorflow-example",
        "kubeflow",
        "Worker:4",
        "Succeeded",
    ),
    "dist-mnist as a Volcano Job": (
        "Job dist-mnist-volcano",
        "volcano",
        "ps:1 worker:2",
        "Completed",
    ),
    "dist-mnist as a Trainer v2 TrainJob": (
        "TrainJob dist-mnist-trainjob",
        "trainer",
        "ps:1 node:2",
        "Complete",
    ),
}


def demo(cluster: Cluster) -> str:
    assert cluster.name, "the demo runs on an embedded local cluster"
    # README command 1, as it is (the venv exists: make finds it up to date).
    proc = subprocess.run(
        ["make", "demo", f"CLUSTER={cluster.name}", f"BIN={Path(sys.executable).parent}"],
        cwd=REPO,
        env=ansible_env(cluster.kubeconfig),
        capture_output=True,
        text=True,
        timeout=1500,
        check=False,
    )
    output = proc.stdout + proc.stderr
    assert proc.returncode == 0, output[-10000:]
    return output


def cells_of(line: str) -> list[str]:
    """The columns of a table row the demo prints (separated by two spaces or more)."""
    return re.split(r"\s{2,}", line.strip())


def seconds(cell: str) -> float:
    """A duration cell such as '10.4s'."""
    return float(cell.rstrip("s"))


def recaps(output: str) -> list[int]:
    """changed= of each ansible-playbook run, in order (site.yml, then the jobs' playbook)."""
    return [int(m) for m in re.findall(r"^localhost\s+:.*changed=(\d+)", output, re.M)]


def check_summary(output: str) -> None:
    for label, (obj, backend, replicas, result) in JOBS.items():
        row = next((line for line in output.splitlines() if line.startswith(label + "  ")), "")
        cells = cells_of(row)
        assert cells[:5] == [label, obj, backend, replicas, result], row
        assert re.fullmatch(r"\d+s", cells[5]), row  # a measured duration
    received = output.split("TF_CONFIG that dist-mnist-worker-0 received:\n")[1].splitlines()[0]
    tf_config = json.loads(received)
    assert tf_config["task"] == {"type": "worker", "index": 0}
    assert tf_config["cluster"] == {
        "ps": ["dist-mnist-ps-0.tfjob-kit-demo.svc:2222"],
        "worker": [
            "dist-mnist-worker-0.tfjob-kit-demo.svc:2222",
            "dist-mnist-worker-1.tfjob-kit-demo.svc:2222",
        ],
    }
    # The TrainJob's worker 0: the same roles, counts and task, with JobSet's addresses.
    heading = "TF_CONFIG that dist-mnist-trainjob-node-0-0 received:\n"
    converted = json.loads(output.split(heading)[1].splitlines()[0])
    assert converted["task"] == {"type": "worker", "index": 0}
    assert converted["cluster"] == {
        "ps": ["dist-mnist-trainjob-ps-0-0.dist-mnist-trainjob:2222"],
        "worker": [
            "dist-mnist-trainjob-node-0-0.dist-mnist-trainjob:2222",
            "dist-mnist-trainjob-node-0-1.dist-mnist-trainjob:2222",
        ],
    }


def story_rows(output: str, heading: str) -> dict[str, list[str]]:
    block = output.split(f"\n{heading}:\n")[1].split("\n\n")[0].splitlines()
    return {
        cells[0]: cells for cells in (cells_of(line) for line in block if line.startswith("gang-"))
    }


def check_story(output: str) -> None:
    plain = story_rows(output, "default scheduler (no gang)")
    gang = story_rows(output, "Volcano gang scheduling")
    assert set(plain) == set(gang) == {"gang-a", "gang-b"}
    # columns: job, needs, first placed, all placed, finished, result, partly placed, GPU·s
    assert all(row[5] == "Succeeded" for row in gang.values())
    # without gangs a job may also never finish: both jobs partly placed, each waiting for GPUs
    # the other holds
    assert all(row[5] == "Succeeded" or row[5].startswith("stalled") for row in plain.values())
    # without gangs one job sat partly placed, holding GPUs, and said why the rest waited
    stalled = max(plain.values(), key=lambda row: seconds(row[6]))
    assert seconds(stalled[6]) >= 2.0 and int(stalled[7]) > 0
    assert re.search(
        rf"{stalled[0]}: \d of 4 pods placed, holding \d GPUs; the other \d "
        r"Pending: 0/\d nodes are available: .*Insufficient nvidia.com/gpu",
        output,
    ), output.split("\ndefault scheduler (no gang):\n")[1][:3000]
    # with Volcano nothing was partly placed: the second job started after the first finished.
    # A gang's binds are one API call per pod, so two looks in a row may still fall between them
    # on a busy machine; that is well under a second of the job's GPUs, a stall is ten seconds.
    gpus = {name: int(row[1].split(" / ")[1].split()[0]) for name, row in gang.items()}
    assert all(
        seconds(row[6]) < 1.0 and float(row[7]) < gpus[name] for name, row in gang.items()
    ), gang
    first, second = sorted(gang.values(), key=lambda row: seconds(row[2]))
    assert seconds(second[2]) >= seconds(first[3]) + 5.0  # workers run 10 s
    # with Kueue the same, by quota: the second job was admitted (its pods made) once the first
    # had finished, and no GPU was held waiting
    queued = story_rows(output, "Kueue (whole jobs admitted by quota)")
    assert set(queued) == {"gang-a", "gang-b"}
    assert all(row[5] == "Succeeded" and float(row[7]) == 0 for row in queued.values()), queued
    first, second = sorted(queued.values(), key=lambda row: seconds(row[2]))
    assert seconds(second[2]) >= seconds(first[4]) - 1.0  # admitted as the first finished
    assert "With Kueue (a ClusterQueue of 8 GPUs, the cluster's" in output


def check_readme_sample(output: str) -> None:
    """The README shows what `make demo` prints: the same rows, up to the measured times."""
    sample = block("demo-output")
    for shown in sample.split("received:\n")[1:]:
        assert f"received:\n{shown.splitlines()[0]}\n" in output
    for heading, stable in (
        ("", range(5)),
        ("default scheduler (no gang):", (0, 1, 5)),
        ("Volcano gang scheduling:", (0, 1, 5)),
        ("Kueue (whole jobs admitted by quota):", (0, 1, 5)),
    ):
        shown = (sample.split(heading)[1] if heading else sample).split("\n\n")[0]
        actual = output.split(heading)[1].split("\n\n")[0] if heading else output
        rows = [
            cells_of(line)
            for line in shown.splitlines()[2:]
            if line and not line.startswith((" ", "-", "TF_CONFIG", "{"))
        ]
        assert rows, heading
        for row in rows:
            got = next(
                (cells_of(line) for line in actual.splitlines() if line.startswith(row[0] + "  ")),
                [],
            )
            assert [got[i] for i in stable] == [row[i] for i in stable], (heading, row, got)


@pytest.fixture
def demo_cluster() -> Iterator[Cluster]:
    """A name for the demo's own cluster (the demo brings it up), removed at the end."""
    name = session_name("demo")
    try:
        yield Cluster(local.kubeconfig_path(name), name)
    finally:
        local.down(name, out=io.StringIO())


def test_make_demo_runs_end_to_end_and_again(demo_cluster: Cluster) -> None:
    cluster = demo_cluster
    first = demo(cluster)
    check_summary(first)
    check_story(first)
    check_readme_sample(first)
    assert "demo: done in" in first
    # the story's timeline picture, where the demo says (the plot extra is in the test tools)
    said = "The story as a picture (GPUs in use and held idle over time): "
    (picture,) = [line.removeprefix(said) for line in first.splitlines() if line.startswith(said)]
    assert Path(picture).parent == cluster.kubeconfig.parent
    assert Path(picture).read_bytes().startswith(b"\x89PNG")

    second = demo(cluster)
    check_summary(second)
    check_story(second)
    # everything reused: no build, the running cluster, site.yml changes nothing
    assert "[build]" not in second and "cached" in second
    assert recaps(second)[0] == 0, second[-6000:]
    # and the cluster's operator is back to Volcano gang scheduling for whatever comes next
    marker = cluster.get("configmap", "-n", "kube-public", "tfjob-kit-local-cluster")
    assert marker["data"]["gang-scheduler"] == "volcano"
    # and it records what still runs on it (Trainer from site.yml, Kueue from the story), so a
    # restart brings their processes, whose webhooks fail closed, back
    assert marker["data"]["trainer"] and marker["data"]["kueue"], marker["data"]
