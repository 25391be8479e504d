"""A fleet: inventories/local-fleet, two local clusters as two inventory hosts (``local-gang``
with Volcano, ``local-plain`` with no gang scheduler, chosen by group variables), set up,
used and torn down by the same playbooks in parallel, or one at a time with ``--limit``.

The clusters are brought up by site.yml's local_cluster role, under names of this test, and
removed at the end; every task must use its own host's kubeconfig (``_fleet.Decoy``).
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import yaml

from ._ansible import BIN, REPO, ansible_env
from ._fleet import SIZE, Decoy, Fleet, releases, results, take_down, tfjobs, window

HOSTS = ("local-gang", "local-plain")


def test_fleet_in_parallel_and_by_limit(tmp_path: Path) -> None:
    fleet = Fleet(Decoy(tmp_path), "inventories/local-fleet", HOSTS, SIZE)
    gang, plain = (fleet.cluster(host) for host in HOSTS)
    try:
        # site.yml brings both clusters up and bootstraps them, at the same time: the two
        # `tfjob-kit cluster up` overlap (each cluster's ports come from the machine's registry,
        # so creations need not take turns). That a second site.yml changes nothing is
        # test_bootstrap's and each role's Molecule idempotence step's to prove.
        first = fleet.play("site.yml")
        assert all(first["stats"][host]["changed"] > 0 for host in HOSTS), first["stats"]
        ups = results(first, "Bring the local cluster up (builds the binaries on first use)")
        (a_start, a_end), (b_start, b_end) = (window(ups[host]) for host in HOSTS)
        assert a_start < b_end and b_start < a_end, f"not in parallel: {ups}"
        # The group variables chose each cluster's gang scheduler.
        assert {"training-operator", "volcano"} <= releases(gang)
        assert "volcano" not in releases(plain) and "training-operator" in releases(plain)

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
        take_down(fleet)


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
