"""From user input (files, a definition) to the objects to apply, validated as a whole.

Everything is loaded, converted and validated before anything talks to the cluster; any problem
in any document raises InvalidInputError naming file, document and JSON path, so nothing is applied.
"""

from __future__ import annotations

import copy
import dataclasses
from dataclasses import dataclass, field
from typing import Any, Literal

from tfjob_kit import convert, explain, kueue, model, redact, trainjob, validate_trainer
from tfjob_kit.config import RuleConfig
from tfjob_kit.findings import Finding, Severity
from tfjob_kit.kube.kinds import (
    CLUSTER_TRAINING_RUNTIME,
    TFJOB,
    TRAINER_KINDS,
    TRAINING_RUNTIME,
    TRAINJOB,
    VOLCANO_JOB,
    Resource,
)
from tfjob_kit.manifests import (
    Document,
    InputError,
    LoadError,
    load_paths,
    load_text,
    unsendable,
)
from tfjob_kit.validate import validate_documents

Backend = Literal["kubeflow", "volcano", "trainer"]
# The kinds whose objects are jobs: waited for, their pods followed (a TrainingRuntime is not).
JOB_KINDS = (TFJOB, VOLCANO_JOB, TRAINJOB)
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
    tfjob: dict[str, Any]  # the v1 TFJob (before any conversion); {} for a Trainer object
    findings: list[Finding] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    # A TrainJob's runtime among the items (Trainer's webhook refuses a TrainJob whose runtime
    # does not exist: apply.py stores it first).
    needs: Item | None = None

    @property
    def is_job(self) -> bool:
        return self.resource in JOB_KINDS

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
    queue: str | None = None,
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
    converted = _converted(_loaded(docs, problems), allow_convert or for_delete, problems)
    if queue is not None and not for_delete:
        converted = _queued(converted, queue, backend, problems)
    items: list[Item] = []
    report = None
    if validate != "off" and not for_delete:
        report = validate_documents(converted, rules)
    findings: list[Finding] = []
    for position, doc in enumerate(converted):
        where = f"{doc.source}: document {doc.index}"
        content = doc.content
        if (problem := _kind_problem(doc)) is not None:
            problems.append(f"{where}: {problem}")
            continue
        assert isinstance(content, dict)
        trainer = validate_trainer.is_trainer_object(content)
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
        resource = TRAINER_KINDS[content["kind"]] if trainer else TFJOB
        items.append(
            Item(
                doc.source,
                doc.index,
                resource,
                body,
                {} if trainer else body,
                findings=list(doc_findings),
            )
        )
    if backend == "trainer" and not problems:
        items = _as_trainjobs(items, problems)
    problems.extend(_duplicates(items))
    if problems:
        raise InvalidInputError(problems, findings)
    _link_runtimes(items)
    if backend == "volcano":
        _as_volcano_jobs(items, findings)
    return items


def _queued(
    docs: list[Document], queue: str, backend: Backend, problems: list[str]
) -> list[Document]:
    """The queue option: each TFJob and TrainJob labelled with the Kueue LocalQueue (before
    validation, which judges the label); a document naming another queue is a problem."""
    if backend == "volcano":
        problems.append(
            f"queue {queue!r}: Kueue does not manage Volcano Jobs; submit TFJobs (backend "
            "kubeflow) or TrainJobs (backend trainer) to it, or leave the queue out"
        )
        return docs
    out = []
    for doc in docs:
        content = doc.content
        if not isinstance(content, dict) or content.get("kind") not in kueue.FRAMEWORKS:
            out.append(doc)
            continue
        named = kueue.queue_of(content)
        if named is not None and named != queue:
            problems.append(
                f"{doc.source}: document {doc.index}: {kueue.QUEUE_PATH}: {named!r} differs from "
                f"the queue option {queue!r}; remove one of them"
            )
        labelled = copy.deepcopy(content)
        metadata = labelled.setdefault("metadata", {})
        if isinstance(metadata, dict):
            labels = metadata.get("labels")
            metadata["labels"] = {
                **(labels if isinstance(labels, dict) else {}),
                kueue.QUEUE_LABEL: queue,
            }
        out.append(dataclasses.replace(doc, content=labelled))
    return out


