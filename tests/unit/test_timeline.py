"""report/timeline.py: the picture shows GPUs held idle where a job sat placed in part, and only
there."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

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


def _pod(job: str, gpus: int, placed: int | None, ended: list[int | None]) -> dict[str, Any]:
    """A pod as the API server returns it: placed at ``placed`` (seconds after 12:00:00),
    one container per entry of ``ended`` (None: still running)."""

    def at(second: int) -> str:
        return f"2026-12-02T12:{second // 60:02d}:{second % 60:02d}Z"

    status: dict[str, Any] = {
        "conditions": [{"type": "PodScheduled", "status": "False", "reason": "Unschedulable"}]
    }
    if placed is not None:
        status["conditions"] = [
            {"type": "PodScheduled", "status": "True", "lastTransitionTime": at(placed)}
        ]
        status["containerStatuses"] = [
            {
                "state": {"terminated": {"finishedAt": at(end)}}
                if end is not None
                else {"running": {}}
            }
            for end in ended
        ]
    return {
        "metadata": {"labels": {"job": job}},
        "spec": {
            "containers": [
                {
                    "name": f"c{i}",
                    "resources": {"limits": {"nvidia.com/gpu": gpus}} if i == 0 else {},
                }
                for i in range(len(ended))
            ]
        },
        "status": status,
    }


NOON = datetime(2026, 12, 2, 12, tzinfo=UTC).timestamp()


def _lane(pods: list[dict[str, Any]]) -> list[tuple[float, float, float]]:
    return timeline.occupancy("all", pods, lambda p: p["metadata"]["labels"]["job"], NOON).samples


def test_occupancy_counts_whole_jobs_in_use_and_partial_ones_held() -> None:
    pods = [
        # a: both pods placed at 10, both end at 20
        _pod("a", 2, 10, [20]),
        _pod("a", 2, 10, [20]),
        # b: one pod placed at 12, its peer only at 25 (after a freed its GPUs); both end at 30
        _pod("b", 2, 12, [30]),
        _pod("b", 2, 25, [30]),
    ]
    assert _lane(pods) == [
        (0.0, 0.0, 0.0),
        (10.0, 4.0, 0.0),
        (12.0, 4.0, 0.0),  # b's first pod placed: held only once that lasts over a second
        (13.0, 4.0, 2.0),  # b's first pod holds its 2 GPUs, waiting
        (20.0, 0.0, 2.0),
        (25.0, 4.0, 0.0),
        (30.0, 0.0, 0.0),
    ]


def test_occupancy_a_pod_never_placed_keeps_its_peers_held_and_runs_on() -> None:
    """c's second pod is never placed: c's first pod holds its GPUs to the end of the lane. A pod
    with a container still running (d's second) counts as running after its first container
    ended."""
    pods = [
        _pod("c", 1, 5, [None]),
        _pod("c", 1, None, []),
        _pod("d", 4, 5, [8, None]),
        _pod("e", 1, 9, [12]),
    ]
    assert _lane(pods) == [
        (0.0, 0.0, 0.0),
        (5.0, 4.0, 0.0),
        (6.0, 4.0, 1.0),
        (9.0, 5.0, 1.0),
        (12.0, 4.0, 1.0),
    ]


def test_occupancy_binds_straddling_a_second_are_no_stall() -> None:
    """A gang bound one pod at a time across a second's edge (placed at 3 and 4) is never held."""
    pods = [_pod("w", 1, 3, [9]), _pod("w", 1, 4, [9])]
    assert _lane(pods) == [(0.0, 0.0, 0.0), (3.0, 0.0, 0.0), (4.0, 2.0, 0.0), (9.0, 0.0, 0.0)]
    assert _lane([]) == [(0.0, 0.0, 0.0)]
