"""Rules on the job's metadata: its API version, its name, and the pod and Service names made
from it.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from tfjob_kit import model
from tfjob_kit.findings import Severity
from tfjob_kit.model import Replica, as_dict
from tfjob_kit.rules.registry import rule

_DNS1035 = re.compile(r"^[a-z]([-a-z0-9]*[a-z0-9])?$")


@rule(
    "deprecated-api-version",
    Severity.ERROR,
    "TFJob API versions other than kubeflow.org/v1 are not served by training-operator v1.9.",
)
def _deprecated_api_version(job: dict[str, Any], reps: list[Replica]) -> Iterator[tuple[str, str]]:
    version = job.get("apiVersion")
    if version in model.LEGACY_API_VERSIONS:
        yield (
            "$.apiVersion",
            (
                f"{version} is not served by training-operator v1.9: run `tfjob-kit convert` to "
                "get "
                "a kubeflow.org/v1 TFJob"
            ),
        )


@rule(
    "name-invalid",
    Severity.ERROR,
    "metadata.name must be a DNS-1035 label (the operator's webhook rejects anything else).",
)
def _name_invalid(job: dict[str, Any], reps: list[Replica]) -> Iterator[tuple[str, str]]:
    meta = as_dict(job.get("metadata"))
    name = meta.get("name")
    if isinstance(name, str):
        if len(name) > 63:
            yield "$.metadata.name", f"name is {len(name)} characters; at most 63 are allowed"
        elif not _DNS1035.match(name):
            yield (
                "$.metadata.name",
                (
                    f"{name!r} is not a DNS-1035 label: use lower-case letters, digits and '-', "
                    "start with a letter and end with a letter or digit"
                ),
            )
    generate = meta.get("generateName")
    if (
        name is None
        and isinstance(generate, str)
        and generate
        and not _DNS1035.match(generate + "x")
    ):
        yield (
            "$.metadata.generateName",
            (
                f"{generate!r} does not make DNS-1035 names: use lower-case letters, digits "
                "and '-', starting with a letter"
            ),
        )


@rule(
    "generate-name-only",
    Severity.WARNING,
    "generateName without name works with `kubectl create` only.",
)
def _generate_name_only(job: dict[str, Any], reps: list[Replica]) -> Iterator[tuple[str, str]]:
    meta = as_dict(job.get("metadata"))
    if not meta.get("name") and meta.get("generateName"):
        yield (
            "$.metadata",
            (
                "only generateName is set: `kubectl apply`, server-side apply and Ansible need "
                "metadata.name, and every `kubectl create` makes another job; set metadata.name"
            ),
        )


@rule(
    "pod-name-too-long",
    Severity.ERROR,
    "Pod and Service names <job>-<type>-<index> must fit in 63 characters.",
)
def _pod_name_too_long(job: dict[str, Any], reps: list[Replica]) -> Iterator[tuple[str, str]]:
    name = model.job_name(job)
    if not name or len(name) > 63:
        return
    for replica in reps:
        if replica.count < 1:
            continue
        # The length of model.pod_name(name, replica.type, replica.count - 1), without making
        # it: most names fit.
        if len(name) + len(replica.lower) + len(str(replica.count - 1)) + 2 <= 63:
            continue
        longest = model.pod_name(name, replica.type, replica.count - 1)
        if len(longest) > 63:
            spare = 63 - (len(longest) - len(name))
            yield (
                replica.path,
                (
                    f"pod/service name {longest!r} is {len(longest)} characters (max 63): the "
                    f"operator cannot create its Service and the job hangs; shorten the job name "
                    f"to at most {max(spare, 0)} characters"
                ),
            )
