"""The server-aware preflight: what the operator will create from each TFJob, judged by the
cluster before anything is stored.

For every TFJob the preflight builds what the training-operator creates
(``tfjob_kit.operator_objects``): one pod and its headless Service per replica type (the highest
index, the longest name) and, for a gang job, its Volcano PodGroup. It then asks the API server,
all requests in parallel:

* a create with ``dryRun=All`` of each pod, Service and PodGroup: validation, defaulting and every
  admission step, so the namespace's Pod Security level, LimitRange, a ResourceQuota one pod
  already exceeds, the ServiceAccount and PriorityClass admission plugins and admission webhooks
  all answer as they will answer the operator;
* a metadata-only GET of every object the pods name: ServiceAccounts, PriorityClasses, Secrets,
  ConfigMaps and PersistentVolumeClaims (a pod's dry run does not check that its Secrets,
  ConfigMaps and claims exist: the kubelet does, and the pod then waits forever), and the
  Volcano queue of a gang job (Volcano's admission refuses a PodGroup in a missing queue where
  it runs; where it does not, the PodGroup waits: either way the queue is named);
* the namespace's ResourceQuotas, against the whole job: the sum of every replica's requests and
  limits (as defaulted by the dry run, LimitRange defaults included) and its pod count over
  ``hard - used``. A job already on the server is not summed (its pods may be in ``used``).

With ``the_jobs`` (``tfjob-kit validate --server``; the module's apply dry-runs the TFJobs itself)
the TFJob is dry-run too (server-side apply): its schema, metadata and the operator's webhook.

Findings (rule ids in ``rules.registry.PREFLIGHT``, so configurations can re-level them):
``server-rejects-tfjob``, ``server-rejects-pod``, ``server-rejects-service`` and
``server-rejects-podgroup`` (the server's field errors, mapped to the TFJob: pod ``spec.X`` is
``$.spec.tfReplicaSpecs.<key>.template.spec.X``, a Service's port the container port it comes
from), ``quota-exceeded``,
``missing-reference``, and ``preflight-incomplete`` (a WARNING: the credentials may not do one
of the requests; the finding names the verb, resource and namespace to grant). Every one has
origin ``server`` (findings.SERVER), where the offline rules' have ``offline``.

Permissions the preflight uses (least privilege; a dry run stores nothing):

=============================  ==========================================================
``create pods``                in the job's namespace, with ``dryRun=All``
``create services``            in the job's namespace, with ``dryRun=All``
``create podgroups``           ``scheduling.volcano.sh``, in the namespace (gang jobs only)
``get serviceaccounts``        in the namespace, the names the pods use
``get secrets``, ``get configmaps``, ``get persistentvolumeclaims``: in the namespace, the
                               names the pods use (metadata only is read)
``get priorityclasses``        ``scheduling.k8s.io``, cluster-wide
``get queues``                 ``scheduling.volcano.sh``, cluster-wide (gang jobs only)
``list resourcequotas``        in the namespace
``patch tfjobs``               ``kubeflow.org``, in the namespace, with ``dryRun=All`` (the_jobs)
=============================  ==========================================================

Not judged: image pull secrets (a missing one only matters for a private registry), keys inside
Secrets and ConfigMaps, and ResourceQuotas with scopes.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from fractions import Fraction
from functools import partial
from typing import Any

from tfjob_kit import model, operator_objects, quantity, rules
from tfjob_kit.config import RuleConfig
from tfjob_kit.findings import SERVER, Finding, Severity, child_path
from tfjob_kit.kube.api_errors import FORBIDDEN
from tfjob_kit.kube.apply import parallel
from tfjob_kit.kube.client import Client
from tfjob_kit.kube.kinds import TFJOB
from tfjob_kit.model import Replica, as_dict, as_list
from tfjob_kit.rules import server as server_rules

WORKERS = 16
POD_RULE = server_rules.POD_RULE
SERVICE_RULE = server_rules.SERVICE_RULE
PODGROUP_RULE = "server-rejects-podgroup"
QUOTA_RULE = "quota-exceeded"
MISSING_RULE = "missing-reference"
INCOMPLETE_RULE = "preflight-incomplete"
JOB_RULE = "server-rejects-tfjob"
VOLCANO = "volcano"

# What admission says when a name the pod uses is missing; the GETs report those more clearly.
_ADMISSION_MISSING = re.compile(
    r'serviceaccount "[^"]*" not found|no PriorityClass with name \S+ was found'
)
_DENIED_FIELD = re.compile(r"denied the request: (?P<field>(?:spec|metadata)[\w.\[\]/-]*): ")
# Server-side apply's strict field validation: `failed to create typed patch object (ns/name;
# group/version, Kind=K): .spec.trainer.numnodes: field not declared in schema`.
_TYPED_PATCH_FIELD = re.compile(r"typed patch object \([^)]*\): \.(?P<field>[\w.\[\]/-]+): ")
_KIND_WORDS = {
    "serviceaccounts": "ServiceAccount",
    "priorityclasses": "PriorityClass",
    "secrets": "Secret",
    "configmaps": "ConfigMap",
    "persistentvolumeclaims": "PersistentVolumeClaim",
    "queues": "Volcano Queue",
}
_GROUPS = {"priorityclasses": "scheduling.k8s.io", "queues": "scheduling.volcano.sh"}


@dataclass(frozen=True)
class Target:
    """One TFJob to judge (metadata.namespace set), and where it came from."""

    source: str
    document: int
    tfjob: dict[str, Any]
    line: int | None = None
    exists: bool = False  # on the server already: its quota is not summed again

    @property
    def namespace(self) -> str:
        return model.namespace(self.tfjob)

    @property
    def name(self) -> str:
        return model.job_name(self.tfjob)


@dataclass(frozen=True)
class _Ref:
    """An object a pod names: kind (plural), namespace ("" for cluster-scoped), name."""

    kind: str
    namespace: str
    name: str

    def describe(self) -> str:
        where = f"{self.namespace}/" if self.namespace else ""
        return f"{_KIND_WORDS[self.kind]} {where}{self.name}"


@dataclass
class _Job:
    target: Target
    pods: list[tuple[Replica, dict[str, Any]]]
    group: dict[str, Any] | None
    refs: dict[_Ref, list[str]] = field(default_factory=dict)  # ref -> TFJob paths
    answers: list[tuple[int, dict[str, Any]]] = field(default_factory=list)  # per pod
    services: list[tuple[Replica, dict[str, Any]]] = field(default_factory=list)
    service_answers: list[tuple[int, dict[str, Any]]] = field(default_factory=list)


def _severity(rule_id: str) -> Severity:
    try:
        return rules.default_severity(rule_id)
    except KeyError:  # an id not registered (yet): what the server refuses is an error
        return Severity.ERROR


def _finding(target: Target, rule_id: str, message: str, path: str) -> Finding:
    return Finding(rule_id, _severity(rule_id), message, path, origin=SERVER).at(
        target.source, target.document, target.line
    )


# --------------------------------------------------------------------------- paths


def _segments(field_path: str) -> list[str | int]:
    """A Kubernetes field path (spec.tfReplicaSpecs[Worker].template) in parts."""
    return list(server_rules.parse_field(field_path))


def pod_field_path(replica: Replica, field_path: str) -> str:
    """The TFJob path of a pod's field as the server names it, mapped as the offline rule maps
    its own (rules.server.field_json_path: spec.X -> <replica>.template.spec.X, a field the
    operator appended -> its list, labels -> the template's or the job's name...); a rejection
    without a field points at the template's spec."""
    if not field_path:
        return f"{replica.path}.template.spec"
    return server_rules.field_json_path(replica, field_path)


