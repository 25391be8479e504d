"""The cluster itself: kwokctl's configuration, creating, restarting and deleting a kwokctl
cluster.

A kwokctl ``binary``-runtime cluster: the real etcd, kube-apiserver, kube-controller-manager and
kube-scheduler we built, and kwok simulating the nodes and the pods' lifecycle (the stages of
``components/kwok/pod-stages.yaml``). Everything binds to the loopback interface, and etcd serves
clients and peers over mutual TLS with the cluster's own CA (``etcd_tls_patches``).
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import tempfile
from collections.abc import Collection, Mapping
from pathlib import Path
from typing import Any, TextIO

import yaml

from tfjob_kit.cluster import build
from tfjob_kit.cluster.options import UpOptions
from tfjob_kit.cluster.paths import (
    LOOPBACK,
    UMASK,
    ClusterError,
    bin_root,
    cluster_dir,
    kubeconfig_path,
    kwok_workdir,
    logs_dir,
    private_dir,
)
from tfjob_kit.cluster.ports import reserve
from tfjob_kit.cluster.procs import kwok_pids, proc_start_time, reap, say, wait
from tfjob_kit.versions import Versions, VersionsError, load_versions


def _kwok_env(name: str) -> dict[str, str]:
    env = dict(os.environ)
    env["KWOK_WORKDIR"] = str(kwok_workdir())
    # kwokctl (and the components it starts) write client caches under $HOME/.kube: keep
    # them inside the cluster's directory so `down` removes them.
    env["HOME"] = str(cluster_dir(name) / "home")
    return env


def _kwokctl(
    versions: Versions,
    name: str,
    *args: str,
    out: TextIO,
    check: bool = True,
    timeout: float = 600.0,
) -> int:
    """Run kwokctl with its output in a temporary file (shown only on failure).

    A file rather than a pipe: nothing kwokctl leaves running can keep us waiting for EOF.
    """
    kwokctl = build.binary("kwokctl", "kwok", versions)
    with tempfile.TemporaryFile(mode="w+", prefix="tfjob-kit-kwokctl-") as log:
        try:
            rc = subprocess.run(
                [str(kwokctl), *args],
                env=_kwok_env(name),
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                timeout=timeout,
                check=False,
                umask=UMASK,
            ).returncode
        except subprocess.TimeoutExpired:
            rc = -1
        if check and rc != 0:
            log.seek(0)
            tail = "\n".join(_readable(line) for line in log.read().splitlines()[-30:])
            what = "timed out" if rc == -1 else f"failed (exit {rc})"
            raise ClusterError(f"`kwokctl {' '.join(args)}` {what}:\n{tail}")
    return rc


def _readable(line: str) -> str:
    """One line of kwokctl's log: its JSON records as "LEVEL message: error"."""
    try:
        record = json.loads(line)
    except ValueError:
        return line
    if not isinstance(record, dict) or "msg" not in record:
        return line
    error = f": {record['err']}" if record.get("err") else ""
    return f"{record.get('level', '')} {record['msg']}{error}".strip()


def etcd_tls_patches(pki: Path, client_port: int, peer_port: int) -> list[dict[str, Any]]:
    """etcd serves clients and its peer port over TLS and admits only certificates of the
    cluster's own CA; the API server presents kwokctl's admin certificate to it."""

    def args(override: bool, **flags: str) -> list[dict[str, Any]]:
        return [
            {"key": k.replace("_", "-"), "value": v, "override": override} for k, v in flags.items()
        ]

    client = f"https://{LOOPBACK}:{client_port}"
    peer = f"https://{LOOPBACK}:{peer_port}"
    ca, cert, key = str(pki / "ca.crt"), str(pki / "admin.crt"), str(pki / "admin.key")
    etcd = args(
        True,
        listen_client_urls=client,
        advertise_client_urls=client,
        listen_peer_urls=peer,
        initial_advertise_peer_urls=peer,
        initial_cluster=f"node0={peer}",
    )
    etcd += args(
        False,
        cert_file=cert,
        key_file=key,
        trusted_ca_file=ca,
        client_cert_auth="true",
        peer_cert_file=cert,
        peer_key_file=key,
        peer_trusted_ca_file=ca,
        peer_client_cert_auth="true",
    )
    apiserver = args(True, etcd_servers=client)
    apiserver += args(False, etcd_cafile=ca, etcd_certfile=cert, etcd_keyfile=key)
    return [{"name": "etcd", "extraArgs": etcd}, {"name": "kube-apiserver", "extraArgs": apiserver}]


def single_instance_patches() -> list[dict[str, Any]]:
    """The controller-manager and the scheduler run without leader election: each cluster has
    one of each, and a lease renewed every 2 s was most of an idle cluster's API writes."""
    flag = [{"key": "leader-elect", "value": "false", "override": False}]
    return [{"name": c, "extraArgs": flag} for c in ("kube-controller-manager", "kube-scheduler")]


KWOK_PARALLELISM = 16


