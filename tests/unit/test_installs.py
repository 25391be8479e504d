"""tfjob_kit.installs: what the roles decide from the objects they read, on fixtures shaped
as the API server returns them. The roles run the same functions through the tfjob.kit filters
on the local cluster: training_operator_* in tests/integration/test_coexistence.py and
test_upgrade.py, nvidia_device_plugin_* in the nvidia_device_plugin role's Molecule scenario."""

from __future__ import annotations

from typing import Any

import pytest

from tfjob_kit.installs import device_plugin, volcano
from tfjob_kit.installs import operator_upgrade as upgrade
from tfjob_kit.installs import training_operator as to

NS, RELEASE = "training-operator", "training-operator"
ALL_BUT_TFJOB = ["PyTorchJob", "MXJob", "XGBoostJob", "MPIJob", "PaddleJob", "JAXJob"]


def deployment(
    name: str = "training-operator",
    namespace: str = "kubeflow",
    image: str = "kubeflow/training-operator:v1-04f9f13",
    container: str = "training-operator",
    args: list[str] | None = None,
    labels: dict[str, str] | None = None,
    annotations: dict[str, str] | None = None,
    account: str | None = "training-operator",
) -> dict[str, Any]:
    pod: dict[str, Any] = {
        "containers": [{"name": container, "image": image, "command": ["/manager"], "args": args}]
    }
    if account:
        pod["serviceAccountName"] = account
    return {
        "metadata": {
            "name": name,
            "namespace": namespace,
            "labels": labels,
            "annotations": annotations,
        },
        "spec": {
            "selector": {"matchLabels": {"control-plane": "kubeflow-training-operator"}},
            "template": {"spec": pod},
        },
    }


def crd(
    name: str = to.CRD,
    managers: tuple[str, ...] = ("kubectl",),
    annotations: dict[str, str] | None = None,
    kind: str = "TFJob",
    versions: tuple[str, ...] = ("v1",),
) -> dict[str, Any]:
    return {
        "metadata": {
            "name": name,
            "annotations": annotations,
            "managedFields": [{"manager": m} for m in (*managers, "kube-apiserver")],
        },
        "spec": {
            "group": name.split(".", 1)[1],
            "names": {"kind": kind},
            "versions": [{"name": v, "served": True} for v in versions],
        },
    }


def survey(*deployments: dict[str, Any], crds: tuple[dict[str, Any], ...] = ()) -> dict[str, Any]:
    return to.survey({"deployments": list(deployments), "crds": list(crds)}, NS, RELEASE)


def test_upstreams_operator_is_found_with_its_release_and_every_scheme() -> None:
    found = survey(deployment())
    assert found["foreign"] == [
        {
            "namespace": "kubeflow",
            "name": "training-operator",
            "image": "kubeflow/training-operator:v1-04f9f13",
            "version": "v1.8.1",
            "all_schemes": True,
            "other_kinds": ALL_BUT_TFJOB,
        }
    ]
    assert found["text"] == (
        "Deployment kubeflow/training-operator (image kubeflow/training-operator:v1-04f9f13, "
        "version v1.8.1)"
    )
    assert not found["own_elsewhere"] and not found["crd_foreign"]


@pytest.mark.parametrize(
    ("args", "kinds"),
    [
        (["--enable-scheme=tfjob"], []),
        (["--enable-scheme=TFJob", "-enable-scheme", "PyTorchJob"], ["PyTorchJob"]),
        (["--enable-scheme", "mpijob", "--enable-scheme"], ["MPIJob"]),  # a flag with no value
    ],
)
def test_enable_scheme_says_which_kinds_it_serves(args: list[str], kinds: list[str]) -> None:
    (found,) = survey(deployment(args=args))["foreign"]
    assert (found["all_schemes"], found["other_kinds"]) == (False, kinds)


