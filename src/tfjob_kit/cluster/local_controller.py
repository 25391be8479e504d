"""A controller of one of our charts run on the local cluster as a host process, with its CRDs,
webhooks and identity taken from the chart (JobSet, Kubeflow Trainer, Kueue).

The chart's objects are rendered in ``LOCAL_NAMESPACE`` and only what a local process needs is
changed: the controller's Configuration listens on loopback ports and reads a certificate from
the cluster's private directory (the controller's own certificate rotator is off: it writes to a
fixed, machine-wide directory), ``up`` gives it a certificate for the chart's Service from a CA of
the cluster's own (``certs.serving``) and puts that CA in the webhook configurations, which call
the local port (``local_webhooks.pointed_at_local``), as do its CRDs' conversion webhooks (Kueue's).
Leader election is off (one process). The process runs as the chart's ServiceAccount would: a
local identity bound to exactly the chart's rules.
"""

from __future__ import annotations

import base64
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

import yaml

from tfjob_kit.cluster import build, certs, chart_rbac
from tfjob_kit.cluster.identity import IDENTITIES, LOCAL_NAMESPACE, identity_kubeconfig, renew_token
from tfjob_kit.cluster.kubectl import Kubectl
from tfjob_kit.cluster.local_webhooks import conversions_pointed_at_local, pointed_at_local
from tfjob_kit.cluster.paths import LOOPBACK, private_dir, state_dir, write_private
from tfjob_kit.cluster.ports import reserve
from tfjob_kit.cluster.procs import check_alive, http_ok, records, say, spawn, wait
from tfjob_kit.versions import Versions, charts_dir

CONFIG_KINDS = ("MutatingWebhookConfiguration", "ValidatingWebhookConfiguration")


def _no_environment(_cluster: str) -> dict[str, str] | None:
    return None


