"""Kubernetes resource quantities (resource.Quantity) as exact fractions."""

from __future__ import annotations

import functools
import json
import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

# Longer numbers are not judged (parse says None): Python will not read an integer of more than
# 4300 digits, and the API server caps every quantity at 2**63 - 1 anyway. 100 characters hold
# any quantity that is not capped.
MAX_NUMBER_CHARS = 100


def parse(value: Any) -> Fraction | None:
    """The value the API server holds for a quantity (a string or a JSON number, read as
    ParseQuantity reads it), or None when it is not one. The rules and the diagnosis use it; it
    is :func:`parse_quantity`'s value, remembered for repeated inputs."""
    kind = type(value)
    if kind is str:
        return _parse_text(value)
    if kind is int:
        return _parse_int(value)
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return Fraction(value)
    if isinstance(value, float):
        return _parse_text(json.dumps(value)) if math.isfinite(value) else None
    if not isinstance(value, str):
        return None
    return _parse_text(value)


@functools.lru_cache(maxsize=1024)
def _parse_int(value: int) -> Fraction:
    """``Fraction(value)``, remembered: one object for a repeated integer (only exact ints come
    here, so True, 1 and 1.0, equal as keys, never share an answer)."""
    return Fraction(value)


@functools.lru_cache(maxsize=4096)
def _parse_text(value: str) -> Fraction | None:
    """The value resource.ParseQuantity holds for the text (JSON's whitespace trimmed)."""
    quantity = parse_quantity(value.strip(JSON_SPACE))
    return None if quantity is None else quantity.value


# resource.Quantity as the API server holds it: what ParseQuantity keeps (the exact value, the
# format its suffix chose, the text when that is already canonical) and what String prints.

DECIMAL_SI = "DecimalSI"
BINARY_SI = "BinarySI"
DECIMAL_EXPONENT = "DecimalExponent"

