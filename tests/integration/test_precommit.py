"""The README's pre-commit configuration, with this repository's .pre-commit-hooks.yaml, in a
real git repository: pre-commit installs the hook from this repository (at HEAD) and runs it."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import yaml

from ._ansible import REPO

PRE_COMMIT = str(Path(sys.executable).parent / "pre-commit")


def readme_config() -> str:
    blocks: list[str] = re.findall(r"```yaml\n(.*?)```", (REPO / "README.md").read_text(), re.S)
    (block,) = [b for b in blocks if b.startswith("# .pre-commit-config.yaml")]
    return block


def git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=repo, capture_output=True, text=True, check=True
    ).stdout.strip()


def test_readme_precommit_config_blocks_a_bad_tfjob(tmp_path: Path) -> None:
    head = git(REPO, "rev-parse", "HEAD")  # pre-commit installs the hook from this commit
    config = yaml.safe_load(readme_config())
    (hook_repo,) = config["repos"]
    hook_repo.update(repo=str(REPO), rev=head)

    repo = tmp_path / "user-repo"
    (repo / "jobs").mkdir(parents=True)
    (repo / "docs").mkdir()
    git(repo, "init", "-q")
    (repo / ".pre-commit-config.yaml").write_text(yaml.safe_dump(config))
    shutil.copy(REPO / "examples" / "tfjobs" / "dist-mnist.yaml", repo / "jobs" / "good.yaml")
    # the classic mistake: cleanPodPolicy under spec instead of spec.runPolicy
    good = (REPO / "examples" / "tfjobs" / "dist-mnist.yaml").read_text()
    bad = good.replace("    cleanPodPolicy: Running\n", "").replace(
        "spec:\n  runPolicy:", "spec:\n  cleanPodPolicy: Running\n  runPolicy:", 1
    )
    (repo / "jobs" / "bad.yaml").write_text(bad)
    (repo / "docs" / "not-checked.yaml").write_text("kind: TFJob\nspec: [broken\n")
    git(repo, "add", "-A")

    # pre-commit's own home (where it installs the hook) in the test's folder, to look into.
    home = tmp_path / "pre-commit-home"

    def pre_commit() -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [PRE_COMMIT, "run", "--all-files"],
            cwd=repo,
            env={**os.environ, "PRE_COMMIT_HOME": str(home)},
            capture_output=True,
            text=True,
            timeout=900,
            check=False,
        )

    first = pre_commit()
    output = first.stdout + first.stderr
    assert first.returncode == 1, output
    assert "tfjob-kit validate" in output and "Failed" in output
    assert "jobs/bad.yaml:1:$.spec.cleanPodPolicy" in output, output
    assert "good.yaml:" not in output.replace("jobs/good.yaml", "")  # no finding for it
    assert "not-checked.yaml" not in output  # `files: ^jobs/`
    # The hook installed tfjob-kit without extras: neither Ansible nor the Kubernetes client.
    (python,) = home.glob("repo*/py_env-*/bin/python")
    probe = "import importlib.util as u; print([u.find_spec(m) is None for m in ('tfjob_kit', "
    probe += "'ansible', 'kubernetes', 'cryptography')])"
    found = subprocess.run([python, "-c", probe], capture_output=True, text=True, check=True)
    assert found.stdout.strip() == "[False, True, True, True]"

    (repo / "jobs" / "bad.yaml").unlink()
    git(repo, "add", "-A")
    second = pre_commit()
    assert second.returncode == 0, second.stdout + second.stderr
    assert "Passed" in second.stdout
