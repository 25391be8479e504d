"""The embedded local cluster: ``tfjob-kit cluster up | down | status | kubeconfig``.

A kwokctl ``binary``-runtime cluster (real etcd, kube-apiserver, kube-controller-manager,
kube-scheduler; kwok simulates the nodes and the pods' lifecycle) plus, as "addons", the real
Kubeflow training-operator and Volcano scheduler/controller-manager running as local
processes. Everything of one cluster lives in ``<cache>/kwok/clusters/<name>/``: kwokctl's
files, ``kubeconfig.yaml`` (0600), ``logs/<component>.log`` and ``tfjob-kit/`` (our process
records and state). ``down`` stops every process and removes that directory.

The operator's validating webhook works locally: the operator process serves it on a free
loopback port, a Service ``tfjob-kit-local/training-operator`` of type ExternalName points the
API server at ``localhost``, and the operator's own cert rotator injects the CA bundle. Its
serving certificate lives in the cluster's own directory, so clusters never share it.

Everything listens on 127.0.0.1 only, and the cluster's directory and files are this user's
alone (0700 directories, 0600 files written with ``O_EXCL|O_NOFOLLOW``).

No addon runs with admin credentials: each gets a ServiceAccount token bound to exactly the
rules the shipped chart grants that component (chart_rbac), so a rule missing from a chart
shows up here as it would in a real cluster.
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

import yaml

from tfjob_kit import crd as tfjob_crd
from tfjob_kit.cluster import build, chart_rbac
from tfjob_kit.cluster.nodes import NodePlan, node_manifests
from tfjob_kit.cluster.paths import (
    ClusterError,
    Versions,
    bin_root,
    kwok_workdir,
    load_versions,
    private_dir,
    repo_root,
    validate_cluster_name,
    write_private,
)

DEFAULT_NAME = "tfjob-kit"
# The local processes' own objects (identities, webhook Secret and Service) live in a namespace
# of their own, so that installing the charts (namespaces kubeflow, volcano-system) and tearing
# them down never collides with the local cluster's machinery.
LOCAL_NAMESPACE = "tfjob-kit-local"
OPERATOR_NAMESPACE = LOCAL_NAMESPACE
WEBHOOK_SECRET = "training-operator-webhook-cert"
WEBHOOK_SERVICE = "training-operator"
WEBHOOK_CONFIGURATION = "validator.training-operator.kubeflow.org"
# Every local process listens here and nowhere else.
LOOPBACK = "127.0.0.1"
# Service-account tokens of the local processes: short-lived, renewed by every `up` (the
# processes read them from a token file, which client-go re-reads).
TOKEN_DURATION = "24h"
# Whatever kwokctl and the local processes create is this user's only.
UMASK = 0o077
OPERATOR_IDENTITY = "tfjob-kit-local-training-operator"
VOLCANO_NAMESPACE = LOCAL_NAMESPACE
VOLCANO_IDENTITIES = {
    "vc-scheduler": ("tfjob-kit-local-vc-scheduler", "volcano-scheduler"),
    "vc-controller-manager": ("tfjob-kit-local-vc-controllers", "volcano-controllers"),
}
MARKER = ("kube-public", "tfjob-kit-local-cluster")
RENDEZVOUS_IDENTITY = "tfjob-kit-local-rendezvous"
ADDON_PROCESSES = ("vc-scheduler", "vc-controller-manager", "training-operator", "tf-rendezvous")
# What the local training-operator gangs its pods with: Volcano (PodGroups, all or nothing), or
# nothing (the operator's default: every pod goes to the default scheduler on its own).
GANG_SCHEDULERS = ("volcano", "none")


@dataclass
class UpOptions:
    name: str = DEFAULT_NAME
    nodes: NodePlan = field(default_factory=NodePlan)
    addons: bool = True
    webhook: bool = True
    tfjob_run_seconds: float = 5.0
    job_run_seconds: float = 2.0
    timeout: float = 300.0
    gang_scheduler: str = "volcano"


def default_name() -> str:
    """The cluster commands work on: ``$TFJOB_KIT_CLUSTER``, else ``tfjob-kit``."""
    return os.environ.get("TFJOB_KIT_CLUSTER") or DEFAULT_NAME


# ---- small helpers ------------------------------------------------------------------------
def _say(out: TextIO, message: str) -> None:
    print(message, file=out, flush=True)


def cluster_dir(name: str = DEFAULT_NAME) -> Path:
    return kwok_workdir() / "clusters" / validate_cluster_name(name)


def kubeconfig_path(name: str = DEFAULT_NAME) -> Path:
    return cluster_dir(name) / "kubeconfig.yaml"


def _state_dir(name: str) -> Path:
    return cluster_dir(name) / "tfjob-kit"


def _logs_dir(name: str) -> Path:
    return cluster_dir(name) / "logs"


def _cert_dir(name: str) -> Path:
    """The operator's webhook serving certificate (the kubelet would mount it in a pod)."""
    return _state_dir(name) / "webhook-certs"


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _wait(what: str, check: Callable[[], bool], timeout: float, interval: float = 0.5) -> None:
    deadline = time.monotonic() + timeout
    while True:
        if check():
            return
        if time.monotonic() > deadline:
            raise ClusterError(f"timed out after {timeout:.0f}s waiting for {what}")
        time.sleep(interval)


