"""`site.yml` interrupted with SIGINT inside each role in turn: the next run converges, and the
run after that changes nothing.

The interruption is Ctrl-C at a repeatable point: the test-only callback plugin
``callback_plugins/interrupt_at.py`` sends SIGINT to the run's process group, as a terminal does
(ansible-playbook passes it on to its workers, the module and helm). The point is the role's
install step: for a Helm role, while helm installs the release (the plugin watches the release's
Secrets and interrupts when helm has recorded it pending-install or pending-upgrade); for
the others, when the install task starts. The interrupted run must say so, stop in that task
and exit non-zero.

The roles site.yml runs with inventories/local, in its order: ``local_cluster`` (connect.yml;
its install step, ``cluster up``, runs only when the cluster is not running, so the chain starts
with no cluster and its converging run brings the cluster up for the others), ``volcano``,
``training_operator``, ``nvidia_device_plugin`` and ``tfjob_smoke`` (its step: running the smoke
TFJob). Two roles are never run there, so they cannot be interrupted there: ``gpu_node`` runs on
the ``gpu_nodes`` hosts, an empty group in inventories/local (the local GPU nodes are simulated
kwok nodes that already carry the GPU labels), and ``kube_batch`` runs only with
``tfjob_kit_scheduler: kube-batch`` (the local inventory chooses volcano, and the role refuses
Kubernetes >= 1.22, which the local cluster runs).

The runs form one chain on one cluster, so each run both converges what the run before it
interrupted and is interrupted at the next point: site.yml runs 10 times in all, 8 of them
stopped part way, where one full run per interruption plus one per convergence cost twice as
much. Installs come first, from no cluster: the local_cluster role's ``cluster up``, then each
Helm role's first install and the smoke TFJob. Then upgrades: new values for every Helm role,
each run interrupted while the next release is pending-upgrade. A converging run repairs what
the interruption left (a release pending or failed, a cluster half up, a smoke job left
running) and the role's check must then hold: its objects present and healthy, its release
deployed. The smoke TFJob runs only where it is the point under test or in the chain's last
converging run, which converges the smoke point too: the upgrades' runs in between stop before
the smoke role (``tfjob_kit_smoke_test=false`` elsewhere; it installs nothing the other roles'
checks need). The last run must change nothing (changed=0 for every host) after all the
interruptions before it.
"""

from __future__ import annotations

import io
import json
import os
import re
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from integration._ansible import BIN, REPO, ansible_env
from integration._cluster import Cluster
from integration.conftest import session_name
from tfjob_kit.cluster import local

PLUGINS = Path(__file__).resolve().parent / "callback_plugins"
# Small enough to be quick, as the other fault tests' clusters.
SIZE = ("-e", "local_cluster_cpu_nodes=1", "-e", "local_cluster_gpu_nodes=2")
RUN_TIMEOUT = 900
MARK = "INTERRUPT: SIGINT at "  # what the plugin prints when it sends SIGINT
GRACE = 45  # seconds an interrupted run has to end
LOCAL_UP = "Bring the local cluster up (builds the binaries on first use)"


@dataclass
class Run:
    rc: int
    output: str
    forced: bool = False  # it needed a second SIGINT

    def recap(self) -> dict[str, dict[str, int]]:
        """PLAY RECAP: host -> counter -> value."""
        found = {}
        for line in self.output.split("PLAY RECAP", 1)[-1].splitlines():
            match = re.match(r"^(\S+)\s+: (.*)$", line)
            if match and "changed=" in line:
                found[match[1]] = {k: int(v) for k, v in re.findall(r"(\w+)=(\d+)", match[2])}
        return found


