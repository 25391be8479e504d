"""Pathological input through the loader, the CLI and the Ansible module's offline step: every
one ends in a located finding (never a traceback), at 20,000 characters and at 3 MiB.

How long they take, and how that grows with the size, is bench/bad_input_bench.py's to measure
(beside PyYAML's CSafeLoader on the same texts); no test here asserts a speed. The 3 MiB cases
run in a child process each, under a memory bound (``RLIMIT_AS``: what the input may take beyond
the loaded program) and a hang guard: a loader gone quadratic again (80,000 underscores once
took 22 s) would take hours on them, and a rule that builds something per replica (100 million
replicas once took 9.9 GB) runs out of the bound; either fails with a message naming the case
instead of ending the run."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tfjob_kit import quantity
from tfjob_kit.cli import main
from tfjob_kit.kube import jobs
from tfjob_kit.manifests import DEFAULT_LIMITS, load_path, load_text
from tfjob_kit.validate import Report, validate_documents

JOB = (
    "apiVersion: kubeflow.org/v1\nkind: TFJob\nmetadata:\n  name: {name}\nspec:\n"
    "  tfReplicaSpecs:\n    Worker:\n      replicas: {replicas}\n      template:\n"
    "        spec:\n          containers:\n          - name: tensorflow\n"
    "            image: tf:1\n            resources: {{limits: {{cpu: {cpu}}}}}\n"
)


def job(name: str = "ok", replicas: str = "1", cpu: str = "1", extra: str = "") -> str:
    return JOB.format(name=name, replicas=replicas, cpu=cpu) + extra


def run_of(unit: str, size: int) -> str:
    return unit * max(1, size // len(unit))


# Each case makes a text of about `size` characters. Runs go in values, in keys, in numbers, in
# flow nesting and in documents; "# &" sends a text the careful (PyYAML) way.
CASES: dict[str, Callable[[int], str]] = {
    "underscores in a value": lambda n: job(name=run_of("_", n) + "x"),
    "underscores, careful path": lambda n: job(name=run_of("_", n) + "x", extra="# &\n"),
    "digits and underscores": lambda n: job(name=run_of("1_", n) + "x"),
    "dots and underscores": lambda n: job(name=run_of("._", n)),
    "zeros in a value": lambda n: job(name=run_of("0", n) + "x"),
    "dots in a value": lambda n: job(name="1" + run_of(".", n)),
    "colons in a value": lambda n: job(name=run_of(":", n) + "x"),
    "base-60 number": lambda n: job(name="1" + run_of(":59", n)),
    "base-60 float": lambda n: job(name="0" + run_of(":0", n) + ".5"),
    "double quotes": lambda n: job(name='"' + run_of('\\"', n) + '"'),
    "single quotes": lambda n: job(name="'" + run_of("''", n) + "'"),
    "spaces in a value": lambda n: job(name="a" + run_of(" ", n) + "b"),
    "underscores in a key": lambda n: job(extra="  " + run_of("_", n) + "x: 1\n"),
    "spaces and colons in a key": lambda n: job(extra="  " + run_of("a :", n) + "x: 1\n"),
    "quotes in a key": lambda n: job(extra='  "' + run_of("'", n) + '": 1\n'),
    "huge integer": lambda n: job(replicas=run_of("9", n)),
    "huge octal integer": lambda n: job(replicas="0" + run_of("7", n)),
    "huge quantity": lambda n: job(cpu=run_of("9", n)),
    "huge quoted quantity": lambda n: job(cpu='"' + run_of("9", n) + '"'),
    "huge exponent": lambda n: job(cpu="1.0e+" + run_of("9", n)),
    "deep flow sequences": lambda n: "a: " + run_of("[", n),
    "deep closed flow sequences": lambda n: "a: " + run_of("[", n // 2) + run_of("]", n // 2),
    "deep flow mappings": lambda n: "a: " + run_of("{a: ", n),
    "deep block sequences": lambda n: "a:\n" + run_of("- ", n) + "x\n",
    "many documents": lambda n: run_of("a: [\n---\n", n),
    "many valid documents": lambda n: run_of("a: 1\n---\n", n),
    "many empty documents": lambda n: run_of("---\n", n),
    "NUL bytes": lambda n: job(name="a" + run_of("\x00", n)),
    # A count, not a text, that grows: 1 million replicas at 20,000, 157 million at 3 MiB.
    "many replicas": lambda n: job(replicas=str(n * 50)),
}
# Inputs that are fine as YAML and as Kubernetes objects at 20,000 characters, so no finding is
# right for them (the API server caps a quantity string at 2**63 - 1; non-TFJob documents are
# skipped). At 3 MiB the empty and the valid documents are over the 20,000-document limit.
NO_FINDING = {"many empty documents", "many valid documents", "huge quoted quantity"}
NO_FINDING_AT_3_MIB = {"huge quoted quantity"}


def check_located(report: Report, case: str, fine: set[str] = NO_FINDING) -> None:
    assert report.results or case in fine, case
    check_findings([f.as_dict() for f in report.findings], case, fine)


def check_findings(findings: list[dict[str, Any]], case: str, fine: set[str]) -> None:
    if case in fine:
        assert findings == [], (case, findings[:3])
        return
    assert findings, case
    for finding in findings:
        assert finding["file"] == "bad.yaml" and finding["document"] >= 1
        assert finding["path"].startswith("$") and finding["message"]
        assert "None" not in finding["message"] and "Traceback" not in finding["message"]
        assert len(finding["message"]) < 1000, finding["message"][:200]


def validate(text: str) -> Report:
    return validate_documents(load_text(text, "bad.yaml"))


@pytest.mark.parametrize("case", sorted(CASES))
def test_ends_in_a_located_finding(case: str) -> None:
    check_located(validate(CASES[case](20_000)), case)


# A hang guard, not a speed claim: the slowest case takes about 5 s on a 2-core machine.
HANG_SECONDS = 300
# What one input may take beyond the loaded program, as address space: the largest case needs
# about 250 MB; building every pod's TF_CONFIG for "many replicas" would need hundreds of GB.
MEMORY_BOUND = 768 * 1024 * 1024
# 3 MiB, just under the per-document limit so that every byte is really parsed.
THREE_MIB = DEFAULT_LIMITS.max_document_bytes - 1000

# Validates the file argv[1] as ``tfjob-kit validate`` does, once the program is loaded and its
# address space bounded to what it holds plus argv[2] bytes; prints the findings as JSON.
_BOUNDED_CHILD = """
import json, resource, sys
from tfjob_kit.manifests import load_path
from tfjob_kit.validate import validate_documents
def address_space():
    for line in open("/proc/self/status"):
        if line.startswith("VmSize:"):
            return int(line.split()[1]) * 1024
