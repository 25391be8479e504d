#!/usr/bin/python
# Copyright: tfjob-kit developers
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""tfjob.kit.access_info: what the credentials may do (SelfSubjectAccessReviews)."""

from __future__ import annotations

DOCUMENTATION = r"""
---
module: access_info
short_description: Ask the API server what the credentials may do
version_added: 0.1.0
description:
  - Asks the API server's authorizer, with one SelfSubjectAccessReview per entry of
    O(reviews), whether the credentials may do each thing, and returns every answer and those
    that are not allowed (RV(denied)).
  - All reviews are made in one module run, in parallel. The server answers them and stores
    nothing, so the module makes them in check mode too.
  - It does not fail when something is not allowed; test RV(denied) (as C(playbooks/site.yml)'s
    preflight does).
  - Needs nothing beyond what every authenticated user has (C(create)
    C(selfsubjectaccessreviews.authorization.k8s.io), granted by the C(system:basic-user) role).
author:
  - tfjob-kit developers (@tfjob-kit)
extends_documentation_fragment:
  - tfjob.kit.connection
options:
  reviews:
    description:
      - What to ask about, each as the C(resourceAttributes) of a SelfSubjectAccessReview.
      - An entry without O(reviews[].namespace) asks about the whole cluster (every namespace,
        for a namespaced resource).
    type: list
    elements: dict
    required: true
    suboptions:
      verb:
        description:
          - The verb, such as V(create), V(list) or V(delete); V(*) asks for all.
        type: str
        required: true
      group:
        description:
          - The resource's API group; V("") (the default) is the core group.
        type: str
        default: ""
      version:
        description:
          - The API version; empty means any.
        type: str
        default: ""
      resource:
        description:
          - The resource, plural and lower case, such as V(deployments).
        type: str
        default: ""
      subresource:
        description:
          - A subresource, such as V(log) or V(status).
        type: str
        default: ""
      name:
        description:
          - One object's name; empty means any.
        type: str
        default: ""
      namespace:
        description:
          - The namespace; empty asks cluster-wide.
        type: str
        default: ""
attributes:
  check_mode:
    support: full
    description: The reviews change nothing and are made in check mode too.
  diff_mode:
    support: none
    description: Nothing changes, so there is nothing to show.
seealso:
  - module: tfjob.kit.admission_info
  - name: SelfSubjectAccessReview
    description: The Kubernetes API the module calls.
    link: https://kubernetes.io/docs/reference/access-authn-authz/authorization/#checking-api-access
"""

EXAMPLES = r"""
- name: Ask whether these credentials may install the operator
  tfjob.kit.access_info:
    reviews:
      - {verb: create, group: apiextensions.k8s.io, resource: customresourcedefinitions}
      - {verb: create, group: apps, resource: deployments, namespace: kubeflow}
      - {verb: list, resource: nodes}
  register: access

- name: Say what is missing
  ansible.builtin.assert:
    that: access.denied | length == 0
    fail_msg: "these credentials may not {{ access.denied | map(attribute='description') | join(', ') }}"
"""

RETURN = r"""
reviews:
  description: Every review, in the order of O(reviews), with its answer.
  returned: always
  type: list
  elements: dict
  contains:
    verb:
      description: As asked.
      type: str
    group:
      description: As asked (V("") for the core group).
      type: str
    version:
      description: As asked.
      type: str
    resource:
      description: As asked.
      type: str
    subresource:
      description: As asked.
      type: str
    name:
      description: As asked.
      type: str
    namespace:
      description: As asked (V("") for cluster-wide).
      type: str
    description:
      description: The permission in words.
      type: str
      sample: create deployments.apps in namespace 'kubeflow'
    allowed:
      description: Whether the credentials may do it.
      type: bool
    reason:
      description: Why, where the authorizer says (RBAC names the binding that allows it).
      type: str
    evaluation_error:
      description: What the authorizer could not evaluate, if anything (the answer may then be
        incomplete).
      type: str
denied:
  description:
    - The entries of RV(reviews) that are not allowed, in the same order. RBAC never denies
      outright; what no role allows is not allowed.
  returned: always
  type: list
  elements: dict
"""

from typing import Any

from ansible_collections.tfjob.kit.plugins.module_utils.common import (
    KitModule,
    connection,
    connection_spec,
    require_library,
)

REVIEW_OPTIONS: dict[str, dict[str, Any]] = {
    "verb": {"type": "str", "required": True},
    **{
        field: {"type": "str", "default": ""}
        for field in ("group", "version", "resource", "subresource", "name", "namespace")
    },
}


def argument_spec() -> dict[str, Any]:
    spec: dict[str, Any] = {
        "reviews": {
            "type": "list",
            "elements": "dict",
            "required": True,
            "options": REVIEW_OPTIONS,
        },
    }
    spec.update(connection_spec())
    return spec


def main() -> None:
    module = KitModule(argument_spec=argument_spec(), supports_check_mode=True)
    require_library(module)
    from tfjob_kit.kube import access
    from tfjob_kit.kube.api_errors import KubeError
    from tfjob_kit.kube.client import Client

    try:
        with Client(connection(module)) as client:
            reviews = access.review(client, module.params["reviews"])
    except (KubeError, ValueError) as exc:
        module.fail_json(msg=str(exc))
    module.exit_json(
        changed=False,
        reviews=[r.as_dict() for r in reviews],
        denied=[r.as_dict() for r in access.not_allowed(reviews)],
    )


if __name__ == "__main__":
    main()