@dataclass
class Site:
    """site.yml with inventories/local against one local cluster, named by this module."""

    name: str
    runs: list[Run] = field(default_factory=list)

    @property
    def cluster(self) -> Cluster:
        return Cluster(local.kubeconfig_path(self.name), self.name)

    def run(self, *extra: str, interrupt: tuple[str, str] | None = None, release: str = "") -> Run:
        env = ansible_env(local.kubeconfig_path(self.name))
        if interrupt:
            env.update(
                {
                    "ANSIBLE_CALLBACK_PLUGINS": str(PLUGINS),
                    "ANSIBLE_CALLBACKS_ENABLED": "interrupt_at",
                    "TFJOB_KIT_INTERRUPT_ROLE": interrupt[0],
                    "TFJOB_KIT_INTERRUPT_TASK": interrupt[1],
                    "TFJOB_KIT_INTERRUPT_RELEASE": release,
                }
            )
        command = [
            str(BIN / "ansible-playbook"),
            "-i",
            "inventories/local",
            "playbooks/site.yml",
            "-e",
            f"local_cluster_name={self.name}",
            *SIZE,
            *extra,
        ]
        # A process group of its own: the plugin's SIGINT reaches this run only.
        proc = subprocess.Popen(
            command,
            cwd=REPO,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            start_new_session=True,
        )
        lines: list[str] = []
        reader = threading.Thread(target=lambda: lines.extend(proc.stdout or ()), daemon=True)
        reader.start()
        deadline = time.monotonic() + RUN_TIMEOUT
        interrupted_at: float | None = None
        again = False
        try:
            while proc.poll() is None:
                if time.monotonic() > deadline:
                    raise AssertionError(f"site.yml ran past {RUN_TIMEOUT}s:\n{''.join(lines)}")
                if interrupted_at is None and any(x.startswith(MARK) for x in lines[-50:]):
                    interrupted_at = time.monotonic()
                # ansible-core can hang on Ctrl-C: a worker killed while it held the results
                # queue's lock leaves the main process waiting on it for ever. A user presses
                # Ctrl-C again, which ends it (its handler is then the default one).
                if interrupted_at and not again and time.monotonic() > interrupted_at + GRACE:
                    again = True
                    os.killpg(proc.pid, signal.SIGINT)
                time.sleep(0.5)
        finally:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            reader.join(timeout=30)
        output = "".join(lines)
        if again:
            output += f"\n(the run still ran {GRACE}s after SIGINT: a second SIGINT ended it)\n"
        run = Run(proc.returncode, output, again)
        self.runs.append(run)
        return run

    def converge(self, *extra: str) -> Run:
        run = self.run(*extra)
        assert run.rc == 0, run.output[-8000:]
        return run

    def helm(self, *args: str) -> subprocess.CompletedProcess[str]:
        status = subprocess.run(
            [str(BIN / "tfjob-kit"), "cluster", "status", "--name", self.name, "--output", "json"],
            capture_output=True,
            text=True,
            check=True,
            timeout=120,
        )
        helm = json.loads(status.stdout)["helm"]
        return subprocess.run(
            [helm, "--kubeconfig", str(local.kubeconfig_path(self.name)), *args],
            capture_output=True,
            text=True,
            check=False,
            timeout=300,
        )


@pytest.fixture(scope="module")
def site() -> Iterator[Site]:
    """One local cluster for the chain, brought up by site.yml itself (its first points),
    removed at the end."""
    state = Site(session_name("fault"))
    try:
        yield state
    finally:
        local.down(state.name, out=io.StringIO())


def releases(cluster: Cluster) -> dict[str, str]:
    """Each Helm release's latest revision: "namespace/name" -> status."""
    latest: dict[str, tuple[int, str]] = {}
    for secret in cluster.items("secrets", "-A", "-l", "owner=helm"):
        labels = secret["metadata"]["labels"]
        key = f"{secret['metadata']['namespace']}/{labels['name']}"
        version = int(labels["version"])
        if version >= latest.get(key, (0, ""))[0]:
            latest[key] = (version, labels["status"])
    return {key: status for key, (_, status) in latest.items()}


def available(cluster: Cluster, namespace: str) -> None:
    deployments = cluster.items("deployments", "-n", namespace)
    assert deployments, f"no Deployment in {namespace}"
    for deployment in deployments:
        conditions = {
            c["type"]: c["status"] for c in deployment.get("status", {}).get("conditions", [])
        }
        assert conditions.get("Available") == "True", (namespace, deployment["metadata"]["name"])


