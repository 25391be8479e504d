"""A decoded JSON field as the API server's Go types read it: a field that is absent, null or of
another type (which the schema check reports) reads as the type's zero value. The one set of
readers podcheck uses; ``as_dict`` and ``as_list`` are the model's (``model.py``)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from tfjob_kit.model import as_dict, as_list

__all__ = [
    "as_dict",
    "as_list",
    "field_int",
    "field_opt_str",
    "field_str",
    "field_true",
    "indexed_dicts",
    "opt_bool",
    "opt_dict",
    "opt_int",
    "opt_str",
    "str_map",
    "str_of",
    "strings_of",
]


def opt_int(value: Any) -> int | None:
    """An integer (not a bool), else None."""
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def opt_dict(value: Any) -> dict[str, Any] | None:
    """An object, else None."""
    return value if isinstance(value, dict) else None


def str_of(value: Any) -> str:
    """A string, else ""."""
    return value if isinstance(value, str) else ""


def opt_str(value: Any) -> str | None:
    """A string, else None."""
    return value if isinstance(value, str) else None


def opt_bool(value: Any) -> bool | None:
    """A boolean, else None."""
    return value if isinstance(value, bool) else None


def str_map(value: Any) -> dict[str, str]:
    """A map of strings to strings: its string entries (an object, else none)."""
    if not isinstance(value, dict):
        return {}
    return {k: v for k, v in value.items() if isinstance(k, str) and isinstance(v, str)}


def strings_of(value: Any) -> list[str]:
    """A list of strings: each item, "" where it is not a string (a list, else none)."""
    return [v if isinstance(v, str) else "" for v in as_list(value)]


def indexed_dicts(value: Any) -> Iterator[tuple[int, dict[str, Any]]]:
    """(index, item) for each object in a list (a list, else none)."""
    for i, item in enumerate(as_list(value)):
        if isinstance(item, dict):
            yield i, item


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
