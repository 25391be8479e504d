"""The nvidia-device-plugin chart: GPU node selection, configuration and time-slicing, the
RuntimeClass, lint, render and policy checks (no cluster)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from ._chart import (
    CHARTS,
    Chart,
    Doc,
    check_every_object_carries_the_chart_labels,
    check_helm_lint_strict,
    check_pod_templates_match_the_kubernetes_schema,
    check_rbac_is_least_privilege,
    check_values_files_follow_the_conventions,
    lint_cases,
    lint_id,
    of_kind,
    one,
    sets,
    variant_id,
)

PATH = CHARTS / "nvidia-device-plugin"


def test_device_plugin_daemonset_selects_gpu_nodes(device_plugin: Chart) -> None:
    docs = device_plugin.render()
    daemonset = one(docs, "DaemonSet")
    spec = daemonset["spec"]["template"]["spec"]
    terms = spec["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"][
        "nodeSelectorTerms"
    ]
    assert terms == [
        {
            "matchExpressions": [
                {"key": "nvidia.com/gpu.present", "operator": "In", "values": ["true"]}
            ]
        },
        {
            "matchExpressions": [
                {
                    "key": "feature.node.kubernetes.io/pci-10de.present",
                    "operator": "In",
                    "values": ["true"],
                }
            ]
        },
    ]
    assert {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"} in spec[
        "tolerations"
    ]
    assert spec["priorityClassName"] == "system-node-critical"
    assert spec["automountServiceAccountToken"] is False
    container = spec["containers"][0]
    assert container["image"] == "nvcr.io/nvidia/k8s-device-plugin:v0.17.2"
    env = {e["name"]: e["value"] for e in container["env"]}
    mounts = {m["name"]: m["mountPath"] for m in container["volumeMounts"]}
    assert env["CONFIG_FILE"] == f"{mounts['config']}/config.yaml"
    assert mounts["device-plugins"] == "/var/lib/kubelet/device-plugins"
    # The DaemonSet must not select (and adopt) the helm test pod.
    selector = daemonset["spec"]["selector"]["matchLabels"]
    test_pod = one(docs, "Pod")
    assert not selector.items() <= test_pod["metadata"]["labels"].items()

    custom = device_plugin.render(
        *sets(
            "gpuNodeLabels={gpu-node,accelerator=nvidia}",
            "tolerations[0].key=dedicated",
            "tolerations[0].operator=Exists",
        )
    )
    spec = one(custom, "DaemonSet")["spec"]["template"]["spec"]
    terms = spec["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"][
        "nodeSelectorTerms"
    ]
    assert [t["matchExpressions"][0]["operator"] for t in terms] == ["Exists", "In"]
    assert {"key": "dedicated", "operator": "Exists"} in spec["tolerations"]


def _plugin_config(docs: list[Doc]) -> Doc:
    config = yaml.safe_load(one(docs, "ConfigMap")["data"]["config.yaml"])
    assert isinstance(config, dict)
    return config


def test_device_plugin_config_and_time_slicing(device_plugin: Chart) -> None:
    plain = _plugin_config(device_plugin.render())
    assert plain["version"] == "v1"
    assert plain["flags"]["migStrategy"] == "none"
    assert plain["flags"]["failOnInitError"] is True
    assert plain["flags"]["plugin"]["deviceListStrategy"] == ["envvar"]
    assert "sharing" not in plain

    docs = device_plugin.render(
        *sets(
            "sharing.timeSlicing.enabled=true",
            "sharing.timeSlicing.resources[0].name=nvidia.com/gpu",
            "sharing.timeSlicing.resources[0].replicas=8",
            "sharing.timeSlicing.failRequestsGreaterThanOne=true",
        )
    )
    sliced = _plugin_config(docs)["sharing"]["timeSlicing"]
    assert sliced == {
        "renameByDefault": False,
        "failRequestsGreaterThanOne": True,
        "resources": [{"name": "nvidia.com/gpu", "replicas": 8}],
    }

    # The pods roll when the configuration changes.
    def checksum(d: list[Doc]) -> str:
        return str(
            one(d, "DaemonSet")["spec"]["template"]["metadata"]["annotations"]["checksum/config"]
        )

    assert checksum(docs) != checksum(device_plugin.render())


def test_device_plugin_runtime_class_only_when_enabled(device_plugin: Chart) -> None:
    assert not of_kind(device_plugin.render(), "RuntimeClass")
    docs = device_plugin.render(*sets("runtimeClass.create=true"))
    runtime_class = one(docs, "RuntimeClass")
    assert runtime_class["apiVersion"] == "node.k8s.io/v1"
    assert (runtime_class["metadata"]["name"], runtime_class["handler"]) == ("nvidia", "nvidia")
    assert one(docs, "Pod")["spec"]["runtimeClassName"] == "nvidia"


@pytest.mark.parametrize(
    ("values", "namespace", "message"),
    [
        ([], "default", "refusing to install into the `default` namespace"),
        (["sharing.timeSlicing.enabled=true", "sharing.mps.enabled=true"], None, "both true"),
        (
            [
                "sharing.timeSlicing.enabled=true",
                "sharing.timeSlicing.resources[0].name=nvidia.com/gpu",
                "sharing.timeSlicing.resources[0].replicas=1",
            ],
            None,
            "replicas >= 2",
        ),
        (
            ["sharing.timeSlicing.enabled=true", "sharing.timeSlicing.renameByDefault=true"],
            None,
            "set test.resourceName=nvidia.com/gpu.shared",
        ),
        (["sharing.mps.enabled=true", "config.migStrategy=mixed"], None, "migStrategy=none"),
        (["runtimeClass.create=true", "runtimeClassName=other"], None, "differs from"),
        (["config.migStrategy=all"], None, "migStrategy"),
    ],
)
def test_device_plugin_validation_refuses_mistakes(
    device_plugin: Chart, values: list[str], namespace: str | None, message: str
) -> None:
    assert message in device_plugin.render_error(*sets(*values), namespace=namespace)


def test_device_plugin_default_namespace_when_allowed(device_plugin: Chart) -> None:
    docs = device_plugin.render(*sets("allowDefaultNamespace=true"), namespace="default")
    assert one(docs, "DaemonSet")["metadata"]["namespace"] == "default"


def test_device_plugin_is_as_restricted_as_it_can_be(device_plugin: Chart) -> None:
    docs = device_plugin.render()
    spec = one(docs, "DaemonSet")["spec"]["template"]["spec"]
    assert spec["securityContext"]["seccompProfile"]["type"] == "RuntimeDefault"
    context = spec["containers"][0]["securityContext"]
    assert context["allowPrivilegeEscalation"] is False
    assert context["capabilities"] == {"drop": ["ALL"]}
    host_paths = [v["hostPath"]["path"] for v in spec["volumes"] if "hostPath" in v]
    assert host_paths == ["/var/lib/kubelet/device-plugins"]  # the one unavoidable exception
    test_pod = one(docs, "Pod")["spec"]
    assert test_pod["securityContext"]["runAsNonRoot"] is True


# --- what every scheduler and GPU chart is checked for ----------------------------------------

VARIANTS: list[list[str]] = [[], ["runtimeClass.create=true", "sharing.timeSlicing.enabled=true"]]


@pytest.mark.parametrize("values_file", lint_cases("nvidia-device-plugin"), ids=lint_id)
def test_helm_lint_strict(device_plugin: Chart, values_file: Path | None) -> None:
    check_helm_lint_strict(device_plugin, values_file)


def test_values_files_follow_the_conventions() -> None:
    check_values_files_follow_the_conventions(PATH)


@pytest.mark.parametrize("values", VARIANTS, ids=variant_id)
def test_rbac_is_least_privilege(device_plugin: Chart, values: list[str]) -> None:
    docs = device_plugin.render(*sets(*values))
    check_rbac_is_least_privilege(device_plugin, docs)
    # talks only to the kubelet socket
    assert not of_kind(docs, "ClusterRole") and not of_kind(docs, "Role")


@pytest.mark.parametrize("values", VARIANTS, ids=variant_id)
def test_every_object_carries_the_chart_labels(device_plugin: Chart, values: list[str]) -> None:
    docs = device_plugin.render(*sets(*values))
    check_every_object_carries_the_chart_labels(device_plugin, docs)


@pytest.mark.parametrize("values", VARIANTS, ids=variant_id)
def test_pod_templates_match_the_kubernetes_schema(device_plugin: Chart, values: list[str]) -> None:
    check_pod_templates_match_the_kubernetes_schema(device_plugin.render(*sets(*values)))


def test_render_is_deterministic(device_plugin: Chart) -> None:
    assert device_plugin.render_text() == device_plugin.render_text()
