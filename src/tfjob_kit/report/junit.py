"""JUnit XML: a test suite per file, a test case per document.

A document fails when it has findings at or above the fail level; skipped documents are skipped
test cases; lower findings go to system-out.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from itertools import groupby

from tfjob_kit.findings import Severity
from tfjob_kit.validate import Report


def render(report: Report, fail_on: Severity) -> str:
    suites = ET.Element("testsuites", name="tfjob-kit validate")
    total = failures = skipped = 0
    for source, group in groupby(report.results, key=lambda r: r.source):
        results = list(group)
        suite = ET.SubElement(suites, "testsuite", name=source)
        suite_failures = suite_skipped = 0
        for result in results:
            label = f"document {result.index}: {result.kind or 'unknown'} {result.name}".strip()
            case = ET.SubElement(suite, "testcase", name=label, classname=source)
            if result.skipped is not None:
                ET.SubElement(case, "skipped", message=result.skipped)
                suite_skipped += 1
                continue
            failing = [f for f in result.findings if f.severity >= fail_on]
            other = [f for f in result.findings if f.severity < fail_on]
            if failing:
                suite_failures += 1
                failure = ET.SubElement(
                    case,
                    "failure",
                    type=failing[0].rule,
                    message=f"{len(failing)} finding(s) at or above {fail_on}",
                )
                failure.text = "\n".join(
                    f"{f.path}: [{f.rule}] {f.severity}: {f.message}" for f in failing
                )
            if other:
                out = ET.SubElement(case, "system-out")
                out.text = "\n".join(
                    f"{f.path}: [{f.rule}] {f.severity}: {f.message}" for f in other
                )
        suite.set("tests", str(len(results)))
        suite.set("failures", str(suite_failures))
        suite.set("skipped", str(suite_skipped))
        suite.set("errors", "0")
        total += len(results)
        failures += suite_failures
        skipped += suite_skipped
    suites.set("tests", str(total))
    suites.set("failures", str(failures))
    suites.set("skipped", str(skipped))
    suites.set("errors", "0")
    ET.indent(suites)
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(suites, encoding="unicode") + "\n"
    )
