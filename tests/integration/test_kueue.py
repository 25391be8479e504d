"""The real Kueue controller-manager on the local cluster (`tfjob-kit cluster up --kueue`), beside
the real training-operator, JobSet and Kubeflow Trainer: its webhooks, its CRDs' conversion
webhooks and its identity are the kueue chart's, and it admits, holds and releases TFJobs and
TrainJobs by the quota of their ClusterQueue."""

from __future__ import annotations

import io
import json
import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from snippets import block
from tfjob_kit import convert
from tfjob_kit.cluster import build, local
from tfjob_kit.cluster.identity import LOCAL_NAMESPACE
from tfjob_kit.cluster.kueue import CONTROLLER
from tfjob_kit.cluster.nodes import NodePlan
from tfjob_kit.cluster.procs import records
from tfjob_kit.versions import load_versions

from ._ansible import REPO, run_play_file, run_tasks
from ._cluster import Cluster
from .conftest import session_name
from .test_bootstrap import playbook, recap_changed

QUEUE_LABEL = "kueue.x-k8s.io/queue-name"
PRIORITY_LABEL = "kueue.x-k8s.io/priority-class"
GPU = "nvidia.com/gpu"
# How long the quota holder of test_the_module_submits_to_a_queue_and_says_why_a_job_waits runs
# once placed: it must outlast the next task's start, preflight and 10 s wait on a loaded machine
# (15 s did not in a .ci/run whose module runs took several seconds each; the wait was admitted).
HOLD_SECONDS = 40


@pytest.fixture(scope="module")
def kueue_cluster() -> Iterator[Cluster]:
    name = session_name("kueue")
    try:
        kubeconfig = local.up(_options(name), out=io.StringIO())
        yield Cluster(kubeconfig, name)
    finally:
        local.down(name, out=io.StringIO())


def _options(name: str) -> local.UpOptions:
    """The cluster's: two GPU nodes of 4 GPUs; Kueue admits whole jobs by quota, so the operator
    places their pods without a gang."""
    nodes = NodePlan(cpu_nodes=2, gpu_nodes=2, gpus_per_node=4)
    return local.UpOptions(name=name, nodes=nodes, trainer=True, kueue=True, gang_scheduler="none")


@pytest.fixture
def team(kueue_cluster: Cluster) -> Iterator[str]:
    """A namespace with a LocalQueue of its own whose ClusterQueue has 4 GPUs (one GPU node's)."""
    namespace = f"team-{uuid.uuid4().hex[:6]}"
    kueue_cluster.kubectl("create", "namespace", namespace)
    kueue_cluster.kubectl("apply", "--server-side", "-f", "-", stdin=_queues(namespace, gpus=4))
    try:
        yield namespace
    finally:
        kueue_cluster.kubectl("delete", "namespace", namespace, "--wait=true", timeout=180)
        kueue_cluster.kubectl(
            "delete", "clusterqueue", namespace, "--ignore-not-found", "--wait=true", timeout=120
        )


def _queues(
    namespace: str,
    gpus: int,
    *,
    queue: str | None = None,
    cohort: str | None = None,
    preemption: dict[str, Any] | None = None,
) -> str:
    objects: list[dict[str, Any]] = [
        {
            "apiVersion": "kueue.x-k8s.io/v1beta2",
            "kind": "ResourceFlavor",
            "metadata": {"name": "default-flavor"},
        },
        {
            "apiVersion": "kueue.x-k8s.io/v1beta2",
            "kind": "ClusterQueue",
            "metadata": {"name": queue or namespace},
            "spec": {
                **({"cohortName": cohort} if cohort else {}),
                **({"preemption": preemption} if preemption else {}),
                "namespaceSelector": {},
                "resourceGroups": [
                    {
                        "coveredResources": ["cpu", "memory", GPU],
                        "flavors": [
                            {
                                "name": "default-flavor",
                                "resources": [
                                    {"name": "cpu", "nominalQuota": 64},
                                    {"name": "memory", "nominalQuota": "64Gi"},
                                    {"name": GPU, "nominalQuota": gpus},
                                ],
                            }
                        ],
                    }
                ],
            },
        },
        {
            "apiVersion": "kueue.x-k8s.io/v1beta2",
            "kind": "LocalQueue",
            "metadata": {"name": queue or "ml", "namespace": namespace},
            "spec": {"clusterQueue": queue or namespace},
        },
    ]
    return yaml.safe_dump_all(objects)


