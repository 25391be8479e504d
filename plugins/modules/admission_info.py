#!/usr/bin/python
# Copyright: tfjob-kit developers
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""tfjob.kit.admission_info: admission webhooks that cannot be called (leftovers)."""

from __future__ import annotations

DOCUMENTATION = r"""
---
module: admission_info
short_description: Find admission webhooks that cannot be called and so block pod creation
version_added: 0.1.0
description:
  - Finds the webhooks of Validating and Mutating webhook configurations that the API server
    cannot call, typically left behind when an operator (Volcano, say) was uninstalled by hand;
    with C(failurePolicy) C(Fail) each makes every request it matches fail, pod creation
    included.
  - The API server is the judge. In each of O(namespaces) the module dry-runs (C(dryRun=All),
    nothing is stored) the creation of a minimal Pod, of a pod labelled as the training-operator
    labels a TFJob's pods, and of a Volcano PodGroup when the cluster serves them, and maps
    each C(failed calling webhook) answer to its configuration. It also reads every
    configuration's Service, and reports a webhook whose Service does not exist or has no
    ready endpoint whatever it matches.
  - A webhook that answers (allows or denies) is working and is not reported. The module never
    deletes anything; RV(message) names each configuration and the C(kubectl delete) command
    for those that are not the toolkit's. When it does not fail, it warns with RV(message)
    whenever it found a webhook that cannot be called.
  - Needs cluster-wide C(list) on C(validatingwebhookconfigurations) and
    C(mutatingwebhookconfigurations), C(get) on namespaces, services and endpointslices, and
    C(create) on pods (and podgroups) in O(namespaces) (dry runs are authorized as creations).
author:
  - tfjob-kit developers (@tfjob-kit)
extends_documentation_fragment:
  - tfjob.kit.connection
options:
  namespaces:
    description:
      - The namespaces the dry runs create in. One that does not exist is skipped and listed
        in RV(missing_namespaces).
    type: list
    elements: str
    default: [default]
  toolkit_releases:
    description:
      - The Helm releases of this install, as C(name) and C(namespace). A configuration that
        one of them installed is marked RV(webhooks[].toolkit); installing the release again
        replaces it.
    type: list
    elements: dict
    default: []
  fail_on_blocking:
    description:
      - Fail, with RV(message), when a webhook with C(failurePolicy) C(Fail) cannot be called
        (the toolkit's own ones only when O(fail_on_toolkit) is set).
    type: bool
    default: false
  fail_on_toolkit:
    description:
      - With O(fail_on_blocking), fail for the toolkit's own configurations too.
    type: bool
    default: false
attributes:
  check_mode:
    support: full
    description: The module only reads; its creations are dry runs.
  diff_mode:
    support: none
    description: Nothing changes, so there is nothing to show.
seealso:
  - module: tfjob.kit.tfjob_info
"""

EXAMPLES = r"""
- name: Look for leftover webhooks before submitting jobs to a namespace
  tfjob.kit.admission_info:
    namespaces: [default, training]
  register: admission

- name: Say what blocks pod creation
  ansible.builtin.assert:
    that: admission.blocking | length == 0
    fail_msg: "{{ admission.message }}"

- name: Or let the module fail
  tfjob.kit.admission_info:
    namespaces: [training]
    fail_on_blocking: true
"""

RETURN = r"""
webhooks:
  description: Every webhook that cannot be called, those with C(failurePolicy) C(Fail) first.
  returned: always
  type: list
  elements: dict
  contains:
    kind:
      description: C(ValidatingWebhookConfiguration) or C(MutatingWebhookConfiguration).
      type: str
    configuration:
      description: The configuration's name.
      type: str
    webhook:
      description: The webhook's name, as the API server's error names it.
      type: str
    target:
      description: Where it points, C(Service NAMESPACE/NAME port PORT path PATH) or its URL.
      type: str
    service:
      description: The Service it calls (C(namespace), C(name), C(port), C(path)), or null.
      type: dict
    url:
      description: The URL it calls, or null.
      type: str
    failure_policy:
      description: C(Fail) or C(Ignore).
      type: str
    side_effects:
      description: Its C(sideEffects).
      type: str
    resources:
      description: What its rules match, C(OPERATIONS resource.group).
      type: list
      elements: str
    reason:
      description:
        - Why it cannot be called, C(service-missing), C(no-endpoints), C(connection-refused),
          C(timeout), C(certificate), C(dns), C(dry-run-unsupported) or C(call-failed).
      type: str
    detail:
      description: The API server's words (or what the Service lookup found).
      type: str
    blocks:
      description: The dry-run creations it failed, such as C(Pod in namespace default).
      type: list
      elements: str
    blocking:
      description: Whether its C(failurePolicy) is C(Fail).
      type: bool
    toolkit:
      description: Whether a release of O(toolkit_releases) installed its configuration.
      type: bool
    delete_command:
      description: The command that deletes its configuration.
      type: str
      sample: kubectl delete validatingwebhookconfiguration volcano-admission-service-pods-validate
blocking:
  description: The entries of RV(webhooks) with C(failurePolicy) C(Fail).
  returned: always
  type: list
  elements: dict
checked_namespaces:
  description: The namespaces the dry runs ran in.
  returned: always
  type: list
  elements: str
missing_namespaces:
  description: The namespaces of O(namespaces) that do not exist (no dry run there).
  returned: always
  type: list
  elements: str
configurations:
  description: How many webhook configurations the cluster has.
  returned: always
  type: int
unexplained:
  description: Dry-run failures of a webhook that no configuration names (it was just removed).
  returned: always
  type: list
  elements: str
message:
  description: The findings in words, with the C(kubectl delete) commands.
  returned: always
  type: str
"""

from typing import Any

from ansible_collections.tfjob.kit.plugins.module_utils.common import (
    KitModule,
    connection,
    connection_spec,
    require_library,
)


def argument_spec() -> dict[str, Any]:
    spec = {
        "namespaces": {"type": "list", "elements": "str", "default": ["default"]},
        "toolkit_releases": {"type": "list", "elements": "dict", "default": []},
        "fail_on_blocking": {"type": "bool", "default": False},
        "fail_on_toolkit": {"type": "bool", "default": False},
    }
    spec.update(connection_spec())
    return spec


def main() -> None:
    module = KitModule(argument_spec=argument_spec(), supports_check_mode=True)
    require_library(module)
    from tfjob_kit.kube.api_errors import KubeError
    from tfjob_kit.kube.client import Client
    from tfjob_kit.kube.webhooks import check

    params = module.params
    releases = [
        {"name": str(r.get("name", "")), "namespace": str(r.get("namespace", ""))}
        for r in params["toolkit_releases"]
    ]
    try:
        with Client(connection(module)) as client:
            report = check(client, params["namespaces"], releases)
    except KubeError as exc:
        module.fail_json(msg=str(exc))
    result = report.as_dict()
    failing = [b for b in report.blocking if params["fail_on_toolkit"] or not b.webhook.toolkit]
    if params["fail_on_blocking"] and failing:
        module.fail_json(msg=result["message"], changed=False, **result)
    if report.found:
        module.warn(result["message"])
    module.exit_json(changed=False, **result)


if __name__ == "__main__":
    main()
