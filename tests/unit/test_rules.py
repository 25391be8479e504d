"""Semantic rules whose inputs come from elsewhere (the schema) behave by that source."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest

from tfjob_kit import schema
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