# --------------------------------------------------------------------------- references


def _optional(ref: dict[str, Any]) -> bool:
    return ref.get("optional") is True


def _references(
    replica: Replica, pod: dict[str, Any], namespace: str
) -> Iterator[tuple[_Ref, str]]:
    """(object, TFJob path) for every object a pod of the replica names and needs."""
    spec = as_dict(pod.get("spec"))
    base = f"{replica.path}.template.spec"
    account = spec.get("serviceAccountName") or spec.get("serviceAccount")
    if isinstance(account, str) and account:
        key = "serviceAccountName" if spec.get("serviceAccountName") else "serviceAccount"
        yield _Ref("serviceaccounts", namespace, account), f"{base}.{key}"
    priority = spec.get("priorityClassName")
    if isinstance(priority, str) and priority:
        yield _Ref("priorityclasses", "", priority), f"{base}.priorityClassName"

    def named(kind: str, ref: Any, path: str, key: str = "name") -> Iterator[tuple[_Ref, str]]:
        ref = as_dict(ref)
        name = ref.get(key)
        if isinstance(name, str) and name and not _optional(ref):
            yield _Ref(kind, namespace, name), f"{path}.{key}"

    for v, volume in enumerate(as_list(spec.get("volumes"))):
        volume = as_dict(volume)
        at = f"{base}.volumes[{v}]"
        yield from named("secrets", volume.get("secret"), f"{at}.secret", "secretName")
        yield from named("configmaps", volume.get("configMap"), f"{at}.configMap")
        yield from named(
            "persistentvolumeclaims",
            volume.get("persistentVolumeClaim"),
            f"{at}.persistentVolumeClaim",
            "claimName",
        )
        sources = as_list(as_dict(volume.get("projected")).get("sources"))
        for s, source in enumerate(sources):
            source = as_dict(source)
            where = f"{at}.projected.sources[{s}]"
            yield from named("secrets", source.get("secret"), f"{where}.secret")
            yield from named("configmaps", source.get("configMap"), f"{where}.configMap")
    for kind_field in ("initContainers", "containers"):
        for c, container in enumerate(as_list(spec.get(kind_field))):
            container = as_dict(container)
            at = f"{base}.{kind_field}[{c}]"
            for e, entry in enumerate(as_list(container.get("env"))):
                source = as_dict(as_dict(entry).get("valueFrom"))
                where = f"{at}.env[{e}].valueFrom"
                yield from named("secrets", source.get("secretKeyRef"), f"{where}.secretKeyRef")
                yield from named(
                    "configmaps", source.get("configMapKeyRef"), f"{where}.configMapKeyRef"
                )
            for e, entry in enumerate(as_list(container.get("envFrom"))):
                entry = as_dict(entry)
                where = f"{at}.envFrom[{e}]"
                yield from named("secrets", entry.get("secretRef"), f"{where}.secretRef")
                yield from named("configmaps", entry.get("configMapRef"), f"{where}.configMapRef")