def _tfjob(
    name: str,
    namespace: str,
    queue: str | None,
    seconds: int = 8,
    workers: int = 2,
    priority: str | None = None,
) -> dict[str, Any]:
    """Workers (two by default) of 2 GPUs each, running ``seconds`` once all run."""
    labels = {QUEUE_LABEL: queue} if queue else {}
    if priority:
        labels[PRIORITY_LABEL] = priority
    return {
        "apiVersion": "kubeflow.org/v1",
        "kind": "TFJob",
        "metadata": {"name": name, "namespace": namespace, "labels": labels},
        "spec": {
            "tfReplicaSpecs": {
                "Worker": {
                    "replicas": workers,
                    "restartPolicy": "Never",
                    "template": {
                        "metadata": {"annotations": {"tfjob-kit.dev/run-duration": f"{seconds}s"}},
                        "spec": {
                            "containers": [
                                {
                                    "name": "tensorflow",
                                    "image": "tensorflow/tensorflow:2.15.0",
                                    "resources": {"limits": {GPU: 2, "cpu": "1", "memory": "1Gi"}},
                                }
                            ]
                        },
                    },
                }
            }
        },
    }


def _workload(cluster: Cluster, namespace: str, owner: str) -> dict[str, Any] | None:
    for workload in cluster.items("workloads.kueue.x-k8s.io", "-n", namespace):
        if any(o["name"] == owner for o in workload["metadata"].get("ownerReferences") or []):
            return workload
    return None


def _condition(obj: dict[str, Any] | None, kind: str) -> dict[str, Any]:
    for condition in ((obj or {}).get("status") or {}).get("conditions") or []:
        if condition["type"] == kind:
            return dict(condition)
    return {}


def _job_state(cluster: Cluster, kind: str, name: str, namespace: str, state: str) -> bool:
    job = cluster.get(kind, name, "-n", namespace)
    return _condition(job, state).get("status") == "True"


def test_quota_is_held_then_released(kueue_cluster: Cluster, team: str) -> None:
    """Two TFJobs of 4 GPUs each on a queue of 4: Kueue admits one and holds the other suspended,
    no pod made, with its reason; when the first ends, the second is admitted and runs."""
    cluster = kueue_cluster
    for name in ("first", "second"):
        cluster.kubectl("apply", "-f", "-", stdin=json.dumps(_tfjob(name, team, "ml")))

    def admitted_and_held() -> tuple[str, dict[str, Any]] | None:
        workloads = {n: _workload(cluster, team, n) for n in ("first", "second")}
        admitted = [
            n for n, w in workloads.items() if _condition(w, "Admitted").get("status") == "True"
        ]
        if len(admitted) != 1:
            return None
        (held,) = [n for n in workloads if n not in admitted]
        reason = _condition(workloads[held], "QuotaReserved")
        return (held, reason) if reason.get("status") == "False" else None

    held, reason = cluster.wait_for("one job admitted, one held", admitted_and_held, team)
    assert f"insufficient unused quota for {GPU}" in reason["message"], reason
    job = cluster.get("tfjob", held, "-n", team)
    assert job["spec"]["runPolicy"]["suspend"] is True
    pods = cluster.items("pods", "-n", team, "-l", f"training.kubeflow.org/job-name={held}")
    assert pods == []
    other = "first" if held == "second" else "second"
    cluster.wait_for(
        f"{other} to succeed",
        lambda: _job_state(cluster, "tfjob", other, team, "Succeeded"),
        team,
        timeout=120,
    )
    cluster.wait_for(
        f"{held} to be admitted and succeed once the quota is free",
        lambda: _job_state(cluster, "tfjob", held, team, "Succeeded"),
        team,
        timeout=120,
    )
    workload = _workload(cluster, team, held)
    assert _condition(workload, "Finished").get("status") == "True"


