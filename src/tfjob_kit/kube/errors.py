"""Errors from the API server, turned into sentences that say what to do.

Every failure users commonly hit reads clearly without a traceback: the API server cannot be
reached, RBAC forbids a verb on a resource, the CRD is not installed, another field manager owns
the fields, the server rejects the object.
"""

from __future__ import annotations

import json
import re
from typing import Any

from tfjob_kit.kube.resources import Resource


class KubeError(Exception):
    """A cluster operation failed; the message is meant for the user as is."""

    def __init__(self, message: str, reason: str = "error", status: int | None = None) -> None:
        super().__init__(message)
        self.reason = reason
        self.status = status


_FORBIDDEN = re.compile(
    r'User "(?P<user>[^"]*)" cannot (?P<verb>\S+) resource "(?P<resource>[^"]+)"'
    r'(?: in API group "(?P<group>[^"]*)")?(?: in the namespace "(?P<namespace>[^"]*)")?'
)
_CONFLICT = re.compile(r'conflicts? with "(?P<manager>[^"]+)"')


def _status_body(exc: Any) -> dict[str, Any]:
    body = getattr(exc, "body", None) or getattr(exc, "data", None)
    if isinstance(body, bytes):
        body = body.decode("utf-8", "replace")
    try:
        parsed = json.loads(body) if isinstance(body, str) else None
    except ValueError:
        parsed = None
    return parsed if isinstance(parsed, dict) else {}


def status_body(exc: Any) -> dict[str, Any]:
    """The Status object the API server answered an ApiException with ({} if none)."""
    return _status_body(exc)


def unreachable(host: str, detail: str) -> KubeError:
    return KubeError(
        f"cannot reach the Kubernetes API server at {host}: {detail}. Check that the cluster is "
        "running and that kubeconfig/context (or host) point at it; for the local cluster run "
        "`tfjob-kit cluster up` and use its kubeconfig (`tfjob-kit cluster kubeconfig`)",
        "unreachable",
    )


def from_api_exception(
    exc: Any,
    action: str,
    resource: Resource | None = None,
    namespace: str | None = None,
    name: str | None = None,
) -> KubeError:
    """A KubeError for a kubernetes.client ApiException raised while doing `action`."""
    status = int(getattr(exc, "status", 0) or 0)
    body = _status_body(exc)
    message = str(body.get("message") or getattr(exc, "reason", "") or exc)
    what = (
        resource.describe(namespace or "", name or "")
        if resource and name
        else (resource.crd_name if resource else "the object")
    )
    if status == 401:
        return KubeError(
            f"{action} {what}: the API server rejected the credentials (401 "
            "Unauthorized); check the token, client certificate or kubeconfig user",
            "unauthorized",
            status,
        )
    if status == 403 and (match := _FORBIDDEN.search(message)):
        group = match["group"]
        res = f"{match['resource']}.{group}" if group else match["resource"]
        scope = f" in namespace {match['namespace']!r}" if match["namespace"] else " cluster-wide"
        return KubeError(
            f"{action} {what}: forbidden by RBAC: user {match['user']!r} may not "
            f"{match['verb']!r} {res}{scope}. Grant the verb with a Role/ClusterRole bound to "
            "that user, or use credentials that have it",
            "forbidden",
            status,
        )
    raw_details = body.get("details")
    details: dict[str, Any] = raw_details if isinstance(raw_details, dict) else {}
    if status == 404 and not details and resource is not None:
        return KubeError(
            f"{action} {what}: the API server has no {resource.crd_name} "
            f"({resource.api_version}): the {resource.kind} CRD is not installed on this "
            f"cluster. Install it with {resource.installed_by}",
            "crd-missing",
            status,
        )
    if status == 404 and details.get("kind") == "namespaces":
        return KubeError(
            f"{action} {what}: namespace {details.get('name')!r} does not exist; create it first",
            "namespace-missing",
            status,
        )
    if status == 409 and body.get("reason") == "Conflict" and "apply" in action:
        managers = sorted(set(_CONFLICT.findall(message)))
        fields = [
            str(c.get("field", ""))
            for c in details.get("causes", [])
            if isinstance(c, dict) and c.get("field")
        ]
        return KubeError(
            f"{action} {what}: conflict with field manager(s) {', '.join(managers) or '?'} "
            f"over {', '.join(fields) or 'some fields'}. Set force_conflicts: true to take the "
            "fields over, or change them through the manager that owns them",
            "conflict",
            status,
        )
    if status == 422:
        causes = [
            f"{c.get('field', '')}: {c.get('message', '')}".strip(": ")
            for c in details.get("causes", [])
            if isinstance(c, dict)
        ]
        detail = "; ".join(causes) if causes else message
        return KubeError(
            f"{action} {what}: the API server rejected it: {detail}", "invalid", status
        )
    return KubeError(
        f"{action} {what}: {message} (HTTP {status or '?'})",
        str(body.get("reason") or "error").lower(),
        status,
    )
