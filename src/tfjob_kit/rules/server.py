"""Rules on what the API server rejects: the pods the operator would create from each replica
(``ValidatePodCreate``, ported in :mod:`tfjob_kit.podcheck`), their headless Services
(``ValidateServiceCreate``) and the TFJob's own metadata (``ValidateObjectMetaAccessor``, as
apiextensions validates a custom resource's).

Each finding quotes the server's message (``FieldError.message``) at the JSON path of the TFJob
field the pod's field comes from. A finding at a path where another rule already reports an
error is dropped by :func:`tfjob_kit.rules.registry.run` (the other rules' hints are better).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from tfjob_kit import model, operator_objects
from tfjob_kit.findings import Severity, child_path, json_path
from tfjob_kit.model import Replica, as_dict
from tfjob_kit.podcheck import meta as podmeta
from tfjob_kit.podcheck import names
from tfjob_kit.podcheck.field import ErrorType, FieldError, Key, Path
from tfjob_kit.podcheck.pod import validate_pod
from tfjob_kit.podcheck.service import validate_service
from tfjob_kit.rules.registry import rule

POD_RULE = "server-rejects-pod"
SERVICE_RULE = "server-rejects-service"
METADATA_RULE = "server-rejects-metadata"

_FIXES = {
    ErrorType.REQUIRED: "set it",
    ErrorType.NOT_SUPPORTED: "use one of the supported values",
    ErrorType.DUPLICATE: "make it unique",
    ErrorType.NOT_FOUND: "define what it refers to, or fix the reference",
    ErrorType.FORBIDDEN: "remove it, or change what forbids it",
    ErrorType.TOO_LONG: "shorten it",
    ErrorType.TOO_MANY: "use fewer entries",
}


def fix_hint(error: FieldError) -> str:
    return _FIXES.get(error.type, "change the value as the message says")


def _walk(root: Any, path: Path, start: int) -> int:
    """How many parts of path[start:] exist in `root` (list indexes within the list)."""
    node = root
    for count, part in enumerate(path[start:]):
        if isinstance(part, int) and not isinstance(part, bool):
            if not isinstance(node, list) or part >= len(node):
                return count
            node = node[part]
        elif isinstance(node, dict):
            node = node.get(part)
        else:
            return count
    return len(path) - start


def _join(base: str, parts: Path) -> str:
    out = base
    for part in parts:
        out = child_path(out, part)
    return out


def _at(root: Any, parts: Path) -> Any:
    """The value at `parts` below `root` (None where it is not there)."""
    node = root
    for part in parts:
        if isinstance(node, list) and isinstance(part, int) and 0 <= part < len(node):
            node = node[part]
        elif isinstance(node, dict) and isinstance(part, str):
            node = node.get(part)
        else:
            return None
    return node


def _limit_behind_request(spec: dict[str, Any], path: Path) -> Path:
    """A request the template does not set but the server defaulted from the limit of the same
    name (``SetDefaults_ResourceRequirements``, containers' and the pod's): the limit's path, the
    field the value is written in."""
    for at in range(1, len(path) - 2):
        if path[at : at + 2] == ("resources", "requests"):
            resources = as_dict(_at(spec, (*path[1:at], "resources")))
            name = path[at + 2]
            requests, limits = as_dict(resources.get("requests")), as_dict(resources.get("limits"))
            if name not in requests and name in limits:
                return (*path[:at], "resources", "limits", *path[at + 2 :])
    return path


def pod_json_path(replica: Replica, path: Path) -> str:
    """The JSON path in the TFJob of the field behind a field of the replica's pod.

    ``spec.…`` is the template's spec, up to the list element the operator appended (the
    tfjob-port, TF_CONFIG), which points at the list, and a request the server defaulted from a
    limit is that limit; ``spec.restartPolicy`` is the replica's
    restartPolicy (the operator's copy); labels, annotations and finalizers are the template's
    when it has them, the job's name otherwise (the operator's labels and annotations carry it);
    the pod's name, namespace and ownerReferences come from the job's."""
    template_path = replica.path + ".template"
    if not path:
        return replica.path
    if path[0] == "spec":
        if path[:2] == ("spec", "restartPolicy"):
            return replica.path + ".restartPolicy"
        path = _limit_behind_request(replica.pod_spec, path)
        # A field of a list element the operator appended: the list itself.
        cut = 1 + _walk(replica.pod_spec, path, 1)
        if cut < len(path) and isinstance(path[cut], int):
            return _join(template_path + ".spec", path[1:cut])
        return _join(template_path + ".spec", path[1:])
    if path[0] == "metadata" and len(path) > 1:
        field = path[1]
        if field in ("labels", "annotations", "finalizers"):
            if as_dict(replica.template.get("metadata")).get(field):
                return _join(template_path + ".metadata", path[1:])
            return json_path("metadata", "name")
        if field == "namespace":
            return json_path("metadata", "namespace")
        return json_path("metadata", "name")
    return replica.path


def parse_field(field: str) -> Path:
    """A field path as the server prints it (``spec.containers[0].resources.limits[cpu]``) in
    parts: list indexes as ints, map keys as :class:`Key`. The inverse of ``FieldError.field``
    (a map key that is all digits reads as an index)."""
    parts: list[str | int] = []
    i, n = 0, len(field)
    while i < n:
        if field[i] == ".":
            i += 1
        elif field[i] == "[":
            end = field.find("]", i)
            end = n if end < 0 else end
            inner = field[i + 1 : end]
            parts.append(int(inner) if inner.isdigit() else Key(inner))
            i = end + 1
        elif tuple(parts[-2:]) == ("metadata", "annotations"):
            # An annotation key in a path is a Child (ValidateSeccompPodAnnotations and
            # friends): printed after a dot, dots and all, up to an index.
            j = field.find("[", i)
            j = n if j < 0 else j
            parts.append(field[i:j])
            i = j
        else:
            j = i
            while j < n and field[j] not in ".[":
                j += 1
            parts.append(field[i:j])
            i = j
    return tuple(parts)


def field_json_path(replica: Replica, field: str) -> str:
    """The TFJob path behind a field of the replica's pod as the server names it (a cause's
    ``field`` of a rejected dry run): what :func:`pod_json_path` gives for the offline error."""
    return pod_json_path(replica, parse_field(field))


@rule(
    POD_RULE,
    Severity.ERROR,
    "The API server rejects the pods the operator creates from a replica, or JobSet from a "
    "TrainJob (Kubernetes' pod validation).",
    defers=True,
)
def _pods_rejected(job: dict[str, Any], reps: list[Replica]) -> Iterator[tuple[str, str]]:
    if not any(r.count > 0 for r in reps):
        return
    # Pod fields made from the job's name or namespace: reported once, and not at all when the
    # TFJob's own metadata is rejected there (server-rejects-metadata says it). The metadata is
    # validated only when such a field is (most pods have no error at all).
    rejected: set[str] | None = None
    seen: set[tuple[str, str]] = set()
    for replica, pod in operator_objects.operator_pods(job, replicas=reps):
        name, namespace = pod["metadata"]["name"], pod["metadata"]["namespace"]
        # The pod is a fresh object (operator_pods): defaulted in place, no copy.
        for error in validate_pod(pod, namespace=namespace, copy=False):
            path = pod_json_path(replica, error.path)
            if path.startswith(replica.path):
                where = (
                    f"the {replica.key} template"
                    if path.startswith(replica.path + ".template")
                    else f"the {replica.key} replica"
                )
            else:
                key = (path, error.body)
                if rejected is None:
                    rejected = {json_path(*e.path) for e in validate_job_metadata(job)}
                if path in rejected or key in seen:
                    continue
                seen.add(key)
                where = "the TFJob's metadata"
            yield (
                path,
                f"the API server rejects pod {name} ({replica.key} replica): {error.message}; "
                f"{fix_hint(error)} in {where}",
            )


def job_meta(job: dict[str, Any]) -> dict[str, Any]:
    """The TFJob's metadata as the server validates it on create: the name generated from
    generateName (as model.job_name does), the namespace from the request (``default`` when the
    object names none)."""
    meta = dict(as_dict(job.get("metadata")))
    generate = meta.get("generateName")
    if not meta.get("name") and isinstance(generate, str) and generate:
        # names.SimpleNameGenerator: the prefix cut to 58 characters, 5 random ones added
        meta["name"] = generate[:58] + "xxxxx"
    meta["namespace"] = model.namespace(job)
    return meta


def validate_job_metadata(job: dict[str, Any]) -> list[FieldError]:
    """``ValidateObjectMetaAccessor(obj, namespaceScoped, NameIsDNSSubdomain, "metadata")``, what
    the apiextensions customresource validator runs on a custom resource's metadata."""
    if not isinstance(job.get("metadata"), dict) and job.get("metadata") is not None:
        return []  # the schema reports a wrong type
    return podmeta.validate_object_meta(
        job_meta(job), ("metadata",), name_rule=names.name_is_dns_subdomain
    )