def test_a_trainjob_is_queued_by_its_label(kueue_cluster: Cluster, team: str) -> None:
    """`convert --to trainjob` keeps the queue label: Kueue admits the TrainJob (its Workload
    counts its pods' GPUs) and Trainer runs it to Complete."""
    cluster = kueue_cluster
    objects, _ = convert.to_trainjob(_tfjob("tj", team, "ml"))
    (trainjob,) = [o for o in objects if o["kind"] == "TrainJob"]
    assert trainjob["metadata"]["labels"][QUEUE_LABEL] == "ml"
    cluster.kubectl("apply", "--server-side", "-f", "-", stdin=yaml.safe_dump_all(objects))
    workload = cluster.wait_for(
        "the TrainJob's Workload", lambda: _workload(cluster, team, "tj"), team
    )
    (podset,) = workload["spec"]["podSets"]
    assert podset["count"] == 2
    cluster.wait_for(
        "the TrainJob to complete",
        lambda: _job_state(cluster, "trainjob", "tj", team, "Complete"),
        team,
        timeout=120,
    )


def test_a_job_without_the_queue_label_is_left_alone(kueue_cluster: Cluster, team: str) -> None:
    cluster = kueue_cluster
    cluster.kubectl("apply", "-f", "-", stdin=json.dumps(_tfjob("free", team, None, seconds=1)))
    cluster.wait_for(
        "the unqueued TFJob to succeed",
        lambda: _job_state(cluster, "tfjob", "free", team, "Succeeded"),
        team,
        timeout=120,
    )
    assert _workload(cluster, team, "free") is None


def test_the_crds_convert_through_kueues_webhook(kueue_cluster: Cluster, team: str) -> None:
    """A ClusterQueue stored as v1beta2 read as v1beta1: the API server calls the conversion
    webhook of the local process, trusting the CA Kueue's own rotator injected into the CRD."""
    old = kueue_cluster.get(f"clusterqueues.v1beta1.kueue.x-k8s.io/{team}")
    assert old["apiVersion"] == "kueue.x-k8s.io/v1beta1"
    crd = kueue_cluster.get("crd", "clusterqueues.kueue.x-k8s.io")
    config = crd["spec"]["conversion"]["webhook"]["clientConfig"]
    assert config["service"]["namespace"] == LOCAL_NAMESPACE
    assert config["caBundle"]


def test_kueue_runs_with_the_charts_rules_and_webhooks(kueue_cluster: Cluster) -> None:
    """The process is the chart's: its webhook configurations (only Kueue's kinds, TFJobs and
    TrainJobs) call it, and the chart's rules denied it nothing."""
    cluster = kueue_cluster
    hooks = [
        hook
        for kind in ("mutatingwebhookconfigurations", "validatingwebhookconfigurations")
        for config in cluster.items(kind)
        if config["metadata"]["name"].startswith("kueue-")
        for hook in config["webhooks"]
    ]
    assert len(hooks) == 11
    assert {h["clientConfig"]["service"]["namespace"] for h in hooks} == {LOCAL_NAMESPACE}
    assert cluster.name is not None
    log = local.cluster_dir(cluster.name) / "logs" / f"{CONTROLLER.process}.log"
    # An RBAC denial reads `... is forbidden: User "system:serviceaccount:..." cannot ...` (a
    # namespace being deleted also answers "forbidden", to Kueue's writes into it: not a rule).
    denied = [line for line in log.read_text().splitlines() if "forbidden: User" in line]
    assert denied == []


