"""The TFJob CustomResourceDefinition, generated from the same schema the client validates with.

The bundled 2020-12 schema is turned into a structural openAPIV3Schema:

* `$ref`s are inlined (the definitions form no cycles);
* `const` becomes a one-value `enum`; `anyOf` that only lists `required` alternatives (name or
  generateName) is dropped, because the API server requires a name anyway;
* int-or-string `oneOf`s become `x-kubernetes-int-or-string: true`, Quantity `oneOf`s too, with
  the quantity pattern left to the API server's own Quantity parsing;
* `default`s stay: the schema keeps only those controller-gen puts in upstream's CRD (the pod
  template's `+default=` markers, such as a port's `protocol: TCP`, and `runPolicy.suspend`), so
  the API server stores a TFJob as it does with upstream's CRD. Kueue's Workload CRD defaults
  the same fields, and a job whose stored pod template lacked them would never match its
  Workload;
* `additionalProperties: false` is dropped: structural schemas prune unknown fields instead;
* int64 bounds are dropped: JSONSchemaProps holds minimum/maximum as float64, where 2^63-1
  rounds up and overflows to -2^63 when the API server compares integers (every runAsUser
  would be rejected); the API server checks the int64 range itself;
* keywords JSONSchemaProps does not have (`$schema`, `$comment`, `title`, `propertyNames`,
  `x-tfjob-kit-*`) are dropped;
* the pod template's `metadata` is left open (`x-kubernetes-preserve-unknown-fields`), as
  controller-gen does for embedded ObjectMeta.
"""

from __future__ import annotations

from typing import Any

from tfjob_kit import schema

GROUP = "kubeflow.org"
PLURAL = "tfjobs"
# What apiextensions.k8s.io/v1 JSONSchemaProps can say (plus x-kubernetes-* extensions).
_SUPPORTED = {
    "description",
    "type",
    "format",
    "maximum",
    "exclusiveMaximum",
    "minimum",
    "exclusiveMinimum",
    "maxLength",
    "minLength",
    "pattern",
    "maxItems",
    "minItems",
    "uniqueItems",
    "multipleOf",
    "enum",
    "maxProperties",
    "minProperties",
    "required",
    "items",
    "allOf",
    "oneOf",
    "anyOf",
    "not",
    "properties",
    "additionalProperties",
    "nullable",
    "default",
}
_KEEP_FORMATS = {"int32", "int64", "date-time"}
_FLOAT64_EXACT = 2**53  # the largest integer bound a float64 holds exactly


def _inline(node: Any, defs: dict[str, Any], stack: tuple[str, ...] = ()) -> Any:
    if isinstance(node, list):
        return [_inline(item, defs, stack) for item in node]
    if not isinstance(node, dict):
        return node
    if "$ref" in node:
        name = node["$ref"].split("/")[-1]
        if name in stack:
            raise ValueError(f"recursive schema definition {name}")
        target = _inline(defs[name], defs, (*stack, name))
        siblings = {k: v for k, v in node.items() if k != "$ref"}
        merged = dict(target)
        for key, value in _inline(siblings, defs, stack).items():
            if key == "description" or key not in merged:
                merged[key] = value
        return merged
    return {key: _inline(value, defs, stack) for key, value in node.items()}


def _structural(node: Any, path: tuple[str, ...] = ()) -> Any:
    if isinstance(node, list):
        return [_structural(item, path) for item in node]
    if not isinstance(node, dict):
        return node
    one_of = node.get("oneOf")
    if isinstance(one_of, list) and {b.get("type") for b in one_of} in (
        {"integer", "string"},
        {"number", "string"},
    ):
        int_or_string: dict[str, Any] = {"x-kubernetes-int-or-string": True}
        if "description" in node:
            int_or_string["description"] = node["description"]
        return int_or_string
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key == "format" and value not in _KEEP_FORMATS:
            continue
        if key in ("minimum", "maximum") and abs(value) > _FLOAT64_EXACT:
            continue
        if key == "additionalProperties":
            if isinstance(value, dict):  # a map's value schema; `false` is what pruning does
                out[key] = _structural(value, (*path, key))
            continue
        if key == "const":
            out["enum"] = [value]
        elif key == "anyOf" and all(set(b) == {"required"} for b in value):
            continue
        elif key == "properties":
            out[key] = {name: _structural(prop, (*path, name)) for name, prop in value.items()}
        elif key in _SUPPORTED:
            out[key] = _structural(value, (*path, key))
    if "enum" in out and "type" not in out:
        types = {type(v).__name__ for v in out["enum"]}
        if types == {"str"}:
            out["type"] = "string"
    if path[-2:] == ("template", "metadata") or path[-3:] == ("template", "properties", "metadata"):
        return {
            "type": "object",
            "x-kubernetes-preserve-unknown-fields": True,
            "description": out.get("description", ""),
        }
    return out


def openapi_v3_schema() -> dict[str, Any]:
    bundled = schema.bundled_schema()
    defs = bundled.pop("$defs")
    inlined = _inline(bundled, defs)
    result: dict[str, Any] = _structural(inlined)
    result["properties"]["metadata"] = {"type": "object"}
    return result


def crd() -> dict[str, Any]:
    """The apiextensions.k8s.io/v1 CustomResourceDefinition of TFJob."""
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {
            "name": f"{PLURAL}.{GROUP}",
            "annotations": {
                "tfjob-kit.dev/generated-from": "schemas/tfjob-v1.json",
                "tfjob-kit.dev/kubernetes-schema": schema.kubernetes_version(),
            },
        },
        "spec": {
            "group": GROUP,
            "names": {
                "kind": "TFJob",
                "listKind": "TFJobList",
                "plural": PLURAL,
                "singular": "tfjob",
                "shortNames": ["tfj"],
                "categories": ["kubeflow"],
            },
            "scope": "Namespaced",
            "versions": [
                {
                    "name": "v1",
                    "served": True,
                    "storage": True,
                    "subresources": {"status": {}},
                    "additionalPrinterColumns": [
                        {
                            "name": "State",
                            "type": "string",
                            "jsonPath": ".status.conditions[-1:].type",
                        },
                        {"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"},
                    ],
                    "schema": {"openAPIV3Schema": openapi_v3_schema()},
                }
            ],
        },
    }