def _http_ok(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=2) as resp:
            return bool(resp.status == 200)
    except (urllib.error.URLError, OSError):
        return False


class Kubectl:
    """Thin runner for the cluster-matched kubectl against one kubeconfig."""

    def __init__(self, kubeconfig: Path, binary: str | None = None) -> None:
        self.kubeconfig = kubeconfig
        self.binary = binary or build.kubectl_path()

    def run(
        self, *args: str, stdin: str | None = None, check: bool = True, timeout: float = 120
    ) -> subprocess.CompletedProcess[str]:
        # Discovery/HTTP caches go next to the kubeconfig (removed by `down`), not ~/.kube.
        cache = self.kubeconfig.parent / "kubectl-cache"
        cmd = [self.binary, "--kubeconfig", str(self.kubeconfig), "--cache-dir", str(cache), *args]
        proc = subprocess.run(
            cmd,
            input=stdin,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
            umask=UMASK,
        )
        if check and proc.returncode != 0:
            raise ClusterError(f"`kubectl {' '.join(args)}` failed: {proc.stderr.strip()}")
        return proc

    def apply(self, docs: Sequence[dict[str, Any]] | str, *extra: str) -> None:
        text = docs if isinstance(docs, str) else yaml.safe_dump_all(docs, sort_keys=False)
        self.run(
            "apply",
            "--server-side",
            "--force-conflicts",
            "--field-manager=tfjob-kit-cluster",
            "-f",
            "-",
            *extra,
            stdin=text,
        )

    def get_json(self, *args: str) -> dict[str, Any] | None:
        proc = self.run("get", *args, "-o", "json", check=False)
        if proc.returncode != 0:
            return None
        data: dict[str, Any] = json.loads(proc.stdout)
        return data

    def ready(self) -> bool:
        try:
            return self.run("get", "--raw", "/readyz", check=False, timeout=10).returncode == 0
        except subprocess.TimeoutExpired:
            return False


# ---- process records ----------------------------------------------------------------------
def _proc_start_time(pid: int) -> str | None:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text(encoding="utf-8")
    except OSError:
        return None
    fields = stat[stat.rindex(")") + 2 :].split()
    if fields[0] == "Z":  # zombie: dead for our purposes
        return None
    return fields[19]


def _reap(pid: int) -> None:
    with contextlib.suppress(ChildProcessError, OSError):
        os.waitpid(pid, os.WNOHANG)


@dataclass
class ProcRecord:
    name: str
    pid: int
    start: str
    argv: list[str]

    def alive(self) -> bool:
        _reap(self.pid)
        return _proc_start_time(self.pid) == self.start

    def stop(self, grace: float = 10.0) -> None:
        if not self.alive():
            return
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.pid, signal.SIGTERM)
        deadline = time.monotonic() + grace
        while self.alive() and time.monotonic() < deadline:
            time.sleep(0.1)
        if self.alive():
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.pid, signal.SIGKILL)
            _wait(f"{self.name} (pid {self.pid}) to exit", lambda: not self.alive(), 10)


def _records(name: str) -> list[ProcRecord]:
    out: list[ProcRecord] = []
    procs = _state_dir(name) / "procs"
    for path in sorted(procs.glob("*.json")) if procs.is_dir() else []:
        with contextlib.suppress(OSError, ValueError, KeyError, TypeError):
            data = json.loads(path.read_text(encoding="utf-8"))
            out.append(ProcRecord(data["name"], int(data["pid"]), data["start"], data["argv"]))
    return out


