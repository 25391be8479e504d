"""Several sets of objects read over one connection (`tfjob.kit.objects_info`): each set by
apiVersion and kind, found through the API server's discovery, narrowed by name, namespace and
selectors, as kubernetes.core.k8s_info reads one set.

A role that reads five things before it decides pays for one module run instead of five (each
run of a module starts Python and imports kubernetes.client, over a second on two cores).
Secrets come back without their data: what a role decides from a Secret is in its metadata, and
nothing here needs no_log.
"""

from __future__ import annotations

import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tfjob_kit.kube.client import Client, names_object, transport_reason
from tfjob_kit.kube.errors import KubeError, from_api_exception, status_body, unreachable

SECRET_CONTENT = ("data", "stringData")


@dataclass(frozen=True)
class Query:
    """One set of objects: of a kind, by name or all, in a namespace or all namespaces."""

    kind: str
    api_version: str = "v1"
    name: str = ""
    namespace: str = ""
    label_selectors: Sequence[str] = field(default_factory=tuple)
    field_selectors: Sequence[str] = field(default_factory=tuple)

    def describe(self) -> str:
        what = f"{self.kind} ({self.api_version})"
        if self.name:
            what += f" {self.name!r}"
        where = f" in namespace {self.namespace!r}" if self.namespace else ""
        selectors = [*self.label_selectors, *self.field_selectors]
        return what + where + (f" with {', '.join(selectors)}" if selectors else "")


@dataclass
class Found:
    objects: list[dict[str, Any]]
    api_found: bool  # the server serves the kind (a CRD not installed: False, no objects)


def _without_secret_content(item: dict[str, Any]) -> dict[str, Any]:
    if item.get("kind") != "Secret":
        return item
    return {k: v for k, v in item.items() if k not in SECRET_CONTENT}


def read(client: Client, queries: Mapping[str, Query]) -> dict[str, Found]:
    """Each query's objects, by the query's key. A name that is not there reads as no objects;
    a kind the server does not serve as no objects with api_found False. Any other answer
    (forbidden, unreachable, a bad selector) raises KubeError naming the query."""
    from kubernetes.dynamic import DynamicClient
    from kubernetes.dynamic.exceptions import DynamicApiError, NotFoundError, ResourceNotFoundError
    from urllib3.exceptions import HTTPError

    found: dict[str, Found] = {}
    # The discovery cache lives as long as this call, in a directory of its own.
    with tempfile.TemporaryDirectory(prefix="tfjob-kit-discovery-") as cache:
        try:
            dynamic: Any = DynamicClient(  # type: ignore[no-untyped-call]
                client.api, cache_file=str(Path(cache) / "discovery.json")
            )
        except HTTPError as exc:
            raise unreachable(client.host, transport_reason(exc)) from None
        except DynamicApiError as exc:
            raise from_api_exception(exc, "discovering the API of") from None
        for key, query in queries.items():
            try:
                resource = dynamic.resources.get(api_version=query.api_version, kind=query.kind)
            except ResourceNotFoundError:
                found[key] = Found([], api_found=False)
                continue
            except HTTPError as exc:
                raise unreachable(client.host, transport_reason(exc)) from None
            try:
                answer = dynamic.get(
                    resource,
                    name=query.name or None,
                    namespace=(query.namespace or None) if resource.namespaced else None,
                    label_selector=",".join(query.label_selectors) or None,
                    field_selector=",".join(query.field_selectors) or None,
                ).to_dict()
            except NotFoundError as exc:
                if query.name and names_object(exc):
                    found[key] = Found([], api_found=True)
                    continue
                raise _error(key, query, exc) from None
            except DynamicApiError as exc:
                raise _error(key, query, exc) from None
            except HTTPError as exc:
                raise unreachable(client.host, transport_reason(exc)) from None
            items = [answer] if query.name else answer.get("items", [])
            for item in items:  # list items carry no apiVersion and kind
                item.setdefault("apiVersion", query.api_version)
                item.setdefault("kind", query.kind)
            found[key] = Found([_without_secret_content(i) for i in items], api_found=True)
    return found


def _error(key: str, query: Query, exc: Any) -> KubeError:
    """The server's refusal, for the query by its key (a 403 says who may not do what)."""
    error = from_api_exception(exc, "reading")
    detail = str(error).removeprefix("reading the object: ")
    if detail == str(error):  # not one of the refusals the toolkit words: the server's message
        detail = str(status_body(exc).get("message") or getattr(exc, "reason", "") or exc)
    return KubeError(f"{key}: reading {query.describe()}: {detail}", error.reason, error.status)
