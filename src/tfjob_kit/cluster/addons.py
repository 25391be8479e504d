"""The addons: the real Volcano scheduler, controller-manager and admission webhooks
(``volcano_admission``), the training-operator (``training_operator``) and the TensorFlow
rendezvous stand-in (``rendezvous``), as local processes of one cluster.

``start_addons`` applies the CRDs (Volcano's, and the TFJob CRD generated from ``schemas/``)
server-side with the field manager ``tfjob-kit-cluster``, by which teardown knows them as the
toolkit's (the local inventory keeps them anyway; the TFJob CRD also carries the annotation
``tfjob-kit.io/created-by``, as one the training_operator role creates does), gives each
process its own identity (``identity``), starts them on free loopback ports and waits until
they serve. On a cluster whose addons already run it renews their tokens, registers Volcano's
webhook configurations again (the volcano role's uninstall removes them once their server is
gone), and restarts the operator when the gang scheduler or the operator's tuning asked for
differs from what it runs with, and vc-scheduler when the schedule period does.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any, TextIO

import yaml

from tfjob_kit import crd as tfjob_crd
from tfjob_kit.cluster import build, chart_rbac, volcano_admission
from tfjob_kit.cluster.identity import ADDON_PROCESSES, identity_kubeconfig, renew_tokens
from tfjob_kit.cluster.kubectl import Kubectl
from tfjob_kit.cluster.options import UpOptions
from tfjob_kit.cluster.paths import ClusterError, bin_root, logs_dir, state_dir
from tfjob_kit.cluster.ports import reserve
from tfjob_kit.cluster.procs import check_alive, http_ok, records, say, spawn, wait
from tfjob_kit.cluster.training_operator import (
    operator_tuning,
    operator_version,
    start_operator,
)
from tfjob_kit.installs.training_operator import CREATED_BY
from tfjob_kit.versions import Versions, repo_root

RENDEZVOUS = "tf-rendezvous"

PORTS = (
    "vc_scheduler_metrics",
    "vc_scheduler_healthz",
    "vc_controller_healthz",
    "vc_controller_metrics",
    "operator_metrics",
    "operator_health",
    "operator_webhook",
    "vc_admission",
    "vc_admission_healthz",
)
CRDS = (
    "podgroups.scheduling.volcano.sh",
    "queues.scheduling.volcano.sh",
    "tfjobs.kubeflow.org",
)


def _spawn_scheduler(
    opts: UpOptions, kubectl: Kubectl, state: dict[str, Any], volcano_dir: Path
) -> None:
    """Start vc-scheduler on the ports of ``state``, with the schedule period of ``opts``."""
    name = opts.name
    ports = state["ports"]
    kubeconfig = identity_kubeconfig(
        name, kubectl, "vc-scheduler", chart_rbac.grants("vc-scheduler")
    )
    spawn(
        "vc-scheduler",
        name,
        [
            str(volcano_dir / "vc-scheduler"),
            f"--kubeconfig={kubeconfig}",
            "--leader-elect=false",
            "--enable-healthz=true",
            f"--healthz-address=127.0.0.1:{ports['vc_scheduler_healthz']}",
            f"--listen-address=127.0.0.1:{ports['vc_scheduler_metrics']}",
            f"--cache-dump-dir={state_dir(name)}",
            f"--scheduler-conf={repo_root() / 'components' / 'volcano' / 'scheduler.yaml'}",
            f"--schedule-period={opts.schedule_period}",
            "-v=3",
        ],
    )
    state["schedule_period"] = opts.schedule_period


def _adjust_addons(
    opts: UpOptions,
    versions: Versions,
    kubectl: Kubectl,
    state: dict[str, Any],
    volcano_dir: Path,
    out: TextIO,
) -> None:
    """Addons that already run: renew their tokens, and restart the operator or vc-scheduler
    where ``opts`` asks for other settings than they run with (a cluster whose state predates
    a setting ran with its default)."""
    default = UpOptions()
    operator_differs = state.get("gang_scheduler", default.gang_scheduler) != opts.gang_scheduler
    operator_differs |= state.get("operator_tuning", operator_tuning(default)) != operator_tuning(
        opts
    )
    operator_differs |= state.get(
        "operator_version", versions.training_operator
    ) != operator_version(opts, versions)
    period = state.get("schedule_period", default.schedule_period)
    say(out, "[up] addons already running; renewing their tokens")
    renew_tokens(opts.name, kubectl)
    volcano_admission.register(kubectl, opts.name, state["ports"]["vc_admission"])
    if period != opts.schedule_period:
        say(
            out,
            f"[up] restarting vc-scheduler: --schedule-period {period} -> {opts.schedule_period}",
        )
        for record in records(opts.name):
            if record.name == "vc-scheduler":
                record.stop()
        _spawn_scheduler(opts, kubectl, state, volcano_dir)
        _wait_volcano(opts, kubectl, state)
    if operator_differs:
        say(
            out,
            "[up] restarting training-operator with the release, gang scheduler and tuning "
            "asked for",
        )
        for record in records(opts.name):
            if record.name == "training-operator":
                record.stop()
        start_operator(opts, versions, kubectl, state, out)


def _wait_volcano(opts: UpOptions, kubectl: Kubectl, state: dict[str, Any]) -> None:
    ports = state["ports"]

    def volcano_ready() -> bool:
        check_alive(opts.name, ADDON_PROCESSES)
        return (
            http_ok(f"http://127.0.0.1:{ports['vc_scheduler_healthz']}/healthz")
            and kubectl.get_json("queues.scheduling.volcano.sh", "default") is not None
        )

    wait("Volcano scheduler and its default queue", volcano_ready, opts.timeout)


def start_addons(
    opts: UpOptions, versions: Versions, kubectl: Kubectl, state: dict[str, Any], out: TextIO
) -> None:
    """Start (or keep, or adjust) the cluster's addon processes; records the ports, the
    webhook, the gang scheduler and the tuning in ``state``."""
    problems = opts.tuning_problems()
    if problems:
        raise ClusterError("cluster up: " + "; ".join(problems))
    name = opts.name
    volcano = build.components(versions)["volcano"]
    volcano_dir = bin_root() / volcano.dirname
    alive = {r.name for r in records(name) if r.alive()}
    if set(ADDON_PROCESSES) <= alive:
        _adjust_addons(opts, versions, kubectl, state, volcano_dir, out)
        return
    for record in records(name):
        if record.name in ADDON_PROCESSES:
            record.stop()

    say(out, "[up] applying CRDs (Volcano, TFJob)")
    crds = [p.read_text("utf-8") for p in sorted((volcano_dir / "crds").glob("*.yaml"))]
    # Generated from schemas/; the local cluster is the toolkit's, so its TFJob CRD is marked as
    # the training_operator role marks one it creates (teardown may remove it).
    tfjobs = tfjob_crd.crd()
    tfjobs["metadata"]["annotations"][CREATED_BY] = "tfjob-kit"
    crds.append(yaml.safe_dump(tfjobs, sort_keys=False))
    kubectl.apply("\n---\n".join(crds))
    wait("the CRDs to be established", lambda: kubectl.crds_established(CRDS), 60)

    ports = reserve(name, PORTS)
    state["ports"] = ports
    # Before the scheduler: its default queue passes Volcano's queue webhooks.
    volcano_admission.start_admission(
        name, volcano_dir / "vc-webhook-manager", kubectl, ports, opts.timeout, out
    )
    logs = logs_dir(name)
    say(
        out,
        "[up] starting Volcano scheduler (--schedule-period="
        f"{opts.schedule_period}) + controller-manager (logs in {logs})",
    )
    _spawn_scheduler(opts, kubectl, state, volcano_dir)
    controller_kubeconfig = identity_kubeconfig(
        name, kubectl, "vc-controller-manager", chart_rbac.grants("vc-controller-manager")
    )
    spawn(
        "vc-controller-manager",
        name,
        [
            str(volcano_dir / "vc-controller-manager"),
            f"--kubeconfig={controller_kubeconfig}",
            "--leader-elect=false",
            "--controllers=job-controller,pg-controller,queue-controller,gc-controller",
            "--enable-healthz=true",
            f"--healthz-address=127.0.0.1:{ports['vc_controller_healthz']}",
            f"--listen-address=127.0.0.1:{ports['vc_controller_metrics']}",
            "-v=2",
        ],
    )

    start_rendezvous(name, kubectl, out)
    start_operator(opts, versions, kubectl, state, out)
    _wait_volcano(opts, kubectl, state)


def start_rendezvous(name: str, kubectl: Kubectl, out: TextIO) -> None:
    """Start the TensorFlow rendezvous stand-in (with the addons, or beside JobSet alone: a
    JobSet's pods finish only once it released them), unless it runs already."""
    if any(r.name == RENDEZVOUS and r.alive() for r in records(name)):
        return
    say(out, "[up] starting the TensorFlow rendezvous stand-in (pods finish once peers run)")
    # Imported here: the process runs this module with -m, which must not find it imported.
    from tfjob_kit.cluster import rendezvous

    rendezvous_kubeconfig = identity_kubeconfig(name, kubectl, RENDEZVOUS, rendezvous.GRANTS)
    spawn(
        RENDEZVOUS,
        name,
        [
            sys.executable,
            "-m",
            "tfjob_kit.cluster.rendezvous",
            f"--kubeconfig={rendezvous_kubeconfig}",
        ],
    )
