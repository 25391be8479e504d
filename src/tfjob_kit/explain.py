"""What the training-operator (v1.9) will create for a TFJob, computed offline.

Mirrors pkg/controller.v1/tensorflow of the operator: pod and headless Service names
`<job>-<type>-<index>`, the TF_CONFIG JSON injected into the first `tensorflow` container (compact,
cluster keys sorted, as Go's encoding/json writes it), no TF_CONFIG when the job has exactly one
replica of the known types, the sparse form with enableDynamicWorker, labels, and who decides
success.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from typing import Any

from tfjob_kit import model
from tfjob_kit.model import Replica, as_dict

OPERATOR_NAME = "tfjob-controller"
JOB_ROLE_LABEL = "training.kubeflow.org/job-role"  # on pods only, not on their Services
MAX_PODS = 2000  # every pod's TF_CONFIG together grows with the square; beyond this, refuse
# A TF_CONFIG longer than this is printed once per job in text; the other pods', which differ
# only in their task, are shown by their task (a 1,000-worker job's is 35 KB per pod).
TF_CONFIG_INLINE = 4096
# etcd refuses a request over this many bytes (its --max-request-bytes, 1.5 MiB by default): a
# pod whose TF_CONFIG alone is longer can never be stored, so it is not built either.
ETCD_REQUEST_BYTES = 1572864
UNBUILT_TF_CONFIG = "(not built: longer than etcd stores)"


class ExplainError(ValueError):
    """The job cannot be explained (too large to list)."""


@dataclass
class Pod:
    name: str
    service: str
    index: int
    tf_config: str | None
    labels: dict[str, str]


@dataclass
class ReplicaPlan:
    type: str
    key: str
    replicas: int
    restart_policy: str
    pod_restart_policy: str
    port: int
    decides_success: bool
    pods: list[Pod] = field(default_factory=list)


@dataclass
class Plan:
    job: str
    namespace: str
    distributed: bool
    success: str
    defaults: dict[str, Any]
    replicas: list[ReplicaPlan]
    # The TF_CONFIG sizes in bytes: the largest one pod gets, and all pods' together.
    tf_config_bytes: dict[str, int] = field(default_factory=dict)
    # Every pod gets the same cluster spec (not sparse): the TF_CONFIGs differ only in the task.
    tf_config_shared: bool = False

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def _host_parts(job: str, namespace: str, replica: Replica, domain: str) -> tuple[str, str]:
    """(start, rest): the address of the replica's pod ``i`` is ``start + str(i) + rest``,
    <pod name, "/" as "-">.<namespace>.svc[.<domain>]:<port> (the index's digits have no "/"
    to replace)."""
    start = model.pod_name(job, replica.lower, 0)[:-1].replace("/", "-")
    return start, f".{namespace}.svc" + ("." + domain if domain else "") + f":{replica.port}"


def cluster_spec(
    job: str, namespace: str, reps: list[Replica], domain: str = ""
) -> dict[str, list[str]]:
    """The `cluster` of TF_CONFIG: lower-case type -> host:port of every replica, keys sorted."""
    cluster: dict[str, list[str]] = {}
    for replica in reps:
        start, rest = _host_parts(job, namespace, replica, domain)
        cluster[replica.lower] = [f"{start}{i}{rest}" for i in range(replica.count)]
    return dict(sorted(cluster.items()))


def is_distributed(reps: list[Replica]) -> bool:
    """False when the known replica types add up to exactly one pod (then no TF_CONFIG)."""
    return sum(r.count for r in reps if r.known) != 1


_ENCODER = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False)
"""What ``json.dumps(value, separators=(",", ":"), ensure_ascii=False)`` builds on each call."""


def _go_json(value: Any) -> str:
    """Go's json.Marshal: compact, and <, >, & escaped."""
    text = _ENCODER.encode(value)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def _distributed_replicas(content: Any, limit: bool = True) -> list[Replica] | None:
    """The job's replicas when its pods get a TF_CONFIG (more than one pod), else None.
    With `limit`, a job of more than MAX_PODS pods raises ExplainError."""
    reps = model.replicas(content)
    if limit:
        _check_size(reps)
    return reps if is_distributed(reps) else None


def is_sparse(content: Any) -> bool:
    """enableDynamicWorker: each pod sees only its own address and the parameter servers."""
    return as_dict(as_dict(content).get("spec")).get("enableDynamicWorker") is True


