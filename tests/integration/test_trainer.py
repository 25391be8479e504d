"""The real Kubeflow Trainer v2 controller-manager on the local cluster (`tfjob-kit cluster up
--trainer`), beside the real JobSet controller, training-operator and Volcano: its webhooks and
identity are the trainer chart's, and every TFJob under examples/ and in the seeds, converted by
`tfjob-kit convert --to trainjob`, runs as a TrainJob to Complete, each pod's TF_CONFIG (resolved
from the pod spec as the kubelet would) the one `explain` gives the TFJob's pod, with JobSet's
addresses: the pods' own hostnames and subdomain."""

from __future__ import annotations

import copy
import io
import json
import os
import queue
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from snippets import block
from tfjob_kit import convert, explain, model, runtimes, trainjob, validate
from tfjob_kit.cluster import build, local
from tfjob_kit.cluster.identity import IDENTITIES, LOCAL_NAMESPACE
from tfjob_kit.cluster.nodes import NodePlan
from tfjob_kit.cluster.trainer import CONTROLLER
from tfjob_kit.convert.trainjob import replicated_job, trainer_type
from tfjob_kit.kube import follow
from tfjob_kit.kube.client import Client
from tfjob_kit.kube.connection import Connection
from tfjob_kit.manifests import load_path, load_text
from tfjob_kit.trainjob import COMPLETION_INDEX_ANNOTATION, NODE

from ._ansible import run_tasks
from ._cluster import Cluster
from .conftest import session_name
from .test_bootstrap import playbook, recap_changed
from .test_cluster_security import LOOPBACK, _listeners

ROOT = Path(__file__).resolve().parents[2]
SEEDS = ROOT / "tests" / "data" / "seeds"
RJOB_LABEL = "jobset.sigs.k8s.io/replicatedjob-name"
# Every TFJob of examples/ and the seeds, but those that cannot become a TrainJob, each with why.
NOT_CONVERTIBLE = {
    "seed000-v1beta1-generatename.yaml": "generateName only: TF_CONFIG addresses need a name",
}


def tfjobs() -> list[tuple[str, dict[str, Any]]]:
    found = []
    for path in sorted([*(ROOT / "examples").rglob("*.yaml"), *SEEDS.glob("*.yaml")]):
        if path.name in NOT_CONVERTIBLE:
            continue
        for doc in load_path(str(path)):
            if doc.kind in (model.KIND, convert.T9K_KIND):
                found.append((f"{path.relative_to(ROOT)}:{doc.index}", doc.content))
    return found


@pytest.fixture(scope="module")
def trainer_cluster() -> Iterator[Cluster]:
    name = session_name("trainer")
    nodes = NodePlan(cpu_nodes=4, gpu_nodes=4, gpus_per_node=8)
    try:
        # A JobSet's pods run 20 s (kwok's stages): long enough for every pod of every job to be
        # seen running before it completes.
        options = local.UpOptions(name=name, nodes=nodes, trainer=True, job_run_seconds=20.0)
        kubeconfig = local.up(options, out=io.StringIO())
        yield Cluster(kubeconfig, name)
    finally:
        local.down(name, out=io.StringIO())


def test_every_example_and_seed_tfjob_is_converted() -> None:
    """The list the run below works on: each file's TFJobs, the ones left out named."""
    sources = {where.split(":")[0] for where, _ in tfjobs()}
    assert "examples/tfjobs/dist-mnist.yaml" in sources
    assert "examples/tfjobs/multiworker.yaml" in sources  # on the runtime the toolkit ships
    assert "tests/data/seeds/seed004-t9k-tensorflowtrainingjob.yaml" in sources
    for name, why in NOT_CONVERTIBLE.items():
        (doc,) = [d.content for d in load_path(str(SEEDS / name)) if d.kind == model.KIND]
        with pytest.raises(convert.ConversionError, match="name"):
            convert.to_trainjob(doc)
        assert why


def resolved_env(pod: dict[str, Any], container: str) -> dict[str, str]:
    """The container's environment as the kubelet builds it (``trainjob.resolve_env``, on the
    real pod's spec and metadata)."""
    (spec,) = [c for c in pod["spec"]["containers"] if c["name"] == container]
    return trainjob.resolve_env(spec.get("env") or [], pod["metadata"])


def _converted(tfjob: dict[str, Any], namespace: str) -> list[dict[str, Any]]:
    tfjob = copy.deepcopy(tfjob)
    tfjob.setdefault("metadata", {})["namespace"] = namespace
    docs, _ = convert.to_trainjob(tfjob)
    return docs


def _apply_converted(cluster: Cluster, docs: list[dict[str, Any]]) -> None:
    """Apply a conversion's runtime, then its TrainJob once Trainer's webhook finds the runtime:
    the webhook reads runtimes from its cache, which can lag behind an apply on a busy machine
    (it then refuses the TrainJob: `TrainingRuntime ... not found`)."""
    runtimes = [d for d in docs if d["kind"] != "TrainJob"]
    jobs = [d for d in docs if d["kind"] == "TrainJob"]
    if runtimes:
        cluster.kubectl("apply", "-f", "-", stdin=yaml.safe_dump_all(runtimes))
    deadline = time.monotonic() + 60
    while True:
        proc = cluster.kubectl("apply", "-f", "-", stdin=yaml.safe_dump_all(jobs), check=False)
        if proc.returncode == 0:
            return
        lagging = "not found" in proc.stderr and "runtimeRef" in proc.stderr
        assert lagging and time.monotonic() < deadline, proc.stdout + proc.stderr
        time.sleep(1)