bound = address_space() + int(sys.argv[2])
resource.setrlimit(resource.RLIMIT_AS, (bound, bound))
report = validate_documents(load_path(sys.argv[1]))
print(json.dumps([f.as_dict() for f in report.findings]))
"""


def validate_bounded(text: str, where: Path, what: str) -> list[dict[str, Any]]:
    """The findings of ``text``, validated in a child process under MEMORY_BOUND and
    HANG_SECONDS; a test failure naming ``what`` when the child runs out of either."""
    path = where / "bad.yaml"
    path.write_text(text, encoding="utf-8")
    try:
        child = subprocess.run(
            [sys.executable, "-c", _BOUNDED_CHILD, str(path), str(MEMORY_BOUND)],
            capture_output=True,
            text=True,
            timeout=HANG_SECONDS,
            cwd=where,
            env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
            check=False,
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"{what} had not ended after {HANG_SECONDS}s: it hangs", pytrace=False)
    if child.returncode != 0:
        bound = "out of its memory bound" if "MemoryError" in child.stderr else "a crash"
        pytest.fail(f"{what}: {bound}\n{child.stderr[-2000:]}", pytrace=False)
    findings: list[dict[str, Any]] = json.loads(child.stdout)
    for finding in findings:
        finding["file"] = Path(finding["file"]).name
    return findings


def test_the_bound_fails_an_input_that_takes_too_much(tmp_path: Path) -> None:
    # 40 million addresses listed, as the rules once did for a TF_CONFIG: far over the bound.
    text = job(replicas="40000000")
    child = _BOUNDED_CHILD.replace(
        "report = validate_documents(load_path(sys.argv[1]))",
        "report = validate_documents(load_path(sys.argv[1]))\n"
        "hosts = [f'resnet-worker-{i}.ml.svc:2222' for i in range(40_000_000)]",
    )
    path = tmp_path / "job.yaml"
    path.write_text(text)
    done = subprocess.run(
        [sys.executable, "-c", child, str(path), str(MEMORY_BOUND)],
        capture_output=True,
        text=True,
        timeout=HANG_SECONDS,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
        check=False,
    )
    assert done.returncode != 0 and "MemoryError" in done.stderr, done.stderr[-500:]


@pytest.mark.parametrize("case", sorted(CASES))
def test_three_mebibytes_end_in_a_located_finding(case: str, tmp_path: Path) -> None:
    text = CASES[case](THREE_MIB)
    if case != "many replicas":
        assert THREE_MIB - 100 <= len(text) <= DEFAULT_LIMITS.max_document_bytes, len(text)
    findings = validate_bounded(text, tmp_path, f"validating 3 MiB of {case!r}")
    check_findings(findings, case, NO_FINDING_AT_3_MIB)
    # parsed, not refused for its size
    assert not any("bytes, over the limit" in f["message"] for f in findings), case


def test_many_replicas_are_refused_for_their_tf_config(tmp_path: Path) -> None:
    findings = validate_bounded(job(replicas="100000000"), tmp_path, "100 million replicas")
    assert [(f["rule"], f["path"]) for f in findings] == [
        ("tf-config-too-large", "$.spec.tfReplicaSpecs")
    ]
    # 10**8 addresses '"ok-worker-<i>.default.svc:2222"' (29 bytes and the index's digits,
    # 788,888,890 over all), commas between them, the list's brackets, and 87 bytes of the rest.
    assert "up to 3,788,888,978 bytes per pod" in findings[0]["message"]


def test_cli_reports_located_findings(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for case, make in sorted(CASES.items()):
        path = tmp_path / "bad.yaml"
        path.write_text(make(20_000))
        code = main(["validate", "--format", "json", str(path)])
        out, err = capsys.readouterr()
        assert "Traceback" not in err, case
        if case in NO_FINDING:
            assert code == 0, case
            continue
        assert code == 1, (case, err[-500:])
        results = json.loads(out)["documents"]
        findings = [f for r in results for f in r["findings"]]
        assert findings and all(f["path"].startswith("$") for f in findings), case
        assert all(f["document"] >= 1 for f in findings), case


@pytest.mark.parametrize(
    "data", [b"a: \xff\xfe\n", b"kind: TFJob\n" + b"\x80" * 100_000, b"a: b\n" * 1000 + b"\xc3"]
)
def test_invalid_utf8_is_located(tmp_path: Path, data: bytes) -> None:
    path = tmp_path / "bad.yaml"
    path.write_bytes(data)
    docs = load_path(str(path))
    assert len(docs) == 1 and docs[0].error is not None
    assert "not UTF-8" in docs[0].error.message and docs[0].error.line
    assert main(["validate", str(path)]) == 1


@pytest.mark.parametrize("case", sorted(set(CASES) - NO_FINDING))
def test_module_offline_step_reports_located_problems(case: str) -> None:
    """The tfjob module loads a definition and validates it before any cluster call."""
    docs = jobs.load_input(None, CASES[case](20_000))
    with pytest.raises(jobs.InvalidInputError) as raised:
        jobs.prepare(docs)
    assert raised.value.problems
    for problem in raised.value.problems:
        assert problem.startswith("definition: document "), problem[:200]
        assert "None" not in problem and len(problem) < 1200, problem[:200]


@pytest.mark.parametrize(
    "value",
    [10**5000, -(10**400), float("inf"), float("-inf")],
    ids=["5001 digits", "-401 digits", "inf", "-inf"],
)
def test_module_definition_dict_with_a_huge_number(value: object) -> None:
    """A definition given as a dict skips the loader; its numbers are judged all the same."""
    definition = yaml_job()
    definition["spec"]["tfReplicaSpecs"]["Worker"]["replicas"] = value
    with pytest.raises(jobs.InvalidInputError) as raised:
        jobs.prepare(jobs.load_input(None, definition))
    problems = raised.value.problems
    assert any(
        "$.spec.tfReplicaSpecs.Worker.replicas" in p and "out of range" in p for p in problems
    ), problems
    assert not any("None" in p for p in problems), problems


@pytest.mark.parametrize("key", [1, 1.5, True, None, ("a", 1)], ids=repr)
def test_module_definition_dict_with_a_key_that_is_not_a_string(key: object) -> None:
    """A dict given to the library (jobs.load_input, validate.check_document) skips the loader;
    its keys are judged as the loader judges them (`{1: ...}` crashed the pod-name rule before).
    Through the Ansible module, JSON has already made such a key the string "1"."""
    definition = yaml_job()
    specs = definition["spec"]["tfReplicaSpecs"]
    specs[key] = specs.pop("Worker")
    with pytest.raises(jobs.InvalidInputError) as raised:
        jobs.prepare(jobs.load_input(None, definition))
    (problem,) = raised.value.problems
    assert "$.spec.tfReplicaSpecs" in problem and "is not a string" in problem, problem
    assert repr(key) in problem


def yaml_job() -> dict[str, Any]:
    docs = load_text(job(), "job.yaml")
    assert docs[0].ok
    content: dict[str, Any] = docs[0].content
    return content


@pytest.mark.parametrize("value", ["9" * 5000, "0." + "0" * 5000 + "1", "1e" + "9" * 5000])
def test_long_quantities_are_not_judged_and_do_not_crash(value: str) -> None:
    assert quantity.parse(value) is None
    text = job(cpu="1").replace(
        "resources: {limits: {cpu: 1}}",
        f"resources: {{requests: {{cpu: '{value}'}}, limits: {{cpu: 1}}}}",
    )
    assert validate(text).results[0].loaded
