"""After `pip install` of the wheel, tfjob.kit.* works from any directory, no ansible.cfg."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from ._ansible import BIN, REPO, ansible_env, run_tasks
from ._cluster import Cluster


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The wheel built from the repository, installed (without dependencies) into a folder."""
    out = tmp_path_factory.mktemp("wheel")
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--quiet", "-w", str(out), str(REPO)],
        check=True,
        timeout=300,
    )
    (wheel,) = out.glob("tfjob_kit-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    for shipped in (
        "ansible_collections/tfjob/kit/galaxy.yml",
        "ansible_collections/tfjob/kit/meta/runtime.yml",
        "ansible_collections/tfjob/kit/plugins/modules/tfjob.py",
        "ansible_collections/tfjob/kit/plugins/module_utils/common.py",
        "ansible_collections/tfjob/kit/plugins/module_utils/gpu.py",
        "ansible_collections/tfjob/kit/roles/training_operator/tasks/main.yml",
        "ansible_collections/tfjob/kit/playbooks/site.yml",
        "ansible_collections/tfjob/kit/charts/training-operator/crds/tfjobs.kubeflow.org.yaml",
    ):
        assert shipped in names
    target = out / "site"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "--no-deps",
            "--quiet",
            "--target",
            str(target),
            str(wheel),
        ],
        check=True,
        timeout=300,
    )
    return target


def test_the_library_reexports_the_collections_gpu(installed: Path, tmp_path: Path) -> None:
    """tfjob_kit.gpu is the collection's module_utils, as the wheel lays them out side by side
    (standard library only: `python -S`, nothing but the wheel on the path)."""
    probe = (
        "from tfjob_kit import gpu; print(gpu.collect.__module__, gpu.PreflightError.__module__)"
    )
    result = subprocess.run(
        [sys.executable, "-S", "-c", probe],
        cwd=tmp_path,
        env={"PYTHONPATH": str(installed)},
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["ansible_collections.tfjob.kit.plugins.module_utils.gpu"] * 2


def test_collection_from_the_wheel(installed: Path, cluster: Cluster, tmp_path: Path) -> None:
    env = ansible_env(cluster.kubeconfig)
    env.pop("ANSIBLE_CONFIG")  # no ansible.cfg, no collections_path: only the wheel
    env["PYTHONPATH"] = str(installed)
    env["ANSIBLE_COLLECTIONS_PATH"] = str(tmp_path / "empty")
    doc = subprocess.run(
        [str(BIN / "ansible-doc"), "tfjob.kit.tfjob"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert doc.returncode == 0, doc.stderr
    assert str(installed / "ansible_collections" / "tfjob" / "kit") in doc.stdout
    assert "wait_for" in doc.stdout and "force_conflicts" in doc.stdout
    result = run_tasks(
        tmp_path,
        cluster.kubeconfig,
        [
            {"tfjob.kit.tfjob_info": {"namespace": "kube-system"}},
        ],
        env=env,
    )
    assert result.rc == 0, result.output
    assert result[0]["jobs"] == []
