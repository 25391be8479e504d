"""What the kueue role decides: the CRDs as its release needs them (their conversion webhooks
pointed at the release's Service), and the queues its variables describe as Kueue objects, with
what is wrong in them said before anything is applied."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from tfjob_kit import quantity

API_VERSION = "kueue.x-k8s.io/v1beta2"
# Where the toolkit records that it created an object (teardown removes only those).
CREATED_BY = {"tfjob-kit.io/created-by": "tfjob-kit"}
# MultiKueue on a manager: the AdmissionCheck a ClusterQueue with `multikueue: true` names, and
# the MultiKueueConfig (the worker clusters) it takes its parameters from.
MULTIKUEUE_CHECK = "tfjob-kit-multikueue"
MULTIKUEUE_CONTROLLER = "kueue.x-k8s.io/multikueue"

Obj = dict[str, Any]

# The key of the ConfigMap that holds a Kueue controller's Configuration (upstream's chart and
# manifests, and the toolkit's chart).
CONFIG_KEY = "controller_manager_config.yaml"


def crds(chart: str, service: str, namespace: str, conversion: bool) -> list[Obj]:
    """The chart's CRDs (charts/kueue/crds) whose conversion webhooks call the release's
    Service ``namespace/service``; without ``conversion`` (another copy of Kueue serves the
    webhooks, as on the local cluster) the CRDs name no conversion, so applying them leaves the
    one in place."""
    found: list[Obj] = []
    for path in sorted((Path(chart) / "crds").glob("*.yaml")):
        with path.open(encoding="utf-8") as stream:
            found += [d for d in yaml.load_all(stream, Loader=yaml.CSafeLoader) if d]
    for crd in found:
        webhook = (crd["spec"].get("conversion") or {}).get("webhook")
        if webhook is None:
            continue
        if conversion:
            webhook["clientConfig"]["service"].update(namespace=namespace, name=service)
        else:
            del crd["spec"]["conversion"]
    return found


def _meta(name: str, namespace: str | None = None) -> Obj:
    meta: Obj = {"name": name, "annotations": dict(CREATED_BY)}
    if namespace is not None:
        meta["namespace"] = namespace
    return meta


def _flavor(item: Obj) -> Obj:
    spec: Obj = {}
    if item.get("node_labels"):
        spec["nodeLabels"] = dict(item["node_labels"])
    if item.get("tolerations"):
        spec["tolerations"] = list(item["tolerations"])
    return {
        "apiVersion": API_VERSION,
        "kind": "ResourceFlavor",
        "metadata": _meta(item["name"]),
        "spec": spec,
    }


def _quantity(value: Any) -> Any:
    """A quantity as the API server writes it back (canonical text): Kueue's defaulting webhook
    re-encodes a ClusterQueue it creates, so a quota given as 8 is stored as "8", and applying 8
    again would change it (and every run would report a change). Left as given when it is not
    a quantity (the problems say so)."""
    parsed = quantity.decode(value)
    return value if parsed is None else quantity.canonical(parsed.value, parsed.format)


def _resource_groups(queue: Obj) -> list[Obj]:
    """Kueue's resourceGroups from ``quotas`` ({flavor: {resource: nominal}}): the flavors that
    cover the same resources form one group (Kueue requires each flavor of a group to list the
    group's resources, in its order), in the order the flavors are given."""
    groups: dict[tuple[str, ...], list[Obj]] = {}
    borrowing = queue.get("borrowing_limits") or {}
    for flavor, quotas in (queue.get("quotas") or {}).items():
        covered = tuple(sorted(quotas))
        resources = []
        for resource in covered:
            entry: Obj = {"name": resource, "nominalQuota": _quantity(quotas[resource])}
            limit = (borrowing.get(flavor) or {}).get(resource)
            if limit is not None:
                entry["borrowingLimit"] = _quantity(limit)
            resources.append(entry)
        groups.setdefault(covered, []).append({"name": flavor, "resources": resources})
    return [{"coveredResources": list(c), "flavors": f} for c, f in groups.items()]


def _enabled(flag: Any) -> bool:
    """A boolean variable, also as the text a template may leave ("True", "false")."""
    if isinstance(flag, str):
        return flag.strip().lower() in ("true", "yes", "on", "1")
    return bool(flag)


def _cluster_queue(item: Obj) -> Obj:
    spec: Obj = {
        "namespaceSelector": item.get("namespace_selector") or {},
        "resourceGroups": _resource_groups(item),
    }
    if item.get("cohort"):
        spec["cohortName"] = item["cohort"]
    if item.get("preemption"):
        spec["preemption"] = dict(item["preemption"])
    if _enabled(item.get("multikueue")):
        spec["admissionChecksStrategy"] = {"admissionChecks": [{"name": MULTIKUEUE_CHECK}]}
    return {
        "apiVersion": API_VERSION,
        "kind": "ClusterQueue",
        "metadata": _meta(item["name"]),
        "spec": spec,
    }


def _local_queue(item: Obj) -> Obj:
    return {
        "apiVersion": API_VERSION,
        "kind": "LocalQueue",
        "metadata": _meta(item["name"], item["namespace"]),
        "spec": {"clusterQueue": item["cluster_queue"]},
    }


def _priority_class(item: Obj) -> Obj:
    obj: Obj = {
        "apiVersion": API_VERSION,
        "kind": "WorkloadPriorityClass",
        "metadata": _meta(item["name"]),
        "value": item["value"],
    }
    if item.get("description"):
        obj["description"] = item["description"]
    return obj


def _problems(
    flavors: list[Obj], cluster_queues: list[Obj], local_queues: list[Obj], existing: list[str]
) -> list[str]:
    """What is wrong with the variables, each naming the variable and the item."""
    problems = []
    flavor_names = {f["name"] for f in flavors}
    queue_names = {q["name"] for q in cluster_queues}
    for queue in cluster_queues:
        where = f"kueue_cluster_queues: {queue['name']}"
        quotas = queue.get("quotas") or {}
        if not quotas:
            problems.append(f"{where} has no quotas: it could admit no job")
        for flavor, amounts in quotas.items():
            if flavor not in flavor_names:
                problems.append(
                    f"{where} gives quota in flavor {flavor!r}, which kueue_resource_flavors "
                    "does not define"
                )
            for resource, amount in (amounts or {}).items():
                if quantity.decode(amount) is None:
                    problems.append(
                        f"{where} gives {resource} a quota of {amount!r} in flavor {flavor!r}, "
                        "which is not a quantity (such as 8, 500m or 64Gi)"
                    )
        for flavor, limits in (queue.get("borrowing_limits") or {}).items():
            if not queue.get("cohort"):
                problems.append(
                    f"{where} has borrowing_limits but no cohort: a queue borrows only from "
                    "the other queues of its cohort (Kueue refuses the limit without one)"
                )
                break
            for resource in limits or {}:
                if resource not in (quotas.get(flavor) or {}):
                    problems.append(
                        f"{where} limits borrowing of {resource} in flavor {flavor!r}, which "
                        "its quotas do not cover"
                    )
    for local in local_queues:
        target = local["cluster_queue"]
        if target not in queue_names and target not in existing:
            problems.append(
                f"kueue_local_queues: {local['namespace']}/{local['name']} points at the "
                f"ClusterQueue {target!r}, which kueue_cluster_queues does not define and the "
                "cluster does not have: its jobs would wait for ever"
            )
    return problems


def multikueue_objects(clusters: list[str]) -> list[Obj]:
    """A manager's MultiKueueConfig of the worker clusters (their MultiKueueClusters, made by
    the tfjob.kit.multikueue_cluster module) and the AdmissionCheck that dispatches by it."""
    if not clusters:
        return []
    config = {
        "apiVersion": API_VERSION,
        "kind": "MultiKueueConfig",
        "metadata": _meta(MULTIKUEUE_CHECK),
        "spec": {"clusters": list(clusters)},
    }
    check = {
        "apiVersion": API_VERSION,
        "kind": "AdmissionCheck",
        "metadata": _meta(MULTIKUEUE_CHECK),
        "spec": {
            "controllerName": MULTIKUEUE_CONTROLLER,
            "parameters": {
                "apiGroup": "kueue.x-k8s.io",
                "kind": "MultiKueueConfig",
                "name": MULTIKUEUE_CHECK,
            },
        },
    }
    return [config, check]


def queue_objects(
    flavors: list[Obj],
    cluster_queues: list[Obj],
    local_queues: list[Obj],
    priority_classes: list[Obj],
    existing_cluster_queues: list[str],
    multikueue_clusters: list[str] | None = None,
) -> dict[str, Any]:
    """The Kueue objects the role's variables describe, in the order to apply them (flavors,
    priority classes and MultiKueue's check, then ClusterQueues, then LocalQueues), each
    annotated as the toolkit's, and the problems that stop the role before it applies any
    (``existing_cluster_queues``: the ClusterQueues the cluster has already, which LocalQueues
    may name; ``multikueue_clusters``: a manager's worker clusters)."""
    workers = list(multikueue_clusters or [])
    problems = _problems(flavors, cluster_queues, local_queues, existing_cluster_queues)
    problems += [
        f"kueue_cluster_queues: {q['name']} dispatches to MultiKueue workers (multikueue: "
        "true), but kueue_multikueue_workers names none: its jobs would wait for ever"
        for q in cluster_queues
        if _enabled(q.get("multikueue")) and not workers
    ]
    objects = [
        *(_flavor(f) for f in flavors),
        *(_priority_class(p) for p in priority_classes),
        *multikueue_objects(workers),
        *(_cluster_queue(q) for q in cluster_queues),
        *(_local_queue(q) for q in local_queues),
    ]
    return {"objects": [] if problems else objects, "problems": problems}


def _frameworks(deployment: Obj, config_maps: list[Obj]) -> tuple[str, list[str] | None]:
    """The ConfigMap the Deployment mounts its Configuration from, and the integrations that
    Configuration enables (None when it cannot be read)."""
    namespace = deployment["metadata"].get("namespace", "")
    volumes = ((deployment.get("spec") or {}).get("template") or {}).get("spec", {}).get("volumes")
    mounted = [v["configMap"]["name"] for v in volumes or [] if (v.get("configMap") or {})]
    for config_map in config_maps:
        meta = config_map.get("metadata") or {}
        data = config_map.get("data") or {}
        if meta.get("namespace") != namespace or meta.get("name") not in mounted:
            continue
        if CONFIG_KEY not in data:
            continue
        try:
            configuration = yaml.safe_load(data[CONFIG_KEY]) or {}
            frameworks = (configuration.get("integrations") or {}).get("frameworks") or []
        except (yaml.YAMLError, AttributeError):
            return f"{namespace}/{meta.get('name')}", None
        return f"{namespace}/{meta.get('name')}", [str(f) for f in frameworks]
    return f"{namespace}/{'|'.join(mounted) or '(none mounted)'}", None


def survey(objects: dict[str, list[Obj]], needed: list[str]) -> dict[str, Any]:
    """Another Kueue on the cluster: each one found, the integrations its Configuration
    enables, and what the role must refuse, a Kueue that does not manage the ``needed`` kinds
    (a job with a queue label would then wait for ever), named with what to add.

    ``objects``: the Deployments and ConfigMaps its chart and manifests label
    app.kubernetes.io/name=kueue, less the toolkit's (the kueue role's
    ``kueue_other_selector``), under ``deployments`` and ``config_maps``."""
    found: list[Obj] = []
    problems: list[str] = []
    for deployment in objects.get("deployments") or []:
        meta = deployment["metadata"]
        where = f"Deployment {meta.get('namespace')}/{meta.get('name')}"
        config_map, frameworks = _frameworks(deployment, objects.get("config_maps") or [])
        found.append({"deployment": where, "config_map": config_map, "frameworks": frameworks})
        if frameworks is None:
            problems.append(
                f"Kueue already runs here ({where}), and its Configuration (ConfigMap "
                f"{config_map}, key {CONFIG_KEY}) cannot be read, so whether it manages "
                f"{', '.join(needed)} is unknown"
            )
            continue
        missing = [f for f in needed if f not in frameworks]
        if missing:
            problems.append(
                f"Kueue already runs here ({where}), and its Configuration (ConfigMap "
                f"{config_map}, key {CONFIG_KEY}) does not enable {', '.join(missing)}: add "
                f"{'them' if len(missing) > 1 else 'it'} to integrations.frameworks and restart "
                f"it (kubectl -n {meta.get('namespace')} rollout restart deployment/"
                f"{meta.get('name')}); until then its queues ignore those jobs"
            )
    return {"existing": found, "problems": problems}