@pytest.mark.parametrize(
    ("image", "container"),
    [
        ("gcr.io/kubeflow-images-public/tf_operator:v1.0.0-g92389064", "tf-job-operator"),
        ("mirror.example/ml/tfjob-controller:1.0", "tf-job-operator"),  # renamed: its container
        ("mirror.example/ml/tf-operator@sha256:0123", "manager"),  # its image
        ("ghcr.io/kubeflow/training-v1/training-operator:v1-93c5489", "manager"),
    ],
)
def test_an_operator_is_found_by_its_image_or_its_container(image: str, container: str) -> None:
    (found,) = survey(deployment(image=image, container=container))["foreign"]
    assert found["image"] == image
    assert found["version"] == ("v1.9.4" if image.endswith("v1-93c5489") else "unknown")


def test_what_is_not_another_install() -> None:
    ours = deployment(namespace=NS, annotations={"meta.helm.sh/release-name": RELEASE})
    others = [
        deployment(image="example/my-training-operator-ui:1", container="ui"),
        deployment(image="nginx:1.27", container="web"),
        ours,
    ]
    assert survey(*others)["foreign"] == []


def test_the_toolkits_own_release_elsewhere_is_named_not_foreign() -> None:
    chart = {"app.kubernetes.io/part-of": "tfjob-kit", "app.kubernetes.io/version": "v1.9.4"}
    old = deployment(labels=chart, annotations={"meta.helm.sh/release-name": "training-operator"})
    found = survey(old)
    assert found["own_elsewhere"] == [{"namespace": "kubeflow", "release": "training-operator"}]
    assert found["foreign"] == []


@pytest.mark.parametrize(
    ("tfjobs", "created", "foreign"),
    [
        (crd(managers=("tfjob-kit", "tfjob-kit-owner"), annotations={to.CREATED_BY: "x"}), 1, 0),
        (crd(managers=("kubectl",), annotations={to.CREATED_BY: "tfjob-kit"}), True, False),
        (crd(managers=("tfjob-kit",)), True, False),  # an earlier release's, before the mark
        (crd(managers=("tfjob-kit-cluster",)), True, False),
        (crd(managers=("kubectl", "tfjob-kit")), False, True),  # applied over another's
        (crd(managers=("platform-team",)), False, True),
        (crd(managers=()), False, True),  # only the API server wrote it
        (crd(managers=("kubectl", "tfjob-kit"), annotations={to.UPGRADED_BY: "tfjob-kit"}), 0, 0),
    ],
)
def test_whose_the_tfjob_crd_is(tfjobs: dict[str, Any], created: bool, foreign: bool) -> None:
    found = survey(crds=(tfjobs,))
    assert (found["crd_created"], found["crd_foreign"]) == (bool(created), bool(foreign))
    assert found["crd"] == tfjobs


def test_a_crd_alone_is_named_with_who_wrote_it() -> None:
    found = survey(crds=(crd(managers=("platform-team", "tfjob-kit")),))
    assert found["foreign"] == [] and found["crd_writers"] == "platform-team"
    assert found["text"] == (
        "the CRD tfjobs.kubeflow.org, which the toolkit did not create (written by "
        "platform-team), with every TFJob in it, and no operator Deployment the preflight "
        "recognizes (one may run under another image name)"
    )
    with_operator = survey(deployment(), crds=(crd(),))
    assert with_operator["text"].endswith(
        "; the CRD tfjobs.kubeflow.org, which the toolkit did "
        "not create (written by kubectl), with every TFJob in it"
    )
    assert with_operator["operators_text"].startswith("Deployment kubeflow/training-operator (")
    assert survey()["crd"] == {} and not survey()["crd_foreign"]


def test_other_kubeflow_crds_and_the_kinds_an_upgrade_drops() -> None:
    crds = (
        crd("mpijobs.kubeflow.org", kind="MPIJob", versions=("v2beta1",)),  # mpi-operator v2
        crd("pytorchjobs.kubeflow.org", kind="PyTorchJob"),
        crd("queues.scheduling.volcano.sh", kind="Queue", versions=("v1beta1",)),
        crd(annotations={to.CREATED_BY: "tfjob-kit"}),
    )
    found = survey(deployment(), crds=crds)
    assert found["other_crds"] == ["mpijobs.kubeflow.org", "pytorchjobs.kubeflow.org"]
    assert [c["metadata"]["name"] for c in found["dropped_crds"]] == ["pytorchjobs.kubeflow.org"]
    tfjob_only = survey(deployment(args=["--enable-scheme=tfjob"]), crds=crds)
    assert tfjob_only["dropped_crds"] == []