TOUCHED = (
    "customresourcedefinitions",
    "validatingwebhookconfigurations",
    "mutatingwebhookconfigurations",
    "clusterroles",
    "namespaces",
    "clusterqueues.kueue.x-k8s.io",
    "resourceflavors.kueue.x-k8s.io",
)


def _names(cluster: Cluster, kind: str) -> set[str]:
    return {
        o["metadata"]["name"]
        for o in cluster.items(kind)
        if not (kind == "namespaces" and o["metadata"]["name"].startswith("team-"))
    }


_site_test = "test_site_yml_installs_kueue_as_the_scheduler"


def test_site_yml_installs_kueue_as_the_scheduler(kueue_cluster: Cluster, tmp_path: Path) -> None:
    """playbooks/site.yml with tfjob_kit_scheduler: kueue on a local cluster that runs the real
    Kueue: the kueue role installs its chart (its webhooks and conversion left to the local
    process, as the local inventory says) and the queues (that a second run changes nothing is
    test_multikueue's to prove, on three clusters); a TFJob on the role's LocalQueue is admitted
    and succeeds; teardown.yml removes what the role made and
    keeps what was there before (the CRDs the local cluster applied), so Kueue still works."""
    cluster = kueue_cluster
    # The README's group_vars: a GPU flavor of the fake GPU nodes, one ClusterQueue of their 8
    # GPUs, a LocalQueue in default.
    variables = tmp_path / "kueue.yml"
    variables.write_text(block("test tests/integration/test_kueue.py::" + _site_test), "utf-8")
    extra = ("-e", f"@{variables}")
    before = {kind: _names(cluster, kind) for kind in TOUCHED}
    assert recap_changed(playbook(cluster, "site.yml", *extra)) > 0
    assert [d["metadata"]["name"] for d in cluster.items("deployments", "-n", "kueue-system")] == [
        "kueue"
    ]
    local_queue = cluster.get("localqueue", "ml", "-n", "default")
    assert local_queue["metadata"]["annotations"]["tfjob-kit.io/created-by"] == "tfjob-kit"
    job = _tfjob("site-queued", "default", "ml", seconds=1)
    cluster.kubectl("apply", "-f", "-", stdin=json.dumps(job))
    try:
        cluster.wait_for(
            "the queued TFJob to succeed",
            lambda: _job_state(cluster, "tfjob", "site-queued", "default", "Succeeded"),
            "default",
            timeout=120,
        )
        assert _condition(_workload(cluster, "default", "site-queued"), "Admitted")["status"]
    finally:
        cluster.kubectl("delete", "tfjob", "site-queued", "-n", "default", "--wait=true")
    teardown = playbook(cluster, "teardown.yml", *extra)
    assert "nothing the toolkit installed is left" in teardown
    assert {kind: _names(cluster, kind) for kind in TOUCHED} == before


