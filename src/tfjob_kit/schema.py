"""The JSON Schemas of the kinds tfjob-kit validates: locate, bundle, validate.

`schemas/tfjob-v1.json` is the TFJob's source; it refers to the generated Kubernetes
PodTemplateSpec schema in `schemas/k8s/podtemplatespec.json`. :func:`bundled_schema` inlines the
referenced definitions into one self-contained 2020-12 schema, which the validator, the CRD
generator and `tfjob-kit schema json` all use.

`schemas/trainer-v1alpha1.json` holds Kubeflow Trainer v2's TrainJob, TrainingRuntime and
ClusterTrainingRuntime, generated from the CRDs charts/trainer ships
(`tools/gen_trainer_schema.py`).
"""

from __future__ import annotations

import copy
import functools
import json
from pathlib import Path
from typing import Any

import jsonschema_rs

from tfjob_kit.findings import Finding, Severity, child_path

TFJOB_SCHEMA = "tfjob-v1.json"
TRAINER_SCHEMA = "trainer-v1alpha1.json"
TFJOB = "TFJob"
TRAINER_KINDS = ("TrainJob", "TrainingRuntime", "ClusterTrainingRuntime")
K8S_SCHEMA = "k8s/podtemplatespec.json"
QUANTITY_DEF = "io.k8s.apimachinery.pkg.api.resource.Quantity"
INT_OR_STRING_DEF = "io.k8s.apimachinery.pkg.util.intstr.IntOrString"


def schemas_dir() -> Path:
    """schemas/ of the installed wheel, or of the source tree (editable installs)."""
    # The package's folder: what importlib.resources.files("tfjob_kit") gives for a package on
    # disk, without importing importlib.resources (and tempfile, shutil...) at every start.
    packaged = Path(__file__).parent / "schemas"
    if (packaged / TFJOB_SCHEMA).is_file():
        return packaged
    return Path(__file__).resolve().parents[2] / "schemas"


