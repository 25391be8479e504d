"""The CLI contract other tools rely on: exit codes, formats, locations."""

from __future__ import annotations

import io
import json
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
import yaml

from tfjob_kit.cli import main

DATA = Path(__file__).resolve().parent.parent / "data"
GOOD = DATA / "corpus" / "valid" / "ps-worker.yaml"
BAD = DATA / "corpus" / "invalid" / "image-latest.yaml"  # a warning only
ERR = DATA / "corpus" / "invalid" / "no-tensorflow-container.yaml"


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def test_exit_codes(capsys: pytest.CaptureFixture[str]) -> None:
    assert run(capsys, "validate", str(GOOD))[0] == 0
    assert run(capsys, "validate", str(BAD))[0] == 0
    assert run(capsys, "validate", "--fail-on", "warning", str(BAD))[0] == 1
    assert run(capsys, "validate", str(ERR))[0] == 1
    code, _, err = run(capsys, "validate", "/no/such/file.yaml")
    assert code == 2 and "no such file" in err
    with pytest.raises(SystemExit) as exc:
        main(["validate"])
    assert exc.value.code == 2


def test_malformed_yaml_is_a_finding(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = tmp_path / "broken.yaml"
    path.write_text("kind: TFJob\nmetadata: {name: x\n")
    code, out, _ = run(capsys, "validate", str(path))
    assert code == 1
    assert out.startswith(
        f"{path}:1:$: [yaml-syntax] error: line 3, column 1: while parsing a "
        "flow mapping: did not find expected ',' or '}'"
    )
    assert "1 documents: 0 TFJobs checked, 0 skipped, 1 unreadable; 1 errors" in out


def test_text_format_lines(capsys: pytest.CaptureFixture[str]) -> None:
    _, out, _ = run(capsys, "validate", str(ERR))
    first = out.splitlines()[0]
    assert first.startswith(
        f"{ERR}:1:$.spec.tfReplicaSpecs.Worker.template.spec.containers: "
        "[tensorflow-container-missing] error: "
    )
    assert out.splitlines()[-1].startswith("1 documents: 1 TFJobs checked, 0 skipped; 1 errors")


def test_stdin_and_skipped(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    text = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n---\n" + GOOD.read_text()
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(text.encode())))
    code, out, _ = run(capsys, "validate", "-")
    assert code == 0
    assert "-:1: skipped: ConfigMap v1" in out


def test_json_format(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "validate", "--format", "json", str(ERR), str(GOOD))
    data = json.loads(out)
    assert code == 1 and data["failed"] is True
    assert data["summary"]["documents"] == 2 and data["summary"]["errors"] == 1
    finding = data["documents"][0]["findings"][0]
    assert finding["rule"] == "tensorflow-container-missing" and finding["document"] == 1


def test_sarif_format(capsys: pytest.CaptureFixture[str]) -> None:
    _, out, _ = run(capsys, "validate", "--format", "sarif", str(ERR))
    log = json.loads(out)
    assert log["version"] == "2.1.0"
    run0 = log["runs"][0]
    rule_ids = [r["id"] for r in run0["tool"]["driver"]["rules"]]
    (result,) = run0["results"]
    assert rule_ids[result["ruleIndex"]] == result["ruleId"] == "tensorflow-container-missing"
    assert result["level"] == "error"
    location = result["locations"][0]["physicalLocation"]
    assert location["artifactLocation"]["uri"] == str(ERR)
    assert location["region"]["startLine"] >= 1


