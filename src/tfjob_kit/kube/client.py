"""A small client over kubernetes.client: JSON in, JSON out, clear errors.

Only what the toolkit needs: server-side apply (optionally dry-run), get, list, delete of its
custom resources, and the pods, services, events and logs around a job. Responses are read as
plain JSON (no model classes), which keeps the per-request cost low.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import cached_property
from pathlib import Path
from typing import Any, TypeVar

from tfjob_kit.kube.api_errors import KubeError, from_api_exception, status_body, unreachable
from tfjob_kit.kube.connection import Connection
from tfjob_kit.kube.kinds import Resource

T = TypeVar("T")
REQUEST_TIMEOUT = 60.0


def _configuration(conn: Connection) -> Any:
    from kubernetes import client
    from kubernetes import config as loader

    config: Any = loader
    cfg = client.Configuration()
    explicit_host = conn.host and not conn.kubeconfig
    if not explicit_host:
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
    if conn.host:
        cfg.host = conn.host.rstrip("/")
    if conn.api_key:
        # The token replaces the kubeconfig user's credentials.
        cfg.api_key = {"authorization": f"Bearer {conn.api_key}"}
        cfg.api_key_prefix = {}
        cfg.cert_file = cfg.key_file = None
    if conn.validate_certs is not None:
        cfg.verify_ssl = conn.validate_certs
    for option, attribute in (
        ("ca_cert", "ssl_ca_cert"),
        ("client_cert", "cert_file"),
        ("client_key", "key_file"),
        ("proxy", "proxy"),
        ("no_proxy", "no_proxy"),
    ):
        value = getattr(conn, option)
        if value:
            setattr(cfg, attribute, value)
    cfg.retries = 1
    # Enough kept-alive connections for the thread pools (apply's dry runs and the preflight's
    # beside them); kubernetes.client's default (5 per CPU) drops the rest after each request,
    # and every new connection costs a TLS handshake on both ends.
    cfg.connection_pool_maxsize = max(int(cfg.connection_pool_maxsize or 0), 32)
    return cfg


def _send_repeated(rest_client: Any, headers: list[tuple[str, str]]) -> None:
    """Send these headers with every request, each value as a header line of its own.

    The API server reads one group per Impersonate-Group line (a comma is part of a group name).
    kubernetes.client keeps one value per default header and hands urllib3 a plain dict, so the
    lines are added where the request leaves: an HTTPHeaderDict, which urllib3 writes out value
    by value."""
    from urllib3 import HTTPHeaderDict

    pool = rest_client.pool_manager
    send = pool.request

    def request(method: str, url: str, *args: Any, headers: Any = None, **kwargs: Any) -> Any:
        merged = HTTPHeaderDict(headers or {})
        for name, value in extra:
            merged.add(name, value)
        return send(method, url, *args, headers=merged, **kwargs)

    extra = list(headers)
    pool.request = request


_POOL_PREFIX = re.compile(r"^\w+\(host=[^)]*\): ")


def transport_reason(exc: Exception) -> str:
    """Why a request never got an answer, in words: urllib3's reason without its Python
    reprs ("connection aborted: Remote end closed connection without response", "Failed to
    establish a new connection: [Errno 111] Connection refused", "Read timed out ...")."""
    reason: Any = getattr(exc, "reason", None) or exc
    args: tuple[Any, ...] = tuple(getattr(reason, "args", ()))
    if len(args) == 2 and isinstance(args[0], str) and isinstance(args[1], BaseException):
        # ProtocolError('Connection aborted.', RemoteDisconnected('...'))
        what, cause = args
        return f"{what.rstrip('.').lower()}: {cause or type(cause).__name__}"
    return _POOL_PREFIX.sub("", str(reason))


def _default_kubeconfig_exists() -> bool:
    paths = os.environ.get("KUBECONFIG", "~/.kube/config").split(os.pathsep)
    return any(Path(p).expanduser().is_file() for p in paths if p)


class Client:
    """One connection to one cluster; safe to share between threads."""

    def __init__(self, conn: Connection | None = None) -> None:
        from kubernetes import client

        self.connection = conn or Connection()
        cfg = _configuration(self.connection)
        self.host = str(cfg.host)
        api: Any = client.ApiClient(cfg)
        if self.connection.impersonate_user:
            api.set_default_header("Impersonate-User", self.connection.impersonate_user)
        if self.connection.impersonate_groups:
            _send_repeated(
                api.rest_client,
                [("Impersonate-Group", g) for g in self.connection.impersonate_groups],
            )
        self._api = api

    # The typed APIs are made on first use: kubernetes.client imports CoreV1Api's models (some
    # 250 modules, near a second on two cores) when the API is first made.
    @cached_property
    def _custom(self) -> Any:
        from kubernetes import client

        return client.CustomObjectsApi(self._api)

    @cached_property
    def _core(self) -> Any:
        from kubernetes import client

        return client.CoreV1Api(self._api)

    @cached_property
    def _version(self) -> Any:
        from kubernetes import client

        return client.VersionApi(self._api)

    @property
    def api(self) -> Any:
        """The kubernetes.client ApiClient (for kubernetes.dynamic)."""
        return self._api

    def close(self) -> None:
        self._api.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    @contextmanager
    def errors(
        self,
        action: str,
        resource: Resource | None = None,
        namespace: str | None = None,
        name: str | None = None,
        *,
        what: str = "",
    ) -> Iterator[None]:
        """The server's refusals (any ApiException, the dynamic client's included) and a
        request that got no answer, raised as KubeError: `action` on `what`, by default the
        object ``resource``, ``namespace`` and ``name`` say."""
        from kubernetes.client.exceptions import ApiException
        from urllib3.exceptions import HTTPError

        try:
            yield
        except ApiException as exc:
            raise from_api_exception(exc, action, resource, namespace, name, what=what) from None
        except HTTPError as exc:
            raise unreachable(self.host, transport_reason(exc)) from None

    def _json(self, call: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        response = call(*args, _preload_content=False, _request_timeout=REQUEST_TIMEOUT, **kwargs)
        return json.loads(response.data) if response.data else {}

    # -- custom resources ----------------------------------------------------------------

    def apply(
        self,
        resource: Resource,
        body: dict[str, Any],
        *,
        field_manager: str,
        force: bool = False,
        dry_run: bool = False,
    ) -> dict[str, Any]:
        """Server-side apply of one namespaced object; returns the object the server holds
        (or would hold, with dry_run)."""
        metadata = body["metadata"]
        namespace, name = metadata["namespace"], metadata["name"]
        extra: dict[str, Any] = {"dry_run": "All"} if dry_run else {}
        with self.errors("dry-run apply of" if dry_run else "applying", resource, namespace, name):
            result: dict[str, Any] = self._json(
                self._custom.patch_namespaced_custom_object,
                resource.group,
                resource.version,
                namespace,
                resource.plural,
                name,
                body,
                field_manager=field_manager,
                force=force,
                _content_type="application/apply-patch+yaml",
                **extra,
            )
            return result

    def get(self, resource: Resource, namespace: str, name: str) -> dict[str, Any] | None:
        """The object, or None when there is none (a cluster-scoped resource ignores
        ``namespace``)."""
        from kubernetes.client.exceptions import ApiException

        scope = (
            (self._custom.get_namespaced_custom_object, resource.group, resource.version, namespace)
            if resource.namespaced
            else (self._custom.get_cluster_custom_object, resource.group, resource.version)
        )
        with self.errors("reading", resource, namespace, name):
            try:
                result: dict[str, Any] = self._json(*scope, resource.plural, name)
            except ApiException as exc:
                if exc.status == 404 and names_object(exc):
                    return None
                raise
            return result

    def list_objects(
        self, resource: Resource, namespace: str | None = None, label_selector: str | None = None
    ) -> list[dict[str, Any]]:
        selector = {"label_selector": label_selector} if label_selector else {}
        with self.errors("listing", resource):
            if namespace:
                data = self._json(
                    self._custom.list_namespaced_custom_object,
                    resource.group,
                    resource.version,
                    namespace,
                    resource.plural,
                    **selector,
                )
            else:
                data = self._json(
                    self._custom.list_cluster_custom_object,
                    resource.group,
                    resource.version,
                    resource.plural,
                    **selector,
                )
        items: list[dict[str, Any]] = data.get("items", [])
        for item in items:  # list items carry no apiVersion/kind
            item.setdefault("apiVersion", resource.api_version)
            item.setdefault("kind", resource.kind)
        return items

    def delete(
        self,
        resource: Resource,
        namespace: str,
        name: str,
        propagation: str = "Foreground",
        dry_run: bool = False,
    ) -> bool:
        """Delete one object and (by propagation) what it owns; False when it was not there."""
        from kubernetes.client.exceptions import ApiException

        extra: dict[str, Any] = {"dry_run": "All"} if dry_run else {}
        with self.errors("deleting", resource, namespace, name):
            try:
                self._json(
                    self._custom.delete_namespaced_custom_object,
                    resource.group,
                    resource.version,
                    namespace,
                    resource.plural,
                    name,
                    propagation_policy=propagation,
                    **extra,
                )
            except ApiException as exc:
                if exc.status == 404 and names_object(exc):
                    return False
                raise
        return True

    # -- what a job owns -----------------------------------------------------------------

    def _core_items(
        self, what: str, call: Callable[..., Any], namespace: str | None, label_selector: str
    ) -> list[dict[str, Any]]:
        """Objects with the label selector in one namespace, or in all (namespace None, with
        the all-namespaces `call`)."""
        where = f"in namespace {namespace!r}" if namespace else "in all namespaces"
        args = (namespace,) if namespace else ()
        with self.errors(f"listing {what} ({label_selector}) {where} for"):
            items: list[dict[str, Any]] = self._json(
                call, *args, label_selector=label_selector
            ).get("items", [])
            return items

    def pods(self, namespace: str, label_selector: str) -> list[dict[str, Any]]:
        return self._core_items("pods", self._core.list_namespaced_pod, namespace, label_selector)

    def pods_everywhere(self, label_selector: str) -> list[dict[str, Any]]:
        """Pods of every namespace with the label selector."""
        return self._core_items(
            "pods", self._core.list_pod_for_all_namespaces, None, label_selector
        )

    def annotate_pod(self, namespace: str, name: str, annotations: dict[str, str]) -> None:
        with self.errors(f"annotating pod {namespace}/{name} for"):
            self._json(
                self._core.patch_namespaced_pod,
                name,
                namespace,
                {"metadata": {"annotations": annotations}},
            )

    def services(self, namespace: str, label_selector: str) -> list[dict[str, Any]]:
        return self._core_items(
            "services", self._core.list_namespaced_service, namespace, label_selector
        )

    def events(self, namespace: str, kind: str, name: str) -> list[dict[str, Any]]:
        selector = f"involvedObject.kind={kind},involvedObject.name={name}"
        with self.errors(f"listing events in namespace {namespace!r} for"):
            items: list[dict[str, Any]] = self._json(
                self._core.list_namespaced_event, namespace, field_selector=selector
            ).get("items", [])
            return items

    def pod_log(
        self, namespace: str, name: str, tail_lines: int, container: str | None = None
    ) -> str:
        extra = {"container": container} if container else {}
        with self.errors(f"reading the log of pod {namespace}/{name} for"):
            response = self._core.read_namespaced_pod_log(
                name,
                namespace,
                tail_lines=tail_lines,
                _preload_content=False,
                _request_timeout=REQUEST_TIMEOUT,
                **extra,
            )
            data: bytes = response.data or b""
            return data.decode("utf-8", "replace")

    # -- the preflight: what the operator would create, judged by the server ------------------

    def dry_run_create(
        self, kind: str, namespace: str, body: dict[str, Any]
    ) -> tuple[int, dict[str, Any]]:
        """Create with dryRun=All (nothing is stored): kind "pods", "services" or "podgroups"
        (Volcano's scheduling.volcano.sh/v1beta1), answered as ``_dry_run_answer`` says."""

        def send() -> Any:
            if kind in ("pods", "services"):
                # Not CoreV1Api.create_namespaced_pod: it reads the body into its model first,
                # which refuses what the server takes (a quantity written as a number).
                request = self._api.param_serialize(
                    method="POST",
                    resource_path=f"/api/v1/namespaces/{{namespace}}/{kind}",
                    path_params={"namespace": namespace},
                    query_params=[("dryRun", "All")],
                    header_params={
                        "Accept": "application/json",
                        "Content-Type": "application/json",
                    },
                    body=body,
                    auth_settings=["BearerToken"],
                )
                response = self._api.call_api(*request, _request_timeout=REQUEST_TIMEOUT)
                response.read()
                return response
            return self._custom.create_namespaced_custom_object(
                "scheduling.volcano.sh",
                "v1beta1",
                namespace,
                kind,
                body,
                dry_run="All",
                _preload_content=False,
                _request_timeout=REQUEST_TIMEOUT,
            )

        return self._dry_run_answer(send)

    def dry_run_apply(
        self, resource: Resource, body: dict[str, Any], *, field_manager: str, **extra: Any
    ) -> tuple[int, dict[str, Any]]:
        """Server-side apply with dryRun=All of one custom object (namespaced or not), answered
        as dry_run_create answers: the HTTP status and the object or Status; only an unreachable
        server raises. ``extra``: more query parameters (``field_validation="Strict"``)."""
        metadata = body.get("metadata") or {}
        scope = (
            (self._custom.patch_namespaced_custom_object, metadata.get("namespace"))
            if resource.namespaced
            else (self._custom.patch_cluster_custom_object,)
        )
        return self._dry_run_answer(
            lambda: scope[0](
                resource.group,
                resource.version,
                *scope[1:],
                resource.plural,
                metadata.get("name"),
                body,
                field_manager=field_manager,
                dry_run="All",
                _content_type="application/apply-patch+yaml",
                _preload_content=False,
                _request_timeout=REQUEST_TIMEOUT,
                **extra,
            )
        )

    def _dry_run_answer(self, send: Callable[[], Any]) -> tuple[int, dict[str, Any]]:
        """A dry run's HTTP status and body (the object, or the server's Status): an answer of
        the server is not an error here; only an unreachable server raises."""
        from kubernetes.client.exceptions import ApiException
        from urllib3.exceptions import HTTPError

        try:
            response = send()
        except ApiException as exc:
            return int(exc.status or 0), status_body(exc)
        except HTTPError as exc:
            raise unreachable(self.host, transport_reason(exc)) from None
        data: dict[str, Any] = json.loads(response.data) if response.data else {}
        return int(response.status), data

    def probe(self, kind: str, name: str, namespace: str | None = None) -> tuple[int, str]:
        """Whether an object exists, by a metadata-only GET (a Secret's data never leaves the
        server): the HTTP status (200, 404, 403...) and the server's message. kind: secrets,
        configmaps, persistentvolumeclaims, serviceaccounts (namespaced), priorityclasses,
        queues (Volcano's, cluster-scoped). A 404 for a kind the server does not serve (no
        such CRD) reads 404 with the message "the server could not find the requested
        resource"."""
        from kubernetes.client.exceptions import ApiException
        from urllib3.exceptions import HTTPError

        metadata_only = {"Accept": "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1"}
        options: dict[str, Any] = {
            "_preload_content": False,
            "_request_timeout": REQUEST_TIMEOUT,
            "_headers": metadata_only,
        }
        try:
            if kind == "priorityclasses":
                from kubernetes import client

                client.SchedulingV1Api(self._api).read_priority_class(name, **options)
            elif kind == "queues":
                self._custom.get_cluster_custom_object(
                    "scheduling.volcano.sh", "v1beta1", "queues", name, **options
                )
            else:
                reader = getattr(self._core, f"read_namespaced_{_SINGULAR[kind]}")
                reader(name, namespace, **options)
        except ApiException as exc:
            body = status_body(exc)
            return int(exc.status or 0), str(body.get("message") or exc.reason or "")
        except HTTPError as exc:
            raise unreachable(self.host, transport_reason(exc)) from None
        return 200, ""

    def server_version(self) -> str:
        """The API server's gitVersion ("v1.37.2", "v1.35.1-eks-3b9e8f2")."""
        with self.errors("read", what="the API server's version"):
            info = self._version.get_code(_request_timeout=REQUEST_TIMEOUT)
        return str(info.git_version)

    def access_review(self, attributes: dict[str, str]) -> dict[str, Any]:
        """A SelfSubjectAccessReview of resourceAttributes (verb, group, resource, namespace...):
        the server's status (allowed, denied, reason, evaluationError). The server answers it
        and stores nothing, so it is safe in check mode."""
        from kubernetes import client

        body = {
            "apiVersion": "authorization.k8s.io/v1",
            "kind": "SelfSubjectAccessReview",
            "spec": {"resourceAttributes": attributes},
        }
        asked = " ".join(v for v in (attributes.get("verb"), attributes.get("resource")) if v)
        with self.errors(f"asking whether these credentials may {asked}, for"):
            answer: dict[str, Any] = self._json(
                client.AuthorizationV1Api(self._api).create_self_subject_access_review, body
            )
        status: dict[str, Any] = answer.get("status") or {}
        return status

    def resource_quotas(self, namespace: str) -> list[dict[str, Any]]:
        with self.errors(f"listing resourcequotas in namespace {namespace!r} for"):
            items: list[dict[str, Any]] = self._json(
                self._core.list_namespaced_resource_quota, namespace
            ).get("items", [])
            return items


_SINGULAR = {
    "secrets": "secret",
    "configmaps": "config_map",
    "persistentvolumeclaims": "persistent_volume_claim",
    "serviceaccounts": "service_account",
}


def names_object(exc: Any) -> bool:
    """A 404 about a named object (as opposed to an unknown resource type)."""
    try:
        details = json.loads(exc.body).get("details") or {}
    except (TypeError, ValueError, AttributeError):
        return False
    return bool(details.get("name"))
