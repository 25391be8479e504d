"""What the local cluster takes from the charts (rendered with the built helm): each addon
process's ServiceAccount and rules, and the operator's webhook objects, changed only where a
local process needs it."""

from __future__ import annotations

import pytest

from tfjob_kit.cluster import chart_rbac, training_operator
from tfjob_kit.cluster.identity import IDENTITIES, LOCAL_NAMESPACE


@pytest.mark.parametrize("process", sorted(chart_rbac.COMPONENTS))
def test_each_charted_process_has_the_charts_account_and_rules(process: str) -> None:
    assert process in IDENTITIES
    account = chart_rbac.service_account(process)
    accounts = {
        d["metadata"]["name"] for d in chart_rbac.rendered(process) if d["kind"] == "ServiceAccount"
    }
    assert account in accounts
    assert chart_rbac.grants(process).cluster_rules


def test_the_local_webhook_is_the_charts_pointed_at_the_local_process() -> None:
    chart = {
        d["kind"]: d
        for d in chart_rbac.rendered("training-operator", LOCAL_NAMESPACE)
        if d["kind"] in ("Service", "Secret", "ValidatingWebhookConfiguration", "Deployment")
    }
    service, config = training_operator.webhook_objects(31234)
    secret = training_operator.webhook_secret()

    # Names and namespace are the chart's; the operator is told the same ones.
    args = chart["Deployment"]["spec"]["template"]["spec"]["containers"][0]["args"]
    assert f"--webhook-service-name={service['metadata']['name']}" in args
    assert f"--webhook-secret-name={secret['metadata']['name']}" in args
    assert config["metadata"]["name"] == "validator.training-operator.kubeflow.org"
    assert service["metadata"]["namespace"] == secret["metadata"]["namespace"] == LOCAL_NAMESPACE
    assert secret["type"] == "Opaque" and "data" not in secret

    # Changed: the Service reaches localhost, the webhook calls the local port, no labels (a
    # teardown looking for the releases' leftovers by label must not find the local objects).
    assert service["spec"] == {"type": "ExternalName", "externalName": "localhost"}
    for obj in (service, config, secret):
        assert "labels" not in obj["metadata"]
    (hook,) = config["webhooks"]
    (charted,) = chart["ValidatingWebhookConfiguration"]["webhooks"]
    target = hook["clientConfig"]["service"]
    assert target == {**charted["clientConfig"]["service"], "port": 31234}
    assert "caBundle" not in hook["clientConfig"]  # the operator's rotator injects it

    # Everything else is the chart's, and the cached rendering is left as it was.
    assert {k: v for k, v in hook.items() if k != "clientConfig"} == {
        k: v for k, v in charted.items() if k != "clientConfig"
    }
    assert charted["clientConfig"]["service"]["port"] == 443
    assert chart["Service"]["spec"]["type"] == "ClusterIP"
