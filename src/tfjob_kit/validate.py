"""Validation of documents: JSON Schema plus semantic rules, with rule configuration applied."""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from itertools import repeat
from typing import Any

from tfjob_kit import model, redact, rules, schema, validate_trainer
from tfjob_kit.config import RuleConfig
from tfjob_kit.findings import Finding, Severity
from tfjob_kit.manifests import (
    DEFAULT_LIMITS,
    Document,
    Limits,
    LoadError,
    expand_paths,
    load_path,
    load_text,
    unsendable,
)
from tfjob_kit.podcheck import release

CONVERTIBLE_KINDS = {"TensorFlowTrainingJob": "a T9k job: `tfjob-kit convert` makes it a TFJob"}


@dataclass
class DocumentResult:
    """What validation concluded about one document."""

    source: str
    index: int
    line: int
    kind: str
    name: str
    skipped: str | None = None  # why the document was not judged
    loaded: bool = True  # False when the document could not be read as a Kubernetes object
    findings: list[Finding] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {
            "file": self.source,
            "document": self.index,
            "line": self.line,
            "kind": self.kind,
            "name": self.name,
            "skipped": self.skipped,
            "loaded": self.loaded,
            "findings": [f.as_dict() for f in self.findings],
        }


@dataclass
class Report:
    results: list[DocumentResult]

    @property
    def findings(self) -> list[Finding]:
        return [f for r in self.results for f in r.findings]

    def count(self, severity: Severity) -> int:
        return sum(1 for f in self.findings if f.severity == severity)

    def failed(self, fail_on: Severity) -> bool:
        return any(f.severity >= fail_on for f in self.findings)

    @property
    def checked(self) -> int:
        return sum(1 for r in self.results if r.skipped is None and r.loaded)

    @property
    def checked_trainer(self) -> int:
        """Of those checked, the TrainJobs and (Cluster)TrainingRuntimes."""
        return sum(
            1
            for r in self.results
            if r.skipped is None and r.loaded and r.kind in schema.TRAINER_KINDS
        )

    @property
    def unloadable(self) -> int:
        return sum(1 for r in self.results if not r.loaded)

    @property
    def skipped(self) -> int:
        return sum(1 for r in self.results if r.skipped is not None)


