"""The CI examples (examples/ci/) hold to the supply-chain and secret-handling rules they teach.

Their steps are run against the local cluster by tests/integration/test_ci_snippets.py; this
module checks what a run cannot show: every action pinned to a full commit SHA (a tag can be
moved to other code), the package pinned to this release, a read-only token except where a job
needs more, the deploy job behind an environment, and no promise that GitLab masks a multi-line
File variable (it cannot).
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path
from typing import Any

import yaml

from snippets import tagged

ROOT = Path(__file__).resolve().parents[2]
GITHUB = ROOT / "examples" / "ci" / "github-actions.yml"
GITLAB = ROOT / "examples" / "ci" / "gitlab-ci.yml"
VERSION = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
# The runtime lock the user's repository keeps (tfjob-kit's requirements/runtime.txt), then the
# package alone.
INSTALL = [
    "pip install --require-hashes -r ci/tfjob-kit-requirements.txt",
    f'pip install --no-deps "tfjob-kit=={VERSION}"',
]
PINNED_USES = re.compile(r"^\s*(?:- )?uses: [\w.-]+/[\w./-]+@[0-9a-f]{40}  # v\d+\.\d+\.\d+$")


def _workflow() -> dict[Any, Any]:
    loaded: dict[Any, Any] = yaml.safe_load(GITHUB.read_text())
    return loaded


def test_every_action_is_pinned_to_a_commit_sha_with_its_release_in_a_comment() -> None:
    lines = [line for line in GITHUB.read_text().splitlines() if "uses:" in line]
    assert len(lines) >= 5
    loose = [line.strip() for line in lines if not PINNED_USES.match(line)]
    assert not loose, f"not pinned to a 40-hex SHA with '# vX.Y.Z': {loose}"


def test_each_action_release_has_one_sha() -> None:
    pins: dict[str, set[str]] = {}
    for line in GITHUB.read_text().splitlines():
        if m := re.search(r"uses: ([\w./-]+)@([0-9a-f]{40})  # (v[\d.]+)", line):
            pins.setdefault(f"{m[1]}@{m[3]}", set()).add(m[2])
    assert pins and all(len(shas) == 1 for shas in pins.values()), pins


def test_the_token_is_read_only_except_for_the_sarif_upload() -> None:
    workflow = _workflow()
    assert workflow["permissions"] == {"contents": "read"}
    jobs = workflow["jobs"]
    assert jobs["validate"]["permissions"] == {"contents": "read", "security-events": "write"}
    for name, job in jobs.items():
        assert "permissions" in job, name
        writes = {k for k, v in job["permissions"].items() if v == "write"}
        assert writes <= ({"security-events"} if name == "validate" else set()), (name, writes)
    for job in jobs.values():  # no job leaves the token in .git/config for later steps
        for step in job["steps"]:
            if step.get("uses", "").startswith("actions/checkout@"):
                assert step["with"]["persist-credentials"] is False


def test_the_job_that_reads_the_kubeconfig_runs_in_an_environment() -> None:
    jobs = _workflow()["jobs"]
    readers = [
        name
        for name, job in jobs.items()
        if any("secrets." in str(step.get("env", "")) for step in job["steps"])
    ]
    assert readers == ["submit"]
    assert jobs["submit"]["environment"]
    gitlab = yaml.safe_load(GITLAB.read_text())
    assert gitlab["submit-tfjobs"]["environment"]


def test_installs_are_hash_checked_and_pinned_to_this_release() -> None:
    """Every dependency from the hashed lock, then the package without its dependencies: pip
    would otherwise resolve them afresh (a constraints file's hashes are not checked)."""
    installs = [
        step["run"].splitlines()
        for job in _workflow()["jobs"].values()
        for step in job["steps"]
        if "pip install" in step.get("run", "")
    ]
    installs.append(
        [
            line
            for line in yaml.safe_load(GITLAB.read_text())["default"]["before_script"]
            if "pip install" in line
        ]
    )
    assert len(installs) == 3
    assert all(lines == INSTALL for lines in installs), installs


def test_the_gitlab_image_is_pinned_by_digest() -> None:
    default = yaml.safe_load(GITLAB.read_text())["default"]
    assert default["image"] == "$PYTHON_IMAGE"
    guard = default["before_script"][0]  # run with a digest and a tag by test_ci_snippets
    assert "@sha256:" in guard and "exit 1" in guard


def test_the_readme_install_is_the_examples() -> None:
    (block,) = [
        body
        for target, body in tagged("test")
        if target.endswith("::test_the_readme_install_is_the_examples")
    ]
    assert [line.split("   #")[0].strip() for line in block.strip().splitlines()] == INSTALL


def test_gitlab_never_calls_the_kubeconfig_file_variable_masked() -> None:
    comment = " ".join(
        line.strip("# ")
        for line in GITLAB.read_text().splitlines()
        if line.lstrip().startswith("#")
    )
    assert "File" in comment and "protected" in comment
    # "masked" only as what GitLab cannot do for it
    assert re.findall(r"\b\w+ \w+ masked\b", comment) == ["cannot be masked"], comment
