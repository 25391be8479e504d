"""`make dist`: the release artifacts of one commit, one version, under dist/.

* ``python/``: the wheel and the sdist (hatchling, reproducible with SOURCE_DATE_EPOCH);
* ``collection/``: the Ansible collection tarball (``ansible-galaxy collection build``);
* ``charts/``: each chart packaged (``helm package``) and the repository's ``index.yaml``.

The same commit gives the same bytes: every archive's entries carry the commit's time
(SOURCE_DATE_EPOCH, else the last commit's). ansible-galaxy and helm write the build's own time
into their tar headers (and gzip into its header), so their archives are rewritten with the same
entries in name order, the commit's time and no gzip timestamp. ansible-galaxy lists the
collection's files (FILES.json) in the order the file system gives them, so a clone on another
file system may list them in another order. ``index.yaml`` holds the time it was made
(``generated``, ``created``): it is the one file that differs between two builds.

The version is pyproject.toml's; galaxy.yml, every chart and CHANGELOG.md say the same
(tests/unit/test_release.py holds them equal), and the build refuses to run when they do not.

Usage: python tools/dist.py [--out DIR]
"""

from __future__ import annotations

import argparse
import gzip
import io
import os
import shutil
import subprocess
import sys
import tarfile
import tomllib
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

from tfjob_kit.cluster.build import helm_path  # noqa: E402  (the source tree)

CHARTS = ROOT / "charts"


class DistError(Exception):
    """The artifacts cannot be built as one release."""


def version(root: Path = ROOT) -> str:
    """The release's version: pyproject.toml's."""
    found: str = tomllib.loads((root / "pyproject.toml").read_text())["project"]["version"]
    return found


def versions(root: Path = ROOT) -> dict[str, str]:
    """Every file that states the release's version, and what it says."""
    found = {"pyproject.toml": version(root)}
    found["galaxy.yml"] = str(yaml.safe_load((root / "galaxy.yml").read_text())["version"])
    for chart in sorted(root.glob("charts/*/Chart.yaml")):
        found[str(chart.relative_to(root))] = str(yaml.safe_load(chart.read_text())["version"])
    return found


def changelog_versions(root: Path = ROOT) -> list[str]:
    """The versions CHANGELOG.md has a section for (``## 1.2.3`` or ``## 1.2.3 (...)``), newest
    first."""
    return [
        line.removeprefix("## ").split()[0]
        for line in (root / "CHANGELOG.md").read_text().splitlines()
        if line.startswith("## ")
    ]


def check_one_version(root: Path = ROOT) -> str:
    """The one version, or DistError naming every file that says another."""
    wanted = version(root)
    other = {path: v for path, v in versions(root).items() if v != wanted}
    if other:
        raise DistError(
            f"pyproject.toml says {wanted}; "
            + ", ".join(f"{path} says {v}" for path, v in other.items())
        )
    if wanted not in changelog_versions(root)[:1]:
        raise DistError(f"CHANGELOG.md's first section is not {wanted}")
    return wanted


def source_date_epoch() -> int:
    """SOURCE_DATE_EPOCH when set, else the time of the checkout's last commit."""
    if os.environ.get("SOURCE_DATE_EPOCH"):
        return int(os.environ["SOURCE_DATE_EPOCH"])
    proc = subprocess.run(
        ["git", "log", "-1", "--format=%ct"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    if proc.returncode != 0 or not proc.stdout.strip():
        raise DistError("set SOURCE_DATE_EPOCH: this checkout has no git history to take it from")
    return int(proc.stdout)


def normalize(archive: Path, epoch: int) -> None:
    """Rewrite a .tar.gz with the same entries in name order (a folder before what it holds),
    each dated ``epoch`` and owned by root, without the gzip header's timestamp and name."""
    out = io.BytesIO()
    with (
        tarfile.open(archive, "r:gz") as source,
        tarfile.open(fileobj=out, mode="w", format=tarfile.PAX_FORMAT) as target,
    ):
        for member in sorted(source.getmembers(), key=lambda m: m.name):
            member.mtime = epoch
            member.uid = member.gid = 0
            member.uname = member.gname = ""
            member.pax_headers = {
                k: v for k, v in member.pax_headers.items() if k not in {"mtime", "atime", "ctime"}
            }
            target.addfile(member, source.extractfile(member) if member.isfile() else None)
    with archive.open("wb") as raw, gzip.GzipFile("", "wb", 9, raw, mtime=0) as packed:
        packed.write(out.getvalue())


def run(command: list[str], env: dict[str, str]) -> None:
    proc = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise DistError(f"{' '.join(command)} failed:\n{proc.stdout}{proc.stderr}")


def build(out: Path) -> list[Path]:
    """Every artifact, under ``out`` (emptied first)."""
    release = check_one_version()
    epoch = source_date_epoch()
    env = {**os.environ, "SOURCE_DATE_EPOCH": str(epoch)}
    if out.exists():
        shutil.rmtree(out)
    python, collection, charts = out / "python", out / "collection", out / "charts"
    for folder in (python, collection, charts):
        folder.mkdir(parents=True)
    run([sys.executable, "-m", "hatchling", "build", "-d", str(python)], env)
    collection_tarball(collection)
    helm = str(helm_path())
    for chart in sorted(CHARTS.glob("*/Chart.yaml")):
        run([helm, "package", str(chart.parent), "--destination", str(charts)], env)
    for archive in [*collection.glob("*.tar.gz"), *charts.glob("*.tgz")]:
        normalize(archive, epoch)
    run([helm, "repo", "index", str(charts)], env)
    made = sorted(p for p in out.rglob("*") if p.is_file())
    expected = 2 + 1 + len(list(CHARTS.glob("*/Chart.yaml"))) + 1
    if len(made) != expected:
        raise DistError(f"expected {expected} artifacts, made {[str(p) for p in made]}")
    assert all(release in p.name for p in made if p.name != "index.yaml"), made
    return made


def galaxy(*args: str) -> None:
    """ansible-galaxy of this environment, in this checkout, without ANSIBLE_CONFIG."""
    env = {k: v for k, v in os.environ.items() if k != "ANSIBLE_CONFIG"}
    run([str(Path(sys.executable).parent / "ansible-galaxy"), *args], env)


def collection_tarball(out: Path) -> Path:
    """The collection built from this checkout (``ansible-galaxy collection build``) into
    ``out``."""
    out.mkdir(parents=True, exist_ok=True)
    galaxy("collection", "build", "--force", "--output-path", str(out))
    (tarball,) = out.glob("tfjob-kit-*.tar.gz")
    return tarball


def install_collection(tarball: Path, into: Path) -> Path:
    """The collection installed from ``tarball`` as a user installs it (``ansible-galaxy
    collection install --no-deps``: its dependencies come with PyPI's ``ansible``) into the
    collections path ``into``; the installed copy's folder. ``--force``: an environment with the
    editable install holds a copy on its Python path, which ansible-galaxy counts as installed."""
    galaxy("collection", "install", "--no-deps", "--force", "-p", str(into), str(tarball))
    return into / "ansible_collections" / "tfjob" / "kit"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "dist", help="default: dist/")
    args = parser.parse_args()
    try:
        made = build(args.out.resolve())
    except DistError as exc:
        print(f"make dist: {exc}", file=sys.stderr)
        return 1
    for path in made:
        print(path.relative_to(args.out.resolve()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