def test_the_module_submits_to_a_queue_and_says_why_a_job_waits(
    kueue_cluster: Cluster, team: str, tmp_path: Path
) -> None:
    """tfjob.kit.tfjob's queue option, on the real Kueue. The preflight refuses, applying
    nothing, a LocalQueue that does not exist, an inactive ClusterQueue (Kueue's own reason) and a
    job bigger than the queue can ever admit. The wait reports a job waiting for quota in Kueue's
    words and keeps waiting; a job whose queue is missing (preflight off) ends the wait at once,
    in Kueue's words; an admitted job ends Succeeded with its ClusterQueue named."""
    cluster = kueue_cluster
    stopped = f"{team}-stopped"
    cluster.kubectl("apply", "--server-side", "-f", "-", stdin=_inactive_queue(team, stopped))
    # Kueue judges a new ClusterQueue within a second; the preflight calls it inactive after.
    cluster.wait_for(
        "Kueue to find the ClusterQueue inactive",
        lambda: _condition(cluster.get("clusterqueue", stopped), "Active").get("status") == "False",
        team,
    )
    try:
        result = run_tasks(
            tmp_path,
            cluster.kubeconfig,
            [
                {"tfjob.kit.tfjob": {"definition": _tfjob("lost", team, None), "queue": "nowhere"}},
                {"tfjob.kit.tfjob": {"definition": _tfjob("stuck", team, None), "queue": stopped}},
                {
                    "tfjob.kit.tfjob": {
                        "definition": _tfjob("big", team, None, workers=4),
                        "queue": "ml",
                    }
                },
                {
                    "tfjob.kit.tfjob": {
                        "definition": _tfjob("holder", team, None, seconds=HOLD_SECONDS),
                        "queue": "ml",
                    }
                },
                {
                    "tfjob.kit.tfjob": {
                        "definition": _tfjob("later", team, None),
                        "queue": "ml",
                        "wait": True,
                        "wait_timeout": 10,
                    }
                },
                {
                    "tfjob.kit.tfjob": {
                        "definition": _tfjob("astray", team, None),
                        "queue": "gone",
                        "preflight": False,
                        "wait": True,
                        "wait_timeout": 120,
                    }
                },
                {
                    "tfjob.kit.tfjob": {
                        "definition": _tfjob("holder", team, None, seconds=HOLD_SECONDS),
                        "queue": "ml",
                        "wait": True,
                        "wait_timeout": 120,
                    }
                },
            ],
        )
    finally:
        cluster.kubectl("delete", "clusterqueue", stopped, "--ignore-not-found", "--wait=true")
    lost, stuck, big, holder, later, astray, done = result.results
    assert f"the LocalQueue {team}/nowhere does not exist" in lost["msg"], lost
    assert (
        f"the ClusterQueue '{stopped}' of LocalQueue {team}/{stopped} is inactive" in stuck["msg"]
    )
    assert "FlavorNotFound" in stuck["msg"]
    assert f"8 {GPU} where it admits at most 4" in big["msg"], big
    for refused in (lost, stuck, big):
        assert refused["failed"] and refused["objects"] == []
        assert "nothing was applied" in refused["msg"]
        assert [f["rule"] for f in refused["findings"] if f["origin"] == "server"] == [
            "kueue-queue"
        ]
    for name in ("lost", "stuck", "big"):
        assert cluster.gone("tfjob", name, team)
    assert holder["changed"] and not holder.get("failed")
    assert later["failed"] and "timed out after 10s" in later["msg"], later
    (waiting,) = later["jobs"]
    assert waiting["queue"]["state"] == "Waiting" and waiting["phase"] == "Suspended"
    assert f"insufficient unused quota for {GPU}" in waiting["queue"]["message"]
    (problem,) = [p for p in waiting["problems"] if p["kind"] == "Workload"]
    assert problem["reason"] == "Pending" and not problem["fatal"]
    assert astray["failed"] and "LocalQueue gone doesn't exist" in astray["msg"], astray
    assert astray["duration"] < 60  # not the 120 s timeout: Kueue said it cannot end well
    (finished,) = done["jobs"]
    assert finished["phase"] == "Succeeded"
    assert finished["queue"]["cluster_queue"] == team


def _inactive_queue(namespace: str, name: str) -> str:
    """A LocalQueue of the namespace whose ClusterQueue names a flavor that does not exist."""
    queue = yaml.safe_load(_queues(namespace, gpus=4).split("---")[1])
    queue["metadata"]["name"] = name
    queue["spec"]["resourceGroups"][0]["flavors"][0]["name"] = f"{name}-nowhere"
    local = {
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "LocalQueue",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"clusterQueue": name},
    }
    return yaml.safe_dump_all([queue, local])


def _cleanup(cluster: Cluster, kind: str, *names: str) -> None:
    for name in names:
        cluster.kubectl("delete", kind, name, "--ignore-not-found", "--wait=true", timeout=120)


