"""A rule on what the API server silently drops: template fields of a feature whose gate is off
at the Kubernetes minor the checks follow (``podcheck.release``). The pod is created without
them, so the setting does nothing there, and nothing says so.

The dropped fields are those the server's steps before validation (``podcheck.pod.prepare_pod``:
decoding, defaults and ``dropDisabledFields``) remove from the template's spec; each finding says
from which minor of the window the field is kept, when one keeps it.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator
from typing import Any

from tfjob_kit.findings import Severity
from tfjob_kit.model import Replica, as_dict
from tfjob_kit.podcheck import release
from tfjob_kit.podcheck.field import Path
from tfjob_kit.podcheck.pod import prepare_pod
from tfjob_kit.rules.registry import rule
from tfjob_kit.rules.server import pod_json_path
from tfjob_kit.versions import minor_order

DROPPED_RULE = "field-dropped"


def _empty(value: Any) -> bool:
    """A Go zero value: absent or present, the pod is the same (the server omits it)."""
    return value is None or value is False or value in ({}, [], "", 0)


def removed(before: Any, after: Any, path: Path = ()) -> Iterator[Path]:
    """The paths of ``before`` that ``after`` no longer has (empty values aside): dict keys (the
    one key of an object removed with it: ``lifecycle.stopSignal``), and list elements matched
    by position (by ``name``, where elements have one and the list changed length)."""
    if isinstance(before, dict) and isinstance(after, dict):
        for key, value in before.items():
            if key not in after:
                if isinstance(value, dict) and len(value) == 1:
                    yield from removed(value, {}, (*path, key))
                elif not _empty(value):
                    yield (*path, key)
            else:
                yield from removed(value, after[key], (*path, key))
    elif isinstance(before, list) and isinstance(after, list):
        named = {n: a for a in after if isinstance(n := as_dict(a).get("name"), str) and n}
        if len(before) == len(after) or not named:  # by position (the server may append)
            for i, b in enumerate(before):
                if i < len(after):
                    yield from removed(b, after[i], (*path, i))
                elif not _empty(b):
                    yield (*path, i)
            return
        for i, b in enumerate(before):  # by name: an element was dropped
            name = as_dict(b).get("name")
            if isinstance(name, str) and name in named:
                yield from removed(b, named[name], (*path, i))
            elif not _empty(b):
                yield (*path, i)


def _prepared_spec(template: dict[str, Any]) -> dict[str, Any]:
    pod = {"metadata": copy.deepcopy(as_dict(template.get("metadata"))), "spec": template["spec"]}
    return as_dict(prepare_pod(pod).get("spec"))


def dropped_paths(template: dict[str, Any]) -> list[Path]:
    """The template spec's fields the followed minor's server drops (pod paths, "spec", ...)."""
    if not isinstance(template.get("spec"), dict):
        return []
    spec = template["spec"]
    return [("spec", *p) for p in removed(spec, _prepared_spec(template))]


def _kept_from(template: dict[str, Any], path: Path) -> str | None:
    """The first newer minor of the window that keeps the field at ``path``."""
    followed = release.minor()
    for minor in release.window():
        if minor_order(minor) <= minor_order(followed):
            continue
        with release.following(minor):
            if path not in dropped_paths(template):
                return minor
    return None


@rule(
    DROPPED_RULE,
    Severity.WARNING,
    "The API server of the Kubernetes minor validated for drops a template field (its feature "
    "is off there): the pods are created without it.",
)
def _fields_dropped(job: dict[str, Any], reps: list[Replica]) -> Iterator[tuple[str, str]]:
    minor = release.minor()
    for replica in reps:
        for path in dropped_paths(replica.template):
            newer = _kept_from(replica.template, path)
            kept = f"; Kubernetes {newer} keeps it" if newer else ""
            yield (
                pod_json_path(replica, path),
                f"Kubernetes {minor}'s API server drops this field before it creates the pod "
                f"(the feature is off by default in {minor}), so it does nothing there{kept}; "
                "validate for the cluster's minor (--kubernetes-version, or --server), or remove "
                "it",
            )
