"""Process supervision of the local cluster: our processes' records, and a cluster's state.

Each process ``up`` starts runs in a session of its own, its output in
``logs/<name>.log``, and leaves a record (pid, kernel start time, argv) in
``tfjob-kit/procs/<name>.json``: a pid alone could be reused by an unrelated process, the pair
cannot, so ``down`` never signals a stranger. ``state.json`` keeps what a later ``up`` or
``status`` must know (the ports chosen, whether the webhook and addons run). kwokctl's own
processes are read from its ``pids/`` directory.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from tfjob_kit.cluster.paths import (
    UMASK,
    ClusterError,
    cluster_dir,
    logs_dir,
    private_dir,
    state_dir,
    write_private,
)


# ---- small helpers ------------------------------------------------------------------------
def say(out: TextIO, message: str) -> None:
    print(message, file=out, flush=True)


def wait(what: str, check: Callable[[], bool], timeout: float, interval: float = 0.5) -> None:
    """Poll ``check`` until it holds; ClusterError naming ``what`` after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        if check():
            return
        if time.monotonic() > deadline:
            raise ClusterError(f"timed out after {timeout:.0f}s waiting for {what}")
        time.sleep(interval)


def http_ok(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=2) as resp:
            return bool(resp.status == 200)
    except (urllib.error.URLError, OSError):
        return False


# ---- process records ----------------------------------------------------------------------
def proc_start_time(pid: int) -> str | None:
    """The kernel's start time of ``pid`` (None when it is gone or a zombie)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text(encoding="utf-8")
    except OSError:
        return None
    fields = stat[stat.rindex(")") + 2 :].split()
    if fields[0] == "Z":  # zombie: dead for our purposes
        return None
    return fields[19]


def reap(pid: int) -> None:
    with contextlib.suppress(ChildProcessError, OSError):
        os.waitpid(pid, os.WNOHANG)


@dataclass
class ProcRecord:
    name: str
    pid: int
    start: str
    argv: list[str]

    def alive(self) -> bool:
        reap(self.pid)
        return proc_start_time(self.pid) == self.start

    def stop(self, grace: float = 10.0) -> None:
        if not self.alive():
            return
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.pid, signal.SIGTERM)
        deadline = time.monotonic() + grace
        while self.alive() and time.monotonic() < deadline:
            time.sleep(0.1)
        if self.alive():
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.pid, signal.SIGKILL)
            wait(f"{self.name} (pid {self.pid}) to exit", lambda: not self.alive(), 10)


def records(name: str) -> list[ProcRecord]:
    """The records of the processes ``up`` started for cluster ``name``, by process name."""
    out: list[ProcRecord] = []
    procs = state_dir(name) / "procs"
    for path in sorted(procs.glob("*.json")) if procs.is_dir() else []:
        with contextlib.suppress(OSError, ValueError, KeyError, TypeError):
            data = json.loads(path.read_text(encoding="utf-8"))
            out.append(ProcRecord(data["name"], int(data["pid"]), data["start"], data["argv"]))
    return out


def spawn(
    name: str, cluster: str, argv: list[str], env: dict[str, str] | None = None
) -> ProcRecord:
    """Start ``argv`` as process ``name`` of ``cluster`` (new session, log file, record)."""
    logs = private_dir(logs_dir(cluster))
    procs = private_dir(state_dir(cluster) / "procs")
    fd = os.open(
        logs / f"{name}.log", os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_NOFOLLOW, 0o600
    )
    with os.fdopen(fd, "ab") as log:
        proc = subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            cwd=state_dir(cluster),
            env=env,
            start_new_session=True,
            umask=UMASK,
        )
    start = None
    for _ in range(50):
        start = proc_start_time(proc.pid)
        if start:
            break
        time.sleep(0.02)
    if start is None:
        raise ClusterError(f"{name} exited immediately; see {logs / f'{name}.log'}")
    record = ProcRecord(name, proc.pid, start, argv)
    write_private(procs / f"{name}.json", json.dumps(record.__dict__))
    return record


def check_alive(name: str, processes: Iterable[str]) -> None:
    """Raise ClusterError, with the tail of its log, when one of ``processes`` has exited."""
    wanted = set(processes)
    for record in records(name):
        if record.name in wanted and not record.alive():
            log = logs_dir(name) / f"{record.name}.log"
            tail = ""
            with contextlib.suppress(OSError):
                tail = "\n".join(log.read_text("utf-8", errors="replace").splitlines()[-20:])
            raise ClusterError(f"{record.name} exited; last lines of {log}:\n{tail}")


def kwok_pids(name: str) -> list[int]:
    """The pids kwokctl recorded for the cluster's etcd, control plane and kwok, where each is
    still the cluster's own: a process whose executable is one of the binaries kwokctl gave the
    cluster (``<cluster>/bin``). After a reboot or a crash a pid file may name whatever process
    holds that pid now; that one is not the cluster's, and is never signalled."""
    own = _cluster_binaries(name)
    pids = []
    for path in sorted((cluster_dir(name) / "pids").glob("*.pid")):
        with contextlib.suppress(OSError, ValueError):
            pid = int(path.read_text().strip())
            if pid > 0 and Path(f"/proc/{pid}/exe").resolve(strict=True) in own:
                pids.append(pid)
    return pids


def _cluster_binaries(name: str) -> set[Path]:
    """The executables kwokctl runs the cluster's components from (links into the cache)."""
    found = set()
    for path in (cluster_dir(name) / "bin").glob("*"):
        with contextlib.suppress(OSError):
            found.add(path.resolve(strict=True))
    return found


def rss_kib(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text(encoding="utf-8").splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    except (OSError, ValueError):
        pass
    return 0


# ---- state --------------------------------------------------------------------------------
def save_state(name: str, state: dict[str, Any]) -> None:
    write_private(state_dir(name) / "state.json", json.dumps(state, indent=2) + "\n")


def load_state(name: str) -> dict[str, Any]:
    try:
        data: dict[str, Any] = json.loads((state_dir(name) / "state.json").read_text("utf-8"))
        return data
    except (OSError, json.JSONDecodeError):
        return {}
