"""Where the local cluster's inputs and outputs live.

Inputs come from the repository checkout: ``versions.toml`` (the single version lock) and
the Go wrapper modules under ``cluster/go``. Outputs go to a per-user cache
(``$TFJOB_KIT_CACHE``, else ``$XDG_CACHE_HOME/tfjob-kit``, else ``~/.cache/tfjob-kit``):
``bin/<name>-<version>/`` for built binaries and ``kwok/`` for kwokctl's cluster state.
"""

from __future__ import annotations

import os
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

VERSIONS_FILE = "versions.toml"


class ClusterError(RuntimeError):
    """A local-cluster operation failed; the message says what and where."""


def _looks_like_root(path: Path) -> bool:
    return (path / VERSIONS_FILE).is_file() and (path / "cluster" / "go").is_dir()


def repo_root() -> Path:
    """The tfjob-kit checkout holding versions.toml and cluster/go.

    ``$TFJOB_KIT_ROOT`` wins; otherwise the directories above this file and above the
    current directory are searched.
    """
    env = os.environ.get("TFJOB_KIT_ROOT")
    if env:
        root = Path(env).expanduser().resolve()
        if not _looks_like_root(root):
            raise ClusterError(f"TFJOB_KIT_ROOT={env} has no {VERSIONS_FILE} and cluster/go")
        return root
    for start in (Path(__file__).resolve(), Path.cwd().resolve()):
        for candidate in (start, *start.parents):
            if _looks_like_root(candidate):
                return candidate
    raise ClusterError(
        f"cannot find the tfjob-kit checkout ({VERSIONS_FILE} + cluster/go); "
        "run from the repository or set TFJOB_KIT_ROOT"
    )


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


@dataclass(frozen=True)
class Versions:
    kubernetes: str
    etcd: str
    kwok: str
    training_operator: str
    volcano: str
    volcano_apis: str
    helm: str
    kubectl: str

    @property
    def kube_minor(self) -> tuple[str, str]:
        major, minor = self.kubernetes.lstrip("v").split(".")[:2]
        return major, minor


def _section_version(data: dict[str, Any], name: str, key: str = "version") -> str:
    section = data.get(name)
    if not isinstance(section, dict) or not isinstance(section.get(key), str):
        raise ClusterError(f'{VERSIONS_FILE}: missing [{name}] {key} = "..."')
    value: str = section[key]
    return value


def load_versions(root: Path | None = None) -> Versions:
    path = (root or repo_root()) / VERSIONS_FILE
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise ClusterError(f"{path}: {exc}") from exc
    return Versions(
        kubernetes=_section_version(data, "kubernetes"),
        etcd=_section_version(data, "etcd"),
        kwok=_section_version(data, "kwok"),
        training_operator=_section_version(data, "training-operator"),
        volcano=_section_version(data, "volcano"),
        volcano_apis=_section_version(data, "volcano", "apis"),
        helm=_section_version(data, "helm"),
        kubectl=_section_version(data, "kubectl"),
    )
