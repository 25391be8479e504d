"""The generator of the differential test (tests/podcases): enough cases, every mutation the
primary one of a case, reproducible, and base jobs that pass offline validation as generated."""

from __future__ import annotations

import json

from podcases import JOB_MUTATIONS, NONE, all_mutations, base_job, generate
from tfjob_kit.findings import Severity
from tfjob_kit.validate import check_object


def test_every_mutation_is_the_primary_one_of_a_case_and_the_cases_repeat() -> None:
    cases = generate()
    assert len(cases) >= 500
    names = {name for name, _ in all_mutations()} | {f"job: {NONE.name}"}
    assert {c.mutation for c in cases} == names
    assert len({m.name for m in JOB_MUTATIONS}) == len(JOB_MUTATIONS)
    again = generate()
    assert [json.dumps(c.job, sort_keys=True) for c in cases] == [
        json.dumps(c.job, sort_keys=True) for c in again
    ]


def test_unmutated_base_jobs_have_no_errors() -> None:
    import random

    rng = random.Random(3)
    for index in range(200):
        job = base_job(rng, f"b{index}")
        errors = [f for f in check_object(job) if f.severity is Severity.ERROR]
        assert errors == [], (job, errors)
