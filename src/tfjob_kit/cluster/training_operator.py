"""The local training-operator process and its validating webhook.

The operator serves its webhook on a free loopback port. Its objects are the chart's
(``charts/training-operator``, rendered in ``LOCAL_NAMESPACE`` by ``chart_rbac.rendered``):
the certificate Secret, the Service and the ValidatingWebhookConfiguration, with only what a
local process needs changed (``webhook_objects``): the Service becomes an ExternalName for
``localhost``, the webhook calls the local port, and the chart's labels are dropped (the objects
belong to the local cluster, not to a Helm release a teardown would look for). caBundle is
left out, as in the chart: the operator's own cert rotator injects it. Playing kubelet, ``up``
copies the certificate the rotator writes into the Secret to the cluster's own directory,
where the operator reads it, so clusters never share it.
"""

from __future__ import annotations

import base64
import os
from pathlib import Path
from typing import Any, TextIO

import yaml

from tfjob_kit.cluster import build, chart_rbac
from tfjob_kit.cluster.identity import ADDON_PROCESSES, LOCAL_NAMESPACE, identity_kubeconfig
from tfjob_kit.cluster.kubectl import Kubectl
from tfjob_kit.cluster.local_webhooks import pointed_at_local
from tfjob_kit.cluster.options import UpOptions
from tfjob_kit.cluster.paths import (
    LOOPBACK,
    ClusterError,
    cert_dir,
    private_dir,
    state_dir,
    write_private,
)
from tfjob_kit.cluster.procs import check_alive, http_ok, say, spawn, wait
from tfjob_kit.versions import Versions

OPERATOR_NAMESPACE = LOCAL_NAMESPACE
PROCESS = "training-operator"


def _chart_object(kind: str) -> dict[str, Any]:
    return chart_rbac.chart_object(PROCESS, kind, OPERATOR_NAMESPACE)


def webhook_secret() -> dict[str, Any]:
    """The Secret the operator's cert rotator fills (created empty, as the chart does)."""
    return _chart_object("Secret")


def webhook_objects(port: int) -> list[dict[str, Any]]:
    """The chart's webhook Service and ValidatingWebhookConfiguration, pointed at the local
    operator process listening on ``port`` (its own cert rotator injects the caBundle)."""
    service, config = _chart_object("Service"), _chart_object("ValidatingWebhookConfiguration")
    return pointed_at_local("training-operator", service, [config], port, None)


def _secret_certs(kubectl: Kubectl, secret: str) -> dict[str, bytes] | None:
    obj = kubectl.get_json("secret", "-n", OPERATOR_NAMESPACE, secret)
    data = (obj or {}).get("data") or {}
    if not data.get("tls.crt") or not data.get("tls.key"):
        return None
    return {
        k: base64.b64decode(v) for k, v in data.items() if k in ("tls.crt", "tls.key", "ca.crt")
    }


# Flags the upgrade-from release lacks (added in v1.9.0), by name: left out when it runs, as the
# chart leaves them out (its operatorVersion).
NEWER_FLAGS = ("kube-api-qps", "kube-api-burst")


def operator_component(version: str, versions: Versions) -> str:
    """The build component of the operator release ``version`` ("" is the pinned one); the
    local cluster runs the pinned release and the one upgrades start from (versions.toml)."""
    if version in ("", versions.training_operator):
        return "training-operator"
    if version == versions.training_operator_upgrade_from:
        return build.OPERATOR_UPGRADE_FROM
    raise ClusterError(
        f"the local cluster runs training-operator {versions.training_operator} or "
        f"{versions.training_operator_upgrade_from} (versions.toml), not {version!r}"
    )


def operator_version(opts: UpOptions, versions: Versions) -> str:
    """The release ``opts`` asks for (its operator_version, else the pinned one)."""
    operator_component(opts.operator_version, versions)
    return opts.operator_version or versions.training_operator


def operator_tuning(opts: UpOptions) -> dict[str, int]:
    """The operator's tuning flags ``opts`` asks for, by flag name (recorded in the cluster's
    state, so a later ``up`` that asks for others restarts the operator)."""
    return {
        "controller-threads": opts.operator_threads,
        "kube-api-qps": opts.operator_qps,
        "kube-api-burst": opts.operator_burst,
    }


