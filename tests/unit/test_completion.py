"""`tfjob-kit completion bash`, run by bash itself: the completions a user gets at each point
come from the command line's parser."""

from __future__ import annotations

import argparse
import shutil
import subprocess

import pytest

from tfjob_kit import cli, completion

SCRIPT = completion.bash(cli.build_parser())


def complete(line: str) -> list[str]:
    """What bash offers for ``line`` (the cursor at its end)."""
    bash = shutil.which("bash")
    assert bash, "bash runs the completion script"
    driver = (
        'eval "$SCRIPT"; read -ra COMP_WORDS <<< "$LINE"; '
        '[[ "$LINE" == *" " ]] && COMP_WORDS+=(""); '
        "COMP_CWORD=$(( ${#COMP_WORDS[@]} - 1 )); _tfjob_kit; "
        'printf "%s\\n" "${COMPREPLY[@]}"'
    )
    proc = subprocess.run(
        [bash, "--norc", "-c", driver],
        env={"SCRIPT": SCRIPT, "LINE": line, "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        check=True,
        timeout=30,
    )
    return [w for w in proc.stdout.splitlines() if w]


@pytest.mark.parametrize(
    ("line", "offered"),
    [
        ("tfjob-kit va", ["validate"]),
        ("tfjob-kit w", ["wait", "webhooks"]),
        ("tfjob-kit cluster ", ["build", "down", "env", "kubeconfig", "status", "up"]),
        ("tfjob-kit validate --format ", ["json", "junit", "sarif", "text"]),
        ("tfjob-kit wait --kind t", ["tfjob", "trainjob"]),
        ("tfjob-kit completion ", ["bash", "zsh"]),
        ("tfjob-kit cluster up --kubernetes-v", ["--kubernetes-version"]),
        # a file argument: nothing from the script, bash completes file names (-o default)
        ("tfjob-kit validate jobs/", []),
    ],
)
def test_bash_completes_from_the_parser(line: str, offered: list[str]) -> None:
    assert sorted(complete(line)) == offered


def test_every_command_and_option_is_offered() -> None:
    parser = cli.build_parser()
    top = complete("tfjob-kit ")
    (commands,) = (a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    assert sorted(top) == sorted(commands.choices)
    for name, sub in commands.choices.items():
        flags = {o for a in sub._actions for o in a.option_strings}
        assert set(complete(f"tfjob-kit {name} -")) == flags, name


def test_zsh_runs_the_same_script_through_bashcompinit() -> None:
    script = completion.zsh(cli.build_parser())
    assert script.endswith(SCRIPT)
    assert "bashcompinit && bashcompinit" in script.removesuffix(SCRIPT)
