"""The local cluster exposes nothing beyond loopback and keeps its state to itself.

Every socket any of the cluster's processes listens on is bound to 127.0.0.1; its directory,
credentials, tokens and webhook certificates are the user's alone; the local processes'
tokens are short-lived and renewed by ``up``; and two clusters with the operator and Volcano
run side by side, each with its own webhook certificate.
"""

from __future__ import annotations

import base64
import http.client
import io
import json
import ssl
import stat
from pathlib import Path

import yaml

from tfjob_kit.cluster import local
from tfjob_kit.cluster.nodes import NodePlan

from ._cluster import Cluster
from ._sockets import descendants, listening_sockets, socket_inodes
from .conftest import session_name

LOOPBACK = {"127.0.0.1", "::1"}


def _listeners(name: str) -> dict[str, list[tuple[str, int]]]:
    """process name -> the (address, port) pairs it listens on."""
    sockets = listening_sockets()
    out: dict[str, list[tuple[str, int]]] = {}
    for pname, proc in local.status(name)["processes"].items():
        for pid in descendants({proc["pid"]}):
            for inode in socket_inodes(pid):
                if inode in sockets:
                    out.setdefault(pname, []).append(sockets[inode])
    return out


def test_every_listener_is_on_loopback(cluster: Cluster) -> None:
    assert cluster.name, "needs the session's own local cluster"
    listeners = _listeners(cluster.name)
    exposed = {p: [a for a in addrs if a[0] not in LOOPBACK] for p, addrs in listeners.items()}
    assert not any(exposed.values()), f"listening beyond loopback: {exposed}"
    # Not vacuous: etcd (client and peer), the API server, controller-manager, scheduler,
    # kwok, both Volcano processes and the operator (metrics, probes, webhook) all listen.
    names = " ".join(listeners)
    for component in (
        "etcd",
        "apiserver",
        "controller",
        "scheduler",
        "kwok",
        "vc-scheduler",
        "vc-controller-manager",
        "training-operator",
    ):
        assert component in names, f"no listener found for {component}: {listeners}"
    state = json.loads((local.cluster_dir(cluster.name) / "tfjob-kit" / "state.json").read_text())
    webhook = ("127.0.0.1", state["ports"]["operator_webhook"])
    assert webhook in listeners["training-operator"]


def _etcd_answers(port: int, context: ssl.SSLContext | None) -> bool:
    """True when etcd at 127.0.0.1:port answers GET /version (over TLS with context)."""
    conn: http.client.HTTPConnection = (
        http.client.HTTPSConnection("127.0.0.1", port, timeout=5, context=context)
        if context
        else http.client.HTTPConnection("127.0.0.1", port, timeout=5)
    )
    try:
        conn.request("GET", "/version")
        response = conn.getresponse()
        return response.status == 200 and b"etcdserver" in response.read()
    except (OSError, http.client.HTTPException):
        return False
    finally:
        conn.close()


def test_etcd_admits_only_the_clusters_own_certificates(cluster: Cluster) -> None:
    assert cluster.name
    ports = sorted({port for _, port in _listeners(cluster.name)["etcd"]})
    assert len(ports) == 2, ports  # client and peer
    pki = local.cluster_dir(cluster.name) / "pki"
    anonymous = ssl.create_default_context(cafile=str(pki / "ca.crt"))
    admitted = ssl.create_default_context(cafile=str(pki / "ca.crt"))
    admitted.load_cert_chain(str(pki / "admin.crt"), str(pki / "admin.key"))
    for port in ports:
        assert not _etcd_answers(port, None), f"etcd answers plain HTTP on {port}"
        assert not _etcd_answers(port, anonymous), f"etcd answers without a client cert on {port}"
    assert any(_etcd_answers(port, admitted) for port in ports), "etcd is not serving TLS"