def test_a_higher_priority_job_preempts_and_the_module_reports_it(
    kueue_cluster: Cluster, team: str, tmp_path: Path
) -> None:
    """WorkloadPriorityClasses on a queue that preempts within itself: a low-priority TFJob that
    sets ttlSecondsAfterFinished (kubernetes-sigs/kueue#2923 broke preemption for such jobs) runs
    on all of the quota; a high-priority one preempts it, runs and succeeds; the module's wait on
    the low one ends Succeeded, reporting the preemption it went through."""
    cluster = kueue_cluster
    classes: list[dict[str, Any]] = [
        {
            "apiVersion": "kueue.x-k8s.io/v1beta2",
            "kind": "WorkloadPriorityClass",
            "metadata": {"name": f"{team}-{level}"},
            "value": value,
        }
        for level, value in (("low", 100), ("high", 1000))
    ]
    cluster.kubectl("apply", "--server-side", "-f", "-", stdin=yaml.safe_dump_all(classes))
    preempting = {"withinClusterQueue": "LowerPriority"}
    queues = _queues(team, gpus=4, queue="urgent", preemption=preempting)
    cluster.kubectl("apply", "--server-side", "-f", "-", stdin=queues)
    low = _tfjob("low", team, None, seconds=20, workers=2, priority=f"{team}-low")
    low["spec"]["runPolicy"] = {"ttlSecondsAfterFinished": 300}
    high = _tfjob("high", team, None, seconds=4, priority=f"{team}-high")
    waited = {"queue": "urgent", "wait": True, "wait_timeout": 180}
    try:
        result = run_tasks(
            tmp_path,
            cluster.kubeconfig,
            [
                {"tfjob.kit.tfjob": {"definition": low, **waited, "wait_for": ["Running"]}},
                {"tfjob.kit.tfjob": {"definition": high, **waited}},
                {"tfjob.kit.tfjob": {"definition": low, **waited}},
            ],
        )
    finally:
        _cleanup(cluster, "clusterqueue", "urgent")
        _cleanup(cluster, "workloadpriorityclass", *(c["metadata"]["name"] for c in classes))
    running, preemptor, preempted = result.results
    assert not any(r.get("failed") for r in result.results), result.output[-4000:]
    assert running["jobs"][0]["phase"] == "Running"
    assert preemptor["jobs"][0]["phase"] == "Succeeded"
    (outcome,) = preempted["jobs"]
    assert outcome["phase"] == "Succeeded"
    assert outcome["queue"]["evicted"]["reason"] == "Preempted"
    assert "prioritization in the ClusterQueue" in outcome["queue"]["evicted"]["message"]


def test_queues_of_a_cohort_lend_their_quota_and_take_it_back(
    kueue_cluster: Cluster, team: str, tmp_path: Path
) -> None:
    """Two ClusterQueues of 4 GPUs in one cohort, each reclaiming its share: a job of 8 GPUs in
    the first borrows the idle second's quota and runs; when the second's own job comes, Kueue
    takes its quota back (the borrower is preempted) and runs it; the borrower runs again once
    the quota is free, and both succeed."""
    cluster = kueue_cluster
    cohort = f"{team}-cohort"
    reclaim = {"reclaimWithinCohort": "Any"}
    for queue in ("share-a", "share-b"):
        queues = _queues(team, gpus=4, queue=queue, cohort=cohort, preemption=reclaim)
        cluster.kubectl("apply", "--server-side", "-f", "-", stdin=queues)
    big = _tfjob("borrower", team, None, seconds=10, workers=4)
    own = _tfjob("owner", team, None, seconds=4)
    waited = {"wait": True, "wait_timeout": 240}
    try:
        result = run_tasks(
            tmp_path,
            cluster.kubeconfig,
            [
                {
                    "tfjob.kit.tfjob": {
                        "definition": big,
                        "queue": "share-a",
                        **waited,
                        "wait_for": ["Running"],
                    }
                },
                {"tfjob.kit.tfjob": {"definition": own, "queue": "share-b", **waited}},
                {"tfjob.kit.tfjob": {"definition": big, "queue": "share-a", **waited}},
            ],
        )
    finally:
        _cleanup(cluster, "clusterqueue", "share-a", "share-b")
    borrowed, owner, borrower = result.results
    assert not any(r.get("failed") for r in result.results), result.output[-4000:]
    assert borrowed["jobs"][0]["queue"]["cluster_queue"] == "share-a"
    assert owner["jobs"][0]["phase"] == "Succeeded"
    assert owner["jobs"][0]["queue"]["cluster_queue"] == "share-b"
    (outcome,) = borrower["jobs"]
    assert outcome["phase"] == "Succeeded"
    assert outcome["queue"]["evicted"]["reason"] == "Preempted"
    assert "reclamation within the cohort" in outcome["queue"]["evicted"]["message"]


