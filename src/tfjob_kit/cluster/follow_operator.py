"""The local cluster's training-operator follows the toolkit's Deployment.

On the local cluster the operator runs as a host process that stands in for the pod of the
training-operator Deployment (kwok only simulates that pod). When ``site.yml`` installs or
upgrades the chart, the training_operator role runs
``python -m tfjob_kit.cluster.follow_operator --name N --namespace NS --release R``: like a
kubelet rolling the pod, it restarts the process as the release's Deployment now asks: the
training-operator release (its ``app.kubernetes.io/version`` label, which the chart's
operatorVersion sets) and the tuning flags. It prints ``changed`` or ``unchanged``; a clear
error (exit 1) when the Deployment is missing or asks for a release the local cluster has no
build of.
"""

from __future__ import annotations

import argparse
import sys
from typing import TextIO

from tfjob_kit.cluster.kubectl import Kubectl
from tfjob_kit.cluster.options import UpOptions
from tfjob_kit.cluster.paths import ClusterError, kubeconfig_path
from tfjob_kit.cluster.procs import load_state, records, save_state
from tfjob_kit.cluster.training_operator import (
    PROCESS,
    deployment_asks,
    operator_tuning,
    start_operator,
)
from tfjob_kit.versions import VersionsError, load_versions


def follow(name: str, namespace: str, release: str, out: TextIO) -> bool:
    """Restart cluster ``name``'s operator process as the Deployment of Helm release
    ``release`` in ``namespace`` asks, unless it already runs so; whether it restarted."""
    versions = load_versions()
    state = load_state(name)
    if not state.get("addons") or "ports" not in state:
        raise ClusterError(f"cluster {name!r} runs no addons: no operator process to follow")
    kubectl = Kubectl(kubeconfig_path(name))
    selector = f"app.kubernetes.io/instance={release},app.kubernetes.io/managed-by=Helm"
    found = kubectl.get_json("deployment", "-n", namespace, "-l", selector) or {}
    items = found.get("items") or []
    if len(items) != 1:
        raise ClusterError(
            f"cluster {name!r}: {len(items)} Deployments of release {release} in namespace "
            f"{namespace} ({selector}), not 1: nothing for the operator process to follow"
        )
    default = UpOptions()
    current = state.get("operator_tuning", operator_tuning(default))
    version, tuning = deployment_asks(items[0], current)
    running = state.get("operator_version", versions.training_operator)
    alive = any(r.name == PROCESS and r.alive() for r in records(name))
    if alive and version == running and tuning == current:
        return False
    opts = UpOptions(
        name=name,
        webhook=bool(state.get("webhook", default.webhook)),
        gang_scheduler=state.get("gang_scheduler", default.gang_scheduler),
        operator_threads=tuning["controller-threads"],
        operator_qps=tuning["kube-api-qps"],
        operator_burst=tuning["kube-api-burst"],
        operator_version="" if version == versions.training_operator else version,
    )
    print(
        f"[follow] restarting training-operator {running} -> {version or '?'}, "
        + ", ".join(f"--{k}={v}" for k, v in tuning.items()),
        file=out,
    )
    for record in records(name):
        if record.name == PROCESS:
            record.stop()
    start_operator(opts, versions, kubectl, state, out)
    save_state(name, state)
    return True


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tfjob_kit.cluster.follow_operator")
    parser.add_argument("--name", required=True, help="the local cluster")
    parser.add_argument("--namespace", required=True, help="the release's namespace")
    parser.add_argument("--release", required=True, help="the training-operator Helm release")
    args = parser.parse_args(argv)
    try:
        changed = follow(args.name, args.namespace, args.release, sys.stderr)
    except (ClusterError, VersionsError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    print("changed" if changed else "unchanged")
    return 0


if __name__ == "__main__":
    sys.exit(main())
