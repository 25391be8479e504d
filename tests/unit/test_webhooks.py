"""The pure half of kube/webhooks.py: a webhook failure's message mapped to its configuration.

The messages are the API server's own words (k8s.io/apiserver's webhook errors), as a Kubernetes
v1.34 server answered a dry-run pod creation with Volcano's webhook configurations left behind
(tests/integration/test_leftover_webhooks.py checks the same against the real server).
"""

from __future__ import annotations

from typing import Any

import pytest

from tfjob_kit.kube import webhooks

SERVICE_GONE = (
    'Internal error occurred: failed calling webhook "mutatepod.volcano.sh": failed to call '
    'webhook: Post "https://volcano-admission.volcano-system.svc:443/pods/mutate?timeout=10s": '
    'service "volcano-admission" not found'
)


def _config(kind: str, name: str, hook: str, client: dict[str, Any], **extra: Any) -> Any:
    return {
        "kind": kind,
        "metadata": {"name": name, **extra},
        "webhooks": [
            {
                "name": hook,
                "clientConfig": client,
                "sideEffects": "NoneOnDryRun",
                "rules": [
                    {"apiGroups": [""], "operations": ["CREATE"], "resources": ["pods"]},
                ],
            }
        ],
    }


VOLCANO_SERVICE = {"service": {"namespace": "volcano-system", "name": "volcano-admission"}}
HOOKS = webhooks.webhooks(
    [
        _config(
            "MutatingWebhookConfiguration",
            "volcano-admission-service-pods-mutate",
            "mutatepod.volcano.sh",
            VOLCANO_SERVICE,
        ),
        # The same webhook name in another configuration, pointing elsewhere.
        _config(
            "MutatingWebhookConfiguration",
            "other",
            "mutatepod.volcano.sh",
            {"service": {"namespace": "other", "name": "volcano-admission", "port": 8443}},
        ),
        _config(
            "ValidatingWebhookConfiguration",
            "by-url",
            "url.example.com",
            {"url": "https://127.0.0.1:9443/validate"},
            annotations={
                "meta.helm.sh/release-name": "volcano",
                "meta.helm.sh/release-namespace": "volcano-system",
            },
        ),
    ],
    [{"name": "volcano", "namespace": "volcano-system"}],
)


def test_a_failure_maps_to_the_configuration_it_posted_to() -> None:
    failure = webhooks.failed_webhook(SERVICE_GONE)
    assert failure == (
        "mutatepod.volcano.sh",
        "https://volcano-admission.volcano-system.svc:443/pods/mutate?timeout=10s",
        "service-missing",
        'service "volcano-admission" not found',
    )
    matched = webhooks.match_failure(HOOKS, failure[0], failure[1])
    assert [h.configuration for h in matched] == ["volcano-admission-service-pods-mutate"]
    hook = matched[0]
    assert hook.failure_policy == "Fail"  # v1's default when the configuration omits it
    assert hook.target == "Service volcano-system/volcano-admission port 443"
    assert hook.resources == ("CREATE pods",)
    assert not hook.toolkit
    assert hook.delete_command() == (
        "kubectl delete mutatingwebhookconfiguration volcano-admission-service-pods-mutate"
    )


def test_a_url_webhook_and_the_toolkit_releases() -> None:
    message = (
        'failed calling webhook "url.example.com": failed to call webhook: Post '
        '"https://127.0.0.1:9443/validate?timeout=10s": dial tcp 127.0.0.1:9443: connect: '
        "connection refused"
    )
    name, url, reason, _ = webhooks.failed_webhook(message) or ("", None, "", "")
    assert reason == "connection-refused"
    (hook,) = webhooks.match_failure(HOOKS, name, url)
    assert hook.configuration == "by-url" and hook.toolkit


@pytest.mark.parametrize(
    ("detail", "reason"),
    [
        ('no endpoints available for service "volcano-admission"', "no-endpoints"),
        ("dial tcp 10.0.0.1:443: connect: connection refused", "connection-refused"),
        ("context deadline exceeded", "timeout"),
        (
            "tls: failed to verify certificate: x509: certificate signed by unknown authority",
            "certificate",
        ),
        ("dial tcp: lookup x.example: no such host", "dns"),
        ("EOF", "call-failed"),
    ],
)
def test_reasons(detail: str, reason: str) -> None:
    assert webhooks.reason_of(detail) == reason


def test_what_is_not_a_failed_call() -> None:
    assert webhooks.failed_webhook('admission webhook "x" denied the request: no') is None
    assert webhooks.failed_webhook('admission webhook "x" does not support dry run') == (
        "x",
        None,
        "dry-run-unsupported",
        "",
    )


def test_the_message_names_each_configuration_and_the_command() -> None:
    (hook,) = [h for h in HOOKS if h.configuration == "volcano-admission-service-pods-mutate"]
    own = next(h for h in HOOKS if h.toolkit)
    found = [
        webhooks.Blocked(hook, "service-missing", "x", ["Pod in namespace default"]),
        webhooks.Blocked(own, "connection-refused", "y"),
    ]
    text = webhooks.message(found)
    assert "2 admission webhook(s) with failurePolicy Fail" in text
    assert (
        "MutatingWebhookConfiguration volcano-admission-service-pods-mutate, webhook "
        "mutatepod.volcano.sh (failurePolicy Fail) calls Service volcano-system/volcano-admission "
        "port 443: its Service does not exist; it fails creating: Pod in namespace default"
    ) in text
    assert "not the toolkit's" in text
    assert (
        "kubectl delete mutatingwebhookconfiguration volcano-admission-service-pods-mutate" in text
    )
    # The toolkit's own configuration is never in a delete command.
    assert "kubectl delete validatingwebhookconfiguration by-url" not in text
    assert "The toolkit's own (by-url)" in text
    assert webhooks.message([]) == "no admission webhook blocks pod creation"


def test_an_ignore_webhook_is_reported_but_blocks_nothing() -> None:
    (hook,) = webhooks.webhooks(
        [
            {
                **_config("ValidatingWebhookConfiguration", "soft", "soft.example.com", {}),
                "webhooks": [
                    {"name": "soft.example.com", "failurePolicy": "Ignore", "clientConfig": {}}
                ],
            }
        ]
    )
    found = webhooks.Blocked(hook, "service-missing", "")
    assert not found.blocking
    assert webhooks.message([found]).startswith(
        "admission webhooks with failurePolicy Ignore cannot be called"
    )


def test_a_webhook_without_dry_run_support_is_reported_but_blocks_nothing() -> None:
    (hook,) = [h for h in HOOKS if h.configuration == "volcano-admission-service-pods-mutate"]
    assert hook.failure_policy == "Fail"
    found = webhooks.Blocked(hook, "dry-run-unsupported", "", ["Pod in namespace default"])
    assert not found.blocking  # a dry run cannot tell whether it works for real requests
    assert "so a dry run cannot tell whether it works" in found.line()
    assert webhooks.Blocked(hook, "service-missing", "").blocking