def test_jobs_pending_across_a_kueue_restart_are_admitted_after_it(
    kueue_cluster: Cluster, team: str
) -> None:
    """Kueue killed while a job waits for quota: `cluster up` starts it again (its webhooks and
    certificate as before); the waiting job keeps its place and runs once the quota is free."""
    cluster = kueue_cluster
    assert cluster.name is not None
    for name in ("running", "pending"):
        job = _tfjob(name, team, "ml", seconds=12 if name == "running" else 1)
        cluster.kubectl("apply", "-f", "-", stdin=json.dumps(job))
    cluster.wait_for(
        "one job admitted and one waiting",
        lambda: (
            _condition(_workload(cluster, team, "pending"), "QuotaReserved").get("status")
            == "False"
        ),
        team,
    )
    (record,) = [r for r in records(cluster.name) if r.name == CONTROLLER.process]
    record.stop()
    local.up(_options(cluster.name), out=io.StringIO())
    for name in ("running", "pending"):

        def succeeded(name: str = name) -> bool:
            return _job_state(cluster, "tfjob", name, team, "Succeeded")

        cluster.wait_for(f"{name} to succeed", succeeded, team, timeout=120)


def test_the_readme_queue_playbook(kueue_cluster: Cluster, tmp_path: Path) -> None:
    """The README's playbook, on a LocalQueue ml of default (made here, as the README's
    group_vars make it with site.yml): dist-mnist is admitted and succeeds, and the play says
    which ClusterQueue admitted it. Its ports name no protocol: the API server must store the
    TFJob with the defaults Kueue's Workload gets (protocol TCP), or Kueue never matches the
    job with its Workload and re-creates the Workload for ever."""
    cluster = kueue_cluster
    queues = yaml.safe_load_all(_queues("default", gpus=8, queue="readme-ml"))
    objects = list(queues)
    objects[-1]["metadata"]["name"] = "ml"  # the LocalQueue the README names
    cluster.kubectl("apply", "--server-side", "-f", "-", stdin=yaml.safe_dump_all(objects))
    play = tmp_path / "queue.yml"
    play.write_text(block("test tests/integration/test_kueue.py::test_the_readme_queue_playbook"))
    (tmp_path / "examples").symlink_to(REPO / "examples")  # its src, beside the playbook
    try:
        proc = run_play_file(play, cluster.kubeconfig)
        assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
        assert "dist-mnist admitted by readme-ml" in proc.stdout
    finally:
        cluster.kubectl("delete", "tfjob", "dist-mnist", "-n", "default", "--ignore-not-found")
        cluster.kubectl("delete", "localqueue", "ml", "-n", "default", "--ignore-not-found")
        _cleanup(cluster, "clusterqueue", "readme-ml")


