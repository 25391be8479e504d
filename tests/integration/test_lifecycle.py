"""`cluster up` / `down` / `status` / `kubeconfig` on a small cluster of its own."""

from __future__ import annotations

import contextlib
import io
import json
import os
import signal
import socket
import stat
import subprocess
import sys
import threading
import time
from collections.abc import Iterable
from pathlib import Path
from urllib.parse import urlparse

import pytest
import yaml

from tfjob_kit.cluster import build, kwok, local, ports
from tfjob_kit.cluster.nodes import NodePlan
from tfjob_kit.cluster.paths import ClusterError, kwok_workdir
from tfjob_kit.versions import load_versions

from ._sockets import listeners_of_port

NAME = "tfjob-kit-test-lifecycle"


def _alive(pid: int) -> bool:
    """True for a live process; a zombie waiting to be reaped counts as gone."""
    try:
        stat_line = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat_line[stat_line.rindex(")") + 2] != "Z"


def _registered(name: str) -> dict[str, int]:
    """The ports the machine's registry holds for cluster ``name``, by key."""
    try:
        registry = json.loads((kwok_workdir() / ".ports.json").read_text())
    except FileNotFoundError:
        return {}
    return {e["key"]: int(port) for port, e in registry.items() if e["cluster"] == name}


def _port_open(port: int) -> bool:
    with socket.socket() as sock:
        sock.settimeout(1)
        return sock.connect_ex(("127.0.0.1", port)) == 0


def test_up_reuse_status_down_leaves_nothing() -> None:
    opts = local.UpOptions(name=NAME, nodes=NodePlan(cpu_nodes=1, gpu_nodes=1), addons=False)
    local.down(NAME, out=io.StringIO())  # leftovers of an interrupted run
    try:
        kubeconfig = local.up(opts, out=io.StringIO())
        assert kubeconfig == local.kubeconfig_path(NAME)
        assert stat.S_IMODE(kubeconfig.stat().st_mode) == 0o600
        server = yaml.safe_load(kubeconfig.read_text())["clusters"][0]["cluster"]["server"]
        port = urlparse(server).port
        assert port and _port_open(port)

        info = local.status(NAME)
        assert info["running"] and info["rss_mib_total"] > 0
        pids = [p["pid"] for p in info["processes"].values()]
        assert len(pids) >= 5  # etcd, apiserver, controller-manager, scheduler, kwok
        assert {n["name"] for n in info["nodes"]} == {"tfjob-kit-cpu-0", "tfjob-kit-gpu-0"}
        # Its components listen on the ports registered to it, outside the ephemeral range:
        # kwokctl chose none of them.
        mine = _registered(NAME)
        assert sorted(mine) == sorted(kwok.PORT_OPTIONS), mine
        assert mine["kube_apiserver"] == port
        assert all(_port_open(p) and p not in ports.ephemeral_range() for p in mine.values())

        log = io.StringIO()
        assert local.up(opts, out=log) == kubeconfig
        assert "reusing running cluster" in log.getvalue()
    finally:
        local.down(NAME, out=io.StringIO())

    assert not local.cluster_dir(NAME).exists()
    assert not local.status(NAME)["exists"]
    assert _registered(NAME) == {}  # down gave its ports back
    for pid in pids:
        assert not _alive(pid), f"process {pid} survived down"
    # Nothing of this cluster listens on its API server's port any more. kwokctl picks ports
    # that are free at the moment, so another local cluster (a colleague's, a parallel test's)
    # may hold the same port now: only a listener of this cluster's own (one of its processes,
    # or a command line naming its directory) is a leftover.
    ours = [
        (pid, command)
        for pid, command in listeners_of_port(port)
        if pid in pids or str(local.cluster_dir(NAME)) in command
    ]
    assert not ours, f"port {port} is still held by this cluster's {ours}"


def test_a_component_that_cannot_start_fails_up_at_once_with_its_log(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A port taken between its reservation and the component's bind (by a process that is not
    one of our clusters): the kube-scheduler exits at start. ``up`` says so, with the end of the
    scheduler's log, as soon as it sees it, rather than waiting out its timeout."""
    name = f"{NAME}-taken"
    local.down(name, out=io.StringIO())
    taken = socket.create_server(("127.0.0.1", 0))
    reserve = ports.reserve

    def reserve_one_taken(cluster: str, keys: Iterable[str]) -> dict[str, int]:
        got = reserve(cluster, keys)
        return {**got, "kube_scheduler": taken.getsockname()[1]}

    monkeypatch.setattr(kwok, "reserve", reserve_one_taken)
    opts = local.UpOptions(name=name, nodes=NodePlan(cpu_nodes=1, gpu_nodes=0), addons=False)
    started = time.monotonic()
    try:
        with pytest.raises(ClusterError) as failed:
            local.up(opts, out=io.StringIO())
        message = str(failed.value)
        assert f"cluster {name!r} cannot start" in message, message
        assert "kube-scheduler stopped; the end of" in message, message
        assert "address already in use" in message, message
        assert time.monotonic() - started < opts.timeout / 2
    finally:
        taken.close()
        local.down(name, out=io.StringIO())
    assert not local.cluster_dir(name).exists()


