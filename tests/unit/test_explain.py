"""TF_CONFIG and names, as the training-operator v1.9 computes them."""

from __future__ import annotations

import json
import random
from typing import Any

import pytest

from tfjob_kit import explain, model


def job(replicas: dict[str, Any], **spec: Any) -> dict[str, Any]:
    specs = {}
    for key, value in replicas.items():
        count, port = value if isinstance(value, tuple) else (value, None)
        container: dict[str, Any] = {"name": "tensorflow", "image": "tf:2.15"}
        if port:
            container["ports"] = [{"name": "tfjob-port", "containerPort": port}]
        specs[key] = {"template": {"spec": {"containers": [container]}}}
        if count is not None:
            specs[key]["replicas"] = count
    return {
        "apiVersion": "kubeflow.org/v1",
        "kind": "TFJob",
        "metadata": {"name": "mnist", "namespace": "ml"},
        "spec": {"tfReplicaSpecs": specs, **spec},
    }


def test_exact_string_for_ps_worker() -> None:
    config = explain.tf_config(job({"PS": 1, "Worker": 2}), "Worker", 1)
    assert config == (
        '{"cluster":{"ps":["mnist-ps-0.ml.svc:2222"],"worker":["mnist-worker-0.ml.svc:2222",'
        '"mnist-worker-1.ml.svc:2222"]},"task":{"type":"worker","index":1},'
        '"environment":"cloud"}'
    )


def test_cluster_keys_are_sorted_and_include_chief_and_evaluator() -> None:
    data = json.loads(
        explain.tf_config(job({"Worker": 1, "Evaluator": 1, "Chief": 1, "PS": 1}), "Evaluator", 0)
        or ""
    )
    assert list(data["cluster"]) == ["chief", "evaluator", "ps", "worker"]
    assert data["task"] == {"type": "evaluator", "index": 0}


def test_single_replica_gets_no_tf_config() -> None:
    assert explain.tf_config(job({"Worker": 1}), "Worker", 0) is None
    assert explain.tf_config(job({"Chief": None}), "Chief", 0) is None  # replicas default 1
    assert explain.tf_config(job({"Worker": 1, "PS": 0}), "Worker", 0) is None


def test_unknown_types_do_not_count_for_distribution_but_appear_in_cluster() -> None:
    data = json.loads(explain.tf_config(job({"Worker": 2, "Trainer": 1}), "Worker", 0) or "")
    assert data["cluster"]["trainer"] == ["mnist-trainer-0.ml.svc:2222"]


def test_custom_port_and_cluster_domain() -> None:
    config = explain.tf_config(job({"PS": (1, 3333), "Worker": 1}), "PS", 0, domain="cluster.local")
    assert config is not None
    data = json.loads(config)
    assert data["cluster"]["ps"] == ["mnist-ps-0.ml.svc.cluster.local:3333"]
    assert data["cluster"]["worker"] == ["mnist-worker-0.ml.svc.cluster.local:2222"]


def test_dynamic_worker_sparse_form() -> None:
    spec = job({"PS": 2, "Worker": 3}, enableDynamicWorker=True)
    worker = explain.tf_config(spec, "Worker", 2)
    assert worker == (
        '{"cluster":{"worker":{"2":"mnist-worker-2.ml.svc:2222"},"ps":['
        '"mnist-ps-0.ml.svc:2222","mnist-ps-1.ml.svc:2222"]},'
        '"task":{"type":"worker","index":2}}'
    )
    assert explain.tf_config(spec, "PS", 1) == (
        '{"cluster":{"worker":{},"ps":["mnist-ps-1.ml.svc:2222"]},"task":{"type":"ps","index":1}}'
    )
    no_ps = job({"Worker": 2}, enableDynamicWorker=True)
    assert '"ps":null' in (explain.tf_config(no_ps, "Worker", 0) or "")