# --------------------------------------------------------------------------- quota

_REQUESTS = ("cpu", "memory", "ephemeral-storage")


def _container_amounts(container: dict[str, Any]) -> dict[str, Fraction]:
    resources = as_dict(container.get("resources"))
    requests, limits = as_dict(resources.get("requests")), as_dict(resources.get("limits"))
    out: dict[str, Fraction] = {}
    for name, value in limits.items():
        amount = quantity.parse(value)
        if amount is not None:
            out[f"limits.{name}"] = amount
            out.setdefault(f"requests.{name}", amount)  # the API server's defaulting
    for name, value in requests.items():
        amount = quantity.parse(value)
        if amount is not None:
            out[f"requests.{name}"] = amount
    return out


def _add(total: dict[str, Fraction], more: dict[str, Fraction], times: int = 1) -> None:
    for key, value in more.items():
        total[key] = total.get(key, Fraction(0)) + value * times


def pod_amounts(pod: dict[str, Any]) -> dict[str, Fraction]:
    """What one pod counts against a ResourceQuota, as the quota evaluator sums it: the
    containers (and sidecars) added, or the largest init container if that is more, plus the
    pod overhead; keys are quota names (requests.cpu, limits.memory, ...) and pods."""
    spec = as_dict(pod.get("spec"))
    running: dict[str, Fraction] = {}
    for container in as_list(spec.get("containers")):
        _add(running, _container_amounts(as_dict(container)))
    sidecars: dict[str, Fraction] = {}
    largest_init: dict[str, Fraction] = {}
    for container in as_list(spec.get("initContainers")):
        container = as_dict(container)
        amounts = _container_amounts(container)
        if container.get("restartPolicy") == "Always":
            _add(sidecars, amounts)
            continue
        for key, value in amounts.items():
            largest_init[key] = max(
                largest_init.get(key, Fraction(0)), value + sidecars.get(key, Fraction(0))
            )
    _add(running, sidecars)
    total = {
        k: max(running.get(k, Fraction(0)), largest_init.get(k, Fraction(0)))
        for k in {*running, *largest_init}
    }
    for name, value in as_dict(spec.get("overhead")).items():
        amount = quantity.parse(value)
        if amount is not None:
            _add(total, {f"requests.{name}": amount, f"limits.{name}": amount})
    total["pods"] = Fraction(1)
    return total


