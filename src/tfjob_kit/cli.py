"""The `tfjob-kit` command.

Exit codes (other tools rely on them): 0 nothing at or above the fail level, 1 findings at or
above it (malformed YAML included), 2 usage errors and paths that cannot be read.
"""

from __future__ import annotations

import argparse
import copy
import gc
import json
import sys
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import yaml

# What `validate` does not use is imported by the command that does (convert, crd, gpu, the
# cluster commands): a validate run starts without them.
from tfjob_kit import __version__, config, explain, model, redact, report, rules, schema
from tfjob_kit.findings import Severity
from tfjob_kit.manifests import Document, InputError, load_paths
from tfjob_kit.report.text import summary_line
from tfjob_kit.rules.server import SERVER_RULES
from tfjob_kit.validate import Report, check_object, validate_documents, validate_paths

EXIT_OK, EXIT_FINDINGS, EXIT_USAGE = 0, 1, 2


class UsageError(Exception):
    """Bad arguments, unreadable paths: exit 2."""


def _dump_yaml(documents: list[dict[str, Any]]) -> str:
    return yaml.safe_dump_all(documents, sort_keys=False, default_flow_style=False, width=100)


def _write(text: str, output: str | None) -> None:
    if output in (None, "-"):
        sys.stdout.write(text)
    else:
        Path(output).write_text(text, encoding="utf-8")


# --------------------------------------------------------------------------- validate


def _add_rule_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--config",
        metavar="FILE",
        help=f"rule configuration (default: {config.DEFAULT_CONFIG_FILE} if present)",
    )
    parser.add_argument(
        "--disable",
        action="append",
        default=[],
        metavar="RULE[,RULE]",
        help="disable rules (repeatable)",
    )
    parser.add_argument(
        "--severity",
        action="append",
        default=[],
        metavar="RULE=LEVEL",
        help="re-level a rule: error, warning or info (repeatable)",
    )


def _rule_config(args: argparse.Namespace) -> config.RuleConfig:
    try:
        return config.load(args.config, args.disable, args.severity)
    except (config.ConfigError, InputError) as exc:
        raise UsageError(str(exc)) from None


def _server_findings(
    docs: list[Document], result: Report, rule_config: config.RuleConfig, args: argparse.Namespace
) -> None:
    """`validate --server`: the preflight's findings (kube/preflight.py) added to each TFJob's
    result, in the same order and format as the offline ones."""
    from tfjob_kit.kube import preflight
    from tfjob_kit.kube.client import Client
    from tfjob_kit.kube.connection import Connection
    from tfjob_kit.kube.errors import KubeError

    try:
        connection = Connection.from_options(
            {"kubeconfig": args.kubeconfig, "context": args.context}
        )
        default_namespace = args.namespace or connection.namespace() or "default"
        chosen = []
        for doc, doc_result in zip(docs, result.results, strict=True):
            if doc_result.skipped is not None or not doc_result.loaded or not doc_result.name:
                continue
            if doc.api_version != model.API_VERSION:  # the server serves v1 only
                continue
            job = copy.deepcopy(doc.content)
            job.setdefault("metadata", {}).setdefault("namespace", default_namespace)
            chosen.append((doc_result, preflight.Target(doc.source, doc.index, job, doc.line)))
        if not chosen:
            return
        with Client(connection) as client:
            found = preflight.check(client, [t for _, t in chosen], rule_config, the_jobs=True)
    except KubeError as exc:
        raise UsageError(f"--server: {exc}") from None
    for doc_result, target in chosen:
        secrets = redact.secret_values(target.tfjob)
        mine = [
            replace(f, message=redact.mask_message(f.message, f.path, secrets))
            for f in found
            if f.source == target.source and f.document == target.document
        ]
        offline = doc_result.findings
        if not any(f.rule == preflight.INCOMPLETE_RULE for f in mine):
            # The server has answered for itself: its verdict replaces the offline prediction
            # of it (the server-rejects-* rules of rules/server.py). Where the preflight was
            # incomplete the predictions stay, origin "offline", and the text report says so
            # (report.text.kept_predictions).
            offline = [f for f in offline if f.rule not in SERVER_RULES]
        doc_result.findings = sorted([*offline, *mine], key=lambda f: (f.path, -f.severity, f.rule))


def cmd_validate(args: argparse.Namespace) -> int:
    rule_config = _rule_config(args)
    fail_on = Severity.parse(args.fail_on)
    try:
        if args.server:
            docs = load_paths(args.paths)
            result = validate_documents(docs, rule_config)
            _server_findings(docs, result, rule_config, args)
        else:
            # What is loaded by now (modules, schemas) outlives the run: kept out of the
            # collector's full passes meanwhile (half its time on many files).
            gc.freeze()
            try:
                result = validate_paths(args.paths, rule_config, jobs=args.jobs)
            finally:
                gc.unfreeze()
    except InputError as exc:
        raise UsageError(str(exc)) from None
    _write(report.render(result, args.format, fail_on), args.output)
    if args.output not in (None, "-"):
        print(summary_line(result), file=sys.stderr)
    return EXIT_FINDINGS if result.failed(fail_on) else EXIT_OK


