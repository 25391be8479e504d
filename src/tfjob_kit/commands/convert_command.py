"""``tfjob-kit convert``: legacy TFJobs and T9k jobs to v1 TFJobs, or TFJobs to Volcano Jobs or to
Trainer v2 TrainJobs (``convert/``); what cannot be carried over is said on stderr."""

from __future__ import annotations

import argparse
import functools
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from tfjob_kit import model
from tfjob_kit.commands import EXIT_FINDINGS, EXIT_OK, UsageError
from tfjob_kit.commands.output import dump_yaml, write
from tfjob_kit.convert.trainjob import GANG_CHOICES
from tfjob_kit.findings import Severity
from tfjob_kit.manifests import InputError, load_paths
from tfjob_kit.validate import check_object

if TYPE_CHECKING:
    from tfjob_kit.commands import Subparsers
    from tfjob_kit.convert import Note


def register(sub: Subparsers) -> None:
    parser = sub.add_parser(
        "convert",
        help="v1beta1 or T9k jobs to v1 TFJobs, or TFJobs to Volcano Jobs or TrainJobs",
        description="Convert legacy TFJobs (v1alpha1..v1beta2) and T9k TensorFlowTrainingJobs "
        "to kubeflow.org/v1 TFJobs (--to tfjob), or any of them to Volcano "
        "batch.volcano.sh/v1alpha1 Jobs (--to volcano), or to Kubeflow Trainer v2 TrainJobs, "
        "each with the TrainingRuntime of its own it runs on (--to trainjob). What cannot be "
        "carried over is reported on stderr.",
    )
    parser.add_argument("paths", nargs="+", metavar="PATH")
    parser.add_argument("--to", choices=["tfjob", "volcano", "trainjob"], default="tfjob")
    parser.add_argument(
        "--gang-scheduler",
        choices=GANG_CHOICES,
        help="--to trainjob: gang the TrainJob's pods with Volcano (a PodGroup of every pod) or "
        "not; the training-operator's --gang-scheduler-name, which a TFJob does not show "
        "(default: the job decides: a schedulingPolicy, or pods naming volcano or kube-batch)",
    )
    parser.add_argument("-o", "--output", metavar="FILE")
    parser.add_argument(
        "--strict", action="store_true", help="exit 1 when anything could not be carried over"
    )
    parser.set_defaults(run=run)


Converted = tuple[dict[str, Any], list["Note"]]
ConvertedDocs = tuple[list[dict[str, Any]], list["Note"]]


def _one(
    converter: Callable[[dict[str, Any]], Converted],
) -> Callable[[dict[str, Any]], ConvertedDocs]:
    """A converter of one document to one, as one that returns a list."""

    def wrapped(document: dict[str, Any]) -> ConvertedDocs:
        converted, notes = converter(document)
        return [converted], notes

    return wrapped


def run(args: argparse.Namespace) -> int:
    from tfjob_kit import convert

    try:
        docs = load_paths(args.paths)
    except InputError as exc:
        raise UsageError(str(exc)) from None
    if args.gang_scheduler is not None and args.to != "trainjob":
        raise UsageError("--gang-scheduler applies to --to trainjob only")
    converters: dict[str, Callable[[dict[str, Any]], ConvertedDocs]] = {
        "tfjob": _one(convert.to_v1),
        "volcano": _one(convert.to_volcano),
        "trainjob": functools.partial(convert.to_trainjob, gang_scheduler=args.gang_scheduler),
    }
    converter = converters[args.to]
    outputs: list[dict[str, Any]] = []
    dropped = failed = False
    for doc in docs:
        where = f"{doc.source}:{doc.index}"
        if doc.error is not None:
            print(
                f"{where}:{doc.error.path}: [{doc.error.rule}] error: {doc.error.message}",
                file=sys.stderr,
            )
            failed = True
            continue
        try:
            converted_docs, notes = converter(doc.content)
        except convert.ConversionError as exc:
            print(f"{where}: passed through unchanged: {exc}", file=sys.stderr)
            outputs.append(doc.content)
            continue
        for note in notes:
            print(f"{where}:{note.path}: [convert] {note.kind}: {note.message}", file=sys.stderr)
            dropped = dropped or note.kind == "dropped"
        for converted in converted_docs:
            if converted.get("kind") == model.KIND:
                for finding in check_object(converted):
                    if finding.severity >= Severity.WARNING:
                        print(
                            f"{where}:{finding.path}: [{finding.rule}] {finding.severity} after "
                            f"conversion: {finding.message}",
                            file=sys.stderr,
                        )
        outputs.extend(converted_docs)
    write(dump_yaml(outputs), args.output)
    if failed or (args.strict and dropped):
        return EXIT_FINDINGS
    return EXIT_OK
