"""The local clusters' ports: outside the kernel's ephemeral range (where any outgoing
connection could take a chosen port before its component binds it), never handed to two of
our clusters at once, skipped when something else listens, given back by ``down``."""

from __future__ import annotations

import json
import socket
import threading
import time
from pathlib import Path

import pytest

from tfjob_kit.cluster import ports
from tfjob_kit.cluster.paths import LOOPBACK, ClusterError


@pytest.fixture(autouse=True)
def _cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("TFJOB_KIT_CACHE", str(tmp_path / "cache"))
    return tmp_path / "cache"


def test_ports_lie_outside_the_ephemeral_range() -> None:
    got = ports.reserve("one", ("a", "b", "c"))
    assert sorted(got) == ["a", "b", "c"]
    ephemeral = ports.ephemeral_range()
    for port in got.values():
        assert port in ports.RANGE
        assert port not in ephemeral or all(p in ephemeral for p in ports.RANGE)


def test_concurrent_reservations_never_share_a_port(monkeypatch: pytest.MonkeyPatch) -> None:
    # A pool barely larger than the demand: random starts alone would collide.
    pool = [p for p in ports.candidates()[:60]]
    monkeypatch.setattr(ports, "candidates", lambda: pool)
    # Only the registry's lock is under test: the local clusters of the same test run listen on
    # ports of this pool now and then (test_a_port_something_listens_on_is_skipped covers that).
    monkeypatch.setattr(ports, "_bindable", lambda port: True)
    results: dict[str, dict[str, int]] = {}

    def take(name: str) -> None:
        results[name] = ports.reserve(name, [f"k{i}" for i in range(9)])

    threads = [threading.Thread(target=take, args=(f"c{i}",)) for i in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    taken = [port for chosen in results.values() for port in chosen.values()]
    assert len(results) == 6
    assert len(taken) == len(set(taken)) == 54


def test_a_port_something_listens_on_is_skipped(monkeypatch: pytest.MonkeyPatch) -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as busy:
        for port in ports.candidates():
            try:
                busy.bind((LOOPBACK, port))
                break
            except OSError:
                continue
        busy.listen()
        held = busy.getsockname()[1]
        free = next(p for p in ports.candidates() if p != held and ports._bindable(p))
        monkeypatch.setattr(ports, "candidates", lambda: [held, free])
        monkeypatch.setattr("tfjob_kit.cluster.ports.random.randrange", lambda n: 0)
        assert ports.reserve("one", ["a"]) == {"a": free}


def test_release_gives_back_only_that_clusters_ports(monkeypatch: pytest.MonkeyPatch) -> None:
    pool = ports.candidates()[:4]
    monkeypatch.setattr(ports, "candidates", lambda: pool)
    first = ports.reserve("one", ["a", "b"])
    second = ports.reserve("two", ["a", "b"])
    assert not set(first.values()) & set(second.values())
    with pytest.raises(ClusterError, match="no free loopback port"):
        ports.reserve("three", ["a"])
    ports.release("one")
    third = ports.reserve("three", ["a", "b"])
    assert set(third.values()) == set(first.values())
    # Reserving a key again hands the cluster's old port back first.
    again = ports.reserve("three", ["a"])
    assert again["a"] in first.values()


def test_stale_entries_are_dropped_fresh_ones_kept(_cache: Path) -> None:
    registry = _cache / "kwok" / ".ports.json"
    registry.parent.mkdir(parents=True)
    stale, fresh, alive = ports.candidates()[:3]
    (_cache / "kwok" / "clusters" / "alive").mkdir(parents=True)
    old = time.time() - ports.STALE_AFTER_S - 60
    registry.write_text(
        json.dumps(
            {
                str(stale): {"cluster": "gone", "key": "a", "at": old},
                str(fresh): {"cluster": "creating", "key": "a", "at": time.time()},
                str(alive): {"cluster": "alive", "key": "a", "at": old},
                "1": {"cluster": "../x", "key": "a", "at": time.time()},
            }
        )
    )
    ports.reserve("new", ["a"])
    kept = json.loads(registry.read_text())
    assert str(stale) not in kept and "1" not in kept
    assert kept[str(fresh)]["cluster"] == "creating"
    assert kept[str(alive)]["cluster"] == "alive"
    assert oct(registry.stat().st_mode & 0o777) == "0o600"


def test_release_without_a_registry_creates_nothing(_cache: Path) -> None:
    ports.release("none")
    assert not _cache.exists()