# --------------------------------------------------------------------------- explain


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


def cmd_explain(args: argparse.Namespace) -> int:
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
        _write(json.dumps(data if len(data) > 1 else data[0], indent=2) + "\n", None)
    else:
        _write("\n".join(explain.render_text(p) for p in plans), None)
    return EXIT_OK


# --------------------------------------------------------------------------- convert


def cmd_convert(args: argparse.Namespace) -> int:
    from tfjob_kit import convert

    try:
        docs = load_paths(args.paths)
    except InputError as exc:
        raise UsageError(str(exc)) from None
    converter: Callable[[dict[str, Any]], tuple[dict[str, Any], list[convert.Note]]]
    converter = convert.to_volcano if args.to == "volcano" else convert.to_v1
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
            converted, notes = converter(doc.content)
        except convert.ConversionError as exc:
            print(f"{where}: passed through unchanged: {exc}", file=sys.stderr)
            outputs.append(doc.content)
            continue
        for note in notes:
            print(f"{where}:{note.path}: [convert] {note.kind}: {note.message}", file=sys.stderr)
            dropped = dropped or note.kind == "dropped"
        if converted.get("kind") == model.KIND:
            for finding in check_object(converted):
                if finding.severity >= Severity.WARNING:
                    print(
                        f"{where}:{finding.path}: [{finding.rule}] {finding.severity} after "
                        f"conversion: {finding.message}",
                        file=sys.stderr,
                    )
        outputs.append(converted)
    _write(_dump_yaml(outputs), args.output)
    if failed or (args.strict and dropped):
        return EXIT_FINDINGS
    return EXIT_OK


# --------------------------------------------------------------------------- rules, schema


def cmd_rules(args: argparse.Namespace) -> int:
    rows = [
        (rule_id, str(rules.default_severity(rule_id)), rules.summary(rule_id))
        for rule_id in rules.all_rule_ids()
    ]
    if args.format == "json":
        print(json.dumps([{"id": r, "severity": s, "summary": d} for r, s, d in rows], indent=2))
    else:
        width = max(len(r) for r, _, _ in rows)
        for rule_id, severity, text in rows:
            print(f"{rule_id:<{width}}  {severity:<7}  {text}")
    return EXIT_OK


def cmd_schema(args: argparse.Namespace) -> int:
    from tfjob_kit import crd

    if args.what == "crd":
        text = (
            _dump_yaml([crd.crd()])
            if args.format == "yaml"
            else json.dumps(crd.crd(), indent=2) + "\n"
        )
    elif args.what == "crd-json-schema":
        text = json.dumps(crd.openapi_v3_schema(), indent=2) + "\n"
    else:
        text = json.dumps(schema.bundled_schema(), indent=2) + "\n"
    _write(text, args.output)
    return EXIT_OK


# --------------------------------------------------------------------------- parser


def cmd_gpu_preflight(args: argparse.Namespace) -> int:
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


def cmd_webhooks(args: argparse.Namespace) -> int:
    """Admission webhooks that cannot be called (kube/webhooks.py): exit 1 when one with
    failurePolicy Fail blocks requests, 2 when the cluster cannot be asked."""
    from tfjob_kit.kube import webhooks
    from tfjob_kit.kube.client import Client
    from tfjob_kit.kube.connection import Connection
    from tfjob_kit.kube.errors import KubeError

    try:
        connection = Connection.from_options(
            {"kubeconfig": args.kubeconfig, "context": args.context}
        )
        with Client(connection) as client:
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


