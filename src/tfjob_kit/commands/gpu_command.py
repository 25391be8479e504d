"""``tfjob-kit gpu preflight``: the NVIDIA driver, CUDA and GPUs of this host, checked
(``gpu.py``)."""

from __future__ import annotations

import argparse
import json
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tfjob_kit.commands import Subparsers


def register(sub: Subparsers) -> None:
    parser = sub.add_parser("gpu", help="GPU node preflight (run on the GPU host)")
    gpu_sub = parser.add_subparsers(dest="gpu_command", required=True, metavar="COMMAND")
    preflight = gpu_sub.add_parser(
        "preflight",
        help="driver, CUDA and GPUs as nvidia-smi reports them, checked",
        description="Ask the NVIDIA driver (nvidia-smi) for its version, the CUDA version it "
        "supports and the GPUs; print them with the Node labels they imply. Exit 1 "
        "when the driver is missing or not loaded, or a requirement is not met.",
    )
    preflight.add_argument("--nvidia-smi", default="nvidia-smi", metavar="PATH")
    preflight.add_argument("--min-driver", metavar="VERSION")
    preflight.add_argument("--min-cuda", metavar="VERSION")
    preflight.add_argument("--min-gpus", type=int, default=1, metavar="N")
    preflight.add_argument("--format", choices=["text", "json"], default="text")
    preflight.set_defaults(run=run_preflight)


def run_preflight(args: argparse.Namespace) -> int:
    from tfjob_kit import gpu

    try:
        facts = gpu.collect(args.nvidia_smi)
    except gpu.PreflightError as exc:
        print(f"GPU preflight failed: {exc}", file=sys.stderr)
        return 1
    problems = gpu.check(facts, args.min_driver, args.min_cuda, args.min_gpus)
    if args.format == "json":
        print(json.dumps({**facts.as_dict(), "problems": problems}, indent=2))
    else:
        print(
            f"driver {facts.driver_version}, CUDA {facts.cuda_version or 'unknown'}, "
            f"{facts.count} GPUs"
        )
        for g in facts.gpus:
            print(
                f"  {g.index}: {g.name} ({g.memory_mib} MiB, compute {g.compute_capability}, "
                f"{g.pci_bus_id}) {g.uuid}"
            )
        for name, value in gpu.node_labels(facts).items():
            print(f"  label {name}={value}")
    for problem in problems:
        print(f"GPU preflight failed: {problem}", file=sys.stderr)
    return 1 if problems else 0
