"""One version for the release (tools/dist.py): the package, galaxy.yml, every chart and the
CHANGELOG's newest section say the same, and `make dist` refuses to build when they do not."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

import checkout_scripts

ROOT = Path(__file__).resolve().parents[2]


dist = checkout_scripts.load("tools/dist.py")


def test_every_file_says_the_one_version() -> None:
    found = dist.versions()
    assert set(found) >= {"pyproject.toml", "galaxy.yml", "charts/tfjob/Chart.yaml"}
    assert len(found) == 2 + len(list(ROOT.glob("charts/*/Chart.yaml")))
    assert set(found.values()) == {dist.version()}
    assert dist.changelog_versions()[0] == dist.version()
    assert dist.check_one_version() == dist.version()


def _copy(tmp_path: Path) -> Path:
    root = tmp_path / "checkout"
    for name in ("pyproject.toml", "galaxy.yml", "CHANGELOG.md"):
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / name, root / name)
    for chart in ROOT.glob("charts/*/Chart.yaml"):
        (root / chart.relative_to(ROOT)).parent.mkdir(parents=True)
        shutil.copy(chart, root / chart.relative_to(ROOT))
    return root


def test_a_chart_left_behind_by_a_bump_is_named(tmp_path: Path) -> None:
    root = _copy(tmp_path)
    release = dist.version()
    for name in ("pyproject.toml", "galaxy.yml", "CHANGELOG.md"):
        path = root / name
        path.write_text(path.read_text().replace(release, "9.8.7", 1))
    with pytest.raises(dist.DistError) as refused:
        dist.check_one_version(root)
    message = str(refused.value)
    assert message.startswith("pyproject.toml says 9.8.7; ")
    for chart in ROOT.glob("charts/*/Chart.yaml"):
        assert f"{chart.relative_to(ROOT)} says {release}" in message
    assert "galaxy.yml" not in message


def test_a_bump_without_a_changelog_section_is_refused(tmp_path: Path) -> None:
    root = _copy(tmp_path)
    release = dist.version()
    for path in [root / "pyproject.toml", root / "galaxy.yml", *root.glob("charts/*/Chart.yaml")]:
        path.write_text(path.read_text().replace(f"version: {release}", "version: 9.8.7"))
        path.write_text(path.read_text().replace(f'version = "{release}"', 'version = "9.8.7"'))
    assert set(dist.versions(root).values()) == {"9.8.7"}
    with pytest.raises(dist.DistError, match=r"CHANGELOG\.md's first section is not 9\.8\.7"):
        dist.check_one_version(root)
