"""From user input (files, a definition) to the objects to apply, validated as a whole.

Everything is loaded, converted and validated before anything talks to the cluster; any problem
in any document raises InvalidInputError naming file, document and JSON path, so nothing is applied.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any, Literal

from tfjob_kit import convert, explain, model, redact
from tfjob_kit.config import RuleConfig
from tfjob_kit.findings import Finding, Severity
from tfjob_kit.kube.kinds import TFJOB, VOLCANO_JOB, Resource
from tfjob_kit.manifests import (
    Document,
    InputError,
    LoadError,
    load_paths,
    load_text,
    unsendable,
)
from tfjob_kit.validate import validate_documents

Backend = Literal["kubeflow", "volcano"]
ValidateMode = Literal["strict", "warn", "off"]


class InvalidInputError(Exception):
    """The input cannot be applied; `problems` lists each one with its location."""

    def __init__(self, problems: list[str], findings: list[Finding] | None = None) -> None:
        self.problems = problems
        self.findings = findings or []
        count = f"{len(problems)} problems" if len(problems) > 1 else "1 problem"
        super().__init__(
            f"nothing was applied; {count} in the input:\n"
            + "\n".join(f"  - {p}" for p in problems)
        )


@dataclass
class Item:
    """One object to apply (or delete), with where it came from."""

    source: str
    document: int
    resource: Resource
    body: dict[str, Any]
    tfjob: dict[str, Any]  # the v1 TFJob (before any Volcano conversion)
    findings: list[Finding] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def namespace(self) -> str:
        return str(self.body["metadata"]["namespace"])

    @property
    def name(self) -> str:
        return str(self.body["metadata"]["name"])

    @property
    def where(self) -> str:
        return f"{self.source}: document {self.document}"

    def describe(self) -> str:
        return self.resource.describe(self.namespace, self.name)

    def tf_config(self) -> dict[str, Any]:
        """The TF_CONFIG of the TFJob's pods, linear in size: the cluster spec once and each
        pod's task (explain.tf_config_summary). {} for Volcano Jobs (their pods build TF_CONFIG
        from Volcano's host files at start), single-pod jobs and jobs over explain.MAX_PODS."""
        if self.resource is not TFJOB:
            return {}
        try:
            return explain.tf_config_summary(self.body, self.namespace)
        except explain.ExplainError:
            return {}


def secret_values(docs: list[Document]) -> set[str]:
    """The values of the secret env entries of the documents (redact's rule)."""
    return redact.secret_values(*(d.content for d in docs))


def input_secret_values(definition: Any, docs: list[Document]) -> set[str]:
    """The secret env values of a task's input: of a definition given as data, read from the
    data itself, so a document that did not load (nested too deep, say) still gives its own;
    else of the loaded documents."""
    if isinstance(definition, dict | list):
        return redact.secret_values(definition)
    return secret_values(docs)


def unreadable_text(definition: Any, docs: list[Document]) -> bool:
    """A definition given as text with a document that did not load: what that document holds
    is unknown, its secret values too, so the text must not be shown."""
    return isinstance(definition, str) and any(d.error is not None for d in docs)


def load_input(src: list[str] | None, definition: Any) -> list[Document]:
    """Documents from paths (files or directories) or from a definition (dict, list, YAML)."""
    if src:
        try:
            return load_paths(src)
        except InputError as exc:
            raise InvalidInputError([str(exc)]) from None
    if isinstance(definition, str):
        return load_text(definition, "definition")
    if isinstance(definition, dict):
        definition = [definition]
    if isinstance(definition, list):
        return [_definition_document(i, d) for i, d in enumerate(definition, 1)]
    raise InvalidInputError(
        ["give src (files or directories) or definition (a dict, a list or YAML text)"]
    )


def _definition_document(index: int, content: Any) -> Document:
    """One document of a definition given as data: a copy of it, or, where it nests deeper than
    the loader allows, the located error (a copy, and validation, would recurse that deep)."""
    problem = unsendable(content)
    if problem is not None and problem[2] == "input-limit":
        path, message, rule = problem
        return Document("definition", index, 1, error=LoadError(rule, message, path=path))
    return Document("definition", index, 1, content=copy.deepcopy(content))


def _locate(finding: Finding) -> str:
    return (
        f"{finding.source}: document {finding.document}: {finding.path}: "
        f"{finding.message} [{finding.rule}]"
    )


def _convertible(content: dict[str, Any]) -> bool:
    kind, version = content.get("kind"), content.get("apiVersion")
    return kind == convert.T9K_KIND or (kind == model.KIND and version in model.LEGACY_API_VERSIONS)


