"""Every snippet of the README is exercised. Each fenced block is preceded by a tag saying how:

* ``cli``: ``tfjob-kit`` commands, run here with the exit code they promise (``# exits N``);
* ``output COMMAND``: sample output; each line appears in what COMMAND prints (run here);
* ``file PATH``: the block is that file, which is tested where it is used;
* ``test PATH::NAME``: the test that runs exactly this;
* ``make``: the two commands, as ``make -n`` shows them and as ``.ci/run`` runs them (``make demo``
  itself is run by tests/integration/test_demo.py);
* ``shell``: run as a script against the local cluster (tests/integration/test_readme_snippets.py);
* ``demo-output``: what ``make demo`` prints, compared by tests/integration/test_demo.py;
* ``layout``: every path it names exists.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from snippets import README, SNIPPETS, tagged

ROOT = Path(__file__).resolve().parents[2]
COMMANDS = [
    line.strip()
    for _, body in tagged("cli")
    for line in body.splitlines()
    if line.strip() and not line.lstrip().startswith("#")
]
KINDS = {"cli", "output", "file", "test", "make", "shell", "demo-output", "layout"}


def run_shell(command: str, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    for name in ("examples", "tests"):
        if not (tmp_path / name).exists():
            (tmp_path / name).symlink_to(ROOT / name)
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    return subprocess.run(
        command, shell=True, cwd=tmp_path, env=env, capture_output=True, text=True, check=False
    )


def test_every_snippet_says_how_it_is_tested() -> None:
    assert len(SNIPPETS) == README.count("```") // 2
    untagged = [body.splitlines()[0] for tag, _, body in SNIPPETS if not tag]
    assert not untagged, f"README blocks without a <!-- snippet: ... --> tag: {untagged}"
    unknown = [tag for tag, _, _ in SNIPPETS if tag.partition(" ")[0] not in KINDS]
    assert not unknown, unknown


def test_readme_has_commands() -> None:
    assert len(COMMANDS) >= 10
    # a cli block holds tfjob-kit commands only (anything else would go untested)
    assert all(re.match(r"(cat .*\| )?tfjob-kit ", c) for c in COMMANDS), COMMANDS


@pytest.mark.parametrize("line", COMMANDS)
def test_readme_command(line: str, tmp_path: Path) -> None:
    command, _, comment = line.partition("#")
    expected = int(m.group(1)) if (m := re.search(r"exits (\d)", comment)) else 0
    result = run_shell(command, tmp_path)
    assert result.returncode == expected, result.stdout + result.stderr


@pytest.mark.parametrize(("command", "body"), tagged("output"))
def test_readme_sample_output(command: str, body: str, tmp_path: Path) -> None:
    result = run_shell(command, tmp_path)
    for line in body.splitlines():
        assert line in result.stdout, f"{line!r} is not in the output of {command}"


@pytest.mark.parametrize(("path", "body"), tagged("file"))
def test_readme_file_snippets_are_the_files(path: str, body: str) -> None:
    assert (ROOT / path).read_text() == body


@pytest.mark.parametrize(("target", "body"), tagged("test"))
def test_readme_snippets_name_a_test_that_exists(target: str, body: str) -> None:
    """pytest collects the test the snippet names, and nothing else (collecting starts no
    cluster)."""
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider", target],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    collected = [line for line in proc.stdout.splitlines() if "::" in line]
    # the test, or each of its parametrized cases
    assert collected and all(c == target or c.startswith(f"{target}[") for c in collected), (
        collected
    )


def make_dry_run(target: str, *variables: str) -> list[str]:
    """The commands `make TARGET` would run (`make -n` runs none of them), also when the tests
    run under make (`make unit`), whose flags a nested make would inherit."""
    env = {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL")}
    proc = subprocess.run(
        ["make", "-n", "--no-print-directory", target, *variables],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.splitlines()


def test_the_two_commands() -> None:
    (body,) = [b for _, b in tagged("make")]
    targets = [line.split()[1] for line in body.splitlines() if line.strip()]
    assert targets == ["demo", "test"]
    # make demo: the main job on the local cluster (the one named by CLUSTER)
    assert make_dry_run("demo", "CLUSTER=readme")[-1].endswith(
        "python examples/demo.py --cluster readme"
    )
    # make test: the checks, the cluster build, then every test (unit and integration: no -m)
    commands = make_dry_run("test")
    assert re.search(r"python -m pytest (-n \d+ |--\S+ |--dist \w+ )*tests$", commands[-1]), (
        commands
    )
    steps = ("pre-commit run --all-files", "tools/sanity.py", "ansible-lint", "cluster build")
    for step in steps:
        assert any(step in command for command in commands[:-1]), (step, commands)


def test_ci_builds_the_cluster_then_runs_make_test(tmp_path: Path) -> None:
    """.ci/run, with make, go and the CLI stubbed to record their arguments: it builds the
    cluster binaries, then runs `make test`, whose test_demo runs `make demo` (on a cluster of
    its own)."""
    (tmp_path / ".ci").mkdir()
    shutil.copy2(ROOT / ".ci" / "run", tmp_path / ".ci" / "run")
    stubs = tmp_path / "stubs"
    (tmp_path / ".venv" / "bin").mkdir(parents=True)
    stubs.mkdir()
    log = tmp_path / "calls"
    for stub in (stubs / "make", stubs / "go", tmp_path / ".venv" / "bin" / "tfjob-kit"):
        stub.write_text(f'#!/bin/sh\necho "{stub.name} $*" >> {log}\n')
        stub.chmod(0o755)
    env = {
        **os.environ,
        "PATH": f"{stubs}{os.pathsep}{os.environ['PATH']}",
        "PYTHON": "python3",
        "TFJOB_KIT_CLUSTER": "readme-demo",
    }
    proc = subprocess.run(
        [str(tmp_path / ".ci" / "run")], env=env, capture_output=True, text=True, check=False
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    makes = [line for line in log.read_text().splitlines() if line.startswith("make ")]
    assert makes == [
        "make cluster-build PYTHON=python3",
        "make test PYTHON=python3",
    ]
    demo_test = (ROOT / "tests" / "integration" / "test_demo.py").read_text()
    assert '["make", "demo", f"CLUSTER={cluster.name}"' in demo_test


def test_shell_snippets_are_valid_bash() -> None:
    """Every ```shell block, however it is tested (run here, or by the test its tag names)."""
    blocks = [body for _, lang, body in SNIPPETS if lang == "shell"]
    assert len(blocks) >= len(tagged("shell")) + 3
    for body in blocks:
        proc = subprocess.run(
            ["bash", "-n"], input=body, capture_output=True, text=True, check=False
        )
        assert proc.returncode == 0, proc.stderr


def test_layout_names_what_exists() -> None:
    (body,) = [b for _, b in tagged("layout")]
    for line in body.splitlines():
        if not line.startswith(" "):
            for path in re.findall(r"^(\S+)(?: (\S+/))?", line)[0]:
                assert not path or (ROOT / path).exists(), path


def test_readme_rule_config_example(tmp_path: Path) -> None:
    from tfjob_kit import config

    (block,) = [
        b
        for b in re.findall(r"```yaml\n(.*?)```", README, re.S)
        if b.startswith("# .tfjob-kit.yaml")
    ]
    path = tmp_path / ".tfjob-kit.yaml"
    path.write_text(block)
    loaded = config.from_file(str(path))
    assert "image-latest" in loaded.disabled and loaded.severities
