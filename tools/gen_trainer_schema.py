"""Generate schemas/trainer-v1alpha1.json, the JSON Schema of Kubeflow Trainer v2's kinds, from
the CRDs charts/trainer ships (which tools/gen_upstream_crds.py copies from the Go module).

Each CRD's structural OpenAPI v3 schema becomes a 2020-12 JSON Schema under ``$defs/<Kind>``:
descriptions, defaults and formats go (annotations the API server does not refuse on), the
``x-kubernetes-*`` extensions go (int-or-string already carries its ``anyOf``), and an object
with ``properties`` and no ``x-kubernetes-preserve-unknown-fields`` refuses other fields, as the
API server does under kubectl's strict field validation. What stays is what the server checks
from the schema: types, required, enum, pattern, lengths, counts and bounds. CEL rules
(``x-kubernetes-validations``) and list-map key uniqueness are not carried over: the server
checks those (``validate --server``). Subtrees the three kinds repeat (the pod template) are
written once, as ``$defs`` of their own.

Usage: python tools/gen_trainer_schema.py [--check]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parent.parent
CRDS = Path("charts") / "trainer" / "crds" / "trainer-crds.yaml"
OUTPUT = Path("schemas") / "trainer-v1alpha1.json"
TOOL = "tools/gen_trainer_schema.py"
VERSION = "v1alpha1"
KEPT = {
    "type",
    "properties",
    "items",
    "required",
    "additionalProperties",
    "anyOf",
    "enum",
    "pattern",
    "maxLength",
    "minLength",
    "maxItems",
    "minItems",
    "maximum",
    "minimum",
    "minProperties",
    "maxProperties",
}
SHARED_MIN_BYTES = 400  # a repeated subtree at least this long becomes a $defs entry


def convert(node: dict[str, Any]) -> dict[str, Any]:
    """One OpenAPI v3 structural schema node as JSON Schema (see the module's docstring)."""
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key not in KEPT:
            continue
        if key == "properties":
            out[key] = {name: convert(child) for name, child in value.items()}
        elif key in ("items", "additionalProperties") and isinstance(value, dict):
            out[key] = convert(value)
        elif key == "anyOf":
            out[key] = [convert(child) for child in value]
        else:
            out[key] = value
    if "properties" in node and not node.get("x-kubernetes-preserve-unknown-fields"):
        out.setdefault("additionalProperties", False)
    return out


def _canonical(node: Any) -> str:
    return json.dumps(node, sort_keys=True, separators=(",", ":"))


def _children(node: dict[str, Any]) -> list[dict[str, Any]]:
    """The schemas directly inside a schema node."""
    found = list(node.get("properties", {}).values())
    found.extend(
        node[key] for key in ("items", "additionalProperties") if isinstance(node.get(key), dict)
    )
    found.extend(node.get("anyOf", []))
    return found


def _map_children(node: dict[str, Any], change: Any) -> dict[str, Any]:
    """``node`` with ``change`` applied to each schema directly inside it."""
    out = dict(node)
    if "properties" in node:
        out["properties"] = {name: change(child) for name, child in node["properties"].items()}
    for key in ("items", "additionalProperties"):
        if isinstance(node.get(key), dict):
            out[key] = change(node[key])
    if "anyOf" in node:
        out["anyOf"] = [change(child) for child in node["anyOf"]]
    return out


def share(kinds: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """``$defs``: each kind, and each repeated large subschema once, referenced where it was."""
    counts: Counter[str] = Counter()

    def count(node: dict[str, Any]) -> None:
        text = _canonical(node)
        if len(text) >= SHARED_MIN_BYTES:
            counts[text] += 1
        for child in _children(node):
            count(child)

    for schema in kinds.values():
        count(schema)
    defs: dict[str, Any] = {}

    def rewrite(node: dict[str, Any], top: bool = False) -> dict[str, Any]:
        text = _canonical(node)
        if not top and counts[text] > 1:
            name = "shared-" + hashlib.sha256(text.encode()).hexdigest()[:12]
            if name not in defs:
                defs[name] = rewrite(node, top=True)
            return {"$ref": f"#/$defs/{name}"}
        return _map_children(node, rewrite)

    out = {kind: rewrite(schema, top=True) for kind, schema in kinds.items()}
    out.update(sorted(defs.items()))
    return out


def render(crd_text: str) -> str:
    kinds: dict[str, dict[str, Any]] = {}
    trainer_version = ""
    for document in yaml.load_all(crd_text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader)):
        if not document:
            continue
        names = document["spec"]["names"]
        (version,) = [v for v in document["spec"]["versions"] if v["name"] == VERSION]
        kinds[names["kind"]] = convert(version["schema"]["openAPIV3Schema"])
    for line in crd_text.splitlines():
        if line.startswith("# Source: "):
            trainer_version = line.split("@", 1)[1].split(",", 1)[0]
            break
    schema = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$comment": (
            f"GENERATED by {TOOL} from {CRDS.as_posix()} (Kubeflow Trainer {trainer_version}) "
            "-- do not edit."
        ),
        "x-tfjob-kit-trainer-version": trainer_version,
        "$defs": share(dict(sorted(kinds.items()))),
    }
    return json.dumps(schema, indent=1, sort_keys=False) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--check", action="store_true", help="fail if the file is out of date")
    args = parser.parse_args(argv)
    text = render((ROOT / CRDS).read_text(encoding="utf-8"))
    output = ROOT / OUTPUT
    current = output.read_text(encoding="utf-8") if output.exists() else ""
    if args.check:
        if current != text:
            print(f"{OUTPUT} is out of date with {CRDS}: run `python {TOOL}`", file=sys.stderr)
            return 1
        print(f"{OUTPUT} is up to date")
        return 0
    output.write_text(text, encoding="utf-8")
    print(f"wrote {OUTPUT} ({len(text)} bytes)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
