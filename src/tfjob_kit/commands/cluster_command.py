"""``tfjob-kit cluster build|up|down|status|kubeconfig|env``: the embedded local cluster
(``cluster/``).

The defaults of ``up`` are ``UpOptions``' and ``NodePlan``'s (``cluster/options.py``): none is
typed here.
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING

from tfjob_kit import extras
from tfjob_kit.cluster import build, local
from tfjob_kit.cluster.nodes import NodePlan
from tfjob_kit.cluster.options import (
    GANG_SCHEDULERS,
    UpOptions,
    default_name,
    is_schedule_period,
)
from tfjob_kit.cluster.paths import ClusterError, validate_cluster_name
from tfjob_kit.versions import VersionsError, load_versions

if TYPE_CHECKING:
    from tfjob_kit.commands import Subparsers


def _cmd_build(args: argparse.Namespace) -> int:
    versions = load_versions()
    results = build.build_all(
        args.components or None,
        with_kubectl=args.with_kubectl,
        force=args.force,
        versions=versions.for_kubernetes(args.kubernetes_version or versions.kubernetes),
    )
    for item in results:
        how = "cached" if item.cached else f"built in {item.seconds:.0f}s"
        print(f"{item.component.name:<18} {item.component.version:<9} {how:<16} {item.path}")
    return 0


def _cmd_up(args: argparse.Namespace) -> int:
    opts = UpOptions(
        name=args.name,
        kubernetes_version=args.kubernetes_version,
        nodes=NodePlan(
            cpu_nodes=args.cpu_nodes, gpu_nodes=args.gpu_nodes, gpus_per_node=args.gpus_per_node
        ),
        addons=args.addons,
        webhook=args.webhook,
        jobset=args.jobset,
        trainer=args.trainer,
        kueue=args.kueue,
        tfjob_run_seconds=args.tfjob_run_seconds,
        timeout=args.timeout,
        gang_scheduler=args.gang_scheduler,
        operator_threads=args.operator_threads,
        operator_qps=args.operator_qps,
        operator_burst=args.operator_burst,
        schedule_period=args.schedule_period,
    )
    path = local.up(opts)
    print(path)
    return 0


def _cmd_down(args: argparse.Namespace) -> int:
    local.down(args.name)
    return 0


def _cmd_status(args: argparse.Namespace) -> int:
    info = local.status(args.name)
    if args.output == "json":
        print(json.dumps(info, indent=2))
    else:
        state = "running" if info["running"] else ("stopped" if info["exists"] else "absent")
        print(f"cluster:    {info['name']} ({state})")
        print(f"kubeconfig: {info['kubeconfig']}")
        print(f"logs:       {info['logs']}")
        if "webhook" in info:
            print(f"webhook:    {'local' if info['webhook'] else 'off'}")
        for pname, proc in info.get("processes", {}).items():
            alive = "up  " if proc["alive"] else "DOWN"
            print(f"  {alive} {pname:<28} pid {proc['pid']:<8} {proc['rss_mib']} MiB")
        if "rss_mib_total" in info:
            print(f"memory:     {info['rss_mib_total']} MiB RSS in total")
        for node in info.get("nodes", []):
            ready = "Ready" if node["ready"] else "NotReady"
            print(f"  node {node['name']:<24} {ready:<9} nvidia.com/gpu={node['gpus']}")
    return 0 if info["running"] else 1


def _cmd_kubeconfig(args: argparse.Namespace) -> int:
    path = local.kubeconfig_path(args.name)
    if not path.exists():
        print(f"no local cluster {args.name!r}: run `tfjob-kit cluster up`", file=sys.stderr)
        return 1
    print(path)
    return 0


def _cmd_env(args: argparse.Namespace) -> int:
    path = local.kubeconfig_path(args.name)
    if not path.exists():
        print(f"no local cluster {args.name!r}: run `tfjob-kit cluster up`", file=sys.stderr)
        return 1
    dirs = [str(p.parent) for p in build.tool_paths()]
    print(f"export KUBECONFIG={shlex.quote(str(path))}")
    if dirs:
        print(f'export PATH={shlex.quote(":".join(dirs))}:"$PATH"')
    return 0


def _cluster_name(value: str) -> str:
    try:
        return validate_cluster_name(value)
    except ClusterError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from exc


def _at_least_one(value: str) -> int:
    try:
        number = int(value)
    except ValueError:
        number = 0
    if number < 1:
        raise argparse.ArgumentTypeError(f"{value!r} is not a whole number of at least 1")
    return number


def _schedule_period(value: str) -> str:
    if not is_schedule_period(value):
        raise argparse.ArgumentTypeError(
            f"{value!r} is not a Go duration of more than zero, such as 500ms or 2s"
        )
    return value


def _guard(func: Callable[[argparse.Namespace], int]) -> Callable[[argparse.Namespace], int]:
    """`func` as a command's run: a ClusterError is said in one line (exit 2)."""

    def run(args: argparse.Namespace) -> int:
        extras.require("cluster", "tfjob-kit cluster")
        try:
            return func(args)
        except (ClusterError, VersionsError) as exc:
            print(f"tfjob-kit cluster: error: {exc}", file=sys.stderr)
            return 2
        except KeyboardInterrupt:
            return 130

    return run


