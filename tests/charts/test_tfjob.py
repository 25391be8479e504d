"""The tfjob chart (a few values in, one TFJob out): lint, rendered objects, Pod Security, and
every TFJob it renders judged by tfjob-kit's own validator."""

from __future__ import annotations

import pytest

from tfjob_kit.findings import Severity
from tfjob_kit.validate import validate_text

from ._chart import (
    CHARTS,
    Args,
    Chart,
    Doc,
    Shared,
    one,
    scenario_id,
    scenarios,
)

PATH = CHARTS / "tfjob"
# The values every shared check (at the end) and the TFJob validator render the chart with: the
# defaults and each ci/ file.
SCENARIOS = scenarios("tfjob")
REQUIRED_SCENARIOS = {"ps-worker", "chief-gpu", "gang-volcano", "tensorboard-pvc"}


def test_tfjob_required_scenarios_exist() -> None:
    names = {p.name.removesuffix("-values.yaml") for p in (PATH / "ci").iterdir()}
    assert names >= REQUIRED_SCENARIOS


@pytest.mark.parametrize("args", SCENARIOS, ids=scenario_id)
def test_tfjob_renders_a_valid_tfjob(tfjob: Chart, args: Args) -> None:
    text = tfjob.render_text(*args)
    report = validate_text(text, source=f"tfjob chart ({scenario_id(args)})")
    assert report.checked == 1
    errors = [f for f in report.findings if f.severity >= Severity.ERROR]
    assert not errors, [f.as_dict() for f in errors]
    job = one(tfjob.rendered(*args), "TFJob")
    for replica, spec in job["spec"]["tfReplicaSpecs"].items():
        assert replica in ("Chief", "PS", "Worker", "Evaluator")
        assert spec["replicas"] > 0
        containers = spec["template"]["spec"]["containers"]
        assert containers[0]["name"] == "tensorflow"
        assert containers[0]["ports"] == [
            {"name": "tfjob-port", "containerPort": 2222, "protocol": "TCP"}
        ]
        assert "restartPolicy" not in spec["template"]["spec"]


def _replicas(tfjob: Chart, args: tuple[str, ...]) -> dict[str, Doc]:
    specs: dict[str, Doc] = one(tfjob.rendered(*args), "TFJob")["spec"]["tfReplicaSpecs"]
    return specs


def _scenario(name: str) -> tuple[str, ...]:
    return ("-f", str(PATH / "ci" / f"{name}-values.yaml"))


def test_tfjob_zero_replicas_are_absent(tfjob: Chart) -> None:
    assert set(_replicas(tfjob, ())) == {"PS", "Worker"}
    assert set(_replicas(tfjob, ("--set", "ps.replicas=0"))) == {"Worker"}


def test_tfjob_chief_gpu(tfjob: Chart) -> None:
    replicas = _replicas(tfjob, _scenario("chief-gpu"))
    for replica, gpus in (("Chief", 1), ("Worker", 2), ("PS", None)):
        pod = replicas[replica]["template"]["spec"]
        limits = pod["containers"][0]["resources"]["limits"]
        assert limits.get("nvidia.com/gpu") == gpus, replica
        tolerations = [t["key"] for t in pod.get("tolerations") or []]
        assert ("nvidia.com/gpu" in tolerations) == bool(gpus), replica
        assert (pod.get("runtimeClassName") == "nvidia") == bool(gpus), replica


def test_tfjob_gang_volcano(tfjob: Chart) -> None:
    job = one(tfjob.rendered(*_scenario("gang-volcano")), "TFJob")
    assert job["spec"]["runPolicy"]["schedulingPolicy"] == {
        "minAvailable": 5,
        "queue": "default",
        "scheduleTimeoutSeconds": 600,
    }
    for spec in job["spec"]["tfReplicaSpecs"].values():
        pod = spec["template"]
        assert pod["spec"]["schedulerName"] == "volcano"
        assert "scheduling.k8s.io/group-name" not in (pod["metadata"].get("annotations") or {})
    plain = one(tfjob.rendered(), "TFJob")
    assert "schedulingPolicy" not in plain["spec"]["runPolicy"]


def test_tfjob_run_policy(tfjob: Chart) -> None:
    policy = one(tfjob.rendered(*_scenario("ps-worker")), "TFJob")["spec"]["runPolicy"]
    assert policy == {
        "cleanPodPolicy": "Running",
        "backoffLimit": 3,
        "activeDeadlineSeconds": 7200,
        "ttlSecondsAfterFinished": 86400,
    }


