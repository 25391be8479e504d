"""The exact objects the training-operator (v1.9.4) creates from a TFJob, offline: its pods, its
headless Services and, for gang jobs, its PodGroup.

Mirrors pkg/controller.v1 of the operator:

* the defaults the controller applies to the job before it reconciles (``SetDefaults_TFJob``):
  the ``tfjob-port`` (2222) added to the ``tensorflow`` container, or to the first container when
  none is named so, unless a port of that name is there;
* ``JobController.createNewPod``: the template copied, named ``<job>-<type>-<index>``, the
  operator's labels added over the template's (``GenLabels``, replica type and index, job-role
  ``master``), TF_CONFIG appended to the env of the first ``tensorflow`` container
  (``SetClusterSpec``, computed by :mod:`tfjob_kit.explain`), the pod's restartPolicy replaced by
  the replica's (``ExitCode`` becomes ``Never``; ``core.SetRestartPolicy``), and with gang
  scheduling the scheduler name (when the template has none) and the PodGroup annotations
  (Volcano: ``DecoratePodTemplateSpec``) or label (scheduler-plugins);
* ``control.GetPodFromTemplate``: of the template's metadata only the labels, annotations and
  finalizers reach the pod (its name, namespace and the rest are dropped), plus the controller
  ownerReference to the TFJob (``GenOwnerReference``); the pod is created in the job's namespace.

The operator sets neither hostname nor subdomain (the headless Services carry the pod names).
Nulls are dropped, as the operator's typed copy of the job does not keep them.

A Service per pod (``JobController.CreateNewService``): named as the pod, ``clusterIP: None``,
its labels and selector the operator's labels without the job-role, and its ports
``GetPortsFromJob``'s: a Go map from each port name of the first ``tensorflow`` container (after
the defaults, so with the tfjob-port) to its number. So unnamed ports collapse into one port
named "", a name's last port wins, no protocol is carried (the server defaults TCP), and the
order of several ports is Go's random map order (here: where each name first appears). Without
a ``tensorflow`` container the operator makes no Service at all (the webhook refuses that job).
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from tfjob_kit import explain, model, quantity
from tfjob_kit.model import Replica, as_dict, as_list

VOLCANO = "volcano"
VOLCANO_GROUP_ANNOTATION = (
    "scheduling.k8s.io/group-name"  # volcanov1beta1.KubeGroupNameAnnotationKey
)
VOLCANO_TASK_ANNOTATION = "volcano.sh/task-spec"  # volcanobatchv1alpha1.TaskSpecKey
PLUGINS_GROUP_LABEL = "scheduling.x-k8s.io/pod-group"  # schedulerpluginsv1alpha1.PodGroupLabel
PLACEHOLDER_UID = "00000000-0000-4000-8000-000000000000"
"""The owner's uid when the TFJob has none yet (it is not created): the server requires one."""


def _copy(value: Any) -> Any:
    """A deep copy of JSON data without its nulls (Go's unmarshal leaves a null field unset);
    nulls in a list stay. Dicts and lists become plain dicts and lists."""
    kind = type(value)
    if kind is dict:
        return _copy_dict(value)
    if kind is list:
        return _copy_list(value)
    return _copy_other(value)


# The exact dicts and lists of parsed JSON/YAML take the fast way below: dict.copy and
# list.copy copy the scalars at C speed (in order), then each nested value is replaced by its
# copy (a key keeps its place) and each null key deleted, which is what building the copy item
# by item gives. Anything else (a subclass) takes the generic way, by isinstance.


def _copy_dict(value: dict[str, Any]) -> dict[str, Any]:
    out = value.copy()
    for k, v in value.items():
        kind = type(v)
        if kind is str:
            continue
        if kind is dict:
            out[k] = _copy_dict(v)
        elif kind is list:
            out[k] = _copy_list(v)
        elif v is None:
            del out[k]
        elif kind not in _SCALARS and isinstance(v, _NESTED):
            out[k] = _copy_other(v)
    return out


def _copy_list(value: list[Any]) -> list[Any]:
    out = value.copy()
    for i, v in enumerate(value):
        kind = type(v)
        if kind is str:
            continue
        if kind is dict:
            out[i] = _copy_dict(v)
        elif kind is list:
            out[i] = _copy_list(v)
        elif kind not in _SCALARS and isinstance(v, _NESTED):
            out[i] = _copy_other(v)
    return out


