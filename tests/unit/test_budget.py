"""The suite's start order (tests/_budget.py): what it names exists, and `make test` runs the
files the way the order assumes (a file on one worker, in collection order)."""

from __future__ import annotations

import re
from pathlib import Path

from _budget import LONGEST_FIRST, _machine_line

ROOT = Path(__file__).resolve().parents[2]


def test_longest_first_names_existing_test_files_once() -> None:
    assert len(set(LONGEST_FIRST)) == len(LONGEST_FIRST)
    missing = [path for path in LONGEST_FIRST if not (ROOT / path).is_file()]
    assert not missing


def test_make_test_runs_files_whole_in_the_order_given() -> None:
    makefile = (ROOT / "Makefile").read_text()
    (recipe,) = re.findall(r"^test: .*\n(?:\t.*\n)*?\t(.*pytest.*)$", makefile, re.M)
    (workers,) = re.findall(r"^PYTEST_WORKERS := (.*)$", makefile, re.M)
    assert "$(PYTEST_WORKERS)" in recipe, recipe
    assert "--dist loadfile" in workers and "--no-loadscope-reorder" in workers, workers


def test_the_machine_line_says_how_busy_idle_and_stolen_its_cpus_were() -> None:
    before = {"busy": 1000, "idle": 500, "steal": 0}
    after = {"busy": 1600, "idle": 800, "steal": 100}
    line = _machine_line(before, after)
    assert "busy 60%" in line and "idle 30%" in line and "stolen by its host 10%" in line
    assert _machine_line({}, after) == "" and _machine_line(after, after) == ""
