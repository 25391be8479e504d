"""The API server's timestamps (RFC 3339, as metav1.Time writes them) as seconds since the
epoch: the wait's diagnosis, the occupancy picture and the benchmarks read them alike."""

from __future__ import annotations

from datetime import datetime
from typing import Any


def seconds(value: Any) -> float | None:
    """Seconds since the epoch of a time the API server wrote; None for no time (absent, null,
    empty) or one that is not RFC 3339."""
    if not isinstance(value, str) or not value:
        return None
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None
