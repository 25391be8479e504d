"""``tfjob-kit explain``: the pods and services the operator creates for a TFJob, and the exact
TF_CONFIG each replica gets (``explain.py``)."""

from __future__ import annotations

import argparse
import json
import sys
from typing import TYPE_CHECKING, Any

from tfjob_kit import explain, model
from tfjob_kit.commands import EXIT_FINDINGS, EXIT_OK, UsageError
from tfjob_kit.commands.output import write
from tfjob_kit.manifests import InputError, load_paths

if TYPE_CHECKING:
    from tfjob_kit.commands import Subparsers


def register(sub: Subparsers) -> None:
    parser = sub.add_parser(
        "explain",
        help="show pods, services and the TF_CONFIG each replica gets",
        description="Show what the training-operator creates for a TFJob: pod and service "
        "names, the exact TF_CONFIG per replica, who decides success, defaults.",
    )
    parser.add_argument("path", metavar="FILE")
    parser.add_argument("--namespace", help="namespace (default: metadata.namespace or 'default')")
    parser.add_argument(
        "--cluster-domain", default="", help="the operator's CUSTOM_CLUSTER_DOMAIN, if set"
    )
    parser.add_argument("--format", choices=["text", "json"], default="text")
    parser.set_defaults(run=run)


def _tfjobs(paths: list[str]) -> list[tuple[str, int, dict[str, Any]]]:
    """(source, document, v1 TFJob) for every TFJob-like document; others are ignored."""
    from tfjob_kit import convert

    try:
        docs = load_paths(paths)
    except InputError as exc:
        raise UsageError(str(exc)) from None
    jobs = []
    for doc in docs:
        if doc.error is not None:
            raise UsageError(f"{doc.source}:{doc.index}: {doc.error.message}")
        if model.is_tfjob(doc.content) or doc.kind == convert.T9K_KIND:
            job, _ = convert.to_v1(doc.content)
            jobs.append((doc.source, doc.index, job))
    return jobs


def run(args: argparse.Namespace) -> int:
    jobs = _tfjobs([args.path])
    if not jobs:
        raise UsageError(f"{args.path}: no TFJob found")
    try:
        plans = [explain.plan(job, args.namespace, args.cluster_domain) for _, _, job in jobs]
    except explain.ExplainError as exc:
        print(f"tfjob-kit: error: {args.path}: {exc}", file=sys.stderr)
        return EXIT_FINDINGS
    if args.format == "json":
        data: Any = [p.as_dict() for p in plans]
        write(json.dumps(data if len(data) > 1 else data[0], indent=2) + "\n", None)
    else:
        write("\n".join(explain.render_text(p) for p in plans), None)
    return EXIT_OK