@rule(
    METADATA_RULE,
    Severity.ERROR,
    "The API server rejects the object's metadata (labels, annotations, name, finalizers...).",
    defers=True,
)
def _metadata_rejected(job: dict[str, Any], reps: list[Replica]) -> Iterator[tuple[str, str]]:
    for error in validate_job_metadata(job):
        yield (
            json_path(*error.path),
            f"the API server rejects the TFJob: {error.message}; {fix_hint(error)}",
        )


def service_json_path(
    replica: Replica, path: Path, ports: list[operator_objects.ServicePort]
) -> str:
    """The JSON path in the TFJob of the field behind a field of the replica's Service: a port
    is the tensorflow container's port it comes from (its ``ports`` list for the tfjob-port the
    operator adds), its name that port's name and its number (and target port) that port's
    ``containerPort``; the Service's name is the replica's (``<job>-<type>-<index>``, as
    pod-name-too-long says it), its namespace the job's, and its labels, selector and owner come
    from the job's name."""
    if path[:2] == ("spec", "ports") and len(path) > 2:
        at = path[2]
        if isinstance(at, int) and 0 <= at < len(ports):
            source = ports[at]
            listed = _join(
                replica.path + ".template.spec", ("containers", source.container, "ports")
            )
            if source.index is None:
                return listed
            port = child_path(listed, source.index)
            # The Service port's number and its target port are the container port's number.
            numbers = {"name": "name", "port": "containerPort", "targetPort": "containerPort"}
            field = numbers.get(str(path[3])) if path[3:] else None
            return child_path(port, field) if field else port
    if path[:2] == ("metadata", "name"):
        return replica.path
    if path[:2] == ("metadata", "namespace"):
        return json_path("metadata", "namespace")
    return json_path("metadata", "name")