def _loaded(docs: list[Document], problems: list[str]) -> list[Document]:
    """The documents that loaded; each one that did not is a problem, located."""
    loaded = []
    for doc in docs:
        if not doc.ok:
            assert doc.error is not None
            line = f" (line {doc.error.line})" if doc.error.line else ""
            where = f": {doc.error.path}" if doc.error.path != "$" else ""
            problems.append(f"{doc.source}: document {doc.index}{line}{where}: {doc.error.message}")
        elif doc.content is not None:
            loaded.append(doc)
    return loaded


def _kind_problem(doc: Document) -> str | None:
    """Why the module cannot apply the document's kind, or None."""
    content = doc.content
    trainer = validate_trainer.is_trainer_object(content)
    if not isinstance(content, dict) or not (model.is_tfjob(content) or trainer):
        kind = f"{doc.api_version} {doc.kind}".strip() or "an object without kind"
        return (
            f"{kind} is not a TFJob; this module applies TFJobs, TrainJobs and "
            "TrainingRuntimes only (use kubernetes.core.k8s for other objects)"
        )
    if trainer and TRAINER_KINDS[content["kind"]] is CLUSTER_TRAINING_RUNTIME:
        return (
            "a ClusterTrainingRuntime is cluster-wide: install it with the cluster (kubectl "
            "apply --server-side, or kubernetes.core.k8s); this module applies the TrainJobs "
            "that use it"
        )
    return None


def _as_volcano_jobs(items: list[Item], findings: list[Finding]) -> None:
    """backend volcano: each TFJob item becomes the Volcano Job `convert --to volcano` makes."""
    for item in items:
        if item.resource is not TFJOB:
            continue
        try:
            job, notes = convert.to_volcano(item.tfjob)
        except convert.ConversionError as exc:
            raise InvalidInputError([f"{item.where}: {exc}"], findings) from None
        job.setdefault("metadata", {})["namespace"] = item.namespace
        item.resource, item.body = VOLCANO_JOB, job
        item.notes = [f"{item.where}: {n.path}: {n.kind}: {n.message}" for n in notes]


def _as_trainjobs(items: list[Item], problems: list[str]) -> list[Item]:
    """backend trainer: each TFJob as `convert --to trainjob` makes it, its TrainingRuntime (when
    it needs one of its own) before it; Trainer objects of the input as they are."""
    out: list[Item] = []
    for item in items:
        if item.resource is not TFJOB:
            out.append(item)
            continue
        try:
            documents, notes = convert.to_trainjob(item.tfjob)
        except convert.ConversionError as exc:
            problems.append(f"{item.where}: {exc}")
            continue
        for document in documents:
            resource = TRAINER_KINDS[document["kind"]]
            document.setdefault("metadata", {})["namespace"] = item.namespace
            converted = Item(item.source, item.document, resource, document, item.tfjob)
            if resource is TRAINJOB:  # the TFJob's findings and what converting it changed
                converted.findings = item.findings
                converted.notes = [f"{item.where}: {n.path}: {n.kind}: {n.message}" for n in notes]
            out.append(converted)
    return out


def _link_runtimes(items: list[Item]) -> None:
    """Each TrainJob's runtime, where it is among the items."""
    runtimes = [i for i in items if i.resource is TRAINING_RUNTIME]
    for item in items:
        if item.resource is TRAINJOB:
            found = trainjob.find_runtime(item.body, [r.body for r in runtimes])
            item.needs = next((r for r in runtimes if r.body is found), None)


def _duplicates(items: list[Item]) -> list[str]:
    seen: dict[tuple[str, str, str], Item] = {}
    problems = []
    for item in items:
        key = (item.resource.kind, item.namespace, item.name)
        if key in seen:
            problems.append(f"{item.where}: {item.describe()} is also defined in {seen[key].where}")
        seen[key] = item
    return problems