def _drop_nulls(value: Any) -> Any:
    """The API server treats null as absent; so does validation."""
    if isinstance(value, dict):
        return {k: _drop_nulls(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_drop_nulls(v) for v in value]
    return value


def check_object(content: dict[str, Any], config: RuleConfig | None = None) -> list[Finding]:
    """Schema and rule findings for one TFJob object, configured and sorted by path."""
    config = config or RuleConfig()
    with release.following(config.kubernetes):  # the pod checks judge as that minor
        found = rules.run(content)
    schema_findings = schema.validate(content)
    if schema_findings:
        # Nulls are dropped by the API server: judge the object it would store. A rule that
        # explains a problem better than the schema at the same path replaces the schema finding.
        # The server rules (rules.server) defer to the schema: a field of the wrong type makes
        # the TFJob itself rejected, and their pod model reads such a field as missing. A field
        # the schema reports missing (`missing required field 'name'` at P) is its finding too:
        # the server rules' `Required value` at P.name says the same.
        ruled = {f.path for f in found if not rules.RULES[f.rule].defers}
        schema_findings = [f for f in schema.validate(_drop_nulls(content)) if f.path not in ruled]
        typed = {f.path for f in schema_findings}
        typed.update(p for f in schema_findings if (p := schema.missing_path(f)) is not None)
        found = [f for f in found if not (rules.RULES[f.rule].defers and f.path in typed)]
    return _configured(content, [*schema_findings, *found], config)


def _configured(
    content: dict[str, Any], findings: list[Finding], config: RuleConfig
) -> list[Finding]:
    """``findings`` with the rule configuration applied, sorted by path, secrets masked."""
    configured = [c for f in findings if (c := config.apply(f)) is not None]
    configured.sort(key=_finding_order)
    # Messages may quote a value: secret env values and passwords in URLs are never shown.
    if configured:
        secrets = redact.secret_values(content)
        configured = [
            replace(f, message=redact.mask_message(f.message, f.path, secrets)) for f in configured
        ]
    return configured


def _finding_order(finding: Finding) -> tuple[str, int, str]:
    return finding.path, -finding.severity, finding.rule


def check_document(
    doc: Document, config: RuleConfig | None = None, documents: Sequence[Any] = ()
) -> DocumentResult:
    """One document's result; ``documents``: the contents of the input's documents (a TrainJob's
    runtime may be among them)."""
    config = config or RuleConfig()
    content = doc.content if isinstance(doc.content, dict) else {}
    name = str(model.as_dict(content.get("metadata")).get("name") or "")
    result = DocumentResult(doc.source, doc.index, doc.line, doc.kind, name)
    error = doc.error
    if error is None and doc.content is not None and not doc.inspected:  # a dict, not loaded
        problem = unsendable(doc.content)
        if problem is not None:
            error = LoadError(problem[2], problem[1], path=problem[0])
    if error is not None:
        result.loaded = False
        message = error.message
        if error.line is not None and error.path == "$":
            where = f"line {error.line}" + (f", column {error.column}" if error.column else "")
            message = f"{where}: {message}"
        finding = Finding(
            error.rule,
            rules.default_severity(error.rule),
            message,
            error.path,
            line=error.line,
            column=error.column,
        )
        applied = config.apply(finding)
        result.findings = [applied.at(doc.source, doc.index, doc.line)] if applied else []
        return result
    if validate_trainer.is_trainer_object(content):
        with release.following(config.kubernetes):
            found = validate_trainer.check_trainer_object(content, documents)
        result.findings = [
            f.at(doc.source, doc.index, doc.line) for f in _configured(content, found, config)
        ]
        return result
    if not model.is_tfjob(content):
        kind = doc.kind or "(no kind)"
        hint = CONVERTIBLE_KINDS.get(doc.kind)
        result.skipped = f"{kind} {doc.api_version}".strip() + (f": {hint}" if hint else "")
        return result
    result.findings = [f.at(doc.source, doc.index, doc.line) for f in check_object(content, config)]
    return result


PODGROUP_GROUPS = ("scheduling.volcano.sh/", "scheduling.incubator.k8s.io/", "scheduling.x-k8s.io/")


def _podgroups_by_hand(
    docs: list[Document], results: list[DocumentResult], config: RuleConfig
) -> None:
    """A PodGroup written next to a TFJob (seed 003) collides with the one the operator makes."""
    groups = {
        str(model.as_dict(d.content.get("metadata")).get("name")): d
        for d in docs
        if d.ok and d.kind == "PodGroup" and d.api_version.startswith(PODGROUP_GROUPS)
    }
    if not groups:
        return
    for doc, result in zip(docs, results, strict=True):
        if result.skipped is not None or not result.loaded or not model.is_tfjob(doc.content):
            continue
        referenced = {result.name} | {
            str(
                model.as_dict(model.as_dict(r.template.get("metadata")).get("annotations")).get(
                    "scheduling.k8s.io/group-name"
                )
            )
            for r in model.replicas(doc.content)
        }
        for name in sorted(referenced & set(groups)):
            group = groups[name]
            finding = Finding(
                "podgroup-by-hand",
                rules.default_severity("podgroup-by-hand"),
                f"PodGroup {name!r} (document {group.index}, {group.api_version}) is written by "
                "hand: with --gang-scheduler-name the operator creates and deletes the job's "
                "PodGroup itself, and a hand-made one outlives the job or fights it; drop it "
                "and set spec.runPolicy.schedulingPolicy",
                "$.metadata.name",
            )
            applied = config.apply(finding)
            if applied is not None:
                result.findings.append(applied.at(doc.source, doc.index, doc.line))
                result.findings.sort(key=_finding_order)


def validate_documents(docs: list[Document], config: RuleConfig | None = None) -> Report:
    config = config or RuleConfig()
    contents = [doc.content for doc in docs if doc.ok]
    results = [check_document(doc, config, contents) for doc in docs]
    _podgroups_by_hand(docs, results, config)
    return Report(results)


def _validate_file(path: str, config: RuleConfig | None, limits: Limits) -> list[DocumentResult]:
    return validate_documents(load_path(path, limits), config).results


def _worker_count(jobs: int, files: int) -> int:
    """jobs > 0: that many processes; 0: one per CPU when there are enough files to share."""
    if jobs > 0:
        return min(jobs, max(files, 1))
    return min(os.cpu_count() or 1, files // 4) or 1


def validate_paths(
    paths: list[str],
    config: RuleConfig | None = None,
    limits: Limits = DEFAULT_LIMITS,
    jobs: int = 1,
) -> Report:
    """Validate files, directories and '-', in order, over `jobs` processes (0: automatic).
    Raises manifests.InputError for paths that do not exist."""
    files = expand_paths(paths)
    workers = _worker_count(jobs, len(files))
    if workers <= 1 or "-" in files:
        return Report([r for path in files for r in _validate_file(path, config, limits)])
    # Imported here: a run in one process (every `-j 1`, and few files) starts without them.
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    context = multiprocessing.get_context(
        "fork" if "fork" in multiprocessing.get_all_start_methods() else None
    )
    with ProcessPoolExecutor(max_workers=workers, mp_context=context) as pool:
        chunks = pool.map(
            _validate_file,
            files,
            repeat(config),
            repeat(limits),
            chunksize=max(1, len(files) // (workers * 4)),
        )
        return Report([r for chunk in chunks for r in chunk])


def validate_text(
    text: str,
    source: str = "<string>",
    config: RuleConfig | None = None,
    limits: Limits = DEFAULT_LIMITS,
) -> Report:
    return validate_documents(load_text(text, source, limits), config)
