"""Generate schemas/k8s/podtemplatespec.json from the Kubernetes OpenAPI v3 document.

The source is `api/openapi-spec/v3/api__v1_openapi.json` inside the `k8s.io/kubernetes` Go module
of the release whose API types the training-operator is built on (the `k8s.io/api v0.N.P` its
wrapper's go.mod requires gives `v1.N.P`), fetched with `go mod download` (the Go module proxy).
A TFJob's pod templates are the operator's Go types, as upstream's CRD is generated from them: a
field newer than those never reaches a pod, whatever the cluster's minor.
Nothing in the output is written by hand; the transformations are:

* `#/components/schemas/X` references become `#/$defs/X`; a lone `allOf: [{$ref}]` becomes `$ref`;
* every object with `properties` and no `additionalProperties` is closed
  (`additionalProperties: false`), as the API server's strict field validation does;
* `format: int32|int64` integers get the matching `minimum`/`maximum`;
* `Quantity` becomes what the CRD and the operator accept: a 64-bit integer (the CRD's
  int-or-string refuses other numbers), or a string that Go's `resource.ParseQuantity` reads
  once JSON decoding has trimmed its spaces (the `pattern`; the description's grammar is
  stricter than the parser: `.`, `+` and `e3` read as quantities);
* `x-kubernetes-*` extensions, which JSON Schema validators ignore, are dropped;
* a `default` is kept only where the Go type declares it with a `+default=` marker whose value
  is a JSON literal (`k8s.io/api` core/v1 `types.go`, the module of the same release): that is
  what controller-gen puts in a CRD, so it is what the API server fills into a TFJob (and into
  Kueue's Workload, whose pod templates must match the job's). The OpenAPI document also lists
  the zero value of every required field and `ref(...)` markers resolved; no CRD carries those.

Usage: python tools/gen_k8s_schema.py [--check]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
OUTPUT = ROOT / "schemas" / "k8s" / "podtemplatespec.json"
OPERATOR_WRAPPER = ROOT / "components" / "go" / "training-operator"
SOURCE_IN_MODULE = "api/openapi-spec/v3/api__v1_openapi.json"
TYPES_IN_API = "core/v1/types.go"
CORE_PREFIX = "io.k8s.api.core.v1."
ROOT_DEF = "io.k8s.api.core.v1.PodTemplateSpec"
QUANTITY_DEF = "io.k8s.apimachinery.pkg.api.resource.Quantity"
# What resource.ParseQuantity (k8s.io/apimachinery/pkg/api/resource/quantity.go) accepts after
# Quantity.UnmarshalJSON's strings.TrimSpace: anything but nothing; an optional sign, digits
# (maybe none), an optional "." with digits (maybe none), then a suffix its suffixer interprets:
# binary SI, decimal SI, or e/E and a signed integer (strconv.ParseInt).
QUANTITY_PATTERN = (
    r"^\s*(?=\S)[+-]?[0-9]*(?:\.[0-9]*)?(?:[KMGTPE]i|[numkMGTPE]|[eE][+-]?[0-9]+)?\s*$"
)
INT_BOUNDS = {
    "int32": (-(2**31), 2**31 - 1),
    "int64": (-(2**63), 2**63 - 1),
}
LOCAL_REF = "#/components/schemas/"


def _module(module: str, version: str) -> Path:
    """module@version extracted by `go mod download` (the Go module proxy, or its cache)."""
    result = subprocess.run(
        ["go", "mod", "download", "-json", f"{module}@{version}"],
        capture_output=True,
        text=True,
        check=False,
        cwd=ROOT,
    )
    if result.returncode != 0:
        raise SystemExit(f"go mod download {module}@{version} failed:\n{result.stderr}")
    return Path(json.loads(result.stdout)["Dir"])


def download_openapi(version: str) -> dict[str, Any]:
    """k8s.io/kubernetes@version's core/v1 OpenAPI document."""
    document: dict[str, Any] = json.loads(
        (_module("k8s.io/kubernetes", version) / SOURCE_IN_MODULE).read_text()
    )
    return document


def download_types(version: str) -> str:
    """core/v1 types.go of k8s.io/api at the release of k8s.io/kubernetes@version (v1.N.P is
    published as k8s.io/api v0.N.P)."""
    api_version = "v0." + version.removeprefix("v").split(".", 1)[1]
    return (_module("k8s.io/api", api_version) / TYPES_IN_API).read_text(encoding="utf-8")


_STRUCT = re.compile(r"^type (\w+) struct \{")
_MARKER = re.compile(r"^\s*//\s*\+default=(.*?)\s*$")
_FIELD = re.compile(r'^\s*\w+\s+\S+\s+`[^`]*json:"([^",]+)')
_INLINE = re.compile(r'^\s*(\w+)\s+`[^`]*json:",inline"')


def default_markers(types_go: str) -> dict[tuple[str, str], Any]:
    """(Go type, JSON field name) -> the value of the field's `+default=` marker, for markers
    whose value is a JSON literal (controller-gen cannot put `ref(CONSTANT)` in a CRD). A type
    that embeds another inline (`json:",inline"`) has the embedded type's markers too."""
    markers: dict[tuple[str, str], Any] = {}
    embeds: list[tuple[str, str]] = []
    struct = ""
    pending: str | None = None
    for line in types_go.splitlines():
        if match := _STRUCT.match(line):
            struct, pending = match.group(1), None
            continue
        if match := _MARKER.match(line):
            pending = match.group(1)
            continue
        if line.strip().startswith("//"):
            continue
        if (inline := _INLINE.match(line)) and struct:
            embeds.append((struct, inline.group(1)))
        elif (field := _FIELD.match(line)) and struct and pending is not None:
            with contextlib.suppress(json.JSONDecodeError):  # ref(...): not a literal
                markers[(struct, field.group(1))] = json.loads(pending)
        pending = None
    for _ in embeds:  # embeddings may nest: repeat until nothing new is inherited
        for outer, inner in embeds:
            for (owner, name), value in list(markers.items()):
                if owner == inner:
                    markers.setdefault((outer, name), value)
    return markers