def _claims(tfjob: dict[str, Any], namespace: str) -> list[dict[str, Any]]:
    """The PersistentVolumeClaims the job's pods mount (examples/tfjobs/gpu-chief.yaml's
    checkpoints), each bound to a PersistentVolume of its own (named after the namespace, and
    deleted with it by the test), so that the scheduler places the pods."""
    names = sorted(
        {
            volume["persistentVolumeClaim"]["claimName"]
            for replica in model.replicas(tfjob)
            for volume in replica.pod_spec.get("volumes") or []
            if "persistentVolumeClaim" in volume
        }
    )
    objects: list[dict[str, Any]] = []
    for name in names:
        volume = f"{namespace}-{name}"
        size = {"storage": "1Gi"}
        objects += [
            {
                "apiVersion": "v1",
                "kind": "PersistentVolume",
                "metadata": {"name": volume},
                "spec": {
                    "capacity": size,
                    "accessModes": ["ReadWriteOnce"],
                    "storageClassName": "",
                    "hostPath": {"path": f"/srv/{volume}"},
                    "claimRef": {"namespace": namespace, "name": name},
                },
            },
            {
                "apiVersion": "v1",
                "kind": "PersistentVolumeClaim",
                "metadata": {"name": name, "namespace": namespace},
                "spec": {
                    "accessModes": ["ReadWriteOnce"],
                    "storageClassName": "",
                    "volumeName": volume,
                    "resources": {"requests": size},
                },
            },
        ]
    return objects


def _complete(cluster: Cluster, name: str, namespace: str) -> bool:
    found = cluster.get("trainjob", name, "-n", namespace)
    conditions = (found.get("status") or {}).get("conditions") or []
    return any(c["type"] == "Complete" and c["status"] == "True" for c in conditions)


def test_every_tfjob_runs_as_a_trainjob_with_the_tf_config_explain_gives(
    trainer_cluster: Cluster,
) -> None:
    jobs: list[Job] = []
    volumes: list[str] = []
    # Followed from before the first apply: a short job's pods may come and go quickly.
    with _PodsThatRan(trainer_cluster) as ran:
        for where, tfjob in tfjobs():
            namespace = f"it-{uuid.uuid4().hex[:8]}"
            trainer_cluster.kubectl("create", "namespace", namespace)
            claims = _claims(tfjob, namespace)
            volumes += [c["metadata"]["name"] for c in claims if c["kind"] == "PersistentVolume"]
            if claims:
                trainer_cluster.kubectl("apply", "-f", "-", stdin=yaml.safe_dump_all(claims))
            docs = _converted(tfjob, namespace)
            _apply_converted(trainer_cluster, docs)
            v1, _ = convert.to_v1(tfjob)
            v1["metadata"]["namespace"] = namespace
            jobs.append((where, v1, docs, namespace))
        try:
            running = ran.every_pod(trainer_cluster, jobs)
            for where, v1, docs, namespace in jobs:
                _check_tf_configs(where, v1, running[where])
                _check_explain(where, docs, running[where])
                name = docs[-1]["metadata"]["name"]
                trainer_cluster.wait_for(
                    f"{where}: TrainJob {name} Complete",
                    lambda: _complete(trainer_cluster, name, namespace),  # noqa: B023
                    namespace,
                    timeout=120,
                )
        finally:
            for *_, namespace in jobs:
                trainer_cluster.kubectl(
                    "delete", "namespace", namespace, "--wait=false", check=False
                )
            for volume in volumes:
                trainer_cluster.kubectl("delete", "pv", volume, "--wait=false", check=False)


Job = tuple[str, dict[str, Any], list[dict[str, Any]], str]  # where, TFJob, converted, namespace


