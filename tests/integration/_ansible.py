"""Run real playbooks with ansible-playbook against the local cluster and read their results.

Each task of a play is registered (r0, r1, ...) and may fail (ignore_errors); a last task writes
every registered result to a JSON file, which the test reads.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

REPO = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent


@dataclass
class PlayResult:
    rc: int
    output: str
    results: list[dict[str, Any]]

    def __getitem__(self, index: int) -> dict[str, Any]:
        return self.results[index]


def ansible_env(kubeconfig: Path) -> dict[str, str]:
    env = dict(os.environ)
    env.update(
        {
            "ANSIBLE_CONFIG": str(REPO / "ansible.cfg"),
            "K8S_AUTH_KUBECONFIG": str(kubeconfig),
            "ANSIBLE_NOCOLOR": "1",
            "ANSIBLE_FORCE_COLOR": "0",
            "PATH": f"{BIN}{os.pathsep}{env.get('PATH', '')}",
        }
    )
    env.pop("KUBECONFIG", None)
    return env


def run_readme_shell(script: str, kubeconfig: Path, cluster_name: str) -> str:
    """A README shell block (or one line of it) as a user runs it in this checkout, on the local
    cluster ``cluster_name`` (``TFJOB_KIT_CLUSTER`` names it to the CLI and inventories/local):
    it must exit 0; its output is returned."""
    proc = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", script],
        cwd=REPO,
        env={**ansible_env(kubeconfig), "TFJOB_KIT_CLUSTER": cluster_name},
        capture_output=True,
        text=True,
        timeout=1200,
        check=False,
    )
    output = proc.stdout + proc.stderr
    assert proc.returncode == 0, output[-8000:]
    return output


def run_playbook(
    name: str,
    *args: str,
    kubeconfig: Path,
    inventory: str = "inventories/local",
    env: dict[str, str] | None = None,
    timeout: float = 900,
) -> subprocess.CompletedProcess[str]:
    """ansible-playbook playbooks/<name> with an inventory of this checkout, against the cluster
    of ``kubeconfig``; whatever its exit status (callers assert what they expect)."""
    return subprocess.run(
        [str(BIN / "ansible-playbook"), "-i", inventory, f"playbooks/{name}", *args],
        cwd=REPO,
        env=env or ansible_env(kubeconfig),
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def run_play_file(
    path: Path, kubeconfig: Path, timeout: float = 600
) -> subprocess.CompletedProcess[str]:
    """ansible-playbook of a playbook file (no inventory: localhost) against the cluster of
    ``kubeconfig``; whatever its exit status (callers assert what they expect)."""
    return subprocess.run(
        [str(BIN / "ansible-playbook"), str(path)],
        cwd=REPO,
        env=ansible_env(kubeconfig),
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def run_tasks(
    tmp_path: Path,
    kubeconfig: Path,
    tasks: list[dict[str, Any]],
    *args: str,
    timeout: float = 600,
    env: dict[str, str] | None = None,
) -> PlayResult:
    """Run the tasks in one play on localhost; every task's result is returned, in order."""
    out = tmp_path / "results.json"
    registered = []
    play_tasks = []
    for index, task in enumerate(tasks):
        name = f"r{index}"
        registered.append(name)
        play_tasks.append({**task, "register": name, "ignore_errors": True})
    dump = "{{ {" + ", ".join(f"'{n}': {n}" for n in registered) + "} | to_json }}"
    play_tasks.append(
        {
            "name": "Write the results",
            "ansible.builtin.copy": {"content": dump, "dest": str(out), "mode": "0600"},
            "check_mode": False,
            "diff": False,
        }
    )
    playbook = tmp_path / "playbook.yml"
    playbook.write_text(
        yaml.safe_dump(
            [{"name": "test", "hosts": "localhost", "gather_facts": False, "tasks": play_tasks}],
            sort_keys=False,
        )
    )
    proc = subprocess.run(
        [str(BIN / "ansible-playbook"), str(playbook), *args],
        cwd=tmp_path,
        env=env or ansible_env(kubeconfig),
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    output = proc.stdout + proc.stderr
    if not out.exists():
        raise AssertionError(f"the playbook did not finish (rc {proc.returncode}):\n{output}")
    data = json.loads(out.read_text())
    return PlayResult(proc.returncode, output, [data[n] for n in registered])
