"""Which Kubernetes minor the pod checks follow, and its default feature gates.

The checks follow one minor of the window (versions.toml: the default local cluster's release and
``[kubernetes] releases``): by default the default local cluster's; ``following("1.37")`` makes
the code inside it judge as a 1.37 API server with its default gates does. The gates come from
``feature_gates.json`` (``tools/gen_feature_gates.py``, from the newest release's
``kube_features.go``: each gate's default by minor).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from functools import cache
from importlib import resources

from tfjob_kit.versions import load_versions, minor_of, minor_order


class UnknownMinorError(ValueError):
    """A Kubernetes minor the pod checks do not follow (outside the window)."""


@cache
def window() -> tuple[str, ...]:
    """The minors the checks follow, oldest first ("1.34", ..., "1.37")."""
    return tuple(load_versions().kubernetes_minors)


@cache
def default_minor() -> str:
    """The default local cluster's minor: what the checks follow unless told otherwise."""
    return minor_of(load_versions().kubernetes)


_MINOR: ContextVar[str | None] = ContextVar("tfjob_kit_kubernetes_minor", default=None)
# What every thread follows outside a following() block (set_process_minor); None: the default.
_process_minor: str | None = None


def minor() -> str:
    """The minor the checks follow now."""
    return _MINOR.get() or _process_minor or default_minor()


def set_process_minor(value: str | None) -> None:
    """Follow ``value`` in every thread of this process, outside following() blocks (a new
    thread starts with none of its creator's context); None: the default again. For a process
    that talks to one cluster all along (a test session)."""
    global _process_minor
    _process_minor = checked_minor(value) if value else None


def checked_minor(value: str) -> str:
    """``value`` ("1.35", "v1.35", "v1.35.2", "1.35.2-eks-1") as a minor of the window, or
    UnknownMinorError saying which minors there are."""
    try:
        wanted = minor_of(value.strip())
        minor_order(wanted)
    except (ValueError, IndexError):
        wanted = ""
    if wanted not in window():
        raise UnknownMinorError(
            f"Kubernetes {value!r} is not a minor tfjob-kit validates for "
            f"(the window: {', '.join(window())})"
        )
    return wanted


def nearest(server: str) -> str:
    """The minor of the window closest to a server's version ("v1.33.5" -> "1.34"): its own
    when the window has it."""
    found = re.match(r"v?(\d+)\.(\d+)", server.strip())
    if found is None:
        return default_minor()
    wanted = minor_order(".".join(found.groups()))
    return min(window(), key=lambda m: (abs(minor_order(m)[1] - wanted[1]), m))


@contextmanager
def following(value: str | None) -> Iterator[str]:
    """Judge as ``value``'s minor inside the block (None or "": the minor followed already)."""
    wanted = checked_minor(value) if value else minor()
    token = _MINOR.set(wanted)
    try:
        yield wanted
    finally:
        _MINOR.reset(token)


def at_least(value: str) -> bool:
    """Whether the minor followed is ``value`` ("1.36") or newer."""
    return minor_order(minor()) >= minor_order(value)


@cache
def _gates() -> dict[str, list[tuple[str, bool]]]:
    text = resources.files("tfjob_kit.podcheck").joinpath("feature_gates.json").read_text()
    table: dict[str, list[list[object]]] = json.loads(text)["gates"]
    return {name: [(str(m), bool(d)) for m, d in specs] for name, specs in table.items()}


@cache
def _gate_at(name: str, at: str) -> bool:
    specs = _gates()[name]  # KeyError: not a gate of the newest release (a typo, or removed)
    enabled = False
    for since, default in specs:
        if minor_order(since) <= minor_order(at):
            enabled = default
    return enabled


def gate(name: str) -> bool:
    """Whether feature gate ``name`` is on by default at the minor followed."""
    return _gate_at(name, minor())