def test_junit_format(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    report = tmp_path / "report.xml"
    code, out, err = run(
        capsys,
        "validate",
        "--format",
        "junit",
        "-o",
        str(report),
        str(ERR),
        str(GOOD),
        str(DATA / "seeds" / "seed003-volcano-job.yaml"),
    )
    assert code == 1 and out == "" and "3 documents" in err
    root = ET.fromstring(report.read_text())
    assert (root.get("tests"), root.get("failures"), root.get("skipped")) == ("3", "1", "1")
    failure = root.find(".//failure")
    assert failure is not None and failure.get("type") == "tensorflow-container-missing"


def test_rule_configuration(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert run(capsys, "validate", "--disable", "tensorflow-container-missing", str(ERR))[0] == 0
    code, out, _ = run(
        capsys, "validate", "--severity", "tensorflow-container-missing=info", str(ERR)
    )
    assert code == 0 and "[tensorflow-container-missing] info:" in out
    config = tmp_path / ".tfjob-kit.yaml"
    config.write_text("rules:\n  image-latest: error\n")
    monkeypatch.chdir(tmp_path)
    assert run(capsys, "validate", str(BAD))[0] == 1
    assert run(capsys, "validate", "--disable", "image-latest", str(BAD))[0] == 0
    code, _, err = run(capsys, "validate", "--disable", "no-such-rule", str(BAD))
    assert code == 2 and "unknown rule 'no-such-rule'" in err
    config.write_text("rules:\n  image-latest: loud\n")
    code, _, err = run(capsys, "validate", str(BAD))
    assert code == 2 and "unknown severity 'loud'" in err


def test_explain(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "explain", "--format", "json", str(GOOD))
    plan = json.loads(out)
    assert code == 0 and plan["job"] == "mnist" and plan["namespace"] == "ml"
    worker = plan["replicas"][1]
    assert json.loads(worker["pods"][1]["tf_config"])["task"] == {"type": "worker", "index": 1}
    code, out, _ = run(capsys, "explain", str(DATA / "seeds" / "seed001-v1beta1-master-gpu.yaml"))
    assert code == 0 and "TF_CONFIG: not set" in out and "example-tfjob-master-0" in out


def test_convert_reports_what_it_drops(capsys: pytest.CaptureFixture[str]) -> None:
    seed = DATA / "seeds" / "seed004-t9k-tensorflowtrainingjob.yaml"
    code, out, err = run(capsys, "convert", str(seed))
    assert code == 0
    (job,) = yaml.safe_load_all(out)
    assert job["kind"] == "TFJob" and job["spec"]["tfReplicaSpecs"]["Worker"]["replicas"] == 4
    assert "$.spec.tensorboardSpec: [convert] dropped:" in err
    assert run(capsys, "convert", "--strict", str(seed))[0] == 1


def test_convert_to_volcano_passes_other_kinds_through(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(
        capsys, "convert", "--to", "volcano", str(DATA / "seeds" / "seed003-volcano-podgroup.yaml")
    )
    kinds = [d["kind"] for d in yaml.safe_load_all(out)]
    assert code == 0 and kinds == ["PodGroup", "Job"]
    assert "passed through unchanged" in err


def test_schema_and_rules_commands(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "schema", "crd")
    crd = yaml.safe_load(out)
    assert code == 0 and crd["metadata"]["name"] == "tfjobs.kubeflow.org"
    code, out, _ = run(capsys, "rules", "--format", "json")
    ids = [r["id"] for r in json.loads(out)]
    assert "tensorflow-container-missing" in ids and "schema" in ids


def test_output_refuses_a_symbolic_link(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """A planted link must not make `-o` overwrite what it points to (a CI checkout of a pull
    request); the file stays as it was."""
    precious = tmp_path / "precious"
    precious.write_text("keep me\n")
    link = tmp_path / "report.txt"
    link.symlink_to(precious)
    code, _, err = run(capsys, "validate", str(GOOD), "-o", str(link))
    assert code == 2 and "a symbolic link" in err and str(precious) in err
    assert precious.read_text() == "keep me\n"
    plain = tmp_path / "plain.txt"
    assert run(capsys, "validate", str(GOOD), "-o", str(plain))[0] == 0
    assert plain.read_text().startswith("1 documents: 1 TFJobs checked")


def test_output_to_dev_stdout_still_works(capfd: pytest.CaptureFixture[str]) -> None:
    assert main(["validate", str(GOOD), "-o", "/dev/stdout"]) == 0
    out, _ = capfd.readouterr()
    assert "1 documents: 1 TFJobs checked" in out


def test_text_report_escapes_what_a_terminal_would_act_on(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """A key or value with an escape sequence, a line break or a bidi override is shown
    escaped: it cannot recolour, clear or reorder the terminal the report is read on."""
    job = yaml.safe_load(GOOD.read_text())
    job["metadata"]["name"] = "x\x1b[31mred"
    template = job["spec"]["tfReplicaSpecs"]["Worker"]["template"]
    template.setdefault("metadata", {})["labels"] = {"a\x1b[2J\u202eb": "v\nw"}
    path = tmp_path / "job.json"
    path.write_text(json.dumps(job))
    code, out, _ = run(capsys, "validate", str(path))
    assert code == 1
    assert "\x1b" not in out and "\u202e" not in out and len(out.splitlines()) >= 3
    assert "x\\x1b[31mred" in out
    assert all(line.startswith((str(path), "1 documents")) for line in out.splitlines())


def test_an_exponent_with_thousands_of_leading_zeros_is_read_not_a_traceback(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """`cpu: 1e000...05` (5,000 zeros) is 1e5 to Go's ParseInt; Python's int() refuses a string
    of more than 4,300 digits, which ended the whole run with a traceback (issue 24, 11)."""
    job = yaml.safe_load(GOOD.read_text())
    container = job["spec"]["tfReplicaSpecs"]["Worker"]["template"]["spec"]["containers"][0]
    container["resources"] = {"limits": {"cpu": "1e" + "0" * 5000 + "5"}}
    path = tmp_path / "job.yaml"
    path.write_text(yaml.safe_dump(job))
    code, out, _ = run(capsys, "validate", str(path))
    assert code == 0, out
    assert out.startswith("1 documents: 1 TFJobs checked")


@pytest.mark.parametrize("fmt", ["text", "json", "sarif", "junit"])
def test_a_secret_env_value_that_is_a_mapping_is_never_shown(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, fmt: str
) -> None:
    """The schema refuses a mapping or list as an env value, and its finding quotes the value:
    a secret-named entry's strings are masked in every format (issue 24, finding 13)."""
    job = yaml.safe_load(GOOD.read_text())
    container = job["spec"]["tfReplicaSpecs"]["Worker"]["template"]["spec"]["containers"][0]
    container["env"] = [
        {"name": "DB_PASSWORD", "value": {"nested": "hunter2hunter2"}},
        {"name": "API_TOKEN", "value": ["tok-123456789"]},
    ]
    path = tmp_path / "job.yaml"
    path.write_text(yaml.safe_dump(job))
    code, out, _ = run(capsys, "validate", "--format", fmt, str(path))
    assert code == 1
    assert "env" in out and "hunter2hunter2" not in out and "tok-123456789" not in out
