"""A chart's webhook objects pointed at a local process: the one change every local component
with webhooks needs (and, for Kueue, its CRDs' conversion webhooks). The Service becomes an
ExternalName for ``localhost`` (the API server resolves it to ``localhost:<port>`` and verifies
the serving certificate against ``<service>.<namespace>.svc``, the name the certificate carries),
each webhook calls the local port in the local processes' namespace, and the chart's labels and
annotations are dropped (the objects belong to the local cluster, not to a Helm release a
teardown would look for)."""

from __future__ import annotations

import base64
from typing import Any

from tfjob_kit.cluster.identity import LOCAL_NAMESPACE
from tfjob_kit.cluster.paths import ClusterError


def pointed_at_local(
    chart: str,
    service: dict[str, Any],
    configurations: list[dict[str, Any]],
    port: int,
    ca: bytes | None,
) -> list[dict[str, Any]]:
    """``service`` and ``configurations`` (copies of the chart's, changed in place) pointed at
    the process listening on ``port``: with ``ca`` as every webhook's caBundle, or with none
    when the process's own certificate rotator injects it."""
    for obj in (service, *configurations):
        obj["metadata"].pop("labels", None)
        obj["metadata"].pop("annotations", None)
    service["spec"] = {"type": "ExternalName", "externalName": "localhost"}
    for config in configurations:
        for hook in config["webhooks"]:
            target = hook["clientConfig"]["service"]
            if target["name"] != service["metadata"]["name"]:
                raise ClusterError(f"chart {chart}: webhook {hook['name']} calls {target}")
            target["namespace"] = LOCAL_NAMESPACE
            target["port"] = port
            if ca is None:
                hook["clientConfig"].pop("caBundle", None)
            else:
                hook["clientConfig"]["caBundle"] = base64.b64encode(ca).decode("ascii")
    return [service, *configurations]


def conversions_pointed_at_local(
    crds: list[dict[str, Any]], service: str, port: int, ca: bytes | None
) -> list[dict[str, Any]]:
    """``crds`` (changed in place) whose conversion webhook calls the local process through the
    Service ``service`` of the local processes' namespace on ``port``: with ``ca`` as caBundle,
    or with none when the process's own certificate rotator injects it."""
    for crd in crds:
        webhook = (crd["spec"].get("conversion") or {}).get("webhook")
        if webhook is None:
            continue
        webhook["clientConfig"]["service"].update(
            name=service, namespace=LOCAL_NAMESPACE, port=port
        )
        if ca is None:
            webhook["clientConfig"].pop("caBundle", None)
        else:
            webhook["clientConfig"]["caBundle"] = base64.b64encode(ca).decode("ascii")
    return crds
