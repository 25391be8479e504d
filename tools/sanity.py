"""Run ansible-test sanity on the collection as users install it, offline-capable.

The collection is built from this checkout into a tarball and installed from it (tools/dist.py's
collection_tarball and install_collection) under build/sanity/ansible_collections/tfjob/kit, so
the tests see what the tarball ships, no more and no less; the checkout's tests/sanity (the
ignore file, which the tarball leaves out) is copied beside it. ansible-test wants the collection
inside a git repository: the installed copy becomes one. ansible-test downloads get-pip.py from
a host this project's machines cannot reach; tools/get_pip_offline.py stands in for it (see that
file). Helm templates are left out (``--exclude charts/``): they are YAML only once rendered.

Usage: python tools/sanity.py [ansible-test sanity options]
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import ansible

from dist import collection_tarball, install_collection

REPO = Path(__file__).resolve().parents[1]
SANITY = REPO / "build" / "sanity"
TESTS = [
    "validate-modules",
    "ansible-doc",
    "import",
    "compile",
    "yamllint",
    "runtime-metadata",
    "action-plugin-docs",
    "shebang",
    "symlinks",
    "no-smart-quotes",
    "line-endings",
    "use-compat-six",
    "no-assert",
    "empty-init",
]
PIP_BOOTSTRAP_VERSION = "24.2"  # the get-pip version ansible-test 2.19 asks for


def stage() -> Path:
    """The installed collection under build/sanity, with tests/sanity, as a git repository."""
    if SANITY.exists():
        shutil.rmtree(SANITY)
    installed = install_collection(collection_tarball(SANITY), SANITY)
    shutil.copytree(REPO / "tests" / "sanity", installed / "tests" / "sanity")
    subprocess.run(["git", "init", "-q", "."], cwd=installed, check=True)
    subprocess.run(["git", "add", "-A"], cwd=installed, check=True)
    return installed


def main(argv: list[str]) -> int:
    cache = Path.home() / ".ansible" / "test" / "cache"
    cache.mkdir(parents=True, exist_ok=True)
    shutil.copy2(
        REPO / "tools" / "get_pip_offline.py",
        cache / f"get_pip_{PIP_BOOTSTRAP_VERSION.replace('.', '_')}.py",
    )
    stage_dir = stage()
    python = f"{sys.version_info.major}.{sys.version_info.minor}"
    tests = [arg for name in TESTS for arg in ("--test", name)]
    ansible_test = Path(sys.executable).parent / "ansible-test"
    print(
        f"ansible-test sanity ({ansible.__version__}) on {stage_dir}, installed from the tarball",
        flush=True,
    )
    return subprocess.run(
        [
            str(ansible_test),
            "sanity",
            "--python",
            python,
            "--local",
            "--color",
            "no",
            *tests,
            # Helm templates are YAML only once rendered (yamllint cannot read them); helm lint
            # and the chart tests (tests/charts) check them.
            "--exclude",
            "charts/",
            *argv,
        ],
        cwd=stage_dir,
        check=False,
    ).returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
