"""Local clusters as a fleet, the hosts of an inventory (inventories/local-fleet,
inventories/local-multikueue), set up, used and torn down by the playbooks.

Every Kubernetes call must use its own cluster's kubeconfig, from the inventory host it runs
for: the KUBECONFIG ansible-playbook gets is a decoy, a kubeconfig whose server is a listener of
the test that counts the connections it gets, so a task that forgot its host's kubeconfig (and
would have used ``~/.kube/config``, a real cluster on a developer's machine) is seen, not merely
failed.
"""

from __future__ import annotations

import io
import json
import socket
import subprocess
import threading
import time
import uuid
from datetime import datetime
from pathlib import Path
from typing import Any

import yaml

from tfjob_kit.cluster import local

from ._ansible import BIN, REPO, ansible_env
from ._cluster import Cluster
from .conftest import TEST_PREFIX

# Small clusters, no smoke job: what a fleet test needs of site.yml.
SIZE = (
    "-e",
    "local_cluster_cpu_nodes=1",
    "-e",
    "local_cluster_gpu_nodes=1",
    "-e",
    "local_cluster_tfjob_run_seconds=2",
    "-e",
    "tfjob_kit_smoke_test=false",
)


class Decoy:
    """A loopback listener that counts the connections it accepts (and drops them), and a
    kubeconfig whose server it is."""

    def __init__(self, directory: Path) -> None:
        self.hits = 0
        self._server = socket.create_server(("127.0.0.1", 0))
        port = self._server.getsockname()[1]
        self.kubeconfig = directory / "decoy-kubeconfig"
        self.kubeconfig.write_text(
            yaml.safe_dump(
                {
                    "apiVersion": "v1",
                    "kind": "Config",
                    "clusters": [
                        {"name": "decoy", "cluster": {"server": f"https://127.0.0.1:{port}"}}
                    ],
                    "users": [{"name": "decoy", "user": {"token": "decoy"}}],
                    "contexts": [
                        {"name": "decoy", "context": {"cluster": "decoy", "user": "decoy"}}
                    ],
                    "current-context": "decoy",
                }
            )
        )
        self.kubeconfig.chmod(0o600)
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self._server.accept()
            except OSError:  # closed
                return
            self.hits += 1
            conn.close()

    def close(self) -> None:
        self._server.close()


class Fleet:
    """Local clusters as the hosts of an inventory (each named <prefix>-<host less "local-">,
    as the inventory names them from tfjob_kit_fleet), driven by the playbooks."""

    def __init__(
        self,
        decoy: Decoy,
        inventory: str,
        hosts: tuple[str, ...],
        size: tuple[str, ...],
        kind: str = "fleet",
    ) -> None:
        self.prefix = f"{TEST_PREFIX}{kind}-{uuid.uuid4().hex[:4]}"
        self.names = {host: f"{self.prefix}-{host.removeprefix('local-')}" for host in hosts}
        self.timings: dict[str, float] = {}
        self.decoy = decoy
        self.inventory = inventory
        self.size = size

    def cluster(self, host: str) -> Cluster:
        name = self.names[host]
        return Cluster(local.kubeconfig_path(name), name)

    def play(self, playbook: str, *extra: str) -> dict[str, Any]:
        """Run playbooks/<playbook> over the inventory, all hosts at once; the json callback's
        report (plays, tasks with each host's result, stats per host)."""
        env = ansible_env(Path("/nonexistent"))
        env.pop("K8S_AUTH_KUBECONFIG")
        env.pop("TFJOB_KIT_CLUSTER", None)
        env["KUBECONFIG"] = str(self.decoy.kubeconfig)
        env["ANSIBLE_STDOUT_CALLBACK"] = "ansible.posix.json"
        command = [str(BIN / "ansible-playbook"), "-i", self.inventory, f"playbooks/{playbook}"]
        command += ["--forks", str(len(self.names)), "-e", f"tfjob_kit_fleet={self.prefix}"]
        started = time.monotonic()
        proc = subprocess.run(
            [*command, *self.size, *extra],
            cwd=REPO,
            env=env,
            capture_output=True,
            text=True,
            timeout=900,
            check=False,
        )
        run = f"{len(self.timings) + 1}. {playbook} {' '.join(extra)}".strip()
        self.timings[run] = time.monotonic() - started
        assert proc.returncode == 0, (_failed_tasks(proc.stdout), proc.stderr[-2000:])
        assert self.decoy.hits == 0, f"{run}: a task used KUBECONFIG, not its host's cluster"
        report: dict[str, Any] = json.loads(proc.stdout)
        return report


def _failed_tasks(stdout: str) -> str:
    """What failed, from the json callback's report: each failed task's host, name and message
    (the report's tail, when it is not JSON)."""
    try:
        report = json.loads(stdout)
    except ValueError:
        return stdout[-6000:]
    failed = [
        f"{host}: {task['task']['name']}: {_why(result)}"
        for play in report.get("plays", [])
        for task in play.get("tasks", [])
        for host, result in task.get("hosts", {}).items()
        if result.get("failed") and not result.get("ignore_errors")
    ]
    return "\n".join(failed) or stdout[-6000:]


def _why(result: dict[str, Any]) -> str:
    """A failed result's message (a command's: with its stderr's end); for a loop ("One or more
    items failed"), each failed item's."""
    said = [str(result.get("msg", ""))]
    if result.get("stderr"):
        said.append(f"stderr: {str(result['stderr'])[-2000:]}")
    said += [
        f"[{item.get('_ansible_item_label', item.get('item'))}] {item.get('msg', '')}"
        for item in result.get("results") or []
        if isinstance(item, dict) and item.get("failed")
    ]
    return "; ".join(said)[:3000]


def results(report: dict[str, Any], task: str) -> dict[str, dict[str, Any]]:
    """Each host's result of the task of that name (the last, if it ran more than once)."""
    found: dict[str, dict[str, Any]] = {}
    for play in report["plays"]:
        for entry in play["tasks"]:
            if entry["task"]["name"].endswith(task):
                found.update(entry["hosts"])
    return found


def window(result: dict[str, Any]) -> tuple[datetime, datetime]:
    return tuple(datetime.fromisoformat(result[key]) for key in ("start", "end"))  # type: ignore[return-value]


def releases(cluster: Cluster) -> set[str]:
    secrets = cluster.get("secrets", "-A", "-l", "owner=helm")["items"]
    return {s["metadata"]["labels"]["name"] for s in secrets}


def tfjobs(cluster: Cluster) -> set[str]:
    return {j["metadata"]["name"] for j in cluster.get("tfjobs", "-A")["items"]}


def take_down(fleet: Fleet) -> None:
    """Every cluster of the fleet down (what a test leaves in any case), then its timings."""
    fleet.decoy.close()
    for name in fleet.names.values():
        local.down(name, out=io.StringIO())
    print(json.dumps({k: round(v) for k, v in fleet.timings.items()}, indent=1))