def test_tfjob_checkpoint_claim_and_tensorboard(tfjob: Chart) -> None:
    docs = tfjob.rendered(*_scenario("tensorboard-pvc"))
    claim = one(docs, "PersistentVolumeClaim")
    assert claim["spec"]["resources"]["requests"]["storage"] == "5Gi"
    assert claim["metadata"]["annotations"]["helm.sh/resource-policy"] == "keep"
    job = one(docs, "TFJob")
    name = job["metadata"]["name"]

    def claim_mount(pod: Doc) -> Doc:
        volumes = {v["name"]: v for v in pod["volumes"]}
        mounts: list[Doc] = [
            m
            for m in pod["containers"][0]["volumeMounts"]
            if "persistentVolumeClaim" in volumes[m["name"]]
        ]
        [mount] = mounts
        volume = volumes[mount["name"]]["persistentVolumeClaim"]
        assert volume["claimName"] == claim["metadata"]["name"]
        return mount

    assert set(job["spec"]["tfReplicaSpecs"]) == {"Chief", "PS", "Worker", "Evaluator"}
    for spec in job["spec"]["tfReplicaSpecs"].values():
        mount = claim_mount(spec["template"]["spec"])
        assert (mount["mountPath"], mount["subPath"]) == ("/tmp/tensorflow", name)
        assert not mount.get("readOnly")
    deployment = one(docs, "Deployment")
    pod = deployment["spec"]["template"]["spec"]
    mount = claim_mount(pod)
    assert (mount["mountPath"], mount["subPath"], mount["readOnly"]) == (
        "/tmp/tensorflow",
        name,
        True,
    )
    assert "--logdir=/tmp/tensorflow/train" in pod["containers"][0]["args"]
    service = one(docs, "Service")
    selector = service["spec"]["selector"]
    assert selector == deployment["spec"]["selector"]["matchLabels"]
    assert selector["app.kubernetes.io/component"] == "tensorboard"
    for spec in job["spec"]["tfReplicaSpecs"].values():
        labels = spec["template"]["metadata"]["labels"]
        assert not selector.items() <= labels.items(), "the Service would select training pods"


def test_tfjob_existing_claim(tfjob: Chart) -> None:
    docs = tfjob.rendered(
        "--set",
        "storage.enabled=true",
        "--set",
        "storage.existingClaim=data",
        "--set",
        "storage.perJobSubPath=false",
    )
    assert not [d for d in docs if d["kind"] == "PersistentVolumeClaim"]
    for spec in one(docs, "TFJob")["spec"]["tfReplicaSpecs"].values():
        pod = spec["template"]["spec"]
        assert {"name": "checkpoints", "persistentVolumeClaim": {"claimName": "data"}} in pod[
            "volumes"
        ]
        assert {"name": "checkpoints", "mountPath": "/tmp/tensorflow"} in pod["containers"][0][
            "volumeMounts"
        ]


TFJOB_FAILURES = [
    (
        ("--set", "ps.replicas=0", "--set", "worker.replicas=0"),
        "chief, ps, worker and evaluator replicas are all 0",
    ),
    (("--set", "worker.replicas=0"), "no Chief and no Worker"),
    (("--set", "ps.resources.limits.nvidia\\.com/gpu=1"), "GPUs on PS"),
    (("--set", "ps.resources.requests.nvidia\\.com/gpu=1"), "GPUs on PS"),
    (("--set", "worker.resources.limits.nvidia\\.com/gpu=1"), "set worker.gpus instead"),
    (("--set", "tensorboard.enabled=true"), "tensorboard.enabled needs storage.enabled"),
    (
        ("--set", "gang.enabled=true", "--set", "gang.minAvailable=4"),
        "gang.minAvailable 4 exceeds the 3 pods of the job",
    ),
    (("--set", "gang.queue=research"), "but gang.enabled is false"),
    (
        (
            "--set",
            "chief.replicas=1",
            "--set",
            "worker.replicas=0",
            "--set",
            "successPolicy=AllWorkers",
        ),
        "successPolicy AllWorkers needs workers",
    ),
    (("--set", "env[0].name=TF_CONFIG", "--set", "env[0].value={}"), "env sets TF_CONFIG"),
    (("--set", "name=Mnist_Job"), "is not a DNS-1035 label"),
    (("--set", f"name=j{'x' * 55}"), "shorten name to at most 54 characters"),
    (("--set", "restartPolicy=Always"), "restartPolicy Always on worker"),
    (
        ("--set", "chief.replicas=1", "--set", "chief.restartPolicy=Always"),
        "restartPolicy Always on chief",
    ),
    (("--set", "storage.enabled=true", "--set", "storage.size="), "needs storage.size"),
]


@pytest.mark.parametrize(
    ("args", "message"), TFJOB_FAILURES, ids=[f"{i}:{m}" for i, (_, m) in enumerate(TFJOB_FAILURES)]
)
def test_tfjob_validation_fails(tfjob: Chart, args: tuple[str, ...], message: str) -> None:
    result = tfjob.template(*args)
    assert result.returncode != 0, f"rendered although {message!r} was expected"
    assert message in result.stderr, result.stderr


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--set", "chief.replicas=2"), "/chief/replicas"),
        (("--set", "runPolicy.cleanPodPolicy=none"), "/runPolicy/cleanPodPolicy"),
        (("--set", "ps.gpus=1"), "/ps"),
        (("--set", "restartPolicy=Sometimes"), "/restartPolicy"),
    ],
)
def test_tfjob_schema_rejects(tfjob: Chart, args: tuple[str, ...], message: str) -> None:
    result = tfjob.template(*args)
    assert result.returncode != 0
    assert message in result.stderr, result.stderr


# --- what the checks every chart gets (test_every_chart.py) need to know of this one -------

# (SCENARIOS is at the top: the TFJob validator test uses it too.)


SHARED = Shared("tfjob", "tfjob", SCENARIOS)