def _pod_config(
    cluster: dict[str, list[str]], sparse: bool, kind: str, index: int
) -> dict[str, Any]:
    """The TF_CONFIG (parsed) of task `index` of lower-case type `kind`, given the job's
    cluster spec, as the operator builds it."""
    task = {"type": kind, "index": index}
    if not sparse:
        return {"cluster": cluster, "task": task, "environment": "cloud"}
    workers: dict[str, str] = {}
    ps: list[str] | None = []
    if kind == "ps":
        ps = [cluster["ps"][index]]
    elif kind == "worker":
        ps = cluster.get("ps")
        workers[str(index)] = cluster["worker"][index]
    return {"cluster": {"worker": workers, "ps": ps}, "task": task}


def tf_config(
    content: Any,
    rtype: str,
    index: int,
    namespace: str | None = None,
    domain: str = "",
    *,
    limit: bool = True,
) -> str | None:
    """The exact TF_CONFIG value replica `index` of `rtype` receives, or None if not set.
    With `limit` (the default), a job of more than MAX_PODS pods raises ExplainError."""
    reps = _distributed_replicas(content, limit)
    if reps is None:
        return None
    ns = namespace or model.namespace(content)
    cluster = cluster_spec(model.job_name(content), ns, reps, domain)
    return task_tf_config(cluster, is_sparse(content), rtype, index)


def task_tf_config(
    cluster: dict[str, list[str]],
    sparse: bool,
    rtype: str,
    index: int,
    encoded_cluster: str | None = None,
) -> str:
    """The TF_CONFIG value of task `index` of `rtype`, given the job's :func:`cluster_spec` and
    whether it is sparse (enableDynamicWorker): what :func:`tf_config` returns for a distributed
    job, without recomputing the cluster for each pod. `encoded_cluster`: the job's
    :func:`encode_cluster` of `cluster`, to encode it once for all the job's pods."""
    kind = rtype.lower()
    if sparse or encoded_cluster is None or type(index) is not int:
        return _go_json(_pod_config(cluster, sparse, kind, index))
    # _go_json of {"cluster": cluster, "task": {"type": kind, "index": index}, "environment":
    # "cloud"}: the compact encoder writes an object member after member (no spaces), an int as
    # its decimal digits, and Go's escapes replace single characters (none in the fixed text),
    # so the encoded cluster is spliced in as it would be encoded in place.
    return (
        f'{{"cluster":{encoded_cluster},"task":{{"type":{_go_json(kind)},"index":{index}}},'
        '"environment":"cloud"}'
    )


def encode_cluster(cluster: dict[str, list[str]]) -> str:
    """The cluster spec as it appears in every non-sparse TF_CONFIG (for :func:`task_tf_config`)."""
    return _go_json(cluster)


def _utf8_len(text: str) -> int:
    # Go writes an unpaired surrogate as U+FFFD, three bytes, as surrogatepass counts it.
    return len(text.encode("utf-8", "surrogatepass"))


def digits_total(count: int) -> int:
    """``sum(len(str(i)) for i in range(count))``, computed from the count."""
    total, width, low = 0, 1, 0
    while low < count:
        high = min(count, 10**width)
        total += (high - low) * width
        low, width = high, width + 1
    return total


@dataclass(frozen=True)
class _Addresses:
    """One replica type's addresses in the cluster spec: ``count`` JSON strings, each
    ``fixed`` bytes plus its index's digits (JSON and Go's escapes replace single characters,
    and digits are written as they are)."""

    first: str  # pod 0's address
    fixed: int
    count: int

    def list_bytes(self) -> int:
        """The bytes of the encoded list of them all."""
        return 2 + self.count * self.fixed + digits_total(self.count) + max(self.count - 1, 0)


def _addresses(job: str, namespace: str, reps: list[Replica], domain: str) -> dict[str, _Addresses]:
    """What cluster_spec lists, by lower-case type, without listing it."""
    found: dict[str, _Addresses] = {}
    for replica in reps:
        start, rest = _host_parts(job, namespace, replica, domain)
        fixed = _utf8_len(_go_json(start + rest))
        found[replica.lower] = _Addresses(f"{start}0{rest}", fixed, replica.count)
    return dict(sorted(found.items()))


def _cluster_bytes(addresses: dict[str, _Addresses]) -> int:
    """The bytes of encode_cluster(cluster_spec(...)), computed from the counts."""
    members = [_utf8_len(_go_json(kind)) + 1 + a.list_bytes() for kind, a in addresses.items()]
    return 2 + sum(members) + max(len(members) - 1, 0)


