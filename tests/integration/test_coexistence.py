"""Living with what is already installed (README): the training_operator role's preflight on a
cluster that has another operator's kubeflow.org CRD (a minimal mpijobs.kubeflow.org standing in
for mpi-operator v2's) and a training-operator the toolkit did not install; playbooks/teardown.yml
leaving another install's operator, CRDs and jobs as they are.

One local cluster without addons for the module (the role installs the chart; kwok plays the
pods). The role runs as site.yml runs it, through include_role.
"""

from __future__ import annotations

import io
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from snippets import tagged
from tfjob_kit import crd as tfjob_crd
from tfjob_kit.cluster import local
from tfjob_kit.cluster.build import helm_path

from ._ansible import BIN, REPO, ansible_env
from ._cluster import Cluster
from .conftest import session_name
from .test_bootstrap import playbook

RECORD = "tfjob-kit-adopted-training-operator"
README_MESSAGE = next(
    body.strip()
    for target, body in tagged("test")
    if target.endswith("::test_a_foreign_operator_is_refused_then_adopted_and_left_by_teardown")
)
README_KEPT = next(
    body.strip()
    for target, body in tagged("test")
    if target.endswith("::test_teardown_leaves_another_install_its_crds_and_jobs")
)
FOREIGN_NS = "ml-platform"
FOREIGN_IMAGE = "kubeflow/training-operator:v1-04f9f13"

MPIJOBS_CRD: dict[str, Any] = {
    "apiVersion": "apiextensions.k8s.io/v1",
    "kind": "CustomResourceDefinition",
    "metadata": {"name": "mpijobs.kubeflow.org"},
    "spec": {
        "group": "kubeflow.org",
        "names": {"kind": "MPIJob", "plural": "mpijobs", "singular": "mpijob"},
        "scope": "Namespaced",
        "versions": [
            {
                "name": "v2beta1",
                "served": True,
                "storage": True,
                "schema": {
                    "openAPIV3Schema": {
                        "type": "object",
                        "x-kubernetes-preserve-unknown-fields": True,
                    }
                },
            }
        ],
    },
}

FOREIGN_OPERATOR: list[dict[str, Any]] = [
    {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": FOREIGN_NS}},
    {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "training-operator", "namespace": FOREIGN_NS},
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": {"control-plane": "kubeflow-training-operator"}},
            "template": {
                "metadata": {"labels": {"control-plane": "kubeflow-training-operator"}},
                "spec": {
                    "containers": [
                        {
                            "name": "training-operator",
                            "image": FOREIGN_IMAGE,
                            "command": ["/manager"],
                        }
                    ]
                },
            },
        },
    },
]


@pytest.fixture(scope="module")
def bare() -> Iterator[Cluster]:
    name = session_name("h3-coexist")
    try:
        kubeconfig = local.up(local.UpOptions(name=name, addons=False), out=io.StringIO())
        cluster = Cluster(kubeconfig, name)
        cluster.kubectl("apply", "-f", "-", stdin=yaml.safe_dump(MPIJOBS_CRD))
        yield cluster
    finally:
        local.down(name, out=io.StringIO())


def role(tmp_path: Path, cluster: Cluster, state: str, **extra: Any) -> tuple[int, str, int]:
    """The training_operator role in a play of its own: rc, output and the recap's changed
    count."""
    variables = {
        "training_operator_state": state,
        "training_operator_helm_binary": str(helm_path()),
        "training_operator_webhook_enabled": False,
        "training_operator_wait_timeout": 180,
        **extra,
    }
    return run_role(tmp_path, cluster, "training_operator", variables)