def reachable(defs: dict[str, Any], root: str) -> list[str]:
    """Names of the component schemas reachable from root, in a stable order."""
    seen: set[str] = set()
    stack = [root]
    while stack:
        name = stack.pop()
        if name in seen:
            continue
        seen.add(name)
        stack.extend(_refs(defs[name]))
    return sorted(seen)


def _refs(node: Any) -> list[str]:
    found: list[str] = []
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "$ref" and isinstance(value, str) and value.startswith(LOCAL_REF):
                found.append(value[len(LOCAL_REF) :])
            else:
                found.extend(_refs(value))
    elif isinstance(node, list):
        for item in node:
            found.extend(_refs(item))
    return found


def convert(node: Any) -> Any:
    """Turn one OpenAPI v3 schema node into a JSON Schema 2020-12 node."""
    if isinstance(node, list):
        return [convert(item) for item in node]
    if not isinstance(node, dict):
        return node
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key.startswith("x-kubernetes-"):
            continue
        if key == "$ref":
            out["$ref"] = "#/$defs/" + value[len(LOCAL_REF) :]
        elif key == "properties":
            out["properties"] = {name: convert(prop) for name, prop in value.items()}
        else:
            out[key] = convert(value)
    all_of = out.get("allOf")
    if isinstance(all_of, list) and len(all_of) == 1 and set(all_of[0]) == {"$ref"}:
        out["$ref"] = out.pop("allOf")[0]["$ref"]
    if "properties" in out and "additionalProperties" not in out:
        out["additionalProperties"] = False
    if out.get("type") == "integer" and out.get("format") in INT_BOUNDS:
        low, high = INT_BOUNDS[out["format"]]
        out.setdefault("minimum", low)
        out.setdefault("maximum", high)
    return out


def keep_marked_defaults(defs: dict[str, Any], markers: dict[tuple[str, str], Any]) -> None:
    """Drop every `default` but a property's that a `+default=` marker of its core/v1 type
    declares (the zero values of list items and map values go too)."""
    for name, definition in defs.items():
        for field, prop in (definition.get("properties") or {}).items():
            for nested in ("items", "additionalProperties"):
                if isinstance(prop.get(nested), dict):
                    prop[nested].pop("default", None)
            if "default" not in prop:
                continue
            key = (name.removeprefix(CORE_PREFIX), field)
            marked = name.startswith(CORE_PREFIX) and key in markers
            if not marked:
                del prop["default"]
            elif markers[key] != prop["default"]:
                raise SystemExit(
                    f"{name}.{field}: the OpenAPI default {prop['default']!r} is not the "
                    f"+default marker's {markers[key]!r}"
                )


def build(openapi: dict[str, Any], version: str, types_go: str) -> dict[str, Any]:
    components = openapi["components"]["schemas"]
    defs = {name: convert(components[name]) for name in reachable(components, ROOT_DEF)}
    keep_marked_defaults(defs, default_markers(types_go))
    for branch in defs[QUANTITY_DEF]["oneOf"]:
        if branch.get("type") == "string":
            branch["pattern"] = QUANTITY_PATTERN
        elif branch.get("type") == "number":  # JSON numbers beyond int64 decode as floats
            low, high = INT_BOUNDS["int64"]
            branch.update(type="integer", minimum=low, maximum=high)
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$comment": (
            f"GENERATED by tools/gen_k8s_schema.py from k8s.io/kubernetes {version} "
            f"{SOURCE_IN_MODULE}. Do not edit; run `make schemas`."
        ),
        "title": f"Kubernetes {version} PodTemplateSpec",
        "x-tfjob-kit-kubernetes-version": version,
        "$ref": f"#/$defs/{ROOT_DEF}",
        "$defs": defs,
    }


def render(schema: dict[str, Any]) -> str:
    return json.dumps(schema, indent=1, sort_keys=True) + "\n"


def write_or_check(output: Path, text: str, check: bool, version: str) -> int:
    """Write a generated file, or (check) say whether it is up to date: the exit status."""
    name = output.relative_to(ROOT)
    if check:
        if (output.read_text() if output.exists() else "") != text:
            print(f"{name} is out of date: run `make schemas`", file=sys.stderr)
            return 1
        print(f"{name} is up to date (Kubernetes {version})")
        return 0
    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_text(text)
    print(f"wrote {name} (Kubernetes {version}, {len(text)} bytes)")
    return 0


def operator_kubernetes() -> str:
    """The Kubernetes release of the training-operator's API types (its wrapper's k8s.io/api)."""
    gomod = (OPERATOR_WRAPPER / "go.mod").read_text()
    found = re.search(r"^\s*k8s\.io/api (v0\.\d+\.\d+)\b", gomod, re.M)
    if found is None:
        raise SystemExit(f"{OPERATOR_WRAPPER / 'go.mod'}: no k8s.io/api requirement")
    return "v1." + found.group(1).removeprefix("v0.")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="fail if the file is out of date")
    args = parser.parse_args(argv)
    version = operator_kubernetes()
    text = render(build(download_openapi(version), version, download_types(version)))
    return write_or_check(OUTPUT, text, args.check, version)


if __name__ == "__main__":
    sys.exit(main())