class _PodsThatRan:
    """Each JobSet pod as first seen Running or Succeeded, followed by watch (the toolkit's own
    ``Follower``) from before the jobs are applied. Looks by polling missed pods: on a busy
    machine a look takes seconds, and a short job's ps pod ran and was deleted with its
    completed JobSet between two looks (a .ci/run)."""

    LABEL = "jobset.sigs.k8s.io/jobset-name"

    def __init__(self, cluster: Cluster) -> None:
        self._client = Client(Connection(kubeconfig=str(cluster.kubeconfig)))
        self._follower = follow.Follower(
            self._client, [follow.Source("pods", "", label_selector=self.LABEL)]
        )
        self._ran: dict[tuple[str, str], dict[str, dict[str, Any]]] = {}

    def __enter__(self) -> _PodsThatRan:
        self._follower.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._follower.stop()
        self._client.close()

    def _take(self, timeout: float) -> None:
        try:
            update = self._follower.updates.get(timeout=timeout)
        except queue.Empty:
            return
        if isinstance(update, follow.Broken):
            assert not update.permanent, update.error
            return
        pods = update.items if isinstance(update, follow.Reset) else [update.object]
        for pod in pods:
            if (pod.get("status") or {}).get("phase") in ("Running", "Succeeded"):
                meta = pod["metadata"]
                job = self._ran.setdefault((meta["namespace"], meta["labels"][self.LABEL]), {})
                job.setdefault(meta["name"], pod)

    def every_pod(self, cluster: Cluster, jobs: list[Job]) -> dict[str, list[dict[str, Any]]]:
        """Each job's pods, by job, once every one of them has run."""
        seen: dict[str, list[dict[str, Any]]] = {}
        deadline = time.monotonic() + 120
        while len(seen) < len(jobs):
            self._take(0.5)
            for where, v1, docs, namespace in jobs:
                expected = sum(r.count for r in model.replicas(v1))
                pods = list(self._ran.get((namespace, docs[-1]["metadata"]["name"]), {}).values())
                if where not in seen and len(pods) == expected:
                    seen[where] = pods
            if time.monotonic() > deadline:
                late = [(w, ns) for w, _, _, ns in jobs if w not in seen]
                raise AssertionError(
                    f"not every pod ran: {late}\n" + cluster.diagnostics(late[0][1])
                )
        return seen


def _check_explain(where: str, docs: list[dict[str, Any]], pods: list[dict[str, Any]]) -> None:
    """`explain` of the TrainJob and its runtime, offline, says what the real pods are: the same
    addresses, and each container's environment as the real pod spec resolves it."""
    job = docs[-1]  # the TrainJob; its runtime is converted with it, or one the toolkit ships
    runtime = trainjob.find_runtime(job, [*docs, *runtimes.shipped()])
    assert runtime is not None, where
    planned = {(p.replicated_job, p.index): p for p in trainjob.pods(job, runtime)}
    assert len(planned) == len(pods), where
    for pod in pods:
        place = (
            pod["metadata"]["labels"][RJOB_LABEL],
            int(pod["metadata"]["annotations"][COMPLETION_INDEX_ANNOTATION]),
        )
        plan = planned[place]
        assert plan.address == f"{pod['spec']['hostname']}.{pod['spec']['subdomain']}", where
        for container in pod["spec"]["containers"]:
            real = resolved_env(pod, container["name"])
            ours = plan.env[container["name"]]
            # The Job controller appends JOB_COMPLETION_INDEX; nothing else may differ.
            assert {k: v for k, v in real.items() if k != "JOB_COMPLETION_INDEX"} == ours, where


def _check_tf_configs(where: str, v1: dict[str, Any], pods: list[dict[str, Any]]) -> None:
    """Each pod's resolved TF_CONFIG against explain's for the TFJob's pod of the same type and
    index: the same task, counts and keys, and each address the hostname and subdomain of the
    pod it names."""
    reps = [r for r in model.replicas(v1) if r.count > 0]
    by_place = {
        (
            p["metadata"]["labels"][RJOB_LABEL],
            int(p["metadata"]["annotations"][COMPLETION_INDEX_ANNOTATION]),
        ): p
        for p in pods
    }
    trainer = trainer_type(reps)
    distributed = explain.is_distributed(reps)
    for replica in reps:
        rjob = replicated_job(replica, trainer)
        container = NODE if rjob == NODE else model.CONTAINER_NAME
        for index in range(replica.count):
            pod = by_place[(rjob, index)]
            ours = resolved_env(pod, container).get("TF_CONFIG")
            theirs = explain.tf_config(v1, replica.type, index)
            if not distributed:
                assert ours is None and theirs is None, where
                continue
            assert ours is not None and theirs is not None, (where, rjob, index)
            got, want = json.loads(ours), json.loads(theirs)
            assert got["task"] == want["task"] == {"type": replica.lower, "index": index}, where
            assert got["environment"] == want["environment"]
            assert list(got["cluster"]) == list(want["cluster"]), where
            for kind, addresses in got["cluster"].items():
                assert len(addresses) == len(want["cluster"][kind]), (where, kind)
                owner = next(r for r in reps if r.lower == kind)
                for i, host in enumerate(addresses):
                    peer = by_place[(replicated_job(owner, trainer), i)]["spec"]
                    assert host == f"{peer['hostname']}.{peer['subdomain']}:{owner.port}", where


def test_the_webhook_refuses_a_trainjob_whose_runtime_is_missing(
    trainer_cluster: Cluster,
) -> None:
    job = {
        "apiVersion": "trainer.kubeflow.org/v1alpha1",
        "kind": "TrainJob",
        "metadata": {"name": "lost", "namespace": "default"},
        "spec": {"runtimeRef": {"name": "no-such-runtime", "kind": "TrainingRuntime"}},
    }
    proc = trainer_cluster.kubectl("apply", "-f", "-", stdin=yaml.safe_dump(job), check=False)
    assert proc.returncode != 0
    assert "validator.trainjob.trainer.kubeflow.org" in proc.stderr, proc.stderr
    assert "no-such-runtime" in proc.stderr, proc.stderr
    assert trainer_cluster.gone("trainjob", "lost", "default")


