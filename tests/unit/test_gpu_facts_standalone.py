"""tfjob.kit.gpu_facts from the collection alone: a GPU host needs Python and the collection,
not tfjob-kit.

ansible-playbook runs tests/device/gpu_preflight.yml (the playbook the GPU machine runs) with
nothing importable but ansible-core and its requirements, and a collections path that holds only
this collection's galaxy.yml, meta and plugins. The module runs under `python -S`, so neither the
editable install of tfjob-kit nor the copy of the collection in site-packages is reachable, and
nvidia-smi replays a real H200's output (tests/data/nvidia-smi).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from importlib import metadata
from pathlib import Path

import ansible
import pytest

ROOT = Path(__file__).resolve().parents[2]
PLAYBOOK = ROOT / "tests" / "device" / "gpu_preflight.yml"
REPLAY = ROOT / "tests" / "data" / "nvidia-smi" / "replay-h200"


def _distributions(name: str, found: dict[str, metadata.Distribution]) -> None:
    dist = metadata.distribution(name)
    key = dist.metadata["Name"].lower()
    if key in found:
        return
    found[key] = dist
    for requirement in dist.requires or []:
        if "extra ==" not in requirement:
            match = re.match(r"[A-Za-z0-9_.-]+", requirement)
            assert match, requirement
            _distributions(match.group(0), found)


def _ansible_core_only(site: Path) -> None:
    """site/ holds ansible-core and what it requires (links into this environment), nothing
    else."""
    site.mkdir()
    packages = Path(ansible.__file__).resolve().parents[1]
    found: dict[str, metadata.Distribution] = {}
    _distributions("ansible-core", found)
    tops = {
        str(file).split("/")[0]
        for dist in found.values()
        for file in dist.files or []
        if not str(file).startswith("..")
    }
    for top in sorted(tops - {"__pycache__", "bin", "ansible_test"}):
        if (packages / top).exists():  # packages, modules and their .dist-info (metadata)
            (site / top).symlink_to(packages / top)


def _this_collection_only(root: Path) -> Path:
    kit = root / "ansible_collections" / "tfjob" / "kit"
    kit.mkdir(parents=True)
    for name in ("galaxy.yml", "meta", "plugins"):
        (kit / name).symlink_to(ROOT / name)
    return root


@pytest.fixture
def bare_host(tmp_path: Path) -> dict[str, str]:
    """The environment of a GPU host with ansible-core and the collection, and no tfjob-kit."""
    _ansible_core_only(tmp_path / "site")
    collections = _this_collection_only(tmp_path / "collections")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    python = bin_dir / "python"
    python.write_text(f'#!/bin/sh\nexec "{sys.executable}" -S "$@"\n')
    smi = bin_dir / "nvidia-smi"
    smi.write_text(f'#!/bin/sh\nexec "{REPLAY}" "$@"\n')
    for script in (python, smi):
        script.chmod(0o755)
    out = tmp_path / "out"
    out.mkdir()
    return {
        "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
        "HOME": str(tmp_path),
        "LANG": "C.UTF-8",
        "PYTHONPATH": str(tmp_path / "site"),
        "ANSIBLE_COLLECTIONS_PATH": str(collections),
        "ANSIBLE_COLLECTIONS_SCAN_SYS_PATH": "false",
        "ANSIBLE_LOCAL_TEMP": str(tmp_path / "tmp"),
        "ANSIBLE_REMOTE_TEMP": str(tmp_path / "tmp"),
        "ANSIBLE_NOCOLOR": "1",
        "ANSIBLE_LOCALHOST_WARNING": "0",
        "ANSIBLE_INVENTORY_UNPARSED_WARNING": "0",
        "OUT": str(out),
        "PYTHON": str(python),
    }


def test_nothing_of_tfjob_kit_is_importable(bare_host: dict[str, str]) -> None:
    probe = (
        "import importlib.util as u, ansible; "
        "print(u.find_spec('tfjob_kit'), u.find_spec('jsonschema_rs'), u.find_spec('yaml_rs'))"
    )
    result = subprocess.run(
        [bare_host["PYTHON"], "-c", probe],
        env=bare_host,
        cwd=bare_host["HOME"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert (result.returncode, result.stdout.strip()) == (0, "None None None"), result.stderr


def test_gpu_facts_runs_from_the_collection_alone(bare_host: dict[str, str]) -> None:
    result = subprocess.run(
        [
            bare_host["PYTHON"],
            "-m",
            "ansible.cli.playbook",
            "-e",
            f"ansible_python_interpreter={bare_host['PYTHON']}",
            str(PLAYBOOK),
        ],
        env=bare_host,
        cwd=bare_host["HOME"],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    seen = json.loads((Path(bare_host["OUT"]) / "gpu_facts.json").read_text())
    assert seen["facts"]["driver_version"] == "580.159.04"
    assert seen["facts"]["labels"]["nvidia.com/gpu.product"] == "NVIDIA-H200"
    assert "older than the required 9999" in seen["too_old"]
    assert "the NVIDIA driver is not installed" in seen["missing"]
