"""``tfjob-kit wait``: until jobs reach a condition, with the wait of tfjob.kit.tfjob
(``kube/status.py``): it ends at once when the cluster says why a job cannot get there.

On a terminal the progress is one line, rewritten in place; in a log (CI) each change is a line.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
from typing import TYPE_CHECKING, Any, TextIO

from tfjob_kit import extras
from tfjob_kit.commands import EXIT_FINDINGS, EXIT_OK, UsageError, connection, job_args
from tfjob_kit.report import jobs as job_report

if TYPE_CHECKING:
    from tfjob_kit.commands import Subparsers
    from tfjob_kit.kube.status import JobStatus, Key

EXIT_TIMEOUT = 3


def register(sub: Subparsers) -> None:
    from tfjob_kit.kube.status import WAIT_CONDITIONS

    parser = sub.add_parser(
        "wait",
        help="wait until jobs succeed; stop at once, with the server's reason, when they cannot",
        description="Follow the jobs, their pods and their events until every job reaches a "
        "--for condition. Stop at once when a job reaches a --fail-on condition, is deleted, "
        "or has a problem that will not pass by itself (a pod the API server refuses, an image "
        "that will not come, a pod no node can hold), and say it in the server's words. Exit 0: "
        "every job got there; 1: a job failed or cannot get there; 2: usage, or the cluster "
        f"cannot be asked; {EXIT_TIMEOUT}: --timeout passed. --format json gives "
        "tfjob.kit.tfjob's result (jobs, and msg when it fails).",
    )
    job_args.add_job_arguments(parser)
    parser.add_argument(
        "--for",
        dest="wait_for",
        action="append",
        choices=WAIT_CONDITIONS,
        metavar="CONDITION",
        help="a condition that ends the wait (repeatable; default Succeeded; TrainJobs' "
        "Complete counts as Succeeded)",
    )
    parser.add_argument(
        "--fail-on",
        action="append",
        choices=WAIT_CONDITIONS,
        metavar="CONDITION",
        help="a condition that fails the wait (repeatable; default Failed)",
    )
    parser.add_argument(
        "--timeout", type=float, default=600.0, help="seconds to wait at most (default 600)"
    )
    parser.set_defaults(run=run)


class Progress:
    """What the wait knows, as it changes: one line rewritten on a terminal, else a line per
    change."""

    def __init__(self, stream: TextIO, live: bool) -> None:
        self.stream, self.live = stream, live
        self.said: dict[Key, str] = {}
        self.width = 0

    def __call__(self, current: dict[Key, JobStatus]) -> None:
        lines = {key: _line(key, status) for key, status in current.items()}
        if self.live:
            text = " | ".join(lines.values())
            columns = shutil.get_terminal_size().columns - 1
            self.stream.write("\r\x1b[K" + text[:columns])
            self.width = len(text[:columns])
        else:
            for key, line in lines.items():
                if self.said.get(key) != line:
                    self.stream.write(line + "\n")
        self.said = lines
        self.stream.flush()

    def end(self) -> None:
        if self.live and self.width:
            self.stream.write("\r\x1b[K")
            self.stream.flush()


def _line(key: Key, status: JobStatus) -> str:
    return job_report.headline(_job(key, status))


def _job(key: Key, status: JobStatus | None) -> dict[str, Any]:
    """The job's result as tfjob.kit.tfjob gives it (without what only the apply knows)."""
    resource, namespace, name = key
    known = status.as_dict() if status else {"phase": "Pending", "problems": []}
    return {
        "kind": resource.kind,
        "api_version": resource.api_version,
        "namespace": namespace,
        "name": name,
        **known,
    }


def run(args: argparse.Namespace) -> int:
    extras.require("cluster", "tfjob-kit wait")
    from tfjob_kit import kueue
    from tfjob_kit.kube import status
    from tfjob_kit.kube.api_errors import KubeError
    from tfjob_kit.kube.client import Client

    resource = job_args.resource(args)
    keys = [(resource, args.namespace, name) for name in dict.fromkeys(args.names)]
    progress = Progress(sys.stderr, live=sys.stderr.isatty() and args.format == "text")
    failure: status.WaitError | None = None
    reached: dict[Key, status.JobStatus] = {}
    try:
        with Client(connection(args)) as client:
            objects = {key: client.get(resource, args.namespace, key[2]) for key in keys}
            absent = [key for key, obj in objects.items() if obj is None]
            if absent:
                failure = status.WaitError(
                    "; ".join(f"{k[0].describe(k[1], k[2])} does not exist" for k in absent),
                    "not found",
                )
            else:
                reached = status.wait(
                    client,
                    keys,
                    wait_for=args.wait_for or ["Succeeded"],
                    fail_on=args.fail_on or ["Failed"],
                    timeout=args.timeout,
                    workloads=any(kueue.queue_of(obj) for obj in objects.values() if obj),
                    progress=progress,
                )
    except status.WaitError as exc:
        failure = exc
    except KubeError as exc:
        raise UsageError(str(exc)) from None
    finally:
        progress.end()
    known = failure.statuses if failure else reached
    jobs = [_job(key, known.get(key)) for key in keys]
    if args.format == "json":
        result: dict[str, Any] = {"jobs": jobs, "failed": failure is not None}
        if failure:
            result.update(msg=str(failure), reason=failure.reason)
        print(json.dumps(result, indent=2))
    else:
        for job in jobs:
            print("\n".join([job_report.headline(job), *job_report.problem_lines(job["problems"])]))
        if failure:
            print(f"tfjob-kit wait: {failure}", file=sys.stderr)
    if failure is None:
        return EXIT_OK
    return EXIT_TIMEOUT if failure.reason == "timeout" else EXIT_FINDINGS
