"""A MultiKueue worker as the manager's Kueue reaches it: a self-contained kubeconfig (the
worker's server, its CA inline, a token of the worker's ServiceAccount, nothing read from a
file), kept in a Secret of the manager, and the MultiKueueCluster that names it.

Kueue refuses kubeconfigs with `tokenFile`, CA file paths, insecure TLS, basic auth, exec
plugins or auth providers (pkg/controller/admissionchecks/multikueue, validateKubeconfig), so
the token is a bound ServiceAccount token from the worker's TokenRequest API, written into the
kubeconfig. Such a token expires: each run renews it once less than half of its lifetime is
left, or when the worker's address or CA changed, and otherwise changes nothing.
"""

from __future__ import annotations

import base64
import binascii
import json
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import yaml

from tfjob_kit import timestamps
from tfjob_kit.installs.kueue import CREATED_BY
from tfjob_kit.kube.api_errors import KubeError
from tfjob_kit.kube.client import Client, core_path, resource_path
from tfjob_kit.kube.kinds import MULTIKUEUE_CLUSTER
from tfjob_kit.kube.transport import APPLY_PATCH, ApiError

SECRET_KEY = "kubeconfig"  # the key Kueue reads a Secret's kubeconfig from
FIELD_MANAGER = "tfjob-kit"
RENEW_FRACTION = 2  # renew once less than 1/RENEW_FRACTION of the lifetime is left


def secret_name(cluster: str) -> str:
    return f"tfjob-kit-multikueue-{cluster}"


def kubeconfig(cluster: str, server: str, ca_pem: bytes, token: str) -> str:
    """A kubeconfig Kueue accepts: one cluster with its CA inline, one user with a token."""
    return yaml.safe_dump(
        {
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [
                {
                    "name": cluster,
                    "cluster": {
                        "server": server,
                        "certificate-authority-data": base64.b64encode(ca_pem).decode(),
                    },
                }
            ],
            "users": [{"name": cluster, "user": {"token": token}}],
            "contexts": [{"name": cluster, "context": {"cluster": cluster, "user": cluster}}],
            "current-context": cluster,
        },
        sort_keys=False,
    )


@dataclass(frozen=True)
class Held:
    """What a manager's Secret holds for a worker."""

    server: str
    ca_pem: bytes
    expires: float | None  # the token's `exp` (seconds since the epoch), None when unreadable


def token_expiry(token: str) -> float | None:
    """The `exp` claim of a JWT (read, not verified: the worker's API server verifies it)."""
    parts = token.split(".")
    if len(parts) != 3:
        return None
    payload = parts[1] + "=" * (-len(parts[1]) % 4)
    try:
        claims = json.loads(base64.urlsafe_b64decode(payload))
    except (ValueError, binascii.Error):
        return None
    exp = claims.get("exp") if isinstance(claims, dict) else None
    return float(exp) if isinstance(exp, int | float) else None


def held(secret: dict[str, Any] | None) -> Held | None:
    """What the Secret's kubeconfig says, or None when it is not one this module wrote."""
    data = (secret or {}).get("data") or {}
    try:
        config = yaml.safe_load(base64.b64decode(data.get(SECRET_KEY, "")))
        cluster = config["clusters"][0]["cluster"]
        token = config["users"][0]["user"]["token"]
        return Held(
            server=cluster["server"],
            ca_pem=base64.b64decode(cluster["certificate-authority-data"]),
            expires=token_expiry(token),
        )
    except (ValueError, TypeError, KeyError, IndexError, binascii.Error, yaml.YAMLError):
        return None


def renewal_reason(
    current: Held | None, server: str, ca_pem: bytes, lifetime: int, now: float
) -> str:
    """Why the Secret must be written again ("" when it need not)."""
    if current is None:
        return "no kubeconfig yet"
    if current.server != server:
        return f"the worker's server changed ({current.server} -> {server})"
    if current.ca_pem != ca_pem:
        return "the worker's CA changed"
    if current.expires is None:
        return "its token's expiry cannot be read"
    left = current.expires - now
    if left < lifetime / RENEW_FRACTION:
        return "its token has expired" if left <= 0 else f"its token expires in {int(left)} s"
    return ""