def register(subparsers: Subparsers) -> None:
    parser = subparsers.add_parser(
        "cluster",
        help="the embedded local Kubernetes cluster (kwok + training-operator + Volcano)",
        description="Build, start and stop the local cluster used by examples and tests.",
    )
    sub = parser.add_subparsers(dest="cluster_command", required=True, metavar="COMMAND")

    p = sub.add_parser("build", help="build the pinned binaries into the cache (no-op when cached)")
    _build_arguments(p)
    p.set_defaults(run=_guard(_cmd_build))

    p = sub.add_parser("up", help="start or reuse the local cluster")
    _named(p)
    _up_arguments(p)
    p.set_defaults(run=_guard(_cmd_up))

    p = sub.add_parser("down", help="stop the cluster; leaves no process, port or file")
    _named(p)
    p.set_defaults(run=_guard(_cmd_down))

    p = sub.add_parser("status", help="processes, memory, nodes; exit 0 only when running")
    _named(p)
    p.add_argument("-o", "--output", choices=("text", "json"), default="text")
    p.set_defaults(run=_guard(_cmd_status))

    p = sub.add_parser("kubeconfig", help="print the kubeconfig path")
    _named(p)
    p.set_defaults(run=_guard(_cmd_kubeconfig))

    p = sub.add_parser(
        "env", help="print shell exports: KUBECONFIG, and PATH with the built helm (and kubectl)"
    )
    _named(p)
    p.set_defaults(run=_guard(_cmd_env))


def _named(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--name",
        type=_cluster_name,
        default=default_name(),
        help="cluster name (default: $TFJOB_KIT_CLUSTER, else %(default)s)",
    )


def _build_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "components",
        nargs="*",
        metavar="COMPONENT",
        help=f"subset to build (default: {' '.join(build.DEFAULT)})",
    )
    p.add_argument(
        "--with-kubectl",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="also build kubectl (default: only when none is on PATH)",
    )
    p.add_argument("--force", action="store_true", help="rebuild even when cached")
    _kubernetes_version_argument(p, "build")


def _kubernetes_version_argument(p: argparse.ArgumentParser, what: str) -> None:
    versions = load_versions()
    default = ".".join(versions.kube_minor)
    others = [m for m in versions.kubernetes_minors if m != default]
    p.add_argument(
        "--kubernetes-version",
        metavar="MINOR",
        default=UpOptions().kubernetes_version,
        help=f"the Kubernetes minor to {what}: {default} (the default) or one of "
        f"{', '.join(others) or 'none'} (versions.toml [kubernetes] releases)"
        + ("; an existing cluster keeps the minor it was made with" if what == "run" else ""),
    )