def _copy_other(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _copy(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_copy(v) for v in value]
    return value


_NESTED = (dict, list)
_SCALARS = frozenset((str, int, bool, float, type(None)))


def owner_reference(content: dict[str, Any]) -> dict[str, Any]:
    """``JobController.GenOwnerReference``: the controller reference to the TFJob."""
    meta = as_dict(content.get("metadata"))
    uid = meta.get("uid")
    return {
        "apiVersion": model.API_VERSION,
        "kind": model.KIND,
        "name": model.job_name(content),
        "uid": uid if isinstance(uid, str) and uid else PLACEHOLDER_UID,
        "controller": True,
        "blockOwnerDeletion": True,
    }


def _default_port(containers: list[Any], tensorflow: int | None) -> None:
    """``setTensorflowDefaultPort``: tfjob-port 2222 on the tensorflow container (else the
    first), unless that container has a port of that name."""
    if not containers:
        return
    container = containers[tensorflow or 0]
    if not isinstance(container, dict):
        return
    ports = container.get("ports")
    if ports is None:
        ports = container["ports"] = []
    if not isinstance(ports, list):
        return
    if not any(isinstance(p, dict) and p.get("name") == model.PORT_NAME for p in ports):
        ports.append({"name": model.PORT_NAME, "containerPort": model.DEFAULT_PORT})


def _set_tf_config(containers: list[Any], tensorflow: int | None, value: str) -> None:
    """``SetClusterSpec``: TF_CONFIG appended to the env of the first tensorflow container."""
    if tensorflow is not None:
        container = containers[tensorflow]
        env = container.get("env")
        if not isinstance(env, list):
            env = container["env"] = []
        env.append({"name": "TF_CONFIG", "value": value})


def _fresh_map(value: Any) -> dict[str, Any]:
    """A copy of a map of the template's metadata ({} when it is not a map)."""
    return _copy(value) if isinstance(value, dict) else {}


def operator_pod(
    content: dict[str, Any],
    replica: Replica,
    index: int,
    *,
    namespace: str | None = None,
    gang_scheduler: str = "",
) -> dict[str, Any]:
    """The Pod the operator creates for replica `index` of `replica`, as it sends it to the API
    server. `gang_scheduler`: the operator's ``--gang-scheduler-name`` (``volcano``, a
    scheduler-plugins scheduler name, or "" when gang scheduling is off)."""
    return _JobPods(content, namespace, gang_scheduler, None).pod(replica, index)


class _JobPods:
    """What every pod of one job shares (computed once per job): its name, namespace, replicas,
    whether it has a chief, the TF_CONFIG cluster spec and the owner reference's fields."""

    def __init__(
        self,
        content: dict[str, Any],
        namespace: str | None,
        gang_scheduler: str,
        replicas: list[Replica] | None,
    ):
        self.content = content
        self.job = model.job_name(content)
        self.namespace = namespace or model.namespace(content)
        self.gang_scheduler = gang_scheduler
        self.replicas = model.replicas(content) if replicas is None else replicas
        self.has_chief = any(r.type in model.CHIEF_TYPES for r in self.replicas)
        # explain.tf_config(content, type, index, namespace, limit=False), the cluster once;
        # one that etcd would refuse is not built (its size grows with the replica counts).
        self.distributed = explain.is_distributed(self.replicas)
        self.cluster = (
            explain.cluster_spec(self.job, self.namespace, self.replicas)
            if self.distributed
            and explain.tf_config_sizes(content, self.namespace, replicas=self.replicas)[0]
            <= explain.ETCD_REQUEST_BYTES
            else None
        )
        self.sparse = explain.is_sparse(content)
        self.encoded_cluster = (
            explain.encode_cluster(self.cluster)
            if self.cluster is not None and not self.sparse
            else None
        )
        self.owner = owner_reference(content)  # its values are scalars: a dict() is a copy

    def pod(self, replica: Replica, index: int) -> dict[str, Any]:
        job, gang_scheduler = self.job, self.gang_scheduler
        template_meta = as_dict(replica.template.get("metadata"))
        spec = _copy(replica.pod_spec)
        containers = as_list(spec.get("containers"))
        # The copy keeps the containers in place (a null one stays), and the default port
        # renames none: the replica's tensorflow container is at the same index.
        found = replica.tensorflow_container()
        tensorflow = None if found is None else found[0]
        _default_port(containers, tensorflow)
        labels = _fresh_map(template_meta.get("labels"))
        labels.update(explain.pod_labels(job, replica, index, self.has_chief))
        annotations = _fresh_map(template_meta.get("annotations"))
        if self.cluster is not None:
            tf_config = explain.task_tf_config(
                self.cluster, self.sparse, replica.type, index, self.encoded_cluster
            )
            _set_tf_config(containers, tensorflow, tf_config)
        elif self.distributed:
            _set_tf_config(containers, tensorflow, explain.UNBUILT_TF_CONFIG)
        spec["restartPolicy"] = replica.pod_restart_policy
        if gang_scheduler:
            if not spec.get("schedulerName"):
                spec["schedulerName"] = gang_scheduler
            if gang_scheduler == VOLCANO:
                annotations[VOLCANO_GROUP_ANNOTATION] = job
                annotations[VOLCANO_TASK_ANNOTATION] = replica.lower
            else:
                labels[PLUGINS_GROUP_LABEL] = job
        meta: dict[str, Any] = {
            "name": model.pod_name(job, replica.type, index).replace("/", "-"),
            "namespace": self.namespace,
            "labels": labels,
        }
        if annotations:
            meta["annotations"] = annotations
        finalizers = template_meta.get("finalizers")
        if isinstance(finalizers, list) and finalizers:
            meta["finalizers"] = _copy(finalizers)
        meta["ownerReferences"] = [dict(self.owner)]
        return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec}


