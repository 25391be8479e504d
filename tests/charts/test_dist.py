"""`make dist` (tools/dist.py): the three kinds of release artifact, one version, and the same
bytes from the same commit (built twice; only the chart index's timestamps differ)."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
CHARTS = sorted(p.parent.name for p in ROOT.glob("charts/*/Chart.yaml"))


def _build(out: Path) -> list[str]:
    proc = subprocess.run(
        [sys.executable, str(ROOT / "tools" / "dist.py"), "--out", str(out)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc.stdout.split()


@pytest.fixture(scope="module")
def builds(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, list[str]]:
    first, second = tmp_path_factory.mktemp("dist-a"), tmp_path_factory.mktemp("dist-b")
    listed = _build(first)
    assert _build(second) == listed
    return first, second, listed


def _version() -> str:
    text = (ROOT / "pyproject.toml").read_text()
    return text.split('\nversion = "', 1)[1].split('"', 1)[0]


def test_every_artifact_of_one_version(builds: tuple[Path, Path, list[str]]) -> None:
    out, _, listed = builds
    version = _version()
    assert listed == sorted(
        [
            f"python/tfjob_kit-{version}-py3-none-any.whl",
            f"python/tfjob_kit-{version}.tar.gz",
            f"collection/tfjob-kit-{version}.tar.gz",
            "charts/index.yaml",
            *(f"charts/{chart}-{version}.tgz" for chart in CHARTS),
        ]
    )
    # The collection: its manifest's version, the collection's own files and none of the
    # checkout's others.
    with tarfile.open(out / f"collection/tfjob-kit-{version}.tar.gz") as collection:
        names = collection.getnames()
        manifest = json.load(collection.extractfile("MANIFEST.json"))  # type: ignore[arg-type]
    assert manifest["collection_info"]["version"] == version
    shipped = {"plugins/modules/tfjob.py", "roles/volcano/tasks/main.yml", "playbooks/site.yml"}
    assert shipped <= set(names)
    for left_out in ("tests/", "src/", "build/", "dist/", ".venv/", ".hypothesis/", ".git/"):
        assert not [n for n in names if n.startswith(left_out)], left_out
    # The wheel carries the library and the same collection.
    wheel = zipfile.ZipFile(out / f"python/tfjob_kit-{version}-py3-none-any.whl").namelist()
    assert "tfjob_kit/cli.py" in wheel
    assert "ansible_collections/tfjob/kit/plugins/modules/tfjob.py" in wheel
    # The chart repository: every chart at this version, its digest the file's.
    index = yaml.safe_load((out / "charts/index.yaml").read_text())
    assert sorted(index["entries"]) == CHARTS
    for chart, (entry,) in index["entries"].items():
        packaged = out / "charts" / f"{chart}-{version}.tgz"
        assert entry["version"] == version
        assert entry["urls"] == [packaged.name]
        assert entry["digest"] == hashlib.sha256(packaged.read_bytes()).hexdigest()
        assert entry["annotations"]["tfjob-kit.io/chart"] == chart


def test_the_same_commit_gives_the_same_bytes(builds: tuple[Path, Path, list[str]]) -> None:
    first, second, listed = builds
    differ = [
        name for name in listed if (first / name).read_bytes() != (second / name).read_bytes()
    ]
    assert differ == ["charts/index.yaml"]
    # Only the times the index was made.
    a, b = (yaml.safe_load((out / "charts/index.yaml").read_text()) for out in (first, second))
    for index in (a, b):
        index.pop("generated")
        for (entry,) in index["entries"].values():
            entry.pop("created")
    assert a == b


def test_the_wheel_alone_validates_without_ansible_or_kubernetes(
    builds: tuple[Path, Path, list[str]], tmp_path: Path
) -> None:
    """An empty venv, the lean lock with hashes, the wheel without dependencies: validate and
    explain work on the examples; what needs an extra says which one."""
    out, _, _ = builds
    (wheel,) = (out / "python").glob("*.whl")
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    for args in (
        ["--require-hashes", "-r", str(ROOT / "requirements" / "validate.txt")],
        ["--no-deps", str(wheel)],
    ):
        subprocess.run(
            [sys.executable, "-m", "pip", "--python", str(python), "install", "--quiet", *args],
            check=True,
            timeout=300,
        )
    probe = "import importlib.util as u; print([u.find_spec(m) is None for m in ('ansible', "
    probe += "'kubernetes', 'cryptography', 'jsonschema')])"
    found = subprocess.run([python, "-c", probe], capture_output=True, text=True, check=True)
    assert found.stdout.strip() == "[True, True, True, True]"

    def tfjob_kit(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [venv / "bin" / "tfjob-kit", *args],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )

    examples = ROOT / "examples" / "tfjobs"
    validated = tfjob_kit("validate", str(examples))
    assert validated.returncode == 0, validated.stderr
    assert "3 TFJobs checked" in validated.stdout + validated.stderr
    explained = tfjob_kit("explain", str(examples / "dist-mnist.yaml"))
    assert explained.returncode == 0, explained.stderr
    assert "TF_CONFIG" in explained.stdout
    server = tfjob_kit("validate", "--server", str(examples))
    assert (server.returncode, server.stderr) == (
        2,
        "tfjob-kit: error: validate --server needs cryptography and kubernetes, which are not "
        "installed: pip install 'tfjob-kit[cluster]'\n",
    )


def test_the_collection_tarball_installs_and_is_the_one_loaded(
    builds: tuple[Path, Path, list[str]], tmp_path: Path
) -> None:
    out, _, _ = builds
    (tarball,) = (out / "collection").glob("*.tar.gz")
    collections = tmp_path / "collections"
    bin_dir = Path(sys.executable).parent
    # No ansible.cfg (the checkout's resolves tfjob.kit to itself). --force: this environment's
    # Python path holds the editable install's copy, which ansible-galaxy counts as installed.
    env = {
        "PATH": os.environ["PATH"],
        "HOME": str(tmp_path),
        "ANSIBLE_COLLECTIONS_PATH": str(collections),
    }
    installed = subprocess.run(
        [
            bin_dir / "ansible-galaxy",
            "collection",
            "install",
            "--no-deps",
            "--force",
            "-p",
            collections,
            tarball,
        ],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert installed.returncode == 0, installed.stdout + installed.stderr
    where = collections / "ansible_collections" / "tfjob" / "kit"
    assert (
        json.loads((where / "MANIFEST.json").read_text())["collection_info"]["version"]
        == _version()
    )
    doc = subprocess.run(
        [bin_dir / "ansible-doc", "--json", "tfjob.kit.tfjob"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert doc.returncode == 0, doc.stderr
    found = json.loads(doc.stdout)["tfjob.kit.tfjob"]["doc"]
    assert Path(found["filename"]).resolve() == (where / "plugins/modules/tfjob.py").resolve()
