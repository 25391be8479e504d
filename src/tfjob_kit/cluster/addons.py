"""The addons: the real Volcano scheduler and controller-manager, the training-operator
(``training_operator``) and the TensorFlow rendezvous stand-in (``rendezvous``), as local
processes of one cluster.

``start_addons`` applies the CRDs (Volcano's, and the TFJob CRD generated from ``schemas/``),
gives each process its own identity (``identity``), starts them on free loopback ports and
waits until they serve. On a cluster whose addons already run it only renews their tokens, or
restarts the operator when the gang scheduler asked for differs.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Any, TextIO

import yaml

from tfjob_kit import crd as tfjob_crd
from tfjob_kit.cluster import build, chart_rbac
from tfjob_kit.cluster.identity import ADDON_PROCESSES, identity_kubeconfig, renew_tokens
from tfjob_kit.cluster.kubectl import Kubectl
from tfjob_kit.cluster.options import UpOptions
from tfjob_kit.cluster.paths import Versions, bin_root, logs_dir, repo_root, state_dir
from tfjob_kit.cluster.procs import check_alive, free_port, http_ok, records, say, spawn, wait
from tfjob_kit.cluster.training_operator import start_operator

PORTS = (
    "vc_scheduler_metrics",
    "vc_scheduler_healthz",
    "vc_controller_healthz",
    "vc_controller_metrics",
    "operator_metrics",
    "operator_health",
    "operator_webhook",
)
CRDS = (
    "podgroups.scheduling.volcano.sh",
    "queues.scheduling.volcano.sh",
    "tfjobs.kubeflow.org",
)


def _crds_established(kubectl: Kubectl, names: Sequence[str]) -> bool:
    for crd in names:
        obj = kubectl.get_json("crd", crd) or {}
        conditions = obj.get("status", {}).get("conditions") or []
        if not any(
            c.get("type") == "Established" and c.get("status") == "True" for c in conditions
        ):
            return False
    return True


def start_addons(
    opts: UpOptions, versions: Versions, kubectl: Kubectl, state: dict[str, Any], out: TextIO
) -> None:
    """Start (or keep, or adjust) the cluster's addon processes; records the ports, the
    webhook and the gang scheduler in ``state``."""
    name = opts.name
    volcano = build.components(versions)["volcano"]
    volcano_dir = bin_root() / volcano.dirname
    alive = {r.name for r in records(name) if r.alive()}
    if set(ADDON_PROCESSES) <= alive:
        if state.get("gang_scheduler", "volcano") == opts.gang_scheduler:
            say(out, "[up] addons already running; renewing their tokens")
            renew_tokens(name, kubectl)
        else:
            for record in records(name):
                if record.name == "training-operator":
                    record.stop()
            start_operator(opts, versions, kubectl, state, out)
        return
    for record in records(name):
        if record.name in ADDON_PROCESSES:
            record.stop()

    say(out, "[up] applying CRDs (Volcano, TFJob)")
    crds = [p.read_text("utf-8") for p in sorted((volcano_dir / "crds").glob("*.yaml"))]
    crds.append(yaml.safe_dump(tfjob_crd.crd(), sort_keys=False))  # generated from schemas/
    kubectl.apply("\n---\n".join(crds))
    wait("the CRDs to be established", lambda: _crds_established(kubectl, CRDS), 60)

    ports = {k: free_port() for k in PORTS}
    state["ports"] = ports
    logs = logs_dir(name)
    say(out, f"[up] starting Volcano scheduler + controller-manager (logs in {logs})")
    vc_kubeconfig = {
        process: identity_kubeconfig(name, kubectl, process, chart_rbac.grants(process))
        for process in ("vc-scheduler", "vc-controller-manager")
    }
    spawn(
        "vc-scheduler",
        name,
        [
            str(volcano_dir / "vc-scheduler"),
            f"--kubeconfig={vc_kubeconfig['vc-scheduler']}",
            "--leader-elect=false",
            "--enable-healthz=true",
            f"--healthz-address=127.0.0.1:{ports['vc_scheduler_healthz']}",
            f"--listen-address=127.0.0.1:{ports['vc_scheduler_metrics']}",
            f"--cache-dump-dir={state_dir(name)}",
            f"--scheduler-conf={repo_root() / 'cluster' / 'volcano' / 'scheduler.yaml'}",
            "--schedule-period=500ms",
            "-v=3",
        ],
    )
    spawn(
        "vc-controller-manager",
        name,
        [
            str(volcano_dir / "vc-controller-manager"),
            f"--kubeconfig={vc_kubeconfig['vc-controller-manager']}",
            "--leader-elect=false",
            "--controllers=job-controller,pg-controller,queue-controller,gc-controller",
            "--enable-healthz=true",
            f"--healthz-address=127.0.0.1:{ports['vc_controller_healthz']}",
            f"--listen-address=127.0.0.1:{ports['vc_controller_metrics']}",
            "-v=2",
        ],
    )

    say(out, "[up] starting the TensorFlow rendezvous stand-in (pods finish once peers run)")
    # Imported here: the process runs this module with -m, which must not find it imported.
    from tfjob_kit.cluster import rendezvous

    rendezvous_kubeconfig = identity_kubeconfig(name, kubectl, "tf-rendezvous", rendezvous.GRANTS)
    spawn(
        "tf-rendezvous",
        name,
        [
            sys.executable,
            "-m",
            "tfjob_kit.cluster.rendezvous",
            f"--kubeconfig={rendezvous_kubeconfig}",
        ],
    )
    start_operator(opts, versions, kubectl, state, out)

    def volcano_ready() -> bool:
        check_alive(name, ADDON_PROCESSES)
        return (
            http_ok(f"http://127.0.0.1:{ports['vc_scheduler_healthz']}/healthz")
            and kubectl.get_json("queues.scheduling.volcano.sh", "default") is not None
        )

    wait("Volcano scheduler and its default queue", volcano_ready, opts.timeout)
