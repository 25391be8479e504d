"""The rule registry: each rule's id, default severity, summary and check, the findings the loader,
the schema and cross-document checks produce (:data:`BUILTIN`), and :func:`run`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from tfjob_kit import model
from tfjob_kit.findings import Finding, Severity
from tfjob_kit.model import Replica

Check = Callable[[dict[str, Any], list[Replica]], Iterator[tuple[str, str]]]


@dataclass(frozen=True)
class Rule:
    id: str
    severity: Severity
    summary: str
    check: Check
    defers: bool = False  # its findings give way to another rule's error at the same path


RULES: dict[str, Rule] = {}

# Findings the loader, the schema and cross-document checks produce; listed so that they can be
# re-levelled too.
BUILTIN = {
    "yaml-syntax": (Severity.ERROR, "The document is not valid YAML, or not JSON-compatible."),
    "input-limit": (Severity.ERROR, "The input exceeds a size, depth or alias-expansion limit."),
    "not-an-object": (Severity.ERROR, "The document is not a mapping (a Kubernetes object)."),
    "schema": (
        Severity.ERROR,
        "The object does not match its JSON Schema (TFJob kubeflow.org/v1; TrainJob and "
        "(Cluster)TrainingRuntime trainer.kubeflow.org/v1alpha1, from the CRDs).",
    ),
    "podgroup-by-hand": (
        Severity.WARNING,
        "A PodGroup written next to a TFJob collides with the operator's.",
    ),
    "trainjob-runtime-not-found": (
        Severity.WARNING,
        "A TrainJob's runtime is neither in the input nor among the runtimes tfjob-kit ships, "
        "so the pods it makes are not checked.",
    ),
    "jobset-rejects-name": (
        Severity.ERROR,
        "JobSet's webhook refuses a TrainJob's JobSet: the TrainJob's name makes a Job or pod "
        "name over 63 characters.",
    ),
    "trainjob-tf-config": (
        Severity.ERROR,
        "A TrainJob's TF_CONFIG does not name its own pods (their addresses, each pod's task).",
    ),
}

# What only the cluster can say: the server-aware preflight's findings (kube/preflight.py;
# server-rejects-pod is rules/server.py's, offline and from the dry run alike). Listed so that
# configurations can re-level them; tests/integration/test_preflight.py produces each.
PREFLIGHT = {
    "server-rejects-tfjob": (
        Severity.ERROR,
        "The API server rejects the TFJob itself (dry run; `validate --server`).",
    ),
    "server-rejects-trainer": (
        Severity.ERROR,
        "The API server or Trainer's webhook rejects a TrainJob or (Cluster)TrainingRuntime "
        "(dry run; `validate --server`).",
    ),
    "server-rejects-podgroup": (
        Severity.ERROR,
        "The API server rejects the PodGroup the operator creates for the gang (dry run).",
    ),
    "quota-exceeded": (
        Severity.ERROR,
        "The job's pods together need more than a ResourceQuota of the namespace leaves.",
    ),
    "missing-reference": (
        Severity.ERROR,
        "A ServiceAccount, PriorityClass, Secret, ConfigMap, PVC or Volcano queue the pods name "
        "does not exist.",
    ),
    "kueue-queue": (
        Severity.ERROR,
        "A job submitted to Kueue would wait for ever: its LocalQueue or ClusterQueue is missing, "
        "the ClusterQueue is inactive or can never admit all of the job, Kueue is not installed, "
        "or Kueue does not manage the job's kind.",
    ),
    "preflight-incomplete": (
        Severity.WARNING,
        "The credentials may not make one of the preflight's requests; that part is unchecked.",
    ),
}


def rule(
    rule_id: str, severity: Severity, summary: str, *, defers: bool = False
) -> Callable[[Check], Check]:
    """Register a check. `defers`: drop its findings where another (non-deferring) rule reports
    an error at the same path (the server rules quote the server; the others explain better)."""

    def register(check: Check) -> Check:
        if rule_id in RULES or rule_id in BUILTIN or rule_id in PREFLIGHT:
            raise ValueError(f"rule {rule_id} registered twice")
        RULES[rule_id] = Rule(rule_id, severity, summary, check, defers)
        return check

    return register


def all_rule_ids() -> list[str]:
    return sorted([*BUILTIN, *PREFLIGHT, *RULES])


def default_severity(rule_id: str) -> Severity:
    if rule_id in RULES:
        return RULES[rule_id].severity
    return {**BUILTIN, **PREFLIGHT}[rule_id][0]


def summary(rule_id: str) -> str:
    if rule_id in RULES:
        return RULES[rule_id].summary
    return {**BUILTIN, **PREFLIGHT}[rule_id][1]


def run(content: dict[str, Any]) -> list[Finding]:
    """Findings of every rule on one TFJob object, at default severity."""
    reps = model.replicas(content)
    findings: list[Finding] = []
    deferred: list[Finding] = []
    for item in RULES.values():
        for path, message in item.check(content, reps):
            finding = Finding(item.id, item.severity, message, path)
            (deferred if item.defers else findings).append(finding)
    if deferred:
        taken = {f.path for f in findings if f.severity is Severity.ERROR}
        findings.extend(f for f in deferred if f.path not in taken)
    return findings
