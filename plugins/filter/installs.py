# Copyright: tfjob-kit developers
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""The roles' decisions about installs already on a cluster, as filters: the logic lives,
unit-tested, in tfjob_kit.installs (training_operator, operator_upgrade, volcano,
device_plugin, kueue); each filter's
documentation is the YAML file of its name beside this one."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ansible.errors import AnsibleFilterError

try:
    from tfjob_kit.installs import (
        device_plugin,
        kueue,
        operator_upgrade,
        training_operator,
        volcano,
    )
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


def training_operator_survey(
    objects: dict[str, Any], namespace: str, release: str
) -> dict[str, Any]:
    _library()
    return training_operator.survey(objects, namespace, release)


def training_operator_jobs_summary(results: list[dict[str, Any]]) -> list[str]:
    _library()
    return training_operator.jobs_summary(results)


def training_operator_ownership(objects: dict[str, Any], record: str) -> dict[str, Any]:
    _library()
    return training_operator.ownership(objects, record)


def training_operator_upgrade_plan(
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


def volcano_survey(objects: dict[str, Any], namespace: str, release: str) -> list[str]:
    _library()
    return volcano.survey(objects, namespace, release)


def volcano_ownership(objects: dict[str, Any], record: str) -> dict[str, Any]:
    _library()
    return volcano.ownership(objects, record)


def nvidia_device_plugin_node_queries(labels: list[str]) -> dict[str, Any]:
    _library()
    return device_plugin.node_queries(labels)


def nvidia_device_plugin_gpu_nodes(objects: dict[str, Any]) -> list[str]:
    _library()
    return device_plugin.gpu_nodes(objects)


def nvidia_device_plugin_without_gpus(nodes: list[dict[str, Any]]) -> list[str]:
    _library()
    return device_plugin.without_gpus(nodes)


def kueue_crds(chart: str, service: str, namespace: str, conversion: bool) -> list[Any]:
    _library()
    return kueue.crds(chart, service, namespace, conversion)


def kueue_survey(objects: dict[str, Any], needed: list[str]) -> dict[str, Any]:
    _library()
    return kueue.survey(objects, needed)


def kueue_queue_objects(
    flavors: list[dict[str, Any]],
    cluster_queues: list[dict[str, Any]],
    local_queues: list[dict[str, Any]],
    priority_classes: list[dict[str, Any]],
    existing_cluster_queues: list[str],
    multikueue_clusters: list[str] | None = None,
) -> dict[str, Any]:
    _library()
    return kueue.queue_objects(
        flavors,
        cluster_queues,
        local_queues,
        priority_classes,
        existing_cluster_queues,
        multikueue_clusters,
    )


class FilterModule:
    """tfjob.kit.training_operator_*, volcano_*, nvidia_device_plugin_* and kueue_* filters."""

    def filters(self) -> dict[str, Callable[..., Any]]:
        return {
            f.__name__: f
            for f in (
                training_operator_survey,
                training_operator_jobs_summary,
                training_operator_ownership,
                training_operator_upgrade_plan,
                volcano_survey,
                volcano_ownership,
                nvidia_device_plugin_node_queries,
                nvidia_device_plugin_gpu_nodes,
                nvidia_device_plugin_without_gpus,
                kueue_crds,
                kueue_queue_objects,
                kueue_survey,
            )
        }