def run_role(
    tmp_path: Path, cluster: Cluster, name: str, variables: dict[str, Any]
) -> tuple[int, str, int]:
    """A role of the collection in a play of its own: rc, output and the recap's changed count."""
    play = [
        {
            "name": "role",
            "hosts": "localhost",
            "gather_facts": False,
            "tasks": [
                {
                    "name": "The role",
                    "ansible.builtin.include_role": {"name": f"tfjob.kit.{name}"},
                    "vars": variables,
                }
            ],
        }
    ]
    playbook = tmp_path / "role.yml"
    playbook.write_text(yaml.safe_dump(play, sort_keys=False))
    proc = subprocess.run(
        [
            str(BIN / "ansible-playbook"),
            "-i",
            "localhost,",
            "-c",
            "local",
            str(playbook),
            "-e",
            f"ansible_python_interpreter={sys.executable}",
        ],
        cwd=REPO,
        env=ansible_env(cluster.kubeconfig),
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    output = proc.stdout + proc.stderr
    recap = next((x for x in output.splitlines() if x.startswith("localhost ")), "changed=-1")
    return proc.returncode, output, int(recap.split("changed=")[1].split()[0])


def crd_identity(cluster: Cluster) -> tuple[str, str]:
    meta = cluster.get("crd", "mpijobs.kubeflow.org")["metadata"]
    return meta["uid"], meta["resourceVersion"]


def test_other_operators_crds_are_left_by_install_and_teardown(
    bare: Cluster, tmp_path: Path
) -> None:
    before = crd_identity(bare)
    rc, output, _ = role(tmp_path, bare, "present")
    assert rc == 0, output[-6000:]
    assert (
        "found CRDs of the kubeflow.org group that are not the toolkit's: mpijobs.kubeflow.org. "
        "The toolkit installs only the TFJob scheme and tfjobs.kubeflow.org; it leaves these"
        in output
    ), output[-6000:]
    assert bare.items("secrets", "-n", "training-operator", "-l", "owner=helm")
    assert _crd_meta(bare)[1].get("tfjob-kit.io/created-by") == "tfjob-kit"
    rc, output, _ = role(tmp_path, bare, "absent", training_operator_remove_crds=True)
    assert rc == 0, output[-6000:]
    assert bare.gone("crd", "tfjobs.kubeflow.org")
    assert crd_identity(bare) == before


def test_a_foreign_operator_is_refused_then_adopted_and_left_by_teardown(
    bare: Cluster, tmp_path: Path
) -> None:
    crd_before = crd_identity(bare)
    bare.kubectl("apply", "-f", "-", stdin=yaml.safe_dump_all(FOREIGN_OPERATOR))
    uid = bare.get("deployment", "-n", FOREIGN_NS, "training-operator")["metadata"]["uid"]

    rc, output, _ = role(tmp_path, bare, "present")
    assert rc != 0
    # The message, word for word as the README shows it.
    assert README_MESSAGE in " ".join(output.split()), output[-6000:]
    assert not bare.items("secrets", "-A", "-l", "owner=helm")
    assert bare.gone("crd", "tfjobs.kubeflow.org")

    for attempt in ("first", "again"):
        rc, output, changes = role(tmp_path, bare, "present", training_operator_existing="adopt")
        assert rc == 0, output[-6000:]
        assert "adopting the training-operator Deployment" in output
        assert changes == (1 if attempt == "first" else 0), output[-6000:]
    record = bare.get("configmap", "-n", "kube-system", RECORD)
    assert record["metadata"]["labels"]["app.kubernetes.io/managed-by"] == "tfjob-kit"
    assert {k: record["data"][k] for k in ("namespace", "kind", "version")} == {
        "namespace": FOREIGN_NS,
        "kind": "kubeflow-training-operator",
        "version": "v1.8.1",
    }
    assert record["data"]["adopted-at"]
    assert not bare.items("secrets", "-A", "-l", "owner=helm")

    rc, output, _ = role(tmp_path, bare, "absent", training_operator_remove_crds=True)
    assert rc == 0, output[-6000:]
    assert bare.gone("configmap", RECORD, "kube-system")
    kept = bare.get("deployment", "-n", FOREIGN_NS, "training-operator")
    assert kept["metadata"]["uid"] == uid
    assert crd_identity(bare) == crd_before


PLATFORM = "platform-team"  # the field manager another team's install applies its CRDs with
PLATFORM_OBJECTS: list[dict[str, Any]] = [
    {
        "apiVersion": "kubeflow.org/v1",
        "kind": "TFJob",
        "metadata": {"name": "platform-job", "namespace": FOREIGN_NS},
        "spec": {
            "tfReplicaSpecs": {
                "Worker": {
                    "replicas": 1,
                    "template": {
                        "spec": {"containers": [{"name": "tensorflow", "image": "busybox"}]}
                    },
                }
            }
        },
    },
    {
        "apiVersion": "scheduling.volcano.sh/v1beta1",
        "kind": "Queue",
        "metadata": {"name": "platform"},
        "spec": {"weight": 1},
    },
]


FOREIGN_CHART = {
    "Chart.yaml": "apiVersion: v2\nname: volcano\nversion: 1.14.1\n",
    # Upstream's chart labels its cluster-wide objects with the release, as the toolkit's does.
    "templates/role.yaml": (
        "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\n"
        "metadata:\n  name: platform-volcano-view\n"
        "  labels: {app.kubernetes.io/instance: '{{ .Release.Name }}'}\n"
        "rules: [{apiGroups: [''], resources: [pods], verbs: [get]}]\n"
    ),
}


# NVIDIA's own device plugin chart has the toolkit's chart's name, release name and namespace.
NVIDIA_CHART = {
    "Chart.yaml": "apiVersion: v2\nname: nvidia-device-plugin\nversion: 0.17.2\n",
    "templates/config.yaml": (
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: nvidia-device-plugin-configs\n"
        "data: {config: '{}'}\n"
    ),
}
KUBE_BATCH_QUEUES = "queues.scheduling.incubator.k8s.io"


def _helm(bare: Cluster, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(helm_path()), "--kubeconfig", str(bare.kubeconfig), *args],
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )


