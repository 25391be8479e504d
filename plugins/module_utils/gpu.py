# Copyright: tfjob-kit developers
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""GPU node preflight: what the NVIDIA driver reports, checked, and the Node labels it implies.

Runs `nvidia-smi` on the host (it ships with the driver): the GPUs (index, name, UUID, memory,
compute capability, PCI bus), the driver version and the highest CUDA version the driver
supports. A host without the driver, or with a driver that is not loaded, fails with a sentence
that says which, and what to do.

The standard library only: tfjob.kit.gpu_facts ships this file to the GPU host, which needs
nothing but Python (no tfjob-kit). The library re-exports it as tfjob_kit.gpu.
"""

from __future__ import annotations

import csv
import io
import re
import shutil
import subprocess
from dataclasses import asdict, dataclass, field
from typing import Any

QUERY = "index,name,uuid,memory.total,compute_cap,pci.bus_id,driver_version"
TIMEOUT = 60.0
_CUDA = re.compile(r"CUDA Version\s*:\s*([0-9]+(?:\.[0-9]+)*)")
_LABEL_VALUE = re.compile(r"[^A-Za-z0-9._-]+")


class PreflightError(Exception):
    """The host cannot run GPU pods; the message says why and what to do."""


@dataclass
class Gpu:
    index: int
    name: str
    uuid: str
    memory_mib: int
    compute_capability: str
    pci_bus_id: str


@dataclass
class GpuFacts:
    driver_version: str
    cuda_version: str | None
    gpus: list[Gpu] = field(default_factory=list)

    @property
    def count(self) -> int:
        return len(self.gpus)

    def as_dict(self) -> dict[str, Any]:
        return {
            "driver_version": self.driver_version,
            "cuda_version": self.cuda_version,
            "count": self.count,
            "gpus": [asdict(g) for g in self.gpus],
            "labels": node_labels(self),
        }


def parse_query(text: str) -> tuple[list[Gpu], str]:
    """GPUs and the driver version from `nvidia-smi --query-gpu=QUERY --format=csv,noheader,
    nounits`."""
    gpus, drivers = [], set()
    for row in csv.reader(io.StringIO(text)):
        if not row or not "".join(row).strip():
            continue
        cells = [c.strip() for c in row]
        if len(cells) != len(QUERY.split(",")):
            raise PreflightError(f"nvidia-smi printed an unexpected line: {','.join(row)!r}")
        index, name, uuid, memory, capability, bus, driver = cells
        try:
            gpus.append(Gpu(int(index), name, uuid, int(float(memory)), capability, bus))
        except ValueError:
            raise PreflightError(
                f"nvidia-smi printed an unexpected line: {','.join(row)!r}"
            ) from None
        drivers.add(driver)
    if len(drivers) > 1:
        raise PreflightError(f"nvidia-smi reports several driver versions: {sorted(drivers)}")
    return gpus, (drivers.pop() if drivers else "")


def parse_cuda_version(text: str) -> str | None:
    """The CUDA version in nvidia-smi's banner (or `nvidia-smi -q`)."""
    match = _CUDA.search(text)
    return match.group(1) if match else None


def _version(text: str) -> tuple[int, ...]:
    return tuple(int(part) for part in re.findall(r"\d+", text))


def _run(binary: str, *args: str) -> subprocess.CompletedProcess[str]:
    try:
        return subprocess.run(
            [binary, *args], capture_output=True, text=True, timeout=TIMEOUT, check=False
        )
    except subprocess.TimeoutExpired:
        raise PreflightError(
            f"{binary} did not answer within {TIMEOUT:g}s: the driver may be "
            "hung (check dmesg for Xid errors)"
        ) from None


def collect(nvidia_smi: str = "nvidia-smi") -> GpuFacts:
    """Ask the driver. Raises PreflightError when there is no usable driver or no GPU."""
    binary = shutil.which(nvidia_smi)
    if binary is None:
        raise PreflightError(
            f"{nvidia_smi} not found: the NVIDIA driver is not installed on this host (or "
            "nvidia-smi is not on PATH). Install the driver (e.g. the distribution's "
            "nvidia-driver package or NVIDIA's .run installer) and reboot, then rerun"
        )
    query = _run(binary, f"--query-gpu={QUERY}", "--format=csv,noheader,nounits")
    if query.returncode != 0:
        said = " ".join((query.stdout + query.stderr).split()) or f"exit {query.returncode}"
        hint = (
            "the kernel module is not loaded or does not match the installed driver; "
            "check `lsmod | grep nvidia` and dmesg, reboot after a driver upgrade"
            if "communicate with the NVIDIA driver" in said
            or "Driver/library version mismatch" in said
            else "see the message"
        )
        raise PreflightError(f"nvidia-smi failed: {said} ({hint})")
    gpus, driver = parse_query(query.stdout)
    if not gpus:
        raise PreflightError("the NVIDIA driver is loaded but reports no GPU")
    banner = _run(binary)
    return GpuFacts(
        driver_version=driver, cuda_version=parse_cuda_version(banner.stdout), gpus=gpus
    )


def check(
    facts: GpuFacts, min_driver: str | None = None, min_cuda: str | None = None, min_gpus: int = 1
) -> list[str]:
    """Problems with the facts against the requirements (empty: fine)."""
    problems = []
    if facts.count < min_gpus:
        problems.append(f"{facts.count} GPUs, {min_gpus} required")
    if min_driver and _version(facts.driver_version) < _version(min_driver):
        problems.append(f"driver {facts.driver_version} is older than the required {min_driver}")
    if min_cuda:
        if facts.cuda_version is None:
            problems.append(f"the driver does not report a CUDA version ({min_cuda} required)")
        elif _version(facts.cuda_version) < _version(min_cuda):
            problems.append(
                f"the driver supports CUDA {facts.cuda_version}, older than the required {min_cuda}"
            )
    return problems


def _label_value(text: str) -> str:
    return _LABEL_VALUE.sub("-", text).strip("-._")[:63]


def node_labels(facts: GpuFacts) -> dict[str, str]:
    """Labels in the names NVIDIA's GPU feature discovery uses, so that the device plugin's
    node affinity (nvidia.com/gpu.present) and job node selectors match this node."""
    labels = {"nvidia.com/gpu.present": "true", "nvidia.com/gpu.count": str(facts.count)}
    if facts.gpus:
        first = facts.gpus[0]
        labels["nvidia.com/gpu.product"] = _label_value(first.name)
        labels["nvidia.com/gpu.memory"] = str(first.memory_mib)
        major, _, minor = first.compute_capability.partition(".")
        if major.isdigit():
            labels["nvidia.com/gpu.compute.major"] = major
            labels["nvidia.com/gpu.compute.minor"] = minor or "0"
    parts = _version(facts.driver_version)
    for name, value in zip(("major", "minor", "rev"), parts, strict=False):
        labels[f"nvidia.com/cuda.driver.{name}"] = str(value)
    if facts.cuda_version:
        for name, value in zip(("major", "minor"), _version(facts.cuda_version), strict=False):
            labels[f"nvidia.com/cuda.runtime.{name}"] = str(value)
    return labels