def _quota_key(hard_name: str) -> str:
    """The pod amount a quota's hard name limits (cpu means requests.cpu...)."""
    if hard_name in _REQUESTS:
        return f"requests.{hard_name}"
    if hard_name == "count/pods":
        return "pods"
    return hard_name


def _format(amount: Fraction, resource: str) -> str:
    if "memory" in resource or "storage" in resource:
        for suffix, size in (("Gi", 2**30), ("Mi", 2**20), ("Ki", 2**10)):
            if amount % size == 0 and amount >= size:
                return f"{amount // size}{suffix}"
    if amount.denominator == 1:
        return str(amount.numerator)
    milli = amount * 1000
    if milli.denominator == 1:
        return f"{milli.numerator}m"
    return f"{float(amount):g}"


def _job_needs(job: _Job) -> tuple[dict[str, Fraction], dict[str, list[str]]]:
    """What the whole job counts against a quota (each replica type's pod, as the dry run
    defaulted it, times its replicas), and the terms of each sum."""
    needs: dict[str, Fraction] = {}
    parts: dict[str, list[str]] = {}
    for (replica, built), (status, answer) in zip(job.pods, job.answers, strict=True):
        pod = answer if status in (200, 201) and answer.get("kind") == "Pod" else built
        amounts = pod_amounts(pod)
        _add(needs, amounts, replica.count)
        for key, value in amounts.items():
            parts.setdefault(key, []).append(
                f"{replica.key} {replica.count} x {_format(value, key)}"
            )
    return needs, parts


def _quota_findings(
    job: _Job, quotas: list[dict[str, Any]], earlier: dict[str, Fraction], earlier_jobs: int
) -> Iterator[Finding]:
    """The job against each quota's hard - used; `earlier`: what the jobs before it in the same
    apply and namespace need (they are created too)."""
    target = job.target
    needs, parts = _job_needs(job)
    for quota in quotas:
        spec = as_dict(quota.get("spec"))
        if spec.get("scopes") or spec.get("scopeSelector"):
            continue
        state = as_dict(quota.get("status"))
        hard, used = as_dict(state.get("hard")), as_dict(state.get("used"))
        name = str(as_dict(quota.get("metadata")).get("name"))
        for hard_name, limit in hard.items():
            key = _quota_key(str(hard_name))
            need = needs.get(key)
            cap = quantity.parse(limit)
            if not need or cap is None:
                continue
            left = cap - (quantity.parse(used.get(hard_name, 0)) or Fraction(0))
            before = earlier.get(key, Fraction(0))
            if need + before <= left:
                continue
            together = (
                ""
                if need > left
                else f", and the {earlier_jobs} jobs before it in this apply need "
                f"{_format(before, key)}"
            )
            yield _finding(
                target,
                QUOTA_RULE,
                f"the job needs {hard_name} {_format(need, key)} in all "
                f"({' + '.join(parts[key])}){together}, but ResourceQuota "
                f"{target.namespace}/{name} leaves {_format(max(left, Fraction(0)), key)} (hard "
                f"{limit}, used {used.get(hard_name, 0)}): the operator would create only some "
                "of the pods and the others would wait for them; lower the requests or "
                "replicas, or raise the quota",
                "$.spec.tfReplicaSpecs",
            )


# --------------------------------------------------------------------------- the server's answers


def _forbidden_by_rbac(message: str) -> str | None:
    """'create pods in namespace "x"' when RBAC refused, else None."""
    match = FORBIDDEN.search(message)
    if match is None:
        return None
    resource = match["resource"] + (f".{match['group']}" if match["group"] else "")
    where = f' in namespace "{match["namespace"]}"' if match["namespace"] else " cluster-wide"
    return f'user "{match["user"]}" may not {match["verb"]} {resource}{where}'


