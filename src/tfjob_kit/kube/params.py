"""A module's parameters into one of the library's request dataclasses (``task.Request``,
``info.Query``): every field the argument spec names, by name, so that a new parameter needs no
copying line in the module."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import fields
from typing import Any, TypeVar

T = TypeVar("T")


def from_params(cls: type[T], params: Mapping[str, Any], **given: Any) -> T:
    """`cls` (a dataclass) with each of its fields that `params` holds, as Ansible passed it (a
    float field converted from the int a YAML number may be, a dict field copied); `given`
    sets the others (the connection, check and diff mode)."""
    values: dict[str, Any] = {}
    for spec in fields(cls):  # type: ignore[arg-type]
        if spec.name in given or spec.name not in params:
            continue
        value = params[spec.name]
        if value is not None and spec.type == "float":
            value = float(value)
        elif value is not None and str(spec.type).startswith("dict["):
            value = dict(value)
        values[spec.name] = value
    return cls(**values, **given)