def worker_address(worker: Client) -> tuple[str, bytes]:
    """The worker's server URL and CA certificate (PEM), as this connection reaches it."""
    settings = worker.transport.settings
    if not settings.verify:
        raise KubeError(
            f"{worker.host}: the connection does not verify TLS, and MultiKueue refuses a "
            "kubeconfig without the worker's CA",
            "worker",
        )
    ca_pem = settings.ca_pem()
    if not ca_pem:
        raise KubeError(
            f"{worker.host}: the connection names no CA certificate to put in the kubeconfig",
            "worker",
        )
    return settings.host, ca_pem


def mint_token(worker: Client, namespace: str, account: str, lifetime: int) -> tuple[str, float]:
    """A bound token of the worker's ServiceAccount (TokenRequest) and when it expires."""
    body = {
        "apiVersion": "authentication.k8s.io/v1",
        "kind": "TokenRequest",
        "spec": {"expirationSeconds": lifetime},
    }
    with worker.errors("requesting a token of", what=f"ServiceAccount {namespace}/{account}"):
        answer = worker.call(
            "POST", core_path("serviceaccounts", namespace, account, "token"), body=body
        )
    status = answer.get("status") or {}
    token = str(status.get("token") or "")
    expires = token_expiry(token) or timestamps.seconds(status.get("expirationTimestamp"))
    if not token or expires is None:
        raise KubeError(
            f"{worker.host}: the TokenRequest for ServiceAccount {namespace}/{account} came "
            "back without a token or its expiry",
            "worker",
        )
    return token, float(expires)


def read_secret(manager: Client, namespace: str, name: str) -> dict[str, Any] | None:
    with manager.errors("reading", what=f"Secret {namespace}/{name}"):
        try:
            return manager.call("GET", core_path("secrets", namespace, name))
        except ApiError as exc:
            if exc.status == 404:
                return None
            raise


def write_secret(manager: Client, namespace: str, name: str, text: str) -> None:
    body = {
        "apiVersion": "v1",
        "kind": "Secret",
        "type": "Opaque",
        "metadata": {"name": name, "namespace": namespace, "annotations": dict(CREATED_BY)},
        "data": {SECRET_KEY: base64.b64encode(text.encode()).decode()},
    }
    with manager.errors("writing", what=f"Secret {namespace}/{name}"):
        manager.call(
            "PATCH",
            core_path("secrets", namespace, name),
            [("fieldManager", FIELD_MANAGER), ("force", "true")],
            body,
            content_type=APPLY_PATCH,
        )


def apply_cluster(manager: Client, name: str, secret: str) -> None:
    body = {
        "apiVersion": MULTIKUEUE_CLUSTER.api_version,
        "kind": MULTIKUEUE_CLUSTER.kind,
        "metadata": {"name": name, "annotations": dict(CREATED_BY)},
        "spec": {"clusterSource": {"kubeConfig": {"locationType": "Secret", "location": secret}}},
    }
    r = MULTIKUEUE_CLUSTER
    with manager.errors("applying", r, None, name):
        manager.call(
            "PATCH",
            resource_path(r, None, name),
            [("fieldManager", FIELD_MANAGER), ("force", "true")],
            body,
            content_type=APPLY_PATCH,
        )


def cluster_state(manager: Client, name: str) -> tuple[bool, str]:
    """Whether Kueue says the worker is connected (its Active condition), and its words."""
    found = manager.get(MULTIKUEUE_CLUSTER, "", name)
    for condition in ((found or {}).get("status") or {}).get("conditions") or []:
        if condition.get("type") == "Active":
            words = f"{condition.get('reason', '')}: {condition.get('message', '')}"
            return condition.get("status") == "True", words
    return False, "Kueue has not judged it yet" if found else "no MultiKueueCluster"


