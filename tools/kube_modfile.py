"""Write the kube wrapper's requirements for another Kubernetes release.

``components/go/kube`` builds kube-apiserver, -controller-manager and -scheduler (and kubectl)
of one release. Its ``go.mod`` pins ``versions.toml``'s ``[kubernetes] version``; each release of
``[kubernetes] releases`` (``tfjob-kit cluster up --kubernetes-version MINOR``) has its own
``v<MAJOR>.<MINOR>.mod`` and ``.sum`` beside it, built with ``go build -modfile``. This tool
writes them from the release's own module: its ``go`` directive, and a replace to the matching
``v0.<MINOR>.<PATCH>`` of every staging module ``k8s.io/kubernetes`` replaces with a local
path; ``go mod tidy`` then resolves the rest through the Go module proxy.

    python tools/kube_modfile.py            # every release of [kubernetes] releases
    python tools/kube_modfile.py 1.37       # one
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from tfjob_kit.cluster.build import Builder  # noqa: E402
from tfjob_kit.versions import load_versions  # noqa: E402

WRAPPER = ROOT / "components" / "go" / "kube"
_STAGING = re.compile(r"^\s*(k8s\.io/[\w.-]+)\s+=>\s+\./staging/src/", re.M)
_GO = re.compile(r"^go (\S+)$", re.M)
_COBRA = re.compile(r"github\.com/spf13/cobra (v\S+)")


def modfile(release: str) -> str:
    """The wrapper's go.mod for `release` (vMAJOR.MINOR.PATCH), before ``go mod tidy``."""
    builder = Builder(load_versions(), ROOT)
    upstream = (builder.module_download_dir("k8s.io/kubernetes", release) / "go.mod").read_text()
    staging_version = "v0." + release.lstrip("v").split(".", 1)[1]
    staging = sorted(set(_STAGING.findall(upstream)))
    go_version = _GO.search(upstream)
    cobra = _COBRA.search(upstream)
    if not staging or go_version is None or cobra is None:
        raise SystemExit(f"k8s.io/kubernetes@{release}: its go.mod is not as expected")
    lines = [
        f"// The kube wrapper's requirements for Kubernetes {release} (tools/kube_modfile.py).",
        "module tfjobkit.local/cluster/kube",
        "",
        f"go {go_version.group(1)}",
        "",
        "require (",
        f"\tgithub.com/spf13/cobra {cobra.group(1)}",
        f"\tk8s.io/component-base {staging_version}",
        "\tk8s.io/kubectl v0.0.0",
        f"\tk8s.io/kubernetes {release}",
        ")",
        "",
        "replace (",
        *(f"\t{module} => {module} {staging_version}" for module in staging),
        ")",
        "",
    ]
    return "\n".join(lines)


def write(release: str) -> Path:
    """Tidy the release's go.mod in a copy of the wrapper; write ``v<minor>.mod`` and ``.sum``."""
    minor = ".".join(release.lstrip("v").split(".")[:2])
    with tempfile.TemporaryDirectory(prefix="kube-modfile-") as scratch:
        work = Path(scratch)
        shutil.copy(WRAPPER / "main.go", work / "main.go")
        shutil.copytree(WRAPPER / "kubectl", work / "kubectl")
        (work / "go.mod").write_text(modfile(release))
        subprocess.run(["go", "mod", "tidy"], cwd=work, check=True)
        target = WRAPPER / f"v{minor}.mod"
        shutil.copy(work / "go.mod", target)
        shutil.copy(work / "go.sum", WRAPPER / f"v{minor}.sum")
    return target


def main(argv: list[str]) -> int:
    releases = load_versions().kubernetes_releases
    wanted = [r for r in releases if not argv or ".".join(r.lstrip("v").split(".")[:2]) in argv]
    if not wanted:
        known = ", ".join(releases) or "none"
        raise SystemExit(f"no release of [kubernetes] releases matches {argv} (known: {known})")
    for release in wanted:
        print(f"wrote {write(release).relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
