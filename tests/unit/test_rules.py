"""Semantic rules whose inputs come from elsewhere (the schema) behave by that source."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest

from tfjob_kit import explain, schema
from tfjob_kit.findings import Severity
from tfjob_kit.manifests import load_path
from tfjob_kit.validate import check_object

VALID = Path(__file__).resolve().parent.parent / "data" / "corpus" / "valid"


@pytest.mark.parametrize("field", schema.run_policy_fields())
def test_every_run_policy_field_at_spec_level_is_misplaced(field: str) -> None:
    (doc,) = load_path(str(VALID / "ps-worker.yaml"))
    job = copy.deepcopy(doc.content)
    job["spec"][field] = {"placeholder": field}
    found = {(f.rule, f.path) for f in check_object(job)}
    assert ("run-policy-misplaced", f"$.spec.{field}") in found


@pytest.mark.parametrize("image", ["", " "])
def test_a_blank_image_is_missing_not_untagged(image: str) -> None:
    (doc,) = load_path(str(VALID / "ps-worker.yaml"))
    job = copy.deepcopy(doc.content)
    container = job["spec"]["tfReplicaSpecs"]["Worker"]["template"]["spec"]["containers"][0]
    container["image"] = image
    at = "$.spec.tfReplicaSpecs.Worker.template.spec.containers[0].image"
    assert [f.rule for f in check_object(job) if f.path == at] == ["image-missing"]


@pytest.mark.parametrize("name", ["a", "mnist", "x" * 63])
@pytest.mark.parametrize("workers", [1, 30, 60, 110, 130, 250])
def test_tf_config_size_is_reported_exactly_when_one_is_longer_than_4_kib(
    name: str, workers: int
) -> None:
    (doc,) = load_path(str(VALID / "ps-worker.yaml"))
    job = copy.deepcopy(doc.content)
    job["metadata"]["name"] = name
    job["spec"]["tfReplicaSpecs"]["Worker"]["replicas"] = workers
    largest, total, pods = explain.tf_config_sizes(job)
    found = [f for f in check_object(job) if f.rule == "tf-config-size"]
    if largest > explain.TF_CONFIG_INLINE:
        assert [(f.path, f.severity) for f in found] == [("$.spec.tfReplicaSpecs", Severity.INFO)]
        assert f"up to {largest:,} bytes per pod, {total:,} bytes over its {pods} pods" in (
            found[0].message
        )
    else:
        assert found == []
