"""The roles' and playbooks' kubernetes.core waits poll every second (``wait_sleep: 1``), not
every five (the modules' default): every ``site.yml``, ``teardown.yml`` and Molecule run waits
on CRDs, Deployments and deletions, and a wait that ends just after a poll costs the whole
interval."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[2]
WAITING_MODULES = ("kubernetes.core.k8s", "kubernetes.core.k8s_info")


def tasks(node: Any) -> Iterator[dict[str, Any]]:
    """Every mapping in a task file or playbook (blocks, plays and their tasks included)."""
    if isinstance(node, dict):
        yield node
        for value in node.values():
            yield from tasks(value)
    elif isinstance(node, list):
        for item in node:
            yield from tasks(item)


def test_every_kubernetes_core_wait_polls_each_second() -> None:
    files = [*ROOT.glob("roles/*/tasks/*.yml"), *ROOT.glob("roles/*/molecule/*/*.yml")]
    files += ROOT.glob("playbooks/*.yml")
    waits = [
        (path.relative_to(ROOT), task.get("name"), task[module])
        for path in files
        for task in tasks(yaml.safe_load(path.read_text()))
        for module in WAITING_MODULES
        # `wait: true`, or a template (teardown.yml deletes all, then waits in a second pass)
        if isinstance(task.get(module), dict) and task[module].get("wait") not in (None, False)
    ]
    assert len(waits) >= 10
    slow = [(str(path), name) for path, name, args in waits if args.get("wait_sleep") != 1]
    assert not slow


# What CI's teardown got when a namespace finished terminating between kubernetes.core's read
# and its delete, in the pass that waits for them to be gone.
VANISHED = (
    'Failed to delete object: {"kind":"Status","apiVersion":"v1","metadata":{},'
    '"status":"Failure","message":"namespaces \\"training-operator\\" not found",'
    '"reason":"NotFound","details":{"name":"training-operator","kind":"namespaces"},"code":404}'
)


def test_a_deletion_pass_runs_again_when_an_object_vanished_under_its_delete(
    tmp_path: Path,
) -> None:
    """Each pass of teardown's delete-all-then-wait retries on the NotFound that an object
    gone between kubernetes.core's read and its delete gives, and on nothing else: Ansible
    evaluates the playbook's own `until` on a failure of each kind."""
    passes = [
        task
        for path in [*ROOT.glob("playbooks/*.yml"), *ROOT.glob("roles/*/tasks/*.yml")]
        for task in tasks(yaml.safe_load(path.read_text()))
        if isinstance(task.get("kubernetes.core.k8s"), dict)
        and task["kubernetes.core.k8s"].get("state") == "absent"
        and task.get("loop") == [False, True]  # delete all, then wait
    ]
    assert len(passes) == 2
    (until,) = {task.get("until") for task in passes}
    (register,) = {task.get("register") for task in passes}
    assert until and register
    retries = 3
    play = [
        {
            "hosts": "localhost",
            "gather_facts": False,
            "tasks": [
                {
                    "name": name,
                    "ansible.builtin.assert": {"that": False, "fail_msg": message, "quiet": True},
                    "register": register,
                    "until": until,
                    "retries": retries,
                    "delay": 0,
                    "ignore_errors": True,
                }
                for name, message in (("vanished", VANISHED), ("refused", "Forbidden"))
            ],
        }
    ]
    playbook = tmp_path / "play.yml"
    playbook.write_text(yaml.safe_dump(play))
    env = {**os.environ, "ANSIBLE_STDOUT_CALLBACK": "ansible.posix.json"}
    env["ANSIBLE_LOCALHOST_WARNING"] = "false"
    proc = subprocess.run(
        [str(Path(sys.executable).parent / "ansible-playbook"), "-i", "localhost,", playbook],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    report = json.loads(proc.stdout)
    attempts = {
        task["task"]["name"]: task["hosts"]["localhost"].get("attempts", 1)
        for task in report["plays"][0]["tasks"]
    }
    assert attempts == {"vanished": retries, "refused": 1}, proc.stdout[-2000:]