# The detail of resource.ErrFormatWrong, which the API server's decoder answers for a quantity
# it cannot read (the whole request fails; there is no field path).
FORMAT_ERROR = (
    "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
)
_SUFFIX_CHARS = frozenset("eEinumkKMGTP")
_DIGITS = frozenset("0123456789")
_DECIMAL_EXPONENTS = {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12}
_DECIMAL_EXPONENTS.update({"P": 15, "E": 18})
_DECIMAL_SUFFIXES = {e: s for s, e in _DECIMAL_EXPONENTS.items()}
_BINARY_EXPONENTS = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}
_BINARY_SUFFIXES = ["", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"]
_INT64_MAX = 2**63 - 1
_NANO = Fraction(1, 10**9)
# Exponents and digit counts past these are not judged (parse_quantity says None): Python's
# integers would grow without bound where Go's int32 exponent wraps.
_MAX_EXPONENT = 4000


@dataclass(frozen=True, slots=True)
class Quantity:
    """A resource.Quantity: ``value`` exactly, ``format`` (DecimalSI, BinarySI or
    DecimalExponent), ``text`` the string ParseQuantity kept (empty when String computes the
    canonical form) and ``scale`` the int64Amount scale (None for the inf.Dec representation)."""

    value: Fraction
    format: str
    text: str = ""
    scale: int | None = 0

    def string(self) -> str:
        """``Quantity.String``."""
        return self.text or canonical(self.value, self.format)

    def round_up(self, scale: int) -> Quantity:
        """``Quantity.RoundUp(scale)`` (away from zero), as SetDefaults_ResourceList does with
        -3: the kept text survives only where the value already had that precision."""
        if self.scale is not None and self.scale >= scale:
            return self
        step = Fraction(10) ** scale
        units = abs(self.value) / step
        whole = -(-units.numerator // units.denominator)
        rounded = whole * step if self.value >= 0 else -whole * step
        return Quantity(rounded, self.format, "", None if self.scale is None else scale)

    def value_ceil(self) -> int:
        """``Quantity.Value()`` for a non-negative quantity (rounded up)."""
        v = self.value
        return -(-v.numerator // v.denominator)


def canonical(value: Fraction, fmt: str) -> str:
    """``Quantity.CanonicalizeBytes``: the value printed in its format's canonical form."""
    if value == 0:
        return "0"
    if fmt == BINARY_SI and (-1024 < value < 1024 or value.denominator != 1):
        fmt = DECIMAL_SI
    if fmt == BINARY_SI:
        amount = value.numerator
        power = 0
        while amount % 1024 == 0:
            amount //= 1024
            power += 1
        return f"{amount}{_BINARY_SUFFIXES[power] if power < len(_BINARY_SUFFIXES) else ''}"
    # every quantity is a multiple of 1n (ParseQuantity rounds up to it)
    exponent = -9
    scaled = value * 10**9
    mantissa = scaled.numerator // scaled.denominator
    while mantissa % 10 == 0:
        mantissa //= 10
        exponent += 1
    shift = exponent % 3
    mantissa *= 10**shift
    exponent -= shift
    if fmt == DECIMAL_EXPONENT:
        return f"{mantissa}e{exponent}" if exponent else str(mantissa)
    # Go ignores a failed suffix lookup: 1000E prints as "1"
    return f"{mantissa}{_DECIMAL_SUFFIXES.get(exponent, '')}"


JSON_SPACE = " \t\n\r\v\f"  # what quantity_text trims from a string


def quantity_text(value: Any) -> str | None:
    """The text resource.Quantity's UnmarshalJSON reads for a decoded JSON value: a string's
    content or any other value's JSON spelling (as Python's json writes it), trimmed; null reads
    as the zero quantity. None for an integer too long to judge (see MAX_NUMBER_CHARS)."""
    if isinstance(value, str):
        return value.strip(JSON_SPACE)
    if value is None:
        return "0"
    if isinstance(value, int) and not isinstance(value, bool):
        # past MAX_NUMBER_CHARS digits the value is not judged (and str() may refuse it)
        return str(value) if value.bit_length() <= 3 * MAX_NUMBER_CHARS else None
    if isinstance(value, bool | float):
        return json.dumps(value)
    return "?"  # a list, an object or no JSON at all: never a quantity


def _split(text: str) -> tuple[bool, str, str, str, str] | None:
    """``parseQuantityString``: (positive, value, num, denom, suffix), None for ErrFormatWrong."""
    end = len(text)
    pos = 0
    positive = True
    if text[0] in "+-":
        positive = text[0] == "+"
        pos = 1
    while pos < end and text[pos] == "0":
        pos += 1
    if pos >= end:
        return positive, "0", "0", "", ""
    i = pos
    while i < end and text[i] in _DIGITS:
        i += 1
    num = text[pos:i] or "0"
    if i >= end:
        return positive, text, num, "", ""
    pos = i
    denom = ""
    if text[pos] == ".":
        pos += 1
        i = pos
        while i < end and text[i] in _DIGITS:
            i += 1
        denom = text[pos:i]
        if i >= end:
            return positive, text, num, denom, ""
        pos = i
    value = text[:pos]
    start = pos
    while pos < end and text[pos] in _SUFFIX_CHARS:
        pos += 1
    if pos < end and text[pos] in "+-":
        pos += 1
    while pos < end and text[pos] in _DIGITS:
        pos += 1
    if pos < end:
        return None
    return positive, value, num, denom, text[start:]


def _interpret(suffix: str) -> tuple[int, int, str] | None:
    """``suffixHandler.interpret``: (base, exponent, format)."""
    if suffix in _DECIMAL_EXPONENTS:
        return 10, _DECIMAL_EXPONENTS[suffix], DECIMAL_SI
    if suffix in _BINARY_EXPONENTS:
        return 2, _BINARY_EXPONENTS[suffix], BINARY_SI
    if len(suffix) > 1 and suffix[0] in "eE":
        digits = suffix[1:]
        body = digits[1:] if digits[0] in "+-" else digits
        if not body or not body.isascii() or not body.isdigit():
            return None
        significant = body.lstrip("0") or "0"
        if len(significant) > 19:  # past int64: ParseInt fails
            return None
        # Without its leading zeros: int() refuses a string of more than 4,300 digits.
        parsed = int(significant) * (-1 if digits[0] == "-" else 1)
        if not -(2**63) <= parsed < 2**63:
            return None
        wrapped = (parsed + 2**31) % 2**32 - 2**31  # Go's int32(parsed)
        return 10, wrapped, DECIMAL_EXPONENT
    return None


SUFFIX_ERROR = "unable to parse quantity's suffix"
NUMERIC_ERROR = "unable to parse numeric part of quantity"


@functools.lru_cache(maxsize=4096)
def _parse(text: str) -> Quantity | str | None:
    """``resource.ParseQuantity`` (no trimming): the quantity, Go's error message, or None where
    the number is too long or the exponent too large to judge (see MAX_NUMBER_CHARS)."""
    if not text:
        return FORMAT_ERROR
    if text == "0":
        return Quantity(Fraction(0), DECIMAL_SI, "0", 0)
    parts = _split(text)
    if parts is None:
        return FORMAT_ERROR
    positive, number, num, denom, suffix = parts
    interpreted = _interpret(suffix)
    if interpreted is None:
        return SUFFIX_ERROR
    base, exponent, fmt = interpreted
    if len(num) + len(denom) > MAX_NUMBER_CHARS:
        return None
    mantissa = 1
    scale = 0
    if fmt == BINARY_SI:
        if exponent >= 0 and not denom:
            mantissa = 1 << exponent
            precision = 15 - len(num) - exponent * 3 // 10 - 1
        else:
            precision = -1
    else:
        scale = exponent
        precision = 18 - (len(num) + len(denom))
    if precision >= 0:
        scale -= len(denom)
        if scale >= -9:
            shifted = num + denom
            result = int(shifted) * mantissa
            if result <= _INT64_MAX:
                if result and scale > _MAX_EXPONENT:
                    return None
                if not positive:
                    result = -result
                amount = Fraction(result) * Fraction(10) ** scale if result else Fraction(0)
                if fmt == BINARY_SI:
                    keep = exponent % 10 == 0 and int(shifted) & 7 != 0
                else:
                    keep = scale % 3 == 0 and not shifted.endswith("000") and shifted[0] != "0"
                return Quantity(amount, fmt, text if keep else "", scale)
    # the inf.Dec path: its SetString wants at least one digit
    whole, _, frac = number.lstrip("+-").partition(".")
    if not whole and not frac:
        return NUMERIC_ERROR
    if abs(exponent) > _MAX_EXPONENT:
        return None
    amount = Fraction(int(whole + frac), 10 ** len(frac))
    amount *= Fraction(base) ** exponent
    if amount != 0:
        units = amount / _NANO
        amount = -(-units.numerator // units.denominator) * _NANO
    if fmt == BINARY_SI and amount > _INT64_MAX:
        amount = Fraction(_INT64_MAX)
    if fmt == BINARY_SI and 0 < amount < 1:
        fmt = DECIMAL_SI
    if not positive:
        amount = -amount
    return Quantity(amount, fmt, "", None)


def parse_quantity(text: str) -> Quantity | None:
    """``resource.ParseQuantity`` (no trimming): None where Go answers an error (see
    :func:`quantity_error`) and where the value is too large to judge."""
    parsed = _parse(text)
    return parsed if isinstance(parsed, Quantity) else None


def decode(value: Any) -> Quantity | None:
    """The Quantity ``UnmarshalJSON`` makes of a decoded JSON value (:func:`quantity_text`, then
    ParseQuantity); None when it is not one."""
    text = quantity_text(value)
    return None if text is None else parse_quantity(text)


def quantity_error(text: str) -> str | None:
    """The error ParseQuantity answers for ``text`` (ErrFormatWrong, ErrSuffix or ErrNumeric),
    None when it reads it (or when :func:`parse_quantity` cannot judge it)."""
    parsed = _parse(text)
    return parsed if isinstance(parsed, str) else None


def add(a: Quantity, b: Quantity) -> Quantity:
    """``Quantity.Add``: the sum keeps the first operand's format (the second's when the first is
    zero) and drops the kept text."""
    return Quantity(a.value + b.value, b.format if a.value == 0 else a.format, "", None)