# The configuration option of each port a kwokctl cluster listens on, by its key in the machine's
# port registry. kwokctl would pick the ones left at 0 itself, counting down from 32767 and
# taking the first it can bind: two creations at once took the same ones, and any process (an
# outgoing connection, where the ephemeral range reaches that low) could take one before the
# component bound it. So every one comes from ``ports.reserve``.
PORT_OPTIONS = {
    "etcd_client": "etcdPort",
    "etcd_peer": "etcdPeerPort",
    "kube_apiserver": "kubeApiserverPort",
    "kube_controller_manager": "kubeControllerManagerPort",
    "kube_scheduler": "kubeSchedulerPort",
    "kwok_controller": "kwokControllerPort",
}


def kwokctl_config(
    opts: UpOptions, root: Path, versions: Versions, ports: Mapping[str, int]
) -> str:
    """kwokctl's configuration: the pod lifecycle stages, loopback only, the components on
    ``ports`` (by ``PORT_OPTIONS`` key; reserved by ``create_cluster``) and etcd over mutual
    TLS."""
    stages = (root / "components" / "kwok" / "node-stages.yaml").read_text("utf-8") + (
        (root / "components" / "kwok" / "pod-stages.yaml")
        .read_text("utf-8")
        .replace("@TFJOB_RUN_MS@", str(int(opts.tfjob_run_seconds * 1000)))
        .replace("@JOB_RUN_MS@", str(int(opts.job_run_seconds * 1000)))
    )
    client_port, peer_port = ports["etcd_client"], ports["etcd_peer"]
    header = {
        "apiVersion": "config.kwok.x-k8s.io/v1alpha1",
        "kind": "KwokctlConfiguration",
        "options": {
            # Selects the flags kwokctl passes to the components; the binaries are ours.
            "kubeVersion": versions.kubernetes,
            # Fail fast on bad input rather than silently retrying for minutes.
            "kubeAdmission": True,
            "kubeAuthorization": True,
            # etcd, the API server, controller-manager, scheduler and kwok: loopback only
            # (kwokctl's default is every interface).
            "bindAddress": LOOPBACK,
            **{option: ports[key] for key, option in PORT_OPTIONS.items()},
        },
        "componentsPatches": etcd_tls_patches(
            cluster_dir(opts.name) / "pki", client_port, peer_port
        )
        + single_instance_patches(),
    }
    # kwok plays each stage of 4 nodes or pods at a time by default: a thousand nodes took over
    # two minutes to turn Ready. Wider, the API server stays the limit.
    kwok = {
        "apiVersion": "config.kwok.x-k8s.io/v1alpha1",
        "kind": "KwokConfiguration",
        "options": {
            "nodePlayStageParallelism": KWOK_PARALLELISM,
            "podPlayStageParallelism": KWOK_PARALLELISM,
            "nodeLeaseParallelism": KWOK_PARALLELISM,
        },
    }
    return (
        "---\n"
        + yaml.safe_dump(header, sort_keys=False)
        + "---\n"
        + yaml.safe_dump(kwok, sort_keys=False)
        + stages
    )


def create_cluster(opts: UpOptions, versions: Versions, root: Path, out: TextIO) -> None:
    """``kwokctl create cluster`` with our binaries and ports. It returns once every component
    has started (whether the API server serves is the caller's to wait for, with
    ``check_components``); a failure names the components that stopped, with their logs' ends."""
    kube = build.components(versions)["kube"]
    kube_dir = bin_root() / kube.dirname
    private_dir(cluster_dir(opts.name).parent)
    fd, temp = tempfile.mkstemp(prefix="tfjob-kit-kwokctl-", suffix=".yaml")
    os.close(fd)  # mkstemp: a new 0600 file of our own
    config = Path(temp)
    try:
        ports = reserve(opts.name, PORT_OPTIONS)
        config.write_text(kwokctl_config(opts, root, versions, ports), encoding="utf-8")
        _kwokctl(
            versions,
            opts.name,
            "create",
            "cluster",
            "--name",
            opts.name,
            "--runtime",
            "binary",
            "--kube-apiserver-binary",
            str(kube_dir / "kube-apiserver"),
            "--kube-controller-manager-binary",
            str(kube_dir / "kube-controller-manager"),
            "--kube-scheduler-binary",
            str(kube_dir / "kube-scheduler"),
            "--kwok-controller-binary",
            str(build.binary("kwok", "kwok", versions)),
            "--etcd-binary",
            str(build.binary("etcd", "etcd", versions)),
            "--config",
            str(config),
            "--kubeconfig",
            "",  # never touch ~/.kube/config
            out=out,
            timeout=opts.timeout + 60,
        )
    except ClusterError as exc:
        raise ClusterError(f"{exc}{_stopped_report(opts.name)}") from None
    finally:
        config.unlink(missing_ok=True)


LOG_LINES = 15

# What the log of a component that gave up waiting for the API server as it started ends
# with: kwokctl starts them together with the API server, not after it, and
# kube-controller-manager waits 10 s for the API server's health (kwok-controller about 30 s
# for a node list) before it exits. On a busy machine (a fleet's clusters starting at once on
# two cores) the API server can take longer; such a component is started again once it serves.
GAVE_UP_WAITING = {
    "kube-controller-manager": "failed to wait for apiserver being healthy",
    "kwok-controller": "Failed to list nodes",
}


