"""A fleet: inventories/local-fleet, two local clusters as two inventory hosts (``local-gang``
with Volcano, ``local-plain`` with no gang scheduler, chosen by group variables), set up,
used and torn down by the same playbooks in parallel, or one at a time with ``--limit``.

The clusters are brought up by site.yml's local_cluster role, under names of this test, and
removed at the end. Every Kubernetes call must use its own cluster's kubeconfig, from the
inventory host it runs for: the KUBECONFIG ansible-playbook gets is a decoy, a kubeconfig whose
server is a listener of this test that counts the connections it gets, so a task that forgot its
host's kubeconfig (and would have used ``~/.kube/config``, a real cluster on a developer's
machine) is seen, not merely failed.
"""

from __future__ import annotations

import io
import json
import re
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

HOSTS = ("local-gang", "local-plain")
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
    def __init__(self, decoy: Decoy) -> None:
        self.prefix = f"{TEST_PREFIX}fleet-{uuid.uuid4().hex[:4]}"
        self.names = {host: f"{self.prefix}-{host.removeprefix('local-')}" for host in HOSTS}
        self.timings: dict[str, float] = {}
        self.decoy = decoy

    def cluster(self, host: str) -> Cluster:
        name = self.names[host]
        return Cluster(local.kubeconfig_path(name), name)

    def play(self, playbook: str, *extra: str) -> dict[str, Any]:
        """Run playbooks/<playbook> over inventories/local-fleet with forks 2; the json
        callback's report (plays, tasks with each host's result, stats per host)."""
        env = ansible_env(Path("/nonexistent"))
        env.pop("K8S_AUTH_KUBECONFIG")
        env.pop("TFJOB_KIT_CLUSTER", None)
        env["KUBECONFIG"] = str(self.decoy.kubeconfig)
        env["ANSIBLE_STDOUT_CALLBACK"] = "ansible.posix.json"
        command = [str(BIN / "ansible-playbook"), "-i", "inventories/local-fleet"]
        command += [f"playbooks/{playbook}", "--forks", "2", "-e", f"tfjob_kit_fleet={self.prefix}"]
        started = time.monotonic()
        proc = subprocess.run(
            [*command, *SIZE, *extra],
            cwd=REPO,
            env=env,
            capture_output=True,
            text=True,
            timeout=900,
            check=False,
        )
        run = f"{len(self.timings) + 1}. {playbook} {' '.join(extra)}".strip()
        self.timings[run] = time.monotonic() - started
        assert proc.returncode == 0, (proc.stdout[-6000:], proc.stderr[-2000:])
        assert self.decoy.hits == 0, f"{run}: a task used KUBECONFIG, not its host's cluster"
        report: dict[str, Any] = json.loads(proc.stdout)
        return report


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


def test_fleet_in_parallel_and_by_limit(tmp_path: Path) -> None:
    decoy = Decoy(tmp_path)
    fleet = Fleet(decoy)
    gang, plain = (fleet.cluster(host) for host in HOSTS)
    try:
        # site.yml brings both clusters up and bootstraps them, at the same time.
        first = fleet.play("site.yml")
        assert all(first["stats"][host]["changed"] > 0 for host in HOSTS), first["stats"]
        # The group variables chose each cluster's gang scheduler.
        assert {"training-operator", "volcano"} <= releases(gang)
        assert "volcano" not in releases(plain) and "training-operator" in releases(plain)

        second = fleet.play("site.yml")
        assert {h: second["stats"][h]["changed"] for h in HOSTS} == dict.fromkeys(HOSTS, 0)
        # Both hosts ran each task at the same time: their `tfjob-kit cluster status` overlap.
        status = results(second, "Read the state of the local cluster")
        (a_start, a_end), (b_start, b_end) = (window(status[host]) for host in HOSTS)
        assert a_start < b_end and b_start < a_end, f"not in parallel: {status}"

        # --limit: one cluster only (submit.yml's default job, examples/tfjobs/dist-mnist.yaml).
        limited = fleet.play("submit.yml", "--limit", HOSTS[0])
        assert set(limited["stats"]) == {HOSTS[0]}
        assert tfjobs(gang) == {"dist-mnist"} and tfjobs(plain) == set()

        # The whole fleet: the job is new on one cluster only.
        both = fleet.play("submit.yml")
        assert {h: both["stats"][h]["changed"] for h in HOSTS} == {HOSTS[0]: 0, HOSTS[1]: 1}
        assert tfjobs(plain) == {"dist-mnist"}

        info = results(fleet.play("fleet_info.yml"), "Report the cluster's jobs")
        assert {h: info[h]["msg"] for h in HOSTS} == {
            h: f"{h}: default/dist-mnist Succeeded" for h in HOSTS
        }

        down = results(fleet.play("teardown.yml"), "Prove nothing is left")
        assert {h: down[h]["msg"] for h in HOSTS} == dict.fromkeys(
            HOSTS, "nothing the toolkit installed is left"
        )
        assert tfjobs(gang) == tfjobs(plain) == set()
        assert not releases(gang) and not releases(plain)
    finally:
        decoy.close()
        for name in fleet.names.values():
            local.down(name, out=io.StringIO())
        print(json.dumps({k: round(v) for k, v in fleet.timings.items()}, indent=1))


def example(*args: str) -> subprocess.CompletedProcess[str]:
    """ansible-playbook with inventories/fleet (real clusters: nothing here reaches them)."""
    env = ansible_env(Path("/nonexistent"))
    env.pop("K8S_AUTH_KUBECONFIG")
    return subprocess.run(
        [str(BIN / "ansible-playbook"), "-i", "inventories/fleet", "playbooks/site.yml", *args],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def test_example_fleet_inventory_limits_to_a_site_and_finds_each_gpu_hosts_cluster() -> None:
    """inventories/fleet: `--limit us_east` runs the site's cluster and its GPU host only; a
    GPU host run without its cluster fails naming the cluster and what to do."""
    listed = example("--list-hosts", "--limit", "us_east")
    assert listed.returncode == 0, listed.stdout + listed.stderr
    plays = [b.split() for b in re.findall(r"hosts \(\d+\):\n((?: {6}\S.*\n?)+)", listed.stdout)]
    assert plays == [["us-train"], ["us-gpu-1"], ["us-train"]], listed.stdout
    alone = example("--limit", "eu-gpu-1")
    assert alone.returncode != 0
    assert (
        "GPU host eu-gpu-1: its cluster eu-train was not reached in this run: include it in"
        " --limit (or fix its connection)" in alone.stdout
    ), alone.stdout[-3000:]


def test_every_cluster_play_targets_the_fleet() -> None:
    """Every play on the clusters, in every playbook, has connect.yml's hosts line (the
    tfjob_kit_clusters group, or localhost for an inventory without it); only the GPU host
    preflight targets gpu_nodes."""
    (connect,) = yaml.safe_load((REPO / "playbooks" / "connect.yml").read_text())
    targets = {
        (path.name, play["name"]): play["hosts"]
        for path in sorted((REPO / "playbooks").glob("*.yml"))
        for play in yaml.safe_load(path.read_text())
        if "hosts" in play
    }
    assert "tfjob_kit_clusters" in connect["hosts"]
    assert targets.pop(("site.yml", "GPU host preflight")) == "gpu_nodes"
    assert len(targets) >= 5 and set(targets.values()) == {connect["hosts"]}, targets
