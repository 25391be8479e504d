"""rules.server: where a pod's field error lands in the TFJob, and the server's field strings
read back (the differential test, tests/integration/test_pod_validation_agrees.py, compares
the rule with the real server)."""

from __future__ import annotations

from typing import Any

import pytest

from tfjob_kit import model, rules
from tfjob_kit.podcheck.field import Key
from tfjob_kit.rules import server
from tfjob_kit.validate import check_object


def _job(**template: Any) -> dict[str, Any]:
    spec = {"containers": [{"name": "tensorflow", "image": "tf:1", **template.pop("c", {})}]}
    return {
        "apiVersion": model.API_VERSION,
        "kind": model.KIND,
        "metadata": {"name": "j", "namespace": "ns"},
        "spec": {
            "tfReplicaSpecs": {
                "Worker": {"replicas": 2, "template": {"spec": spec, **template}},
                "PS": {"replicas": 1, "template": {"spec": spec}},
            }
        },
    }


def test_parse_field_reads_indexes_keys_and_dotted_annotation_keys() -> None:
    assert server.parse_field("spec.containers[0].resources.limits[nvidia.com/gpu]") == (
        "spec",
        "containers",
        0,
        "resources",
        "limits",
        Key("nvidia.com/gpu"),
    )
    assert server.parse_field(
        "metadata.annotations.scheduler.alpha.kubernetes.io/tolerations[0].operator"
    ) == ("metadata", "annotations", "scheduler.alpha.kubernetes.io/tolerations", 0, "operator")


def test_paths_of_fields_the_operator_adds_or_replaces() -> None:
    job = _job(metadata={"labels": {"a": "b"}})
    worker = next(r for r in model.replicas(job) if r.type == "Worker")
    ps = next(r for r in model.replicas(job) if r.type == "PS")
    base = "$.spec.tfReplicaSpecs.Worker"
    # TF_CONFIG and the tfjob-port are appended: their errors point at the list
    assert server.field_json_path(worker, "spec.containers[0].env[0].name") == (
        f"{base}.template.spec.containers[0].env"
    )
    assert server.field_json_path(worker, "spec.containers[0].image") == (
        f"{base}.template.spec.containers[0].image"
    )
    assert server.field_json_path(worker, "spec.restartPolicy") == f"{base}.restartPolicy"
    assert server.field_json_path(worker, "metadata.labels") == f"{base}.template.metadata.labels"
    assert server.field_json_path(ps, "metadata.labels") == "$.metadata.name"
    assert server.field_json_path(worker, "metadata.name") == "$.metadata.name"


def test_a_server_finding_gives_way_to_another_rules_error_and_to_the_schema() -> None:
    job = _job(c={"ports": [{"containerPort": "80"}], "env": [{"name": "A"}]})
    job["spec"]["tfReplicaSpecs"]["Worker"]["template"]["spec"]["containers"].append(
        {"name": "tensorflow", "image": "tf:1"}
    )
    found = {(f.rule, f.path) for f in check_object(job)}
    containers = "$.spec.tfReplicaSpecs.Worker.template.spec.containers"
    assert ("duplicate-container-name", f"{containers}[1].name") in found
    assert ("server-rejects-pod", f"{containers}[1].name") not in found
    assert ("schema", f"{containers}[0].ports[0].containerPort") in found
    assert not [r for r, p in found if r == "server-rejects-pod" and p.endswith("containerPort")]


def test_job_metadata_is_judged_as_a_custom_resources() -> None:
    job = _job()
    job["metadata"]["labels"] = {"bad key": "x"}
    job["metadata"]["name"] = "a" * 64  # a DNS subdomain: not the CRD's concern
    errors = server.validate_job_metadata(job)
    assert [e.field for e in errors] == ["metadata.labels"]
    del job["metadata"]["name"]
    job["metadata"]["generateName"] = "x" * 70
    assert [e.field for e in server.validate_job_metadata(job)] == ["metadata.labels"]


def test_a_server_finding_gives_way_where_the_schema_reports_the_field_missing() -> None:
    job = _job()
    containers = job["spec"]["tfReplicaSpecs"]["Worker"]["template"]["spec"]["containers"]
    containers.append(
        {"image": "busybox:1.36"}
    )  # schema: no 'name' at [1]; the pod: Required at .name
    containers.append({"name": "sidecar", "image": "busybox:1.36", "ports": [{"containerPort": 0}]})
    at = "$.spec.tfReplicaSpecs.Worker.template.spec.containers"
    found = [(f.rule, f.path, f.message) for f in check_object(job)]
    # One finding for the one mistake.
    assert [f for f in found if f[1].startswith(f"{at}[1]")] == [
        ("schema", f"{at}[1]", "missing required field 'name'")
    ]
    # The server rule does find the missing name; check_object lets it give way.
    assert (server.POD_RULE, f"{at}[1].name") in {(f.rule, f.path) for f in rules.run(job)}
    # It still speaks where the schema has nothing to say.
    [(rule, path, message)] = [f for f in found if f[1].startswith(f"{at}[2]")]
    assert (rule, path) == (server.POD_RULE, f"{at}[2].ports[0].containerPort")
    assert "spec.containers[2].ports[0].containerPort: Required value" in message


@pytest.mark.usefixtures("on_1_34")
def test_pod_errors_from_the_jobs_metadata_once_and_not_where_the_tfjob_is_rejected() -> None:
    job = _job()
    job["metadata"]["name"] = "a" * 64  # the job-name label: too long, in both pods
    reps = model.replicas(job)
    found = list(server._pods_rejected(job, reps))
    assert [path for path, _ in found] == ["$.metadata.name"]
    assert "must be no more than 63 characters" in found[0][1]
    assert "in the TFJob's metadata" in found[0][1]
    job = _job()
    job["metadata"]["namespace"] = "Bad_NS"  # every pod's namespace too: the metadata rule's
    assert [e.field for e in server.validate_job_metadata(job)] == ["metadata.namespace"]
    assert list(server._pods_rejected(job, model.replicas(job))) == []
