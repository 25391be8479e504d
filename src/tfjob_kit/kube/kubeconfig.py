"""Where the API server is and how to prove who we are: a Connection resolved to ``Settings``.

A kubeconfig of the usual shape (one file or an inline dict; the context's cluster with its
server, CA and TLS options; a user with a client certificate and key, or a token) is read here,
with PyYAML only. Importing kubernetes.config costs about half a CPU second (it loads
google-auth, oauthlib, requests and pydantic), which every run of a module paid; most of the
suite's module runs read exactly this shape. Anything else (several files in KUBECONFIG, an
exec plugin, an auth provider, a token file, a username and password, no kubeconfig at all and a
service account in a pod, or a kubeconfig this reading does not understand) is loaded by
kubernetes.config as before, so that its behaviour and its errors stay the library's.
``tests/unit/test_kubeconfig.py`` holds both readings equal on every shape this one takes.
"""

from __future__ import annotations

import base64
import binascii
import os
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import yaml

from tfjob_kit.kube.api_errors import KubeError
from tfjob_kit.kube.connection import Connection

# The keys this reading understands; any other one sends the kubeconfig to kubernetes.config.
CLUSTER_KEYS = frozenset(
    {
        "server",
        "certificate-authority",
        "certificate-authority-data",
        "insecure-skip-tls-verify",
        "tls-server-name",
        "proxy-url",
    }
)
USER_KEYS = frozenset(
    {"client-certificate", "client-certificate-data", "client-key", "client-key-data", "token"}
)


@dataclass(frozen=True)
class Settings:
    """What a request needs: the server, TLS material (a file or PEM data each) and the
    Authorization header's value."""

    host: str
    verify: bool = True
    ca_file: str | None = None
    ca_data: bytes | None = field(default=None, repr=False)
    cert_file: str | None = None
    cert_data: bytes | None = field(default=None, repr=False)
    key_file: str | None = None
    key_data: bytes | None = field(default=None, repr=False)
    authorization: str | None = field(default=None, repr=False)
    tls_server_name: str | None = None
    proxy: str | None = None
    no_proxy: str | None = None
    # kubernetes.config's exec plugins and auth providers renew their token: the header's
    # current value, asked before each request.
    refresh: Callable[[], str | None] | None = field(default=None, repr=False, compare=False)

    def ca_pem(self) -> bytes | None:
        if self.ca_data is not None:
            return self.ca_data
        return Path(self.ca_file).read_bytes() if self.ca_file else None


class _NotReadHereError(Exception):
    """This kubeconfig is not of the shape read here: kubernetes.config reads it."""


def settings(conn: Connection) -> Settings:
    """The connection's server and credentials: an explicit host, else the kubeconfig (or the
    pod's service account), with the connection's own options over them."""
    if conn.host and not conn.kubeconfig:
        found = Settings(host=conn.host)
    else:
        try:
            found = _read(conn)
        except _NotReadHereError:
            found = _through_kubernetes(conn)
    return _overridden(found, conn)


def _overridden(found: Settings, conn: Connection) -> Settings:
    changes: dict[str, Any] = {}
    if conn.host:
        changes["host"] = conn.host
    if conn.api_key:
        # The token replaces the kubeconfig user's credentials.
        changes.update(
            authorization=f"Bearer {conn.api_key}",
            refresh=None,
            cert_file=None,
            cert_data=None,
            key_file=None,
            key_data=None,
        )
    if conn.validate_certs is not None:
        changes["verify"] = conn.validate_certs
    if conn.ca_cert:
        changes.update(ca_file=conn.ca_cert, ca_data=None)
    if conn.client_cert:
        changes.update(cert_file=conn.client_cert, cert_data=None)
    if conn.client_key:
        changes.update(key_file=conn.client_key, key_data=None)
    if conn.proxy:
        changes["proxy"] = conn.proxy
    if conn.no_proxy:
        changes["no_proxy"] = conn.no_proxy
    result = replace(found, **changes)
    return replace(result, host=result.host.rstrip("/"))


def _paths(conn: Connection) -> tuple[dict[str, Any], str]:
    """The kubeconfig's content and the directory its relative paths start from."""
    if isinstance(conn.kubeconfig, dict):
        return conn.kubeconfig, ""
    # As kubernetes.config reads them: the option or KUBECONFIG, split at os.pathsep, the
    # paths that exist merged. One file is read here; several are merged there.
    spec = conn.kubeconfig or os.environ.get("KUBECONFIG", "~/.kube/config")
    parts = [p for p in spec.split(os.pathsep) if p]
    if len(parts) != 1:
        raise _NotReadHereError
    path = Path(parts[0]).expanduser()
    try:
        text = path.read_text(encoding="utf-8")
        data = yaml.safe_load(text)
    except (OSError, UnicodeDecodeError, yaml.YAMLError):
        raise _NotReadHereError from None
    if not isinstance(data, dict):
        raise _NotReadHereError
    return data, str(path.absolute().parent)


