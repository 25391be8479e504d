"""Pure logic of the local cluster (no cluster, no Go): nodes, kwok config, version lock."""

from __future__ import annotations

import shutil

import pytest
import yaml

from tfjob_kit.cluster import build, kwok, local
from tfjob_kit.cluster.nodes import NodePlan, node_manifests
from tfjob_kit.kube import server_verdict
from tfjob_kit.versions import VersionsError, load_versions, repo_root

PORTS = {
    "etcd_client": 23790,
    "etcd_peer": 23800,
    "kube_apiserver": 23801,
    "kube_controller_manager": 23802,
    "kube_scheduler": 23803,
    "kwok_controller": 23804,
}


def test_node_plan_counts_and_gpu_labels() -> None:
    nodes = node_manifests(NodePlan(cpu_nodes=1, gpu_nodes=3, gpus_per_node=8))
    assert [n["metadata"]["name"] for n in nodes] == [
        "tfjob-kit-cpu-0",
        "tfjob-kit-gpu-0",
        "tfjob-kit-gpu-1",
        "tfjob-kit-gpu-2",
    ]
    cpu, gpu = nodes[0], nodes[1]
    assert "nvidia.com/gpu" not in cpu["status"]["allocatable"]
    assert gpu["status"]["allocatable"]["nvidia.com/gpu"] == "8"
    assert gpu["status"]["capacity"] == gpu["status"]["allocatable"]
    labels = gpu["metadata"]["labels"]
    assert labels["nvidia.com/gpu.present"] == "true"
    assert labels["nvidia.com/gpu.count"] == "8"
    assert labels["feature.node.kubernetes.io/pci-10de.present"] == "true"
    assert all(n["metadata"]["annotations"]["kwok.x-k8s.io/node"] == "fake" for n in nodes)


@pytest.mark.parametrize(("cpu", "gpu", "per_node"), [(-1, 0, 4), (0, 1, 0), (1, -2, 4)])
def test_node_plan_rejects_impossible_counts(cpu: int, gpu: int, per_node: int) -> None:
    with pytest.raises(ValueError):
        NodePlan(cpu_nodes=cpu, gpu_nodes=gpu, gpus_per_node=per_node)


def test_kwokctl_config_has_the_full_pod_lifecycle() -> None:
    versions = load_versions()
    opts = local.UpOptions(tfjob_run_seconds=7.5, job_run_seconds=1)
    docs = list(yaml.safe_load_all(kwok.kwokctl_config(opts, repo_root(), versions, PORTS)))
    header, kwok_options, stages = docs[0], docs[1], docs[2:]
    assert header["kind"] == "KwokctlConfiguration"
    assert header["options"]["kubeVersion"] == versions.kubernetes
    # A thousand nodes turn Ready in time: kwok plays many stages at once.
    assert kwok_options["kind"] == "KwokConfiguration"
    assert kwok_options["options"]["nodePlayStageParallelism"] == kwok.KWOK_PARALLELISM > 4
    node_stages = [s for s in stages if s["spec"]["resourceRef"]["kind"] == "Node"]
    # Ours replace kwok's (whose lease-less heartbeat it picks with the lease on): Ready once,
    # then the status reported every five minutes or more.
    assert {s["metadata"]["name"]: s.get("spec", {}).get("delay") for s in node_stages} == {
        "tfjob-kit-node-ready": None,
        "tfjob-kit-node-report": {
            "durationMilliseconds": 300000,
            "jitterDurationMilliseconds": 600000,
        },
    }
    stages = [s for s in stages if s not in node_stages]
    names = {s["metadata"]["name"]: s for s in stages}
    assert set(names) == {
        "tfjob-kit-pod-start",
        "tfjob-kit-tfjob-pod-exit-code",
        "tfjob-kit-tfjob-pod-succeed",
        "tfjob-kit-volcano-pod-succeed",
        "tfjob-kit-job-pod-finish",
        "tfjob-kit-jobset-pod-finish",
        "tfjob-kit-kubelet-err-image-pull",
        "tfjob-kit-kubelet-image-pull-back-off",
        "tfjob-kit-kubelet-invalid-image-name",
        "tfjob-kit-kubelet-crash-loop",
        "tfjob-kit-pod-delete",
    }
    assert all(s["spec"]["resourceRef"]["kind"] == "Pod" for s in stages)
    for training in (
        "tfjob-kit-tfjob-pod-exit-code",
        "tfjob-kit-tfjob-pod-succeed",
        "tfjob-kit-volcano-pod-succeed",
    ):
        assert names[training]["spec"]["delay"]["durationMilliseconds"] == 7500
    # TensorFlow pods succeed only once the rendezvous stand-in saw all of their peers run
    for succeed in (
        "tfjob-kit-tfjob-pod-succeed",
        "tfjob-kit-volcano-pod-succeed",
        "tfjob-kit-jobset-pod-finish",
    ):
        keys = {
            e["key"]: e["operator"] for e in names[succeed]["spec"]["selector"]["matchExpressions"]
        }
        assert keys['.metadata.annotations["tfjob-kit.dev/peers-running"]'] == "Exists"
    # The kubelet stand-ins (tests only) take exactly the pods annotated for them; the normal
    # start and finish stages leave those pods alone.
    failure = '.metadata.annotations["tfjob-kit.dev/kubelet-failure"]'
    for name, stage in names.items():
        keys = {e["key"]: e for e in stage["spec"]["selector"]["matchExpressions"]}
        if name.startswith("tfjob-kit-kubelet-"):
            assert keys[failure]["operator"] == "In", name
        elif name not in ("tfjob-kit-pod-delete", "tfjob-kit-job-pod-finish"):
            assert keys[failure]["operator"] == "DoesNotExist", name
    for job in ("tfjob-kit-job-pod-finish", "tfjob-kit-jobset-pod-finish"):
        assert names[job]["spec"]["delay"]["durationMilliseconds"] == 1000
    assert names["tfjob-kit-pod-delete"]["spec"]["next"] == {
        "finalizers": {"empty": True},
        "delete": True,
    }