def _pod_findings(
    job: _Job, replica: Replica, pod: dict[str, Any], status: int, body: dict[str, Any]
) -> Iterator[Finding]:
    target = job.target
    name = f"{target.namespace}/{as_dict(pod.get('metadata')).get('name')}"
    if status in (200, 201, 409):  # 409: a pod of that name exists, so admission passed
        return
    message = str(body.get("message") or f"HTTP {status}")
    what = f"pod {name} (replica {replica.key})"
    if status == 403 and (permission := _forbidden_by_rbac(message)):
        yield _finding(
            target,
            INCOMPLETE_RULE,
            f"the preflight cannot dry-run {what}: {permission} (a dry run stores nothing); "
            "grant create on pods in that namespace, or turn the preflight off",
            f"{replica.path}.template",
        )
        return
    if status == 403 and _ADMISSION_MISSING.search(message):
        return  # reported by the GETs, with the path of the name
    if status == 403 and "exceeded quota" in message:
        yield _finding(
            target,
            QUOTA_RULE,
            f"the API server rejects {what}: {message}",
            f"{replica.path}.template.spec.containers",
        )
        return
    causes = [c for c in as_list(as_dict(body.get("details")).get("causes")) if isinstance(c, dict)]
    if status == 422 and causes:
        for cause in causes:
            field_path = str(cause.get("field") or "")
            reason = str(cause.get("message") or "")
            yield _finding(
                target,
                POD_RULE,
                f"the API server rejects {what}: {field_path}: {reason}".replace(": : ", ": "),
                pod_field_path(replica, field_path),
            )
        return
    yield _finding(
        target,
        POD_RULE,
        f"the API server rejects {what}: {message}",
        f"{replica.path}.template.spec",
    )


def _service_findings(
    job: _Job, replica: Replica, service: dict[str, Any], status: int, body: dict[str, Any]
) -> Iterator[Finding]:
    """The server's verdict on the replica's headless Service: its field errors at the TFJob
    fields they come from (``rules.server.service_json_path``)."""
    name = f"Service {job.target.namespace}/{as_dict(service.get('metadata')).get('name')}"
    if status == 409:  # a Service of that name exists, so admission passed
        return
    ports = operator_objects.service_ports(replica) or []
    grant = "create on services in that namespace, or turn the preflight off"
    for incomplete, field_path, message in object_refusals(name, status, body, grant):
        if incomplete:
            yield _finding(job.target, INCOMPLETE_RULE, message, replica.path)
            continue
        path = server_rules.service_json_path(replica, server_rules.parse_field(field_path), ports)
        yield _finding(
            job.target,
            SERVICE_RULE,
            f"{message} ({replica.key} replica): the operator cannot create it "
            "(FailedCreateService) and the job hangs",
            path if field_path else f"{replica.path}.template.spec.containers",
        )


def _job_findings(target: Target, status: int, body: dict[str, Any]) -> Iterator[Finding]:
    """The server's verdict on the TFJob itself (CRD schema, metadata, the operator's webhook)."""
    name = f"TFJob {target.namespace}/{target.name}"
    grant = "patch on tfjobs.kubeflow.org in that namespace"
    for incomplete, field_path, message in object_refusals(name, status, body, grant):
        rule_id = INCOMPLETE_RULE if incomplete else JOB_RULE
        yield _finding(target, rule_id, message, field_json_path(field_path))


def field_json_path(field_path: str) -> str:
    """A Kubernetes field path (spec.tfReplicaSpecs[Worker].template) as a JSON path."""
    path = "$"
    for part in _segments(field_path):
        path = child_path(path, part)
    return path


def object_refusals(
    name: str, status: int, body: dict[str, Any], grant: str
) -> Iterator[tuple[bool, str, str]]:
    """What a dry run of an object (``name``: its kind and name) answered: (the preflight could
    not ask, the server's field path or "", the message) for each reason the server refused it,
    none when it accepted. ``grant``: the permission that would let the preflight ask."""
    if status in (200, 201):
        return
    message = str(body.get("message") or f"HTTP {status}")
    if status == 403 and (permission := _forbidden_by_rbac(message)):
        yield True, "", f"the preflight cannot dry-run {name}: {permission}; grant {grant}"
        return
    causes = [c for c in as_list(as_dict(body.get("details")).get("causes")) if isinstance(c, dict)]
    if status == 422 and causes:
        for cause in causes:
            field_path = str(cause.get("field") or "")
            reason = (
                f"{field_path}: {cause.get('message', '')}" if field_path else cause.get("message")
            )
            yield False, field_path, f"the API server rejects {name}: {reason}"
        return
    # A webhook's denial carries no causes; its message starts with the field, as in
    # `denied the request: spec.tfReplicaSpecs[Worker].template.spec.containers: Required ...`.
    match = _DENIED_FIELD.search(message) or _TYPED_PATCH_FIELD.search(message)
    yield False, match["field"] if match else "", f"the API server rejects {name}: {message}"


