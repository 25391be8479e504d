"""The golden snapshot of findings (tests/golden.py): what the offline validation says, for
thousands of inputs, is byte for byte what tests/data/golden/findings.txt holds."""

from __future__ import annotations

import difflib

from golden import SNAPSHOT, snapshot


def test_findings_are_the_golden_snapshot() -> None:
    expected = SNAPSHOT.read_text(encoding="utf-8")
    actual = snapshot()
    if actual != expected:
        diff = difflib.unified_diff(
            expected.splitlines(), actual.splitlines(), "golden", "now", n=0, lineterm=""
        )
        raise AssertionError(
            "the findings differ from the golden snapshot (python tests/golden.py rewrites it,"
            " for a change meant to change what users see):\n" + "\n".join(list(diff)[:60])
        )
