"""MultiKueue across a fleet: inventories/local-multikueue, three local clusters that run the real
Kueue (a manager and two workers), set up by site.yml, used by submit.yml and the module, torn
down by teardown.yml, each task on its own host's cluster (``_fleet.Decoy``).

The manager's ClusterQueue dispatches admitted TFJobs to the workers through the AdmissionCheck
the kueue role makes. Its Kueue reaches them with kubeconfigs Kueue accepts (the worker's CA
inline, a bound token of the worker's ServiceAccount: no token file, no CA path), which the
module tfjob.kit.multikueue_cluster keeps and renews.
"""

from __future__ import annotations

import base64
import shlex
from pathlib import Path
from typing import Any

import yaml

from snippets import block

from ._ansible import run_play_file
from ._cluster import Cluster
from ._fleet import SIZE, Decoy, Fleet, releases, results, take_down

HOSTS = ("manager", "worker-a", "worker-b")
WORKERS = HOSTS[1:]
SECRET_NAMESPACE = "tfjob-kit-local"  # where the local Kueue process reads them
WORKER_ACCOUNT = ("kueue-system", "kueue-multikueue")
INVENTORY = "inventories/local-multikueue"
# The README's three commands (site.yml, submit.yml on the manager through its queue, teardown),
# as this test runs them: its playbook and extra arguments, each.
README_RUNS = [
    shlex.split(line)
    for line in block(
        "test tests/integration/test_multikueue.py::"
        "test_a_tfjob_submitted_to_the_manager_runs_on_a_worker"
    ).splitlines()
]


def _readme_run(fleet: Fleet, index: int) -> dict[str, Any]:
    command, flag, inventory, playbook, *extra = README_RUNS[index]
    assert (command, flag, inventory) == ("ansible-playbook", "-i", INVENTORY), README_RUNS
    return fleet.play(playbook.removeprefix("playbooks/"), *extra)


def _kubeconfig_of(manager: Cluster, worker: str) -> dict[str, Any]:
    secret = manager.get("secret", f"tfjob-kit-multikueue-{worker}", "-n", SECRET_NAMESPACE)
    config: dict[str, Any] = yaml.safe_load(base64.b64decode(secret["data"]["kubeconfig"]))
    return config


def _connected(manager: Cluster, worker: str) -> bool:
    found = manager.get("multikueuecluster", worker)
    active = [c for c in found["status"]["conditions"] if c["type"] == "Active"]
    return bool(active) and active[0]["status"] == "True"


def _pods_made(cluster: Cluster) -> int:
    """The pods a training-operator created for dist-mnist there, by its events."""
    events = cluster.items(
        "events",
        "-n",
        "default",
        "--field-selector",
        "involvedObject.kind=TFJob,involvedObject.name=dist-mnist,reason=SuccessfulCreatePod",
    )
    return sum(int(e.get("count") or 1) for e in events)


def _renew(manager: Cluster, worker: Cluster, name: str, lifetime: int, tmp_path: Path) -> str:
    """tfjob.kit.multikueue_cluster on the manager alone, asking for tokens of ``lifetime``."""
    play = [
        {
            "name": "Renew a worker's token",
            "hosts": "localhost",
            "gather_facts": False,
            "tasks": [
                {
                    "tfjob.kit.multikueue_cluster": {
                        "name": name,
                        "worker_kubeconfig": str(worker.kubeconfig),
                        "secret_namespace": SECRET_NAMESPACE,
                        "token_lifetime": lifetime,
                    },
                    "register": "renewed",
                },
                {"ansible.builtin.debug": {"var": "renewed"}},
            ],
        }
    ]
    path = tmp_path / "renew.yml"
    path.write_text(yaml.safe_dump(play))
    proc = run_play_file(path, manager.kubeconfig)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    return proc.stdout


def test_a_tfjob_submitted_to_the_manager_runs_on_a_worker(tmp_path: Path) -> None:
    fleet = Fleet(Decoy(tmp_path), INVENTORY, HOSTS, SIZE, "multikueue")
    manager, *workers = (fleet.cluster(host) for host in HOSTS)
    try:
        first = _readme_run(fleet, 0)
        assert all(first["stats"][host]["changed"] > 0 for host in HOSTS), first["stats"]
        # Kueue on the manager is connected to both workers, with kubeconfigs it accepts.
        assert all(_connected(manager, w) for w in WORKERS)
        for name, worker in zip(WORKERS, workers, strict=True):
            config = _kubeconfig_of(manager, name)
            (cluster,) = (c["cluster"] for c in config["clusters"])
            (user,) = (u["user"] for u in config["users"])
            assert set(cluster) == {"server", "certificate-authority-data"}
            assert set(user) == {"token"}
            assert worker.get("serviceaccount", WORKER_ACCOUNT[1], "-n", WORKER_ACCOUNT[0])
        check = manager.get("admissioncheck", "tfjob-kit-multikueue")
        assert [c["status"] for c in check["status"]["conditions"] if c["type"] == "Active"] == [
            "True"
        ]

        # submit.yml on the manager alone, through its LocalQueue: Kueue admits dist-mnist by the
        # manager's quota, a worker runs it, and the module reports where and how it ended.
        submitted = _readme_run(fleet, 1)
        (report,) = results(submitted, "Report each job").values()
        (job_line,) = (item["msg"] for item in report["results"])
        ran_on = job_line.rsplit("ran on ", 1)[-1]
        assert job_line == (
            f"TFJob default/dist-mnist: created, Succeeded, admitted by ml, ran on {ran_on}"
        )
        assert ran_on in WORKERS
        # The worker's operator made its pods (MultiKueue deleted the worker's copy of the job
        # once it finished; its events stay); neither the other worker nor the manager made any.
        runner = WORKERS.index(ran_on)
        assert _pods_made(workers[runner]) == 3
        assert _pods_made(workers[1 - runner]) == _pods_made(manager) == 0
        job = manager.get("tfjob", "dist-mnist", "-n", "default")
        assert job["spec"]["runPolicy"]["managedBy"] == "kueue.x-k8s.io/multikueue"

        # A second run changes nothing: the tokens have most of their lifetime left.
        second = fleet.play("site.yml")
        assert {h: second["stats"][h]["changed"] for h in HOSTS} == dict.fromkeys(HOSTS, 0)

        # A token with less than half of its lifetime left is renewed, and Kueue reconnects.
        token = _kubeconfig_of(manager, WORKERS[0])["users"][0]["user"]["token"]
        out = _renew(manager, workers[0], WORKERS[0], 4 * 604800, tmp_path)
        assert '"renewed": true' in out and '"connected": true' in out
        assert _kubeconfig_of(manager, WORKERS[0])["users"][0]["user"]["token"] != token
        assert token not in out

        down = results(_readme_run(fleet, 2), "Prove nothing is left")
        assert {h: down[h]["msg"] for h in HOSTS} == dict.fromkeys(
            HOSTS, "nothing the toolkit installed is left"
        )
        assert not manager.items("multikueueclusters")
        assert not [
            s
            for s in manager.items("secrets", "-n", SECRET_NAMESPACE)
            if s["metadata"]["name"].startswith("tfjob-kit-multikueue-")
        ]
        for worker in workers:
            assert not releases(worker)
            accounts = worker.items("serviceaccounts", "-n", WORKER_ACCOUNT[0])
            assert WORKER_ACCOUNT[1] not in {a["metadata"]["name"] for a in accounts}
    finally:
        take_down(fleet)
