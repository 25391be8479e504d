"""Reading Kubernetes objects as the API server returns them (dicts, any field may be missing
or null), for the installs' decisions."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, TypeVar

Obj = Mapping[str, Any]
T = TypeVar("T")


def meta_of(obj: Obj) -> Obj:
    found: Obj = obj.get("metadata") or {}
    return found


def labels_of(obj: Obj) -> Obj:
    found: Obj = meta_of(obj).get("labels") or {}
    return found


def annotations_of(obj: Obj) -> Obj:
    found: Obj = meta_of(obj).get("annotations") or {}
    return found


def unique(items: Iterable[T]) -> list[T]:
    """The items in their first order, each once (dicts too: compared by equality)."""
    out: list[T] = []
    for item in items:
        if item not in out:
            out.append(item)
    return out


def managers(obj: Obj) -> list[str]:
    """The field managers that wrote the object, in managedFields' order, each once."""
    return unique(f.get("manager") for f in meta_of(obj).get("managedFields") or [])
