"""The schemas: valid 2020-12, generated files up to date, client and CRD from one source."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from tfjob_kit import crd, schema
from tfjob_kit.manifests import Document, load_path

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT / "tests" / "data" / "corpus"


@pytest.mark.parametrize("name", ["tfjob-v1.json", "k8s/podtemplatespec.json"])
def test_schema_files_are_valid_2020_12(name: str) -> None:
    document = json.loads((ROOT / "schemas" / name).read_text())
    jsonschema.Draft202012Validator.check_schema(document)


def test_bundle_is_self_contained() -> None:
    bundled = schema.bundled_schema()
    refs: list[str] = []

    def collect(node: Any) -> None:
        if isinstance(node, dict):
            refs.extend(v for k, v in node.items() if k == "$ref")
            for value in node.values():
                collect(value)
        elif isinstance(node, list):
            for item in node:
                collect(item)

    collect(bundled)
    assert refs and all(r.startswith("#/$defs/") and r[8:] in bundled["$defs"] for r in refs)


def test_every_tfjob_field_is_described_and_closed() -> None:
    source = json.loads((ROOT / "schemas" / "tfjob-v1.json").read_text())
    for name, definition in [("TFJob", source), *source["$defs"].items()]:
        assert definition.get("additionalProperties") is False, name
        assert "description" in definition, name
        for field, prop in definition["properties"].items():
            described = "description" in prop or (
                "$ref" in prop and prop["$ref"].startswith("#/$defs/")
            )
            assert described, f"{name}.{field}"


TFJOB_CASES = [
    d
    for path in sorted(CORPUS.glob("*/*.yaml"))
    for d in load_path(str(path))
    if d.ok and d.kind == "TFJob"
]


@pytest.mark.parametrize("doc", TFJOB_CASES, ids=lambda d: Path(d.source).stem)
def test_python_jsonschema_agrees_with_jsonschema_rs(doc: Document) -> None:
    """The pure-Python reference implementation is the oracle for the fast validator."""
    document = doc.content
    oracle = jsonschema.Draft202012Validator(schema.bundled_schema())
    expected = sorted(
        "$" + "".join(f"[{p!r}]" for p in e.absolute_path) for e in oracle.iter_errors(document)
    )
    assert bool(expected) == bool(schema.validate(document))


def test_generated_kubernetes_schema_is_up_to_date(go: str) -> None:
    # the generator reads the Kubernetes module with `go mod download`
    result = subprocess.run(
        [sys.executable, str(ROOT / "tools" / "gen_k8s_schema.py"), "--check"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stderr


def test_crd_is_structural_and_from_the_same_schema() -> None:
    definition = crd.crd()
    version = definition["spec"]["versions"][0]
    root = version["schema"]["openAPIV3Schema"]
    text = json.dumps(root)
    assert "$ref" not in text and "$defs" not in text and '"const"' not in text
    assert '"additionalProperties": false' not in text

    def typed(node: Any, path: str) -> None:
        if not isinstance(node, dict):
            return
        special = node.get("x-kubernetes-int-or-string") or node.get(
            "x-kubernetes-preserve-unknown-fields"
        )
        assert "type" in node or special, path
        for name, child in node.get("properties", {}).items():
            typed(child, f"{path}.{name}")
        for key in ("items", "additionalProperties"):
            if isinstance(node.get(key), dict):
                typed(node[key], f"{path}.{key}")

    typed(root, "$")
    spec = root["properties"]["spec"]
    run_policy = spec["properties"]["runPolicy"]["properties"]
    assert run_policy["cleanPodPolicy"]["enum"] == ["All", "Running", "None"]
    replica = spec["properties"]["tfReplicaSpecs"]["additionalProperties"]
    assert replica["properties"]["restartPolicy"]["enum"] == [
        "Always",
        "OnFailure",
        "Never",
        "ExitCode",
    ]
    containers = replica["properties"]["template"]["properties"]["spec"]["properties"]
    assert containers["containers"]["items"]["required"] == ["name"]
