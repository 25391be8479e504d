"""Two builds into one cache take turns: the second waits for the first, and says so."""

from __future__ import annotations

import io
import threading
from pathlib import Path

import pytest

from tfjob_kit.cluster import build
from tfjob_kit.versions import load_versions, repo_root


def test_a_second_build_waits_for_the_first(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TFJOB_KIT_CACHE", str(tmp_path / "cache"))
    said = {"first": io.StringIO(), "second": io.StringIO()}
    first = build.Builder(load_versions(), repo_root(), out=said["first"])
    second = build.Builder(load_versions(), repo_root(), out=said["second"])
    order: list[str] = []
    entered = threading.Event()

    def later() -> None:
        with build._one_build_at_a_time(second):
            entered.set()
            order.append("second")

    with build._one_build_at_a_time(first):
        thread = threading.Thread(target=later)
        thread.start()
        assert not entered.wait(0.5), "the second build did not wait for the first"
        order.append("first")
    thread.join(5)
    assert order == ["first", "second"]
    assert "waiting for another process's build" in said["second"].getvalue()
    assert said["first"].getvalue() == ""