def _pod_bytes(addresses: dict[str, _Addresses], sparse: bool, kind: str) -> tuple[int, int]:
    """(bytes of task 0's TF_CONFIG, how often the index's digits appear in it) for the pods
    of lower-case type `kind`; task i's is ``bytes + times * (width(i) - 1)``."""
    if not sparse:
        fixed = task_tf_config({}, False, kind, 0, "")  # the cluster spliced in: ""
        return _utf8_len(fixed) + _cluster_bytes(addresses), 1
    if kind == "ps":  # its own address, once in the cluster
        return _utf8_len(_go_json(_pod_config({"ps": [addresses["ps"].first]}, True, kind, 0))), 2
    if kind != "worker":
        return _utf8_len(_go_json(_pod_config({}, True, kind, 0))), 1
    # A worker: its own address under its index, and every parameter server's (or null).
    own = {"worker": [addresses["worker"].first], "ps": []}
    text = _go_json(_pod_config(own, True, kind, 0))
    ps = addresses.get("ps")
    return _utf8_len(text) - 2 + (ps.list_bytes() if ps is not None else 4), 3


def tf_config_sizes(
    content: Any,
    namespace: str | None = None,
    domain: str = "",
    replicas: list[Replica] | None = None,
) -> tuple[int, int, int]:
    """(largest, total, pods): the bytes of the largest TF_CONFIG one pod gets, of all the
    pods' together, and how many pods get one; (0, 0, 0) when the job is not distributed.
    Exact, and computed from the replica counts: no address is made. ``replicas``: the job's,
    when the caller has read them already (``model.replicas(content)``)."""
    reps = model.replicas(content) if replicas is None else replicas
    if not is_distributed(reps):
        return 0, 0, 0
    ns = namespace or model.namespace(content)
    addresses = _addresses(model.job_name(content), ns, reps, domain)
    sparse = is_sparse(content)
    largest = total = pods = 0
    for replica in reps:
        if replica.count <= 0:
            continue
        first, times = _pod_bytes(addresses, sparse, replica.lower)
        largest = max(largest, first + times * (len(str(replica.count - 1)) - 1))
        total += replica.count * (first - times) + times * digits_total(replica.count)
        pods += replica.count
    return largest, total, pods


def tf_config_summary(
    content: Any, namespace: str | None = None, domain: str = ""
) -> dict[str, Any]:
    """The TF_CONFIG of every pod, in a size linear in the pod count: the cluster spec once and
    each pod's task. {} when the job is not distributed (no pod gets TF_CONFIG).

    Keys: ``cluster`` (type -> host:port list), ``tasks`` (pod name -> {type, index}),
    ``sparse`` (enableDynamicWorker: each pod sees only its own address and the parameter
    servers), and ``environment`` (V(cloud), absent when sparse). pod_tf_config() rebuilds what
    one pod receives."""
    reps = _distributed_replicas(content)
    if reps is None:
        return {}
    job = model.job_name(content)
    ns = namespace or model.namespace(content)
    sparse = is_sparse(content)
    summary: dict[str, Any] = {"cluster": cluster_spec(job, ns, reps, domain), "sparse": sparse}
    if not sparse:
        summary["environment"] = "cloud"
    summary["tasks"] = {
        model.pod_name(job, r.type, i): {"type": r.lower, "index": i}
        for r in reps
        for i in range(r.count)
    }
    return summary


def pod_tf_config(summary: dict[str, Any], pod: str) -> dict[str, Any]:
    """The parsed TF_CONFIG `pod` receives, from a tf_config_summary()."""
    task = summary["tasks"][pod]
    return _pod_config(summary["cluster"], bool(summary.get("sparse")), task["type"], task["index"])


def pod_labels(job: str, replica: Replica, index: int, has_chief: bool) -> dict[str, str]:
    """The labels the operator adds to pod `index` of `replica` (GenLabels, SetReplicaType,
    SetReplicaIndex and SetJobRole); `has_chief`: the job has a Chief or Master replica spec."""
    labels = {
        "training.kubeflow.org/operator-name": OPERATOR_NAME,
        "training.kubeflow.org/job-name": job.replace("/", "-"),
        "training.kubeflow.org/replica-type": replica.lower,
        "training.kubeflow.org/replica-index": str(index),
    }
    is_master = replica.type in model.CHIEF_TYPES or (
        not has_chief and replica.type == "Worker" and index == 0
    )
    if is_master:
        labels[JOB_ROLE_LABEL] = "master"
    return labels


