"""Kubernetes resource quantities (resource.Quantity) as exact fractions."""

from __future__ import annotations

import functools
import re
from fractions import Fraction
from typing import Any

_QUANTITY = re.compile(
    r"^(?P<number>[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+))"
    r"(?P<suffix>[KMGTPE]i|[numkMGTPE]|[eE][+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+))?$"
)
# Longer numbers are not judged (parse says None), as exponents over 40 are not: Python will not
# read an integer of more than 4300 digits, and the API server caps every quantity at 2**63 - 1
# anyway. 100 characters hold any quantity that is not capped.
MAX_NUMBER_CHARS = 100
_BINARY = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60}
_DECIMAL = {
    "n": Fraction(1, 10**9),
    "u": Fraction(1, 10**6),
    "m": Fraction(1, 1000),
    "": Fraction(1),
    "k": Fraction(10**3),
    "M": Fraction(10**6),
    "G": Fraction(10**9),
    "T": Fraction(10**12),
    "P": Fraction(10**15),
    "E": Fraction(10**18),
}


def parse(value: Any) -> Fraction | None:
    """Exact value of a quantity (str or number), or None when it is not one."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return Fraction(value)
    if isinstance(value, float):
        return Fraction(str(value)) if value == value and abs(value) != float("inf") else None
    if not isinstance(value, str):
        return None
    return _parse_text(value)


@functools.lru_cache(maxsize=4096)
def _parse_text(value: str) -> Fraction | None:
    match = _QUANTITY.match(value.strip())
    if match is None or len(match["number"]) > MAX_NUMBER_CHARS:
        return None
    number = Fraction(match["number"])
    suffix = match["suffix"] or ""
    if suffix in _BINARY:
        return number * _BINARY[suffix]
    if suffix in _DECIMAL:
        return number * _DECIMAL[suffix]
    if len(suffix) > MAX_NUMBER_CHARS:
        return None
    exponent = Fraction(suffix[1:])
    if exponent.denominator != 1 or abs(exponent) > 40:
        return None
    return number * Fraction(10) ** int(exponent)
