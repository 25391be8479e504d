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

from tfjob_kit.kube.client import Client, names_object

SECRET_CONTENT = ("data", "stringData")


@dataclass(frozen=True)
class Query:
    """One set of objects: of a kind, by name, by several names or all, in a namespace or all
    namespaces."""

    kind: str
    api_version: str = "v1"
    name: str = ""
    names: Sequence[str] | None = None  # given, even empty: these names only
    namespace: str = ""
    label_selectors: Sequence[str] = field(default_factory=tuple)
    field_selectors: Sequence[str] = field(default_factory=tuple)

    def describe(self, name: str = "") -> str:
        what = f"{self.kind} ({self.api_version})"
        if name or self.name:
            what += f" {name or self.name!r}"
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
    from kubernetes.dynamic.exceptions import NotFoundError, ResourceNotFoundError

    found: dict[str, Found] = {}
    # The discovery cache lives as long as this call, in a directory of its own.
    with tempfile.TemporaryDirectory(prefix="tfjob-kit-discovery-") as cache:
        with client.errors("discovering", what="the API server's kinds"):
            dynamic: Any = DynamicClient(  # type: ignore[no-untyped-call]
                client.api, cache_file=str(Path(cache) / "discovery.json")
            )
        for key, query in queries.items():
            with client.errors(f"{key}: reading", what=query.describe()):
                try:
                    resource = dynamic.resources.get(api_version=query.api_version, kind=query.kind)
                except ResourceNotFoundError:
                    found[key] = Found([], api_found=False)
                    continue
            items: list[dict[str, Any]] = []
            for name in [query.name] if query.names is None else query.names:
                with client.errors(f"{key}: reading", what=query.describe(name)):
                    try:
                        answer = dynamic.get(
                            resource,
                            name=name or None,
                            namespace=(query.namespace or None) if resource.namespaced else None,
                            label_selector=",".join(query.label_selectors) or None,
                            field_selector=",".join(query.field_selectors) or None,
                        ).to_dict()
                    except NotFoundError as exc:
                        if name and names_object(exc):
                            continue
                        raise
                items += [answer] if name else answer.get("items", [])
            for item in items:  # list items carry no apiVersion and kind
                item.setdefault("apiVersion", query.api_version)
                item.setdefault("kind", query.kind)
            found[key] = Found([_without_secret_content(i) for i in items], api_found=True)
    return found
