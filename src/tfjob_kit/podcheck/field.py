"""Field errors as the API server words them (k8s.io/apimachinery/pkg/util/validation/field).

A :class:`FieldError` is one entry of a field.ErrorList: the path from the object's root, the
error type, the bad value and the detail. :meth:`FieldError.field` and :meth:`FieldError.message`
print them exactly as ``field.Path.String`` and ``field.Error.Error`` do, so that a finding can
quote what the server would say, and the differential test can compare the two.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from enum import Enum
from typing import Any

from tfjob_kit.podcheck import release


class Key(str):
    """A map key in a path (``field.Path.Key``): printed ``[key]``, where a field is ``.name``."""

    __slots__ = ()


class Named(str):
    """A value of a named Go string type (``core.HostPathType``, ``core.PullPolicy``, ...):
    ``field.Error.ErrorBody`` prints it with encoding/json, not ``%q`` as a plain string, so
    ``<``, ``>`` and ``&`` come out as ``\\u003c``, ``\\u003e`` and ``\\u0026``."""

    __slots__ = ()


PathPart = str | int  # a field name (str), a map key (Key) or a list index (int)
Path = tuple[PathPart, ...]


class ErrorType(Enum):
    """field.ErrorType: the value is what ``ErrorType.String`` prints."""

    NOT_FOUND = "Not found"
    REQUIRED = "Required value"
    DUPLICATE = "Duplicate value"
    INVALID = "Invalid value"
    NOT_SUPPORTED = "Unsupported value"
    FORBIDDEN = "Forbidden"
    TOO_LONG = "Too long"
    TOO_MANY = "Too many"
    INTERNAL = "Internal error"
    TYPE_INVALID = "Invalid value"  # field.TypeInvalid prints as Invalid too


class _Omit:
    def __repr__(self) -> str:
        return "OMIT"


OMIT: Any = _Omit()  # field.OmitValueType: the message shows no value
_VALUELESS = {ErrorType.REQUIRED, ErrorType.FORBIDDEN, ErrorType.TOO_LONG, ErrorType.INTERNAL}


def field_string(path: Path) -> str:
    """``field.Path.String``: fields joined by dots, keys and indexes in brackets."""
    out: list[str] = []
    for part in path:
        if isinstance(part, Key | int):
            out.append(f"[{part}]")
        else:
            out.append(f".{part}" if out else part)
    return "".join(out)


def _go_quote(text: str) -> str:
    """Go's ``%q`` for the common case: JSON's escaping is the same for printable text."""
    return json.dumps(text, ensure_ascii=False)


_HTML_ESCAPES = {"<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "\u2028": "\\u2028"}
_HTML_ESCAPES["\u2029"] = "\\u2029"
_HTML_ESCAPE_RE = re.compile("[<>&\u2028\u2029]")


def go_json(value: Any) -> str:
    """``json.Marshal``: compact, with Go's HTML-safe escaping of ``<``, ``>``, ``&``, U+2028
    and U+2029."""
    text = json.dumps(value, separators=(",", ":"), ensure_ascii=False)
    return _HTML_ESCAPE_RE.sub(lambda m: _HTML_ESCAPES[m.group()], text)


def value_string(value: Any) -> str:
    """How ``field.Error.ErrorBody`` prints a bad value: numbers and booleans plainly (``%v``),
    strings quoted (``%q``), anything else as JSON."""
    if isinstance(value, Named):
        return go_json(str(value))
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return format(value, "g") if value != int(value) else str(int(value))
    if isinstance(value, str):
        return _go_quote(value)
    return go_json(value)


@dataclass(frozen=True)
class FieldError:
    """One error of a field.ErrorList.

    ``origin`` names the Go function the check mirrors (for example
    ``validation.validateContainerPorts``), so that a reader can compare the two."""

    path: Path
    type: ErrorType
    value: Any = OMIT
    detail: str = ""
    origin: str = ""

    @property
    def field(self) -> str:
        return field_string(self.path)

    @property
    def body(self) -> str:
        """``field.Error.ErrorBody``."""
        text = self.type.value
        if self.type not in _VALUELESS and self.value is not OMIT:
            text = f"{text}: {value_string(self.value)}"
        return f"{text}: {self.detail}" if self.detail else text

    @property
    def message(self) -> str:
        """``field.Error.Error``: what the server puts in its Status message and causes."""
        return f"{self.field}: {self.body}"


# The constructors of field.ErrorList entries, named as Go's (field.Invalid, field.Required, ...),
# so that a check reads line for line against the Go function it mirrors (its name: `origin`).


def invalid(path: Path, value: Any, detail: str, origin: str = "") -> FieldError:
    """``field.Invalid``."""
    return FieldError(path, ErrorType.INVALID, value, detail, origin)


def required(path: Path, detail: str = "", origin: str = "") -> FieldError:
    """``field.Required``."""
    return FieldError(path, ErrorType.REQUIRED, OMIT, detail, origin)


def forbidden(path: Path, detail: str, origin: str = "") -> FieldError:
    """``field.Forbidden``."""
    return FieldError(path, ErrorType.FORBIDDEN, OMIT, detail, origin)


def duplicate(path: Path, value: Any, origin: str = "") -> FieldError:
    """``field.Duplicate``."""
    return FieldError(path, ErrorType.DUPLICATE, value, "", origin)


def not_found(path: Path, value: Any, origin: str = "", *, detail: str = "") -> FieldError:
    """``field.NotFound`` (with a detail where the Go code sets one on the error)."""
    return FieldError(path, ErrorType.NOT_FOUND, value, detail, origin)


def too_long(path: Path, detail: str, origin: str = "") -> FieldError:
    """``field.TooLong``, its detail written out (the value is not printed)."""
    return FieldError(path, ErrorType.TOO_LONG, OMIT, detail, origin)


def not_supported_detail(valid: Sequence[str]) -> str:
    """The detail ``field.NotSupported`` writes: the choices quoted, in the order the Go code
    passes them (``sets.List`` sorts; a literal slice does not)."""
    return "supported values: " + ", ".join(_go_quote(v) for v in valid) if valid else ""


def not_supported(path: Path, value: Any, valid: Sequence[str], origin: str = "") -> FieldError:
    """``field.NotSupported``."""
    return FieldError(path, ErrorType.NOT_SUPPORTED, value, not_supported_detail(valid), origin)


def distinct(errs: Sequence[FieldError]) -> list[FieldError]:
    """``ErrorList.Filter``'s side effect (it goes through ``ToAggregate``): an error whose
    ``Error()`` text (:attr:`FieldError.message`) an earlier one has is dropped. A pod create's
    errors pass through it from 1.37, where the pod strategy runs declarative validation and
    ``FilterCoveredHandwrittenErrors`` filters the handwritten list."""
    seen: set[str] = set()
    out: list[FieldError] = []
    for err in errs:
        if err.message not in seen:
            seen.add(err.message)
            out.append(err)
    return out


def as_listed(errs: list[FieldError]) -> list[FieldError]:
    """A pod create's errors as the server of the minor followed lists them: :func:`distinct`
    from 1.37, as they are before."""
    return distinct(errs) if release.at_least("1.37") else errs
