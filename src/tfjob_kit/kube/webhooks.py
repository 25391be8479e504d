"""Admission webhooks that would block pod creation: the leftovers of an uninstall by hand.

An operator (Volcano, say) registers Mutating/ValidatingWebhookConfigurations whose webhooks are
called on every matching request; with ``failurePolicy: Fail`` a webhook that cannot be called
fails the request. When the operator is removed by hand (its namespace or Deployment deleted),
its configurations stay, and every pod creation they match fails with ``failed calling webhook
"<name>": ... service "<svc>" not found`` (or no endpoints, connection refused).

``check`` finds them two ways:

* the oracle: a server-side dry run (``dryRun=All``: nothing is stored) creates a minimal Pod,
  a pod shaped as the training-operator makes them, and a Volcano PodGroup (when the cluster
  serves that CRD) in each namespace asked about. The API server calls every matching webhook on
  a dry run (``admissionregistration.k8s.io/v1`` allows only ``sideEffects`` None and
  NoneOnDryRun; a server that still holds one that does not support dry runs answers so, and
  that is reported too, but not as blocking: the dry run cannot tell whether it works). Each
  failure is mapped to its configuration by the webhook's name and the address it posted to;
* a static pass over every configuration: a webhook whose Service does not exist or has no
  ready endpoint cannot be called, whatever it matches (an ExternalName Service, or a URL, can
  only be judged by the dry run).

A webhook that answers (allows or denies) is working and is not reported. ``toolkit_releases``
names the Helm releases of this install: a configuration of one of them is marked ``toolkit``
(re-installing the release replaces it); any other is not the toolkit's, and the message says how
to delete it but the toolkit never does.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from tfjob_kit.kube.api_errors import _SERVICE_HOST, _WEBHOOK_CALL
from tfjob_kit.kube.client import Client

KINDS = ("ValidatingWebhookConfiguration", "MutatingWebhookConfiguration")
_PLURAL = {
    "ValidatingWebhookConfiguration": "validatingwebhookconfigurations",
    "MutatingWebhookConfiguration": "mutatingwebhookconfigurations",
}
PROBE_NAME = "tfjob-kit-admission-probe"
# The API server's answer when a matching webhook does not support dry runs
# (k8s.io/apiserver's webhook errors.NewDryRunUnsupportedErr).
_DRY_RUN_UNSUPPORTED = re.compile(
    r'admission webhook "(?P<webhook>[^"]+)" does not support dry run'
)
# Why a call failed, from the transport's words (first match wins).
_REASONS = (
    ("service-missing", re.compile(r'service "[^"]*" not found')),
    ("no-endpoints", re.compile(r"no endpoints available for service")),
    ("connection-refused", re.compile(r"connection refused")),
    ("timeout", re.compile(r"deadline exceeded|Timeout|timed out|i/o timeout")),
    ("certificate", re.compile(r"x509|tls:|certificate")),
    ("dns", re.compile(r"no such host")),
)
_WORDS = {
    "service-missing": "its Service does not exist",
    "no-endpoints": "its Service has no ready endpoint (nothing serves it)",
    "connection-refused": "nothing listens where it points (connection refused)",
    "timeout": "the call timed out",
    "certificate": "the server's certificate is not the one the configuration trusts",
    "dns": "its host name does not resolve",
    "dry-run-unsupported": (
        "it does not support dry runs (sideEffects Unknown or Some), so a dry run cannot tell "
        "whether it works"
    ),
    "call-failed": "the call failed",
}


@dataclass(frozen=True)
class Webhook:
    """One webhook of one configuration, as the configuration says."""

    kind: str
    configuration: str
    name: str
    failure_policy: str
    side_effects: str
    service: tuple[str, str, int, str] | None  # namespace, name, port, path
    url: str | None
    resources: tuple[str, ...]
    toolkit: bool

    @property
    def target(self) -> str:
        if self.service:
            namespace, name, port, path = self.service
            return f"Service {namespace}/{name} port {port}{' path ' + path if path else ''}"
        return self.url or "nowhere"

    def delete_command(self) -> str:
        return f"kubectl delete {self.kind.lower()} {self.configuration}"


@dataclass
class Blocked:
    """A webhook that cannot be called, and what it blocks."""

    webhook: Webhook
    reason: str
    detail: str
    blocks: list[str] = field(default_factory=list)  # "Pod in namespace default", ...

    @property
    def blocking(self) -> bool:
        """Fails what it matches. A webhook that does not support dry runs answered the dry run
        only with that: it may well work for real requests, so it is reported, not counted."""
        return self.webhook.failure_policy == "Fail" and self.reason != "dry-run-unsupported"

    def line(self) -> str:
        hook = self.webhook
        text = (
            f"{hook.kind} {hook.configuration}, webhook {hook.name} (failurePolicy "
            f"{hook.failure_policy}) calls {hook.target}: {_WORDS.get(self.reason, self.reason)}"
        )
        if self.blocks:
            text += f"; it fails creating: {', '.join(self.blocks)}"
        elif hook.resources:
            text += f"; it matches {', '.join(hook.resources)}"
        return text + (f" ({self.detail})" if self.detail else "")

    def as_dict(self) -> dict[str, Any]:
        hook = self.webhook
        return {
            "kind": hook.kind,
            "configuration": hook.configuration,
            "webhook": hook.name,
            "target": hook.target,
            "service": (
                dict(zip(("namespace", "name", "port", "path"), hook.service, strict=True))
                if hook.service
                else None
            ),
            "url": hook.url,
            "failure_policy": hook.failure_policy,
            "side_effects": hook.side_effects,
            "resources": list(hook.resources),
            "reason": self.reason,
            "detail": self.detail,
            "blocks": list(self.blocks),
            "blocking": self.blocking,
            "toolkit": hook.toolkit,
            "delete_command": hook.delete_command(),
        }


# -- pure: configurations and the server's messages --------------------------------------------


def webhooks(
    configurations: Iterable[dict[str, Any]], toolkit_releases: Iterable[dict[str, str]] = ()
) -> list[Webhook]:
    """Every webhook of these configurations (each carrying its ``kind``)."""
    releases = {(r.get("name", ""), r.get("namespace", "")) for r in toolkit_releases}
    found = []
    for config in configurations:
        meta = config.get("metadata") or {}
        annotations = meta.get("annotations") or {}
        release = (
            annotations.get("meta.helm.sh/release-name", ""),
            annotations.get("meta.helm.sh/release-namespace", ""),
        )
        for hook in config.get("webhooks") or []:
            client = hook.get("clientConfig") or {}
            service = client.get("service")
            resources = tuple(
                sorted(
                    {
                        f"{'/'.join(rule.get('operations') or [])} "
                        f"{res}{'.' + group if group else ''}"
                        for rule in hook.get("rules") or []
                        for res in rule.get("resources") or []
                        for group in rule.get("apiGroups") or [""]
                    }
                )
            )
            found.append(
                Webhook(
                    kind=str(config.get("kind", "")),
                    configuration=str(meta.get("name", "")),
                    name=str(hook.get("name", "")),
                    # admissionregistration/v1's default is Fail.
                    failure_policy=str(hook.get("failurePolicy") or "Fail"),
                    side_effects=str(hook.get("sideEffects") or ""),
                    service=(
                        (
                            str(service.get("namespace", "")),
                            str(service.get("name", "")),
                            int(service.get("port") or 443),
                            str(service.get("path") or ""),
                        )
                        if isinstance(service, dict)
                        else None
                    ),
                    url=client.get("url"),
                    resources=resources,
                    toolkit=release in releases,
                )
            )
    return found


def reason_of(detail: str) -> str:
    """The kind of failure a webhook call's error text tells (``call-failed`` if none)."""
    for reason, pattern in _REASONS:
        if pattern.search(detail):
            return reason
    return "call-failed"


