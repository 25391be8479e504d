"""A decoded JSON field as the API server's Go types read it: a field that is absent, null or of
another type (which the schema check reports) reads as the type's zero value."""

from __future__ import annotations

from typing import Any


def opt_int(value: Any) -> int | None:
    """An integer (not a bool), else None."""
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def opt_dict(value: Any) -> dict[str, Any] | None:
    """An object, else None."""
    return value if isinstance(value, dict) else None


def dict_of(value: Any) -> dict[str, Any]:
    """An object, else an empty one."""
    return value if isinstance(value, dict) else {}


def str_of(value: Any) -> str:
    """A string, else ""."""
    return value if isinstance(value, str) else ""


def list_of(value: Any) -> list[Any]:
    """A list, else an empty one."""
    return value if isinstance(value, list) else []