def start_operator(
    opts: UpOptions, versions: Versions, kubectl: Kubectl, state: dict[str, Any], out: TextIO
) -> None:
    """Start the training-operator (its webhook on or off, as ``opts`` says) and wait until
    it is ready, tuned as ``opts`` says; the ports come from ``state["ports"]``."""
    name = opts.name
    ports = state["ports"]
    gang = opts.gang_scheduler
    tuning = operator_tuning(opts)
    version = operator_version(opts, versions)
    component = operator_component(version, versions)
    if component != "training-operator":
        build.build_all([component], with_kubectl=False, out=out)
    flags = {
        k: v for k, v in tuning.items() if component == "training-operator" or k not in NEWER_FLAGS
    }
    say(
        out,
        f"[up] starting training-operator {version} (tfjob, gang scheduler {gang}, "
        + ", ".join(f"--{flag}={value}" for flag, value in flags.items())
        + ")",
    )
    secret, service = _webhook(opts, kubectl, ports["operator_webhook"])
    state["webhook"] = opts.webhook
    certs_dir = private_dir(cert_dir(name))
    for stale in certs_dir.iterdir():
        stale.unlink()
    env = dict(os.environ)
    operator_kubeconfig = str(
        identity_kubeconfig(name, kubectl, PROCESS, chart_rbac.grants(PROCESS))
    )
    env.update(
        {
            "TMPDIR": str(private_dir(state_dir(name) / "tmp")),
            "MY_POD_NAMESPACE": OPERATOR_NAMESPACE,
            "KUBECONFIG": operator_kubeconfig,
        }
    )
    spawn(
        PROCESS,
        name,
        [
            str(build.binary("training-operator", component, versions)),
            f"--kubeconfig={operator_kubeconfig}",
            "--enable-scheme=tfjob",
            *(["--gang-scheduler-name=volcano"] if gang == "volcano" else []),
            "--leader-elect=false",
            f"--metrics-bind-address=127.0.0.1:{ports['operator_metrics']}",
            f"--health-probe-bind-address=127.0.0.1:{ports['operator_health']}",
            f"--webhook-host={LOOPBACK}",
            f"--webhook-server-port={ports['operator_webhook']}",
            f"--cert-dir={certs_dir}",
            f"--webhook-service-name={service['metadata']['name']}",
            f"--webhook-secret-name={secret['metadata']['name']}",
            *(f"--{flag}={value}" for flag, value in flags.items()),
        ],
        env=env,
    )
    _hand_over_certs(name, kubectl, secret["metadata"]["name"], certs_dir, opts.timeout)

    def operator_ready() -> bool:
        check_alive(name, ADDON_PROCESSES)
        return http_ok(f"http://127.0.0.1:{ports['operator_health']}/readyz")

    wait("training-operator readiness", operator_ready, opts.timeout)
    state["gang_scheduler"] = gang
    state["operator_tuning"] = tuning
    state["operator_version"] = version


# The upstream install's webhook configuration: on the local cluster the process's own
# registration (``webhook_objects``, the same name) stands in for it.
UPSTREAM_SKIPPED = ("ValidatingWebhookConfiguration",)


def _webhook(opts: UpOptions, kubectl: Kubectl, port: int) -> tuple[dict[str, Any], dict[str, Any]]:
    """The operator's namespace and webhook cert Secret applied, and its webhook registered
    (or its configuration deleted, with the webhook off); the Secret and the Service."""
    secret = webhook_secret()
    kubectl.apply(
        [
            {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": OPERATOR_NAMESPACE}},
            secret,
        ]
    )
    service, configuration = webhook_objects(port)
    if opts.webhook:
        kubectl.apply([service, configuration])
    else:
        kubectl.run(
            "delete",
            "validatingwebhookconfiguration",
            configuration["metadata"]["name"],
            "--ignore-not-found",
        )
    return secret, service


def _hand_over_certs(
    name: str, kubectl: Kubectl, secret_name: str, certs_dir: Path, timeout: float
) -> None:
    """Play kubelet: the operator's cert rotator fills the Secret, and the operator waits for
    the files a mounted Secret would give it."""
    certs: dict[str, bytes] = {}

    def secret_filled() -> bool:
        nonlocal certs
        check_alive(name, ADDON_PROCESSES)
        certs = _secret_certs(kubectl, secret_name) or {}
        return bool(certs)

    wait("the operator to fill its webhook cert Secret", secret_filled, timeout)
    for fname, content in certs.items():
        write_private(certs_dir / fname, content)


def install_upstream(name: str, kubectl: Kubectl, versions: Versions, out: TextIO) -> list[str]:
    """Install the upgrade-from release the way most clusters got it: upstream's standalone
    overlay (``kubectl apply --server-side -k manifests/overlays/standalone``, from its Go
    module download): its CRDs, namespace kubeflow, RBAC, Service and Deployment (kwok plays
    its pod). Run the local process at that release too (``up`` with its operator_version).
    Returns the kinds/names applied."""
    component = build.OPERATOR_UPGRADE_FROM
    build.build_all([component], with_kubectl=False, out=out)
    overlay = (
        build.binary(build.UPSTREAM_MANIFESTS, component, versions) / "overlays" / "standalone"
    )
    rendered = kubectl.run("kustomize", str(overlay)).stdout
    docs = [
        d
        for d in yaml.safe_load_all(rendered)
        if isinstance(d, dict) and d.get("kind") not in UPSTREAM_SKIPPED
    ]
    say(
        out,
        f"[upstream] applying training-operator {versions.training_operator_upgrade_from}'s "
        f"standalone manifests to {name!r} ({len(docs)} objects)",
    )
    kubectl.run(
        "apply",
        "--server-side",
        "--force-conflicts",
        "-f",
        "-",
        stdin=yaml.safe_dump_all(docs, sort_keys=False),
        timeout=300,
    )
    return [f"{d['kind']}/{d['metadata']['name']}" for d in docs]


def _flag_values(args: list[str]) -> dict[str, str]:
    return {
        a[2:].split("=", 1)[0]: a.split("=", 1)[1] for a in args if a.startswith("--") and "=" in a
    }


def deployment_asks(
    deployment: dict[str, Any], current: dict[str, int]
) -> tuple[str, dict[str, int]]:
    """The release (its app.kubernetes.io/version label) and the tuning (its container's flags;
    a flag it leaves out keeps ``current``'s value) a training-operator Deployment runs."""
    version = deployment["metadata"].get("labels", {}).get("app.kubernetes.io/version", "")
    containers = deployment["spec"]["template"]["spec"]["containers"]
    flags = _flag_values(list(containers[0].get("args") or []))
    tuning = {k: int(flags[k]) if k in flags else v for k, v in current.items()}
    return version, tuning
