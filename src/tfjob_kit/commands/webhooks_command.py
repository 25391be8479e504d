"""``tfjob-kit webhooks``: the admission webhooks the API server cannot call
(``kube/webhooks.py``)."""

from __future__ import annotations

import argparse
import json
from typing import TYPE_CHECKING

from tfjob_kit import extras
from tfjob_kit.commands import EXIT_FINDINGS, EXIT_OK, UsageError, connection

if TYPE_CHECKING:
    from tfjob_kit.commands import Subparsers


def register(sub: Subparsers) -> None:
    parser = sub.add_parser(
        "webhooks",
        help="find admission webhooks that cannot be called (they block pod creation)",
        description="Dry-run the creation of a Pod, a TFJob's pod and a Volcano PodGroup in "
        "each namespace (nothing is stored) and read every webhook configuration's Service: "
        "name each webhook the API server cannot call (left behind by an operator removed by "
        "hand) and the kubectl command that deletes its configuration. Exit 1 when one with "
        "failurePolicy Fail is found. Deletes nothing.",
    )
    parser.add_argument(
        "-n",
        "--namespace",
        action="append",
        metavar="NAMESPACE",
        help="a namespace to dry-run in (repeatable; default: default)",
    )
    parser.add_argument(
        "--kubeconfig", metavar="FILE", help="kubeconfig (default: $KUBECONFIG, ~/.kube/config)"
    )
    parser.add_argument("--context", help="the kubeconfig context to use")
    parser.add_argument("--format", choices=["text", "json"], default="text")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Exit 1 when a webhook with failurePolicy Fail blocks requests, 2 when the cluster cannot
    be asked."""
    extras.require("cluster", "tfjob-kit webhooks")
    from tfjob_kit.kube import webhooks
    from tfjob_kit.kube.api_errors import KubeError
    from tfjob_kit.kube.client import Client

    try:
        with Client(connection(args)) as client:
            found = webhooks.check(client, args.namespace or ["default"])
    except KubeError as exc:
        raise UsageError(str(exc)) from None
    if args.format == "json":
        print(json.dumps(found.as_dict(), indent=2))
    else:
        print(webhooks.message(found.found))
        if found.missing_namespaces:
            print(f"not checked (no such namespace): {', '.join(found.missing_namespaces)}")
    return EXIT_FINDINGS if found.blocking else EXIT_OK