@pytest.mark.parametrize(
    ("verb", "resource", "allowed"),
    [
        ("create", "jobsets.jobset.x-k8s.io", "yes"),
        ("update", "trainjobs.trainer.kubeflow.org/status", "yes"),
        ("create", "podgroups.scheduling.volcano.sh", "yes"),
        ("create", "pods", "no"),  # JobSet's Jobs create them
        ("create", "jobs.batch", "no"),  # JobSet creates them
        ("update", "validatingwebhookconfigurations/validator.trainer.kubeflow.org", "yes"),
        (
            "update",
            "validatingwebhookconfigurations/jobset-validating-webhook-configuration",
            "no",
        ),
        ("update", "leases.coordination.k8s.io/other", "no"),
    ],
)
def test_the_controller_runs_with_the_charts_rules(
    trainer_cluster: Cluster, verb: str, resource: str, allowed: str
) -> None:
    account = f"system:serviceaccount:{LOCAL_NAMESPACE}:{IDENTITIES[CONTROLLER.process]}"
    proc = trainer_cluster.kubectl(
        "auth", "can-i", verb, resource, "-n", LOCAL_NAMESPACE, f"--as={account}", check=False
    )
    assert proc.stdout.strip() == allowed, (verb, resource, proc.stdout, proc.stderr)


def test_the_controller_listens_on_loopback_only(trainer_cluster: Cluster) -> None:
    """Its webhook server and health probes: 127.0.0.1, the webhook on the port its
    configurations call; metrics and the status server off."""
    assert trainer_cluster.name
    listeners = _listeners(trainer_cluster.name)[CONTROLLER.process]
    assert listeners and all(address in LOOPBACK for address, _ in listeners), listeners
    config = trainer_cluster.get("validatingwebhookconfiguration", "validator.trainer.kubeflow.org")
    port = config["webhooks"][0]["clientConfig"]["service"]["port"]
    assert ("127.0.0.1", port) in listeners
    assert len(listeners) == 2, listeners  # the webhook and the health probes