def _group_findings(job: _Job, status: int, body: dict[str, Any]) -> Iterator[Finding]:
    target = job.target
    group = job.group or {}
    name = f"{target.namespace}/{as_dict(group.get('metadata')).get('name')}"
    if status in (200, 201, 409):
        return
    message = str(body.get("message") or f"HTTP {status}")
    if status == 404 and not as_dict(body.get("details")).get("name"):
        return  # no Volcano PodGroup CRD: the operator cannot be ganging with Volcano
    permission = _forbidden_by_rbac(message) if status == 403 else None
    if permission is not None:
        yield _finding(
            target,
            INCOMPLETE_RULE,
            f"the preflight cannot dry-run PodGroup {name}: {permission}; grant create on "
            "podgroups.scheduling.volcano.sh in that namespace, or turn the preflight off",
            "$.spec.runPolicy.schedulingPolicy",
        )
        return
    causes = [c for c in as_list(as_dict(body.get("details")).get("causes")) if isinstance(c, dict)]
    # An admission policy's denial is one cause with no field: its message alone.
    detail = (
        "; ".join(
            f"{c['field']}: {c.get('message', '')}" if c.get("field") else str(c.get("message", ""))
            for c in causes
        )
        or message
    )
    yield _finding(
        target,
        PODGROUP_RULE,
        f"the API server rejects PodGroup {name}, which the operator creates for the gang: "
        f"{detail}",
        "$.spec.runPolicy.schedulingPolicy",
    )


def _ref_findings(job: _Job, answers: dict[_Ref, tuple[int, str]]) -> Iterator[Finding]:
    target = job.target
    for ref, paths in job.refs.items():
        status, message = answers[ref]
        if status == 200:
            continue
        if status == 404 and "could not find the requested resource" in message:
            continue  # the kind is not served (no Volcano): nothing would look it up
        if status == 404:
            used_by = "" if ref.kind != "queues" else " (the gang's PodGroup waits in it)"
            for path in paths:
                yield _finding(
                    target,
                    MISSING_RULE,
                    f"{ref.describe()} does not exist{used_by}: {message}; " + _missing_hint(ref),
                    path,
                )
        elif status == 403:
            resource = ref.kind + (f".{_GROUPS[ref.kind]}" if ref.kind in _GROUPS else "")
            where = f' in namespace "{ref.namespace}"' if ref.namespace else " cluster-wide"
            yield _finding(
                target,
                INCOMPLETE_RULE,
                f"the preflight cannot check that {ref.describe()} exists: "
                f"{_forbidden_by_rbac(message) or message} (needs get {resource}{where})",
                paths[0],
            )
        else:
            yield _finding(
                target,
                INCOMPLETE_RULE,
                f"the preflight cannot check that {ref.describe()} exists: {message} "
                f"(HTTP {status})",
                paths[0],
            )


def _missing_hint(ref: _Ref) -> str:
    if ref.kind in ("serviceaccounts", "priorityclasses"):
        return "the API server refuses every pod that names it; create it first"
    if ref.kind == "queues":
        return (
            "Volcano's admission refuses the operator's PodGroup (where it does not run, the "
            "PodGroup stays Pending) and no pod starts; create the queue or name another"
        )
    return (
        "the pods are created but never start (the kubelet waits for it); create it first, or "
        "mark the reference optional"
    )


# --------------------------------------------------------------------------- the whole check