@dataclass(frozen=True)
class LocalController:
    """What differs between the controllers: names, and how each reads its settings."""

    process: str  # the container's name in the chart, and the local identity's key
    chart: str  # charts/<chart>; also the component build.binary builds
    label: str  # how `up` names it
    crds: tuple[str, ...]  # the CRDs of charts/<chart>/crds/<chart>-crds.yaml
    # The chart's Configuration made local: (cluster name, ports by key) -> Configuration.
    configure: Callable[[str, dict[str, int]], dict[str, Any]]
    # Where the process reads its serving certificate (tls.crt, tls.key), per cluster.
    cert_dir: Callable[[str], Path]
    # Extra environment of the process, per cluster (None: the caller's).
    environment: Callable[[str], dict[str, str] | None] = field(default=_no_environment)
    # The controller's own certificate rotator writes its certificate into cert_dir (which its
    # Configuration names) and the chart's Secret, and injects the CA (Kueue's): `up` gives it
    # the empty Secret and no certificate.
    rotates_certificate: bool = False

    @property
    def webhook_port(self) -> str:
        return f"{self.chart}_webhook"

    @property
    def health_port(self) -> str:
        return f"{self.chart}_health"

    def chart_configuration(self) -> dict[str, Any]:
        """The chart's Configuration (the ConfigMap's one file, YAML or JSON)."""
        (text,) = self.one("ConfigMap")["data"].values()
        config: dict[str, Any] = yaml.safe_load(text)
        return config

    def local_configuration(
        self, ports: dict[str, int], cert_dir: Path | None = None
    ) -> dict[str, Any]:
        """The chart's Configuration with what every local controller changes (the fields
        controller-runtime's managers share): the webhook and health endpoints on loopback
        ports, the webhook certificate read from ``cert_dir`` when given, no leader election
        (one process), no metrics."""
        config = self.chart_configuration()
        webhook: dict[str, Any] = {"port": ports[self.webhook_port], "host": LOOPBACK}
        if cert_dir is not None:
            webhook["certDir"] = str(cert_dir)
        config["webhook"] = webhook
        config["health"] = {"healthProbeBindAddress": f"{LOOPBACK}:{ports[self.health_port]}"}
        config["leaderElection"] = {**config.get("leaderElection", {}), "leaderElect": False}
        config["metrics"] = {"bindAddress": "0"}
        return config

    def one(self, kind: str) -> dict[str, Any]:
        return chart_rbac.chart_object(self.process, kind, LOCAL_NAMESPACE)

    def certificate(self, name: str, service: str, kubectl: Kubectl) -> bytes | None:
        """The serving certificate of the Service's name from the cluster's CA in the process's
        certificate directory, and that CA; or, where the controller rotates its own, the empty
        Secret it fills (and None: it injects the CA itself)."""
        if self.rotates_certificate:
            private_dir(self.cert_dir(name))
            kubectl.apply([self.one("Secret")])
            return None
        serving = certs.serving(f"{service}.{LOCAL_NAMESPACE}.svc", self.chart)
        folder = private_dir(self.cert_dir(name))
        write_private(folder / "tls.crt", serving.cert)
        write_private(folder / "tls.key", serving.key)
        return serving.ca

    def project_secret(self, name: str, kubectl: Kubectl) -> None:
        """What the kubelet does for the chart's pod: the certificate the controller's rotator
        wrote into the chart's Secret, as files in its certificate directory (the rotator waits
        for them there before the controller starts)."""
        secret = self.one("Secret")["metadata"]["name"]
        data = (kubectl.get_json("-n", LOCAL_NAMESPACE, "secret", secret) or {}).get("data") or {}
        if {"tls.crt", "tls.key"} <= set(data):
            for key in ("tls.crt", "tls.key"):
                path = self.cert_dir(name) / key
                content = base64.b64decode(data[key])
                if not path.exists() or path.read_bytes() != content:
                    write_private(path, content)

    def crd_objects(self, service: str, port: int, ca: bytes | None) -> list[dict[str, Any]]:
        """The chart's CRDs, any conversion webhook pointed at the local controller (Kueue's)."""
        path = charts_dir() / self.chart / "crds" / f"{self.chart}-crds.yaml"
        with path.open(encoding="utf-8") as stream:
            crds = [d for d in yaml.load_all(stream, Loader=yaml.CSafeLoader) if d]
        return conversions_pointed_at_local(crds, service, port, ca)

    def webhook_objects(self, port: int, ca: bytes | None) -> list[dict[str, Any]]:
        """The chart's webhook Service and configurations, pointed at the local controller on
        ``port`` whose certificate ``ca`` signed."""
        configurations = [self.one(kind) for kind in CONFIG_KINDS]
        return pointed_at_local(self.chart, self.one("Service"), configurations, port, ca)

    def start(
        self,
        name: str,
        version: str,
        versions: Versions,
        kubectl: Kubectl,
        timeout: float,
        out: TextIO,
    ) -> None:
        """Start the controller (or keep it when it runs), with the chart's CRDs, identity,
        Configuration and webhooks; wait until it is ready."""
        if any(r.name == self.process and r.alive() for r in records(name)):
            renew_token(name, kubectl, IDENTITIES[self.process])
            return
        for record in records(name):
            if record.name == self.process:
                record.stop()
        binary = build.binary(self.chart, self.chart, versions)
        say(out, f"[up] starting {self.label} {version} (its CRDs, webhooks and identity)")
        ports = reserve(name, (self.webhook_port, self.health_port))
        service = self.one("Service")["metadata"]["name"]
        kubeconfig = identity_kubeconfig(
            name, kubectl, self.process, chart_rbac.grants(self.process)
        )
        ca = self.certificate(name, service, kubectl)
        kubectl.apply(self.crd_objects(service, ports[self.webhook_port], ca))
        wait(
            f"the {self.label} CRDs to be established",
            lambda: kubectl.crds_established(self.crds),
            60,
        )
        config = write_private(
            state_dir(name) / f"{self.chart}-config.yaml",
            yaml.safe_dump(self.configure(name, ports), sort_keys=False),
        )
        kubectl.apply(self.webhook_objects(ports[self.webhook_port], ca))
        argv = [str(binary), f"--kubeconfig={kubeconfig}", f"--config={config}"]
        spawn(self.process, name, argv, self.environment(name))

        def ready() -> bool:
            check_alive(name, (self.process,))
            if self.rotates_certificate:
                self.project_secret(name, kubectl)
            return http_ok(f"http://{LOOPBACK}:{ports[self.health_port]}/readyz")

        wait(f"the {self.label} controller to be ready", ready, timeout)
