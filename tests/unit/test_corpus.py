"""The data-driven corpus: every invalid case names the rule and the JSON path it must produce."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tfjob_kit import rules
from tfjob_kit.findings import Severity
from tfjob_kit.validate import validate_paths

CORPUS = Path(__file__).resolve().parent.parent / "data" / "corpus"
EXPECT = re.compile(r"^# expect: (\S+) (\S+)$", re.M)
VALID = sorted((CORPUS / "valid").glob("*.yaml"))
INVALID = sorted((CORPUS / "invalid").glob("*.yaml"))


def test_corpus_is_large_enough() -> None:
    assert len(VALID) + len(INVALID) >= 60
    assert len(VALID) >= 15 and len(INVALID) >= 45


@pytest.mark.parametrize("path", VALID, ids=lambda p: p.stem)
def test_valid_case_has_no_errors(path: Path) -> None:
    report = validate_paths([str(path)])
    errors = [f for f in report.findings if f.severity is Severity.ERROR]
    assert report.checked == 1
    assert errors == []


@pytest.mark.parametrize("path", INVALID, ids=lambda p: p.stem)
def test_invalid_case_reports_rule_at_path(path: Path) -> None:
    expected = EXPECT.findall(path.read_text())
    assert expected, f"{path.name} has no '# expect: RULE PATH' line"
    found = {(f.rule, f.path) for f in validate_paths([str(path)]).findings}
    for rule, json_path in expected:
        assert (rule, json_path) in found, f"expected [{rule}] at {json_path}, got {sorted(found)}"


def test_every_rule_has_a_corpus_case() -> None:
    """Every rule id the offline validator can emit (the registered rules and the loader's,
    schema's and cross-document findings) is expected by an invalid case, and that case produces
    it. The preflight's need a cluster: test_preflight_rules_are_produced_by_the_preflight_tests."""
    known = set(rules.all_rule_ids()) - set(rules.PREFLIGHT)
    expected = {rule for path in INVALID for rule, _ in EXPECT.findall(path.read_text())}
    produced = {f.rule for f in validate_paths([str(path) for path in INVALID]).findings}
    assert sorted(known - expected) == [], "rules that no '# expect:' line in corpus/invalid names"
    assert sorted(expected - known) == [], "'# expect:' lines naming no rule"
    assert sorted(known - produced) == [], "rules that no corpus case produces"


def test_preflight_rules_are_produced_by_the_preflight_tests() -> None:
    """Each rule only the cluster can report is asserted by a test of the preflight (Trainer's,
    in test_trainer.py; Kueue's, in test_kueue.py)."""
    integration = CORPUS.parents[1] / "integration"
    files = ("test_preflight.py", "test_trainer.py", "test_kueue.py")
    tests = "".join((integration / n).read_text() for n in files)
    untested = [r for r in rules.PREFLIGHT if f'"{r}"' not in tests]
    assert untested == [], "preflight rules no integration test asserts"