def is_gang(content: dict[str, Any]) -> bool:
    """Whether the job asks for gang scheduling: it has a schedulingPolicy (how jobs opt in with
    the chart's --gang-scheduler-name=volcano) or a template names the volcano scheduler. The
    operator's flag is not visible from the API; a cluster without Volcano's PodGroup CRD is
    taken as one that does not gang (nothing is reported then)."""
    run_policy = as_dict(as_dict(content.get("spec")).get("runPolicy"))
    if "schedulingPolicy" in run_policy:
        return True
    return any(r.pod_spec.get("schedulerName") == VOLCANO for r in model.replicas(content))


def _prepare(target: Target) -> _Job:
    content, namespace = target.tfjob, target.namespace
    group = operator_objects.pod_group(content, namespace=namespace) if is_gang(content) else None
    built = operator_objects.operator_pods(
        content,
        namespace=namespace,
        gang_scheduler=VOLCANO if group is not None else "",
        one_per_type=True,
    )
    services = operator_objects.operator_services(content, namespace=namespace)
    job = _Job(target, built, group, services=services)
    for replica, pod in built:
        for ref, path in _references(replica, pod, namespace):
            job.refs.setdefault(ref, [])
            if path not in job.refs[ref]:
                job.refs[ref].append(path)
    if group is not None:
        queue = as_dict(group.get("spec")).get("queue") or "default"
        job.refs.setdefault(
            _Ref("queues", "", str(queue)), ["$.spec.runPolicy.schedulingPolicy.queue"]
        )
    return job


def check(
    client: Client,
    targets: list[Target],
    config: RuleConfig | None = None,
    *,
    the_jobs: bool = False,
    field_manager: str = "tfjob-kit",
) -> list[Finding]:
    """The preflight's findings for the targets, configured (re-levelled or disabled) by
    config. the_jobs: also a server-side apply dry run of each TFJob itself (the module's apply
    does that already; `validate --server` asks for it). Raises KubeError only when the server
    cannot be reached."""
    config = config or RuleConfig()
    jobs = [_prepare(t) for t in targets]
    refs = sorted({r for job in jobs for r in job.refs}, key=_ref_order)
    quota_namespaces = sorted({j.target.namespace for j in jobs if not j.target.exists})
    calls = _calls(client, jobs, refs, quota_namespaces, the_jobs, field_manager)
    answers = iter(parallel(_call, calls, workers=WORKERS))
    group_answers: dict[int, tuple[int, dict[str, Any]]] = {}
    job_answers: dict[int, tuple[int, dict[str, Any]]] = {}
    for index, job in enumerate(jobs):
        if the_jobs:
            job_answers[index] = next(answers)
        job.answers = [next(answers) for _ in job.pods]
        job.service_answers = [next(answers) for _ in job.services]
        if job.group is not None:
            group_answers[index] = next(answers)
    ref_answers = {ref: next(answers) for ref in refs}
    quotas = {ns: next(answers) for ns in quota_namespaces}
    found: list[Finding] = []
    summed: dict[str, dict[str, Fraction]] = {}  # namespace -> what its new jobs need so far
    counted: dict[str, int] = {}
    for index, job in enumerate(jobs):
        job_found: list[Finding] = []
        if index in job_answers:
            job_found.extend(_job_findings(job.target, *job_answers[index]))
        for (replica, pod), (status, body) in zip(job.pods, job.answers, strict=True):
            job_found.extend(_pod_findings(job, replica, pod, status, body))
        for (replica, service), (status, body) in zip(
            job.services, job.service_answers, strict=True
        ):
            job_found.extend(_service_findings(job, replica, service, status, body))
        if index in group_answers:
            job_found.extend(_group_findings(job, *group_answers[index]))
        job_found.extend(_ref_findings(job, ref_answers))
        job_found = _one_missing_queue(job, job_found)
        job_found += _quota_part(job, job_found, quotas.get(job.target.namespace), summed, counted)
        answered = [
            *job.answers,
            *job.service_answers,
            *(a for i, a in (*job_answers.items(), *group_answers.items()) if i == index),
        ]
        if any(_namespace_missing(status, body) for status, body in answered):
            job_found = [
                _finding(
                    job.target,
                    MISSING_RULE,
                    f"namespace {job.target.namespace!r} does not exist: the API server refuses "
                    "the job and everything the operator would create; create it first",
                    "$.metadata.namespace",
                )
            ]
        found.extend(c for f in job_found if (c := config.apply(f)) is not None)
    return found


