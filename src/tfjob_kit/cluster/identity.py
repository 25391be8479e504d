"""Who the local processes run as: a ServiceAccount each, never the admin credentials.

Every addon process gets its own ServiceAccount in ``LOCAL_NAMESPACE``, bound to exactly the
rules its component's chart grants (``chart_rbac.grants``; the rendezvous stand-in's own
``GRANTS``), and a kubeconfig that names a token file. Tokens are short-lived
(``TOKEN_DURATION``) and every ``up`` renews them; client-go re-reads the file, so a running
process picks up the new token.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from tfjob_kit.cluster.chart_rbac import Grants
from tfjob_kit.cluster.kubectl import Kubectl
from tfjob_kit.cluster.paths import kubeconfig_path, state_dir, write_private

# The local processes' own objects (identities, webhook Secret and Service) live in a namespace
# of their own, so that installing the charts (namespaces kubeflow, volcano-system) and tearing
# them down never collides with the local cluster's machinery.
LOCAL_NAMESPACE = "tfjob-kit-local"
# Service-account tokens of the local processes: short-lived, renewed by every `up` (the
# processes read them from a token file, which client-go re-reads).
TOKEN_DURATION = "24h"
# Each addon process and the local ServiceAccount it runs as (in LOCAL_NAMESPACE). The accounts
# the charts give the same components come from the charts (chart_rbac.service_account).
IDENTITIES = {
    "vc-scheduler": "tfjob-kit-local-vc-scheduler",
    "vc-controller-manager": "tfjob-kit-local-vc-controllers",
    "vc-webhook-manager": "tfjob-kit-local-vc-admission",
    "training-operator": "tfjob-kit-local-training-operator",
    "tf-rendezvous": "tfjob-kit-local-rendezvous",
    "jobset-controller": "tfjob-kit-local-jobset",
    "trainer-controller-manager": "tfjob-kit-local-trainer",
    "kueue-controller-manager": "tfjob-kit-local-kueue",
}
# The processes of Kubeflow Trainer v2 (`up --jobset`, `up --trainer`), not addons.
TRAINER_PROCESSES = ("jobset-controller", "trainer-controller-manager")
# Kueue's (`up --kueue`), not an addon either.
KUEUE_PROCESSES = ("kueue-controller-manager",)
# The addons (`up` without --no-addons).
ADDON_PROCESSES = tuple(
    process for process in IDENTITIES if process not in (*TRAINER_PROCESSES, *KUEUE_PROCESSES)
)


def identity_kubeconfig(name: str, kubectl: Kubectl, process: str, rbac: Grants) -> Path:
    """A kubeconfig for one local process: a ServiceAccount bound to exactly the rules the
    component's chart grants it (cluster-wide, and in its own namespace).

    The addon processes never get the admin credentials, so a rule the chart lacks fails here
    as it would in a real cluster.
    """
    identity, namespace = IDENTITIES[process], LOCAL_NAMESPACE
    account = {"kind": "ServiceAccount", "name": identity, "namespace": namespace}
    objects: list[dict[str, Any]] = [
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}},
        {
            "apiVersion": "v1",
            "kind": "ServiceAccount",
            "metadata": {"name": identity, "namespace": namespace},
        },
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRole",
            "metadata": {"name": identity},
            "rules": rbac.cluster_rules,
        },
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRoleBinding",
            "metadata": {"name": identity},
            "roleRef": {
                "apiGroup": "rbac.authorization.k8s.io",
                "kind": "ClusterRole",
                "name": identity,
            },
            "subjects": [account],
        },
    ]
    if rbac.namespaced_rules:
        objects += [
            {
                "apiVersion": "rbac.authorization.k8s.io/v1",
                "kind": "Role",
                "metadata": {"name": identity, "namespace": namespace},
                "rules": rbac.namespaced_rules,
            },
            {
                "apiVersion": "rbac.authorization.k8s.io/v1",
                "kind": "RoleBinding",
                "metadata": {"name": identity, "namespace": namespace},
                "roleRef": {
                    "apiGroup": "rbac.authorization.k8s.io",
                    "kind": "Role",
                    "name": identity,
                },
                "subjects": [account],
            },
        ]
    kubectl.apply(objects)
    token_file = renew_token(name, kubectl, identity)
    admin = yaml.safe_load(kubeconfig_path(name).read_text("utf-8"))
    config = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "local", "cluster": admin["clusters"][0]["cluster"]}],
        # A token file, not the token: client-go re-reads it, so `up` can renew a running
        # process's short-lived token.
        "users": [{"name": identity, "user": {"tokenFile": str(token_file)}}],
        "contexts": [
            {
                "name": identity,
                "context": {"cluster": "local", "user": identity, "namespace": namespace},
            }
        ],
        "current-context": identity,
    }
    return write_private(
        state_dir(name) / f"{identity}.kubeconfig", yaml.safe_dump(config, sort_keys=False)
    )


def renew_token(name: str, kubectl: Kubectl, identity: str) -> Path:
    """A fresh token (valid TOKEN_DURATION) for a local process's ServiceAccount, in the
    token file its kubeconfig names."""
    token = kubectl.run(
        "create", "token", identity, "-n", LOCAL_NAMESPACE, f"--duration={TOKEN_DURATION}"
    ).stdout.strip()
    return write_private(state_dir(name) / f"{identity}.token", token)


def renew_tokens(name: str, kubectl: Kubectl, processes: tuple[str, ...] = ADDON_PROCESSES) -> None:
    """Renew the token of the ServiceAccount of each of ``processes``."""
    for process in processes:
        renew_token(name, kubectl, IDENTITIES[process])