def test_plan_names_labels_and_success() -> None:
    plan = explain.plan(job({"worker": 2, "ps": 1}), namespace="other")
    assert plan.namespace == "other"
    assert [(r.type, r.key) for r in plan.replicas] == [("PS", "ps"), ("Worker", "worker")]
    worker = plan.replicas[1]
    assert [p.name for p in worker.pods] == ["mnist-worker-0", "mnist-worker-1"]
    assert worker.decides_success and not plan.replicas[0].decides_success
    assert worker.pods[0].labels["training.kubeflow.org/job-role"] == "master"
    assert "training.kubeflow.org/job-role" not in worker.pods[1].labels
    assert worker.pods[0].labels["training.kubeflow.org/replica-type"] == "worker"
    assert "worker 0" in plan.success
    assert plan.defaults["runPolicy.cleanPodPolicy"] == "None"
    assert plan.defaults["gang.minAvailable"] == 3


def test_chief_decides_and_exit_code_pods_never_restart() -> None:
    spec = job({"Chief": 1, "Worker": 2})
    spec["spec"]["tfReplicaSpecs"]["Chief"]["restartPolicy"] = "ExitCode"
    plan = explain.plan(spec)
    chief = plan.replicas[0]
    assert chief.decides_success and chief.pod_restart_policy == "Never"
    assert not plan.replicas[1].decides_success
    text = explain.render_text(plan)
    assert "restartPolicy ExitCode (pods: Never)" in text and "TF_CONFIG=" in text


def test_huge_jobs_are_refused_not_listed() -> None:
    with pytest.raises(explain.ExplainError, match="at most"):
        explain.plan(job({"Worker": 2**31 - 1}))
    with pytest.raises(explain.ExplainError):
        explain.tf_config(job({"Worker": 10**6}), "Worker", 0)


def _reference_tf_config(cluster: dict[str, list[str]], sparse: bool, rtype: str, i: int) -> str:
    """TF_CONFIG as the pod config encoded whole, with a fresh json.dumps (the encoding the
    cluster-once splice of task_tf_config must equal)."""
    config = explain._pod_config(cluster, sparse, rtype.lower(), i)
    text = json.dumps(config, separators=(",", ":"), ensure_ascii=False)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


@pytest.mark.parametrize(
    ("replicas", "name", "namespace", "domain", "sparse"),
    [
        ({"Worker": 3, "PS": 2, "Chief": 1, "Evaluator": 1}, "mnist", "ml", "", False),
        ({"Worker": 3, "PS": 2}, "mnist", "ml", "", True),
        ({"Worker": 2}, "mnist", "ml", "", True),
        ({"PS": 2, "Chief": 1}, "mnist", "ml", "", True),
        ({"Master": 1, "Worker": 2}, "a<b>&c", 'ns"q\\', "cluster.local", False),
        ({"Worker": (2, 4000), "Evaluator": 1}, "jöb\u2028é", "ml", "", False),
        ({"worker": 2, "Custom<&>": 2, "Ünïcode\u00e9": 1}, "x/y", "ml", "", False),
        ({"Worker": 0, "PS": 2}, "z", "ml", "", False),
        ({"Worker": None, "Chief": 1}, "mnist", "ml", "", False),
    ],
)
def test_task_tf_config_with_encoded_cluster_is_the_whole_encoding(
    replicas: dict[str, Any], name: str, namespace: str, domain: str, sparse: bool
) -> None:
    content = job(replicas, enableDynamicWorker=sparse)
    content["metadata"] = {"name": name, "namespace": namespace}
    reps = model.replicas(content)
    cluster = explain.cluster_spec(name, namespace, reps, domain)
    encoded = explain.encode_cluster(cluster)
    for replica in reps:
        for i in range(replica.count):
            expected = _reference_tf_config(cluster, sparse, replica.type, i)
            assert explain.task_tf_config(cluster, sparse, replica.type, i, encoded) == expected
            assert explain.task_tf_config(cluster, sparse, replica.type, i) == expected
            if not domain:
                assert explain.tf_config(content, replica.type, i) == expected
    # The sizes, computed without building every TF_CONFIG, are those of the strings, in bytes.
    sizes = [
        len(_reference_tf_config(cluster, sparse, r.type, i).encode())
        for r in reps
        for i in range(r.count)
    ]
    distributed = explain.is_distributed(reps)
    found = explain.tf_config_sizes(content, namespace, domain)
    assert found == ((max(sizes), sum(sizes), len(sizes)) if distributed else (0, 0, 0))