def test_jobs_summary_names_five_at_most() -> None:
    results: list[dict[str, Any]] = [
        {
            "item": crd("pytorchjobs.kubeflow.org", kind="PyTorchJob"),
            "resources": [{"metadata": {"namespace": "ml", "name": f"pt{i}"}} for i in range(7)],
        },
        {"item": crd("mxjobs.kubeflow.org", kind="MXJob"), "resources": []},
        {
            "item": crd("xgboostjobs.kubeflow.org", kind="XGBoostJob"),
            "resources": [{"metadata": {"namespace": "ml", "name": "xg"}}],
        },
    ]
    assert to.jobs_summary(results) == [
        "PyTorchJob: 7 (ml/pt0, ml/pt1, ml/pt2, ml/pt3, ml/pt4, ...)",
        "XGBoostJob: 1 (ml/xg)",
    ]


RECORD = "tfjob-kit-adopted-training-operator"


@pytest.mark.parametrize(
    ("record", "tfjobs", "ours", "text"),
    [
        ([], [], False, ""),
        ([], [crd(annotations={to.CREATED_BY: "tfjob-kit"})], True, None),
        (
            [],
            [crd(managers=("platform-team", "tfjob-kit"), annotations={to.UPGRADED_BY: "t"})],
            False,
            "tfjobs.kubeflow.org (applied by platform-team, not created by the toolkit)",
        ),
        (
            [{"data": {"namespace": "ml-platform", "deployment": "training-operator"}}],
            [crd(annotations={to.CREATED_BY: "tfjob-kit"})],
            False,
            "tfjobs.kubeflow.org (of the adopted training-operator ml-platform/"
            f"training-operator, record kube-system/{RECORD})",
        ),
        (
            [{"data": {"deployment": "", "found": "the CRD tfjobs.kubeflow.org, ..."}}],
            [crd()],
            False,
            "tfjobs.kubeflow.org (of the adopted training-operator the CRD tfjobs.kubeflow.org, "
            f"..., record kube-system/{RECORD})",
        ),
    ],
)
def test_ownership(
    record: list[dict[str, Any]], tfjobs: list[dict[str, Any]], ours: bool, text: str | None
) -> None:
    owner = to.ownership({"record": record, "crd": tfjobs}, RECORD)
    assert owner["crd_ours"] is ours
    if text is not None:
        assert owner["kept_text"] == text


# The upgrade: upstream's v1.8.1 install in kubeflow, as tests/integration/test_upgrade.py builds
# it, with the bindings that decide what goes.
OLD = survey(deployment())["foreign"][0]
ACCOUNT = {"kind": "ServiceAccount", "name": "training-operator", "namespace": "kubeflow"}
OTHER = {"kind": "ServiceAccount", "name": "other", "namespace": "kube-system"}


def binding(name: str, role: str, *subjects: dict[str, str], ns: str = "") -> dict[str, Any]:
    return {
        "metadata": {"name": name, **({"namespace": ns} if ns else {})},
        "roleRef": {"kind": "ClusterRole", "name": role},
        "subjects": list(subjects),
    }


CLUSTER_BINDINGS = [
    binding("training-operator", "training-operator", ACCOUNT),  # upstream's: goes with its role
    binding("test-own", "test-extra", ACCOUNT),  # goes; its role stays (a RoleBinding uses it)
    binding("test-shared", "test-shared", ACCOUNT, OTHER),  # stays whole
]
ROLE_BINDINGS = [binding("uses-extra", "test-extra", OTHER, ns="jobs")]
WEBHOOK = {
    "webhooks": [
        {"clientConfig": {"service": {"namespace": "kubeflow", "name": "training-operator"}}}
    ]
}
CHART: list[Any] = [
    {"kind": "ServiceAccount", "metadata": {"name": "training-operator"}},
    {"kind": "ClusterRole", "metadata": {"name": "training-operator"}},
    {"kind": "ClusterRoleBinding", "metadata": {"name": "training-operator"}},
    None,  # an empty document
]


