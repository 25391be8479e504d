"""The golden snapshot of findings: every finding the offline validation gives, with its rule,
severity, origin, JSON path, message and place in the order, for thousands of inputs.

The redesigns of the validation's code (podcheck, the rules, the CLI seam) must keep the
snapshot byte-identical: ``tests/unit/test_golden.py`` regenerates it and compares it with
``tests/data/golden/findings.txt``. Regenerate the file only for a change that means to change
what users see (``python tests/golden.py``), and say so in the commit.

The inputs:

* the differential suite's generated TFJobs (``podcases.generate``, every mutation of every
  area the primary one of a case, valid ones among them), ``CASES`` of them;
* every template mutation on every replica of one fixed base job, so each check is reached
  alone;
* the corpus (``tests/data/corpus``) and the example jobs, read from their files as the CLI
  reads them (loader findings and source lines included).
"""

from __future__ import annotations

import copy
import random
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
SNAPSHOT = ROOT / "tests" / "data" / "golden" / "findings.txt"
CASES = 2400
FILES = ("tests/data/corpus", "examples/tfjobs", "examples/gang")

if str(ROOT / "tests") not in sys.path:  # run as a script: podcases sits beside this file
    sys.path.insert(0, str(ROOT / "tests"))

from podcases import area_mutations, base_job, generate  # noqa: E402
from tfjob_kit.findings import Finding  # noqa: E402
from tfjob_kit.validate import check_object, validate_paths  # noqa: E402


def line(source: str, finding: Finding) -> str:
    place = f"{finding.document}:{finding.line}:{finding.column}" if finding.line else ""
    message = finding.message.replace("\\", "\\\\").replace("\n", "\\n").replace("\t", "\\t")
    return "\t".join(
        (source, place, finding.rule, str(finding.severity), finding.origin, finding.path, message)
    )


def _objects() -> Iterator[tuple[str, dict[str, Any]]]:
    for case in generate(count=CASES):
        yield f"{case.id} {' + '.join(case.mutations)}", case.job
    base = base_job(random.Random(5), "golden")
    for area, mutations in area_mutations().items():
        for mutation in mutations:
            for key in sorted(base["spec"]["tfReplicaSpecs"]):
                job = copy.deepcopy(base)
                mutation.mutate(job["spec"]["tfReplicaSpecs"][key]["template"])
                yield f"base {key} {area}: {mutation.name}", job


def snapshot() -> str:
    """The snapshot's text: a line per finding (an input with none gets a line saying so)."""
    out: list[str] = []
    for source, job in _objects():
        found = check_object(job)
        if found:
            out.extend(line(source, f) for f in found)
        else:
            out.append(f"{source}\t(none)")
    paths = sorted(str(p.relative_to(ROOT)) for d in FILES for p in (ROOT / d).rglob("*.y*ml"))
    for result in validate_paths([str(ROOT / p) for p in paths]).results:
        source = str(Path(result.source).relative_to(ROOT))
        if result.findings:
            out.extend(line(source, f) for f in result.findings)
        else:
            out.append(f"{source}\t{result.index}\t({result.skipped or 'none'})")
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    SNAPSHOT.parent.mkdir(parents=True, exist_ok=True)
    SNAPSHOT.write_text(snapshot(), encoding="utf-8")
    print(f"wrote {SNAPSHOT.relative_to(ROOT)}")