def test_state_is_private(cluster: Cluster) -> None:
    assert cluster.name
    root = local.cluster_dir(cluster.name)
    assert stat.S_IMODE(root.stat().st_mode) == 0o700
    assert stat.S_IMODE(root.parent.stat().st_mode) == 0o700
    # No directory lets anyone else in (so nothing below it is reachable: kubectl chmods its
    # discovery cache 0660 whatever the umask), and no credential is readable by anyone else.
    open_dirs = [
        str(p.relative_to(root))
        for p in root.rglob("*")
        if p.is_dir() and not p.is_symlink() and stat.S_IMODE(p.stat().st_mode) & 0o077
    ]
    assert not open_dirs, f"directories others may enter: {open_dirs}"
    credentials = [
        root / "kubeconfig.yaml",
        *root.glob("pki/*"),
        *root.glob("tfjob-kit/*.token"),
        *root.glob("tfjob-kit/*.kubeconfig"),
        *root.glob("tfjob-kit/webhook-certs/*"),
        *root.glob("logs/*"),
    ]
    assert len(credentials) > 15
    loose = [
        f"{p.relative_to(root)} {oct(stat.S_IMODE(p.stat().st_mode))}"
        for p in credentials
        if stat.S_IMODE(p.stat().st_mode) & 0o077
    ]
    assert not loose, f"readable by others: {loose}"
    certs = local.cluster_dir(cluster.name) / "tfjob-kit" / "webhook-certs"
    assert (certs / "tls.key").is_file(), "the operator's certificate lives in the cluster"
    assert not Path("/tmp/k8s-webhook-server").exists()


def _token_lifetime(path: Path) -> float:
    payload = path.read_text().split(".")[1]
    claims = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
    return float(claims["exp"] - claims["iat"])


def test_process_tokens_are_short_lived_and_renewed_by_up(cluster: Cluster) -> None:
    assert cluster.name
    state = local.cluster_dir(cluster.name) / "tfjob-kit"
    tokens = sorted(state.glob("*.token"))
    assert len(tokens) == 5, tokens  # operator, three Volcano processes, rendezvous
    for token in tokens:
        assert _token_lifetime(token) <= 24 * 3600 + 60, token.name
        kubeconfig = yaml.safe_load(token.with_suffix(".kubeconfig").read_text())
        assert kubeconfig["users"][0]["user"] == {"tokenFile": str(token)}
    before = {t.name: t.read_text() for t in tokens}
    log = io.StringIO()
    local.up(local.UpOptions(name=cluster.name, tfjob_run_seconds=3.0), out=log)
    assert "renewing their tokens" in log.getvalue()
    assert all(t.read_text() != before[t.name] for t in tokens)
    assert all(p["alive"] for p in local.status(cluster.name)["processes"].values())


BAD_TFJOB = """apiVersion: kubeflow.org/v1
kind: TFJob
metadata: {name: no-tf-container, namespace: default}
spec:
  tfReplicaSpecs:
    Worker:
      replicas: 1
      template:
        spec:
          containers: [{name: main, image: tensorflow/tensorflow:2.15.0}]
"""


def test_two_clusters_with_addons_side_by_side(cluster: Cluster) -> None:
    """A second cluster with the operator and Volcano starts while the session's runs; each
    operator serves its own webhook with its own certificate."""
    assert cluster.name
    name = session_name("second")
    try:
        kubeconfig = local.up(
            local.UpOptions(name=name, nodes=NodePlan(cpu_nodes=1, gpu_nodes=1)), out=io.StringIO()
        )
        second = Cluster(kubeconfig, name)
        for view in (cluster, second):
            proc = view.kubectl(
                "create", "--dry-run=server", "-f", "-", stdin=BAD_TFJOB, check=False
            )
            assert proc.returncode != 0 and "denied the request" in proc.stderr, proc.stderr
        keys = {
            c: (local.cluster_dir(c) / "tfjob-kit" / "webhook-certs" / "tls.key").read_bytes()
            for c in (cluster.name, name)
        }
        assert keys[cluster.name] != keys[name]
        assert all(p["alive"] for p in local.status(cluster.name)["processes"].values())
    finally:
        local.down(name, out=io.StringIO())
    assert not local.cluster_dir(name).exists()
