"""Tasks whose results hold secrets are `no_log`: a Helm release read with `helm_info` returns
its manifest, which holds Secrets (Volcano's webhook private key), and `-v`, registered
results, AWX and ARA record what a task returns (issue 24, finding 8)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
# Modules whose results hold secrets whatever they are asked for.
SECRET_RESULTS = ("kubernetes.core.helm_info",)

pytestmark = pytest.mark.pure


def tasks(items: Any) -> Iterator[dict[str, Any]]:
    for item in items if isinstance(items, list) else []:
        if not isinstance(item, dict):
            continue
        yield item
        for key in ("block", "rescue", "always", "tasks", "pre_tasks", "post_tasks", "handlers"):
            yield from tasks(item.get(key))


def task_files() -> list[Path]:
    return sorted([*ROOT.glob("roles/*/tasks/*.yml"), *ROOT.glob("playbooks/*.yml")])


def test_every_task_whose_result_holds_secrets_is_no_log() -> None:
    found = []
    for path in task_files():
        for task in tasks(yaml.safe_load(path.read_text(encoding="utf-8"))):
            module = next((m for m in SECRET_RESULTS if m in task), None)
            if module is not None:
                found.append((path.relative_to(ROOT).as_posix(), task.get("name"), task))
    # teardown.yml proves the releases are gone with helm_info; the roles judge a release from
    # its Secrets' chart metadata (tfjob.kit.objects_info), which holds no secret.
    assert len(found) >= 1
    loud = [(path, name) for path, name, task in found if task.get("no_log") is not True]
    assert not loud, f"tasks that show a release's manifest (Secrets): {loud}"
