"""The Kubeflow Trainer v2 runtimes tfjob-kit ships (``*.yaml`` here, one ClusterTrainingRuntime
each): applied by ``tfjob-kit cluster up --trainer``, referenced by the TrainJobs
``tfjob-kit convert --to trainjob`` writes, and found by ``explain`` when a TrainJob's input does
not hold its runtime."""

from __future__ import annotations

import copy
from functools import cache
from importlib import resources
from typing import Any

import yaml

MULTIWORKER = "tensorflow-multiworker"


@cache
def _load() -> tuple[dict[str, Any], ...]:
    folder = resources.files(__name__)
    found = []
    for entry in sorted(folder.iterdir(), key=lambda e: e.name):
        if entry.name.endswith(".yaml"):
            found.append(yaml.safe_load(entry.read_text(encoding="utf-8")))
    return tuple(found)


def shipped() -> list[dict[str, Any]]:
    """Every runtime the toolkit ships (copies)."""
    return [copy.deepcopy(r) for r in _load()]


def shipped_runtime(name: str) -> dict[str, Any]:
    """The shipped ClusterTrainingRuntime ``name`` (a copy)."""
    for runtime in shipped():
        if runtime["metadata"]["name"] == name:
            return runtime
    raise KeyError(name)
