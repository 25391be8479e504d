"""Local-cluster paths: names that become paths are validated, state files are private and
never written through a symlink, and the checkout is never taken from the current directory."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from tfjob_kit import versions
from tfjob_kit.cluster import local, paths
from tfjob_kit.cluster.paths import ClusterError


@pytest.mark.parametrize(
    "name",
    [
        "../../..",
        "/some/dir",
        "..",
        "a/b",
        "Upper",
        "-x",
        "x-",
        "",
        "a" * 64,
        "dot.ted",
        "sp ace",
        "nul\0",
    ],
)
def test_bad_cluster_names_are_refused(name: str) -> None:
    with pytest.raises(ClusterError, match="invalid cluster name"):
        local.cluster_dir(name)


@pytest.mark.parametrize("name", ["tfjob-kit", "a", "x1", "tfjob-kit-test-main-0a1b2c", "a" * 63])
def test_good_cluster_names(name: str) -> None:
    assert local.cluster_dir(name).name == name


@pytest.mark.parametrize("name", ["../../..", "/victim"])
def test_cluster_down_with_a_path_as_name_deletes_nothing(tmp_path: Path, name: str) -> None:
    cache = tmp_path / "cache"
    (cache / "kwok" / "clusters").mkdir(parents=True)
    victim = tmp_path / "victim"
    victim.mkdir()
    (victim / "keep").write_text("mine")
    (tmp_path / "keep").write_text("mine")
    target = name if name != "/victim" else str(victim)
    env = {**os.environ, "TFJOB_KIT_CACHE": str(cache), "PYTHONPATH": os.pathsep.join(sys.path)}
    proc = subprocess.run(
        [sys.executable, "-m", "tfjob_kit.cli", "cluster", "down", "--name", target],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 2, proc.stderr
    assert "invalid cluster name" in proc.stderr
    assert (tmp_path / "keep").read_text() == "mine"
    assert (victim / "keep").read_text() == "mine"


def test_write_private_replaces_a_symlink_not_its_target(tmp_path: Path) -> None:
    victim = tmp_path / "victim"
    victim.write_text("someone else's")
    state = tmp_path / "state"
    state.mkdir(mode=0o755)
    link = state / "tls.key"
    link.symlink_to(victim)
    paths.write_private(link, b"secret")
    assert victim.read_text() == "someone else's"
    assert not link.is_symlink() and link.read_bytes() == b"secret"
    assert stat.S_IMODE(link.stat().st_mode) == 0o600
    assert stat.S_IMODE(state.stat().st_mode) == 0o700
    assert [p.name for p in state.iterdir()] == ["tls.key"]  # no temporary file left


def test_write_private_fixes_the_mode_of_an_existing_file(tmp_path: Path) -> None:
    path = tmp_path / "a.kubeconfig"
    path.write_text("old")
    path.chmod(0o644)
    paths.write_private(path, "new")
    assert stat.S_IMODE(path.stat().st_mode) == 0o600 and path.read_text() == "new"


def test_private_dir_refuses_a_symlink(tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    link = tmp_path / "certs"
    link.symlink_to(elsewhere)
    with pytest.raises(ClusterError, match="symlink"):
        paths.private_dir(link)


def test_repo_root_is_never_the_current_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An installed CLI run inside somebody else's checkout must not adopt it."""
    foreign = tmp_path / "untrusted-checkout"
    (foreign / "components" / "go").mkdir(parents=True)
    (foreign / "versions.toml").write_text("")
    installed = tmp_path / "site-packages" / "tfjob_kit" / "versions.py"
    monkeypatch.setattr(versions, "__file__", str(installed))
    monkeypatch.delenv("TFJOB_KIT_ROOT", raising=False)
    monkeypatch.chdir(foreign)
    with pytest.raises(versions.VersionsError, match="TFJOB_KIT_ROOT"):
        versions.repo_root()
    monkeypatch.setenv("TFJOB_KIT_ROOT", str(foreign))
    assert versions.repo_root() == foreign.resolve()


def test_cluster_down_signals_no_process_a_stale_pid_file_names(tmp_path: Path) -> None:
    """After a reboot or a crash, kwokctl's pid files may name whatever process holds that pid
    now: `cluster down` leaves it alone, and still counts a process running the cluster's own
    binary as the cluster's (issue 24, finding 5)."""
    cache = tmp_path / "cache"
    cluster = cache / "kwok" / "clusters" / "stale"
    (cluster / "pids").mkdir(parents=True)
    (cluster / "bin").mkdir()
    stranger = subprocess.Popen(["sleep", "60"])
    try:
        (cluster / "pids" / "etcd.pid").write_text(f"{stranger.pid}\n")
        env = {**os.environ, "TFJOB_KIT_CACHE": str(cache), "PYTHONPATH": os.pathsep.join(sys.path)}
        count = "from tfjob_kit.cluster.procs import kwok_pids; print(len(kwok_pids('stale')))"
        listed = subprocess.run(
            [sys.executable, "-c", count], env=env, capture_output=True, text=True, check=True
        )
        assert listed.stdout.strip() == "0"
        proc = subprocess.run(
            [sys.executable, "-m", "tfjob_kit.cli", "cluster", "down", "--name", "stale"],
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert proc.returncode == 0, proc.stdout + proc.stderr
        assert stranger.poll() is None, "cluster down killed a process that was not the cluster's"
        assert not cluster.exists()
        # The same pid file, where the process runs a binary the cluster was given: its own.
        (cluster / "pids").mkdir(parents=True)
        (cluster / "bin").mkdir()
        (cluster / "bin" / "etcd").symlink_to(Path(f"/proc/{stranger.pid}/exe").resolve())
        (cluster / "pids" / "etcd.pid").write_text(f"{stranger.pid}\n")
        listed = subprocess.run(
            [sys.executable, "-c", count], env=env, capture_output=True, text=True, check=True
        )
        assert listed.stdout.strip() == "1"
    finally:
        stranger.kill()
        stranger.wait()