def established(cluster: Cluster, crd: str) -> None:
    conditions = {c["type"]: c["status"] for c in cluster.get("crd", crd)["status"]["conditions"]}
    assert conditions.get("Established") == "True", crd


def check_local_cluster(site: Site, run: Run) -> None:
    nodes = site.cluster.items("nodes")
    ready = [
        n["metadata"]["name"]
        for n in nodes
        if any(c["type"] == "Ready" and c["status"] == "True" for c in n["status"]["conditions"])
    ]
    assert len(ready) == len(nodes) == 3, [n["metadata"]["name"] for n in nodes]
    # This run brought it up: the install task ran and changed something.
    after = run.output.split(f"TASK [tfjob.kit.local_cluster : {LOCAL_UP}]", 1)[1]
    assert after.split("\n", 2)[1].startswith("changed: [localhost]"), after[:2000]


def check_volcano(site: Site, run: Run) -> None:
    cluster = site.cluster
    established(cluster, "podgroups.scheduling.volcano.sh")
    established(cluster, "queues.scheduling.volcano.sh")
    available(cluster, "volcano-system")
    queue = cluster.get("queue.scheduling.volcano.sh", "default")
    assert queue["status"]["state"] == "Open"


def check_training_operator(site: Site, run: Run) -> None:
    established(site.cluster, "tfjobs.kubeflow.org")
    available(site.cluster, "training-operator")


def check_device_plugin(site: Site, run: Run) -> None:
    cluster = site.cluster
    (daemonset,) = cluster.items("daemonsets", "-n", "nvidia-device-plugin")
    status = daemonset["status"]
    assert status["desiredNumberScheduled"] == status["numberReady"] == 2, status
    gpus = [
        n["status"]["allocatable"].get("nvidia.com/gpu", "0")
        for n in cluster.items("nodes", "-l", "nvidia.com/gpu.present=true")
    ]
    assert len(gpus) == 2 and all(int(g) > 0 for g in gpus), gpus


def check_smoke(site: Site, run: Run) -> None:
    assert re.search(r"tfjob-smoke: Succeeded in", run.output), run.output[-4000:]
    # As after an uninterrupted run: the job and the namespace the role made are gone.
    assert site.cluster.gone("namespace", "tfjob-smoke")
    assert site.cluster.items("tfjobs", "-A") == []


@dataclass(frozen=True)
class Point:
    """Where a run of the chain is interrupted: a role's install or upgrade step."""

    role: str
    task: str
    check: Callable[[Site, Run], None]  # the role converged (run after the interruption)
    release: str = ""  # namespace/name: SIGINT once helm has recorded it pending


VOLCANO = "Install the Volcano chart (scheduler, controllers, admission webhooks)"
OPERATOR = "Install the training-operator chart"
DEVICE_PLUGIN = "Install the device plugin chart"
SMOKE = "Run the smoke TFJob and wait until it succeeds"

# Installs, in site.yml's order, from no cluster at all: each run is interrupted at the next
# role's install step and converges every role before it (the one interrupted by the run
# before included: its release is repaired from pending-install or failed).
INSTALLS = [
    Point("local_cluster", LOCAL_UP, check_local_cluster),
    Point("volcano", VOLCANO, check_volcano, "volcano-system/volcano"),
    Point(
        "training_operator",
        OPERATOR,
        check_training_operator,
        "training-operator/training-operator",
    ),
    Point(
        "nvidia_device_plugin",
        DEVICE_PLUGIN,
        check_device_plugin,
        "nvidia-device-plugin/nvidia-device-plugin",
    ),
    Point("tfjob_smoke", SMOKE, check_smoke),
]

# Upgrades: new values for every Helm role (each changes its chart's pod template, so helm
# upgrades the release); each run is interrupted while the next release is pending-upgrade.
UPGRADED = {
    "volcano_values": {"scheduler": {"logLevel": 4}},
    "training_operator_values": {"podAnnotations": {"tfjob-kit.test/revision": "2"}},
    "nvidia_device_plugin_values": {
        "tolerations": [{"key": "tfjob-kit.test/revision", "operator": "Exists"}]
    },
}
UPGRADES = [p for p in INSTALLS if p.release]
ALL_DEPLOYED = {p.release: "deployed" for p in UPGRADES}


