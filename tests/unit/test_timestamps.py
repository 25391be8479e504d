from __future__ import annotations

from typing import Any

import pytest

from tfjob_kit.timestamps import seconds


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("2026-12-02T16:35:59Z", 1796229359.0),
        ("2026-12-02T17:35:59+01:00", 1796229359.0),
        # metav1.MicroTime (an event's eventTime) keeps microseconds.
        ("2026-12-02T16:35:59.250000Z", 1796229359.25),
    ],
)
def test_the_servers_times(value: str, expected: float) -> None:
    assert seconds(value) == expected


@pytest.mark.parametrize("value", [None, "", "yesterday", "2026-13-02T00:00:00Z", 1796229359, {}])
def test_no_time_is_none(value: Any) -> None:
    assert seconds(value) is None
