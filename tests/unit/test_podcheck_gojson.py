"""podcheck.gojson: Go's JSON syntax errors. The expected texts are what Go's encoding/json
returned for each input; tests/integration/test_podcheck_pod.py compares the annotation's
errors with the API server's."""

from __future__ import annotations

import pytest

from tfjob_kit.podcheck.gojson import MAX_DEPTH, flatten_below, syntax_error

GO = [
    ("not json", "invalid character 'o' in literal null (expecting 'u')"),
    ('[{"a":1,}]', "invalid character '}' looking for beginning of object key string"),
    ("[']", "invalid character '\\'' looking for beginning of value"),
    ('"abc', "unexpected end of JSON input"),
    ("", "unexpected end of JSON input"),
    ("[1] [", "invalid character '[' after top-level value"),
    ("[1.]", "invalid character ']' after decimal point in numeric literal"),
    ("[-x]", "invalid character 'x' in numeric literal"),
    ("[1e+]", "invalid character ']' in exponent of numeric literal"),
    ('{"a" 1}', "invalid character '1' after object key"),
    ('{"a":1 "b"}', "invalid character '\"' after object key:value pair"),
    ("{1:2}", "invalid character '1' looking for beginning of object key string"),
    ("[1 2]", "invalid character '2' after array element"),
    ("[nul]", "invalid character ']' in literal null (expecting 'l')"),
    ("[falsy]", "invalid character 'y' in literal false (expecting 'e')"),
    ('["\x01"]', "invalid character '\\x01' in string literal"),
    ("[\x7f]", "invalid character '\\x7f' looking for beginning of value"),
    ("[\u0085]", "invalid character 'Â' looking for beginning of value"),  # the byte 0xC2
    ('["\\u12G4"]', "invalid character 'G' in \\u hexadecimal character escape"),
    ('["\\q"]', "invalid character 'q' in string escape code"),
    ("[NaN]", "invalid character 'N' looking for beginning of value"),
    ("[" * (MAX_DEPTH + 1), "invalid character '[' exceeded max depth"),
]


@pytest.mark.parametrize(("text", "error"), GO)
def test_syntax_errors_as_go_words_them(text: str, error: str) -> None:
    assert syntax_error(text) == error


@pytest.mark.parametrize(
    "text",
    [
        '[{"key": "k", "operator": "Exists", "value": "\\u00e9\\n\\/", "n": -1.5E+3}]',
        " null ",
        "[]",
        "{}",
        '"\ud800"',  # a lone surrogate: U+FFFD to Go
        "[" * MAX_DEPTH + "]" * MAX_DEPTH,
    ],
)
def test_what_go_accepts(text: str) -> None:
    assert syntax_error(text) is None


@pytest.mark.parametrize(
    ("text", "flat"),
    [
        ('[{"key": "a]\\"[", "v": [[[1]]]}]', '[{"key": "a]\\"[", "v": [[]]}]'),
        ('{"a": {"b": {"c": {"d": "}"}}}}', '{"a": {"b": {"c": {}}}}'),
        ("[1, [2, [3, [4, [5]]]]]", "[1, [2, [3, []]]]"),
        ('[{"k": "v"}]', '[{"k": "v"}]'),
        ("[" * MAX_DEPTH + "]" * MAX_DEPTH, "[[[[]]]]"),
    ],
)
def test_flatten_below_empties_only_what_is_deeper(text: str, flat: str) -> None:
    assert syntax_error(text) is None
    assert flatten_below(text, 3) == flat