def plan(
    workloads: dict[str, list[dict[str, Any]]] | None = None,
    role_bindings: list[dict[str, Any]] = ROLE_BINDINGS,
    namespace: str = NS,
    webhooks: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    return upgrade.upgrade(
        OLD,
        namespace,
        deployment(),
        CLUSTER_BINDINGS,
        role_bindings,
        workloads or {"Pod": [], "CronJob": []},
        [WEBHOOK] if webhooks is None else webhooks,
        CHART,
    )


def test_the_upgrade_removes_the_old_install_and_what_only_it_uses() -> None:
    result = plan()
    assert [upgrade.named(o) for o in result["objects"]] == [
        "Deployment training-operator",
        "Service training-operator",
        "Secret training-operator-webhook-cert",
        "ServiceAccount training-operator",
        "ClusterRoleBinding training-operator",
        "ClusterRoleBinding test-own",
        "ClusterRole training-operator",
        "ValidatingWebhookConfiguration validator.training-operator.kubeflow.org",
    ]
    assert result["kept"] == ["ClusterRoleBinding test-shared"]
    assert (result["blocked"], result["account_blocked"]) == ([], False)
    assert "ValidatingWebhookConfiguration" not in str(plan(webhooks=[])["objects"])


def test_a_clusterrole_a_binding_still_uses_blocks_the_charts() -> None:
    uses_old = binding("uses-old", "training-operator", ACCOUNT, ns="jobs")
    result = plan(role_bindings=[*ROLE_BINDINGS, uses_old])
    assert "ClusterRole training-operator" not in [upgrade.named(o) for o in result["objects"]]
    assert result["blocked"] == ["ClusterRole training-operator"]
    assert result["users"] == ["RoleBinding jobs/uses-old"]


def test_an_account_another_workload_runs_as_stays_with_its_bindings() -> None:
    cron = {
        "metadata": {"name": "report"},
        "spec": {
            "jobTemplate": {
                "spec": {"template": {"spec": {"serviceAccountName": "training-operator"}}}
            }
        },
    }
    # the operator's own pod (its labels match the Deployment's selector) does not count
    pod = {
        "metadata": {"name": "op-1", "labels": {"control-plane": "kubeflow-training-operator"}},
        "spec": {"serviceAccountName": "training-operator"},
    }
    result = plan({"Pod": [pod], "CronJob": [cron]})
    assert result["account_users"] == ["CronJob kubeflow/report"]
    assert [upgrade.named(o) for o in result["objects"]][3:] == [
        "ValidatingWebhookConfiguration validator.training-operator.kubeflow.org"
    ]
    assert result["kept"][-1] == (
        "ServiceAccount kubeflow/training-operator with its bindings (used by CronJob "
        "kubeflow/report too)"
    )
    # The chart into the old namespace would install an account of that name: refused.
    assert not result["account_blocked"]
    assert plan({"CronJob": [cron]}, namespace="kubeflow")["account_blocked"]


def test_webhook_names_come_from_the_flags() -> None:
    flags = ["--webhook-service-name=old-svc", "--webhook-secret-name=old-cert", "--x"]
    result = upgrade.plan(OLD, deployment(args=flags, account=None), [], [], {}, [WEBHOOK])
    assert [upgrade.named(o) for o in result["objects"]] == [
        "Deployment training-operator",
        "Service old-svc",
        "Secret old-cert",
    ]  # the default account stays, and the webhook calls another Service


def scheduler(
    namespace: str, container: str, image: str, release: str | None = None
) -> dict[str, Any]:
    annotations = {"meta.helm.sh/release-name": release} if release else None
    return deployment("volcano-scheduler", namespace, image, container, annotations=annotations)


def test_another_volcano_is_found_by_its_scheduler_or_its_crds() -> None:
    deployments = [
        scheduler("volcano-system", "vc-scheduler", "volcanosh/vc-scheduler:v1.13.0", "volcano"),
        scheduler("other", "volcano-scheduler", "mirror/scheduler:1"),  # upstream's name
        scheduler(
            "volcano-system", "volcano-scheduler", "volcanosh/vc-scheduler:v1.13.0", "volcano"
        ),
        scheduler("web", "app", "nginx:1.27"),
    ]
    queues = crd("queues.scheduling.volcano.sh", managers=("helm",), kind="Queue")
    found = volcano.survey(
        {"deployments": deployments, "queue_crd": [queues], "marker": []},
        "volcano-system",
        "volcano",
    )
    assert found == [
        "Deployment other/volcano-scheduler (image mirror/scheduler:1)",
        # the release's name, but upstream's chart (its container is volcano-scheduler)
        "Deployment volcano-system/volcano-scheduler (image volcanosh/vc-scheduler:v1.13.0)",
        "Volcano CRDs (queues.scheduling.volcano.sh, applied by helm, kube-apiserver)",
    ]
    local = {"queue_crd": [queues], "marker": [{"data": {"volcano": "v1.14.1"}}]}
    assert volcano.survey(local, "volcano-system", "volcano") == []
    ours = {"queue_crd": [crd("queues.scheduling.volcano.sh", managers=("tfjob-kit",))]}
    assert volcano.survey(ours, "volcano-system", "volcano") == []


def test_volcanos_crds_are_the_toolkits_only_when_it_applied_them_and_adopted_nothing() -> None:
    crds = [
        crd("queues.scheduling.volcano.sh", managers=("tfjob-kit",)),
        crd("jobs.batch.volcano.sh", managers=("tfjob-kit-cluster",)),
        crd("podgroups.scheduling.volcano.sh", managers=("platform-team",)),
    ]
    owner = volcano.ownership({"record": [], "crds": crds}, "tfjob-kit-adopted-volcano")
    assert owner["own"] == ["queues.scheduling.volcano.sh", "jobs.batch.volcano.sh"]
    assert owner["kept_text"] == (
        "podgroups.scheduling.volcano.sh (applied by platform-team, not by the toolkit)"
    )
    adopted = volcano.ownership({"record": [{}], "crds": crds}, "tfjob-kit-adopted-volcano")
    assert adopted["own"] == [] and len(adopted["kept"]) == 3
    assert adopted["kept_text"].startswith(
        "queues.scheduling.volcano.sh (of the adopted Volcano, record kube-system/"
        "tfjob-kit-adopted-volcano), "
    )


def node(name: str, gpus: Any = None) -> dict[str, Any]:
    status = {} if gpus is None else {"allocatable": {"cpu": "8", "nvidia.com/gpu": gpus}}
    return {"metadata": {"name": name}, "status": status}


def test_device_plugin_queries_one_label_each() -> None:
    labels = ["nvidia.com/gpu.present=true", "feature.node.kubernetes.io/pci-10de.present=true"]
    assert device_plugin.node_queries(labels) == {
        "nodes_1": {"kind": "Node", "label_selectors": [labels[0]]},
        "nodes_2": {"kind": "Node", "label_selectors": [labels[1]]},
    }
    assert device_plugin.node_queries([]) == {}


def test_device_plugin_gpu_nodes_are_every_querys_nodes_once() -> None:
    objects = {
        "nodes_1": [node("b"), node("a")],
        "nodes_2": [node("a"), node("c")],
        "nodes_3": None,
        "namespace": [{"metadata": {"name": "not-a-node"}}],
    }
    assert device_plugin.gpu_nodes(objects) == ["a", "b", "c"]
    assert device_plugin.gpu_nodes({"namespace": []}) == []


def test_device_plugin_names_the_nodes_without_gpus() -> None:
    nodes = [
        node("no-status"),
        node("zero", "0"),
        node("two", "2"),
        node("odd", "x"),
        node("one", 1),
    ]
    assert device_plugin.without_gpus(nodes) == ["no-status", "zero", "odd"]