def _check_size(reps: list[Replica]) -> None:
    total = sum(r.count for r in reps)
    if total > MAX_PODS:
        raise ExplainError(f"the job has {total} pods; explain lists at most {MAX_PODS}")


def plan(content: Any, namespace: str | None = None, domain: str = "") -> Plan:
    """Everything the operator derives from a TFJob, replica by replica."""
    reps = model.replicas(content)
    _check_size(reps)
    job = model.job_name(content)
    ns = namespace or model.namespace(content)
    success, deciders = model.success_decider(content, reps)
    has_chief = any(r.type in model.CHIEF_TYPES for r in reps)
    spec = as_dict(as_dict(content).get("spec"))
    run_policy = as_dict(spec.get("runPolicy"))
    scheduling = as_dict(run_policy.get("schedulingPolicy"))
    total = sum(r.count for r in reps)
    defaults = {
        "runPolicy.cleanPodPolicy": run_policy.get("cleanPodPolicy", "None"),
        "runPolicy.backoffLimit": run_policy.get("backoffLimit", "unset (no limit)"),
        "runPolicy.activeDeadlineSeconds": run_policy.get(
            "activeDeadlineSeconds", "unset (no deadline)"
        ),
        "runPolicy.ttlSecondsAfterFinished": run_policy.get(
            "ttlSecondsAfterFinished", "unset (kept)"
        ),
        "runPolicy.suspend": run_policy.get("suspend", False),
        "successPolicy": spec.get("successPolicy", "") or "default (chief, else worker 0)",
        "gang.minAvailable": scheduling.get("minAvailable", total),
        "gang.queue": scheduling.get("queue", "default"),
    }
    summary = tf_config_summary(content, ns, domain)  # the cluster spec once, not per pod
    plans = []
    for replica in reps:
        replica_plan = ReplicaPlan(
            type=replica.type,
            key=replica.key,
            replicas=replica.count,
            restart_policy=replica.restart_policy,
            pod_restart_policy=replica.pod_restart_policy,
            port=replica.port,
            decides_success=replica.type in deciders,
        )
        for index in range(replica.count):
            name = model.pod_name(job, replica.type, index)
            replica_plan.pods.append(
                Pod(
                    name=name,
                    service=name,
                    index=index,
                    tf_config=_go_json(pod_tf_config(summary, name)) if summary else None,
                    labels=pod_labels(job, replica, index, has_chief),
                )
            )
        plans.append(replica_plan)
    sizes = [_utf8_len(p.tf_config) for r in plans for p in r.pods if p.tf_config is not None]
    return Plan(
        job=job,
        namespace=ns,
        distributed=is_distributed(reps),
        success=success,
        defaults=defaults,
        replicas=plans,
        tf_config_bytes={"largest": max(sizes), "total": sum(sizes)} if sizes else {},
        tf_config_shared=bool(summary) and not summary["sparse"],
    )


def render_text(result: Plan) -> str:
    lines = [f"TFJob {result.job} in namespace {result.namespace}", f"  success: {result.success}"]
    if not result.distributed:
        lines.append("  TF_CONFIG: not set (a single replica is not distributed)")
    elif result.tf_config_bytes:
        pods = sum(len(r.pods) for r in result.replicas)
        lines.append(
            f"  TF_CONFIG: up to {result.tf_config_bytes['largest']:,} bytes per pod, "
            f"{result.tf_config_bytes['total']:,} bytes over its {pods} pods"
        )
    shown = ""  # the pod whose long TF_CONFIG was printed in full
    lines.append("  effective defaults:")
    lines.extend(f"    {key}: {value}" for key, value in result.defaults.items())
    for replica in result.replicas:
        policy = replica.restart_policy
        if replica.pod_restart_policy != policy:
            policy += f" (pods: {replica.pod_restart_policy})"
        decides = ", decides success" if replica.decides_success else ""
        lines.append(
            f"  {replica.type} x{replica.replicas}: restartPolicy {policy}, "
            f"port {replica.port}{decides}"
        )
        for pod in replica.pods:
            lines.append(f"    pod {pod.name}  service {pod.service} (headless)")
            if pod.tf_config is None:
                continue
            if shown and result.tf_config_shared and len(pod.tf_config) > TF_CONFIG_INLINE:
                task = _go_json({"type": replica.type.lower(), "index": pod.index})
                lines.append(f"      TF_CONFIG: {shown}'s with task {task}")
                continue
            if len(pod.tf_config) > TF_CONFIG_INLINE:
                shown = pod.name
            lines.append(f"      TF_CONFIG={pod.tf_config}")
    return "\n".join(lines) + "\n"