def assert_interrupted(site: Site, run: Run, point: Point, pending: str) -> None:
    """The run was stopped by SIGINT in the point's task and nowhere else."""
    marker = f"{MARK}{point.role} : {point.task}"
    if point.release:  # helm had recorded the release and was working on it
        marker += f" while {point.release} is {pending}"
        # What helm left: failed when its SIGINT handler marked the revision, pending when it
        # died first, deployed when it finished before the signal reached it.
        left = releases(site.cluster).get(point.release)
        print(f"{point.role}: the interrupted run left release {point.release} {left}")
        assert left in (pending, "failed", "deployed"), run.output[-4000:]
    assert run.rc != 0, run.output[-4000:]
    assert marker in run.output, run.output[-4000:]
    assert run.forced or "User interrupted execution" in run.output, run.output[-4000:]
    # It stopped there: the last task that started is the point's task.
    started = re.findall(r"^TASK \[(.*)\]", run.output, re.MULTILINE)
    assert started[-1] == f"tfjob.kit.{point.role} : {point.task}", started[-3:]
    assert "PLAY RECAP" not in run.output


def test_site_converges_after_sigint_at_each_install_and_upgrade(site: Site) -> None:
    """One chain of runs on one cluster. Run k is interrupted at point k and is the converging
    run of point k-1, whose role's check then holds. Installs first (from no cluster), then
    upgrades. The smoke job's point, the installs' last, is converged by the chain's last
    converging run (the upgrades' runs stop before the smoke role); the run after that changes
    nothing."""
    no_smoke = ("-e", "tfjob_kit_smoke_test=false")
    previous: Point | None = None
    for point in INSTALLS:
        smoke = () if point.role == "tfjob_smoke" else no_smoke
        run = site.run(*smoke, interrupt=(point.role, point.task), release=point.release)
        if previous:  # this run went through the previous point's role
            previous.check(site, run)
        assert_interrupted(site, run, point, "pending-install")
        previous = point
    # the run interrupted at the smoke job went through every Helm role
    assert releases(site.cluster) == ALL_DEPLOYED

    upgraded = ("-e", json.dumps(UPGRADED))
    previous = None
    for point in UPGRADES:
        run = site.run(
            *upgraded, *no_smoke, interrupt=(point.role, point.task), release=point.release
        )
        if previous:
            previous.check(site, run)
        assert_interrupted(site, run, point, "pending-upgrade")
        previous = point
    converged = site.converge(*upgraded)
    assert releases(site.cluster) == ALL_DEPLOYED
    for point in UPGRADES:
        point.check(site, converged)
    check_upgraded(site)
    check_smoke(site, converged)

    # The run after that changes nothing: whatever an interruption left that a converging run
    # keeps "repairing" shows as a change here.
    again = site.converge(*upgraded, *no_smoke)
    recap = again.recap()
    assert recap and all(host["changed"] == 0 for host in recap.values()), (
        recap,
        again.output[-4000:],
    )


def check_upgraded(site: Site) -> None:
    """The upgraded values are what runs: each release's latest revision is above 1 and its
    workload carries the new value."""
    cluster = site.cluster
    (scheduler,) = [
        d
        for d in cluster.items("deployments", "-n", "volcano-system")
        if "scheduler" in d["metadata"]["name"]
    ]
    args = scheduler["spec"]["template"]["spec"]["containers"][0].get("args", [])
    assert any(re.fullmatch(r"-?-v=4", a) for a in args), args
    (operator,) = cluster.items("deployments", "-n", "training-operator")
    annotations = operator["spec"]["template"]["metadata"].get("annotations") or {}
    assert annotations.get("tfjob-kit.test/revision") == "2", annotations
    (daemonset,) = cluster.items("daemonsets", "-n", "nvidia-device-plugin")
    tolerations = daemonset["spec"]["template"]["spec"].get("tolerations") or []
    assert {"key": "tfjob-kit.test/revision", "operator": "Exists"} in tolerations, tolerations