def operator_pods(
    content: dict[str, Any],
    *,
    namespace: str | None = None,
    gang_scheduler: str = "",
    one_per_type: bool = True,
    replicas: list[Replica] | None = None,
) -> list[tuple[Replica, dict[str, Any]]]:
    """The pods of the job, replica type by replica type in the operator's order. With
    `one_per_type`, only the highest index of each type: the longest name, and otherwise the
    same pod spec as its siblings (only TF_CONFIG's task index and the index label differ).
    Each pod is a fresh object: nothing in it is shared with `content` or with another pod.
    `replicas`: ``model.replicas(content)`` when the caller has it (a rule does)."""
    job = _JobPods(content, namespace, gang_scheduler, replicas)
    pods = []
    for replica in job.replicas:
        if replica.count <= 0:
            continue
        indexes = [replica.count - 1] if one_per_type else list(range(replica.count))
        for index in indexes:
            pods.append((replica, job.pod(replica, index)))
    return pods


@dataclass(frozen=True)
class ServicePort:
    """A port of the operator's Services and the container port it comes from: `container`, the
    index of the tensorflow container; `index`, the port's index in its ``ports`` (None for the
    tfjob-port the operator's defaults add)."""

    name: str
    port: int
    container: int
    index: int | None


def service_ports(replica: Replica) -> list[ServicePort] | None:
    """``GetPortsFromJob`` on the defaulted replica: name -> port of the tensorflow container's
    ports (a name's last port wins, in the order names first appear), or None when the replica
    has no tensorflow container."""
    found = replica.tensorflow_container()
    if found is None:
        return None
    container, spec = found
    by_name: dict[str, ServicePort] = {}
    ports = spec.get("ports")
    for index, port in enumerate(ports if isinstance(ports, list) else []):
        if isinstance(port, dict):
            name = port.get("name")
            name = name if isinstance(name, str) else ""
            number = model.as_int(port.get("containerPort"), 0)
            by_name[name] = ServicePort(name, number, container, index)
    if model.PORT_NAME not in by_name:  # setTensorflowDefaultPort
        by_name[model.PORT_NAME] = ServicePort(model.PORT_NAME, model.DEFAULT_PORT, container, None)
    return list(by_name.values())


def operator_services(
    content: dict[str, Any],
    *,
    namespace: str | None = None,
    one_per_type: bool = True,
    replicas: list[Replica] | None = None,
) -> list[tuple[Replica, dict[str, Any]]]:
    """The headless Services of the job, as :func:`operator_pods` gives its pods (with
    `one_per_type`, the highest index: the longest name; the ports are the same for every
    index). A replica without a tensorflow container has none."""
    job = model.job_name(content)
    namespace = namespace or model.namespace(content)
    owner = owner_reference(content)
    services = []
    for replica in model.replicas(content) if replicas is None else replicas:
        ports = service_ports(replica)
        if ports is None or replica.count <= 0:
            continue
        indexes = [replica.count - 1] if one_per_type else list(range(replica.count))
        for index in indexes:
            services.append((replica, _service(job, namespace, owner, replica, index, ports)))
    return services


