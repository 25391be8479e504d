"""``tfjob-kit explain``: the pods and services the operator creates for a TFJob, and the exact
TF_CONFIG each replica gets (``explain.py``); for a Kubeflow Trainer v2 TrainJob, the pods JobSet
creates on its runtime and the TF_CONFIG each gets (``trainjob.py``)."""

from __future__ import annotations

import argparse
import json
import sys
from typing import TYPE_CHECKING, Any

from tfjob_kit import explain, model, runtimes, trainjob
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
        "names, the exact TF_CONFIG per replica, who decides success, defaults. For a "
        "TrainJob (its runtime in the same input, or one tfjob-kit ships), each pod's address "
        "and TF_CONFIG.",
    )
    parser.add_argument("path", metavar="FILE")
    parser.add_argument("--namespace", help="namespace (default: metadata.namespace or 'default')")
    parser.add_argument(
        "--cluster-domain", default="", help="the operator's CUSTOM_CLUSTER_DOMAIN, if set"
    )
    parser.add_argument("--format", choices=["text", "json"], default="text")
    parser.set_defaults(run=run)


Loaded = tuple[list[tuple[str, int, dict[str, Any]]], list[tuple[str, int, dict[str, Any]]]]


def _jobs(paths: list[str]) -> tuple[Loaded, list[dict[str, Any]]]:
    """((TFJobs as v1, TrainJobs), every document): each job with its source and document
    index; other documents are only read to find a TrainJob's runtime."""
    from tfjob_kit import convert

    try:
        docs = load_paths(paths)
    except InputError as exc:
        raise UsageError(str(exc)) from None
    tfjobs, trainjobs, everything = [], [], []
    for doc in docs:
        if doc.error is not None:
            raise UsageError(f"{doc.source}:{doc.index}: {doc.error.message}")
        everything.append(doc.content)
        if model.is_tfjob(doc.content) or doc.kind == convert.T9K_KIND:
            job, _ = convert.to_v1(doc.content)
            tfjobs.append((doc.source, doc.index, job))
        elif doc.kind == "TrainJob" and str(doc.content.get("apiVersion", "")).startswith(
            trainjob.TRAINER_GROUP + "/"
        ):
            trainjobs.append((doc.source, doc.index, doc.content))
    return (tfjobs, trainjobs), everything


def _trainjob_plan(job: dict[str, Any], runtime: dict[str, Any]) -> dict[str, Any]:
    meta = job.get("metadata") or {}
    return {
        "trainJob": meta.get("name"),
        "namespace": meta.get("namespace") or "default",
        "runtime": {
            "kind": runtime.get("kind"),
            "name": (runtime.get("metadata") or {}).get("name"),
        },
        "pods": [
            {
                "replicatedJob": pod.replicated_job,
                "jobIndex": pod.job_index,
                "index": pod.index,
                "address": pod.address,
                "tfConfig": next(
                    (env["TF_CONFIG"] for env in pod.env.values() if "TF_CONFIG" in env), None
                ),
            }
            for pod in trainjob.pods(job, runtime)
        ],
    }


def _trainjob_text(plan: dict[str, Any]) -> str:
    runtime = plan["runtime"]
    lines = [
        f"TrainJob {plan['namespace']}/{plan['trainJob']} on {runtime['kind']} "
        f"{runtime['name']}: {len(plan['pods'])} pods (JobSet's names)"
    ]
    for pod in plan["pods"]:
        lines.append(
            f"  {pod['replicatedJob']} job {pod['jobIndex']} index {pod['index']}: {pod['address']}"
        )
        if pod["tfConfig"] is not None:
            lines.append(f"    TF_CONFIG={pod['tfConfig']}")
    return "\n".join(lines) + "\n"


def run(args: argparse.Namespace) -> int:
    (jobs, trainjobs), documents = _jobs([args.path])
    if not jobs and not trainjobs:
        raise UsageError(f"{args.path}: no TFJob or TrainJob found")
    try:
        plans = [explain.plan(job, args.namespace, args.cluster_domain) for _, _, job in jobs]
    except explain.ExplainError as exc:
        print(f"tfjob-kit: error: {args.path}: {exc}", file=sys.stderr)
        return EXIT_FINDINGS
    trainjob_plans = []
    for source, index, job in trainjobs:
        runtime = trainjob.find_runtime(job, [*documents, *runtimes.shipped()])
        if runtime is None:
            ref = (job.get("spec") or {}).get("runtimeRef") or {}
            print(
                f"tfjob-kit: error: {source}:{index}: the TrainJob's runtime "
                f"{ref.get('kind') or 'ClusterTrainingRuntime'} {ref.get('name')!r} is neither in "
                "the input nor one tfjob-kit ships: give it in the same file (tfjob-kit convert "
                "--to trainjob writes both)",
                file=sys.stderr,
            )
            return EXIT_FINDINGS
        trainjob_plans.append(_trainjob_plan(job, runtime))
    if args.format == "json":
        data: Any = [p.as_dict() for p in plans] + trainjob_plans
        write(json.dumps(data if len(data) > 1 else data[0], indent=2) + "\n", None)
    else:
        texts = [explain.render_text(p) for p in plans] + [
            _trainjob_text(p) for p in trainjob_plans
        ]
        write("\n".join(texts), None)
    return EXIT_OK
