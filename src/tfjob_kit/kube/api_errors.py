"""Errors from the API server, turned into sentences that say what to do.

Every failure users commonly hit reads clearly without a traceback: the API server cannot be
reached, RBAC forbids a verb on a resource, the CRD is not installed, another field manager owns
the fields, the server rejects the object.
"""

from __future__ import annotations

import json
import re
from typing import Any

from tfjob_kit.kube.kinds import Resource


class KubeError(Exception):
    """A cluster operation failed; the message is meant for the user as is."""

    def __init__(self, message: str, reason: str = "error", status: int | None = None) -> None:
        super().__init__(message)
        self.reason = reason
        self.status = status


# The API server's 403 message: who may not do what, to which resource, where (read here and by
# the preflight's permission findings).
FORBIDDEN = re.compile(
    r'User "(?P<user>[^"]*)" cannot (?P<verb>\S+) resource "(?P<resource>[^"]+)"'
    r'(?: in API group "(?P<group>[^"]*)")?(?: in the namespace "(?P<namespace>[^"]*)")?'
)
_CONFLICT = re.compile(r'conflicts? with "(?P<manager>[^"]+)"')
# The API server's words when an admission webhook cannot be called (k8s.io/apiserver's
# webhook errors): the webhook's name, then the URL it posted to and the transport's error.
_WEBHOOK_CALL = re.compile(
    r'failed calling webhook "(?P<webhook>[^"]+)": failed to call webhook: '
    r'(?:Post "(?P<url>[^"]+)": )?(?P<detail>.*)'
)
# A Service's in-cluster address, as the API server builds it for service-based webhooks.
_SERVICE_HOST = re.compile(
    r"https://(?P<name>[^./:]+)\.(?P<namespace>[^./:]+)\.svc(?::(?P<port>\d+))?"
)
# Webhooks whose configuration is known: the training-operator registers its validating webhook
# in a ValidatingWebhookConfiguration whose name the operator fixes (v1.9.4's
# cmd/training-operator.v1/main.go; the chart's training-operator.webhookConfigurationName).
OPERATOR_WEBHOOK = "validator.tfjob.training-operator.kubeflow.org"
OPERATOR_WEBHOOK_CONFIGURATION = "validator.training-operator.kubeflow.org"


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
    """The Status object the API server answered an error with ({} if none)."""
    return _status_body(exc)


def webhook_unavailable(what: str, message: str) -> KubeError | None:
    """A KubeError for an admission webhook the API server could not call (None when
    ``message`` is not that): it names the webhook, its configuration where known, the
    Service or URL it is served at, and how to recover."""
    match = _WEBHOOK_CALL.search(message)
    if match is None:
        return None
    webhook, url, detail = match["webhook"], match["url"], match["detail"].rstrip(". ")
    where = ""
    if url and (service := _SERVICE_HOST.match(url)):
        port = f" port {service['port']}" if service["port"] else ""
        where = f"Service {service['namespace']}/{service['name']}{port} ({url})"
    elif url:
        where = url
    served = f", served at {where}," if where else ""
    if webhook == OPERATOR_WEBHOOK:
        configuration = OPERATOR_WEBHOOK_CONFIGURATION
        head = (
            f'the training-operator\'s admission webhook "{webhook}" '
            f"(ValidatingWebhookConfiguration {configuration}){served} cannot be called: {detail}"
        )
        recover = (
            "The operator that serves it is not running or not ready. Restart it: on the local "
            "cluster run `tfjob-kit cluster up` (it restarts the operator); on another cluster "
            "check the training-operator's Deployment and its Service's endpoints, or re-run the "
            "tfjob.kit.training_operator role. If the operator was uninstalled, delete the "
            "webhook it left behind: "
            f"`kubectl delete validatingwebhookconfiguration {configuration}`"
        )
    else:
        head = f'the admission webhook "{webhook}"{served} cannot be called: {detail}'
        recover = (
            "The component that serves it is not running or not ready: restart it. If it was "
            "uninstalled, delete the webhook configuration that holds the webhook (find it with "
            "`kubectl get validatingwebhookconfigurations,mutatingwebhookconfigurations`)"
        )
    return KubeError(f"{what}: {head}. {recover}", "webhook-unavailable", 500)


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
    *,
    what: str = "",
) -> KubeError:
    """A KubeError for an answer outside 2xx (transport.ApiError) to doing `action` to `what`
    (by default, the object that ``resource``, ``namespace`` and ``name`` say)."""
    status = int(getattr(exc, "status", 0) or 0)
    body = _status_body(exc)
    message = str(body.get("message") or getattr(exc, "reason", "") or exc)
    what = what or (
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
    if status == 403 and (match := FORBIDDEN.search(message)):
        return _forbidden(f"{action} {what}", match, status)
    if status >= 500 and (webhook := webhook_unavailable(f"{action} {what}", message)):
        return webhook
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
        return _conflict(f"{action} {what}", message, details, status)
    if status == 422:
        return _invalid(f"{action} {what}", message, details, status)
    return KubeError(
        f"{action} {what}: {message} (HTTP {status or '?'})",
        str(body.get("reason") or "error").lower(),
        status,
    )


def _forbidden(doing: str, match: re.Match[str], status: int) -> KubeError:
    """A 403 that names the user, verb and resource RBAC refused."""
    group = match["group"]
    res = f"{match['resource']}.{group}" if group else match["resource"]
    scope = f" in namespace {match['namespace']!r}" if match["namespace"] else " cluster-wide"
    return KubeError(
        f"{doing}: forbidden by RBAC: user {match['user']!r} may not "
        f"{match['verb']!r} {res}{scope}. Grant the verb with a Role/ClusterRole bound to "
        "that user, or use credentials that have it",
        "forbidden",
        status,
    )


def _conflict(doing: str, message: str, details: dict[str, Any], status: int) -> KubeError:
    """A server-side apply conflict: the field managers that own the fields, and the fields."""
    managers = sorted(set(_CONFLICT.findall(message)))
    fields = [
        str(c.get("field", ""))
        for c in details.get("causes", [])
        if isinstance(c, dict) and c.get("field")
    ]
    return KubeError(
        f"{doing}: conflict with field manager(s) {', '.join(managers) or '?'} "
        f"over {', '.join(fields) or 'some fields'}. Set force_conflicts: true to take the "
        "fields over, or change them through the manager that owns them",
        "conflict",
        status,
    )


def _invalid(doing: str, message: str, details: dict[str, Any], status: int) -> KubeError:
    """A 422: each cause as field: message, else the server's message."""
    causes = [
        f"{c.get('field', '')}: {c.get('message', '')}".strip(": ")
        for c in details.get("causes", [])
        if isinstance(c, dict)
    ]
    detail = "; ".join(causes) if causes else message
    return KubeError(f"{doing}: the API server rejected it: {detail}", "invalid", status)
