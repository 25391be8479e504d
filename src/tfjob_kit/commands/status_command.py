"""``tfjob-kit status``: what jobs are doing and why (``kube/info.py``, the same reading as
tfjob.kit.tfjob_info; ``report/jobs.py`` writes it)."""

from __future__ import annotations

import argparse
import json
from typing import TYPE_CHECKING

from tfjob_kit import extras
from tfjob_kit.commands import EXIT_FINDINGS, EXIT_OK, UsageError, connection, job_args
from tfjob_kit.report import jobs as job_report

if TYPE_CHECKING:
    from tfjob_kit.commands import Subparsers


def register(sub: Subparsers) -> None:
    parser = sub.add_parser(
        "status",
        help="what jobs are doing: replicas, pods, problems in the server's words, what to do",
        description="Read each job, its pods, its PodGroup or Kueue Workload and its events, "
        "and say its phase, its replicas by state and each problem as the server tells it, "
        "with what to do. Exit 1 when a job is missing, has failed, or has a problem that will "
        "not pass by itself; 2 when the cluster cannot be asked. --format json gives "
        "tfjob.kit.tfjob_info's jobs.",
    )
    job_args.add_job_arguments(parser)
    parser.add_argument(
        "--events", type=int, default=10, metavar="N", help="the newest N events (default 10)"
    )
    parser.add_argument(
        "--log-lines",
        type=int,
        default=0,
        metavar="N",
        help="the last N lines of the chief's (else worker 0's) log (default: none)",
    )
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    extras.require("cluster", "tfjob-kit status")
    from tfjob_kit.kube import info
    from tfjob_kit.kube.api_errors import KubeError
    from tfjob_kit.kube.client import Client

    resource = job_args.resource(args)
    found, missing = [], []
    try:
        with Client(connection(args)) as client:
            for name in dict.fromkeys(args.names):
                query = info.Query(
                    name=name,
                    namespace=args.namespace,
                    backend=job_args.backend(args),
                    events=args.events,
                    log_lines=args.log_lines,
                )
                described = info.jobs(client, resource, query)
                found.extend(described)
                if not described:
                    missing.append(resource.describe(args.namespace, name))
    except KubeError as exc:
        raise UsageError(str(exc)) from None
    if args.format == "json":
        print(json.dumps({"jobs": found, "missing": missing}, indent=2))
    else:
        for job in found:
            print("\n".join(job_report.status_lines(job)))
        for what in missing:
            print(f"{what}: not found")
    failing = [
        job
        for job in found
        if job.get("phase") == "Failed" or any(p.get("fatal") for p in job.get("problems") or [])
    ]
    return EXIT_FINDINGS if failing or missing else EXIT_OK
