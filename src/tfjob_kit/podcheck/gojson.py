"""The syntax check Go's ``encoding/json`` runs before it decodes (``checkValid``, with the
scanner of ``encoding/json/scanner.go``), for the annotations the server parses as JSON: the
first syntax error worded as Go words it (``invalid character 'o' in literal null (expecting
'u')``, ``unexpected end of JSON input``), or None when the text is valid JSON to Go.

A port of the scanner's step functions, one state per Go function (``stateBeginValue``, ...).
It reads bytes: the text is taken as the UTF-8 the server holds (a lone surrogate as U+FFFD, what
Go's JSON decoder makes of one). What Python's ``json`` accepts and Go does not (``NaN``,
``Infinity``) is an error here, as it is there.
"""

from __future__ import annotations

import re
from collections.abc import Callable

MAX_DEPTH = 10000  # maxNestingDepth

_Step = Callable[[int], None]

_SURROGATE = re.compile("[\ud800-\udfff]")
_SHORT = {0x07: "\\a", 0x08: "\\b", 0x0C: "\\f", 0x0A: "\\n", 0x0D: "\\r", 0x09: "\\t", 0x0B: "\\v"}
_HEX = frozenset(b"0123456789abcdefABCDEF")

# The parse states of the container stack (parseObjectKey, parseObjectValue, parseArrayValue).
_OBJECT_KEY, _OBJECT_VALUE, _ARRAY_VALUE = range(3)


def quote_char(c: int) -> str:
    """``quoteChar``: a byte as Go's error shows it (``strconv.Quote`` of the rune the byte
    is, between single quotes)."""
    if c == ord("'"):
        return "'\\''"
    if c == ord('"'):
        return "'\"'"
    if c == ord("\\"):
        return "'\\\\'"
    if c in _SHORT:
        return f"'{_SHORT[c]}'"
    if c < 0x20 or c == 0x7F:
        return f"'\\x{c:02x}'"
    if c < 0x80 or chr(c).isprintable():  # strconv.IsPrint agrees on U+0080..U+00FF
        return f"'{chr(c)}'"
    return f"'\\u{c:04x}'"


class _SyntaxError(Exception):
    pass


def _is_space(c: int) -> bool:
    return c in (0x20, 0x09, 0x0D, 0x0A)


def _is_digit(c: int) -> bool:
    return 0x30 <= c <= 0x39