def failed_webhook(message: str) -> tuple[str, str | None, str, str] | None:
    """From the API server's message about a request: the webhook that could not be called, the
    URL it posted to (None if not said), the reason (``reason_of``) and the transport's words;
    None when the message is not about a webhook that could not be called."""
    if match := _DRY_RUN_UNSUPPORTED.search(message):
        return match["webhook"], None, "dry-run-unsupported", ""
    match = _WEBHOOK_CALL.search(message)
    if match is None:
        return None
    detail = match["detail"].rstrip(". ")
    return match["webhook"], match["url"], reason_of(detail), detail


def _posts_to(hook: Webhook, url: str) -> bool:
    if hook.url:
        return url.startswith(hook.url.split("?")[0])
    if hook.service and (service := _SERVICE_HOST.match(url)):
        namespace, name, port, _ = hook.service
        return (service["namespace"], service["name"]) == (namespace, name) and int(
            service["port"] or 443
        ) == port
    return False


def match_failure(hooks: Iterable[Webhook], webhook: str, url: str | None) -> list[Webhook]:
    """The webhooks a failure names: by name (unique only within a configuration), narrowed
    by the address it posted to where the message says it."""
    named = [h for h in hooks if h.name == webhook]
    if url:
        exact = [h for h in named if _posts_to(h, url)]
        return exact or named
    return named


