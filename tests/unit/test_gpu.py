"""GPU preflight: parsing what nvidia-smi printed on a real H200 host, checks, labels, and the
failure on a host without the driver."""

from __future__ import annotations

from pathlib import Path

import pytest

from tfjob_kit import gpu
from tfjob_kit.cli import main

DATA = Path(__file__).resolve().parents[1] / "data" / "nvidia-smi"


def h200() -> gpu.GpuFacts:
    gpus, driver = gpu.parse_query((DATA / "h200-query.csv").read_text())
    cuda = gpu.parse_cuda_version((DATA / "h200-banner.txt").read_text())
    return gpu.GpuFacts(driver, cuda, gpus)


def test_parses_the_real_h200_output() -> None:
    facts = h200()
    assert (facts.driver_version, facts.cuda_version, facts.count) == ("580.159.04", "13.0", 1)
    (card,) = facts.gpus
    assert (card.name, card.memory_mib, card.compute_capability) == ("NVIDIA H200", 143771, "9.0")
    assert card.uuid.startswith("GPU-")


def test_labels_use_gpu_feature_discovery_names() -> None:
    labels = gpu.node_labels(h200())
    assert labels["nvidia.com/gpu.present"] == "true"
    assert labels["nvidia.com/gpu.product"] == "NVIDIA-H200"
    assert labels["nvidia.com/cuda.driver.major"] == "580"
    assert labels["nvidia.com/cuda.runtime.major"] == "13"


@pytest.mark.parametrize(
    ("driver", "cuda", "gpus", "problem"),
    [
        ("590", None, 1, "driver 580.159.04 is older than the required 590"),
        (None, "13.1", 1, "the driver supports CUDA 13.0, older than the required 13.1"),
        (None, None, 8, "1 GPUs, 8 required"),
    ],
)
def test_requirements(driver: str | None, cuda: str | None, gpus: int, problem: str) -> None:
    assert gpu.check(h200(), driver, cuda, gpus) == [problem]
    assert gpu.check(h200(), "525.60", "12.2") == []


def test_unexpected_output_is_an_error() -> None:
    with pytest.raises(gpu.PreflightError, match="unexpected line"):
        gpu.parse_query("0, NVIDIA H200, oops\n")


def test_no_driver_fails_clearly(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["gpu", "preflight", "--nvidia-smi", "/nonexistent/nvidia-smi"]) == 1
    assert "nvidia-smi not found: the NVIDIA driver is not installed" in capsys.readouterr().err
