"""Every manifest from the seed documents is loaded and judged sensibly."""

from __future__ import annotations

from pathlib import Path

import pytest

from tfjob_kit import convert, explain
from tfjob_kit.manifests import load_path
from tfjob_kit.validate import check_object, validate_paths

SEEDS = Path(__file__).resolve().parent.parent / "data" / "seeds"


def rules_of(name: str) -> set[tuple[str, str]]:
    report = validate_paths([str(SEEDS / name)])
    return {(f.rule, f.path) for f in report.findings}


def test_seed000_v1beta1_with_generate_name_and_placeholder_image() -> None:
    found = rules_of("seed000-v1beta1-generatename.yaml")
    assert ("deprecated-api-version", "$.apiVersion") in found
    assert ("generate-name-only", "$.metadata") in found
    for rtype in ("PS", "Worker", "Master"):
        path = f"$.spec.tfReplicaSpecs.{rtype}.template.spec.containers[0].image"
        assert ("image-placeholder", path) in found
    assert not any(rule == "schema" for rule, _ in found)


@pytest.mark.parametrize(
    "name", ["seed001-v1beta1-master-gpu.yaml", "seed001-v1beta1-module6.yaml"]
)
def test_seed001_master_template_restart_policy_is_overwritten(name: str) -> None:
    found = rules_of(name)
    assert ("replica-type-case", "$.spec.tfReplicaSpecs.MASTER") in found
    assert (
        "restart-policy-overridden",
        "$.spec.tfReplicaSpecs.MASTER.template.spec.restartPolicy",
    ) in found
    assert (
        "image-placeholder",
        "$.spec.tfReplicaSpecs.MASTER.template.spec.containers[0].image",
    ) in found


def test_seed003_kube_batch_by_hand() -> None:
    report = validate_paths([str(SEEDS / "seed003-kube-batch-podgroup.yaml")])
    podgroup, tfjob = report.results
    assert podgroup.skipped is not None and "PodGroup" in podgroup.skipped
    rules = {f.rule for f in tfjob.findings}
    assert rules == {"gang-scheduling-by-hand", "kube-batch-scheduler", "podgroup-by-hand"}
    assert all(str(f.severity) == "warning" for f in tfjob.findings)


def test_seed003_volcano_podgroup_by_hand_and_volcano_job_skipped() -> None:
    report = validate_paths(
        [str(SEEDS / "seed003-volcano-podgroup.yaml"), str(SEEDS / "seed003-volcano-job.yaml")]
    )
    kinds = [(r.kind, r.skipped is None) for r in report.results]
    assert kinds == [("PodGroup", False), ("TFJob", True), ("Job", False)]
    (finding,) = report.findings
    assert (finding.rule, finding.path, finding.document) == (
        "podgroup-by-hand",
        "$.metadata.name",
        2,
    )


def test_seed003_tfconfig_matches_the_tutorials_shape() -> None:
    (job,) = [
        d.content
        for d in load_path(str(SEEDS / "seed003-volcano-podgroup.yaml"))
        if d.kind == "TFJob"
    ]
    config = explain.tf_config(job, "Worker", 1)
    assert config == (
        '{"cluster":{"ps":["dist-mnist-for-e2e-test-ps-0.default.svc:2222",'
        '"dist-mnist-for-e2e-test-ps-1.default.svc:2222"],"worker":['
        + ",".join(f'"dist-mnist-for-e2e-test-worker-{i}.default.svc:2222"' for i in range(4))
        + ']},"task":{"type":"worker","index":1},"environment":"cloud"}'
    )


def test_seed004_t9k_is_skipped_with_a_hint_and_converts_cleanly() -> None:
    report = validate_paths([str(SEEDS / "seed004-t9k-tensorflowtrainingjob.yaml")])
    (result,) = report.results
    assert result.skipped is not None and "tfjob-kit convert" in result.skipped
    (doc,) = load_path(str(SEEDS / "seed004-t9k-tensorflowtrainingjob.yaml"))
    job, notes = convert.to_v1(doc.content)
    assert check_object(job) == []
    dropped = {n.path for n in notes if n.kind == "dropped"}
    assert dropped == {"$.spec.scheduler.t9kScheduler.priority", "$.spec.tensorboardSpec"}