def test_teardown_leaves_another_install_its_crds_and_jobs(bare: Cluster, tmp_path: Path) -> None:
    """A platform team's own training-operator (adopted: the record site.yml writes) and Volcano
    CRD, applied by its own field manager, with a TFJob and a Queue in them: teardown.yml
    (inventories/example, which removes the CRDs) removes the toolkit's install only, keeps all of
    theirs, says what it kept and why, and still proves nothing of the toolkit's is left."""
    queue_crd = next(
        d
        for d in yaml.safe_load_all((REPO / "charts/volcano/crds/volcano-crds.yaml").read_text())
        if d and d["metadata"]["name"] == "queues.scheduling.volcano.sh"
    )
    kube_batch_queues = yaml.safe_load(
        (REPO / "charts/kube-batch/crds/scheduling.incubator.k8s.io_queues.yaml").read_text()
    )
    crds = ["tfjobs.kubeflow.org", "queues.scheduling.volcano.sh", KUBE_BATCH_QUEUES]
    bare.kubectl("apply", "-f", "-", stdin=yaml.safe_dump_all(FOREIGN_OPERATOR))
    bare.kubectl(
        "apply",
        "--server-side",
        f"--field-manager={PLATFORM}",
        "-f",
        "-",
        stdin=yaml.safe_dump_all([tfjob_crd.crd(), queue_crd, kube_batch_queues]),
    )
    try:
        for crd in crds:

            def established(name: str = crd) -> bool:
                conditions = bare.get("crd", name).get("status", {}).get("conditions") or []
                return any(c["type"] == "Established" and c["status"] == "True" for c in conditions)

            bare.wait_for(f"{crd} to be Established", established, FOREIGN_NS, timeout=120)
        bare.kubectl("apply", "-f", "-", stdin=yaml.safe_dump_all(PLATFORM_OBJECTS))
        bare.kubectl(
            "create",
            "configmap",
            "-n",
            "kube-system",
            RECORD,
            f"--from-literal=namespace={FOREIGN_NS}",
            "--from-literal=deployment=training-operator",
            "--from-literal=kind=kubeflow-training-operator",
        )
        kept = {
            "crd tfjobs.kubeflow.org": ["crd", crds[0]],
            "crd queues.scheduling.volcano.sh": ["crd", crds[1]],
            f"crd {KUBE_BATCH_QUEUES}": ["crd", KUBE_BATCH_QUEUES],
            "tfjob": ["tfjob", "-n", FOREIGN_NS, "platform-job"],
            "queue": ["queues.scheduling.volcano.sh", "platform"],
            "deployment": ["deployment", "-n", FOREIGN_NS, "training-operator"],
        }
        # Upstream's Volcano chart, installed by hand under the toolkit's release name and
        # namespace (as Volcano's own docs install it).
        for name, text in FOREIGN_CHART.items():
            (tmp_path / "chart" / name).parent.mkdir(parents=True, exist_ok=True)
            (tmp_path / "chart" / name).write_text(text)
        installed = _helm(
            bare,
            *("install", "volcano", str(tmp_path / "chart"), "-n", "volcano-system"),
            "--create-namespace",
        )
        assert installed.returncode == 0, installed.stderr
        kept["clusterrole"] = ["clusterrole", "platform-volcano-view"]
        for name, text in NVIDIA_CHART.items():
            (tmp_path / "nvidia" / name).parent.mkdir(parents=True, exist_ok=True)
            (tmp_path / "nvidia" / name).write_text(text)
        nvidia = ("nvidia-device-plugin", "-n", "nvidia-device-plugin")
        installed = _helm(
            bare, "install", nvidia[0], str(tmp_path / "nvidia"), *nvidia[1:], "--create-namespace"
        )
        assert installed.returncode == 0, installed.stderr
        kept["nvidia configmap"] = ["configmap", "-n", nvidia[2], "nvidia-device-plugin-configs"]
        uids = {what: bare.get(*args)["metadata"]["uid"] for what, args in kept.items()}

        output = playbook(
            bare,
            "teardown.yml",
            *("-e", "tfjob_kit_context=", "--limit", "localhost"),
            inventory="inventories/example",
        )
        # The message, word for word as the README shows it.
        assert README_KEPT in " ".join(output.split()), output[-6000:]
        assert "nothing the toolkit installed is left" in output
        assert {what: bare.get(*args)["metadata"]["uid"] for what, args in kept.items()} == uids
        assert bare.gone("configmap", RECORD, "kube-system")
        assert (
            "kept release volcano-system/volcano: it was installed from the chart volcano-1.14.1, "
            "not the toolkit's, so teardown leaves it and everything it installed"
        ) in " ".join(output.split()), output[-6000:]
        assert _helm(bare, "status", "volcano", "-n", "volcano-system").returncode == 0
        assert (
            f"kept release {nvidia[2]}/{nvidia[0]}: it was installed from the chart "
            "nvidia-device-plugin-0.17.2, not the toolkit's"
        ) in " ".join(output.split()), output[-6000:]
        assert _helm(bare, "status", *nvidia).returncode == 0
        assert (
            "kept kube-batch's CRDs that the toolkit did not apply, with every PodGroup and Queue "
            f"in them: {KUBE_BATCH_QUEUES}"
        ) in " ".join(output.split()), output[-6000:]
    finally:
        _helm(bare, "uninstall", "nvidia-device-plugin", "-n", "nvidia-device-plugin")
        bare.kubectl("delete", "ns", "nvidia-device-plugin", "--ignore-not-found", check=False)
        _helm(bare, "uninstall", "volcano", "-n", "volcano-system", "--ignore-not-found")
        bare.kubectl("delete", "namespace", "volcano-system", "--ignore-not-found", check=False)
        bare.kubectl("delete", "crd", *crds, "--ignore-not-found", check=False)
        bare.kubectl("delete", "configmap", "-n", "kube-system", RECORD, "--ignore-not-found")