def _service(
    job: str,
    namespace: str,
    owner: dict[str, Any],
    replica: Replica,
    index: int,
    ports: list[ServicePort],
) -> dict[str, Any]:
    """``CreateNewService``: the headless Service of pod `index`."""
    labels = explain.pod_labels(job, replica, index, has_chief=True)
    labels.pop(explain.JOB_ROLE_LABEL, None)  # GenLabels, replica type and index only
    spec: dict[str, Any] = {"clusterIP": "None", "selector": dict(labels)}
    if ports:
        spec["ports"] = [
            {"name": p.name, "port": p.port} if p.name else {"port": p.port} for p in ports
        ]
    meta = {
        "name": model.pod_name(job, replica.type, index).replace("/", "-"),
        "namespace": namespace,
        "labels": labels,
        "ownerReferences": [dict(owner)],
    }
    return {"apiVersion": "v1", "kind": "Service", "metadata": meta, "spec": spec}


def _format_quantity(value: Fraction) -> str:
    """A quantity string for an exact value (plain, milli or nano units; rounded up as the API
    server rounds a value below its precision). The value, not necessarily Go's spelling."""
    if value.denominator == 1:
        return str(value.numerator)
    milli = value * 1000
    if milli.denominator == 1:
        return f"{milli.numerator}m"
    nano = value * 10**9
    return f"{-((-nano.numerator) // nano.denominator)}n"


def _min_resources(reps: list[Replica], min_member: int) -> dict[str, str]:
    """``CalcPGMinResources``: the requests (else the limits) of every container of the first
    `min_member` pods. The operator orders the replica types by their PriorityClass value (a
    cluster lookup, and Go's map order among equals); offline every type counts as priority 0
    and comes in the operator's type order."""
    total: dict[str, Fraction] = {}
    pods = 0
    for replica in reps:
        taken = min(replica.count, min_member - pods)  # pods of this replica counted
        if taken <= 0:
            continue
        pods += taken
        for container in replica.containers:
            resources = as_dict(as_dict(container).get("resources"))
            requests = resources.get("requests")
            chosen = requests if isinstance(requests, dict) else resources.get("limits")
            for name, amount in as_dict(chosen).items():
                parsed = quantity.parse(amount)
                if parsed is not None:
                    total[name] = total.get(name, Fraction(0)) + parsed * taken
    return {name: _format_quantity(value) for name, value in total.items()}


def pod_group(content: dict[str, Any], *, namespace: str | None = None) -> dict[str, Any] | None:
    """The Volcano PodGroup the operator (``--gang-scheduler-name=volcano``) creates for the job
    (``SyncPodGroup`` with the Volcano fill function of ``ReconcileJobs``), or None when the job
    has no replicas. Named as the job, with the job's annotations and the controller reference;
    minMember is ``schedulingPolicy.minAvailable`` or the total replica count, queue ``default``
    unless set, priorityClassName and minResources from the scheduling policy (minResources
    computed as ``CalcPGMinResources`` does when not given)."""
    reps = model.replicas(content)
    if not reps:
        return None
    policy = as_dict(as_dict(as_dict(content.get("spec")).get("runPolicy")).get("schedulingPolicy"))
    total = sum(r.count for r in reps)
    min_member = model.as_int(policy.get("minAvailable"), total)
    queue = policy.get("queue")
    spec: dict[str, Any] = {
        "minMember": min_member,
        "queue": queue if isinstance(queue, str) and queue else "default",
    }
    priority_class = policy.get("priorityClass")
    if isinstance(priority_class, str) and priority_class:
        spec["priorityClassName"] = priority_class
    given = policy.get("minResources")
    spec["minResources"] = (
        _copy(given) if isinstance(given, dict) else _min_resources(reps, min_member)
    )
    meta: dict[str, Any] = {
        "name": model.job_name(content),
        "namespace": namespace or model.namespace(content),
    }
    annotations = as_dict(content.get("metadata")).get("annotations")
    if isinstance(annotations, dict) and annotations:
        meta["annotations"] = _copy(annotations)
    meta["ownerReferences"] = [owner_reference(content)]
    return {
        "apiVersion": "scheduling.volcano.sh/v1beta1",
        "kind": "PodGroup",
        "metadata": meta,
        "spec": spec,
    }
