# Copyright: tfjob-kit developers
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""The training_operator role's decisions, as filters: the logic lives, unit-tested, in
tfjob_kit.installs (training_operator, operator_upgrade); each filter's documentation is the
YAML file of its name beside this one."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ansible.errors import AnsibleFilterError

try:
    from tfjob_kit.installs import operator_upgrade, training_operator
except ImportError as exc:  # the collection without its library
    IMPORT_ERROR: ImportError | None = exc
else:
    IMPORT_ERROR = None


def _library() -> None:
    if IMPORT_ERROR is not None:
        raise AnsibleFilterError(
            f"the tfjob.kit filters need the tfjob-kit Python package: pip install tfjob-kit "
            f"({IMPORT_ERROR})"
        )


def survey(objects: dict[str, Any], namespace: str, release: str) -> dict[str, Any]:
    _library()
    return training_operator.survey(objects, namespace, release)


def jobs_summary(results: list[dict[str, Any]]) -> list[str]:
    _library()
    return training_operator.jobs_summary(results)


def ownership(objects: dict[str, Any], record: str) -> dict[str, Any]:
    _library()
    return training_operator.ownership(objects, record)


def upgrade_plan(
    old: dict[str, Any],
    namespace: str,
    deployment: dict[str, Any],
    cluster_role_bindings: list[dict[str, Any]],
    role_bindings: list[dict[str, Any]],
    workloads: dict[str, list[dict[str, Any]]],
    webhooks: list[dict[str, Any]],
    rendered: list[Any],
) -> dict[str, Any]:
    _library()
    return operator_upgrade.upgrade(
        old,
        namespace,
        deployment,
        cluster_role_bindings,
        role_bindings,
        workloads,
        webhooks,
        rendered,
    )


class FilterModule:
    """tfjob.kit.training_operator_* filters."""

    def filters(self) -> dict[str, Callable[..., Any]]:
        return {
            "training_operator_survey": survey,
            "training_operator_jobs_summary": jobs_summary,
            "training_operator_ownership": ownership,
            "training_operator_upgrade_plan": upgrade_plan,
        }