class _Scanner:
    """``scanner``: step is the state function for the next byte."""

    def __init__(self) -> None:
        self.parse_state: list[int] = []
        self.end_top = False
        self.step: _Step = self.begin_value

    def error(self, c: int, context: str) -> None:
        raise _SyntaxError(f"invalid character {quote_char(c)} {context}")

    def push(self, c: int, state: int) -> None:
        self.parse_state.append(state)
        if len(self.parse_state) > MAX_DEPTH:
            self.error(c, "exceeded max depth")

    def pop(self) -> None:
        self.parse_state.pop()
        if not self.parse_state:
            self.step = self.end_top_state
            self.end_top = True
        else:
            self.step = self.end_value

    def eof(self) -> None:
        if self.end_top:
            return
        self.step(0x20)
        if not self.end_top:
            raise _SyntaxError("unexpected end of JSON input")

    # ---------------------------------------------------------------- values

    def begin_value_or_empty(self, c: int) -> None:  # stateBeginValueOrEmpty
        if _is_space(c):
            return
        if c == ord("]"):
            self.end_value(c)
            return
        self.begin_value(c)

    def begin_value(self, c: int) -> None:  # stateBeginValue
        if _is_space(c):
            return
        if c == ord("{"):
            self.step = self.begin_string_or_empty
            self.push(c, _OBJECT_KEY)
        elif c == ord("["):
            self.step = self.begin_value_or_empty
            self.push(c, _ARRAY_VALUE)
        elif c == ord('"'):
            self.step = self.in_string
        elif c == ord("-"):
            self.step = self.neg
        elif c == ord("0"):
            self.step = self.zero
        elif c == ord("t"):
            self.step = self.literal("true", 1)
        elif c == ord("f"):
            self.step = self.literal("false", 1)
        elif c == ord("n"):
            self.step = self.literal("null", 1)
        elif 0x31 <= c <= 0x39:
            self.step = self.one
        else:
            self.error(c, "looking for beginning of value")

    def begin_string_or_empty(self, c: int) -> None:  # stateBeginStringOrEmpty
        if _is_space(c):
            return
        if c == ord("}"):
            self.parse_state[-1] = _OBJECT_VALUE
            self.end_value(c)
            return
        self.begin_string(c)

    def begin_string(self, c: int) -> None:  # stateBeginString
        if _is_space(c):
            return
        if c == ord('"'):
            self.step = self.in_string
            return
        self.error(c, "looking for beginning of object key string")

    def end_value(self, c: int) -> None:  # stateEndValue
        if not self.parse_state:
            self.step = self.end_top_state
            self.end_top = True
            self.end_top_state(c)
            return
        if _is_space(c):
            self.step = self.end_value
            return
        state = self.parse_state[-1]
        if state == _OBJECT_KEY:
            if c == ord(":"):
                self.parse_state[-1] = _OBJECT_VALUE
                self.step = self.begin_value
                return
            self.error(c, "after object key")
        elif state == _OBJECT_VALUE:
            if c == ord(","):
                self.parse_state[-1] = _OBJECT_KEY
                self.step = self.begin_string
                return
            if c == ord("}"):
                self.pop()
                return
            self.error(c, "after object key:value pair")
        else:
            if c == ord(","):
                self.step = self.begin_value
                return
            if c == ord("]"):
                self.pop()
                return
            self.error(c, "after array element")

    def end_top_state(self, c: int) -> None:  # stateEndTop
        if not _is_space(c):
            self.error(c, "after top-level value")

    # ---------------------------------------------------------------- strings

    def in_string(self, c: int) -> None:  # stateInString
        if c == ord('"'):
            self.step = self.end_value
        elif c == ord("\\"):
            self.step = self.in_string_esc
        elif c < 0x20:
            self.error(c, "in string literal")

    def in_string_esc(self, c: int) -> None:  # stateInStringEsc
        if c in b'bfnrt\\/"':
            self.step = self.in_string
        elif c == ord("u"):
            self.step = self.hex_digit(4)
        else:
            self.error(c, "in string escape code")

    def hex_digit(self, left: int) -> _Step:  # stateInStringEscU, ...U1, ...U12, ...U123
        def step(c: int) -> None:
            if c not in _HEX:
                self.error(c, "in \\u hexadecimal character escape")
            self.step = self.hex_digit(left - 1) if left > 1 else self.in_string

        return step

    # ---------------------------------------------------------------- numbers

    def neg(self, c: int) -> None:  # stateNeg
        if c == ord("0"):
            self.step = self.zero
        elif 0x31 <= c <= 0x39:
            self.step = self.one
        else:
            self.error(c, "in numeric literal")

    def one(self, c: int) -> None:  # state1
        if _is_digit(c):
            self.step = self.one
            return
        self.zero(c)

    def zero(self, c: int) -> None:  # state0
        if c == ord("."):
            self.step = self.dot
        elif c in b"eE":
            self.step = self.exponent
        else:
            self.end_value(c)

    def dot(self, c: int) -> None:  # stateDot
        if _is_digit(c):
            self.step = self.dot0
            return
        self.error(c, "after decimal point in numeric literal")

    def dot0(self, c: int) -> None:  # stateDot0
        if _is_digit(c):
            return
        if c in b"eE":
            self.step = self.exponent
            return
        self.end_value(c)

    def exponent(self, c: int) -> None:  # stateE
        if c in b"+-":
            self.step = self.exponent_sign
            return
        self.exponent_sign(c)

    def exponent_sign(self, c: int) -> None:  # stateESign
        if _is_digit(c):
            self.step = self.exponent0
            return
        self.error(c, "in exponent of numeric literal")

    def exponent0(self, c: int) -> None:  # stateE0
        if _is_digit(c):
            return
        self.end_value(c)

    # ---------------------------------------------------------------- true, false, null

    def literal(self, word: str, at: int) -> _Step:  # stateT, stateTr, ... stateNul
        def step(c: int) -> None:
            if c != ord(word[at]):
                self.error(c, f"in literal {word} (expecting {word[at]!r})")
            self.step = self.literal(word, at + 1) if at + 1 < len(word) else self.end_value

        return step


def syntax_error(text: str) -> str | None:
    """The error ``json.Unmarshal`` returns for text before it decodes anything (``checkValid``),
    or None when Go's scanner accepts it."""
    scanner = _Scanner()
    try:
        for c in _SURROGATE.sub("\ufffd", text).encode("utf-8"):
            scanner.step(c)
        scanner.eof()
    except _SyntaxError as error:
        return str(error)
    return None


def flatten_below(text: str, depth: int) -> str:
    """Valid JSON (``syntax_error`` found none) with every array or object nested deeper than
    ``depth`` emptied (``[]``, ``{}``), keeping its kind: what a decoder into a fixed Go type
    looks at, without the nesting (up to ``MAX_DEPTH``) that Python's recursive ``json``
    cannot take. Linear; strings are copied as they are."""
    out: list[str] = []
    level = 0
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c == '"':  # a string: copy it whole, escapes included
            j = i + 1
            while text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            if level <= depth:
                out.append(text[i : j + 1])
            i = j + 1
            continue
        if c in "[{":
            level += 1
            if level <= depth + 1:
                out.append(c)
        elif c in "]}":
            if level <= depth + 1:
                out.append(c)
            level -= 1
        elif level <= depth:
            out.append(c)
        i += 1
    return "".join(out)
