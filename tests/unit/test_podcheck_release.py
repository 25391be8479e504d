"""The minor the offline pod checks follow (podcheck.release): its gates, the window, and how the
CLI and the rule configuration choose it. That each minor's checks agree with its API server is
``make test-versions``' work (the differential tests on every minor)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tfjob_kit import config
from tfjob_kit.podcheck import release
from tfjob_kit.versions import load_versions, minor_of

ROOT = Path(__file__).resolve().parents[2]


def test_the_window_is_versions_toml_s() -> None:
    versions = load_versions()
    assert release.window() == tuple(versions.kubernetes_minors)
    assert release.default_minor() == minor_of(versions.kubernetes)
    assert release.minor() == release.default_minor()


def test_gates_follow_the_minor() -> None:
    # EnvFiles: alpha (off) in 1.34, beta (on) from 1.35
    with release.following("1.34"):
        assert not release.gate("EnvFiles")
    with release.following("v1.35.4"):
        assert release.gate("EnvFiles")
        assert release.at_least("1.35") and not release.at_least("1.36")
    assert release.minor() == release.default_minor()
    with pytest.raises(KeyError):
        release.gate("NoSuchGate")


def test_a_minor_outside_the_window_is_refused_with_the_window() -> None:
    with pytest.raises(release.UnknownMinorError, match=r"1\.30.*the window: 1\.34, .*1\.37"):
        release.checked_minor("1.30")
    with pytest.raises(release.UnknownMinorError):
        release.checked_minor("latest")


def test_a_server_follows_the_nearest_minor_of_the_window() -> None:
    oldest, newest = release.window()[0], release.window()[-1]
    assert release.nearest("v1.29.4-eks-1") == oldest
    assert release.nearest("v1.99.0") == newest
    assert release.nearest("v1.36.3") == "1.36"


def test_the_rule_configuration_carries_the_minor(tmp_path: Path) -> None:
    path = tmp_path / "tfjob-kit.yaml"
    path.write_text('kubernetes-version: "1.36"\nrules:\n  image-latest: off\n')
    from_file = config.from_file(str(path))
    assert from_file.kubernetes == "1.36" and "image-latest" in from_file.disabled
    assert config.load(str(path), [], [], "v1.35").kubernetes == "1.35"  # the option wins
    assert config.load(str(path), [], []).kubernetes == "1.36"
    path.write_text('kubernetes-version: "1.20"\n')
    with pytest.raises(config.ConfigError, match=r"tfjob-kit.yaml: Kubernetes '1.20'"):
        config.from_file(str(path))


def test_validate_refuses_a_minor_outside_the_window(tmp_path: Path) -> None:
    job = ROOT / "examples" / "tfjobs" / "dist-mnist.yaml"
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "tfjob_kit.cli",
            "validate",
            "--kubernetes-version",
            "1.2",
            str(job),
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 2, proc.stderr
    assert "--kubernetes-version: Kubernetes '1.2' is not a minor" in proc.stderr


def test_the_gates_table_is_generated_from_the_newest_release(go: str) -> None:
    proc = subprocess.run(
        [sys.executable, str(ROOT / "tools" / "gen_feature_gates.py"), "--check"],
        capture_output=True,
        text=True,
        check=False,
        cwd=ROOT,
    )
    assert proc.returncode == 0, proc.stderr
