"""`tfjob-kit wait` and `tfjob-kit status` against the local cluster's real operator: the wait
ends within seconds with the API server's reason when a job's pods are refused, succeeds with a
job that succeeds, and says what it knows; exit codes a script can use; JSON in the module's
shape; a line per change in a log."""

from __future__ import annotations

import itertools
import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import yaml

from snippets import block

from ._cluster import Cluster
from .test_module_tfjob import tfjob

TFJOB_KIT = str(Path(sys.executable).parent / "tfjob-kit")


def cli(cluster: Cluster, *args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [TFJOB_KIT, *args, "--kubeconfig", str(cluster.kubeconfig)],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def apply(cluster: Cluster, tmp_path: Path, job: dict[str, Any]) -> None:
    """kubectl apply, as a user would: nothing validates the job on the way."""
    path = tmp_path / f"{job['metadata']['name']}.yaml"
    path.write_text(yaml.safe_dump(job))
    cluster.apply_file(path, job["metadata"]["namespace"])


NAME_OF_THIS_TEST = "test_wait_ends_in_seconds_with_the_servers_reason"


def test_wait_ends_in_seconds_with_the_servers_reason(
    cluster: Cluster, namespace: str, tmp_path: Path
) -> None:
    # The pods mount a volume the pod does not define: the API server refuses every pod.
    job = tfjob(
        "mnist",
        namespace,
        workers=1,
        container={"volumeMounts": [{"name": "ckpt", "mountPath": "/c"}]},
    )
    apply(cluster, tmp_path, job)
    started = time.monotonic()
    waited = cli(cluster, "wait", "mnist", "-n", namespace, "--timeout", "300")
    took = time.monotonic() - started
    assert waited.returncode == 1, waited.stdout + waited.stderr
    assert took < 60, took
    reason = 'spec.containers[0].volumeMounts[0].name: Not found: "ckpt"'
    # stderr: the progress (in a log, a line per change), then why the wait failed.
    *progress, said = waited.stderr.splitlines()
    assert said.startswith(f"tfjob-kit wait: TFJob {namespace}/mnist cannot reach ")
    assert reason in said
    assert progress and all(line.startswith(f"TFJob {namespace}/mnist: ") for line in progress)
    # stdout: the job's state and each problem, with what to do.
    assert waited.stdout.startswith(f"TFJob {namespace}/mnist: ")
    assert f"TFJob {namespace}/mnist: FailedCreatePod: " in waited.stdout
    # What the README shows, in its namespace.
    shown = block("test tests/integration/test_cli_jobs.py::" + NAME_OF_THIS_TEST)
    assert waited.stdout == shown.replace("training/", f"{namespace}/")
    # Not a terminal: progress is plain lines on stderr, no cursor movement.
    assert "\x1b[" not in waited.stderr

    # --format json: the module's shape.
    as_json = cli(cluster, "wait", "mnist", "-n", namespace, "--format", "json")
    assert as_json.returncode == 1
    result = json.loads(as_json.stdout)
    assert result["failed"] is True and result["reason"] == "diagnosed"
    assert reason in result["msg"]
    (found,) = result["jobs"]
    assert (found["kind"], found["namespace"], found["name"]) == ("TFJob", namespace, "mnist")
    assert ("FailedCreatePod", True) in {(p["reason"], p["fatal"]) for p in found["problems"]}

    # status says the same, in the server's words, and exits 1.
    status = cli(cluster, "status", "mnist", "-n", namespace)
    assert status.returncode == 1, status.stdout + status.stderr
    assert status.stdout.startswith(f"TFJob {namespace}/mnist: ")
    assert reason in status.stdout and "what to do:" in status.stdout
    assert "events:" in status.stdout and "Warning FailedCreatePod:" in status.stdout


def test_wait_follows_a_job_to_success(cluster: Cluster, namespace: str, tmp_path: Path) -> None:
    apply(cluster, tmp_path, tfjob("fine", namespace, workers=2, chief=True))
    waited = cli(cluster, "wait", "fine", "-n", namespace, "--timeout", "240")
    assert waited.returncode == 0, waited.stdout + waited.stderr
    assert waited.stdout.startswith(f"TFJob {namespace}/fine: Succeeded (")
    assert "Chief 1 succeeded" in waited.stdout
    # In a log, a line per change: the job was seen before it succeeded.
    seen = [line for line in waited.stderr.splitlines() if line.startswith(f"TFJob {namespace}/")]
    assert seen and seen[-1].startswith(f"TFJob {namespace}/fine: Succeeded"), waited.stderr
    assert all(a != b for a, b in itertools.pairwise(seen))  # a line per change

    status = cli(cluster, "status", "fine", "-n", namespace, "--format", "json")
    assert status.returncode == 0, status.stderr
    (job,) = json.loads(status.stdout)["jobs"]
    assert job["phase"] == "Succeeded"
    assert sorted(p["name"] for p in job["pods"]) == [
        "fine-chief-0",
        "fine-worker-0",
        "fine-worker-1",
    ]


def test_exit_codes_for_a_missing_job_and_a_timeout(
    cluster: Cluster, namespace: str, tmp_path: Path
) -> None:
    missing = cli(cluster, "wait", "nowhere", "-n", namespace)
    assert missing.returncode == 1
    assert missing.stderr == f"tfjob-kit wait: TFJob {namespace}/nowhere does not exist\n"
    status = cli(cluster, "status", "nowhere", "-n", namespace)
    assert (status.returncode, status.stdout) == (1, f"TFJob {namespace}/nowhere: not found\n")
    # A job that is still going when the time is up: exit 3, and what each job was doing.
    apply(cluster, tmp_path, tfjob("slow", namespace, workers=1))
    timed_out = cli(cluster, "wait", "slow", "-n", namespace, "--for", "Failed", "--timeout", "2")
    assert timed_out.returncode == 3, timed_out.stdout + timed_out.stderr
    assert timed_out.stderr.splitlines()[-1].startswith(
        f"tfjob-kit wait: timed out after 2s waiting for Failed: TFJob {namespace}/slow is "
    )
    unreachable = subprocess.run(
        [TFJOB_KIT, "wait", "x", "--kubeconfig", str(tmp_path / "none.yaml")],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert unreachable.returncode == 2 and unreachable.stderr.startswith("tfjob-kit: error: ")