def wait_connected(manager: Client, name: str, timeout: float) -> tuple[bool, str]:
    """Until Kueue connects to the worker, or timeout seconds; Kueue's last word."""
    deadline = time.monotonic() + timeout
    while True:
        connected, words = cluster_state(manager, name)
        if connected or time.monotonic() >= deadline:
            return connected, words
        time.sleep(1)


@dataclass
class Request:
    name: str  # the MultiKueueCluster's
    secret_namespace: str  # where the manager's Kueue reads kubeconfigs (its own namespace)
    service_account: str  # the worker's (the kueue chart's multikueue.worker)
    service_account_namespace: str
    lifetime: int  # seconds a token is asked to last
    connect_timeout: float
    check_mode: bool


def ensure(manager: Client, worker: Client, request: Request) -> dict[str, Any]:
    """The worker's Secret and MultiKueueCluster on the manager, the token renewed when due;
    then Kueue's verdict on the connection (a KubeError with Kueue's words when it does not
    connect in time). What is returned holds no token."""
    server, ca_pem = worker_address(worker)
    name = secret_name(request.name)
    current = held(read_secret(manager, request.secret_namespace, name))
    reason = renewal_reason(current, server, ca_pem, request.lifetime, time.time())
    expires = current.expires if current else None
    if reason and not request.check_mode:
        token, expires = mint_token(
            worker, request.service_account_namespace, request.service_account, request.lifetime
        )
        text = kubeconfig(request.name, server, ca_pem, token)
        write_secret(manager, request.secret_namespace, name, text)
    existing = manager.get(MULTIKUEUE_CLUSTER, "", request.name)
    spec = ((existing or {}).get("spec") or {}).get("clusterSource", {}).get("kubeConfig", {})
    cluster_changed = spec != {"locationType": "Secret", "location": name}
    if cluster_changed and not request.check_mode:
        apply_cluster(manager, request.name, name)
    result: dict[str, Any] = {
        "name": request.name,
        "server": server,
        "secret": f"{request.secret_namespace}/{name}",
        "renewed": bool(reason),
        "renewal_reason": reason,
        "expires": (
            datetime.fromtimestamp(expires, UTC).isoformat().replace("+00:00", "Z")
            if expires
            else None
        ),
        "changed": bool(reason) or cluster_changed,
    }
    if request.check_mode:
        result["connected"], result["message"] = cluster_state(manager, request.name)
        return result
    connected, words = wait_connected(manager, request.name, request.connect_timeout)
    result["connected"], result["message"] = connected, words
    if not connected:
        raise KubeError(
            f"Kueue on the manager does not connect to worker {request.name} ({server}) after "
            f"{request.connect_timeout:g} s: {words}",
            "name",
        )
    return result


def remove(manager: Client, name: str, secret_namespace: str, check_mode: bool) -> bool:
    """Delete the MultiKueueCluster and its Secret where the toolkit created them."""
    changed = False
    found = manager.get(MULTIKUEUE_CLUSTER, "", name)
    if found and CREATED_BY.items() <= (found["metadata"].get("annotations") or {}).items():
        changed = True
        if not check_mode:
            r = MULTIKUEUE_CLUSTER
            with manager.errors("deleting", r, None, name):
                manager.call("DELETE", resource_path(r, None, name))
    secret_of = secret_name(name)
    secret = read_secret(manager, secret_namespace, secret_of)
    annotations = ((secret or {}).get("metadata") or {}).get("annotations") or {}
    if secret and CREATED_BY.items() <= annotations.items():
        changed = True
        if not check_mode:
            with manager.errors("deleting", what=f"Secret {secret_namespace}/{secret_of}"):
                manager.call("DELETE", core_path("secrets", secret_namespace, secret_of))
    return changed