def test_a_controller_that_gave_up_waiting_for_the_api_server_is_started_again() -> None:
    """A busy machine: the API server is held still (SIGSTOP) from the moment kwokctl starts
    it, for longer than kube-controller-manager waits for its health (10 s). The controller
    manager exits at start, as it did when a fleet's three clusters started at once on two
    cores; ``up`` starts it again once the API server serves, and says so."""
    name = f"{NAME}-slow"
    local.down(name, out=io.StringIO())
    pid_file = local.cluster_dir(name) / "pids" / "kube-apiserver.pid"
    held: list[int] = []
    done = threading.Event()

    def hold_the_api_server() -> None:
        while not done.is_set():
            with contextlib.suppress(OSError, ValueError):
                pid = int(pid_file.read_text().strip())
                if (
                    Path(f"/proc/{pid}/cmdline")
                    .read_bytes()
                    .split(b"\0")[0]
                    .endswith(b"/kube-apiserver")
                ):
                    os.kill(pid, signal.SIGSTOP)
                    held.append(pid)
                    try:
                        done.wait(25)
                    finally:
                        os.kill(pid, signal.SIGCONT)
                    return
            time.sleep(0.05)

    holder = threading.Thread(target=hold_the_api_server, daemon=True)
    holder.start()
    out = io.StringIO()
    opts = local.UpOptions(name=name, nodes=NodePlan(cpu_nodes=1, gpu_nodes=0), addons=False)
    try:
        local.up(opts, out=out)
        assert held, "the API server was never held"
        said = out.getvalue()
        assert "kube-controller-manager" in said and "gave up waiting for the API server" in said
        assert kwok.stopped_components(name) == []
    finally:
        done.set()
        holder.join()
        local.down(name, out=io.StringIO())


def test_second_build_builds_nothing() -> None:
    """Nothing is built again: no component says it builds, and each one's build stamp (written
    by a build, with its time) and outputs are the same files as before, untouched. How long a
    cached build_all takes is not asserted."""
    first = build.build_all(out=io.StringIO())  # whatever is missing gets built (once)

    def files(results: list[build.Built]) -> dict[Path, tuple[int, int]]:
        paths = [r.path / name for r in results for name in (build.STAMP, *r.component.outputs)]
        return {path: (path.stat().st_ino, path.stat().st_mtime_ns) for path in paths}

    before = files(first)
    log = io.StringIO()
    results = build.build_all(out=log)
    assert all(r.cached for r in results), [r.component.name for r in results if not r.cached]
    assert log.getvalue() == ""
    assert [r.component.name for r in results] == [r.component.name for r in first]
    assert files(results) == before


def test_cli_commands_on_the_running_cluster(tmp_path: Path) -> None:
    """`tfjob-kit cluster ...` end to end, through the module entry point."""
    name = "tfjob-kit-test-cli"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}

    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "tfjob_kit.cli", "cluster", *args, "--name", name],
            capture_output=True,
            text=True,
            env=env,
            timeout=300,
            check=False,
        )

    assert cli("status").returncode == 1
    assert cli("kubeconfig").returncode == 1
    versions = load_versions()
    pinned = ".".join(versions.kube_minor)
    try:
        up = cli(
            *("up", "--no-addons", "--cpu-nodes", "0", "--gpu-nodes", "3", "--gpus-per-node", "2"),
            *("--kubernetes-version", pinned),
        )
        assert up.returncode == 0, up.stderr
        # Another minor is another cluster: refused at once, nothing built or changed.
        other = versions.kubernetes_releases[-1]
        moved = cli("up", "--no-addons", "--kubernetes-version", other.lstrip("v"))
        assert moved.returncode == 2
        assert f"runs Kubernetes {versions.kubernetes}, not {other}" in moved.stderr
        unknown = cli("up", "--kubernetes-version", "1.99")
        assert unknown.returncode == 2
        window = ", ".join(versions.kubernetes_minors)
        assert f"Kubernetes 1.99 is not one the local cluster runs ({window})" in unknown.stderr
        kubeconfig = Path(up.stdout.strip().splitlines()[-1])
        assert cli("kubeconfig").stdout.strip() == str(kubeconfig)
        status = cli("status", "-o", "json")
        assert status.returncode == 0
        info = json.loads(status.stdout)
        assert [n["gpus"] for n in info["nodes"]] == ["2", "2", "2"]
        env_lines = cli("env").stdout
        assert f"export KUBECONFIG={kubeconfig}" in env_lines
    finally:
        down = cli("down")
    assert down.returncode == 0, down.stderr
    assert cli("status").returncode == 1


def test_two_ups_at_once_each_get_their_own_ports() -> None:
    """Two creations at once (a fleet's hosts in one play), each with ports of its own: before
    the ports came from the registry, kwokctl gave both the same ones."""
    names = [f"{NAME}-a", f"{NAME}-b"]
    for name in names:
        local.down(name, out=io.StringIO())
    command = [sys.executable, "-m", "tfjob_kit.cli", "cluster", "up", "--no-addons"]
    size = ["--cpu-nodes", "1", "--gpu-nodes", "0"]
    try:
        runs = [
            subprocess.Popen(
                [*command, "--name", name, *size],
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                text=True,
            )
            for name in names
        ]
        outputs = [run.communicate(timeout=600)[0] for run in runs]
        assert [run.returncode for run in runs] == [0, 0], outputs
        ports = []
        for name in names:
            info = local.status(name)
            assert info["running"], (name, info)
            assert all(p["alive"] for p in info["processes"].values()), (name, info)
            server = yaml.safe_load(local.kubeconfig_path(name).read_text())["clusters"][0]
            ports.append(urlparse(server["cluster"]["server"]).port)
        assert ports[0] != ports[1], ports
    finally:
        for name in names:
            local.down(name, out=io.StringIO())
