"""The toolkit's own files: where they are (the checkout, or the installed wheel) and the
versions ``versions.toml`` pins, the single version lock every component is built, rendered
and tested at."""

from __future__ import annotations

import importlib.util
import os
import re
import tomllib
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

VERSIONS_FILE = "versions.toml"


class VersionsError(RuntimeError):
    """The toolkit's own files cannot be found or read; the message says which."""


def _looks_like_root(path: Path) -> bool:
    return (path / VERSIONS_FILE).is_file() and (path / "components" / "go").is_dir()


def repo_root() -> Path:
    """The tfjob-kit checkout holding versions.toml and components/go.

    ``$TFJOB_KIT_ROOT`` wins; otherwise the checkout this package is installed from (an
    editable install). Never the current directory: an installed CLI run inside somebody
    else's checkout must not build that checkout's Go modules or load its RBAC.
    """
    env = os.environ.get("TFJOB_KIT_ROOT")
    if env:
        root = Path(env).expanduser().resolve()
        if not _looks_like_root(root):
            raise VersionsError(f"TFJOB_KIT_ROOT={env} has no {VERSIONS_FILE} and components/go")
        return root
    here = Path(__file__).resolve()
    for candidate in here.parents:
        if _looks_like_root(candidate):
            return candidate
    raise VersionsError(
        f"cannot find the tfjob-kit checkout ({VERSIONS_FILE} + components/go) above {here}: "
        "install tfjob-kit from a checkout (pip install -e) or set TFJOB_KIT_ROOT"
    )


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
    # The training-operator release the upgrade path starts from ([training-operator]).
    training_operator_upgrade_from: str = ""
    jobset: str = ""
    trainer: str = ""
    kueue: str = ""
    # The other Kubernetes releases the local cluster builds and runs ([kubernetes] releases).
    kubernetes_releases: tuple[str, ...] = ()
    # The release's own wrapper requirements (components/go/kube/<modfile>): go.mod for
    # [kubernetes] version, v<MAJOR>.<MINOR>.mod for the others (tools/kube_modfile.py).
    kube_modfile: str = "go.mod"

    @property
    def kube_minor(self) -> tuple[str, str]:
        major, minor = self.kubernetes.lstrip("v").split(".")[:2]
        return major, minor

    @property
    def kubernetes_minors(self) -> list[str]:
        """The Kubernetes minors the local cluster runs ([kubernetes] version and releases),
        oldest first."""
        releases = (self.kubernetes, *self.kubernetes_releases)
        return sorted({minor_of(r) for r in releases}, key=minor_order)

    @property
    def kubernetes_window(self) -> tuple[str, str]:
        """The oldest and the newest Kubernetes minor the toolkit supports ("1.34", "1.37"): the
        ones ``make test-versions`` runs on."""
        minors = self.kubernetes_minors
        return minors[0], minors[-1]

    def in_window(self, server: str) -> bool:
        """Whether a server's version ("v1.35.2", "1.35.2-eks-1") is a minor of the window."""
        found = re.match(r"v?(\d+)\.(\d+)", server)
        if found is None:
            return False
        oldest, newest = self.kubernetes_window
        return minor_order(oldest) <= minor_order(".".join(found.groups())) <= minor_order(newest)

    def for_kubernetes(self, minor: str) -> Versions:
        """These versions with Kubernetes at the release of `minor` ("1.37", "v1.37" or the
        release itself): the default's, or one of [kubernetes] releases."""
        wanted = minor_of(minor.strip())
        if wanted == minor_of(self.kubernetes):
            return self
        for release in self.kubernetes_releases:
            if minor_of(release) == wanted:
                return replace(self, kubernetes=release, kube_modfile=f"v{wanted}.mod")
        known = ", ".join(self.kubernetes_minors)
        raise VersionsError(f"Kubernetes {minor} is not one the local cluster runs ({known})")


def _section_version(data: dict[str, Any], name: str, key: str = "version") -> str:
    section = data.get(name)
    if not isinstance(section, dict) or not isinstance(section.get(key), str):
        raise VersionsError(f'{VERSIONS_FILE}: missing [{name}] {key} = "..."')
    value: str = section[key]
    return value


def load_versions(root: Path | None = None) -> Versions:
    path = (root or repo_root()) / VERSIONS_FILE
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise VersionsError(f"{path}: {exc}") from exc
    return Versions(
        kubernetes=_section_version(data, "kubernetes"),
        etcd=_section_version(data, "etcd"),
        kwok=_section_version(data, "kwok"),
        training_operator=_section_version(data, "training-operator"),
        volcano=_section_version(data, "volcano"),
        volcano_apis=_section_version(data, "volcano", "apis"),
        helm=_section_version(data, "helm"),
        kubectl=_section_version(data, "kubectl"),
        training_operator_upgrade_from=_section_version(data, "training-operator", "upgrade_from"),
        jobset=_section_version(data, "jobset"),
        trainer=_section_version(data, "trainer"),
        kueue=_section_version(data, "kueue"),
        kubernetes_releases=_releases(data),
    )


def minor_of(release: str) -> str:
    """The minor ("1.37") of a release ("v1.37.2")."""
    return ".".join(release.lstrip("v").split(".")[:2])


def minor_order(minor: str) -> tuple[int, ...]:
    """A minor ("1.37") as numbers, for comparing."""
    return tuple(int(part) for part in minor.split("."))


def _releases(data: dict[str, Any]) -> tuple[str, ...]:
    found = data.get("kubernetes", {}).get("releases", [])
    if not isinstance(found, list) or not all(
        isinstance(r, str) and re.fullmatch(r"v\d+\.\d+\.\d+", r) for r in found
    ):
        raise VersionsError(f'{VERSIONS_FILE}: [kubernetes] releases must be ["vX.Y.Z", ...]')
    return tuple(found)


def charts_dir() -> Path:
    """charts/ of the checkout, else of the installed collection (the wheel ships it there)."""
    local = repo_root() / "charts"
    if local.is_dir():
        return local
    spec = importlib.util.find_spec("ansible_collections.tfjob.kit")
    for location in (spec.submodule_search_locations or []) if spec else []:
        if (Path(location) / "charts").is_dir():
            return Path(location) / "charts"
    raise VersionsError("cannot find the charts (charts/ of the checkout or of the collection)")
