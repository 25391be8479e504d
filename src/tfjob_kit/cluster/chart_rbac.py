"""What the charts say about each local process: its ServiceAccount, its RBAC, its objects.

The local training-operator and Volcano processes run with exactly the rules the shipped
charts give their ServiceAccounts (rendered with the built helm), so every integration run
proves the charts' least-privilege roles are enough for the real components. Which account
that is comes from the chart too (the workload whose container is named after the process),
and the local operator's webhook objects are the chart's (``rendered``), so no name or rule
of a chart is typed a second time here.
"""

from __future__ import annotations

import copy
import subprocess
from dataclasses import dataclass, field
from functools import cache
from typing import Any

import yaml

from tfjob_kit.cluster import build
from tfjob_kit.cluster.paths import ClusterError
from tfjob_kit.versions import charts_dir, load_versions

# The namespace the charts are rendered in when only their RBAC and names matter.
RENDER_NAMESPACE = "rbac-render"
WORKLOAD_KINDS = ("Deployment", "StatefulSet", "DaemonSet")


@dataclass(frozen=True)
class Component:
    chart: str
    release: str
    values: tuple[str, ...] = ()  # --set arguments


# Each local process, by the name of its container in the chart.
COMPONENTS = {
    "training-operator": Component("training-operator", "training-operator"),
    "vc-scheduler": Component("volcano", "volcano", ("admission.enabled=false",)),
    "vc-controller-manager": Component("volcano", "volcano", ("admission.enabled=false",)),
    "vc-webhook-manager": Component("volcano", "volcano"),
    "jobset-controller": Component("jobset", "jobset"),
    "trainer-controller-manager": Component("trainer", "trainer"),
    "kueue-controller-manager": Component("kueue", "kueue"),
}


@dataclass
class Grants:
    cluster_rules: list[dict[str, Any]] = field(default_factory=list)
    namespaced_rules: list[dict[str, Any]] = field(default_factory=list)


@cache
def _rendered(
    chart: str, release: str, values: tuple[str, ...], namespace: str
) -> list[dict[str, Any]]:
    versions = load_versions()
    command = [
        str(build.helm_path()),
        "template",
        release,
        str(charts_dir() / chart),
        "--namespace",
        namespace,
        "--kube-version",
        versions.kubernetes,
    ]
    for value in values:
        command += ["--set", value]
    proc = subprocess.run(command, capture_output=True, text=True, check=False, timeout=120)
    if proc.returncode != 0:
        raise ClusterError(f"helm template {chart} failed: {proc.stderr.strip()}")
    return [d for d in yaml.safe_load_all(proc.stdout) if isinstance(d, dict)]


def rendered(process: str, namespace: str = RENDER_NAMESPACE) -> list[dict[str, Any]]:
    """The objects of the process's chart release (``helm template`` with the built helm),
    in ``namespace``. Cached and shared: copy what you change."""
    component = COMPONENTS[process]
    return _rendered(component.chart, component.release, component.values, namespace)


def chart_object(
    process: str, kind: str, namespace: str, component: str | None = None
) -> dict[str, Any]:
    """The one object of ``kind`` in the process's chart rendered in ``namespace`` (of that
    ``app.kubernetes.io/component`` when given), a copy without labels or annotations: the
    local processes' objects belong to the local cluster, not to a Helm release."""
    found = [
        d
        for d in rendered(process, namespace)
        if d["kind"] == kind
        and (
            component is None
            or (d["metadata"].get("labels") or {}).get("app.kubernetes.io/component") == component
        )
    ]
    if len(found) != 1:
        what = f"{component} {kind}" if component else kind
        raise ClusterError(f"chart {COMPONENTS[process].chart} renders {len(found)} {what}, not 1")
    obj = copy.deepcopy(found[0])
    obj["metadata"].pop("labels", None)
    obj["metadata"].pop("annotations", None)
    return obj


def service_account(process: str) -> str:
    """The ServiceAccount the chart runs the process as: that of the workload with a
    container named after the process."""
    for doc in rendered(process):
        if doc["kind"] not in WORKLOAD_KINDS:
            continue
        pod = doc["spec"]["template"]["spec"]
        if any(c.get("name") == process for c in pod.get("containers") or []):
            account: str = pod.get("serviceAccountName") or "default"
            return account
    raise ClusterError(
        f"chart {COMPONENTS[process].chart}: no workload has a container named {process}"
    )


def grants(process: str) -> Grants:
    """The rules bound to the process's ServiceAccount in its chart: cluster-wide (through
    ClusterRoleBindings) and in the release namespace (through RoleBindings)."""
    component = COMPONENTS[process]
    docs = rendered(process)
    account = service_account(process)
    roles = {
        (d["kind"], d["metadata"]["name"]): d.get("rules") or []
        for d in docs
        if d["kind"] in ("ClusterRole", "Role")
    }
    result = Grants()
    for binding in docs:
        if binding["kind"] not in ("ClusterRoleBinding", "RoleBinding"):
            continue
        if not any(
            s.get("kind") == "ServiceAccount" and s.get("name") == account
            for s in binding.get("subjects") or []
        ):
            continue
        ref = binding["roleRef"]
        rules = roles.get((ref["kind"], ref["name"]))
        if rules is None:
            raise ClusterError(
                f"chart {component.chart}: {binding['kind']} "
                f"{binding['metadata']['name']} refers to a missing {ref['kind']}"
            )
        target = (
            result.cluster_rules
            if binding["kind"] == "ClusterRoleBinding"
            else result.namespaced_rules
        )
        target.extend(rules)
    if not result.cluster_rules:
        raise ClusterError(f"chart {component.chart} binds no ClusterRole to {account}")
    return result
