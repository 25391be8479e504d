"""What ``training_operator_existing: upgrade`` removes of another training-operator install,
what it keeps, and what blocks it (``tfjob.kit.training_operator_upgrade_*`` filters;
``roles/training_operator/tasks/upgrade.yml`` says why each rule is so).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from tfjob_kit.installs.objects import Obj, unique

# The old operator's webhook Service and certificate Secret when its flags do not name them.
DEFAULT_SERVICE = "training-operator"
DEFAULT_SECRET = "training-operator-webhook-cert"
WEBHOOK = "validator.training-operator.kubeflow.org"
_FLAG = re.compile(r"^--([a-z-]+)=(.*)$", re.DOTALL)


def _pod_spec(kind: str, item: Obj) -> Obj:
    spec: Obj = item.get("spec") or {}
    if kind == "CronJob":
        spec = ((spec.get("jobTemplate") or {}).get("spec") or {}).get("template") or {}
        return spec.get("spec") or {}
    if kind == "Pod":
        return spec
    return (spec.get("template") or {}).get("spec") or {}


def account_users(
    old: Obj, deployment: Obj, account: str, workloads: Mapping[str, Sequence[Obj]]
) -> list[str]:
    """The other workloads of the old operator's namespace that run as its account ("Kind
    ns/name"): pods (not the operator's own, whose labels match its Deployment's selector) and
    the pod templates of controllers (one scaled to zero has no pod)."""
    namespace = old["namespace"]
    selector = ((deployment.get("spec") or {}).get("selector") or {}).get("matchLabels") or {}
    found = []
    for kind, items in workloads.items():
        for item in items:
            spec = _pod_spec(kind, item)
            meta = item.get("metadata") or {}
            labels = meta.get("labels") or {}
            operators = (
                kind == "Pod"
                and bool(selector)
                and all(labels.get(k) == v for k, v in selector.items())
            )
            runs_as = spec.get("serviceAccountName", spec.get("serviceAccount", "default"))
            if (
                runs_as == account
                and not (kind == "Deployment" and meta.get("name") == old["name"])
                and not operators
            ):
                found.append(f"{kind} {namespace}/{meta.get('name')}")
    return found


def _own_bindings(
    account: str,
    namespace: str,
    cluster_role_bindings: Sequence[Obj],
    role_bindings: Sequence[Obj],
    removable: bool,
) -> tuple[list[Obj], list[str]]:
    """The ClusterRoleBindings whose only subject is the account (none when the account stays),
    and the ClusterRoles they grant that no other binding, of any namespace, uses."""

    def only_the_account(binding: Obj) -> bool:
        subjects = binding.get("subjects") or []
        return (
            len(subjects) == 1
            and subjects[0].get("kind") == "ServiceAccount"
            and subjects[0].get("name") == account
            and subjects[0].get("namespace", "") == namespace
        )

    own = [b for b in cluster_role_bindings if removable and only_the_account(b)]
    names = {b["metadata"]["name"] for b in own}
    others = [b for b in cluster_role_bindings if b["metadata"]["name"] not in names]
    others += role_bindings
    used = [b["roleRef"]["name"] for b in others if b["roleRef"].get("kind") == "ClusterRole"]
    roles = unique(
        [
            b["roleRef"]["name"]
            for b in own
            if b["roleRef"].get("kind") == "ClusterRole" and b["roleRef"]["name"] not in used
        ]
    )
    return own, roles


def plan(
    old: Obj,
    deployment: Obj,
    cluster_role_bindings: Sequence[Obj],
    role_bindings: Sequence[Obj],
    workloads: Mapping[str, Sequence[Obj]],
    webhooks: Sequence[Obj],
) -> dict[str, Any]:
    """What goes and what stays: ``objects`` (kind, namespace, name) to remove, ``kept`` (what
    stays although it names the account), ``account`` and ``account_users``."""
    namespace = old["namespace"]
    pod = ((deployment.get("spec") or {}).get("template") or {}).get("spec") or {}
    account = pod.get("serviceAccountName", "default")
    users = account_users(old, deployment, account, workloads)
    flags: dict[str, str] = {
        m.group(1): m.group(2)
        for c in pod.get("containers") or []
        for arg in c.get("args") or []
        if (m := _FLAG.match(str(arg)))
    }
    service = flags.get("webhook-service-name", DEFAULT_SERVICE)
    secret = flags.get("webhook-secret-name", DEFAULT_SECRET)

    removable = account != "default" and not users
    own, roles = _own_bindings(account, namespace, cluster_role_bindings, role_bindings, removable)
    own_names = [b["metadata"]["name"] for b in own]
    calls_it = any(
        (w.get("clientConfig") or {}).get("service", {}).get("namespace") == namespace
        and (w.get("clientConfig") or {}).get("service", {}).get("name") == service
        for config in webhooks
        for w in config.get("webhooks") or []
    )
    objects: list[dict[str, str]] = [
        {"kind": "Deployment", "namespace": namespace, "name": old["name"]},
        {"kind": "Service", "namespace": namespace, "name": service},
        {"kind": "Secret", "namespace": namespace, "name": secret},
    ]
    if removable:
        objects.append({"kind": "ServiceAccount", "namespace": namespace, "name": account})
    objects += [{"kind": "ClusterRoleBinding", "name": name} for name in own_names]
    objects += [{"kind": "ClusterRole", "name": name} for name in roles]
    if calls_it:
        objects.append({"kind": "ValidatingWebhookConfiguration", "name": WEBHOOK})
    kept = [
        f"ClusterRoleBinding {b['metadata']['name']}"
        for b in cluster_role_bindings
        if b["metadata"]["name"] not in own_names
        for s in b.get("subjects") or []
        if s.get("kind") == "ServiceAccount"
        and s.get("name") == account
        and s.get("namespace", "") == namespace
    ]
    if account != "default" and users:
        used_by = ", ".join(users)
        kept.append(
            f"ServiceAccount {namespace}/{account} with its bindings (used by {used_by} too)"
        )
    return {"account": account, "account_users": users, "objects": objects, "kept": unique(kept)}


def named(obj: Obj) -> str:
    """ "Kind name" of a cluster-wide object, as the blocks compare them."""
    return f"{obj['kind']} {obj['name']}"


def blocks(
    rendered: Sequence[Any],
    removed: Sequence[Obj],
    cluster_role_bindings: Sequence[Obj],
    role_bindings: Sequence[Obj],
) -> dict[str, list[str]]:
    """The chart's cluster-wide objects (``rendered``: its documents) whose name an old object
    that stays already has (``blocked``: Helm would not take it over), and the bindings that keep
    them (``users``)."""
    wanted = [
        f"{d['kind']} {d['metadata']['name']}"
        for d in rendered
        if isinstance(d, Mapping) and d.get("kind") in ("ClusterRole", "ClusterRoleBinding")
    ]
    bindings = [*cluster_role_bindings, *role_bindings]
    existing = [f"ClusterRoleBinding {b['metadata']['name']}" for b in cluster_role_bindings] + [
        f"ClusterRole {b['roleRef']['name']}"
        for b in bindings
        if b["roleRef"].get("kind") == "ClusterRole"
    ]
    gone = [named(o) for o in removed]
    blocked = unique([w for w in wanted if w in existing and w not in gone])
    users = []
    for b in bindings:
        meta = b["metadata"]
        name = (
            f"RoleBinding {meta['namespace']}/{meta['name']}"
            if "namespace" in meta
            else f"ClusterRoleBinding {meta['name']}"
        )
        ref = b["roleRef"]
        if name not in gone and (
            (f"ClusterRole {ref['name']}" in blocked and ref.get("kind") == "ClusterRole")
            or name in blocked
        ):
            users.append(name)
    return {"blocked": blocked, "users": unique(users)}


def accounts(rendered: Sequence[Any]) -> list[str]:
    """The ServiceAccounts the chart installs (their names)."""
    return [
        d["metadata"]["name"]
        for d in rendered
        if isinstance(d, Mapping) and d.get("kind") == "ServiceAccount"
    ]


def upgrade(
    old: Obj,
    namespace: str,
    deployment: Obj,
    cluster_role_bindings: Sequence[Obj],
    role_bindings: Sequence[Obj],
    workloads: Mapping[str, Sequence[Obj]],
    webhooks: Sequence[Obj],
    rendered: Sequence[Any],
) -> dict[str, Any]:
    """``plan`` and ``blocks`` together, for the chart's release in ``namespace``; with
    ``account_blocked``: the old account stays (another workload uses it) and the chart
    installs one of its name in the same namespace, which Helm would not take over."""
    result = plan(old, deployment, cluster_role_bindings, role_bindings, workloads, webhooks)
    result.update(blocks(rendered, result["objects"], cluster_role_bindings, role_bindings))
    result["account_blocked"] = (
        bool(result["account_users"])
        and namespace == old["namespace"]
        and result["account"] in accounts(rendered)
    )
    return result
