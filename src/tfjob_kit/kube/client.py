"""A small client of the API server: JSON in, JSON out, clear errors.

Only what the toolkit needs: server-side apply (optionally dry-run), get, list, delete of its
custom resources, and the pods, services, events and logs around a job. Requests go out through
``transport.py`` (urllib3) and answers are read as plain JSON: no model classes, and no import
of kubernetes.client, which cost every module run over half a CPU second.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from tfjob_kit.kube.api_errors import from_api_exception, status_body, unreachable
from tfjob_kit.kube.connection import Connection
from tfjob_kit.kube.kinds import Resource
from tfjob_kit.kube.kubeconfig import settings
from tfjob_kit.kube.transport import (
    APPLY_PATCH,
    JSON,
    ApiError,
    Transport,
    segment,
)

STRATEGIC_MERGE = "application/strategic-merge-patch+json"
Query = Sequence[tuple[str, str]]


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


def api_path(api_version: str) -> str:
    """The URL path of an apiVersion: the core group's ("v1") or a named group's."""
    return "/api/v1" if api_version == "v1" else f"/apis/{api_version}"


def resource_path(resource: Resource, namespace: str | None = None, name: str = "") -> str:
    """The URL path of a custom resource's objects: in a namespace, or all of them (a
    cluster-scoped resource ignores ``namespace``), or one by name."""
    path = api_path(resource.api_version)
    if namespace and resource.namespaced:
        path += f"/namespaces/{segment(namespace)}"
    path += f"/{resource.plural}"
    return path + (f"/{segment(name)}" if name else "")


def core_path(plural: str, namespace: str | None = None, name: str = "", sub: str = "") -> str:
    """The URL path of core (v1) objects: ``sub`` is a subresource (log, token...)."""
    path = api_path("v1") + (f"/namespaces/{segment(namespace)}" if namespace else "")
    path += f"/{plural}"
    if name:
        path += f"/{segment(name)}" + (f"/{sub}" if sub else "")
    return path


class Client:
    """One connection to one cluster; safe to share between threads."""

    def __init__(self, conn: Connection | None = None) -> None:
        self.connection = conn or Connection()
        self.transport = Transport(
            settings(self.connection),
            self.connection.impersonate_user,
            self.connection.impersonate_groups,
        )
        self.host = self.transport.host

    def close(self) -> None:
        self.transport.close()

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
        """The server's refusals (ApiError) and a request that got no answer, raised as
        KubeError: `action` on `what`, by default the object ``resource``, ``namespace`` and
        ``name`` say."""
        from urllib3.exceptions import HTTPError

        try:
            yield
        except ApiError as exc:
            raise from_api_exception(exc, action, resource, namespace, name, what=what) from None
        except HTTPError as exc:
            raise unreachable(self.host, transport_reason(exc)) from None

    def call(
        self,
        method: str,
        path: str,
        query: Query = (),
        body: Any = None,
        *,
        content_type: str = JSON,
    ) -> dict[str, Any]:
        """The answer's JSON object; raises ApiError and urllib3's HTTPError (inside
        ``errors`` they read as KubeError)."""
        return self.transport.json(method, path, query=query, body=body, content_type=content_type)

    def answer(
        self,
        method: str,
        path: str,
        query: Query = (),
        body: Any = None,
        *,
        content_type: str = JSON,
        accept: str = JSON,
    ) -> tuple[int, dict[str, Any]]:
        """The HTTP status and the JSON body (an object, or the server's Status): an answer
        of the server is not an error here; only an unreachable server raises. A body that is
        not a JSON object ("404 page not found" for a path the server does not serve) reads
        as its text in ``message``."""
        from urllib3.exceptions import HTTPError

        try:
            response = self.transport.request(
                method, path, query=query, body=body, content_type=content_type, accept=accept
            )
        except ApiError as exc:
            text = exc.body.strip() or exc.reason
            return exc.status, status_body(exc) or ({"message": text} if text else {})
        except HTTPError as exc:
            raise unreachable(self.host, transport_reason(exc)) from None
        try:
            data = json.loads(response.data) if response.data else {}
        except ValueError:
            data = {}
        return int(response.status), data if isinstance(data, dict) else {}

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
        query = [("fieldManager", field_manager), ("force", "true" if force else "false")]
        query += [("dryRun", "All")] if dry_run else []
        with self.errors("dry-run apply of" if dry_run else "applying", resource, namespace, name):
            return self.call(
                "PATCH",
                resource_path(resource, namespace, name),
                query,
                body,
                content_type=APPLY_PATCH,
            )

    def get(self, resource: Resource, namespace: str, name: str) -> dict[str, Any] | None:
        """The object, or None when there is none (a cluster-scoped resource ignores
        ``namespace``)."""
        with self.errors("reading", resource, namespace, name):
            try:
                return self.call("GET", resource_path(resource, namespace, name))
            except ApiError as exc:
                if exc.status == 404 and names_object(exc):
                    return None
                raise

    def list_objects(
        self, resource: Resource, namespace: str | None = None, label_selector: str | None = None
    ) -> list[dict[str, Any]]:
        selector = [("labelSelector", label_selector)] if label_selector else []
        with self.errors("listing", resource):
            data = self.call("GET", resource_path(resource, namespace), selector)
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
        query = [("propagationPolicy", propagation)] + ([("dryRun", "All")] if dry_run else [])
        with self.errors("deleting", resource, namespace, name):
            try:
                self.call("DELETE", resource_path(resource, namespace, name), query)
            except ApiError as exc:
                if exc.status == 404 and names_object(exc):
                    return False
                raise
        return True

    # -- what a job owns -----------------------------------------------------------------

    def _core_items(
        self, plural: str, namespace: str | None, label_selector: str
    ) -> list[dict[str, Any]]:
        """Objects with the label selector in one namespace, or in all (namespace None)."""
        where = f"in namespace {namespace!r}" if namespace else "in all namespaces"
        with self.errors(f"listing {plural} ({label_selector}) {where} for"):
            data = self.call(
                "GET", core_path(plural, namespace), [("labelSelector", label_selector)]
            )
            items: list[dict[str, Any]] = data.get("items", [])
            return items

    def pods(self, namespace: str, label_selector: str) -> list[dict[str, Any]]:
        return self._core_items("pods", namespace, label_selector)

    def pods_everywhere(self, label_selector: str) -> list[dict[str, Any]]:
        """Pods of every namespace with the label selector."""
        return self._core_items("pods", None, label_selector)

    def annotate_pod(self, namespace: str, name: str, annotations: dict[str, str]) -> None:
        with self.errors(f"annotating pod {namespace}/{name} for"):
            self.call(
                "PATCH",
                core_path("pods", namespace, name),
                body={"metadata": {"annotations": annotations}},
                content_type=STRATEGIC_MERGE,
            )

    def services(self, namespace: str, label_selector: str) -> list[dict[str, Any]]:
        return self._core_items("services", namespace, label_selector)

    def events(self, namespace: str, kind: str, name: str) -> list[dict[str, Any]]:
        selector = f"involvedObject.kind={kind},involvedObject.name={name}"
        with self.errors(f"listing events in namespace {namespace!r} for"):
            data = self.call("GET", core_path("events", namespace), [("fieldSelector", selector)])
            items: list[dict[str, Any]] = data.get("items", [])
            return items

    def pod_log(
        self, namespace: str, name: str, tail_lines: int, container: str | None = None
    ) -> str:
        query = [("tailLines", str(tail_lines))] + ([("container", container)] if container else [])
        with self.errors(f"reading the log of pod {namespace}/{name} for"):
            response = self.transport.request(
                "GET", core_path("pods", namespace, name, "log"), query=query, accept="*/*"
            )
            data: bytes = response.data or b""
            return data.decode("utf-8", "replace")

    # -- the preflight: what the operator would create, judged by the server ------------------

    def dry_run_create(
        self, kind: str, namespace: str, body: dict[str, Any]
    ) -> tuple[int, dict[str, Any]]:
        """Create with dryRun=All (nothing is stored): kind "pods", "services" or "podgroups"
        (Volcano's scheduling.volcano.sh/v1beta1), answered as ``answer`` says. The body goes
        as it is (no model reads it first, which would refuse what the server takes: a
        quantity written as a number)."""
        path = (
            core_path(kind, namespace)
            if kind in ("pods", "services")
            else f"/apis/scheduling.volcano.sh/v1beta1/namespaces/{segment(namespace)}/{kind}"
        )
        return self.answer("POST", path, [("dryRun", "All")], body)

    def dry_run_apply(
        self, resource: Resource, body: dict[str, Any], *, field_manager: str, **extra: str
    ) -> tuple[int, dict[str, Any]]:
        """Server-side apply with dryRun=All of one custom object (namespaced or not), answered
        as dry_run_create answers: the HTTP status and the object or Status; only an unreachable
        server raises. ``extra``: more query parameters (``fieldValidation="Strict"``)."""
        metadata = body.get("metadata") or {}
        path = resource_path(resource, metadata.get("namespace"), str(metadata.get("name") or ""))
        query = [("fieldManager", field_manager), ("dryRun", "All"), *extra.items()]
        return self.answer("PATCH", path, query, body, content_type=APPLY_PATCH)

    def probe(self, kind: str, name: str, namespace: str | None = None) -> tuple[int, str]:
        """Whether an object exists, by a metadata-only GET (a Secret's data never leaves the
        server): the HTTP status (200, 404, 403...) and the server's message. kind: secrets,
        configmaps, persistentvolumeclaims, serviceaccounts (namespaced), priorityclasses,
        queues (Volcano's, cluster-scoped). A 404 for a kind the server does not serve (no
        such CRD) reads 404 with the message "the server could not find the requested
        resource"."""
        if kind == "priorityclasses":
            path = f"/apis/scheduling.k8s.io/v1/priorityclasses/{segment(name)}"
        elif kind == "queues":
            path = f"/apis/scheduling.volcano.sh/v1beta1/queues/{segment(name)}"
        else:
            path = core_path(kind, namespace, name)
        status, body = self.answer(
            "GET", path, accept="application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1"
        )
        return (200, "") if status < 300 else (status, str(body.get("message") or ""))

    def server_version(self) -> str:
        """The API server's gitVersion ("v1.37.2", "v1.35.1-eks-3b9e8f2")."""
        with self.errors("read", what="the API server's version"):
            return str(self.call("GET", "/version").get("gitVersion"))

    def access_review(self, attributes: dict[str, str]) -> dict[str, Any]:
        """A SelfSubjectAccessReview of resourceAttributes (verb, group, resource, namespace...):
        the server's status (allowed, denied, reason, evaluationError). The server answers it
        and stores nothing, so it is safe in check mode."""
        body = {
            "apiVersion": "authorization.k8s.io/v1",
            "kind": "SelfSubjectAccessReview",
            "spec": {"resourceAttributes": attributes},
        }
        asked = " ".join(v for v in (attributes.get("verb"), attributes.get("resource")) if v)
        with self.errors(f"asking whether these credentials may {asked}, for"):
            answer = self.call(
                "POST", "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews", body=body
            )
        status: dict[str, Any] = answer.get("status") or {}
        return status

    def resource_quotas(self, namespace: str) -> list[dict[str, Any]]:
        with self.errors(f"listing resourcequotas in namespace {namespace!r} for"):
            items: list[dict[str, Any]] = self.call(
                "GET", core_path("resourcequotas", namespace)
            ).get("items", [])
            return items


def names_object(exc: Any) -> bool:
    """A 404 about a named object (as opposed to an unknown resource type)."""
    try:
        details = json.loads(exc.body).get("details") or {}
    except (TypeError, ValueError, AttributeError):
        return False
    return bool(details.get("name"))