def message(found: list[Blocked]) -> str:
    """What to tell the user: each webhook, then the commands that delete the configurations
    that are not the toolkit's."""
    if not found:
        return "no admission webhook blocks pod creation"
    blocking = [b for b in found if b.blocking]
    head = (
        f"{len(blocking)} admission webhook(s) with failurePolicy Fail cannot be called, so the "
        "API server refuses every request they match; the component that served them is gone "
        "(uninstalled by hand?) or not running, but their configurations stay:"
        if blocking
        else "admission webhooks with failurePolicy Ignore cannot be called (requests they "
        "match wait up to their timeout, then pass unchecked):"
    )
    lines = [head, *(f"  - {b.line()}" for b in found)]
    foreign = sorted({b.webhook.delete_command() for b in found if not b.webhook.toolkit})
    own = sorted({b.webhook.configuration for b in found if b.webhook.toolkit})
    if foreign:
        lines.append(
            "They are not the toolkit's (no release of this install made them), so it does not "
            "delete them. Reinstall the component that serves them, or, if it is really gone, "
            "delete them:"
        )
        lines += [f"  {command}" for command in foreign]
    if own:
        lines.append(
            f"The toolkit's own ({', '.join(own)}): installing its release again (site.yml) "
            "serves or replaces them."
        )
    return "\n".join(lines)


# -- against the cluster -----------------------------------------------------------------------


def configurations(client: Client) -> list[dict[str, Any]]:
    """Every Validating and Mutating webhook configuration, each with its ``kind``."""
    from tfjob_kit.kube.api_errors import KubeError

    found = []
    for kind in KINDS:
        status, data = client.answer(
            "GET", f"/apis/admissionregistration.k8s.io/v1/{_PLURAL[kind]}"
        )
        if status != 200:
            raise KubeError(
                f"listing {_PLURAL[kind]}: {data.get('message') or 'HTTP ' + str(status)}; the "
                "check needs cluster-wide list on admissionregistration.k8s.io "
                f"{_PLURAL[kind]}",
                str(data.get("reason") or "error").lower(),
                status,
            )
        for item in data.get("items") or []:
            item["kind"] = kind
            found.append(item)
    return found


def _serving(client: Client, hook: Webhook) -> tuple[str, str] | None:
    """Why a service-based webhook cannot be called, from its Service and EndpointSlices
    (reason, words), or None when it may be (or cannot be judged so)."""
    if hook.service is None:
        return None
    namespace, name, _, _ = hook.service
    status, data = client.answer("GET", f"/api/v1/namespaces/{namespace}/services/{name}")
    if status == 404:
        return "service-missing", f"Service {namespace}/{name} not found"
    if status != 200 or (data.get("spec") or {}).get("type") == "ExternalName":
        return None
    status, slices = client.answer(
        "GET",
        f"/apis/discovery.k8s.io/v1/namespaces/{namespace}/endpointslices",
        [("labelSelector", f"kubernetes.io/service-name={name}")],
    )
    if status != 200:
        return None
    ready = [
        e
        for s in slices.get("items") or []
        for e in s.get("endpoints") or []
        if (e.get("conditions") or {}).get("ready") is not False
    ]
    if ready:
        return None
    return "no-endpoints", f"Service {namespace}/{name} has no ready endpoint"


