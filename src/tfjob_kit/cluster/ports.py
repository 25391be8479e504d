"""Loopback ports for the local clusters' own processes, handed out once per machine.

A port found by binding port 0 lies in the kernel's ephemeral range, where every outgoing
connection on the machine also takes its local port: between the moment ``up`` chose such a
port and the moment the component bound it, a client's connection or another cluster's choice
could take it, and the component died with "address already in use". So ports come from
``RANGE``, outside the ephemeral range, and each handed-out port is written, under a lock, to a
registry beside the clusters (``kwok/.ports.json``): no two of our clusters get the same port,
however many start at once. Every port a local cluster listens on comes from here: kwokctl's
components (``kwok.PORT_OPTIONS``; kwokctl picks none itself), the addons and the local
controllers. ``down`` gives a cluster's ports back.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import random
import socket
import time
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from tfjob_kit.cluster.paths import (
    LOOPBACK,
    ClusterError,
    cluster_dir,
    kwok_workdir,
    private_dir,
    write_private,
)

RANGE = range(20000, 30000)
# A registry entry whose cluster directory never appeared (or is gone without ``down``) is
# dropped once it is this old: a creation takes minutes, not an hour.
STALE_AFTER_S = 3600.0
_EPHEMERAL = Path("/proc/sys/net/ipv4/ip_local_port_range")


def ephemeral_range() -> range:
    """The kernel's ephemeral port range (Linux's default when it cannot be read)."""
    try:
        low, high = (int(word) for word in _EPHEMERAL.read_text("ascii").split())
    except (OSError, ValueError):
        low, high = 32768, 60999
    return range(low, high + 1)


def candidates() -> list[int]:
    """The ports ``reserve`` may hand out: ``RANGE`` less the ephemeral range (all of
    ``RANGE`` on a machine whose ephemeral range covers it)."""
    ephemeral = ephemeral_range()
    outside = [port for port in RANGE if port not in ephemeral]
    return outside or list(RANGE)


def _registry() -> Path:
    return kwok_workdir() / ".ports.json"


@contextlib.contextmanager
def _locked() -> Iterator[None]:
    """Hold the machine's port lock (held for milliseconds: a read, binds, a write)."""
    path = private_dir(kwok_workdir()) / ".ports.lock"
    handle = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o600)
    try:
        fcntl.flock(handle, fcntl.LOCK_EX)
        yield
    finally:
        os.close(handle)  # releases the lock


def _read() -> dict[str, dict[str, Any]]:
    try:
        data = json.loads(_registry().read_text("utf-8"))
    except (OSError, ValueError):
        return {}
    return {k: v for k, v in data.items() if isinstance(v, dict)} if isinstance(data, dict) else {}


def _live(entry: dict[str, Any], now: float) -> bool:
    name = entry.get("cluster")
    if not isinstance(name, str):
        return False
    try:
        if cluster_dir(name).exists():
            return True
    except ClusterError:  # not a cluster name: not ours
        return False
    at = entry.get("at")
    return isinstance(at, (int, float)) and now - at < STALE_AFTER_S


def _bindable(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        try:
            sock.bind((LOOPBACK, port))
        except OSError:
            return False
    return True


def reserve(name: str, keys: Iterable[str]) -> dict[str, int]:
    """A free loopback port for each of ``keys``, registered to cluster ``name``; the
    cluster's earlier ports for the same keys are given back first."""
    keys = list(keys)
    pool = candidates()
    with _locked():
        now = time.time()
        registry = {
            port: entry
            for port, entry in _read().items()
            if _live(entry, now) and not (entry.get("cluster") == name and entry.get("key") in keys)
        }
        start = random.randrange(len(pool))  # spreads clusters of other caches
        chosen: dict[str, int] = {}
        for port in pool[start:] + pool[:start]:
            if len(chosen) == len(keys):
                break
            if str(port) in registry or not _bindable(port):
                continue
            key = keys[len(chosen)]
            chosen[key] = port
            registry[str(port)] = {"cluster": name, "key": key, "at": now}
        if len(chosen) < len(keys):
            raise ClusterError(
                f"cluster {name!r}: no free loopback port left in {pool[0]}-{pool[-1]} "
                f"({len(registry)} held by local clusters, see {_registry()})"
            )
        write_private(_registry(), json.dumps(registry, indent=1, sort_keys=True) + "\n")
    return chosen


def release(name: str) -> None:
    """Give back every port registered to cluster ``name``."""
    if not _registry().exists():
        return
    with _locked():
        registry = _read()
        kept = {port: entry for port, entry in registry.items() if entry.get("cluster") != name}
        if kept != registry:
            write_private(_registry(), json.dumps(kept, indent=1, sort_keys=True) + "\n")
