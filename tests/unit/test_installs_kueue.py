"""The kueue role's decisions (tfjob_kit.installs.kueue): its CRDs for a release, and its queue
variables as Kueue objects, with what is wrong in them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from tfjob_kit.cluster import kueue as local_kueue
from tfjob_kit.installs import kueue
from tfjob_kit.versions import charts_dir

ROOT = Path(__file__).resolve().parents[2]

GPU = {"name": "a100", "node_labels": {"gpu": "a100"}}
CPU = {"name": "cpu-only"}


def _queue(**extra: Any) -> dict[str, Any]:
    return {"name": "ml", "quotas": {"a100": {"nvidia.com/gpu": 8, "cpu": 64}}, **extra}


def _objects(
    flavors: list[dict[str, Any]],
    queues: list[dict[str, Any]],
    local: list[dict[str, Any]] | None = None,
    existing: list[str] | None = None,
) -> dict[str, Any]:
    return kueue.queue_objects(flavors, queues, local or [], [], existing or [])


def test_the_crds_name_the_releases_service_or_no_conversion() -> None:
    chart = str(charts_dir() / "kueue")
    crds = kueue.crds(chart, "q-kueue-webhook-service", "queues", conversion=True)
    services = [
        c["spec"]["conversion"]["webhook"]["clientConfig"]["service"]
        for c in crds
        if "conversion" in c["spec"]
    ]
    assert len(crds) == 11 and len(services) == 5
    assert {(s["namespace"], s["name"]) for s in services} == {
        ("queues", "q-kueue-webhook-service")
    }
    local = kueue.crds(chart, "ignored", "ignored", conversion=False)
    assert len(local) == 11 and not [c for c in local if "conversion" in c["spec"]]
    # The copies of their names: the local cluster's (which the generator reads) and the role's
    # (what teardown may remove), held equal here.
    names = sorted(c["metadata"]["name"] for c in crds)
    role_vars = yaml.safe_load((ROOT / "roles" / "kueue" / "vars" / "main.yml").read_text())
    assert names == sorted(local_kueue.CRDS) == sorted(role_vars["kueue_crd_names"])


def test_queues_in_the_order_to_apply_them_annotated_as_the_toolkits() -> None:
    result = kueue.queue_objects(
        [GPU],
        [_queue(cohort="research", borrowing_limits={"a100": {"nvidia.com/gpu": 4}})],
        [{"name": "ml", "namespace": "team", "cluster_queue": "ml"}],
        [{"name": "high", "value": 1000}],
        [],
    )
    assert result["problems"] == []
    kinds = [o["kind"] for o in result["objects"]]
    assert kinds == ["ResourceFlavor", "WorkloadPriorityClass", "ClusterQueue", "LocalQueue"]
    for obj in result["objects"]:
        assert obj["apiVersion"] == "kueue.x-k8s.io/v1beta2"
        assert obj["metadata"]["annotations"] == {"tfjob-kit.io/created-by": "tfjob-kit"}
    flavor, priority, queue, local = result["objects"]
    assert flavor["spec"] == {"nodeLabels": {"gpu": "a100"}}
    assert priority["value"] == 1000
    assert queue["spec"] == {
        "namespaceSelector": {},
        "cohortName": "research",
        "resourceGroups": [
            {
                "coveredResources": ["cpu", "nvidia.com/gpu"],
                "flavors": [
                    {
                        "name": "a100",
                        # canonical quantities, as Kueue's webhook stores them
                        "resources": [
                            {"name": "cpu", "nominalQuota": "64"},
                            {"name": "nvidia.com/gpu", "nominalQuota": "8", "borrowingLimit": "4"},
                        ],
                    }
                ],
            }
        ],
    }
    assert local["metadata"]["namespace"] == "team" and local["spec"] == {"clusterQueue": "ml"}


def test_flavors_that_cover_other_resources_are_other_groups() -> None:
    """Kueue wants every flavor of a group to list the group's resources: a GPU flavor and a CPU
    flavor with other resources are two groups, each flavor in the order given."""
    queue = _queue(quotas={"a100": {"nvidia.com/gpu": 8, "cpu": 64}, "cpu-only": {"cpu": 32}})
    (obj,) = [o for o in _objects([GPU, CPU], [queue])["objects"] if o["kind"] == "ClusterQueue"]
    groups = obj["spec"]["resourceGroups"]
    assert [g["coveredResources"] for g in groups] == [["cpu", "nvidia.com/gpu"], ["cpu"]]
    assert [[f["name"] for f in g["flavors"]] for g in groups] == [["a100"], ["cpu-only"]]


def test_quotas_are_written_as_the_server_writes_them() -> None:
    queue = _queue(quotas={"a100": {"cpu": 1.5, "memory": "1024Mi", "nvidia.com/gpu": "8"}})
    (obj,) = [o for o in _objects([GPU], [queue])["objects"] if o["kind"] == "ClusterQueue"]
    resources = obj["spec"]["resourceGroups"][0]["flavors"][0]["resources"]
    assert [r["nominalQuota"] for r in resources] == ["1500m", "1Gi", "8"]


PROBLEMS = [
    ([GPU], [_queue(quotas={"a100": {"cpu": "lots"}})], [], "a quota of 'lots' in flavor"),
    ([CPU], [_queue()], [], "gives quota in flavor 'a100', which kueue_resource_flavors"),
    ([GPU], [_queue(quotas={})], [], "has no quotas"),
    (
        [GPU],
        [_queue(borrowing_limits={"a100": {"nvidia.com/gpu": 2}})],
        [],
        "has borrowing_limits but no cohort",
    ),
    (
        [GPU],
        [_queue(cohort="c", borrowing_limits={"a100": {"memory": "1Gi"}})],
        [],
        "limits borrowing of memory in flavor 'a100', which its quotas do not cover",
    ),
    (
        [GPU],
        [_queue()],
        [{"name": "lq", "namespace": "team", "cluster_queue": "nowhere"}],
        "team/lq points at the ClusterQueue 'nowhere'",
    ),
]


@pytest.mark.parametrize(
    ("flavors", "queues", "local", "message"), PROBLEMS, ids=[p[3][:30] for p in PROBLEMS]
)
def test_unusable_queues_are_refused_with_nothing_to_apply(
    flavors: list[dict[str, Any]],
    queues: list[dict[str, Any]],
    local: list[dict[str, Any]],
    message: str,
) -> None:
    result = _objects(flavors, queues, local)
    assert result["objects"] == []
    assert any(message in p for p in result["problems"]), result["problems"]


def test_a_local_queue_may_name_a_cluster_queue_the_cluster_has() -> None:
    local = [{"name": "lq", "namespace": "team", "cluster_queue": "theirs"}]
    assert _objects([GPU], [_queue()], local, existing=["theirs"])["problems"] == []


def test_a_multikueue_manager_dispatches_its_flagged_cluster_queues() -> None:
    """A manager's ClusterQueue with multikueue (true, or as a template leaves it, "True") names
    the AdmissionCheck, which takes the MultiKueueConfig of the workers; both are applied before
    the ClusterQueues. The others name no check."""
    queues: list[dict[str, Any]] = [
        {"name": "ml", "quotas": {"gpu": {"nvidia.com/gpu": 8}}, "multikueue": "True"},
        {"name": "dev", "quotas": {"gpu": {"nvidia.com/gpu": 1}}, "multikueue": False},
    ]
    found = kueue.queue_objects([{"name": "gpu"}], queues, [], [], [], ["worker-a", "worker-b"])
    assert found["problems"] == []
    kinds = [(o["kind"], o["metadata"]["name"]) for o in found["objects"]]
    assert kinds == [
        ("ResourceFlavor", "gpu"),
        ("MultiKueueConfig", "tfjob-kit-multikueue"),
        ("AdmissionCheck", "tfjob-kit-multikueue"),
        ("ClusterQueue", "ml"),
        ("ClusterQueue", "dev"),
    ]
    config, check, ml, dev = found["objects"][1:]
    assert config["spec"] == {"clusters": ["worker-a", "worker-b"]}
    assert check["spec"]["controllerName"] == "kueue.x-k8s.io/multikueue"
    assert check["spec"]["parameters"]["name"] == config["metadata"]["name"]
    assert ml["spec"]["admissionChecksStrategy"] == {
        "admissionChecks": [{"name": "tfjob-kit-multikueue"}]
    }
    assert "admissionChecksStrategy" not in dev["spec"]


def test_a_dispatching_queue_without_workers_is_refused() -> None:
    queues: list[dict[str, Any]] = [
        {"name": "ml", "quotas": {"gpu": {"cpu": 1}}, "multikueue": True}
    ]
    found = kueue.queue_objects([{"name": "gpu"}], queues, [], [], [])
    assert found["objects"] == []
    assert found["problems"] == [
        "kueue_cluster_queues: ml dispatches to MultiKueue workers (multikueue: true), but "
        "kueue_multikueue_workers names none: its jobs would wait for ever"
    ]


def _other_kueue(frameworks: list[str] | None, mounted: str = "kueue-manager-config") -> Any:
    deployment = {
        "metadata": {"name": "kueue-controller-manager", "namespace": "kueue-system"},
        "spec": {
            "template": {"spec": {"volumes": [{"name": "c", "configMap": {"name": mounted}}]}}
        },
    }
    text = "apiVersion: config.kueue.x-k8s.io/v1beta2\nkind: Configuration\n"
    if frameworks is not None:
        text += f"integrations:\n  frameworks: {frameworks}\n"
    config_map = {
        "metadata": {"name": "kueue-manager-config", "namespace": "kueue-system"},
        "data": {kueue.CONFIG_KEY: text if frameworks is not None else "{{ not yaml"},
    }
    return {"deployments": [deployment], "config_maps": [config_map]}


def test_another_kueue_that_manages_the_jobs_is_used() -> None:
    found = kueue.survey(_other_kueue(["batch/job", "kubeflow.org/tfjob"]), ["kubeflow.org/tfjob"])
    assert found == {
        "existing": [
            {
                "deployment": "Deployment kueue-system/kueue-controller-manager",
                "config_map": "kueue-system/kueue-manager-config",
                "frameworks": ["batch/job", "kubeflow.org/tfjob"],
            }
        ],
        "problems": [],
    }
    assert kueue.survey({"deployments": [], "config_maps": []}, ["kubeflow.org/tfjob"]) == {
        "existing": [],
        "problems": [],
    }


def test_another_kueue_that_does_not_is_refused_saying_what_to_add() -> None:
    needed = ["kubeflow.org/tfjob", "trainer.kubeflow.org/trainjob"]
    (problem,) = kueue.survey(_other_kueue(["batch/job"]), needed)["problems"]
    assert problem == (
        "Kueue already runs here (Deployment kueue-system/kueue-controller-manager), and its "
        "Configuration (ConfigMap kueue-system/kueue-manager-config, key "
        "controller_manager_config.yaml) does not enable kubeflow.org/tfjob, "
        "trainer.kubeflow.org/trainjob: add them to integrations.frameworks and restart it "
        "(kubectl -n kueue-system rollout restart deployment/kueue-controller-manager); until "
        "then its queues ignore those jobs"
    )


def test_another_kueue_whose_configuration_cannot_be_read_is_refused() -> None:
    for objects in (_other_kueue(None), _other_kueue(["kubeflow.org/tfjob"], mounted="other")):
        (problem,) = kueue.survey(objects, ["kubeflow.org/tfjob"])["problems"]
        assert "cannot be read, so whether it manages kubeflow.org/tfjob is unknown" in problem
