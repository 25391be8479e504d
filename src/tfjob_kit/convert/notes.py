"""What every conversion returns beside its result, and raises when it cannot convert."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Note:
    """Something a conversion could not carry over (dropped) or had to change (changed)."""

    path: str
    kind: str  # dropped | changed
    message: str


class ConversionError(ValueError):
    """The document is not something this conversion understands."""