def test_another_charts_release_of_the_name_is_never_taken_over(
    bare: Cluster, tmp_path: Path
) -> None:
    """NVIDIA's own device plugin chart has the toolkit's chart's name, release name and
    namespace. The role refuses to install over such a release (helm upgrade would replace it
    with the toolkit's chart), and leaves it as it was."""
    for name, text in NVIDIA_CHART.items():
        (tmp_path / "nvidia" / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "nvidia" / name).write_text(text)
    nvidia = ("nvidia-device-plugin", "-n", "nvidia-device-plugin", "--create-namespace")
    installed = _helm(bare, "install", nvidia[0], str(tmp_path / "nvidia"), *nvidia[1:])
    assert installed.returncode == 0, installed.stderr
    try:
        rc, output, _ = run_role(
            tmp_path,
            bare,
            "nvidia_device_plugin",
            {"nvidia_device_plugin_helm_binary": str(helm_path())},
        )
        assert rc != 0
        assert (
            "the release nvidia-device-plugin/nvidia-device-plugin was installed from the chart "
            "nvidia-device-plugin-0.17.2, not the toolkit's; the toolkit never takes over another "
            "install"
        ) in " ".join(output.split()), output[-4000:]
        status = _helm(bare, "status", *nvidia[:3], "-o", "json")
        assert json.loads(status.stdout)["version"] == 1  # no new revision
    finally:
        _helm(bare, "uninstall", *nvidia[:3])
        bare.kubectl("delete", "ns", "nvidia-device-plugin", "--ignore-not-found", check=False)


