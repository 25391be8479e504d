"""Mutated TFJobs for the differential test of the offline pod validation against the real API
server (tests/integration/test_pod_validation_agrees.py).

A :class:`Mutation` changes a replica's pod TEMPLATE (``{"metadata": ..., "spec": ...}``) in
place; each area module (``meta``, ``pod``, ``scheduling``, ``resources``, ``containers``,
``security``, ``volumes``) exports ``MUTATIONS``, invalid and valid variants of the checks of its
area. A :class:`JobMutation` changes the whole TFJob (its metadata, or several replicas at once).
:func:`generate` makes seeded cases: a random realistic base TFJob (PS/Worker/Chief/Evaluator
mixes, gang or not), one mutation (sometimes two) applied to one replica or to the job.
"""

from __future__ import annotations

import copy
import importlib
import random
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

AREAS = ("meta", "pod", "scheduling", "resources", "containers", "security", "volumes")
IMAGE = "tensorflow/tensorflow:2.15.0"


@dataclass(frozen=True)
class Mutation:
    """A change to a pod template ``{"metadata": {...}, "spec": {...}}``, made in place."""

    name: str
    mutate: Callable[[dict[str, Any]], None]


@dataclass(frozen=True)
class JobMutation:
    """A change to a whole TFJob, made in place."""

    name: str
    mutate: Callable[[dict[str, Any]], None]


def area_mutations() -> dict[str, list[Mutation]]:
    """Each area module's MUTATIONS, for the modules that exist."""
    found: dict[str, list[Mutation]] = {}
    for area in AREAS:
        try:
            module = importlib.import_module(f"{__name__}.{area}")
        except ModuleNotFoundError as exc:
            if exc.name != f"{__name__}.{area}":
                raise
            continue
        found[area] = list(module.MUTATIONS)
    return found