def _probes(namespace: str) -> list[tuple[str, str, str, dict[str, Any]]]:
    """(what, path, query kind, body) of each object the dry run creates in a namespace."""
    # Within Pod Security "restricted": the PodSecurity admission plugin runs before the
    # validating webhooks, and a refusal of its own would hide theirs.
    container = {
        "name": "probe",
        "image": "registry.k8s.io/pause:3.10",
        "securityContext": {
            "allowPrivilegeEscalation": False,
            "capabilities": {"drop": ["ALL"]},
        },
    }
    pod_security = {
        "runAsNonRoot": True,
        "runAsUser": 65532,
        "seccompProfile": {"type": "RuntimeDefault"},
    }
    plain = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": PROBE_NAME, "namespace": namespace},
        "spec": {"containers": [container], "securityContext": pod_security},
    }
    # Labels the training-operator puts on a TFJob's pods (webhooks may select on them).
    labelled = {
        **plain,
        "metadata": {
            "name": f"{PROBE_NAME}-worker-0",
            "namespace": namespace,
            "labels": {
                "training.kubeflow.org/job-name": PROBE_NAME,
                "training.kubeflow.org/operator-name": "tfjob-controller",
                "training.kubeflow.org/replica-type": "worker",
                "training.kubeflow.org/replica-index": "0",
                "training.kubeflow.org/job-role": "master",
            },
        },
        "spec": {
            "containers": [{**container, "name": "tensorflow"}],
            "restartPolicy": "Never",
            "securityContext": pod_security,
        },
    }
    podgroup = {
        "apiVersion": "scheduling.volcano.sh/v1beta1",
        "kind": "PodGroup",
        "metadata": {"name": PROBE_NAME, "namespace": namespace},
        "spec": {"minMember": 1},
    }
    pods = f"/api/v1/namespaces/{namespace}/pods"
    groups = f"/apis/scheduling.volcano.sh/v1beta1/namespaces/{namespace}/podgroups"
    return [
        (f"Pod in namespace {namespace}", pods, "pod", plain),
        (f"a TFJob's Pod in namespace {namespace}", pods, "pod", labelled),
        (f"Volcano PodGroup in namespace {namespace}", groups, "podgroup", podgroup),
    ]


@dataclass
class Report:
    found: list[Blocked]
    checked_namespaces: list[str]
    missing_namespaces: list[str]
    configurations: int
    unexplained: list[str]  # dry-run failures of a webhook no configuration names

    @property
    def blocking(self) -> list[Blocked]:
        return [b for b in self.found if b.blocking]

    def as_dict(self) -> dict[str, Any]:
        return {
            "webhooks": [b.as_dict() for b in self.found],
            "blocking": [b.as_dict() for b in self.blocking],
            "checked_namespaces": self.checked_namespaces,
            "missing_namespaces": self.missing_namespaces,
            "configurations": self.configurations,
            "unexplained": self.unexplained,
            "message": message(self.found),
        }


def check(
    client: Client,
    namespaces: Iterable[str] = ("default",),
    toolkit_releases: Iterable[dict[str, str]] = (),
) -> Report:
    """The webhooks that cannot be called: the dry runs' failures in ``namespaces`` (each
    mapped to its configuration) and the configurations whose Service is gone or unserved."""
    hooks = webhooks(configurations(client), toolkit_releases)
    found: dict[tuple[str, str, str], Blocked] = {}
    unexplained: list[str] = []
    checked: list[str] = []
    missing: list[str] = []
    for namespace in dict.fromkeys(namespaces):
        status, _ = client.answer("GET", f"/api/v1/namespaces/{namespace}")
        if status == 404:
            missing.append(namespace)
            continue
        checked.append(namespace)
        for what, path, _kind, body in _probes(namespace):
            status, answer = client.answer("POST", path, [("dryRun", "All")], body)
            if status < 400 or (status == 404 and _kind == "podgroup"):
                continue  # admitted, or the cluster serves no PodGroups
            failure = failed_webhook(str(answer.get("message") or ""))
            if failure is None:
                continue  # refused for another reason (a working webhook's denial, a quota)
            name, url, reason, detail = failure
            matched = match_failure(hooks, name, url)
            if not matched:
                unexplained.append(f"{what}: {answer.get('message')}")
            for hook in matched:
                key = (hook.kind, hook.configuration, hook.name)
                entry = found.setdefault(key, Blocked(hook, reason, detail))
                if what not in entry.blocks:
                    entry.blocks.append(what)
    for hook in hooks:
        key = (hook.kind, hook.configuration, hook.name)
        if hook.service is None or not (why := _serving(client, hook)):
            continue
        if key not in found:
            found[key] = Blocked(hook, why[0], why[1])
        elif found[key].reason != why[0]:
            # The Service says why (the API server's words may be of a proxy on the way).
            entry = found[key]
            entry.detail = f"{why[1]}; the API server said: {entry.detail}"
            entry.reason = why[0]
    ordered = sorted(
        found.values(),
        key=lambda b: (not b.blocking, b.webhook.kind, b.webhook.configuration, b.webhook.name),
    )
    return Report(
        ordered, checked, missing, len({(h.kind, h.configuration) for h in hooks}), unexplained
    )
