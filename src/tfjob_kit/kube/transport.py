"""Requests to the API server over urllib3, as kubernetes.client would send them.

JSON in, the urllib3 response out; an answer outside 2xx raises ``ApiError`` (the status, the
reason and the body, as kubernetes.client's ApiException carries them). The TLS material is
loaded once into one SSL context, so a client certificate given as data never waits on disk
(its temporary copy is removed as soon as it is loaded). urllib3 is imported where a request
is made: the wheel alone (``validate``, ``explain``) runs without it.
"""

from __future__ import annotations

import json
import os
import ssl
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlencode

from tfjob_kit import __version__
from tfjob_kit.kube.kubeconfig import Settings

REQUEST_TIMEOUT = 60.0
# Enough kept-alive connections for the thread pools (apply's dry runs and the preflight's
# beside them); fewer drops the rest after each request, and every new connection costs a TLS
# handshake on both ends.
POOL_SIZE = 32
JSON = "application/json"
USER_AGENT = f"tfjob-kit/{__version__}"
APPLY_PATCH = "application/apply-patch+yaml"

Timeout = float | tuple[float, float]


class ApiError(Exception):
    """The server answered outside 2xx."""

    def __init__(self, status: int, reason: str, body: str, headers: Any = None) -> None:
        super().__init__(f"({status}) {reason}")
        self.status, self.reason, self.body, self.headers = status, reason, body, headers


def segment(value: str) -> str:
    """One path segment (a name or a namespace), escaped."""
    return quote(value, safe="")


def _context(settings: Settings) -> ssl.SSLContext:
    from urllib3.util.ssl_ import create_urllib3_context

    context = create_urllib3_context(
        cert_reqs=ssl.CERT_REQUIRED if settings.verify else ssl.CERT_NONE
    )
    if not settings.verify:
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
    if settings.ca_data is not None:
        context.load_verify_locations(cadata=settings.ca_data.decode("ascii", "replace"))
    elif settings.ca_file:
        context.load_verify_locations(cafile=settings.ca_file)
    else:
        context.load_default_certs()
    if settings.cert_file or settings.cert_data:
        with tempfile.TemporaryDirectory(prefix="tfjob-kit-tls-") as private:
            cert = settings.cert_file or _private_file(private, "cert", settings.cert_data)
            key = settings.key_file or (
                _private_file(private, "key", settings.key_data) if settings.key_data else None
            )
            context.load_cert_chain(cert, key)
    return context


def _private_file(directory: str, name: str, data: bytes | None) -> str:
    path = str(Path(directory) / name)
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(descriptor, "wb") as handle:
        handle.write(data or b"")
    return path


def _bypasses_proxy(settings: Settings) -> bool:
    if not settings.no_proxy:
        return False
    from requests.utils import should_bypass_proxies  # as kubernetes.client decides it

    return bool(should_bypass_proxies(settings.host, no_proxy=settings.no_proxy))


def _pool(settings: Settings) -> Any:
    import urllib3

    options: dict[str, Any] = {"maxsize": POOL_SIZE, "retries": 1}
    if settings.host.startswith("https"):
        options["ssl_context"] = _context(settings)
        options["cert_reqs"] = ssl.CERT_REQUIRED if settings.verify else ssl.CERT_NONE
        if not settings.verify:
            options["assert_hostname"] = False
        if settings.tls_server_name:
            options["server_hostname"] = settings.tls_server_name
    if settings.proxy and not _bypasses_proxy(settings):
        if settings.proxy.startswith("socks"):
            from urllib3.contrib.socks import SOCKSProxyManager

            return SOCKSProxyManager(settings.proxy, **options)
        return urllib3.ProxyManager(settings.proxy, **options)
    return urllib3.PoolManager(**options)


class Transport:
    """One pool of connections to one API server; safe to share between threads."""

    def __init__(
        self,
        settings: Settings,
        impersonate_user: str | None = None,
        impersonate_groups: Sequence[str] = (),
    ) -> None:
        self.settings = settings
        self.host = settings.host
        self._pool = _pool(settings)
        # The API server reads one group per Impersonate-Group line (a comma is part of a
        # group name), so each is a header line of its own.
        self._identity = [("Impersonate-User", impersonate_user)] if impersonate_user else []
        self._identity += [("Impersonate-Group", g) for g in impersonate_groups]

    def close(self) -> None:
        self._pool.clear()

    def request(
        self,
        method: str,
        path: str,
        *,
        query: Sequence[tuple[str, str]] = (),
        body: Any = None,
        content_type: str = JSON,
        accept: str = JSON,
        timeout: Timeout = REQUEST_TIMEOUT,
        stream: bool = False,
    ) -> Any:
        """The response (read, or with ``stream`` to be read as it arrives); an answer
        outside 2xx raises ApiError, a request without an answer urllib3's HTTPError."""
        import urllib3

        headers = urllib3.HTTPHeaderDict({"Accept": accept, "User-Agent": USER_AGENT})
        authorization = self.settings.refresh() if self.settings.refresh else None
        authorization = authorization or self.settings.authorization
        if authorization:
            headers["Authorization"] = authorization
        for name, value in self._identity:
            headers.add(name, value)
        data = None
        if body is not None:
            headers["Content-Type"] = content_type
            data = json.dumps(body).encode()
        url = self.host + path + (f"?{urlencode(list(query))}" if query else "")
        limit = (
            urllib3.Timeout(connect=timeout[0], read=timeout[1])
            if isinstance(timeout, tuple)
            else urllib3.Timeout(total=timeout)
        )
        response = self._pool.request(
            method, url, body=data, headers=headers, timeout=limit, preload_content=not stream
        )
        if not 200 <= response.status < 300:
            text = response.data if not stream else response.read()
            response.release_conn()
            raise ApiError(
                response.status,
                response.reason or "",
                text.decode("utf-8", "replace") if text else "",
                response.headers,
            )
        return response

    def json(self, method: str, path: str, **options: Any) -> dict[str, Any]:
        """The answer's JSON object ({} for an empty answer)."""
        response = self.request(method, path, **options)
        found: dict[str, Any] = json.loads(response.data) if response.data else {}
        return found
