"""What the local cluster takes from the charts (rendered with the built helm): each addon
process's ServiceAccount and rules, and the operator's webhook objects, changed only where a
local process needs it."""

from __future__ import annotations

from pathlib import Path

import pytest

from tfjob_kit.cluster import chart_rbac, jobset, kueue, trainer, training_operator
from tfjob_kit.cluster.identity import IDENTITIES, LOCAL_NAMESPACE
from tfjob_kit.cluster.local_controller import CONFIG_KINDS, LocalController
from tfjob_kit.cluster.paths import state_dir


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


@pytest.mark.parametrize(
    "controller", [jobset.CONTROLLER, trainer.CONTROLLER], ids=lambda c: c.chart
)
def test_the_local_controller_objects_are_the_charts_pointed_at_the_local_process(
    controller: LocalController,
) -> None:
    """JobSet's and Trainer's webhook configurations keep the chart's names, webhooks, rules
    and selectors; only the Service they call (an ExternalName for localhost), its port and the
    caBundle (the local CA) change."""
    chart = {
        d["kind"]: d
        for d in chart_rbac.rendered(controller.process, LOCAL_NAMESPACE)
        if d["kind"] in (*CONFIG_KINDS, "Service")
    }
    objects = controller.webhook_objects(31234, b"CA")
    service = objects[0]
    assert service["metadata"] == {
        "name": chart["Service"]["metadata"]["name"],
        "namespace": LOCAL_NAMESPACE,
    }
    assert service["spec"] == {"type": "ExternalName", "externalName": "localhost"}
    assert [o["kind"] for o in objects[1:]] == list(CONFIG_KINDS)
    for local in objects[1:]:
        ours = chart[local["kind"]]
        assert local["metadata"]["name"] == ours["metadata"]["name"]
        assert "labels" not in local["metadata"]
        for hook, charted in zip(local["webhooks"], ours["webhooks"], strict=True):
            assert hook["clientConfig"]["caBundle"] == "Q0E="
            assert hook["clientConfig"]["service"] == {
                **charted["clientConfig"]["service"],
                "port": 31234,
            }
            rest = {k: v for k, v in hook.items() if k != "clientConfig"}
            assert rest == {k: v for k, v in charted.items() if k != "clientConfig"}


def test_the_local_jobset_configuration_is_the_charts_made_local() -> None:
    """Loopback ports, the certificate from the cluster's directory, the rotator and leader
    election off, no metrics."""
    config = jobset.configuration("js", {"jobset_webhook": 31234, "jobset_health": 31235})
    assert config["internalCertManagement"] == {"enable": False}
    assert config["webhook"] == {
        "port": 31234,
        "host": "127.0.0.1",
        "certDir": str(jobset.cert_dir("js")),
    }
    assert config["health"] == {"healthProbeBindAddress": "127.0.0.1:31235"}
    assert config["leaderElection"]["leaderElect"] is False
    assert config["metrics"] == {"bindAddress": "0"}
    assert config["apiVersion"] == "config.jobset.x-k8s.io/v1alpha1"


def test_the_local_trainer_configuration_is_the_charts_made_local() -> None:
    """The same for Trainer, whose Configuration names no certificate directory: the webhook
    server reads controller-runtime's default under TMPDIR, which the process gets from the
    cluster's own directory."""
    config = trainer.configuration("t2", {"trainer_webhook": 31234, "trainer_health": 31235})
    chart = trainer.CONTROLLER.chart_configuration()
    assert config["certManagement"] == {**chart["certManagement"], "enable": False}
    assert config["webhook"] == {"port": 31234, "host": "127.0.0.1"}
    assert config["health"] == {"healthProbeBindAddress": "127.0.0.1:31235"}
    assert config["leaderElection"] == {**chart["leaderElection"], "leaderElect": False}
    assert config["metrics"] == {"bindAddress": "0"}
    assert config["apiVersion"] == "config.trainer.kubeflow.org/v1alpha1"
    environment = trainer.environment("t2")
    assert trainer.cert_dir("t2") == (
        Path(environment["TMPDIR"]) / "k8s-webhook-server" / "serving-certs"
    )
    assert Path(environment["TMPDIR"]).is_relative_to(state_dir("t2"))


def test_the_local_kueue_configuration_manages_trainjobs_only_beside_trainer() -> None:
    """The same for Kueue, with its own certificate rotator's directory; on a cluster without
    Trainer's process (no TrainJob CRD) it manages TFJobs alone, as a MultiKueue worker without
    Trainer must be told by its manager too."""
    config = kueue.configuration("kq", {"kueue_webhook": 31234, "kueue_health": 31235})
    assert config["webhook"] == {
        "port": 31234,
        "host": "127.0.0.1",
        "certDir": str(kueue.cert_dir("kq")),
    }
    assert config["leaderElection"]["leaderElect"] is False
    assert config["integrations"]["frameworks"] == ["kubeflow.org/tfjob"]
    chart = kueue.CONTROLLER.chart_configuration()
    assert chart["integrations"]["frameworks"] == ["kubeflow.org/tfjob", kueue.TRAINJOB_FRAMEWORK]
