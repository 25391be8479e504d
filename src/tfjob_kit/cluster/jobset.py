"""The local JobSet controller (``tfjob-kit cluster up --jobset``): the real controller, built
from the Go module pinned in versions.toml ([jobset]), as a local process, with its webhooks.

Its objects are the chart's (``charts/jobset``, rendered in ``LOCAL_NAMESPACE``): the CRD, the
Configuration, the Service and both webhook configurations, with only what a local process needs
changed. The Configuration's webhook server listens on a loopback port and reads its certificate
from the cluster's private directory; the controller's own certificate rotator is off, since it
writes to a fixed, machine-wide directory: ``up`` gives it a CA of the cluster's own and a
certificate for the chart's Service (``certs.serving``), and puts that CA in the webhook
configurations. The Service becomes an ExternalName for ``localhost`` (the API server checks the
certificate against ``<service>.<namespace>.svc``), each webhook calls the local port, and the
chart's labels are dropped. Leader election is off (one process). The process runs as the chart's
ServiceAccount would: a local identity bound to exactly the chart's rules.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, TextIO

import yaml

from tfjob_kit.cluster import build, certs, chart_rbac
from tfjob_kit.cluster.identity import IDENTITIES, LOCAL_NAMESPACE, identity_kubeconfig, renew_token
from tfjob_kit.cluster.kubectl import Kubectl
from tfjob_kit.cluster.local_webhooks import pointed_at_local
from tfjob_kit.cluster.paths import LOOPBACK, private_dir, state_dir, write_private
from tfjob_kit.cluster.ports import reserve
from tfjob_kit.cluster.procs import check_alive, http_ok, records, say, spawn, wait
from tfjob_kit.versions import Versions, charts_dir

PROCESS = "jobset-controller"
CRD = "jobsets.jobset.x-k8s.io"
PORTS = ("jobset_webhook", "jobset_health")
CONFIG_KINDS = ("MutatingWebhookConfiguration", "ValidatingWebhookConfiguration")


def _one(kind: str) -> dict[str, Any]:
    return chart_rbac.chart_object(PROCESS, kind, LOCAL_NAMESPACE)


def configuration(name: str, ports: dict[str, int]) -> dict[str, Any]:
    """The chart's Configuration, made local: loopback ports, the certificate from the cluster's
    directory (the rotator off), no leader election, no metrics."""
    (text,) = _one("ConfigMap")["data"].values()
    config: dict[str, Any] = json.loads(text)
    config["internalCertManagement"] = {"enable": False}
    config["webhook"] = {
        "port": ports["jobset_webhook"],
        "host": LOOPBACK,
        "certDir": str(cert_dir(name)),
    }
    config["health"] = {"healthProbeBindAddress": f"{LOOPBACK}:{ports['jobset_health']}"}
    config["leaderElection"] = {**config.get("leaderElection", {}), "leaderElect": False}
    config["metrics"] = {"bindAddress": "0"}
    return config


def cert_dir(name: str) -> Path:
    return state_dir(name) / "jobset-certs"


def webhook_objects(port: int, ca: bytes) -> list[dict[str, Any]]:
    """The chart's webhook Service and configurations, pointed at the local controller on
    ``port`` whose certificate ``ca`` signed."""
    return pointed_at_local("jobset", _one("Service"), [_one(k) for k in CONFIG_KINDS], port, ca)


def start_jobset(
    name: str, versions: Versions, kubectl: Kubectl, timeout: float, out: TextIO
) -> None:
    """Start the JobSet controller (or keep it when it runs), with the chart's CRD, identity,
    Configuration and webhooks; wait until it is ready."""
    if any(r.name == PROCESS and r.alive() for r in records(name)):
        renew_token(name, kubectl, IDENTITIES[PROCESS])
        return
    for record in records(name):
        if record.name == PROCESS:
            record.stop()
    binary = build.binary("jobset", "jobset", versions)
    say(out, f"[up] starting JobSet {versions.jobset} (its CRD, webhooks and identity)")
    kubectl.apply((charts_dir() / "jobset" / "crds" / "jobset-crds.yaml").read_text("utf-8"))
    wait("the JobSet CRD to be established", lambda: kubectl.crds_established([CRD]), 60)
    ports = reserve(name, PORTS)
    service = _one("Service")["metadata"]["name"]
    serving = certs.serving(f"{service}.{LOCAL_NAMESPACE}.svc", "jobset")
    folder = private_dir(cert_dir(name))
    write_private(folder / "tls.crt", serving.cert)
    write_private(folder / "tls.key", serving.key)
    config = write_private(
        state_dir(name) / "jobset-config.yaml",
        yaml.safe_dump(configuration(name, ports), sort_keys=False),
    )
    kubeconfig = identity_kubeconfig(name, kubectl, PROCESS, chart_rbac.grants(PROCESS))
    kubectl.apply(webhook_objects(ports["jobset_webhook"], serving.ca))
    spawn(PROCESS, name, [str(binary), f"--kubeconfig={kubeconfig}", f"--config={config}"])

    def ready() -> bool:
        check_alive(name, (PROCESS,))
        return http_ok(f"http://{LOOPBACK}:{ports['jobset_health']}/readyz")

    wait("the JobSet controller to be ready", ready, timeout)