def _upstream_kueue(go: str) -> list[dict[str, Any]]:
    """The controller Deployment and Configuration ConfigMap of upstream's own chart (the
    module's charts/kueue, as it comes: no TFJobs), in a namespace of this test."""
    versions = load_versions(REPO)
    module = build.Builder(versions, REPO, go=go).module_download_dir(
        "sigs.k8s.io/kueue", versions.kueue
    )
    helm = [str(build.helm_path()), "template", "kueue", str(module / "charts" / "kueue")]
    rendered = subprocess.run(
        [*helm, "--namespace", "other-kueue", "--kube-version", "1.34.0"],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    ).stdout
    return [
        d
        for d in yaml.safe_load_all(rendered)
        if d and d["kind"] in ("Deployment", "ConfigMap") and "manager" in d["metadata"]["name"]
    ]


def _kueue_role(cluster: Cluster, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    """The kueue role alone, with one LocalQueue, as the local inventory runs it."""
    play = [
        {
            "name": "Kueue",
            "hosts": "localhost",
            "gather_facts": False,
            "roles": [
                {
                    "role": "tfjob.kit.kueue",
                    "vars": {
                        "kueue_webhook_enabled": False,
                        "kueue_helm_binary": str(build.helm_path()),
                        "kueue_resource_flavors": [{"name": "other-flavor"}],
                        "kueue_cluster_queues": [
                            {"name": "other-cq", "quotas": {"other-flavor": {"cpu": 1}}}
                        ],
                        "kueue_local_queues": [
                            {"name": "other", "namespace": "default", "cluster_queue": "other-cq"}
                        ],
                    },
                }
            ],
        }
    ]
    path = tmp_path / "kueue-role.yml"
    path.write_text(yaml.safe_dump(play))
    return run_play_file(path, cluster.kubeconfig)


def test_another_kueue_is_used_when_it_manages_tfjobs_and_refused_when_not(
    kueue_cluster: Cluster, tmp_path: Path, go: str
) -> None:
    """A Kueue installed from upstream's chart (its Deployment and Configuration, in a namespace
    of its own): as it comes (no TFJobs), the role refuses it before changing anything and says
    what to add; once its Configuration enables kubeflow.org/tfjob, the role applies its queues
    and installs no second Kueue."""
    cluster = kueue_cluster
    cluster.kubectl("create", "namespace", "other-kueue")
    deployment, config_map = sorted(_upstream_kueue(go), key=lambda d: d["kind"] != "Deployment")
    try:
        cluster.kubectl("apply", "-f", "-", stdin=yaml.safe_dump_all([deployment, config_map]))
        refused = _kueue_role(cluster, tmp_path)
        assert refused.returncode != 0
        assert (
            "Kueue already runs here (Deployment other-kueue/kueue-controller-manager), and its "
            "Configuration (ConfigMap other-kueue/kueue-manager-config, key "
            "controller_manager_config.yaml) does not enable kubeflow.org/tfjob: add it to "
            "integrations.frameworks"
        ) in " ".join(refused.stdout.split())
        assert not cluster.get("localqueues", "-n", "default")["items"]

        key = "controller_manager_config.yaml"
        configuration = yaml.safe_load(config_map["data"][key])
        configuration["integrations"]["frameworks"].append("kubeflow.org/tfjob")
        config_map["data"][key] = yaml.safe_dump(configuration)
        cluster.kubectl("apply", "-f", "-", stdin=yaml.safe_dump(config_map))
        used = _kueue_role(cluster, tmp_path)
        assert used.returncode == 0, used.stdout[-3000:]
        assert "the role applies the queues to it and installs no second Kueue" in " ".join(
            used.stdout.split()
        )
        assert cluster.get("localqueue", "other", "-n", "default")
        assert not cluster.items("secrets", "-n", "kueue-system", "-l", "owner=helm")
    finally:
        cluster.kubectl("delete", "namespace", "other-kueue", "--wait=false")
        cluster.kubectl("delete", "localqueue", "other", "-n", "default", "--ignore-not-found")
        _cleanup(cluster, "clusterqueue", "other-cq")
        _cleanup(cluster, "resourceflavor", "other-flavor")