def test_the_readme_migration_walkthrough(trainer_cluster: Cluster, tmp_path: Path) -> None:
    """The README's commands, after `cluster up --trainer` (this module's cluster), from the
    checkout: the converted dist-mnist runs as a TrainJob to Complete."""
    lines = block(
        "test tests/integration/test_trainer.py::test_the_readme_migration_walkthrough"
    ).splitlines()
    assert lines[0] == "tfjob-kit cluster up --trainer"
    script = "set -euo pipefail\n" + "\n".join(
        line.replace("examples/", f"{ROOT}/examples/") for line in lines[1:]
    )
    environment = {
        **os.environ,
        "KUBECONFIG": str(trainer_cluster.kubeconfig),
        # the virtualenv's tfjob-kit and the cluster's kubectl, as the README's reader has them
        "PATH": os.pathsep.join(
            [
                str(Path(sys.executable).parent),
                str(Path(build.kubectl_path()).parent),
                os.environ.get("PATH", ""),
            ]
        ),
    }
    try:
        proc = subprocess.run(
            ["bash", "-c", script],
            cwd=tmp_path,
            env=environment,
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        assert proc.returncode == 0, proc.stdout + proc.stderr
        assert "trainjob.trainer.kubeflow.org/dist-mnist condition met" in proc.stdout
        assert "dist-mnist-node-0-1.dist-mnist\n    TF_CONFIG=" in proc.stdout  # explain
        assert "[convert] dropped: runPolicy.cleanPodPolicy" in proc.stderr
    finally:
        for kind in ("trainjob", "trainingruntime"):
            trainer_cluster.kubectl("delete", kind, "dist-mnist", "-n", "default", check=False)


PARTLY_PLACED_GRACE = 5.0


def _scheduled(cluster: Cluster, name: str, namespace: str) -> tuple[int, int]:
    """(pods placed on a node, pods) of the TrainJob ``name``."""
    pods = cluster.items("pods", "-n", namespace, "-l", f"jobset.sigs.k8s.io/jobset-name={name}")
    return sum(1 for p in pods if p["spec"].get("nodeName")), len(pods)


def test_a_gang_trainjob_under_volcano_is_never_partly_placed(trainer_cluster: Cluster) -> None:
    """examples/gang's two jobs, converted with --gang-scheduler volcano and grown to 10 workers
    of 2 GPUs each: together they need 40 of the cluster's 32 GPUs. Volcano places one TrainJob
    whole and the other not at all until the first is done; at no time is either partly placed,
    and both complete. (Converted with --gang-scheduler none, the default scheduler places 7 of
    one job's 11 pods: this test fails.)"""
    namespace = f"it-{uuid.uuid4().hex[:8]}"
    trainer_cluster.kubectl("create", "namespace", namespace)
    names = []
    try:
        for path in sorted((ROOT / "examples" / "gang").glob("job-*.yaml")):
            (doc,) = load_path(str(path))
            tfjob = copy.deepcopy(doc.content)
            tfjob["metadata"]["namespace"] = namespace
            tfjob["spec"]["tfReplicaSpecs"]["Worker"]["replicas"] = 10
            docs, _ = convert.to_trainjob(tfjob, gang_scheduler="volcano")
            assert docs[0]["spec"]["podGroupPolicy"] == {"volcano": {}}
            _apply_converted(trainer_cluster, docs)
            names.append(docs[1]["metadata"]["name"])
        seen_whole: set[str] = set()
        partly_since: dict[str, float] = {}
        deadline = time.monotonic() + 180
        while not all(_complete(trainer_cluster, n, namespace) for n in names):
            for name in names:
                placed, total = _scheduled(trainer_cluster, name, namespace)
                if _complete(trainer_cluster, name, namespace):
                    continue
                # Volcano binds a gang's pods one API call each, so on a busy machine a look can
                # fall between them; a job left partly placed stays so (the default scheduler's
                # 7 of 11 until the other job ends, 10 s and more).
                if 0 < placed < total:
                    since = partly_since.setdefault(name, time.monotonic())
                    assert time.monotonic() - since < PARTLY_PLACED_GRACE, (
                        f"{name}: {placed} of {total} pods placed for over {PARTLY_PLACED_GRACE:g}s"
                    )
                else:
                    partly_since.pop(name, None)
                if total and placed == total:
                    seen_whole.add(name)
            assert time.monotonic() < deadline, trainer_cluster.diagnostics(namespace)
            time.sleep(0.5)
        assert seen_whole == set(names)
        groups = trainer_cluster.items("podgroups.scheduling.volcano.sh", "-n", namespace)
        assert sorted(g["spec"]["minMember"] for g in groups) == [11, 11]
    finally:
        trainer_cluster.kubectl("delete", "namespace", namespace, "--wait=false", check=False)


@pytest.mark.parametrize("length", [48, 49])
def test_the_name_limit_is_jobsets_own(trainer_cluster: Cluster, length: int) -> None:
    """convert's name limit against the real JobSet webhook (a server-side dry run of the JobSet
    Trainer would make of dist-mnist's runtime): 48 characters fit, 49 do not, on both sides."""
    (doc,) = load_path(str(ROOT / "examples" / "tfjobs" / "dist-mnist.yaml"))
    tfjob = copy.deepcopy(doc.content)
    name = "n" * length
    tfjob["metadata"]["name"] = "n" * 48
    (runtime, _), _ = convert.to_trainjob(tfjob)
    jobset = {
        "apiVersion": "jobset.x-k8s.io/v1alpha2",
        "kind": "JobSet",
        "metadata": {"name": name, "namespace": "default"},
        "spec": runtime["spec"]["template"]["spec"],
    }
    proc = trainer_cluster.kubectl(
        "apply", "--dry-run=server", "-f", "-", stdin=yaml.safe_dump(jobset), check=False
    )
    tfjob["metadata"]["name"] = name
    # validate says the same of a TrainJob of that name on that runtime.
    offline = trainjob.jobset_name_errors(trainjob.pods({"metadata": {"name": name}}, runtime))
    if length == 48:
        assert proc.returncode == 0, proc.stderr
        convert.to_trainjob(tfjob)
        assert offline == []
    else:
        assert "pod names generated for this JobSet will exceed 63" in proc.stderr, proc.stderr
        with pytest.raises(convert.ConversionError, match="at most 48 characters"):
            convert.to_trainjob(tfjob)
        assert offline and all("pod names generated" in e for e in offline)


def _set(document: dict[str, Any], path: str, value: Any) -> dict[str, Any]:
    """A copy of ``document`` with the dotted ``path`` (list indexes as numbers) set to value;
    missing mappings on the way are made."""
    out = copy.deepcopy(document)
    node: Any = out
    parts = [int(p) if p.isdigit() else p for p in path.split(".")]
    for part in parts[:-1]:
        node = node[part] if isinstance(part, int) else node.setdefault(part, {})
    node[parts[-1]] = value
    return out


# Changes to a converted TrainJob and to its runtime, each a case of the CRDs' schemas or the
# metadata rules; the base objects come first. The verdicts are compared, not these guesses.
TRAINJOB_CASES: dict[str, tuple[str, Any] | None] = {
    "converted": None,
    "num-nodes-string": ("spec.trainer.numNodes", "2"),
    "unknown-field": ("spec.trainer.numnodes", 2),
    "deadline-zero": ("spec.activeDeadlineSeconds", 0),
    "cpu-float": ("spec.trainer.resourcesPerNode.limits.cpu", 0.5),
    "env-without-name": ("spec.trainer.env", [{"value": "1"}]),
    "label-key": ("metadata.labels", {"a b": "c"}),
    "upper-case-name": ("metadata.name", "Dist-mnist"),
    "empty-runtime-name": ("spec.runtimeRef.name", ""),
    "managed-by-long": ("spec.managedBy", "x" * 300),
}
RUNTIME_CASES: dict[str, tuple[str, Any] | None] = {
    "converted": None,
    "replicas-string": ("spec.template.spec.replicatedJobs.0.replicas", "1"),
    "unknown-field": ("spec.template.spec.replicatedJob", []),
    "num-nodes-negative": ("spec.mlPolicy.numNodes", -1),
    "label-value": ("metadata.labels", {"a": "b c"}),
}
_REFUSING = {"schema", "server-rejects-metadata"}


@pytest.mark.parametrize(
    ("kind", "case"),
    [("TrainJob", c) for c in TRAINJOB_CASES] + [("TrainingRuntime", c) for c in RUNTIME_CASES],
)
def test_validate_agrees_with_the_api_server_on_trainer_objects(
    trainer_cluster: Cluster, kind: str, case: str
) -> None:
    """validate's schema (generated from the CRDs) and metadata findings against the real API
    server and Trainer's webhooks (server-side dry runs, kubectl's strict field validation): an
    object validate passes is accepted, one it finds an error in is refused. The TrainJob's
    runtime (dist-mnist's, a TrainingRuntime of its own) is applied first."""
    namespace = "trainer-validate"
    trainer_cluster.kubectl("create", "namespace", namespace, check=False)
    (doc,) = load_path(str(ROOT / "examples" / "tfjobs" / "dist-mnist.yaml"))
    runtime, job = _converted(doc.content, namespace)
    trainer_cluster.kubectl("apply", "--server-side", "-f", "-", stdin=yaml.safe_dump(runtime))
    change = (TRAINJOB_CASES if kind == "TrainJob" else RUNTIME_CASES)[case]
    target = job if kind == "TrainJob" else runtime
    if change is not None:
        target = _set(target, *change)
    findings = (
        validate.validate_documents(
            load_text(yaml.safe_dump_all([target, runtime] if kind == "TrainJob" else [target]))
        )
        .results[0]
        .findings
    )
    offline = sorted(f"{f.rule} {f.path}: {f.message}" for f in findings if f.rule in _REFUSING)
    proc = trainer_cluster.kubectl(
        "apply", "--dry-run=server", "-f", "-", stdin=yaml.safe_dump(target), check=False
    )
    if change is None:
        assert findings == [] and proc.returncode == 0, (findings, proc.stderr)
    else:
        assert (proc.returncode != 0) == bool(offline), (offline, proc.stderr)


def _planned_trainjobs() -> list[str]:
    """The corpus TrainJobs JobSet would make pods of: on a runtime tfjob-kit ships, and not
    refused themselves (the schema)."""
    found = []
    for path in sorted((ROOT / "tests" / "data" / "corpus").rglob("trainjob-*.yaml")):
        (doc,) = load_path(str(path))
        rules = {f.rule for f in validate.validate_documents([doc]).results[0].findings}
        if trainjob.find_runtime(doc.content, runtimes.shipped()) and "schema" not in rules:
            found.append(f"{path.parent.name}/{path.name}")
    return found


@pytest.mark.parametrize("case", _planned_trainjobs())
def test_validate_agrees_with_the_api_server_on_a_trainjobs_pods(
    trainer_cluster: Cluster, case: str
) -> None:
    """Each pod validate plans for a corpus TrainJob, dry-run on the real API server: every one
    refused when validate reports server-rejects-pod for the TrainJob, none otherwise."""
    (doc,) = load_path(str(ROOT / "tests" / "data" / "corpus" / case))
    runtime = trainjob.find_runtime(doc.content, runtimes.shipped())
    assert runtime is not None
    rules = {f.rule for f in validate.validate_documents([doc]).results[0].findings}
    verdicts = []
    for plan in trainjob.pods(doc.content, runtime):
        pod = copy.deepcopy(plan.pod)
        pod["metadata"]["name"] = pod["metadata"]["name"].replace("xxxxx", "abcde")
        proc = trainer_cluster.kubectl(
            "create", "--dry-run=server", "-f", "-", stdin=json.dumps(pod), check=False
        )
        verdicts.append((plan.hostname, proc.returncode != 0, proc.stderr.strip()))
    refused = [v for v in verdicts if v[1]]
    if "server-rejects-pod" in rules:
        assert len(refused) == len(verdicts), verdicts
    else:
        assert refused == [], verdicts


def _validate_server(cluster: Cluster, text: str, tmp_path: Path) -> list[list[str]]:
    """`tfjob-kit validate --server` of text: each document's findings, as `rule origin path`."""
    path = tmp_path / "input.yaml"
    path.write_text(text, encoding="utf-8")
    command = str(Path(sys.executable).parent / "tfjob-kit")
    proc = subprocess.run(
        [command, "validate", "--server", "--format", "json", str(path)],
        env={**os.environ, "KUBECONFIG": str(cluster.kubeconfig)},
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert proc.returncode in (0, 1), proc.stderr
    return [
        sorted(f"{f['rule']} {f['origin']} {f['path']}" for f in doc["findings"])
        for doc in json.loads(proc.stdout)["documents"]
    ]


def test_validate_server_asks_the_cluster_about_trainjobs(
    trainer_cluster: Cluster, tmp_path: Path
) -> None:
    """`validate --server` of Trainer objects: a TrainJob whose runtime is only in the input is
    not dry-run (Trainer's webhook would refuse it for that alone) and the finding says to apply
    the runtime first; once it is applied, both pass. A field the CRD lacks is refused by the
    server; a LimitRange only the cluster knows refuses the TrainJob's pods."""
    namespace = "trainer-server"
    trainer_cluster.kubectl("create", "namespace", namespace)
    (doc,) = load_path(str(ROOT / "examples" / "tfjobs" / "dist-mnist.yaml"))
    runtime, job = _converted(doc.content, namespace)
    both = yaml.safe_dump_all([runtime, job])
    incomplete = "preflight-incomplete server $.spec.runtimeRef.name"
    assert _validate_server(trainer_cluster, both, tmp_path) == [[], [incomplete]]
    trainer_cluster.kubectl("apply", "--server-side", "-f", "-", stdin=yaml.safe_dump(runtime))
    assert _validate_server(trainer_cluster, both, tmp_path) == [[], []]
    unknown = _set(job, "spec.trainer.numnodes", 2)
    rejected = "server-rejects-trainer"
    assert _validate_server(trainer_cluster, yaml.safe_dump(unknown), tmp_path) == [
        ["schema offline $.spec.trainer.numnodes", f"{rejected} server $.spec.trainer.numnodes"]
    ]
    limits = {"type": "Container", "max": {"cpu": "100m"}}
    trainer_cluster.kubectl(
        "apply",
        "-f",
        "-",
        stdin=yaml.safe_dump(
            {
                "apiVersion": "v1",
                "kind": "LimitRange",
                "metadata": {"name": "small", "namespace": namespace},
                "spec": {"limits": [limits]},
            }
        ),
    )
    # The job alone: its runtime is the cluster's. Each replicated job's pods are refused (the
    # pod templates are the runtime's), once each.
    assert _validate_server(trainer_cluster, yaml.safe_dump(job), tmp_path) == [
        ["server-rejects-pod server $.spec.runtimeRef.name"]
        * len(runtime["spec"]["template"]["spec"]["replicatedJobs"])
    ]


def test_the_module_applies_and_waits_on_trainjobs(
    trainer_cluster: Cluster, tmp_path: Path
) -> None:
    """tfjob.kit.tfjob with backend trainer (the README's task): dist-mnist's TFJob becomes its
    TrainingRuntime and TrainJob, applied in that order and waited for to Succeeded (Complete); a
    second run changes nothing; tfjob_info reads it. A TrainJob Trainer refuses (a managedBy its
    CEL rule forbids, which the offline schema cannot see) leaves nothing behind, its runtime
    deleted again. One that can never be scheduled ends the wait with the scheduler's words."""
    (readme_task,) = yaml.safe_load(
        block(
            "test tests/integration/test_trainer.py::test_the_module_applies_and_waits_on_trainjobs"
        )
    )
    task = readme_task["tfjob.kit.tfjob"]
    assert task["backend"] == "trainer" and task["wait"] is True
    task = {**task, "src": str(ROOT / task["src"]), "wait_timeout": 120}
    namespace = "default"  # the example's
    (doc,) = load_path(task["src"])
    for other in ("trainer-refused", "trainer-huge"):
        trainer_cluster.kubectl("create", "namespace", other)
    runtime, job = _converted(doc.content, "trainer-refused")
    refused = _set(job, "spec.managedBy", "example.com/other")
    huge = _converted(doc.content, "trainer-huge")
    many = {"cpu": "999"}
    huge[1] = _set(huge[1], "spec.trainer.resourcesPerNode", {"requests": many, "limits": many})
    absent = {"tfjob.kit.tfjob": {**task, "state": "absent", "wait": True}}
    result = run_tasks(
        tmp_path,
        trainer_cluster.kubeconfig,
        [
            {"tfjob.kit.tfjob": task},
            {"tfjob.kit.tfjob": task},
            {"tfjob.kit.tfjob": {"definition": [runtime, refused]}},
            {
                "tfjob.kit.tfjob_info": {
                    "backend": "trainer",
                    "name": "dist-mnist",
                    "namespace": namespace,
                }
            },
            {
                "tfjob.kit.tfjob": {
                    "definition": huge,
                    "wait": True,
                    "unschedulable_grace": 5,
                    "wait_timeout": 120,
                }
            },
            absent,
        ],
    )
    first, again, refusal, info, unschedulable, removed = result.results
    assert not first.get("failed"), first
    (trainjob_result,) = first["jobs"]
    assert trainjob_result["kind"] == "TrainJob" and trainjob_result["phase"] == "Complete"
    assert [o["kind"] for o in first["objects"]] == ["TrainingRuntime", "TrainJob"]
    assert not again["changed"] and again["jobs"][0]["action"] == "unchanged"
    (read,) = info["jobs"]
    assert read["phase"] == "Complete"
    # Each pod by its replicated job and index; the parameter server's may be gone already (a
    # JobSet whose workers succeeded ends its other Jobs).
    places = {(p["replica_type"], p["replica_index"]) for p in read["pods"]}
    assert {("node", "0"), ("node", "1")} <= places <= {("node", "0"), ("node", "1"), ("ps", "0")}
    assert refusal.get("failed") and "ManagedBy must be" in refusal["msg"], refusal
    assert "deleted again" in refusal["msg"]
    gone = trainer_cluster.kubectl(
        "get", "trainingruntime", "dist-mnist", "-n", "trainer-refused", check=False
    )
    assert "NotFound" in gone.stderr
    assert unschedulable.get("failed"), unschedulable
    assert "Insufficient cpu" in unschedulable["msg"], unschedulable["msg"]
    # state absent removes what the task applied: the TrainJob and its runtime.
    assert removed["changed"] and not removed.get("failed"), removed.get("msg")
    for kind in ("trainjob", "trainingruntime"):
        assert trainer_cluster.kubectl("get", kind, "-n", namespace, "-o", "name").stdout == ""


def test_site_yml_installs_trainer_beside_the_operator(trainer_cluster: Cluster) -> None:
    """playbooks/site.yml with tfjob_kit_trainer: true on a local cluster that runs the real
    JobSet and Trainer controllers: the jobset and trainer roles install their charts beside the
    training-operator (the charts' webhooks left to the local processes, as the local inventory
    says); a second run changes nothing; a converted TrainJob still runs; teardown.yml removes
    what the roles installed and keeps what was there before them (the CRDs and the runtime the
    local cluster applied), so the controllers still work after it."""
    before = {kind: _names(trainer_cluster, kind) for kind in TOUCHED}
    first = playbook(trainer_cluster, "site.yml", "-e", "tfjob_kit_trainer=true")
    second = playbook(trainer_cluster, "site.yml", "-e", "tfjob_kit_trainer=true")
    assert recap_changed(first) > 0
    assert recap_changed(second) == 0, second[-3000:]
    deployments = trainer_cluster.items("deployments", "-n", "kubeflow-system")
    assert [d["metadata"]["name"] for d in deployments] == ["trainer"]
    assert trainer_cluster.items("deployments", "-n", "jobset-system")
    runtime = trainer_cluster.get("clustertrainingruntime", runtimes.MULTIWORKER)
    assert "tfjob-kit.io/created-by" not in (runtime["metadata"].get("annotations") or {})
    teardown = playbook(trainer_cluster, "teardown.yml", "-e", "tfjob_kit_trainer=true")
    assert "nothing the toolkit installed is left" in teardown
    after = {kind: _names(trainer_cluster, kind) for kind in TOUCHED}
    assert after == before
    # The local controllers still serve: a TrainJob still runs to Complete.
    (doc,) = load_path(str(ROOT / "examples" / "tfjobs" / "multiworker.yaml"))
    docs = _converted(doc.content, "default")
    trainer_cluster.kubectl("apply", "--server-side", "-f", "-", stdin=yaml.safe_dump_all(docs))
    name = docs[-1]["metadata"]["name"]
    try:
        trainer_cluster.kubectl(
            "wait", f"trainjob/{name}", "--for=condition=Complete", "--timeout=120s", timeout=150
        )
    finally:
        trainer_cluster.kubectl("delete", "trainjob", name, check=False)


TOUCHED = (
    "customresourcedefinitions",
    "clustertrainingruntimes",
    "validatingwebhookconfigurations",
    "mutatingwebhookconfigurations",
    "clusterroles",
    "namespaces",
)


def _names(cluster: Cluster, kind: str) -> set[str]:
    return {
        o["metadata"]["name"]
        for o in cluster.items(kind)
        if not (kind == "namespaces" and o["metadata"]["name"].startswith("trainer-"))
    }


def test_a_partly_placed_trainjob_waits_for_its_peers(trainer_cluster: Cluster) -> None:
    """The local cluster's TensorFlow rendezvous holds a TrainJob's pods as it holds a TFJob's:
    examples/gang's job converted without a gang and grown past the cluster's GPUs (20 workers
    of 2 GPUs, 32 GPUs) is partly placed, and its placed pods keep running, holding their GPUs,
    well past the pods' run time (20 s) instead of finishing without their peers."""
    namespace = f"it-{uuid.uuid4().hex[:8]}"
    trainer_cluster.kubectl("create", "namespace", namespace)
    try:
        (doc,) = load_path(str(ROOT / "examples" / "gang" / "job-a.yaml"))
        tfjob = copy.deepcopy(doc.content)
        tfjob["metadata"]["namespace"] = namespace
        tfjob["spec"]["tfReplicaSpecs"]["Worker"]["replicas"] = 20
        docs, _ = convert.to_trainjob(tfjob, gang_scheduler="none")
        trainer_cluster.kubectl("apply", "-f", "-", stdin=yaml.safe_dump_all(docs))
        name = docs[-1]["metadata"]["name"]
        selector = f"jobset.sigs.k8s.io/jobset-name={name}"
        trainer_cluster.wait_for(
            f"TrainJob {name} partly placed",
            lambda: 0 < _scheduled(trainer_cluster, name, namespace)[0] < 21,
            namespace,
            timeout=60,
        )
        time.sleep(30)
        pods = trainer_cluster.items("pods", "-n", namespace, "-l", selector)
        phases = sorted({p["status"].get("phase") for p in pods if p["spec"].get("nodeName")})
        assert phases == ["Running"], phases
        assert not _complete(trainer_cluster, name, namespace)
    finally:
        trainer_cluster.kubectl("delete", "namespace", namespace, "--wait=false", check=False)