def _on_off(value: bool) -> str:
    return "on" if value else "off"


def _component_arguments(p: argparse.ArgumentParser, up: UpOptions) -> None:
    """What runs on the cluster besides Kubernetes: `cluster up --addons/--jobset/--trainer/
    --kueue`."""
    p.add_argument(
        "--addons",
        action=argparse.BooleanOptionalAction,
        default=up.addons,
        help=f"run the training-operator and Volcano (default: {_on_off(up.addons)})",
    )
    p.add_argument(
        "--jobset",
        action=argparse.BooleanOptionalAction,
        default=up.jobset,
        help=f"run the JobSet controller and its webhooks (default: {_on_off(up.jobset)})",
    )
    p.add_argument(
        "--trainer",
        action=argparse.BooleanOptionalAction,
        default=up.trainer,
        help="run the Kubeflow Trainer v2 controller-manager and its webhooks, and JobSet's "
        f"(default: {_on_off(up.trainer)})",
    )
    p.add_argument(
        "--kueue",
        action=argparse.BooleanOptionalAction,
        default=up.kueue,
        help="run the Kueue controller-manager and its webhooks, managing TFJobs and TrainJobs "
        f"(default: {_on_off(up.kueue)})",
    )
    p.add_argument(
        "--webhook",
        action=argparse.BooleanOptionalAction,
        default=up.webhook,
        help=f"register the operator's validating webhook (default: {_on_off(up.webhook)})",
    )


def _up_arguments(p: argparse.ArgumentParser) -> None:
    """The options of `cluster up`, each defaulting to UpOptions' (cluster/options.py)."""
    up = UpOptions()
    p.add_argument("--cpu-nodes", type=int, default=up.nodes.cpu_nodes)
    p.add_argument("--gpu-nodes", type=int, default=up.nodes.gpu_nodes)
    p.add_argument("--gpus-per-node", type=int, default=up.nodes.gpus_per_node)
    _kubernetes_version_argument(p, "run")
    _component_arguments(p, up)
    p.add_argument(
        "--tfjob-run-seconds",
        type=float,
        default=up.tfjob_run_seconds,
        help="how long simulated TFJob pods run before exiting (default %(default)g)",
    )
    p.add_argument(
        "--gang-scheduler",
        choices=GANG_SCHEDULERS,
        default=up.gang_scheduler,
        help="what the training-operator gangs pods with: volcano, or none (each pod goes to "
        "the default scheduler alone; default %(default)s); a running cluster's operator is "
        "restarted to match",
    )
    restarted = "; a running cluster's {} is restarted to match"
    p.add_argument(
        "--operator-threads",
        type=_at_least_one,
        default=up.operator_threads,
        metavar="N",
        help="TFJobs the training-operator reconciles at once (its --controller-threads; "
        "default %(default)s, the operator's)" + restarted.format("operator"),
    )
    p.add_argument(
        "--operator-qps",
        type=_at_least_one,
        default=up.operator_qps,
        metavar="N",
        help="the training-operator's sustained API requests per second (its --kube-api-qps; "
        "default %(default)s, the operator's)" + restarted.format("operator"),
    )
    p.add_argument(
        "--operator-burst",
        type=_at_least_one,
        default=up.operator_burst,
        metavar="N",
        help="API requests the training-operator may make above --operator-qps in a burst (its "
        "--kube-api-burst; default %(default)s, the operator's)" + restarted.format("operator"),
    )
    p.add_argument(
        "--schedule-period",
        type=_schedule_period,
        default=up.schedule_period,
        metavar="DURATION",
        help="pause between vc-scheduler's scheduling cycles, a Go duration (default "
        "%(default)s; Volcano's own is 1s)" + restarted.format("vc-scheduler") + ". The local "
        "cluster runs no Volcano webhook, so the webhook timeout is a chart and role value only",
    )
    p.add_argument("--timeout", type=float, default=up.timeout, help="seconds to wait per step")