def _converted(docs: list[Document], allow: bool, problems: list[str]) -> list[Document]:
    """Legacy TFJobs and T9k jobs as v1 TFJobs (when allowed); the rest unchanged."""
    out = []
    for doc in docs:
        if doc.ok and isinstance(doc.content, dict) and _convertible(doc.content):
            where = f"{doc.source}: document {doc.index}"
            if not allow:
                problems.append(
                    f"{where}: {doc.api_version} {doc.kind} is not a kubeflow.org/v1 "
                    "TFJob; set convert: true to convert it (or run `tfjob-kit "
                    "convert`)"
                )
                continue
            try:
                content, _notes = convert.to_v1(doc.content)
            except convert.ConversionError as exc:
                problems.append(f"{where}: {exc}")
                continue
            doc = Document(doc.source, doc.index, doc.line, content=content)
        out.append(doc)
    return out


def prepare(
    docs: list[Document],
    *,
    namespace: str | None = None,
    default_namespace: str = "default",
    backend: Backend = "kubeflow",
    validate: ValidateMode = "strict",
    rules: RuleConfig | None = None,
    allow_convert: bool = False,
    for_delete: bool = False,
) -> list[Item]:
    """Items to apply. Raises InvalidInputError with every problem when anything is wrong.

    validate: strict fails on error-level findings; warn reports every finding and fails on
    none (the API server still has the last word); off skips validation. Unreadable YAML and
    documents that are not TFJobs always fail. With for_delete only names matter."""
    problems: list[str] = []
    loaded = []
    for doc in docs:
        if not doc.ok:
            assert doc.error is not None
            line = f" (line {doc.error.line})" if doc.error.line else ""
            where = f": {doc.error.path}" if doc.error.path != "$" else ""
            problems.append(f"{doc.source}: document {doc.index}{line}{where}: {doc.error.message}")
        elif doc.content is not None:
            loaded.append(doc)
    converted = _converted(loaded, allow_convert or for_delete, problems)
    items: list[Item] = []
    report = None
    if validate != "off" and not for_delete:
        report = validate_documents(converted, rules)
    findings: list[Finding] = []
    for position, doc in enumerate(converted):
        where = f"{doc.source}: document {doc.index}"
        content = doc.content
        if not isinstance(content, dict) or not model.is_tfjob(content):
            kind = f"{doc.api_version} {doc.kind}".strip() or "an object without kind"
            problems.append(
                f"{where}: {kind} is not a TFJob; this module applies TFJobs only "
                "(use kubernetes.core.k8s for other objects)"
            )
            continue
        metadata = model.as_dict(content.get("metadata"))
        own_namespace = metadata.get("namespace")
        if namespace and own_namespace and own_namespace != namespace:
            problems.append(
                f"{where}: $.metadata.namespace: {own_namespace!r} differs from "
                f"the namespace option {namespace!r}; remove one of them"
            )
            continue
        result = report.results[position] if report else None
        doc_findings = result.findings if result else []
        findings.extend(doc_findings)
        if validate == "strict":
            problems.extend(_locate(f) for f in doc_findings if f.severity >= Severity.ERROR)
        if not isinstance(metadata.get("name"), str) or not metadata.get("name"):
            if not any(f.path.startswith("$.metadata") for f in doc_findings):
                problems.append(
                    f"{where}: $.metadata.name: a name is required (generateName "
                    "cannot be applied idempotently)"
                )
            continue
        body = copy.deepcopy(content)
        body.setdefault("metadata", {})["namespace"] = (
            own_namespace or namespace or default_namespace
        )
        items.append(Item(doc.source, doc.index, TFJOB, body, body, findings=list(doc_findings)))
    problems.extend(_duplicates(items))
    if problems:
        raise InvalidInputError(problems, findings)
    if backend == "volcano":
        for item in items:
            try:
                job, notes = convert.to_volcano(item.tfjob)
            except convert.ConversionError as exc:
                raise InvalidInputError([f"{item.where}: {exc}"], findings) from None
            job.setdefault("metadata", {})["namespace"] = item.namespace
            item.resource, item.body = VOLCANO_JOB, job
            item.notes = [f"{item.where}: {n.path}: {n.kind}: {n.message}" for n in notes]
    return items


def _duplicates(items: list[Item]) -> list[str]:
    seen: dict[tuple[str, str], Item] = {}
    problems = []
    for item in items:
        key = (item.namespace, item.name)
        if key in seen:
            problems.append(f"{item.where}: {item.describe()} is also defined in {seen[key].where}")
        seen[key] = item
    return problems