def build_parser(only_validate: bool = False) -> argparse.ArgumentParser:
    """The command line. `only_validate`: with the validate command alone, which parses a
    validate command line the same (the others' modules, the cluster commands', not imported)."""
    parser = argparse.ArgumentParser(
        prog="tfjob-kit",
        description="Validate, explain and convert Kubeflow TFJobs; run a local cluster.",
    )
    parser.add_argument("--version", action="version", version=f"tfjob-kit {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    validate = sub.add_parser(
        "validate",
        help="check TFJobs against the schema and the operator's rules",
        description="Validate TFJob manifests (files, directories, '-' for stdin). Exit 0: "
        "nothing at or above --fail-on; 1: findings (or malformed YAML); 2: usage.",
    )
    validate.add_argument("paths", nargs="+", metavar="PATH")
    validate.add_argument("--format", choices=sorted(report.FORMATS), default="text")
    validate.add_argument("--fail-on", choices=["error", "warning", "info"], default="error")
    validate.add_argument("-o", "--output", metavar="FILE", help="write the report to FILE")
    validate.add_argument(
        "-j",
        "--jobs",
        type=int,
        default=0,
        metavar="N",
        help="processes to validate files with (default 0: one per CPU when there are many files)",
    )
    _add_rule_options(validate)
    server = validate.add_argument_group(
        "server",
        "--server also asks the cluster: the TFJob and the pods (one per replica type) and "
        "PodGroup the operator creates are dry-run, the Secrets, ConfigMaps, PVCs, "
        "ServiceAccount, PriorityClass and Volcano queue they name must exist, and the "
        "namespace's ResourceQuotas must hold the whole job. Nothing is stored.",
    )
    server.add_argument(
        "--server", action="store_true", help="also validate against the cluster (dry runs)"
    )
    server.add_argument(
        "--kubeconfig", metavar="FILE", help="kubeconfig (default: $KUBECONFIG, ~/.kube/config)"
    )
    server.add_argument("--context", help="the kubeconfig context to use")
    server.add_argument(
        "-n",
        "--namespace",
        help="namespace of TFJobs that name none (default: the context's, else 'default')",
    )
    validate.set_defaults(func=cmd_validate)
    if only_validate:
        return parser

    explain_parser = sub.add_parser(
        "explain",
        help="show pods, services and the TF_CONFIG each replica gets",
        description="Show what the training-operator creates for a TFJob: pod and service "
        "names, the exact TF_CONFIG per replica, who decides success, defaults.",
    )
    explain_parser.add_argument("path", metavar="FILE")
    explain_parser.add_argument(
        "--namespace", help="namespace (default: metadata.namespace or 'default')"
    )
    explain_parser.add_argument(
        "--cluster-domain", default="", help="the operator's CUSTOM_CLUSTER_DOMAIN, if set"
    )
    explain_parser.add_argument("--format", choices=["text", "json"], default="text")
    explain_parser.set_defaults(func=cmd_explain)

    convert_parser = sub.add_parser(
        "convert",
        help="v1beta1 or T9k jobs to v1 TFJobs, or TFJobs to Volcano Jobs",
        description="Convert legacy TFJobs (v1alpha1..v1beta2) and T9k TensorFlowTrainingJobs "
        "to kubeflow.org/v1 TFJobs (--to tfjob), or any of them to Volcano "
        "batch.volcano.sh/v1alpha1 Jobs (--to volcano). What cannot be carried over "
        "is reported on stderr.",
    )
    convert_parser.add_argument("paths", nargs="+", metavar="PATH")
    convert_parser.add_argument("--to", choices=["tfjob", "volcano"], default="tfjob")
    convert_parser.add_argument("-o", "--output", metavar="FILE")
    convert_parser.add_argument(
        "--strict", action="store_true", help="exit 1 when anything could not be carried over"
    )
    convert_parser.set_defaults(func=cmd_convert)

    rules_parser = sub.add_parser("rules", help="list the rules")
    rules_parser.add_argument("--format", choices=["text", "json"], default="text")
    rules_parser.set_defaults(func=cmd_rules)

    schema_parser = sub.add_parser(
        "schema", help="print the bundled JSON Schema or the generated CRD"
    )
    schema_parser.add_argument("what", choices=["json", "crd", "crd-json-schema"])
    schema_parser.add_argument("--format", choices=["yaml", "json"], default="yaml", help="for crd")
    schema_parser.add_argument("-o", "--output", metavar="FILE")
    schema_parser.set_defaults(func=cmd_schema)

    gpu_parser = sub.add_parser("gpu", help="GPU node preflight (run on the GPU host)")
    gpu_sub = gpu_parser.add_subparsers(dest="gpu_command", required=True, metavar="COMMAND")
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
    preflight.set_defaults(func=cmd_gpu_preflight)

    webhooks_parser = sub.add_parser(
        "webhooks",
        help="find admission webhooks that cannot be called (they block pod creation)",
        description="Dry-run the creation of a Pod, a TFJob's pod and a Volcano PodGroup in "
        "each namespace (nothing is stored) and read every webhook configuration's Service: "
        "name each webhook the API server cannot call (left behind by an operator removed by "
        "hand) and the kubectl command that deletes its configuration. Exit 1 when one with "
        "failurePolicy Fail is found. Deletes nothing.",
    )
    webhooks_parser.add_argument(
        "-n",
        "--namespace",
        action="append",
        metavar="NAMESPACE",
        help="a namespace to dry-run in (repeatable; default: default)",
    )
    webhooks_parser.add_argument(
        "--kubeconfig", metavar="FILE", help="kubeconfig (default: $KUBECONFIG, ~/.kube/config)"
    )
    webhooks_parser.add_argument("--context", help="the kubeconfig context to use")
    webhooks_parser.add_argument("--format", choices=["text", "json"], default="text")
    webhooks_parser.set_defaults(func=cmd_webhooks)

    from tfjob_kit import images

    images.register(sub)

    try:
        from tfjob_kit.cluster.cli import register
    except ImportError:  # pragma: no cover - the cluster package ships with the library
        pass
    else:
        register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    if argv is None:
        argv = sys.argv[1:]
    # A sub-command's name must be given in full, so a first argument `validate` is that command
    # and the rest is its subparser's (or, unrecognised, the top parser's, whose usage names no
    # command): the other commands' parsers are not needed.
    parser = build_parser(only_validate=bool(argv) and argv[0] == "validate")
    args = parser.parse_args(argv)
    try:
        code: int = args.func(args)
    except UsageError as exc:
        print(f"tfjob-kit: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except BrokenPipeError:
        return EXIT_OK
    return code


if __name__ == "__main__":
    sys.exit(main())