def _established(bare: Cluster, crd: str) -> None:
    def established() -> bool:
        conditions = bare.get("crd", crd).get("status", {}).get("conditions") or []
        return any(c["type"] == "Established" and c["status"] == "True" for c in conditions)

    bare.wait_for(f"{crd} to be Established", established, FOREIGN_NS, timeout=120)


def _crd_meta(bare: Cluster) -> tuple[set[str], dict[str, str]]:
    """The TFJob CRD's field managers and annotations."""
    meta = bare.get("crd", "tfjobs.kubeflow.org", "--show-managed-fields")["metadata"]
    return {f["manager"] for f in meta["managedFields"]}, meta.get("annotations") or {}


def test_a_tfjob_crd_the_toolkit_did_not_create_is_never_taken(
    bare: Cluster, tmp_path: Path
) -> None:
    """tfjobs.kubeflow.org applied by another install (its own field manager), with a TFJob in
    it, and no operator the preflight can see (one under an image of another name, or none):
    refused, nothing applied; adopt installs nothing and teardown keeps the CRD; upgrade applies
    the toolkit's CRD over it and installs the chart, a later run with the defaults is not
    refused, and teardown (remove_crds) still keeps the CRD and the TFJob."""
    bare.kubectl("delete", "namespace", FOREIGN_NS, "--ignore-not-found", "--wait=true")
    bare.kubectl("create", "namespace", FOREIGN_NS)
    bare.kubectl(
        *("apply", "--server-side", f"--field-manager={PLATFORM}", "-f", "-"),
        stdin=yaml.safe_dump(tfjob_crd.crd()),
    )
    _established(bare, "tfjobs.kubeflow.org")
    bare.kubectl("apply", "-f", "-", stdin=yaml.safe_dump(PLATFORM_OBJECTS[0]))
    job = ("tfjob", "-n", FOREIGN_NS, "platform-job")
    uids = {"crd": bare.get("crd", "tfjobs.kubeflow.org")["metadata"]["uid"]}
    uids["job"] = bare.get(*job)["metadata"]["uid"]

    def same() -> dict[str, str]:
        return {
            "crd": bare.get("crd", "tfjobs.kubeflow.org")["metadata"]["uid"],
            "job": bare.get(*job)["metadata"]["uid"],
        }

    try:
        rc, output, _ = role(tmp_path, bare, "present")
        assert rc != 0
        assert (
            "found a training-operator the toolkit did not install: the CRD tfjobs.kubeflow.org, "
            f"which the toolkit did not create (written by {PLATFORM}), with every TFJob in it, "
            "and no operator Deployment the preflight recognizes (one may run under another "
            "image name). The toolkit never takes over another install."
        ) in " ".join(output.split()), output[-6000:]
        assert "Teardown keeps a CRD the toolkit did not create" in " ".join(output.split())
        assert not bare.items("secrets", "-A", "-l", "owner=helm")
        assert _crd_meta(bare)[0] <= {PLATFORM, "kube-apiserver"}

        rc, output, changes = role(tmp_path, bare, "present", training_operator_existing="adopt")
        assert rc == 0, output[-6000:]
        record = bare.get("configmap", "-n", "kube-system", RECORD)["data"]
        assert record["found"].startswith("the CRD tfjobs.kubeflow.org, which the toolkit"), record
        assert not bare.items("secrets", "-A", "-l", "owner=helm")
        rc, output, _ = role(tmp_path, bare, "absent", training_operator_remove_crds=True)
        assert rc == 0, output[-6000:]
        assert bare.gone("configmap", RECORD, "kube-system")
        assert same() == uids

        rc, output, _ = role(tmp_path, bare, "present", training_operator_existing="upgrade")
        assert rc == 0, output[-6000:]
        assert (
            "upgrading the CRD tfjobs.kubeflow.org, which the toolkit did not create (written by "
            f"{PLATFORM}): the toolkit applies its own over it and marks it "
            "(tfjob-kit.io/upgraded-by), and teardown keeps it with its TFJobs. No "
            "training-operator Deployment was found for it"
        ) in " ".join(output.split()), output[-6000:]
        managers, annotations = _crd_meta(bare)
        assert {PLATFORM, "tfjob-kit"} <= managers
        assert annotations.get("tfjob-kit.io/upgraded-by") == "tfjob-kit"
        assert "tfjob-kit.io/created-by" not in annotations
        assert bare.items("secrets", "-n", "training-operator", "-l", "owner=helm")
        # Upgraded once: a later run with the defaults is not refused and changes nothing.
        rc, output, changes = role(tmp_path, bare, "present")
        assert rc == 0 and changes == 0, output[-6000:]

        rc, output, _ = role(tmp_path, bare, "absent", training_operator_remove_crds=True)
        assert rc == 0, output[-6000:]
        assert (
            "kept the TFJob CRD, which is not the toolkit's, with every TFJob in it: "
            f"tfjobs.kubeflow.org (applied by {PLATFORM}, not created by the toolkit)"
        ) in " ".join(output.split()), output[-6000:]
        assert same() == uids
        assert not bare.items("secrets", "-A", "-l", "owner=helm")
    finally:
        bare.kubectl("delete", "crd", "tfjobs.kubeflow.org", "--ignore-not-found", check=False)
        bare.kubectl("delete", "configmap", "-n", "kube-system", RECORD, "--ignore-not-found")
        bare.kubectl("delete", "namespace", FOREIGN_NS, "--ignore-not-found", check=False)