def _spawn(
    name: str, cluster: str, argv: list[str], env: dict[str, str] | None = None
) -> ProcRecord:
    logs = private_dir(_logs_dir(cluster))
    procs = private_dir(_state_dir(cluster) / "procs")
    fd = os.open(
        logs / f"{name}.log", os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_NOFOLLOW, 0o600
    )
    with os.fdopen(fd, "ab") as log:
        proc = subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            cwd=_state_dir(cluster),
            env=env,
            start_new_session=True,
            umask=UMASK,
        )
    start = None
    for _ in range(50):
        start = _proc_start_time(proc.pid)
        if start:
            break
        time.sleep(0.02)
    if start is None:
        raise ClusterError(f"{name} exited immediately; see {logs / f'{name}.log'}")
    record = ProcRecord(name, proc.pid, start, argv)
    write_private(procs / f"{name}.json", json.dumps(record.__dict__))
    return record


def _kwok_pids(name: str) -> list[int]:
    pids = []
    for path in sorted((cluster_dir(name) / "pids").glob("*.pid")):
        with contextlib.suppress(OSError, ValueError):
            pids.append(int(path.read_text().strip()))
    return pids


def _rss_kib(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text(encoding="utf-8").splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    except (OSError, ValueError):
        pass
    return 0


# ---- state --------------------------------------------------------------------------------
def _save_state(name: str, state: dict[str, Any]) -> None:
    write_private(_state_dir(name) / "state.json", json.dumps(state, indent=2) + "\n")


def _load_state(name: str) -> dict[str, Any]:
    try:
        data: dict[str, Any] = json.loads((_state_dir(name) / "state.json").read_text("utf-8"))
        return data
    except (OSError, json.JSONDecodeError):
        return {}


# ---- kwokctl ------------------------------------------------------------------------------
def _kwok_env(name: str) -> dict[str, str]:
    env = dict(os.environ)
    env["KWOK_WORKDIR"] = str(kwok_workdir())
    # kwokctl (and the components it starts) write client caches under $HOME/.kube: keep
    # them inside the cluster's directory so `down` removes them.
    env["HOME"] = str(cluster_dir(name) / "home")
    return env


def _kwokctl(
    versions: Versions,
    name: str,
    *args: str,
    out: TextIO,
    check: bool = True,
    timeout: float = 600.0,
) -> int:
    """Run kwokctl with its output in a temporary file (shown only on failure).

    A file rather than a pipe: nothing kwokctl leaves running can keep us waiting for EOF.
    """
    kwokctl = build.binary("kwokctl", "kwok", versions)
    with tempfile.TemporaryFile(mode="w+", prefix="tfjob-kit-kwokctl-") as log:
        try:
            rc = subprocess.run(
                [str(kwokctl), *args],
                env=_kwok_env(name),
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                timeout=timeout,
                check=False,
                umask=UMASK,
            ).returncode
        except subprocess.TimeoutExpired:
            rc = -1
        if check and rc != 0:
            log.seek(0)
            tail = "\n".join(log.read().splitlines()[-30:])
            what = "timed out" if rc == -1 else f"failed (exit {rc})"
            raise ClusterError(f"`kwokctl {' '.join(args)}` {what}:\n{tail}")
    return rc


def _etcd_tls_patches(pki: Path, client_port: int, peer_port: int) -> list[dict[str, Any]]:
    """etcd serves clients and its peer port over TLS and admits only certificates of the
    cluster's own CA; the API server presents kwokctl's admin certificate to it."""

    def args(override: bool, **flags: str) -> list[dict[str, Any]]:
        return [
            {"key": k.replace("_", "-"), "value": v, "override": override} for k, v in flags.items()
        ]

    client = f"https://{LOOPBACK}:{client_port}"
    peer = f"https://{LOOPBACK}:{peer_port}"
    ca, cert, key = str(pki / "ca.crt"), str(pki / "admin.crt"), str(pki / "admin.key")
    etcd = args(
        True,
        listen_client_urls=client,
        advertise_client_urls=client,
        listen_peer_urls=peer,
        initial_advertise_peer_urls=peer,
        initial_cluster=f"node0={peer}",
    )
    etcd += args(
        False,
        cert_file=cert,
        key_file=key,
        trusted_ca_file=ca,
        client_cert_auth="true",
        peer_cert_file=cert,
        peer_key_file=key,
        peer_trusted_ca_file=ca,
        peer_client_cert_auth="true",
    )
    apiserver = args(True, etcd_servers=client)
    apiserver += args(False, etcd_cafile=ca, etcd_certfile=cert, etcd_keyfile=key)
    return [{"name": "etcd", "extraArgs": etcd}, {"name": "kube-apiserver", "extraArgs": apiserver}]


def kwokctl_config(
    opts: UpOptions, root: Path, versions: Versions, etcd_ports: tuple[int, int] = (0, 0)
) -> str:
    """kwokctl's configuration: the pod lifecycle stages, loopback only, and etcd over mutual
    TLS on ``etcd_ports`` (client, peer; chosen by ``up``)."""
    stages = (
        (root / "cluster" / "kwok" / "pod-stages.yaml")
        .read_text("utf-8")
        .replace("@TFJOB_RUN_MS@", str(int(opts.tfjob_run_seconds * 1000)))
        .replace("@JOB_RUN_MS@", str(int(opts.job_run_seconds * 1000)))
    )
    client_port, peer_port = etcd_ports
    header = {
        "apiVersion": "config.kwok.x-k8s.io/v1alpha1",
        "kind": "KwokctlConfiguration",
        "options": {
            # Selects the flags kwokctl passes to the components; the binaries are ours.
            "kubeVersion": versions.kubernetes,
            # Fail fast on bad input rather than silently retrying for minutes.
            "kubeAdmission": True,
            "kubeAuthorization": True,
            # etcd, the API server, controller-manager, scheduler and kwok: loopback only
            # (kwokctl's default is every interface).
            "bindAddress": LOOPBACK,
            "etcdPort": client_port,
            "etcdPeerPort": peer_port,
        },
        "componentsPatches": _etcd_tls_patches(
            cluster_dir(opts.name) / "pki", client_port, peer_port
        ),
    }
    return "---\n" + yaml.safe_dump(header, sort_keys=False) + stages


def _create_cluster(opts: UpOptions, versions: Versions, root: Path, out: TextIO) -> None:
    kube = build.components(versions)["kube"]
    kube_dir = bin_root() / kube.dirname
    private_dir(cluster_dir(opts.name).parent)
    fd, temp = tempfile.mkstemp(prefix="tfjob-kit-kwokctl-", suffix=".yaml")
    os.close(fd)  # mkstemp: a new 0600 file of our own
    config = Path(temp)
    try:
        etcd_ports = (_free_port(), _free_port())
        config.write_text(kwokctl_config(opts, root, versions, etcd_ports), encoding="utf-8")
        _kwokctl(
            versions,
            opts.name,
            "create",
            "cluster",
            "--name",
            opts.name,
            "--runtime",
            "binary",
            "--kube-apiserver-binary",
            str(kube_dir / "kube-apiserver"),
            "--kube-controller-manager-binary",
            str(kube_dir / "kube-controller-manager"),
            "--kube-scheduler-binary",
            str(kube_dir / "kube-scheduler"),
            "--kwok-controller-binary",
            str(build.binary("kwok", "kwok", versions)),
            "--etcd-binary",
            str(build.binary("etcd", "etcd", versions)),
            "--config",
            str(config),
            "--kubeconfig",
            "",  # never touch ~/.kube/config
            "--wait",
            f"{int(opts.timeout)}s",
            out=out,
            timeout=opts.timeout + 60,
        )
    finally:
        config.unlink(missing_ok=True)


# ---- addons -------------------------------------------------------------------------------
def _webhook_manifests(port: int) -> list[dict[str, Any]]:
    return [
        {
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": {"name": WEBHOOK_SERVICE, "namespace": OPERATOR_NAMESPACE},
            # The API server resolves ExternalName services to <externalName>:<port>, and
            # verifies the serving cert against training-operator.kubeflow.svc (the name the
            # operator's rotator puts in the cert): this reaches the local operator process.
            "spec": {"type": "ExternalName", "externalName": "localhost"},
        },
        {
            "apiVersion": "admissionregistration.k8s.io/v1",
            "kind": "ValidatingWebhookConfiguration",
            "metadata": {"name": WEBHOOK_CONFIGURATION},
            "webhooks": [
                {
                    "name": "validator.tfjob.training-operator.kubeflow.org",
                    "admissionReviewVersions": ["v1"],
                    "sideEffects": "None",
                    "failurePolicy": "Fail",
                    "timeoutSeconds": 10,
                    "clientConfig": {
                        "service": {
                            "name": WEBHOOK_SERVICE,
                            "namespace": OPERATOR_NAMESPACE,
                            "path": "/validate-kubeflow-org-v1-tfjob",
                            "port": port,
                        }
                    },
                    "rules": [
                        {
                            "apiGroups": ["kubeflow.org"],
                            "apiVersions": ["v1"],
                            "operations": ["CREATE", "UPDATE"],
                            "resources": ["tfjobs"],
                        }
                    ],
                }
            ],
        },
    ]


def _identity_kubeconfig(
    name: str, kubectl: Kubectl, identity: str, namespace: str, rbac: chart_rbac.Grants
) -> Path:
    """A kubeconfig for one local process: a ServiceAccount bound to exactly the rules the
    component's chart grants it (cluster-wide, and in its own namespace).

    The addon processes never get the admin credentials, so a rule the chart lacks fails here
    as it would in a real cluster.
    """
    account = {"kind": "ServiceAccount", "name": identity, "namespace": namespace}
    objects: list[dict[str, Any]] = [
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}},
        {
            "apiVersion": "v1",
            "kind": "ServiceAccount",
            "metadata": {"name": identity, "namespace": namespace},
        },
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRole",
            "metadata": {"name": identity},
            "rules": rbac.cluster_rules,
        },
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRoleBinding",
            "metadata": {"name": identity},
            "roleRef": {
                "apiGroup": "rbac.authorization.k8s.io",
                "kind": "ClusterRole",
                "name": identity,
            },
            "subjects": [account],
        },
    ]
    if rbac.namespaced_rules:
        objects += [
            {
                "apiVersion": "rbac.authorization.k8s.io/v1",
                "kind": "Role",
                "metadata": {"name": identity, "namespace": namespace},
                "rules": rbac.namespaced_rules,
            },
            {
                "apiVersion": "rbac.authorization.k8s.io/v1",
                "kind": "RoleBinding",
                "metadata": {"name": identity, "namespace": namespace},
                "roleRef": {
                    "apiGroup": "rbac.authorization.k8s.io",
                    "kind": "Role",
                    "name": identity,
                },
                "subjects": [account],
            },
        ]
    kubectl.apply(objects)
    token_file = _renew_token(name, kubectl, identity, namespace)
    admin = yaml.safe_load(kubeconfig_path(name).read_text("utf-8"))
    config = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "local", "cluster": admin["clusters"][0]["cluster"]}],
        # A token file, not the token: client-go re-reads it, so `up` can renew a running
        # process's short-lived token.
        "users": [{"name": identity, "user": {"tokenFile": str(token_file)}}],
        "contexts": [
            {
                "name": identity,
                "context": {"cluster": "local", "user": identity, "namespace": namespace},
            }
        ],
        "current-context": identity,
    }
    return write_private(
        _state_dir(name) / f"{identity}.kubeconfig", yaml.safe_dump(config, sort_keys=False)
    )


