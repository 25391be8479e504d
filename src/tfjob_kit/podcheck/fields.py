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


# Readers of one field of an object, as the volume checks read them: None where the value is of
# another type (the schema check reports it), so that the check is skipped.


def field_str(obj: dict[str, Any], key: str) -> str | None:
    """A string field: "" when absent or null (Go's zero), None when not a string."""
    value = obj.get(key)
    if value is None:
        return ""
    return value if isinstance(value, str) else None


def field_opt_str(obj: dict[str, Any], key: str) -> str | None:
    """A *string field: None when absent, null or not a string."""
    value = obj.get(key)
    return value if isinstance(value, str) else None


def field_int(obj: dict[str, Any], key: str) -> int | None:
    """An integer field: None when absent, null or not an integer."""
    value = obj.get(key)
    if isinstance(value, bool) or not isinstance(value, int):
        if isinstance(value, float) and value.is_integer():
            return int(value)
        return None
    return value


def field_true(obj: dict[str, Any], key: str) -> bool:
    return obj.get(key) is True