def test_version_lock_covers_every_component() -> None:
    versions = load_versions()
    table = build.components(versions)
    assert set(build.DEFAULT) | {"kubectl", build.OPERATOR_UPGRADE_FROM} == set(table)
    assert table["kube"].version == versions.kubernetes == versions.kubectl
    assert all(c.dirname == f"{c.name}-{c.version}" for c in table.values())


def test_kubectl_is_built_only_when_missing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(shutil, "which", lambda _name: None)
    assert "kubectl" in build.wanted(None, None)
    monkeypatch.setattr(shutil, "which", lambda _name: "/usr/bin/kubectl")
    assert "kubectl" not in build.wanted(None, None)
    assert build.wanted(["etcd"], True) == ["etcd", "kubectl"]


def test_kwokctl_config_binds_loopback_on_our_ports_and_puts_etcd_behind_mutual_tls() -> None:
    opts = local.UpOptions(name="tfjob-kit-test-config")
    header = next(
        yaml.safe_load_all(kwok.kwokctl_config(opts, repo_root(), load_versions(), PORTS))
    )
    options = header["options"]
    assert options["bindAddress"] == "127.0.0.1"
    # Every port kwokctl would otherwise pick itself is given.
    assert {k: v for k, v in options.items() if k.endswith("Port")} == {
        "etcdPort": 23790,
        "etcdPeerPort": 23800,
        "kubeApiserverPort": 23801,
        "kubeControllerManagerPort": 23802,
        "kubeSchedulerPort": 23803,
        "kwokControllerPort": 23804,
    }
    patches = {
        p["name"]: {a["key"]: a for a in p["extraArgs"]} for p in header["componentsPatches"]
    }
    etcd, apiserver = patches["etcd"], patches["kube-apiserver"]
    for url in ("listen-client-urls", "advertise-client-urls"):
        assert etcd[url] == {"key": url, "value": "https://127.0.0.1:23790", "override": True}
    assert etcd["listen-peer-urls"]["value"] == "https://127.0.0.1:23800"
    assert etcd["client-cert-auth"]["value"] == etcd["peer-client-cert-auth"]["value"] == "true"
    pki = local.cluster_dir(opts.name) / "pki"
    assert etcd["trusted-ca-file"]["value"] == str(pki / "ca.crt")
    assert apiserver["etcd-servers"]["value"] == "https://127.0.0.1:23790"
    assert apiserver["etcd-certfile"]["value"] == str(pki / "admin.crt")


def test_another_kubernetes_release_is_built_from_its_own_requirements() -> None:
    versions = load_versions()
    assert versions.for_kubernetes(".".join(versions.kube_minor)) is versions
    assert versions.kubernetes_releases, "versions.toml names no other Kubernetes release"
    wrapper = repo_root() / "components" / "go" / "kube"
    for release in versions.kubernetes_releases:
        minor = ".".join(release.lstrip("v").split(".")[:2])
        other = versions.for_kubernetes(minor)
        assert other.kubernetes == release and versions.for_kubernetes(release) == other
        kube = build.components(other)["kube"]
        assert (kube.dirname, kube.modfile) == (f"kube-{release}", f"v{minor}.mod")
        assert build.components(other)["kubectl"] == build.components(versions)["kubectl"]
        requirements = (wrapper / kube.modfile).read_text()
        assert f"\tk8s.io/kubernetes {release}\n" in requirements, kube.modfile
        assert (wrapper / f"v{minor}.sum").is_file()
    with pytest.raises(VersionsError, match=r"Kubernetes 1\.99 is not one the local cluster runs"):
        versions.for_kubernetes("1.99")


def test_the_window_is_the_minors_the_local_cluster_runs() -> None:
    versions = load_versions()
    oldest, newest = versions.kubernetes_window
    assert versions.kubernetes_minors[0] == oldest and versions.kubernetes_minors[-1] == newest
    major, minor = (int(part) for part in oldest.split("."))
    newest_minor = int(newest.split(".")[1])
    assert versions.in_window(f"v{oldest}.0") and versions.in_window(f"{newest}.9-eks-1a2b")
    assert not versions.in_window(f"v{major}.{minor - 1}.9")
    assert not versions.in_window(f"v{major}.{newest_minor + 1}.0")
    assert not versions.in_window("garbage")
    assert server_verdict.version_warnings(f"v{oldest}.1") == []
    (warning,) = server_verdict.version_warnings(f"v{major}.{newest_minor + 1}.0")
    assert f"tfjob-kit is tested on {oldest} to {newest} (make test-versions)" in warning