@pytest.mark.parametrize(
    ("name", "namespace", "domain"),
    [("mnist", "ml", ""), ("a/b//c", "n/s", "cluster.local"), ("İx/", "ml", "d/e")],
)
def test_cluster_spec_hosts(name: str, namespace: str, domain: str) -> None:
    content = job({"Worker": (3, 4000), "PS": 2, "Custom/İ": 1, "Evaluator": 0})
    reps = model.replicas(content)
    cluster = explain.cluster_spec(name, namespace, reps, domain)
    expected = {}
    for replica in reps:
        hosts = []
        for i in range(replica.count):
            host = f"{model.pod_name(name, replica.lower, i).replace('/', '-')}.{namespace}.svc"
            host += "." + domain if domain else ""
            hosts.append(f"{host}:{replica.port}")
        expected[replica.lower] = hosts
    assert list(cluster) == sorted(expected)
    assert cluster == expected


@pytest.mark.parametrize("workers", [60, 200, 1000])
def test_a_long_tf_config_is_printed_once_and_its_size_shown(workers: int) -> None:
    content = job({"Worker": workers, "PS": 1})
    plan = explain.plan(content)
    largest, total, pods = explain.tf_config_sizes(content)
    assert plan.tf_config_bytes == {"largest": largest, "total": total} and pods == workers + 1
    text = explain.render_text(plan)
    assert f"up to {largest:,} bytes per pod, {total:,} bytes over its {pods} pods" in text
    full = [line for line in text.splitlines() if "TF_CONFIG=" in line]
    if largest <= explain.TF_CONFIG_INLINE:
        assert len(full) == pods
    else:
        # The first pod's in full; every other pod by its task, which is all that differs.
        assert len(full) == 1 and '"task":{"type":"ps","index":0}' in full[0]
        assert 'TF_CONFIG: mnist-ps-0\'s with task {"type":"worker","index":7}' in text
        assert text.count("'s with task") == pods - 1


def test_sparse_tf_configs_are_always_printed_whole() -> None:
    # With enableDynamicWorker each pod's TF_CONFIG differs in its cluster too: none is elided.
    content = job({"Worker": 50, "PS": 300}, enableDynamicWorker=True)
    text = explain.render_text(explain.plan(content))
    assert text.count("TF_CONFIG=") == 350 and "'s with task" not in text


_ODD_TEXT = ["mnist", "a<b>&c", 'q"\\', "jöb\u2028é", "x/y", "\x01ctl", "\ud800lone", "İ", ""]


@pytest.mark.parametrize("seed", range(40))
def test_tf_config_sizes_are_those_of_every_pods_tf_config(seed: int) -> None:
    """Sizes computed from the counts equal the sizes of the strings every pod gets, across
    the digit boundaries, sparse or not, with escaped, multi-byte and unpaired characters."""
    rng = random.Random(seed)
    counts = [0, 1, 2, 9, 10, 11, 99, 100, 101, 1000]
    sparse = rng.random() < 0.5
    # "Worker" and "worker" share a cluster entry; sparse pods of the shorter would index
    # past it (the enumeration fails), so only non-sparse jobs get both.
    types = ["Worker", "PS", "Chief", "Evaluator", "Master", "Custom<&>"]
    types += [] if sparse else ["worker"]
    replicas = {
        t: (rng.choice(counts), rng.choice([2222, 0, -5, 65535, 10**20]))
        for t in rng.sample(types, rng.randint(1, 4))
    }
    content = job(replicas, enableDynamicWorker=sparse)
    name, namespace = rng.choice(_ODD_TEXT) + "j", rng.choice(_ODD_TEXT) + "n"
    content["metadata"] = {"name": name, "namespace": namespace}
    domain = rng.choice(["", "cluster.local", "d<&>"])
    reps = model.replicas(content)
    cluster = explain.cluster_spec(name, namespace, reps, domain)
    sizes = [
        len(_reference_tf_config(cluster, sparse, r.type, i).encode("utf-8", "surrogatepass"))
        for r in reps
        for i in range(r.count)
    ]
    distributed = explain.is_distributed(reps)
    found = explain.tf_config_sizes(content, namespace, domain)
    assert found == ((max(sizes, default=0), sum(sizes), len(sizes)) if distributed else (0, 0, 0))


@pytest.mark.parametrize("count", [0, 1, 9, 10, 11, 99, 100, 101, 12345])
def test_digits_total(count: int) -> None:
    assert explain.digits_total(count) == sum(len(str(i)) for i in range(count))