def _read(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((schemas_dir() / name).read_text(encoding="utf-8"))
    return data


@functools.cache
def kubernetes_version() -> str:
    return str(_read(K8S_SCHEMA)["x-tfjob-kit-kubernetes-version"])


@functools.cache
def run_policy_fields() -> tuple[str, ...]:
    """The fields of a TFJob's spec.runPolicy, in the schema's order: the one list of them, for the
    rules (a field written at spec level instead) and for converting legacy jobs (moved there)."""
    return tuple(_read(TFJOB_SCHEMA)["$defs"]["RunPolicy"]["properties"])


@functools.cache
def _bundle() -> dict[str, Any]:
    tfjob = _read(TFJOB_SCHEMA)
    k8s = _read(K8S_SCHEMA)
    k8s_root = k8s["$ref"]

    def rewrite(node: Any) -> Any:
        if isinstance(node, dict):
            out = {}
            for key, value in node.items():
                if key == "$ref" and value.startswith(K8S_SCHEMA):
                    fragment = value[len(K8S_SCHEMA) :]
                    out[key] = fragment if fragment else k8s_root
                else:
                    out[key] = rewrite(value)
            return out
        if isinstance(node, list):
            return [rewrite(item) for item in node]
        return node

    bundled: dict[str, Any] = rewrite(tfjob)
    clash = set(bundled["$defs"]) & set(k8s["$defs"])
    if clash:
        raise RuntimeError(f"schema definitions defined twice: {sorted(clash)}")
    bundled["$defs"].update(k8s["$defs"])
    bundled["$comment"] = (
        f"Bundled from schemas/{TFJOB_SCHEMA} and schemas/{K8S_SCHEMA} "
        f"(Kubernetes {k8s['x-tfjob-kit-kubernetes-version']}) by tfjob-kit."
    )
    return bundled


def bundled_schema() -> dict[str, Any]:
    """A deep copy of the self-contained TFJob schema."""
    return copy.deepcopy(_bundle())


@functools.cache
def _root(kind: str) -> dict[str, Any]:
    """The schema a ``kind`` is validated against: the TFJob bundle, or Trainer's file with a
    ``$ref`` to the kind's definition."""
    if kind == TFJOB:
        return _bundle()
    if kind not in TRAINER_KINDS:
        raise ValueError(f"no schema for kind {kind!r}")
    return {**_read(TRAINER_SCHEMA), "$ref": f"#/$defs/{kind}"}


@functools.cache
def _validator(kind: str) -> Any:
    return jsonschema_rs.Draft202012Validator(_root(kind))


_MISSING = "missing required field "


def missing_path(finding: Finding) -> str | None:
    """The path of the field a schema finding says is missing (``missing required field 'name'``
    at ``$.a`` is about ``$.a.name``), or None for any other finding."""
    if finding.rule != "schema" or not finding.message.startswith(_MISSING):
        return None
    name = finding.message[len(_MISSING) :]
    if len(name) < 2 or name[0] != name[-1] or name[0] not in "'\"":
        return None
    return child_path(finding.path, name[1:-1])


def _at_def(schema_path: list[Any], name: str) -> bool:
    return "$defs" in schema_path and name in schema_path


def _int_or_string(error: Any, kind: str) -> bool:
    """An ``anyOf`` of an integer and a string (the CRDs' int-or-string and quantities)."""
    node: Any = _root(kind)
    for part in error.schema_path:
        node = node[part]
    return isinstance(node, list) and {_type(n) for n in node} == {"integer", "string"}


def _type(node: Any) -> Any:
    return node.get("type") if isinstance(node, dict) else None


def _describe(error: Any, kind: str = TFJOB) -> tuple[str, str]:
    """(JSON path, message) for one jsonschema_rs error, pointing at the offending field."""
    path = "$"
    for part in error.instance_path:
        path = child_path(path, part)
    detail = error.kind
    kind_name = type(detail).__name__
    if kind_name == "AdditionalProperties":
        unexpected = list(detail.unexpected)
        if len(unexpected) == 1:
            name = unexpected[0]
            import difflib  # only for an unknown field: not at every start

            known = sorted(_properties_at(kind, tuple(error.schema_path)))
            hint = difflib.get_close_matches(name, known, n=1)
            message = f"unknown field {name!r}"
            if hint:
                message += f": did you mean {hint[0]!r}?"
            else:
                message += " (the API server would drop it)"
            return child_path(path, name), message
        return path, "unknown fields " + ", ".join(repr(n) for n in unexpected)
    if kind_name == "Required":
        return path, f"{_MISSING}{detail.property!r}"
    schema_path = list(error.schema_path)
    if kind_name == "OneOfNotValid" and _at_def(schema_path, QUANTITY_DEF):
        if not isinstance(error.instance, str):  # the CRD's int-or-string refuses 0.5, 1e20
            what = (
                "is beyond a 64-bit integer"
                if isinstance(error.instance, int)
                else ("must be an integer or a string")
            )
            return path, (
                f"{json.dumps(error.instance)} {what}: quote it ('{error.instance}') "
                "or use a suffix (500m, 4Gi)"
            )
        return path, (
            f"{error.instance!r} is not a Kubernetes quantity "
            "(examples: 2, 500m, 1.5, 4Gi, 512Mi, 1e3)"
        )
    if kind_name == "OneOfNotValid" and _at_def(schema_path, INT_OR_STRING_DEF):
        return path, f"{error.instance!r} must be an integer or a string"
    if kind_name == "AnyOf" and _int_or_string(error, kind):
        return path, f"{json.dumps(error.instance)} must be an integer or a string"
    if kind_name == "Enum":
        options = ", ".join(json.dumps(option) for option in detail.options)
        return path, f"{json.dumps(error.instance)} is not one of {options}"
    if kind_name == "Constant":
        expected = json.dumps(detail.expected_value)
        return path, f"must be {expected}, not {json.dumps(error.instance)}"
    return path, str(error.message)


@functools.cache
def _properties_at(kind: str, schema_path: tuple[str | int, ...]) -> frozenset[str]:
    """Property names of the schema object an additionalProperties error came from. jsonschema_rs
    reports schema paths from the root or from the `$defs` entry a `$ref` led to."""
    node: Any = _root(kind)
    for part in schema_path[:-1]:  # the last part is "additionalProperties"
        node = node[part]
    return frozenset(node.get("properties", {})) if isinstance(node, dict) else frozenset()


def validate(content: dict[str, Any], kind: str = TFJOB) -> list[Finding]:
    """Schema findings for one object of ``kind`` (rule id 'schema', severity error)."""
    validator = _validator(kind)
    if validator.is_valid(content):
        return []
    findings = []
    for error in validator.iter_errors(content):
        path, message = _describe(error, kind)
        findings.append(Finding("schema", Severity.ERROR, message, path))
    findings.sort(key=lambda f: f.path)
    return findings