def _calls(
    client: Client,
    jobs: list[_Job],
    refs: list[_Ref],
    quota_namespaces: list[str],
    the_jobs: bool,
    field_manager: str,
) -> list[Callable[[], Any]]:
    """Every request of the preflight, in the order check reads the answers: each job's own
    dry run, its pods', its Services' and its PodGroup's; then each reference; then each
    namespace's quotas."""
    calls: list[Callable[[], Any]] = []
    for job in jobs:
        namespace = job.target.namespace
        if the_jobs:
            calls.append(
                partial(client.dry_run_apply, TFJOB, job.target.tfjob, field_manager=field_manager)
            )
        for _, pod in job.pods:
            calls.append(partial(client.dry_run_create, "pods", namespace, pod))
        for _, service in job.services:
            calls.append(partial(client.dry_run_create, "services", namespace, service))
        if job.group is not None:
            calls.append(partial(client.dry_run_create, "podgroups", namespace, job.group))
    for ref in refs:
        calls.append(partial(client.probe, ref.kind, ref.name, ref.namespace or None))
    for namespace in quota_namespaces:
        calls.append(partial(_quotas, client, namespace))
    return calls


def _quota_part(
    job: _Job,
    job_found: list[Finding],
    namespace_quotas: list[dict[str, Any]] | str | None,
    summed: dict[str, dict[str, Fraction]],
    counted: dict[str, int],
) -> list[Finding]:
    """The job against its namespace's ResourceQuotas, with the new jobs before it in the same
    namespace counted (`summed`, `counted` carry them); the quotas unreadable: say so."""
    if isinstance(namespace_quotas, str):
        return [
            _finding(
                job.target,
                INCOMPLETE_RULE,
                f"the preflight cannot check the job against the ResourceQuotas: "
                f"{namespace_quotas} (needs list resourcequotas in namespace "
                f'"{job.target.namespace}")',
                "$.spec.tfReplicaSpecs",
            )
        ]
    found: list[Finding] = []
    if namespace_quotas and not job.target.exists:
        earlier = summed.setdefault(job.target.namespace, {})
        if not any(f.rule == QUOTA_RULE for f in job_found):
            count = counted.get(job.target.namespace, 0)
            found.extend(_quota_findings(job, namespace_quotas, earlier, count))
        _add(earlier, _job_needs(job)[0])
        counted[job.target.namespace] = counted.get(job.target.namespace, 0) + 1
    return found


def _one_missing_queue(job: _Job, found: list[Finding]) -> list[Finding]:
    """A missing queue is said once. Where Volcano's admission runs, it refuses the PodGroup
    for the same reason ("unable to find queue"); the missing-reference finding already names
    the queue, at its own path, so the PodGroup's refusal for it is dropped."""
    queues = [r.name for r in job.refs if r.kind == "queues"]
    missing = any(f.rule == MISSING_RULE and f.path.endswith(".queue") for f in found)
    if not (queues and missing):
        return found
    return [
        f
        for f in found
        if not (f.rule == PODGROUP_RULE and "queue" in f.message and queues[0] in f.message)
    ]


def _namespace_missing(status: int, body: dict[str, Any]) -> bool:
    return status == 404 and as_dict(body.get("details")).get("kind") == "namespaces"


def _call(call: Callable[[], Any]) -> Any:
    return call()


def _ref_order(ref: _Ref) -> tuple[str, str, str]:
    return ref.kind, ref.namespace, ref.name


def _quotas(client: Client, namespace: str) -> list[dict[str, Any]] | str:
    """The namespace's ResourceQuotas, or why they cannot be read."""
    from tfjob_kit.kube.api_errors import KubeError

    try:
        return client.resource_quotas(namespace)
    except KubeError as exc:
        if exc.status == 403:
            return str(exc)
        raise


def blocking(findings: list[Finding]) -> list[Finding]:
    """The findings that stop an apply: error level."""
    return [f for f in findings if f.severity >= Severity.ERROR]


def summary(findings: list[Finding]) -> str:
    """One line per finding: file, document, TFJob path, message, rule."""
    return "\n".join(
        f"  - {f.source}: document {f.document}: {f.path}: {f.message} [{f.rule}]" for f in findings
    )
