"""Where each finding came from (``origin``: ``server`` or ``offline``) in the reports, and the
text report's note on a document whose server verdict fell back to the offline predictions.

Pure formatting: the reports are rendered from hand-made findings. That the preflight's findings
carry ``server`` against a real API server is tests/integration/test_validate_server_agrees.py.
"""

from __future__ import annotations

import json

from tfjob_kit.config import RuleConfig
from tfjob_kit.findings import OFFLINE, SERVER, Finding, Severity
from tfjob_kit.report import sarif, structured, text
from tfjob_kit.validate import DocumentResult, Report

POD_PATH = "$.spec.tfReplicaSpecs.Worker.template.spec.containers[0].image"


def _offline_prediction() -> Finding:
    return Finding("server-rejects-pod", Severity.ERROR, "predicted", POD_PATH, "jobs.yaml", 1, 3)


def _server(rule: str = "server-rejects-pod", severity: Severity = Severity.ERROR) -> Finding:
    return Finding(rule, severity, "answered", POD_PATH, "jobs.yaml", 1, 3, origin=SERVER)


def _report(*findings: Finding) -> Report:
    result = DocumentResult("jobs.yaml", 1, 3, "TFJob", "j", findings=list(findings))
    return Report([result])


def test_a_finding_is_offline_unless_told_and_keeps_its_origin() -> None:
    finding = Finding("schema", Severity.ERROR, "bad", "$.spec")
    assert finding.origin == OFFLINE and finding.as_dict()["origin"] == "offline"
    server = _server()
    assert server.as_dict()["origin"] == "server"
    # Placing it in a document and re-levelling it keep where it came from.
    assert server.at("other.yaml", 2, 9).origin == SERVER
    relevelled = RuleConfig(severities={"server-rejects-pod": Severity.WARNING}).apply(server)
    assert relevelled is not None and relevelled.origin == SERVER


def test_json_gives_each_findings_origin() -> None:
    data = json.loads(structured.render(_report(_offline_prediction(), _server()), Severity.ERROR))
    findings = data["documents"][0]["findings"]
    assert [(f["rule"], f["origin"]) for f in findings] == [
        ("server-rejects-pod", "offline"),
        ("server-rejects-pod", "server"),
    ]


def test_sarif_gives_each_results_origin_in_its_properties() -> None:
    log = json.loads(sarif.render(_report(_offline_prediction(), _server()), Severity.ERROR))
    results = log["runs"][0]["results"]
    assert [(r["ruleId"], r["properties"]["origin"]) for r in results] == [
        ("server-rejects-pod", "offline"),
        ("server-rejects-pod", "server"),
    ]
    assert results[1]["properties"]["jsonPath"] == POD_PATH


def test_text_says_when_the_predictions_stand_in_for_the_server() -> None:
    incomplete = _server("preflight-incomplete", Severity.WARNING)
    out = text.render(_report(_offline_prediction(), incomplete), Severity.ERROR)
    lines = out.splitlines()
    assert lines[2] == (
        "jobs.yaml:1: note: the preflight was incomplete, so 1 finding(s) above "
        "(server-rejects-pod) are offline predictions, not the API server's answer"
    )
    assert lines[-1].startswith("1 documents:")


def test_text_has_no_note_without_a_fall_back() -> None:
    # Offline only (no --server), and the server's own answer: nothing to say.
    for report in (_report(_offline_prediction()), _report(_server())):
        out = text.render(report, Severity.ERROR)
        assert "note:" not in out
        assert text.kept_predictions(report.results[0].findings) == []
    # Offline findings of other rules beside the server's are not predictions of it.
    other = Finding("image-latest", Severity.WARNING, "latest", POD_PATH, "jobs.yaml", 1, 3)
    assert text.kept_predictions([other, _server()]) == []
