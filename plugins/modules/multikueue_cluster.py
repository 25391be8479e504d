#!/usr/bin/python
# Copyright: tfjob-kit developers
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""tfjob.kit.multikueue_cluster: a MultiKueue worker cluster, as the manager's Kueue reaches it."""

from __future__ import annotations

DOCUMENTATION = r"""
---
module: multikueue_cluster
short_description: Connect a MultiKueue manager's Kueue to a worker cluster, and renew its token
version_added: 0.1.0
description:
  - Runs against the MultiKueue manager cluster (the connection options). Writes a
    self-contained kubeconfig for the worker cluster into a Secret of the manager, and the
    C(MultiKueueCluster) that names it, then waits until Kueue on the manager says it is
    connected (its C(Active) condition), failing with Kueue's own words when it does not.
  - Kueue refuses kubeconfigs that read a token or a CA from a file, skip TLS verification, or
    run exec plugins, so the kubeconfig holds the worker's server, its CA inline and a bound
    token of a ServiceAccount of the worker (the kueue chart's C(multikueue.worker) makes it,
    with the rules a manager needs there), asked from the worker's TokenRequest API with
    O(worker_kubeconfig).
  - Such a token expires after O(token_lifetime). A run renews it once less than half of that
    is left, or when the worker's server or CA changed, and otherwise changes nothing; run it
    (or C(playbooks/site.yml)) at least every half lifetime (three days for the default week).
  - The token never appears in the result. With O(state=absent), the C(MultiKueueCluster) and
    its Secret are deleted where the toolkit created them.
author:
  - tfjob-kit developers (@tfjob-kit)
extends_documentation_fragment:
  - tfjob.kit.connection
options:
  name:
    description:
      - The C(MultiKueueCluster)'s name, which a C(MultiKueueConfig) lists. The Secret is
        C(tfjob-kit-multikueue-<name>).
    type: str
    required: true
  state:
    description:
      - V(present) connects the worker; V(absent) removes what V(present) made.
    type: str
    choices: [present, absent]
    default: present
  worker_kubeconfig:
    description:
      - A kubeconfig file that reaches the worker cluster from where the module runs, allowed
        to request tokens of O(service_account). Its server and CA go into the kubeconfig the
        manager gets; its credentials do not.
      - Required with O(state=present).
    type: path
  worker_context:
    description:
      - The context of O(worker_kubeconfig) (default its current context).
    type: str
  service_account:
    description:
      - The worker's ServiceAccount whose token the manager uses.
    type: str
    default: kueue-multikueue
  service_account_namespace:
    description:
      - Its namespace on the worker.
    type: str
    default: kueue-system
  secret_namespace:
    description:
      - Where the manager's Kueue reads kubeconfigs from, its own namespace.
    type: str
    default: kueue-system
  token_lifetime:
    description:
      - Seconds a token is asked to last (the worker's API server may shorten it; the token's
        own expiry is what counts).
    type: int
    default: 604800
  connect_timeout:
    description:
      - Seconds to wait for Kueue on the manager to connect to the worker.
    type: int
    default: 120
attributes:
  check_mode:
    support: full
    description: Reads the Secret and the C(MultiKueueCluster), says whether the token would be renewed, and writes nothing.
  diff_mode:
    support: none
    description: The kubeconfig holds a token, so no diff is shown.
seealso:
  - name: MultiKueue
    description: Kueue's dispatch of admitted jobs from a manager cluster to worker clusters.
    link: https://kueue.sigs.k8s.io/docs/concepts/multikueue/
"""

EXAMPLES = r"""
- name: Connect the manager's Kueue to the worker gpu-east
  tfjob.kit.multikueue_cluster:
    kubeconfig: ~/.kube/manager
    name: gpu-east
    worker_kubeconfig: ~/.kube/gpu-east
  register: worker

- name: Say until when its token is good
  ansible.builtin.debug:
    msg: "{{ worker.cluster.name }}: connected, token renewed {{ worker.cluster.renewed }}, expires {{ worker.cluster.expires }}"
"""

RETURN = r"""
cluster:
  description:
    - The worker as the manager sees it. Never the token.
  returned: with O(state=present)
  type: dict
  contains:
    name:
      description: The C(MultiKueueCluster)'s name.
      type: str
      sample: gpu-east
    server:
      description: The worker's API server, as the kubeconfig names it.
      type: str
      sample: https://gpu-east.example.com:6443
    secret:
      description: The Secret holding the kubeconfig, as namespace/name.
      type: str
      sample: kueue-system/tfjob-kit-multikueue-gpu-east
    renewed:
      description: Whether this run wrote a new token (would have, in check mode).
      type: bool
    renewal_reason:
      description: Why the token was renewed; empty when it was not.
      type: str
      sample: its token expires in 190000 s
    expires:
      description: When the token expires (UTC, ISO 8601); null in check mode before the first run.
      type: str
      sample: "2026-12-06T12:00:00Z"
    connected:
      description: Whether Kueue on the manager says it is connected to the worker.
      type: bool
    message:
      description: Kueue's reason and message on the connection.
      type: str
      sample: "Active: Connected"
"""

from typing import Any

from ansible_collections.tfjob.kit.plugins.module_utils.common import (
    KitModule,
    connection,
    connection_spec,
    require_library,
)


def argument_spec() -> dict[str, Any]:
    spec: dict[str, Any] = {
        "name": {"type": "str", "required": True},
        "state": {"type": "str", "choices": ["present", "absent"], "default": "present"},
        "worker_kubeconfig": {"type": "path"},
        "worker_context": {"type": "str"},
        "service_account": {"type": "str", "default": "kueue-multikueue"},
        "service_account_namespace": {"type": "str", "default": "kueue-system"},
        "secret_namespace": {"type": "str", "default": "kueue-system", "no_log": False},
        "token_lifetime": {"type": "int", "default": 604800, "no_log": False},
        "connect_timeout": {"type": "int", "default": 120},
    }
    spec.update(connection_spec())
    return spec


def main() -> None:
    module = KitModule(
        argument_spec=argument_spec(),
        supports_check_mode=True,
        required_if=[("state", "present", ["worker_kubeconfig"])],
    )
    require_library(module)
    from tfjob_kit.kube import multikueue
    from tfjob_kit.kube.api_errors import KubeError
    from tfjob_kit.kube.client import Client
    from tfjob_kit.kube.connection import Connection

    params = module.params
    if params["token_lifetime"] < 600:  # the TokenRequest API's minimum
        module.fail_json(msg="token_lifetime: at least 600 seconds (the TokenRequest minimum)")
    try:
        with Client(connection(module)) as manager:
            if params["state"] == "absent":
                changed = multikueue.remove(
                    manager, params["name"], params["secret_namespace"], module.check_mode
                )
                module.exit_json(changed=changed)
            worker_connection = Connection(
                kubeconfig=params["worker_kubeconfig"], context=params["worker_context"]
            )
            with Client(worker_connection) as worker:
                request = multikueue.Request(
                    name=params["name"],
                    secret_namespace=params["secret_namespace"],
                    service_account=params["service_account"],
                    service_account_namespace=params["service_account_namespace"],
                    lifetime=params["token_lifetime"],
                    connect_timeout=params["connect_timeout"],
                    check_mode=module.check_mode,
                )
                cluster = multikueue.ensure(manager, worker, request)
    except KubeError as exc:
        module.fail_json(msg=str(exc))
    changed = cluster.pop("changed")
    module.exit_json(changed=changed, cluster=cluster)


if __name__ == "__main__":
    main()
