"""The README's CI pipelines (examples/ci/), run step by step against the local cluster.

A temporary directory stands for the user's repository: ``jobs/`` holds the dist-mnist TFJob.
Each ``run:`` (GitHub Actions) or ``script:`` line (GitLab CI) runs as the CI system would run
it, in bash, with the kubeconfig secret filled with the session cluster's kubeconfig. Steps that
GitHub provides (``uses:``) are not ours to run; the ``pip install`` lines are checked, not run
(this environment has the package, installed from the same lock by ``make venv``, and the
collection on ANSIBLE_COLLECTIONS_PATH as an installed wheel puts it on the Python path).
GitLab's image check runs: a digest passes, a tag is refused.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import yaml

from ._ansible import REPO, ansible_env
from ._cluster import Cluster

# pinned and hashed: tests/unit/test_ci_examples.py
INSTALL = [
    "pip install --require-hashes -r ci/tfjob-kit-requirements.txt",
    'pip install --no-deps "tfjob-kit==0.1.0"',
]
DIGEST = "python:3.11-slim@sha256:" + "0" * 64


def user_repo(cluster: Cluster, tmp_path: Path) -> Path:
    # the pipeline creates the job: none of that name may be left from earlier tests
    cluster.kubectl(
        "delete",
        "tfjob",
        "dist-mnist",
        "-n",
        "default",
        "--ignore-not-found",
        "--cascade=foreground",
    )
    # and none of its pods: an earlier test's job may be gone while the garbage collector still
    # deletes them, and the operator would find the new job's pod names taken
    cluster.wait_for(
        "the pods of an earlier dist-mnist to be gone",
        lambda: (
            not cluster.items(
                "pods", "-n", "default", "-l", "training.kubeflow.org/job-name=dist-mnist"
            )
        ),
        "default",
    )
    repo = tmp_path / "repo"
    (repo / "jobs").mkdir(parents=True)
    shutil.copy(REPO / "examples" / "tfjobs" / "dist-mnist.yaml", repo / "jobs")
    return repo


def run_step(script: str, repo: Path, env: dict[str, str]) -> str:
    proc = subprocess.run(
        ["bash", "-eo", "pipefail", "-c", script],
        cwd=repo,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    output = proc.stdout + proc.stderr
    assert proc.returncode == 0, f"{script}\n{output[-6000:]}"
    return output


def ci_env(cluster: Cluster, **extra: str) -> dict[str, str]:
    env = ansible_env(cluster.kubeconfig)
    for name in ("K8S_AUTH_KUBECONFIG", "ANSIBLE_CONFIG"):  # a CI runner has neither
        env.pop(name, None)
    env["ANSIBLE_COLLECTIONS_PATH"] = str(REPO / ".collections")
    env.update(extra)
    return env


def check_results(cluster: Cluster, repo: Path, outputs: list[str]) -> None:
    assert (repo / "tfjob-kit.sarif").exists() or (repo / "tfjob-kit.xml").exists()
    assert any("dist-mnist: created, Succeeded" in o for o in outputs), outputs[-1][-3000:]
    cluster.kubectl("delete", "tfjob", "dist-mnist", "-n", "default", check=False)


def test_github_actions_workflow(cluster: Cluster, tmp_path: Path) -> None:
    workflow: dict[Any, Any] = yaml.safe_load((REPO / "examples/ci/github-actions.yml").read_text())
    repo = user_repo(cluster, tmp_path)
    runner_temp = tmp_path / "runner-temp"
    runner_temp.mkdir()
    env = ci_env(cluster, GITHUB_WORKSPACE=str(repo), RUNNER_TEMP=str(runner_temp))
    secrets = {"secrets.KUBECONFIG": cluster.kubeconfig.read_text()}
    outputs, ran = [], 0
    for job in ("validate", "submit"):
        for step in workflow["jobs"][job]["steps"]:
            if "uses" in step:
                continue
            if step.get("name") == "Install tfjob-kit":
                assert step["run"].splitlines() == INSTALL
                continue
            step_env = {
                k: re.sub(r"\$\{\{ *([^} ]+) *\}\}", lambda m: secrets[m[1]], str(v))
                for k, v in (step.get("env") or {}).items()
            }
            outputs.append(run_step(step["run"], repo, {**env, **step_env}))
            ran += 1
    assert ran == 3
    assert (runner_temp / "kubeconfig").stat().st_mode & 0o777 == 0o600
    check_results(cluster, repo, outputs)


def test_gitlab_ci_pipeline(cluster: Cluster, tmp_path: Path) -> None:
    pipeline: dict[str, Any] = yaml.safe_load((REPO / "examples/ci/gitlab-ci.yml").read_text())
    guard, *install = pipeline["default"]["before_script"]
    assert install == INSTALL
    assert pipeline["default"]["image"] == "$PYTHON_IMAGE"
    repo = user_repo(cluster, tmp_path)
    run_step(guard, repo, {"PYTHON_IMAGE": DIGEST})
    for tag in ("python:3.11-slim", ""):
        refused = subprocess.run(
            ["bash", "-c", guard],
            env={"PYTHON_IMAGE": tag},
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
        )
        assert refused.returncode == 1 and "by digest" in refused.stderr, refused
    # A File variable: GitLab writes the value to a file and exports its path.
    kubeconfig = tmp_path / "KUBECONFIG"
    kubeconfig.write_text(cluster.kubeconfig.read_text())
    kubeconfig.chmod(0o600)
    env = ci_env(cluster, CI_PROJECT_DIR=str(repo), KUBECONFIG=str(kubeconfig))
    jobs = [
        name for name in pipeline if isinstance(pipeline[name], dict) and "script" in pipeline[name]
    ]
    jobs.sort(key=lambda name: pipeline["stages"].index(pipeline[name]["stage"]))
    assert jobs == ["validate-tfjobs", "submit-tfjobs"]
    outputs = [run_step(line, repo, env) for name in jobs for line in pipeline[name]["script"]]
    check_results(cluster, repo, outputs)
