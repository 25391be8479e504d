"""Where the local cluster's inputs and outputs live.

Inputs come from the toolkit's own files (``tfjob_kit.versions``): ``versions.toml`` and
the Go wrapper modules under ``components/go``. Outputs go to a per-user cache
(``$TFJOB_KIT_CACHE``, else ``$XDG_CACHE_HOME/tfjob-kit``, else ``~/.cache/tfjob-kit``):
``bin/<name>-<version>/`` for built binaries and ``kwok/`` for kwokctl's cluster state.

Everything of one cluster lives in ``kwok/clusters/<name>/`` (``cluster_dir``): kwokctl's
files, ``kubeconfig.yaml`` (0600), ``logs/<component>.log`` and ``tfjob-kit/`` (our process
records, state, identities' tokens and the webhook certificate). It is this user's alone:
0700 directories, 0600 files written with ``O_EXCL|O_NOFOLLOW``, processes run with ``UMASK``.
"""

from __future__ import annotations

import os
import secrets
import stat
from pathlib import Path

from tfjob_kit.cluster.options import DEFAULT_NAME
from tfjob_kit.model import is_dns1123_label

# Whatever kwokctl and the local processes create is this user's only.
UMASK = 0o077
# Every local process listens here and nowhere else.
LOOPBACK = "127.0.0.1"


class ClusterError(RuntimeError):
    """A local-cluster operation failed; the message says what and where."""


def validate_cluster_name(name: str) -> str:
    """Return ``name`` if it is a valid local-cluster name, else raise ClusterError.

    A cluster's name becomes a directory name, a kubeconfig context and part of object names:
    a DNS-1123 label, so it can never climb out of the clusters directory."""
    if not is_dns1123_label(name):
        raise ClusterError(
            f"invalid cluster name {name!r}: use 1 to 63 lower-case letters, digits and '-', "
            "starting and ending with a letter or digit"
        )
    return name


def private_dir(path: Path) -> Path:
    """Create ``path`` (and missing parents) as directories only this user can enter (0700);
    refuse a symlink or a directory somebody else owns."""
    path.mkdir(parents=True, exist_ok=True, mode=0o700)
    info = os.lstat(path)
    if stat.S_ISLNK(info.st_mode) or not stat.S_ISDIR(info.st_mode):
        raise ClusterError(f"{path} is not a directory (a symlink?): refusing to use it")
    if info.st_uid != os.getuid():
        raise ClusterError(f"{path} belongs to uid {info.st_uid}, not to you: refusing to use it")
    if stat.S_IMODE(info.st_mode) != 0o700:
        path.chmod(0o700)
    return path


def write_private(path: Path, data: str | bytes) -> Path:
    """Write a file only this user can read (0600), atomically, never through a symlink: the
    content goes to a new file (``O_CREAT|O_EXCL|O_NOFOLLOW``) that then replaces ``path``."""
    private_dir(path.parent)
    raw = data.encode("utf-8") if isinstance(data, str) else data
    temp = path.with_name(f".{path.name}.{secrets.token_hex(6)}")
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
    fd = os.open(temp, flags, 0o600)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(raw)
        temp.replace(path)
    except BaseException:
        temp.unlink(missing_ok=True)
        raise
    return path


def cache_root() -> Path:
    env = os.environ.get("TFJOB_KIT_CACHE")
    if env:
        return Path(env).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg).expanduser() if xdg else Path.home() / ".cache"
    return base / "tfjob-kit"


def bin_root() -> Path:
    return cache_root() / "bin"


def kwok_workdir() -> Path:
    """KWOK_WORKDIR for kwokctl: clusters live in ``<this>/clusters/<name>``."""
    return cache_root() / "kwok"


def cluster_dir(name: str = DEFAULT_NAME) -> Path:
    return kwok_workdir() / "clusters" / validate_cluster_name(name)


def kubeconfig_path(name: str = DEFAULT_NAME) -> Path:
    return cluster_dir(name) / "kubeconfig.yaml"


def state_dir(name: str) -> Path:
    """tfjob-kit's own files of a cluster: process records, state, tokens, certificates."""
    return cluster_dir(name) / "tfjob-kit"


def logs_dir(name: str) -> Path:
    return cluster_dir(name) / "logs"


def cert_dir(name: str) -> Path:
    """The operator's webhook serving certificate (the kubelet would mount it in a pod)."""
    return state_dir(name) / "webhook-certs"
