"""Numbers as Kubernetes can carry them: at most a 64-bit float, never NaN or infinite.

The careful parser reads YAML 1.1 integers and floats through :func:`read_int` and
:func:`read_float`, which keep the text of a number no 64-bit float can hold (a 5000-digit
integer, ``1.0e+999``, ``.inf``) as :class:`OutOfRange`, in time linear in its length.
:func:`number_problem` is the one judgement of whether a number can be sent, for parsed documents
(the loader's scan) and for objects given as dicts (:func:`.checks.unsendable`) alike.
"""

from __future__ import annotations

import sys
from typing import Any

from tfjob_kit.manifests.documents import shorten

# A JSON number Kubernetes can carry is at most a 64-bit float; a larger one (a 5000-digit
# integer, 1.0e+999, .inf) is refused where it is read, with its text.
MAX_NUMBER = sys.float_info.max
MAX_DECIMAL_DIGITS = len(str(int(MAX_NUMBER)))  # 309: longer integers are out of range
_MAX_SEXAGESIMAL_PARTS = 175  # 60 ** 174 > MAX_NUMBER
_INFINITIES = (float("inf"), float("-inf"))


class OutOfRange(str):
    """The text of a YAML number that no 64-bit float can hold (kept for the message)."""

    __slots__ = ()


def out_of_range_message(text: str) -> str:
    return (
        f"number {shorten(text)} is out of range: Kubernetes reads numbers as 64-bit "
        "floats at most (about 1.8e308); quote it if it is meant as a string"
    )


def read_int(text: str) -> int | str:
    """The value of a YAML 1.1 integer's text, like PyYAML's but without its quadratic arithmetic
    on huge texts; a number no 64-bit float can hold is OutOfRange, and '0b_' (no digits) stays a
    string, as go-yaml reads it."""
    value = text.replace("_", "")
    sign = -1 if value[:1] == "-" else 1
    value = value.lstrip("+-")
    try:
        if value.startswith("0b"):
            number = int(value[2:], 2)
        elif value.startswith("0x"):
            number = int(value[2:], 16)
        elif value[:1] == "0":
            number = int(value, 8)
        elif ":" in value:
            parts = value.split(":")  # the first part is not zero
            if len(parts) > _MAX_SEXAGESIMAL_PARTS:
                return OutOfRange(text)
            number = 0
            for part in parts:
                number = number * 60 + int(part)
        elif len(value) > MAX_DECIMAL_DIGITS:
            return OutOfRange(text)
        else:
            number = int(value)
    except ValueError:
        return text
    return OutOfRange(text) if number > MAX_NUMBER else sign * number


def read_float(text: str) -> float | str:
    """The value of a YAML 1.1 float's text, like PyYAML's; infinite values (.inf, 1.0e+999,
    long base-60 ones) are OutOfRange."""
    value = text.replace("_", "").lower()
    sign = -1.0 if value[:1] == "-" else 1.0
    value = value.lstrip("+-")
    number: float
    if value == ".nan":
        return float("nan")
    if value == ".inf":
        return OutOfRange(text)
    if ":" in value:
        parts = value.split(":")
        first = next((i for i, part in enumerate(parts) if float(part) != 0), len(parts) - 1)
        if len(parts) - first > _MAX_SEXAGESIMAL_PARTS:
            return OutOfRange(text)
        number, base = 0.0, 1
        try:
            for part in reversed(parts[first:]):
                number += float(part) * base
                base *= 60
        except OverflowError:
            return OutOfRange(text)
    else:
        number = float(value)
    if number in _INFINITIES:
        return OutOfRange(text)
    return sign * number


def _int_text(number: int) -> str:
    """Decimal text of an integer, or its size when Python will not print it (4300 digits)."""
    try:
        return str(number)
    except ValueError:
        digits = int(number.bit_length() * 0.30103) + 1
        return f"{'-' if number < 0 else ''}<an integer of about {digits} digits>"


def number_problem(value: Any) -> str | None:
    """Why this number (or the text of a YAML number no 64-bit float holds) cannot be sent to
    Kubernetes, or None when it can (or is no number)."""
    kind = type(value)
    if kind is float:
        if value != value:
            return "NaN cannot be sent to Kubernetes"
        if value in _INFINITIES:
            return out_of_range_message(str(value))
    elif kind is int:
        if value > MAX_NUMBER or -value > MAX_NUMBER:
            return out_of_range_message(_int_text(value))
    elif kind is OutOfRange:
        return out_of_range_message(value)
    return None
