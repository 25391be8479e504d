"""report/timeline.py: the picture shows GPUs held idle where a job sat placed in part, and only
there."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from matplotlib import image

from tfjob_kit.report import timeline


def _held_rows(png: Path) -> np.ndarray:
    """The picture's rows with a band of the held-idle colour (wider than the legend's swatch)."""
    pixels = image.imread(png)[:, :, :3]
    red = np.array([0xC6, 0x28, 0x28]) / 255
    return np.where((np.abs(pixels - red).sum(axis=2) < 0.05).sum(axis=1) > 60)[0]


def test_held_gpus_are_drawn_in_their_panel(tmp_path: Path) -> None:
    stalled = timeline.Lane("gang-b", [(0.0, 0, 0), (2.0, 0, 4), (12.0, 0, 4), (14.0, 0, 0)])
    running = timeline.Lane("gang-a", [(0.0, 0, 0), (1.0, 6, 0), (11.0, 6, 0), (12.0, 0, 0)])
    gang = timeline.Lane("gang-b", [(0.0, 0, 0), (12.0, 6, 0), (22.0, 0, 0)])
    path = timeline.draw(
        [
            timeline.Panel("no gang", [running, stalled]),
            timeline.Panel("gangs", [running, gang]),
        ],
        tmp_path / "out" / "story.png",
        "test",
    )
    assert path.read_bytes().startswith(b"\x89PNG")
    height = image.imread(path).shape[0]
    rows = _held_rows(path)
    # held GPUs only in the first (upper) panel
    assert len(rows) > 10 and rows.max() < height / 2, (rows.min(), rows.max(), height)


def test_nothing_held_nothing_red(tmp_path: Path) -> None:
    lane = timeline.Lane("all jobs", [(0.0, 0, 0), (5.0, 8, 0), (9.0, 0, 0)])
    path = timeline.draw([timeline.Panel("Volcano", [lane])], tmp_path / "p.png", "test")
    assert len(_held_rows(path)) == 0
