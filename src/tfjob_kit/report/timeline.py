"""A picture of GPU occupancy over time (the gang story of ``make demo``, ``make bench-scale``):
one panel per scheduler, one lane per job (or one for all jobs), and in each lane the GPUs in use
by jobs whose pods all run, and the GPUs held idle by jobs placed only in part, waiting for
peers that cannot start.

Drawn with matplotlib, the ``plot`` extra (``pip install 'tfjob-kit[plot]'``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tfjob_kit import extras
from tfjob_kit.model import GPU_RESOURCE
from tfjob_kit.timestamps import seconds

IN_USE, HELD = "#2e7d32", "#c62828"


@dataclass(frozen=True)
class Lane:
    """One job (or all): (seconds since the start, GPUs in use, GPUs held idle) at each look."""

    label: str
    samples: list[tuple[float, float, float]] = field(default_factory=list)


@dataclass(frozen=True)
class Panel:
    title: str
    lanes: list[Lane]


def pod_gpus(pod: dict[str, Any]) -> int:
    """The GPUs a pod's containers ask for (their limits)."""
    return sum(
        int(((c.get("resources") or {}).get("limits") or {}).get(GPU_RESOURCE, 0))
        for c in (pod.get("spec") or {}).get("containers") or []
    )


def _span(pod: dict[str, Any]) -> tuple[float, float] | None:
    """When the pod was placed (its PodScheduled condition turned True) and when its last
    container ended (inf while one runs); None for a pod never placed."""
    status = pod.get("status") or {}
    placed = [
        stamp
        for c in status.get("conditions") or []
        if c.get("type") == "PodScheduled" and c.get("status") == "True"
        if (stamp := seconds(c.get("lastTransitionTime"))) is not None
    ]
    if not placed:
        return None
    ended = [
        stamp
        for s in status.get("containerStatuses") or []
        if (stamp := seconds(((s.get("state") or {}).get("terminated") or {}).get("finishedAt")))
        is not None
    ]
    containers = (pod.get("spec") or {}).get("containers") or []
    finished = max(ended) if ended and len(ended) >= len(containers) else float("inf")
    return placed[0], finished


# The API server's timestamps have whole seconds: pods bound one after the other across a second's
# edge look placed a second apart.
STAMP_RESOLUTION_S = 1.0


def occupancy(
    label: str,
    pods: Iterable[dict[str, Any]],
    job_of: Callable[[dict[str, Any]], str],
    start: float,
) -> Lane:
    """All jobs in one lane, from their pods after the run (each pod's placement and end, to the
    second): at each moment, the GPUs of the running pods of jobs whose pods have all been
    placed are in use, and those of jobs placed only in part are held idle. As the gang story
    counts from the second look that saw a job so, a job counts as held only once it has been
    placed in part for longer than the timestamps' resolution: a placement whose binds straddle
    a second's edge is not a stall. ``start`` (seconds since the epoch) is the lane's zero."""
    jobs: dict[str, list[tuple[float, float, float]]] = {}
    for pod in pods:
        placed, ended = _span(pod) or (float("inf"), float("inf"))
        jobs.setdefault(job_of(pod), []).append((placed, ended, pod_gpus(pod)))
    # When a job placed in part counts as held: a resolution after its first pod's placement.
    stalls = {
        name: min(p for p, _, _ in spans) + STAMP_RESOLUTION_S for name, spans in jobs.items()
    }
    moments = sorted(
        {t for spans in jobs.values() for placed, ended, _ in spans for t in (placed, ended)}
        | {t for name, t in stalls.items() if max(p for p, _, _ in jobs[name]) > t}
    )
    samples = [(0.0, 0.0, 0.0)]
    for moment in (m for m in moments if m != float("inf")):
        used = held = 0.0
        for name, spans in jobs.items():
            running = sum(g for placed, ended, g in spans if placed <= moment < ended)
            if all(placed <= moment for placed, _, _ in spans):
                used += running
            elif moment >= stalls[name]:
                held += running
        samples.append((max(moment - start, 0.0), used, held))
    return Lane(label, samples)


def draw(panels: list[Panel], path: Path, title: str) -> Path:
    """Write the picture (PNG) to ``path``; MissingExtraError without matplotlib."""
    extras.require("plot", "the timeline picture")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.patches import Patch

    height = max(
        (
            max((max(u, h) for _, u, h in lane.samples), default=1.0)
            for p in panels
            for lane in p.lanes
        ),
        default=1.0,
    )
    end = max(
        (lane.samples[-1][0] for p in panels for lane in p.lanes if lane.samples), default=1.0
    )
    figure, axes = plt.subplots(
        len(panels),
        1,
        sharex=True,
        squeeze=False,
        figsize=(9, 0.6 + 1.1 * sum(len(p.lanes) for p in panels)),
    )
    for axis, panel in zip(axes[:, 0], panels, strict=True):
        gap = height * 0.25
        ticks = []
        for index, lane in enumerate(reversed(panel.lanes)):
            base = index * (height + gap)
            ticks.append(base + height / 2)
            times = [t for t, _, _ in lane.samples]
            used = [base + u for _, u, _ in lane.samples]
            held = [base + u + h for _, u, h in lane.samples]
            axis.fill_between(times, base, used, step="post", color=IN_USE, linewidth=0)
            axis.fill_between(times, used, held, step="post", color=HELD, linewidth=0, hatch="//")
            axis.axhline(base, color="#9e9e9e", linewidth=0.5)
        axis.set_yticks(ticks, [lane.label for lane in reversed(panel.lanes)])
        axis.set_ylim(-gap / 2, len(panel.lanes) * (height + gap) - gap / 2)
        axis.set_title(panel.title, loc="left", fontsize=10)
        axis.set_xlim(0, end)
    axes[-1, 0].set_xlabel("seconds since the jobs were submitted")
    figure.legend(
        handles=[
            Patch(color=IN_USE, label="GPUs in use (every pod of the job running)"),
            Patch(facecolor=HELD, hatch="//", label="GPUs held idle (job placed in part)"),
        ],
        loc="upper right",
        fontsize=8,
    )
    figure.suptitle(title, x=0.01, ha="left", fontsize=11)
    figure.tight_layout(rect=(0, 0, 1, 0.93))
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, dpi=100, metadata={"Software": None})
    plt.close(figure)
    return path