def _named(entries: Any, name: Any, inner: str) -> dict[str, Any] | None:
    """The ``inner`` mapping of the one entry called ``name``; None when there is none."""
    if not isinstance(entries, list) or not isinstance(name, str) or not name:
        raise _NotReadHereError
    matches = [e for e in entries if isinstance(e, dict) and e.get("name") == name]
    if len(matches) > 1:
        raise _NotReadHereError
    if not matches:
        return None
    value = matches[0].get(inner)
    if not isinstance(value, dict):
        raise _NotReadHereError
    return value


def _strings(mapping: dict[str, Any], keys: frozenset[str]) -> None:
    if set(mapping) - keys:
        raise _NotReadHereError
    for key, value in mapping.items():
        if key != "insecure-skip-tls-verify" and not isinstance(value, str):
            raise _NotReadHereError


def _material(section: dict[str, Any], key: str, base: str) -> tuple[str | None, bytes | None]:
    """A file or its data (base64 in the kubeconfig), the data preferred, as
    kubernetes.config takes them; an empty data value means none."""
    data_key = f"{key}-data"
    if data_key in section:
        if not section[data_key]:
            return None, None
        try:
            return None, base64.standard_b64decode(section[data_key].encode())
        except (binascii.Error, ValueError):
            raise _NotReadHereError from None
    if key in section:
        # kubernetes.config joins and normalises the path as strings (no ~, no symlinks).
        path = os.path.normpath(os.path.join(base, section[key]))  # noqa: PTH118
        if not Path(path).is_file():
            raise _NotReadHereError
        return path, None
    return None, None


def _read(conn: Connection) -> Settings:
    data, base = _paths(conn)
    context = _named(data.get("contexts"), conn.context or data.get("current-context"), "context")
    if context is None:
        raise _NotReadHereError
    cluster = _named(data.get("clusters"), context.get("cluster"), "cluster")
    if cluster is None:
        raise _NotReadHereError
    user: dict[str, Any] = {}
    if context.get("user") and data.get("users"):
        user = _named(data.get("users"), context.get("user"), "user") or {}
    _strings(cluster, CLUSTER_KEYS)
    _strings(user, USER_KEYS)
    insecure = cluster.get("insecure-skip-tls-verify", False)
    if "server" not in cluster or not isinstance(insecure, bool):
        raise _NotReadHereError
    host = cluster["server"].rstrip("/")
    found = Settings(
        host=host,
        verify=not insecure,
        authorization=f"Bearer {user['token']}" if user.get("token") else None,
        tls_server_name=cluster.get("tls-server-name"),
        proxy=cluster.get("proxy-url"),
    )
    if host.startswith("https"):
        ca_file, ca_data = _material(cluster, "certificate-authority", base)
        cert_file, cert_data = _material(user, "client-certificate", base)
        key_file, key_data = _material(user, "client-key", base)
        found = replace(
            found,
            ca_file=ca_file,
            ca_data=ca_data,
            cert_file=cert_file,
            cert_data=cert_data,
            key_file=key_file,
            key_data=key_data,
        )
    return found


def _through_kubernetes(conn: Connection) -> Settings:
    """What kubernetes.config makes of the connection's kubeconfig or service account."""
    from kubernetes import client
    from kubernetes import config as loader

    config: Any = loader
    cfg = client.Configuration()
    try:
        if isinstance(conn.kubeconfig, dict):
            config.load_kube_config_from_dict(
                conn.kubeconfig,
                context=conn.context,
                client_configuration=cfg,
                persist_config=False,
            )
        elif conn.kubeconfig or _default_kubeconfig_exists():
            config.load_kube_config(
                conn.kubeconfig,
                context=conn.context,
                client_configuration=cfg,
                persist_config=False,
            )
        elif "KUBERNETES_SERVICE_HOST" in os.environ:
            config.load_incluster_config(cfg)
        else:
            raise KubeError(
                "no kubeconfig to use: set kubeconfig (or K8S_AUTH_KUBECONFIG or KUBECONFIG) "
                "or host and api_key; ~/.kube/config does not exist and this is not a pod "
                "in a cluster",
                "kubeconfig",
            )
    except config.ConfigException as exc:
        where = conn.kubeconfig if isinstance(conn.kubeconfig, str) else "kubeconfig"
        raise KubeError(f"cannot use {where}: {exc}", "kubeconfig") from None
    except OSError as exc:
        raise KubeError(
            f"cannot read kubeconfig {conn.kubeconfig}: {exc.strerror}", "kubeconfig"
        ) from None

    def header() -> str | None:
        value = cfg.get_api_key_with_prefix("BearerToken", alias="authorization")
        return str(value) if value else None

    return Settings(
        host=str(cfg.host),
        verify=bool(cfg.verify_ssl),
        ca_file=cfg.ssl_ca_cert,
        cert_file=cfg.cert_file,
        key_file=cfg.key_file,
        authorization=header(),
        tls_server_name=cfg.tls_server_name,
        proxy=cfg.proxy,
        no_proxy=cfg.no_proxy,
        refresh=header if cfg.refresh_api_key_hook is not None else None,
    )


def _default_kubeconfig_exists() -> bool:
    paths = os.environ.get("KUBECONFIG", "~/.kube/config").split(os.pathsep)
    return any(Path(p).expanduser().is_file() for p in paths if p)