def _renew_token(name: str, kubectl: Kubectl, identity: str, namespace: str) -> Path:
    """A fresh token (valid TOKEN_DURATION) for a local process's ServiceAccount, in the
    token file its kubeconfig names."""
    token = kubectl.run(
        "create", "token", identity, "-n", namespace, f"--duration={TOKEN_DURATION}"
    ).stdout.strip()
    return write_private(_state_dir(name) / f"{identity}.token", token)


def _identities() -> dict[str, str]:
    """Every local process's ServiceAccount, with its namespace."""
    return {
        OPERATOR_IDENTITY: OPERATOR_NAMESPACE,
        RENDEZVOUS_IDENTITY: LOCAL_NAMESPACE,
        **{identity: VOLCANO_NAMESPACE for identity, _ in VOLCANO_IDENTITIES.values()},
    }


def _marker(opts: UpOptions, versions: Versions, state: dict[str, Any]) -> dict[str, Any]:
    """A ConfigMap telling tools (roles, playbooks) they talk to the tfjob-kit local cluster.

    Its data says which components already run as local processes, so a bootstrap role can
    skip deploying them (their pods would only be simulated by kwok) and must not replace
    the webhook Service / ValidatingWebhookConfiguration that point at the local operator.
    """
    namespace, name = MARKER
    data = {
        "cluster": opts.name,
        "kubernetes": versions.kubernetes,
        "kwok": versions.kwok,
        "training-operator": versions.training_operator if opts.addons else "",
        "volcano": versions.volcano if opts.addons else "",
        "operator-namespace": OPERATOR_NAMESPACE if opts.addons else "",
        "webhook": "local" if opts.addons and opts.webhook else "off",
        "gang-scheduler": opts.gang_scheduler if opts.addons else "",
    }
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": namespace},
        "data": data,
    }


