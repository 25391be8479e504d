#!/usr/bin/python
# Copyright: tfjob-kit developers
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""tfjob.kit.objects_info: several sets of Kubernetes objects read in one module run."""

from __future__ import annotations

DOCUMENTATION = r"""
---
module: objects_info
short_description: Read several sets of Kubernetes objects in one module run
version_added: 0.1.0
description:
  - Reads each entry of O(queries) as M(kubernetes.core.k8s_info) reads one set of objects (by
    apiVersion and kind, found through the API server's discovery; one object by name, or all
    of a namespace or of the cluster that match the selectors), over one connection.
  - A role that reads several things before it decides makes one module run instead of one
    each. Each module run starts Python and imports the Kubernetes client, about a second of
    CPU, which is most of what a read costs.
  - An object that is not there reads as no objects. A kind the server does not serve (a CRD
    that is not installed) reads as no objects, with RV(api_found) false for that entry. Any
    other refusal (forbidden, a bad selector) fails the task and names the entry.
  - Secrets are returned without C(data) and C(stringData), so the result needs no C(no_log).
  - A Helm release's Secret (type C(helm.sh/release.v1)) carries C(helmChart) instead, the
    metadata of the chart the release was made from (C(name), C(version), C(appVersion),
    C(annotations)); never the release's manifest or values.
  - Every run also reads the API server's version (RV(server_version)), so a role that checks
    it needs no M(kubernetes.core.k8s_cluster_info) run (which discovers every API group);
    O(queries={}) reads the version alone.
author:
  - tfjob-kit developers (@tfjob-kit)
extends_documentation_fragment:
  - tfjob.kit.connection
options:
  queries:
    description:
      - What to read, each under a key of your choice; the results come back under the same
        keys. Empty, the run reads only RV(server_version).
    type: dict
    required: true
    suboptions:
      kind:
        description:
          - The kind, such as V(ConfigMap) or V(CustomResourceDefinition).
        type: str
        required: true
      api_version:
        description:
          - The kind's group and version, such as V(apps/v1); V(v1) is the core group.
        type: str
        default: v1
      name:
        description:
          - One object's name. Without it or O(queries.names), every object that matches.
        type: str
        default: ""
      names:
        description:
          - Several objects' names, read one by one; those that are not there are left out.
            An empty list reads nothing.
          - Mutually exclusive with O(queries.name).
        type: list
        elements: str
      namespace:
        description:
          - The namespace of a namespaced kind. Without it, every namespace. Ignored for a
            cluster-scoped kind.
        type: str
        default: ""
      label_selectors:
        description:
          - Label selectors, all of which must match (as in M(kubernetes.core.k8s_info)).
        type: list
        elements: str
        default: []
      field_selectors:
        description:
          - Field selectors, all of which must match.
        type: list
        elements: str
        default: []
attributes:
  check_mode:
    support: full
    description: It only reads, in check mode too.
  diff_mode:
    support: none
    description: Nothing changes, so there is nothing to show.
seealso:
  - module: kubernetes.core.k8s_info
    description: One set of objects per module run, with waits.
"""

EXAMPLES = r"""
- name: Read what the preflight decides from
  tfjob.kit.objects_info:
    queries:
      record:
        kind: ConfigMap
        namespace: kube-system
        name: tfjob-kit-adopted-volcano
      schedulers:
        api_version: apps/v1
        kind: Deployment
      crds:
        api_version: apiextensions.k8s.io/v1
        kind: CustomResourceDefinition
        names: [queues.scheduling.volcano.sh, podgroups.scheduling.volcano.sh]
      revisions:
        kind: Secret
        namespace: volcano-system
        label_selectors: [owner=helm, name=volcano]
  register: found

- name: Say whether Volcano's CRDs are installed
  ansible.builtin.debug:
    msg: "{{ found.objects.crds | length }} of Volcano's 2 CRDs are installed"
"""

RETURN = r"""
objects:
  description:
    - Each entry of O(queries) by its key, the objects it found (a list, empty when none).
    - Items of a list carry their C(apiVersion) and C(kind). Secrets carry no C(data) or
      C(stringData); a Helm release's Secret carries C(helmChart), its chart's metadata.
  returned: always
  type: dict
  sample: {"record": [], "schedulers": [{"apiVersion": "apps/v1", "kind": "Deployment"}]}
api_found:
  description: Each entry by its key, whether the server serves its kind.
  returned: always
  type: dict
  sample: {"record": true, "crds": true}
server_version:
  description:
    - The API server's C(gitVersion) (its C(/version)), as
      M(kubernetes.core.k8s_cluster_info) returns it in C(version.server.kubernetes.gitVersion).
  returned: always
  type: str
  sample: v1.37.2
"""

from typing import Any

from ansible_collections.tfjob.kit.plugins.module_utils.common import (
    KitModule,
    connection,
    connection_spec,
    require_library,
)

QUERY_OPTIONS: dict[str, dict[str, Any]] = {
    "kind": {"type": "str", "required": True},
    "api_version": {"type": "str", "default": "v1"},
    "name": {"type": "str", "default": ""},
    "names": {"type": "list", "elements": "str"},
    "namespace": {"type": "str", "default": ""},
    "label_selectors": {"type": "list", "elements": "str", "default": []},
    "field_selectors": {"type": "list", "elements": "str", "default": []},
}


def argument_spec() -> dict[str, Any]:
    spec: dict[str, Any] = {"queries": {"type": "dict", "required": True}}
    spec.update(connection_spec())
    return spec


def main() -> None:
    module = KitModule(argument_spec=argument_spec(), supports_check_mode=True)
    require_library(module)
    from ansible.module_utils.common.arg_spec import ArgumentSpecValidator

    from tfjob_kit.kube import objects
    from tfjob_kit.kube.api_errors import KubeError
    from tfjob_kit.kube.client import Client

    # Each entry against its own spec: the keys are the user's, so the dict has no fixed
    # suboptions.
    validator = ArgumentSpecValidator(QUERY_OPTIONS, mutually_exclusive=[["name", "names"]])
    queries: dict[str, objects.Query] = {}
    for key, entry in module.params["queries"].items():
        checked = validator.validate(entry if isinstance(entry, dict) else {})
        if not isinstance(entry, dict) or checked.error_messages:
            why = "; ".join(checked.error_messages) if isinstance(entry, dict) else "not a dict"
            module.fail_json(msg=f"queries.{key}: {why}")
        queries[key] = objects.Query(**checked.validated_parameters)
    try:
        with Client(connection(module)) as client:
            found = objects.read(client, queries)
            server_version = client.server_version()
    except KubeError as exc:
        module.fail_json(msg=str(exc))
    module.exit_json(
        changed=False,
        objects={key: f.objects for key, f in found.items()},
        api_found={key: f.api_found for key, f in found.items()},
        server_version=server_version,
    )


if __name__ == "__main__":
    main()