_SERVICE_HINTS = {
    ErrorType.REQUIRED: (
        "the Service has several ports (the tensorflow container's, and the tfjob-port 2222 the "
        "operator adds unless a port is named so), so each needs a name: name this port"
    ),
    ErrorType.DUPLICATE: (
        "the operator gives every Service port protocol TCP, whatever the container port says, "
        "and adds the tfjob-port 2222 unless a port is named so: give each port of the "
        "tensorflow container its own number (name the training port tfjob-port)"
    ),
}


@rule(
    SERVICE_RULE,
    Severity.ERROR,
    "The API server rejects the headless Service the operator creates for each pod (its ports "
    "come from the tensorflow container's): the operator then fails to create it "
    "(FailedCreateService) and the job hangs.",
    defers=True,
)
def _services_rejected(job: dict[str, Any], reps: list[Replica]) -> Iterator[tuple[str, str]]:
    for replica, service in operator_objects.operator_services(job, replicas=reps):
        ports = operator_objects.service_ports(replica) or []
        for error in validate_service(service):
            # Only what the pod passes: the Service's name, labels and selector are the pod's
            # name and labels (name-invalid, pod-name-too-long and server-rejects-pod judge
            # them), and a port's name and number are checked on the pod already (an IANA
            # service name is a DNS-1123 label; the same port range).
            if error.path[:2] != ("spec", "ports") or error.type is ErrorType.INVALID:
                continue
            yield (
                service_json_path(replica, error.path, ports),
                f"the API server rejects Service {service['metadata']['name']} ({replica.key} "
                f"replica), so the operator cannot create it (FailedCreateService) and the job "
                f"hangs: {error.message}; {_SERVICE_HINTS.get(error.type, fix_hint(error))}",
            )


SERVER_RULES = (POD_RULE, SERVICE_RULE, METADATA_RULE)
