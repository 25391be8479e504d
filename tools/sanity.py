"""Run ansible-test sanity on the collection, offline-capable, from a staged copy.

ansible-test wants the collection at .../ansible_collections/<namespace>/<name> and inside a git
repository; the repository root is the collection root, so the collection's files (as git tracks
them) are copied to build/sanity/ansible_collections/tfjob/kit first. ansible-test downloads
get-pip.py from a host this project's machines cannot reach; tools/get_pip_offline.py stands in
for it (see that file).

Usage: python tools/sanity.py [ansible-test sanity options]
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import ansible

REPO = Path(__file__).resolve().parents[1]
STAGE = REPO / "build" / "sanity" / "ansible_collections" / "tfjob" / "kit"
COLLECTION = ["galaxy.yml", "meta", "plugins", "tests/sanity", "roles", "playbooks", "README.md"]
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


def stage() -> None:
    if STAGE.exists():
        shutil.rmtree(STAGE)
    listed = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard", "--", *COLLECTION],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.splitlines()
    for name in listed:
        source = REPO / name
        if source.is_file() and not source.is_symlink():
            target = STAGE / name
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target)
    subprocess.run(["git", "init", "-q", "."], cwd=STAGE, check=True)
    subprocess.run(["git", "add", "-A"], cwd=STAGE, check=True)


def main(argv: list[str]) -> int:
    cache = Path.home() / ".ansible" / "test" / "cache"
    cache.mkdir(parents=True, exist_ok=True)
    shutil.copy2(
        REPO / "tools" / "get_pip_offline.py",
        cache / f"get_pip_{PIP_BOOTSTRAP_VERSION.replace('.', '_')}.py",
    )
    stage()
    python = f"{sys.version_info.major}.{sys.version_info.minor}"
    tests = [arg for name in TESTS for arg in ("--test", name)]
    ansible_test = Path(sys.executable).parent / "ansible-test"
    print(f"ansible-test sanity ({ansible.__version__}) on {STAGE}", flush=True)
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
            *argv,
        ],
        cwd=STAGE,
        check=False,
    ).returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
