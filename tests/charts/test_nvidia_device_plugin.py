"""The nvidia-device-plugin chart: GPU node selection, configuration and time-slicing, the
RuntimeClass, lint, render and policy checks (no cluster)."""

from __future__ import annotations

import pytest
import yaml

from ._chart import (
    CHARTS,
    Args,
    Chart,
    Doc,
    Shared,
    of_kind,
    one,
    scenario_id,
    scenarios,
    sets,
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
    host_paths = [v["hostPath"]["path"] for v in spec["volumes"] if "hostPath" in v]
    assert host_paths == ["/var/lib/kubelet/device-plugins"]  # the one unavoidable hostPath
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


# --- what the checks every chart gets (test_every_chart.py) need to know of this one -------

_DAEMONSET = "DaemonSet/rel-nvidia-device-plugin"
_PLUGIN = f"{_DAEMONSET} container nvidia-device-plugin"
_TEST = "Pod/rel-nvidia-device-plugin-gpu-test container nvidia-smi"
# Where the chart cannot meet Pod Security "restricted" (values.yaml and README.md say why): the
# plugin serves its socket in the kubelet's root-owned hostPath, so it runs as root; its root
# filesystem, and the GPU test pod's, stay writable for the NVIDIA container runtime, which
# injects the driver libraries at start (a read-only root is not verified on GPU nodes) -- hence
# no /tmp emptyDir either.
NOT_RESTRICTED = [
    f"{_DAEMONSET}: hostPath volume device-plugins",
    f"{_DAEMONSET}: pod runAsNonRoot is not true",
    f"{_DAEMONSET}: pod runAsUser is not above 0",
    f"{_PLUGIN}: runAsNonRoot is not true",
    f"{_PLUGIN}: readOnlyRootFilesystem is not true",
    f"{_PLUGIN}: /tmp is not an emptyDir",
    f"{_TEST}: readOnlyRootFilesystem is not true",
    f"{_TEST}: /tmp is not an emptyDir",
]

# The defaults, each ci/ file, and time-slicing with its default resources plus the RuntimeClass.
SCENARIOS = scenarios(
    "nvidia-device-plugin", sets("runtimeClass.create=true", "sharing.timeSlicing.enabled=true")
)


@pytest.mark.parametrize("args", SCENARIOS, ids=scenario_id)
def test_device_plugin_has_no_role(device_plugin: Chart, args: Args) -> None:
    """It talks only to the kubelet's socket, never to the API server."""
    docs = device_plugin.rendered(*args)
    assert not of_kind(docs, "ClusterRole") and not of_kind(docs, "Role")


SHARED = Shared(
    "nvidia-device-plugin", "device_plugin", SCENARIOS, not_restricted=tuple(NOT_RESTRICTED)
)
