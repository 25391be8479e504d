"""Several sets of objects read over one connection (`tfjob.kit.objects_info`): each set by
apiVersion and kind, found through the API server's discovery, narrowed by name, namespace and
selectors, as kubernetes.core.k8s_info reads one set.

A role that reads five things before it decides pays for one module run instead of five (each
run of a module starts Python, near a second of CPU on two cores).
Secrets come back without their data: what a role decides from a Secret is in its metadata, and
nothing here needs no_log. A Helm release's Secret (type ``helm.sh/release.v1``) also carries
``helmChart``: the metadata of the chart it was made from (name, version, appVersion and
annotations, never the manifest or the values), which tells a release of the toolkit's chart
from another chart's of the same name.
"""

from __future__ import annotations

import base64
import json
import zlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from tfjob_kit.kube.client import Client, api_path, names_object
from tfjob_kit.kube.transport import ApiError, segment

SECRET_CONTENT = ("data", "stringData")
HELM_RELEASE_TYPE = "helm.sh/release.v1"
# A release is stored gzipped; what it may expand to is bounded (etcd holds 1.5 MiB of it).
MAX_RELEASE_BYTES = 64 * 1024 * 1024
CHART_FIELDS = ("name", "version", "appVersion", "annotations")


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


def helm_chart(secret: Mapping[str, Any]) -> dict[str, Any] | None:
    """The chart metadata of a Helm release Secret's release (Helm stores the release as
    base64 of gzipped JSON, in the Secret's base64 ``data.release``), or None when it cannot be
    read as one."""
    data = secret.get("data")
    encoded = data.get("release") if isinstance(data, Mapping) else None
    if secret.get("type") != HELM_RELEASE_TYPE or not isinstance(encoded, str):
        return None
    try:
        raw = base64.b64decode(base64.b64decode(encoded, validate=True), validate=True)
        if raw[:2] == b"\x1f\x8b":  # gzip (Helm writes it so; older releases may be plain)
            inflate = zlib.decompressobj(wbits=31)
            raw = inflate.decompress(raw, MAX_RELEASE_BYTES)
            if inflate.unconsumed_tail:
                return None
        release = json.loads(raw)
    except (ValueError, zlib.error):
        return None
    chart = release.get("chart") if isinstance(release, dict) else None
    meta = chart.get("metadata") if isinstance(chart, dict) else None
    if not isinstance(meta, dict):
        return None
    return {key: meta[key] for key in CHART_FIELDS if key in meta}


def _without_secret_content(item: dict[str, Any]) -> dict[str, Any]:
    if item.get("kind") != "Secret":
        return item
    shown = {k: v for k, v in item.items() if k not in SECRET_CONTENT}
    chart = helm_chart(item)
    if chart is not None:
        shown["helmChart"] = chart
    return shown


def _kinds(client: Client, api_version: str) -> dict[str, tuple[str, bool]]:
    """Kind -> (plural, namespaced) of what the server serves at api_version (none when it
    serves no such group version)."""
    with client.errors("discovering", what=f"the kinds the API server serves in {api_version}"):
        try:
            answer = client.call("GET", api_path(api_version))
        except ApiError as exc:
            if exc.status == 404:
                return {}
            raise
    return {
        str(r["kind"]): (str(r["name"]), bool(r.get("namespaced")))
        for r in answer.get("resources") or []
        if isinstance(r, dict) and "/" not in str(r.get("name", "")) and r.get("kind")
    }


def read(client: Client, queries: Mapping[str, Query]) -> dict[str, Found]:
    """Each query's objects, by the query's key. A name that is not there reads as no objects;
    a kind the server does not serve as no objects with api_found False. Any other answer
    (forbidden, unreachable, a bad selector) raises KubeError naming the query."""
    found: dict[str, Found] = {}
    served: dict[str, dict[str, tuple[str, bool]]] = {}  # discovery, once per group version
    for key, query in queries.items():
        if query.api_version not in served:
            served[query.api_version] = _kinds(client, query.api_version)
        if query.kind not in served[query.api_version]:
            found[key] = Found([], api_found=False)
            continue
        plural, namespaced = served[query.api_version][query.kind]
        prefix = api_path(query.api_version)
        if namespaced and query.namespace:
            prefix += f"/namespaces/{segment(query.namespace)}"
        selectors = [
            (name, ",".join(values))
            for name, values in (
                ("labelSelector", query.label_selectors),
                ("fieldSelector", query.field_selectors),
            )
            if values
        ]
        items: list[dict[str, Any]] = []
        for name in [query.name] if query.names is None else query.names:
            with client.errors(f"{key}: reading", what=query.describe(name)):
                try:
                    path = f"{prefix}/{plural}" + (f"/{segment(name)}" if name else "")
                    answer = client.call("GET", path, selectors)
                except ApiError as exc:
                    if exc.status == 404 and name and names_object(exc):
                        continue
                    raise
            items += [answer] if name else answer.get("items", [])
        for item in items:  # list items carry no apiVersion and kind
            item.setdefault("apiVersion", query.api_version)
            item.setdefault("kind", query.kind)
        found[key] = Found([_without_secret_content(i) for i in items], api_found=True)
    return found
