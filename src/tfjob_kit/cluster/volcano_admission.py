"""Volcano's admission webhooks, served by the real vc-webhook-manager as a local process.

The objects are the chart's (``charts/volcano`` with its admission enabled, rendered in
``LOCAL_NAMESPACE`` by ``chart_rbac.rendered``): the TLS Secret's certificate, the admission
configuration file, the Service and every Mutating/ValidatingWebhookConfiguration the chart
installs, with only what a local process needs changed (``webhook_objects``): the Service
becomes an ExternalName for ``localhost`` (the API server verifies the certificate against
``<service>.<namespace>.svc``, the name the chart's certificate carries), each webhook calls
the local port, and the chart's labels are dropped (the objects belong to the local cluster, not
to a Helm release). The webhook configurations keep the chart's names, rules, failurePolicy,
namespaceSelector and caBundle, so the API server asks the real server exactly what it asks
it in an install.

The process runs with the chart Deployment's arguments (``--enabled-admission``,
``--scheduler-name``, the log level), only the paths and ports made local. vc-webhook-manager
v1.14 creates no webhook configuration: it gets each enabled one by the chart's name and fills in
caBundle only when it differs from its CA, which it never does here (the configurations carry
the CA of the certificate it serves). Its certificate lives in the cluster's private directory.
``up`` on a running cluster registers the configurations again, so the local cluster keeps
serving the same admission as an install. They are not part of any Helm release: the volcano
role's uninstall (``teardown.yml``) leaves them while this server answers and removes them once
it is gone (it finds them by the Service namespace they call, ``LOCAL_NAMESPACE``); it never
deletes another install's configurations of the same names' prefix.
"""

from __future__ import annotations

import base64
import copy
import socket
from pathlib import Path
from typing import Any, TextIO

from tfjob_kit.cluster import chart_rbac
from tfjob_kit.cluster.identity import LOCAL_NAMESPACE, identity_kubeconfig
from tfjob_kit.cluster.kubectl import Kubectl
from tfjob_kit.cluster.local_webhooks import pointed_at_local
from tfjob_kit.cluster.paths import LOOPBACK, ClusterError, private_dir, state_dir, write_private
from tfjob_kit.cluster.procs import check_alive, say, spawn, wait

PROCESS = "vc-webhook-manager"
CONFIG_KINDS = ("MutatingWebhookConfiguration", "ValidatingWebhookConfiguration")
# The chart's container arguments that name in-pod paths and ports, replaced by local ones.
LOCAL_FLAGS = (
    "--tls-cert-file",
    "--tls-private-key-file",
    "--ca-cert-file",
    "--admission-conf",
    "--port",
    "--healthz-address",
)


def admission_dir(name: str) -> Path:
    """The webhook server's certificate and configuration file (a pod would mount them)."""
    return state_dir(name) / "volcano-admission"


def _chart() -> list[dict[str, Any]]:
    return chart_rbac.rendered(PROCESS, LOCAL_NAMESPACE)


def _one(kind: str) -> dict[str, Any]:
    """The chart's one admission object of ``kind``, a copy without labels or annotations."""
    return chart_rbac.chart_object(PROCESS, kind, LOCAL_NAMESPACE, component="admission")


def configurations() -> list[dict[str, Any]]:
    """The chart's webhook configurations, as it renders them (copies)."""
    return [copy.deepcopy(d) for d in _chart() if d["kind"] in CONFIG_KINDS]


def configuration_names() -> list[tuple[str, str]]:
    """(kind, name) of each webhook configuration the chart installs."""
    return [(d["kind"], d["metadata"]["name"]) for d in configurations()]


def webhook_objects(port: int, ca: bytes) -> list[dict[str, Any]]:
    """The chart's admission Service and webhook configurations, pointed at the local
    vc-webhook-manager listening on ``port`` whose certificate ``ca`` signed."""
    return pointed_at_local("volcano", _one("Service"), configurations(), port, ca)


def chart_args() -> list[str]:
    """The chart Deployment's arguments of vc-webhook-manager, less the in-pod paths/ports."""
    for doc in _chart():
        if doc["kind"] != "Deployment":
            continue
        for container in doc["spec"]["template"]["spec"]["containers"]:
            if container["name"] == PROCESS:
                return [
                    str(a) for a in container["args"] if str(a).split("=", 1)[0] not in LOCAL_FLAGS
                ]
    raise ClusterError(f"chart volcano: no Deployment runs a container named {PROCESS}")


def _listening(port: int) -> bool:
    try:
        with socket.create_connection((LOOPBACK, port), timeout=2):
            return True
    except OSError:
        return False


def register(kubectl: Kubectl, name: str, port: int) -> None:
    """(Re)register the chart's webhook configurations for the running local server."""
    ca = (admission_dir(name) / "ca.crt").read_bytes()
    kubectl.apply(webhook_objects(port, ca))


def start_admission(
    name: str, binary: Path, kubectl: Kubectl, ports: dict[str, int], timeout: float, out: TextIO
) -> None:
    """Start vc-webhook-manager with the chart's certificate and configuration, register the
    chart's webhook configurations pointed at it, and wait until it serves."""
    port, healthz = ports["vc_admission"], ports["vc_admission_healthz"]
    say(out, f"[up] starting Volcano's admission webhooks (vc-webhook-manager on port {port})")
    files = private_dir(admission_dir(name))
    secret = _one("Secret")
    for key in ("tls.crt", "tls.key", "ca.crt"):
        write_private(files / key, base64.b64decode(secret["data"][key]))
    config_map = _one("ConfigMap")
    ((conf_name, conf_text),) = config_map["data"].items()
    write_private(files / conf_name, conf_text)
    kubeconfig = identity_kubeconfig(name, kubectl, PROCESS, chart_rbac.grants(PROCESS))
    spawn(
        PROCESS,
        name,
        [
            str(binary),
            f"--kubeconfig={kubeconfig}",
            *chart_args(),
            f"--tls-cert-file={files / 'tls.crt'}",
            f"--tls-private-key-file={files / 'tls.key'}",
            f"--ca-cert-file={files / 'ca.crt'}",
            f"--admission-conf={files / conf_name}",
            f"--listen-address={LOOPBACK}",
            f"--port={port}",
            f"--healthz-address={LOOPBACK}:{healthz}",
        ],
    )
    register(kubectl, name, port)

    def serving() -> bool:
        check_alive(name, (PROCESS,))
        return _listening(port)

    wait("Volcano's admission webhooks (vc-webhook-manager) to serve", serving, timeout)
