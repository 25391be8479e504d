"""What ``tfjob-kit status`` and ``wait`` share: which jobs (names, namespace, kind) and which
cluster (kubeconfig, context: ``commands.connection`` reads them)."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tfjob_kit.kube.kinds import Resource

# --kind: the job kinds the library follows (kube/info.py's backends).
KINDS = {"tfjob": "kubeflow", "trainjob": "trainer", "volcano": "volcano"}


def add_job_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("names", nargs="+", metavar="NAME", help="the jobs' names")
    parser.add_argument(
        "-n", "--namespace", default="default", help="the jobs' namespace (default: default)"
    )
    parser.add_argument(
        "--kind",
        choices=sorted(KINDS),
        default="tfjob",
        help="tfjob (kubeflow.org/v1, the default), trainjob (Trainer v2) or volcano (a "
        "Volcano Job)",
    )
    parser.add_argument(
        "--kubeconfig", metavar="FILE", help="kubeconfig (default: $KUBECONFIG, ~/.kube/config)"
    )
    parser.add_argument("--context", help="the kubeconfig context to use")
    parser.add_argument("--format", choices=["text", "json"], default="text")


def backend(args: argparse.Namespace) -> str:
    """The kube/info.py backend of --kind."""
    return KINDS[args.kind]


def resource(args: argparse.Namespace) -> Resource:
    from tfjob_kit.kube.info import BACKENDS

    return BACKENDS[backend(args)]