def test_tf_operator_and_the_toolkits_own_release_elsewhere_are_refused(
    bare: Cluster, tmp_path: Path
) -> None:
    """tf-operator's Deployment (container tf-job-operator) whose image a mirror renamed is
    found by its container; the toolkit's own release in `kubeflow` (the default namespace
    before) is named, not installed beside."""
    bare.kubectl("delete", "namespace", FOREIGN_NS, "--ignore-not-found", "--wait=true")
    old = json.loads(json.dumps(FOREIGN_OPERATOR))
    old[1]["metadata"]["name"] = "tf-job-operator"
    old[1]["spec"]["template"]["spec"]["containers"][0].update(
        name="tf-job-operator", image="mirror.example/ml/tfjob-controller:1.0"
    )
    bare.kubectl("apply", "-f", "-", stdin=yaml.safe_dump_all(old))
    try:
        rc, output, _ = role(tmp_path, bare, "present")
        assert rc != 0
        assert (
            "found a training-operator the toolkit did not install: Deployment "
            f"{FOREIGN_NS}/tf-job-operator (image mirror.example/ml/tfjob-controller:1.0, "
            "version unknown)."
        ) in " ".join(output.split()), output[-6000:]
        assert not bare.items("secrets", "-A", "-l", "owner=helm")
        bare.kubectl("delete", "namespace", FOREIGN_NS, "--wait=true")

        rc, output, _ = role(tmp_path, bare, "present", training_operator_namespace="kubeflow")
        assert rc == 0, output[-6000:]
        assert _crd_meta(bare)[1].get("tfjob-kit.io/created-by") == "tfjob-kit"
        rc, output, _ = role(tmp_path, bare, "present")
        assert rc != 0
        assert (
            "found the toolkit's own training-operator release kubeflow/training-operator, which "
            "is not training-operator/training-operator (training_operator_namespace and "
            "training_operator_release): two operators would reconcile the same TFJobs."
        ) in " ".join(output.split()), output[-6000:]
        assert not bare.items("secrets", "-n", "training-operator", "-l", "owner=helm")
        rc, output, _ = role(
            tmp_path,
            bare,
            "absent",
            training_operator_namespace="kubeflow",
            training_operator_remove_crds=True,
        )
        assert rc == 0, output[-6000:]
        assert bare.gone("crd", "tfjobs.kubeflow.org")
    finally:
        _helm(bare, "uninstall", "training-operator", "-n", "kubeflow", "--ignore-not-found")
        for ns in (FOREIGN_NS, "kubeflow", "training-operator"):
            bare.kubectl("delete", "namespace", ns, "--ignore-not-found", check=False)
        bare.kubectl("delete", "crd", "tfjobs.kubeflow.org", "--ignore-not-found", check=False)
