"""``tfjob-kit validate``: TFJobs checked against the schema and the operator's rules, offline, and
with ``--server`` against a cluster (``kube/server_verdict.py``)."""

from __future__ import annotations

import argparse
import gc
import sys
from dataclasses import replace
from typing import TYPE_CHECKING

from tfjob_kit import config, extras, report
from tfjob_kit.commands import EXIT_FINDINGS, EXIT_OK, UsageError
from tfjob_kit.commands.output import write
from tfjob_kit.findings import Severity
from tfjob_kit.manifests import Document, InputError, load_paths
from tfjob_kit.podcheck import release
from tfjob_kit.report.text import summary_line
from tfjob_kit.validate import Report, validate_documents, validate_paths

if TYPE_CHECKING:
    from tfjob_kit.commands import Subparsers
    from tfjob_kit.kube.connection import Connection


def register(sub: Subparsers) -> None:
    parser = sub.add_parser(
        "validate",
        help="check TFJobs against the schema and the operator's rules",
        description="Validate TFJob manifests (files, directories, '-' for stdin). Exit 0: "
        "nothing at or above --fail-on; 1: findings (or malformed YAML); 2: usage.",
    )
    parser.add_argument("paths", nargs="+", metavar="PATH")
    parser.add_argument("--format", choices=sorted(report.FORMATS), default="text")
    parser.add_argument("--fail-on", choices=["error", "warning", "info"], default="error")
    parser.add_argument("-o", "--output", metavar="FILE", help="write the report to FILE")
    parser.add_argument(
        "-j",
        "--jobs",
        type=int,
        default=0,
        metavar="N",
        help="processes to validate files with (default 0: one per CPU when there are many files)",
    )
    _add_rule_options(parser)
    server = parser.add_argument_group(
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
    parser.set_defaults(run=run)


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
    parser.add_argument(
        "--kubernetes-version",
        metavar="1.NN",
        help="judge the pods as that Kubernetes minor's API server does, with its default "
        f"feature gates: one of {', '.join(release.window())} (default: the server's with "
        f"--server, else {release.default_minor()}, the default local cluster's)",
    )


def _rule_config(args: argparse.Namespace) -> config.RuleConfig:
    try:
        return config.load(args.config, args.disable, args.severity, args.kubernetes_version)
    except (config.ConfigError, InputError) as exc:
        raise UsageError(str(exc)) from None


def run(args: argparse.Namespace) -> int:
    rule_config = _rule_config(args)
    fail_on = Severity.parse(args.fail_on)
    try:
        if args.server:
            extras.require("cluster", "validate --server")
            docs = load_paths(args.paths)
            connection = _connection(args)
            if args.kubernetes_version is None:
                rule_config = _follow_the_server(rule_config, connection)
            result = validate_documents(docs, rule_config)
            _ask_the_server(docs, result, rule_config, connection, args.namespace)
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
    write(report.render(result, args.format, fail_on), args.output)
    if args.output not in (None, "-"):
        print(summary_line(result), file=sys.stderr)
    return EXIT_FINDINGS if result.failed(fail_on) else EXIT_OK


def _connection(args: argparse.Namespace) -> Connection:
    from tfjob_kit.kube.api_errors import KubeError
    from tfjob_kit.kube.connection import Connection

    try:
        return Connection.from_options({"kubeconfig": args.kubeconfig, "context": args.context})
    except KubeError as exc:
        raise UsageError(f"--server: {exc}") from None


def _follow_the_server(rule_config: config.RuleConfig, connection: Connection) -> config.RuleConfig:
    """The pod checks follow the server's minor (the window's nearest one when outside it)."""
    from tfjob_kit.kube.api_errors import KubeError
    from tfjob_kit.kube.server_verdict import server_minor

    try:
        return replace(rule_config, kubernetes=server_minor(connection))
    except KubeError as exc:
        raise UsageError(f"--server: {exc}") from None


def _ask_the_server(
    docs: list[Document],
    result: Report,
    rule_config: config.RuleConfig,
    connection: Connection,
    namespace: str | None,
) -> None:
    from tfjob_kit.kube.api_errors import KubeError
    from tfjob_kit.kube.server_verdict import add_server_findings

    try:
        for warning in add_server_findings(docs, result, rule_config, connection, namespace):
            print(f"tfjob-kit validate: warning: {warning}", file=sys.stderr)
    except KubeError as exc:
        raise UsageError(f"--server: {exc}") from None
