"""Thousands of random documents through the whole pipeline: no crash, every finding well-formed
(rule id known, path a JSONPath). No test here times them (hypothesis runs without a deadline);
bench/bad_input_bench.py measures the loader on pathological input."""

from __future__ import annotations

import contextlib
import copy
from pathlib import Path
from typing import Any

import yaml
from hypothesis import given
from hypothesis import strategies as st

from tfjob_kit import convert, explain, rules
from tfjob_kit.manifests import load_text
from tfjob_kit.validate import Report, validate_documents

VALID = [
    yaml.safe_load(p.read_text())
    for p in sorted(
        (Path(__file__).resolve().parent.parent / "data" / "corpus" / "valid").glob("*.yaml")
    )
]
json_values = st.recursive(
    st.one_of(
        st.none(),
        st.booleans(),
        st.integers(-(2**70), 2**70),
        st.text(max_size=20),
        st.floats(allow_nan=False),
        st.sampled_from(
            [
                "Worker",
                "PS",
                "Chief",
                "tensorflow",
                "nvidia.com/gpu",
                "ExitCode",
                "None",
                "500m",
                "1Gi",
                "latest",
                "<IMAGE>",
                "TF_CONFIG",
                "AllWorkers",
                "-1",
                "",
            ]
        ),
    ),
    lambda children: st.one_of(
        st.lists(children, max_size=4),
        st.dictionaries(
            st.sampled_from(
                [
                    "replicas",
                    "template",
                    "spec",
                    "containers",
                    "name",
                    "image",
                    "env",
                    "resources",
                    "limits",
                    "requests",
                    "restartPolicy",
                    "runPolicy",
                    "ports",
                    "metadata",
                    "Worker",
                    "PS",
                    "Chief",
                    "x",
                ]
            )
            | st.text(max_size=8),
            children,
            max_size=4,
        ),
    ),
    max_leaves=12,
)


def mutate(document: Any, choices: list[int], value: Any) -> Any:
    """Replace the node reached by following `choices` through the tree with `value`."""
    document = copy.deepcopy(document)
    parent: Any = None
    key: Any = None
    node = document
    for choice in choices:
        if isinstance(node, dict) and node:
            parent, key = node, list(node)[choice % len(node)]
        elif isinstance(node, list) and node:
            parent, key = node, choice % len(node)
        else:
            break
        node = parent[key]
    if parent is None:
        return value
    parent[key] = value
    return document


def check(report: Report) -> None:
    known = set(rules.all_rule_ids())
    for finding in report.findings:
        assert finding.rule in known
        assert finding.path.startswith("$")
        assert finding.message


@given(
    base=st.sampled_from(VALID),
    mutations=st.lists(
        st.tuples(st.lists(st.integers(0, 50), max_size=9), json_values), min_size=1, max_size=4
    ),
)
def test_mutated_tfjobs(base: dict[str, Any], mutations: list[tuple[list[int], Any]]) -> None:
    document = base
    for choices, value in mutations:
        document = mutate(document, choices, value)
    text = yaml.safe_dump(document) if isinstance(document, dict) else yaml.safe_dump({"x": 1})
    report = validate_documents(load_text(text, "fuzz.yaml"))
    check(report)
    if isinstance(document, dict):
        with contextlib.suppress(explain.ExplainError):  # more pods than explain lists
            explain.plan(document)
        with contextlib.suppress(convert.ConversionError):
            convert.to_volcano(document)


@given(text=st.text(max_size=400))
def test_random_text(text: str) -> None:
    check(validate_documents(load_text(text, "fuzz.yaml")))


@given(
    parts=st.lists(
        st.sampled_from(
            [
                "apiVersion: kubeflow.org/v1\n",
                "kind: TFJob\n",
                "metadata:\n",
                "  name: x\n",
                "spec:\n",
                "  tfReplicaSpecs:\n",
                "    Worker:\n",
                "      replicas: 2\n",
                "      template: {}\n",
                "---\n",
                "&a ",
                "*a",
                "[",
                "]",
                "{",
                "}",
                ": ",
                "- ",
                "\t",
                "yes\n",
                "0644\n",
                "!!str ",
                "<<: *a\n",
                "    PS: {replicas: -1}\n",
                "  runPolicy: {cleanPodPolicy: none}\n",
            ]
        ),
        max_size=40,
    )
)
def test_random_manifest_fragments(parts: list[str]) -> None:
    check(validate_documents(load_text("".join(parts), "fuzz.yaml")))


# Pathological text: long runs of the characters number patterns, quotes and nesting look at,
# in keys and values, beside ordinary manifest lines. Each run is up to 6000 characters, over
# the 4300 digits Python converts to and from int (beyond them int() raises). How the loader's
# time grows with such runs is bench/bad_input_bench.py's to measure.
RUNS = [
    "_",
    "0",
    "1",
    "9",
    ".",
    ":",
    ":5",
    "'",
    '"',
    " ",
    "- ",
    "[",
    "{a: ",
    "]",
    "}",
    "e",
    "x",
    "\x00",
    "#",
    ",",
    "? ",
    "0x",
    "1_",
    "._",
    "---\n",
]
pathological_runs = st.builds(
    lambda unit, count: unit * count, st.sampled_from(RUNS), st.integers(1, 6000)
)
pathological_lines = st.one_of(
    st.sampled_from(
        [
            "apiVersion: kubeflow.org/v1\n",
            "kind: TFJob\n",
            "metadata:\n",
            "  name: ",
            "spec:\n",
            "  tfReplicaSpecs:\n",
            "    Worker:\n",
            "      replicas: ",
            "a: ",
            ": ",
            "\n",
            "- ",
            "'",
            '"',
            "[",
            "{",
        ]
    ),
    pathological_runs,
)


@given(parts=st.lists(pathological_lines, max_size=12))
def test_pathological_text(parts: list[str]) -> None:
    text = "".join(parts)
    report = validate_documents(load_text(text, "fuzz.yaml"))
    check(report)
    for result in report.results:
        assert result.index >= 1
        assert all(len(f.message) < 1000 for f in result.findings)