def _log_tail(name: str, component: str) -> tuple[Path, list[str]]:
    log = logs_dir(name) / f"{component}.log"
    try:
        return log, log.read_text("utf-8", errors="replace").splitlines()[-LOG_LINES:]
    except OSError:
        return log, ["(no log)"]


def gave_up_waiting(name: str) -> list[str]:
    """The stopped components of cluster ``name`` whose log's end says they gave up waiting
    for the API server (``GAVE_UP_WAITING``)."""
    return [
        component
        for component in stopped_components(name)
        if component in GAVE_UP_WAITING
        and any(GAVE_UP_WAITING[component] in line for line in _log_tail(name, component)[1])
    ]


def _stopped_report(name: str, but: Collection[str] = ()) -> str:
    """The components of cluster ``name`` that stopped, but those named in ``but``, each with
    its log's last lines (empty when none did)."""
    report = ""
    for component in stopped_components(name):
        if component in but:
            continue
        log, lines = _log_tail(name, component)
        report += f"\n{component} stopped; the end of {log}:\n" + "\n".join(
            f"  {line}" for line in lines
        )
    return report


def check_components(name: str, but: Collection[str] = ()) -> None:
    """ClusterError when a component of cluster ``name`` stopped, but those named in ``but``
    (a component that exits while its cluster starts does not come back: waiting on would only
    time out)."""
    if report := _stopped_report(name, but):
        raise ClusterError(
            f"cluster {name!r} cannot start:{report}\n`tfjob-kit cluster down --name {name}` "
            "stops and removes what did start"
        )


def _stopped_pid_files(name: str) -> list[Path]:
    """The pid files of the cluster's kwokctl components that do not run.

    kwokctl takes a component for running when its recorded pid answers signal 0: a component
    killed with SIGKILL whose pid now belongs to another process (or to a zombie nobody reaped)
    counts as running for it, so here only the process that runs the component's own binary
    does."""
    binaries = cluster_dir(name) / "bin"
    stopped = []
    for path in sorted((cluster_dir(name) / "pids").glob("*.pid")):
        pid = None
        with contextlib.suppress(OSError, ValueError):
            pid = int(path.read_text().strip())
        argv0 = b""
        if pid is not None and proc_start_time(pid) is not None:  # alive, not a zombie
            with contextlib.suppress(OSError):
                argv0 = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")[0]
        if argv0 != str(binaries / path.stem).encode():
            stopped.append(path)
    return stopped


def stopped_components(name: str) -> list[str]:
    """The cluster's kwokctl components (etcd, kube-apiserver, ...) that do not run, by name."""
    return [path.stem for path in _stopped_pid_files(name)]


def start_cluster(name: str, versions: Versions, timeout: float, out: TextIO) -> None:
    """``kwokctl start cluster``: start again, in place, the components that are not running
    (etcd keeps its data); the ones still running are left alone. ClusterError when kwokctl
    fails; whether the API server then serves is the caller's to wait for. The pid files of
    the stopped ones are removed first, so that kwokctl cannot take a reused pid for them."""
    for path in _stopped_pid_files(name):
        path.unlink(missing_ok=True)
    _kwokctl(
        versions,
        name,
        "start",
        "cluster",
        "--name",
        name,
        "--timeout",
        f"{int(timeout)}s",
        out=out,
        timeout=timeout + 60,
    )


def restrict(name: str) -> None:
    """Credentials are for this user only: kubeconfig and private keys 0600, dirs 0700."""
    directory = cluster_dir(name)
    directory.chmod(0o700)
    for path in (kubeconfig_path(name), directory / "kubeconfig", *directory.glob("pki/*.key")):
        with contextlib.suppress(FileNotFoundError):
            path.chmod(0o600)


def delete_cluster(name: str, out: TextIO) -> None:
    """``kwokctl delete cluster``, then make sure its processes are gone (killing the ones
    still there, by pid and start time) and remove the cluster's directory."""
    directory = cluster_dir(name)
    kwok_procs = [(pid, proc_start_time(pid)) for pid in kwok_pids(name)]
    try:
        versions = load_versions()
        _kwokctl(
            versions,
            name,
            "delete",
            "cluster",
            "--name",
            name,
            "--kubeconfig",
            "",
            out=out,
            check=False,
            timeout=120,
        )
    except (ClusterError, VersionsError) as exc:  # kwokctl not built: stop its processes ourselves
        say(out, f"[down] {exc}")

    def kwok_gone() -> bool:
        for pid, _ in kwok_procs:
            reap(pid)
        return all(start is None or proc_start_time(pid) != start for pid, start in kwok_procs)

    with contextlib.suppress(ClusterError):
        wait("kwokctl's processes to exit", kwok_gone, 10, interval=0.1)
    for pid, start in kwok_procs:
        if start and proc_start_time(pid) == start:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
    wait("kwokctl's processes to exit", kwok_gone, 10, interval=0.1)
    shutil.rmtree(directory, ignore_errors=True)