def _secret_certs(kubectl: Kubectl) -> dict[str, bytes] | None:
    secret = kubectl.get_json("secret", "-n", OPERATOR_NAMESPACE, WEBHOOK_SECRET)
    data = (secret or {}).get("data") or {}
    if not data.get("tls.crt") or not data.get("tls.key"):
        return None
    return {
        k: base64.b64decode(v) for k, v in data.items() if k in ("tls.crt", "tls.key", "ca.crt")
    }


def _start_addons(
    opts: UpOptions, versions: Versions, kubectl: Kubectl, state: dict[str, Any], out: TextIO
) -> None:
    name = opts.name
    volcano = build.components(versions)["volcano"]
    volcano_dir = bin_root() / volcano.dirname
    alive = {r.name for r in _records(name) if r.alive()}
    if set(ADDON_PROCESSES) <= alive:
        if state.get("gang_scheduler", "volcano") == opts.gang_scheduler:
            _say(out, "[up] addons already running; renewing their tokens")
            for identity, namespace in _identities().items():
                _renew_token(name, kubectl, identity, namespace)
        else:
            for record in _records(name):
                if record.name == "training-operator":
                    record.stop()
            _start_operator(opts, versions, kubectl, state, out)
        return
    for record in _records(name):
        if record.name in ADDON_PROCESSES:
            record.stop()

    _say(out, "[up] applying CRDs (Volcano, TFJob)")
    crds = [p.read_text("utf-8") for p in sorted((volcano_dir / "crds").glob("*.yaml"))]
    crds.append(yaml.safe_dump(tfjob_crd.crd(), sort_keys=False))  # generated from schemas/
    kubectl.apply("\n---\n".join(crds))
    crd_names = (
        "podgroups.scheduling.volcano.sh",
        "queues.scheduling.volcano.sh",
        "tfjobs.kubeflow.org",
    )
    _wait("the CRDs to be established", lambda: _crds_established(kubectl, crd_names), 60)

    ports = {
        k: _free_port()
        for k in (
            "vc_scheduler_metrics",
            "vc_scheduler_healthz",
            "vc_controller_healthz",
            "vc_controller_metrics",
            "operator_metrics",
            "operator_health",
            "operator_webhook",
        )
    }
    state["ports"] = ports
    logs = _logs_dir(name)
    _say(out, f"[up] starting Volcano scheduler + controller-manager (logs in {logs})")
    vc_kubeconfig = {
        process: _identity_kubeconfig(
            name,
            kubectl,
            identity,
            VOLCANO_NAMESPACE,
            chart_rbac.grants(process),
        )
        for process, (identity, _role) in VOLCANO_IDENTITIES.items()
    }
    _spawn(
        "vc-scheduler",
        name,
        [
            str(volcano_dir / "vc-scheduler"),
            f"--kubeconfig={vc_kubeconfig['vc-scheduler']}",
            "--leader-elect=false",
            "--enable-healthz=true",
            f"--healthz-address=127.0.0.1:{ports['vc_scheduler_healthz']}",
            f"--listen-address=127.0.0.1:{ports['vc_scheduler_metrics']}",
            f"--cache-dump-dir={_state_dir(name)}",
            f"--scheduler-conf={repo_root() / 'cluster' / 'volcano' / 'scheduler.yaml'}",
            "--schedule-period=500ms",
            "-v=3",
        ],
    )
    _spawn(
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

    _say(out, "[up] starting the TensorFlow rendezvous stand-in (pods finish once peers run)")
    # Imported here: the process runs this module with -m, which must not find it imported.
    from tfjob_kit.cluster import rendezvous

    rendezvous_kubeconfig = _identity_kubeconfig(
        name, kubectl, RENDEZVOUS_IDENTITY, LOCAL_NAMESPACE, rendezvous.GRANTS
    )
    _spawn(
        "tf-rendezvous",
        name,
        [
            sys.executable,
            "-m",
            "tfjob_kit.cluster.rendezvous",
            f"--kubeconfig={rendezvous_kubeconfig}",
        ],
    )
    _start_operator(opts, versions, kubectl, state, out)

    def volcano_ready() -> bool:
        _check_addons_alive(name)
        return (
            _http_ok(f"http://127.0.0.1:{ports['vc_scheduler_healthz']}/healthz")
            and kubectl.get_json("queues.scheduling.volcano.sh", "default") is not None
        )

    _wait("Volcano scheduler and its default queue", volcano_ready, opts.timeout)


def _start_operator(
    opts: UpOptions, versions: Versions, kubectl: Kubectl, state: dict[str, Any], out: TextIO
) -> None:
    name = opts.name
    ports = state["ports"]
    gang = opts.gang_scheduler
    _say(out, f"[up] starting training-operator (tfjob, gang scheduler {gang})")
    kubectl.apply(
        [
            {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": OPERATOR_NAMESPACE}},
            {
                "apiVersion": "v1",
                "kind": "Secret",
                "metadata": {"name": WEBHOOK_SECRET, "namespace": OPERATOR_NAMESPACE},
                "type": "Opaque",
            },
        ]
    )
    if opts.webhook:
        kubectl.apply(_webhook_manifests(ports["operator_webhook"]))
    else:
        kubectl.run(
            "delete", "validatingwebhookconfiguration", WEBHOOK_CONFIGURATION, "--ignore-not-found"
        )
    state["webhook"] = opts.webhook
    cert_dir = private_dir(_cert_dir(name))
    for stale in cert_dir.iterdir():
        stale.unlink()
    env = dict(os.environ)
    operator_kubeconfig = str(
        _identity_kubeconfig(
            name,
            kubectl,
            OPERATOR_IDENTITY,
            OPERATOR_NAMESPACE,
            chart_rbac.grants("training-operator"),
        )
    )
    env.update(
        {
            "TMPDIR": str(private_dir(_state_dir(name) / "tmp")),
            "MY_POD_NAMESPACE": OPERATOR_NAMESPACE,
            "KUBECONFIG": operator_kubeconfig,
        }
    )
    _spawn(
        "training-operator",
        name,
        [
            str(build.binary("training-operator", "training-operator", versions)),
            f"--kubeconfig={operator_kubeconfig}",
            "--enable-scheme=tfjob",
            *(["--gang-scheduler-name=volcano"] if gang == "volcano" else []),
            "--leader-elect=false",
            f"--metrics-bind-address=127.0.0.1:{ports['operator_metrics']}",
            f"--health-probe-bind-address=127.0.0.1:{ports['operator_health']}",
            f"--webhook-host={LOOPBACK}",
            f"--webhook-server-port={ports['operator_webhook']}",
            f"--cert-dir={cert_dir}",
            f"--webhook-service-name={WEBHOOK_SERVICE}",
            f"--webhook-secret-name={WEBHOOK_SECRET}",
        ],
        env=env,
    )

    # Play kubelet: the rotator fills the Secret, the operator waits for the files.
    certs: dict[str, bytes] = {}

    def secret_filled() -> bool:
        nonlocal certs
        _check_addons_alive(name)
        certs = _secret_certs(kubectl) or {}
        return bool(certs)

    _wait("the operator to fill its webhook cert Secret", secret_filled, opts.timeout)
    for fname, content in certs.items():
        write_private(cert_dir / fname, content)

    def operator_ready() -> bool:
        _check_addons_alive(name)
        return _http_ok(f"http://127.0.0.1:{ports['operator_health']}/readyz")

    _wait("training-operator readiness", operator_ready, opts.timeout)
    state["gang_scheduler"] = gang


def _crds_established(kubectl: Kubectl, names: Sequence[str]) -> bool:
    for crd in names:
        obj = kubectl.get_json("crd", crd) or {}
        conditions = obj.get("status", {}).get("conditions") or []
        if not any(
            c.get("type") == "Established" and c.get("status") == "True" for c in conditions
        ):
            return False
    return True


def _check_addons_alive(name: str) -> None:
    for record in _records(name):
        if record.name in ADDON_PROCESSES and not record.alive():
            log = _logs_dir(name) / f"{record.name}.log"
            tail = ""
            with contextlib.suppress(OSError):
                tail = "\n".join(log.read_text("utf-8", errors="replace").splitlines()[-20:])
            raise ClusterError(f"{record.name} exited; last lines of {log}:\n{tail}")


def _restrict(name: str) -> None:
    """Credentials are for this user only: kubeconfig and private keys 0600, dirs 0700."""
    directory = cluster_dir(name)
    directory.chmod(0o700)
    for path in (kubeconfig_path(name), directory / "kubeconfig", *directory.glob("pki/*.key")):
        with contextlib.suppress(FileNotFoundError):
            path.chmod(0o600)


# ---- public API ---------------------------------------------------------------------------
def is_running(name: str = DEFAULT_NAME) -> bool:
    kc = kubeconfig_path(name)
    if not kc.exists():
        return False
    try:
        return Kubectl(kc).ready()
    except ClusterError:
        return False


def up(opts: UpOptions | None = None, out: TextIO | None = None) -> Path:
    """Start (or reuse) the local cluster; returns the kubeconfig path."""
    opts = opts or UpOptions()
    out = out or sys.stderr
    root = repo_root()
    versions = load_versions(root)
    started = time.monotonic()
    needed = [*build.CORE, *(build.ADDONS if opts.addons else ())]
    build.build_all(needed, with_kubectl=None, out=out)

    kc = kubeconfig_path(opts.name)
    if cluster_dir(opts.name).exists() and not is_running(opts.name):
        _say(out, f"[up] cluster {opts.name!r} exists but is not healthy: recreating it")
        down(opts.name, out=out)
    if is_running(opts.name):
        _say(out, f"[up] reusing running cluster {opts.name!r}")
    else:
        _say(out, f"[up] creating kwok cluster {opts.name!r} (Kubernetes {versions.kubernetes})")
        _create_cluster(opts, versions, root, out)
    _restrict(opts.name)
    kubectl = Kubectl(kc)
    _wait("the API server", kubectl.ready, opts.timeout)

    state = _load_state(opts.name)
    state.update(
        {"name": opts.name, "kubernetes": versions.kubernetes, "nodes": opts.nodes.__dict__}
    )
    _say(
        out,
        f"[up] fake nodes: {opts.nodes.cpu_nodes} CPU, {opts.nodes.gpu_nodes} GPU x "
        f"{opts.nodes.gpus_per_node} nvidia.com/gpu",
    )
    kubectl.apply(node_manifests(opts.nodes))
    kubectl.run("wait", "--for=condition=Ready", "node", "-l", "type=kwok", "--timeout=120s")
    if opts.addons:
        _start_addons(opts, versions, kubectl, state, out)
    state["addons"] = opts.addons
    kubectl.apply([_marker(opts, versions, state)])
    _save_state(opts.name, state)
    _say(out, f"[up] ready in {time.monotonic() - started:.0f}s; export KUBECONFIG={kc}")
    return kc


def down(name: str = DEFAULT_NAME, out: TextIO | None = None) -> None:
    """Stop every process of the cluster and remove all of its files."""
    out = out or sys.stderr
    existed = cluster_dir(name).exists()
    directory = cluster_dir(name)
    for record in reversed(_records(name)):
        record.stop()
    if directory.exists():
        kwok_procs = [(pid, _proc_start_time(pid)) for pid in _kwok_pids(name)]
        try:
            versions = load_versions()
            _kwokctl(
                versions,
                name,
                "delete",
                "cluster",
                "--name",
                name,
                "--kubeconfig",
                "",
                out=out,
                check=False,
                timeout=120,
            )
        except ClusterError as exc:  # kwokctl not built: stop its processes ourselves
            _say(out, f"[down] {exc}")

        def kwok_gone() -> bool:
            for pid, _ in kwok_procs:
                _reap(pid)
            return all(start is None or _proc_start_time(pid) != start for pid, start in kwok_procs)

        with contextlib.suppress(ClusterError):
            _wait("kwokctl's processes to exit", kwok_gone, 10, interval=0.1)
        for pid, start in kwok_procs:
            if start and _proc_start_time(pid) == start:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(pid, signal.SIGKILL)
        _wait("kwokctl's processes to exit", kwok_gone, 10, interval=0.1)
        shutil.rmtree(directory, ignore_errors=True)
    for path in (directory.parent, kwok_workdir()):
        with contextlib.suppress(OSError):
            path.rmdir()  # only when empty
    _say(out, f"[down] cluster {name!r} removed" if existed else f"[down] no cluster {name!r}")


def _built_helm() -> str | None:
    """The helm `make cluster-build` built (the roles and playbooks use it locally)."""
    try:
        return str(build.helm_path())
    except ClusterError:
        return None


def status(name: str = DEFAULT_NAME) -> dict[str, Any]:
    directory = cluster_dir(name)
    info: dict[str, Any] = {
        "name": name,
        "exists": directory.exists(),
        "running": False,
        "kubeconfig": str(kubeconfig_path(name)),
        "dir": str(directory),
        "logs": str(_logs_dir(name)),
        "helm": _built_helm(),
    }
    if not directory.exists():
        return info
    info["running"] = is_running(name)
    state = _load_state(name)
    info["addons"] = state.get("addons")
    info["webhook"] = state.get("webhook")
    procs: dict[str, Any] = {}
    rss = 0
    for pid in _kwok_pids(name):
        kib = _rss_kib(pid)
        rss += kib
        cmd = ""
        with contextlib.suppress(OSError, IndexError):
            cmd = Path(Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")[0].decode()).name
        procs[cmd or f"pid-{pid}"] = {"pid": pid, "alive": kib > 0, "rss_mib": kib // 1024}
    for record in _records(name):
        alive = record.alive()
        kib = _rss_kib(record.pid) if alive else 0
        rss += kib
        procs[record.name] = {"pid": record.pid, "alive": alive, "rss_mib": kib // 1024}
    info["processes"] = procs
    info["rss_mib_total"] = rss // 1024
    if info["running"]:
        kubectl = Kubectl(kubeconfig_path(name))
        nodes = kubectl.get_json("nodes") or {}
        info["nodes"] = [
            {
                "name": n["metadata"]["name"],
                "gpus": n.get("status", {}).get("allocatable", {}).get("nvidia.com/gpu", "0"),
                "ready": any(
                    c.get("type") == "Ready" and c.get("status") == "True"
                    for c in n.get("status", {}).get("conditions", [])
                ),
            }
            for n in nodes.get("items", [])
        ]
    return info
