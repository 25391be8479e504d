"""The whole tfjob task: load, convert, validate, apply or delete, wait; one result.

The Ansible module and the CLI call run(); they only map their arguments to a Request and the
Result (or TaskError) to their own output.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from tfjob_kit import kueue, model, redact, trainjob
from tfjob_kit.config import ConfigError, RuleConfig, from_settings
from tfjob_kit.findings import Finding, Severity
from tfjob_kit.kube import (
    apply,
    diagnose,
    jobs,
    kueue_preflight,
    preflight,
    status,
    trainer_preflight,
)
from tfjob_kit.kube.api_errors import KubeError
from tfjob_kit.kube.client import Client
from tfjob_kit.kube.connection import Connection
from tfjob_kit.kube.kinds import TFJOB, TRAINJOB
from tfjob_kit.kube.server_verdict import server_minor

DEFAULT_FIELD_MANAGER = "tfjob-kit"


@dataclass
class Request:
    src: list[str] | None = None
    definition: Any = None
    state: Literal["present", "absent"] = "present"
    namespace: str | None = None
    field_manager: str = DEFAULT_FIELD_MANAGER
    force_conflicts: bool = False
    validate: jobs.ValidateMode = "strict"
    rules: dict[str, Any] = field(default_factory=dict)  # rule id -> off|error|warning|info
    backend: jobs.Backend = "kubeflow"
    # The Kueue LocalQueue to submit the jobs to (their label kueue.x-k8s.io/queue-name).
    queue: str | None = None
    convert: bool = False
    wait: bool = False
    wait_for: list[str] = field(default_factory=lambda: ["Succeeded"])
    fail_on: list[str] = field(default_factory=lambda: ["Failed"])
    wait_timeout: float = 600.0
    # Seconds a pod may stay Unschedulable before the wait fails (diagnose.py says why).
    unschedulable_grace: float = 60.0
    preflight: bool = True  # dry-run the pods (and PodGroup) the operator will create
    check_mode: bool = False
    diff: bool = False
    connection: Connection = field(default_factory=Connection)


class TaskError(Exception):
    """The task failed; `result` holds what is known (findings, jobs applied so far...)."""

    def __init__(self, message: str, result: dict[str, Any]) -> None:
        super().__init__(message)
        self.result = result


def _rule_config(settings: dict[str, Any], kubernetes: str = "") -> RuleConfig:
    try:
        return replace(from_settings(dict(settings), "rules"), kubernetes=kubernetes)
    except ConfigError as exc:
        raise jobs.InvalidInputError([str(exc)]) from None


def _cluster_minor(connection: Connection) -> str:
    """The minor the pod checks follow: the cluster's (the window's nearest). "" (the default)
    when the cluster cannot be asked: the apply then says why."""
    try:
        return server_minor(connection)
    except KubeError:
        return ""


def _job_result(outcome: apply.Outcome, job_status: status.JobStatus | None) -> dict[str, Any]:
    item = outcome.item
    obj = outcome.after or outcome.before
    current = job_status or status.job_status(item.resource, obj)
    return {
        "kind": item.resource.kind,
        "api_version": item.resource.api_version,
        "namespace": item.namespace,
        "name": item.name,
        "source": item.source,
        "document": item.document,
        "action": outcome.action,
        "changed": outcome.changed,
        "tf_config": item.tf_config(),
        **current.as_dict(),
    }


class PreflightError(KubeError):
    """The preflight found what the cluster would refuse (or never start): nothing is applied."""


def _preflight(
    client: Client, request: Request, result: dict[str, Any], config: RuleConfig
) -> Callable[[list[tuple[jobs.Item, bool]]], None]:
    """The check apply_items runs beside its dry runs (TFJobs only: a Volcano Job's pods are
    Volcano's): findings go to the result; error-level ones raise PreflightError."""

    def gate(changing: list[tuple[jobs.Item, bool]]) -> None:
        targets = [
            preflight.Target(i.source, i.document, i.tfjob, exists=exists)
            for i, exists in changing
            if i.resource is TFJOB
        ]
        trainjobs = [i for i, _ in changing if i.resource is TRAINJOB]
        if not targets and not trainjobs:
            return
        found = preflight.check(client, targets, config) if targets else []
        runtimes = {id(item): _runtime(client, item) for item in trainjobs}
        for item in trainjobs:
            found += _trainjob_pods(client, item, runtimes[id(item)], config)
        queued = [_queued(i, exists, runtimes.get(id(i))) for i, exists in changing if i.is_job]
        found += [
            c
            for f in kueue_preflight.check(
                client, [q for q in queued if q], _dry_run(client, request)
            )
            if (c := config.apply(f)) is not None
        ]
        result["findings"].extend(f.as_dict() for f in found)
        result["warnings"].extend(
            f"{f.source}: document {f.document}: {f.path}: {f.message} [{f.rule}]"
            for f in found
            if f.severity == Severity.WARNING
        )
        errors = preflight.blocking(found)
        if errors:
            count = f"{len(errors)} problems" if len(errors) > 1 else "1 problem"
            raise PreflightError(
                f"nothing was applied; the preflight against the cluster found {count}:\n"
                + preflight.summary(errors),
                "preflight",
            )

    return gate


def _runtime(client: Client, item: jobs.Item) -> dict[str, Any] | None:
    """The runtime a TrainJob will run on: the one applied with it, else the cluster's."""
    if item.needs is not None:
        return item.needs.body
    target = trainer_preflight.TrainerTarget(item.source, item.document, item.body)
    return trainer_preflight.runtime_of(client, target, [])


def _queued(
    item: jobs.Item, exists: bool, runtime: dict[str, Any] | None
) -> kueue_preflight.QueuedJob | None:
    """The job as the Kueue preflight reads it, when it names a queue: what its pods ask for
    (a TrainJob's on ``runtime``)."""
    if kueue.queue_of(item.body) is None or item.resource not in (TFJOB, TRAINJOB):
        return None
    if item.resource is TFJOB:
        pods = [(r.count, diagnose.pod_requests(r.pod_spec)) for r in model.replicas(item.body)]
    else:
        planned = trainjob.pods(item.body, runtime) if runtime is not None else []
        pods = [(1, diagnose.pod_requests(p.pod.get("spec") or {})) for p in planned]
    return kueue_preflight.QueuedJob(
        item.source, item.document, item.resource, item.body, kueue.demand(pods), not exists
    )


def _dry_run(
    client: Client, request: Request
) -> Callable[[kueue_preflight.QueuedJob], dict[str, Any] | None]:
    def created(job: kueue_preflight.QueuedJob) -> dict[str, Any] | None:
        code, answer = client.dry_run_apply(
            job.resource, job.body, field_manager=request.field_manager
        )
        return answer if code in (200, 201) else None

    return created


def _trainjob_pods(
    client: Client, item: jobs.Item, runtime: dict[str, Any] | None, config: RuleConfig
) -> list[Finding]:
    """The pods of a TrainJob, dry-run on the runtime it will run on."""
    if runtime is None:
        return []  # the TrainJob's own dry run says the runtime is missing
    target = trainer_preflight.TrainerTarget(item.source, item.document, item.body)
    found = trainer_preflight.pod_findings(client, target, runtime)
    return [c for f in found if (c := config.apply(f)) is not None]


def run(request: Request) -> dict[str, Any]:
    """Do the task; returns the result, raises TaskError (with the partial result).

    What they return never holds the value of a secret env entry (redact's rule); the objects
    applied keep them."""
    started = time.monotonic()
    result: dict[str, Any] = {
        "changed": False,
        "jobs": [],
        "objects": [],
        "findings": [],
        "warnings": [],
    }
    secrets: set[str] = set()

    def failed(message: str) -> TaskError:
        result["duration"] = round(time.monotonic() - started, 3)
        # What may be shown: secret env entries' values masked in objects and diffs, and
        # secret values masked in every text (redact's rule).
        return TaskError(redact.mask(message, secrets), redact.mask(result, secrets))

    try:
        # A definition given as data gives its secrets before loading, whatever loads.
        secrets.update(jobs.input_secret_values(request.definition, []))
        docs = jobs.load_input(request.src, request.definition)
        secrets.update(jobs.secret_values(docs))
        default_namespace = request.connection.namespace() or "default"
        # A pod is judged as the cluster's Kubernetes minor does (asked once the input loads).
        judged = request.state == "present" and request.validate != "off"
        rules = _rule_config(request.rules, _cluster_minor(request.connection) if judged else "")
        items = jobs.prepare(
            docs,
            namespace=request.namespace,
            default_namespace=default_namespace,
            backend=request.backend,
            queue=request.queue,
            validate=request.validate,
            rules=rules,
            allow_convert=request.convert,
            for_delete=request.state == "absent",
        )
    except jobs.InvalidInputError as exc:
        result["findings"] = [f.as_dict() for f in exc.findings]
        raise failed(str(exc)) from None
    result["findings"] = [f.as_dict() for i in items for f in i.findings]
    result["warnings"] = _warnings(items, request.validate)
    if not items:
        raise failed("nothing to apply: the input holds no TFJob or TrainJob")
    try:
        with Client(request.connection) as client:
            applied_at = 0.0  # when the jobs were applied (state present)
            if request.state == "absent":
                outcomes = apply.delete_items(client, items, check_mode=request.check_mode)
            else:
                gate = _preflight(client, request, result, rules) if request.preflight else None
                applied_at = time.time()
                outcomes = apply.apply_items(
                    client,
                    items,
                    field_manager=request.field_manager,
                    force=request.force_conflicts,
                    check_mode=request.check_mode,
                    preflight=gate,
                )
            result["changed"] = any(o.changed for o in outcomes)
            if request.diff:
                result["diff"] = [o.diff() for o in outcomes if o.changed]
            result["objects"] = [o.after for o in outcomes if o.after is not None]
            # The jobs (a TrainingRuntime applied beside its TrainJob is in objects only).
            job_outcomes = [o for o in outcomes if o.item.is_job]
            result["jobs"] = [_job_result(o, None) for o in job_outcomes]
            if request.wait and not request.check_mode:
                # Deleting waits for every object; applying, for the jobs' conditions.
                waited = outcomes if request.state == "absent" else job_outcomes
                _wait(client, request, waited, applied_at, result)
    except KubeError as exc:
        raise failed(str(exc)) from None
    result["duration"] = round(time.monotonic() - started, 3)
    masked: dict[str, Any] = redact.mask(result, secrets)
    return masked


def _warnings(items: list[jobs.Item], validate: str) -> list[str]:
    """The findings to warn about (errors too, where validation does not stop at them), and
    the conversion notes."""
    return [
        f"{f.source}: document {f.document}: {f.path}: {f.message} [{f.rule}]"
        for i in items
        for f in i.findings
        if f.severity >= Severity.WARNING
        and not (validate == "strict" and f.severity >= Severity.ERROR)
    ] + [note for i in items for note in i.notes]


def _wait(
    client: Client,
    request: Request,
    outcomes: list[apply.Outcome],
    applied_at: float,
    result: dict[str, Any],
) -> None:
    """Wait until the jobs are gone (absent) or reach a wait_for condition; each job's result
    gets the status it ended in, also when the wait fails."""
    keys = [(o.item.resource, o.item.namespace, o.item.name) for o in outcomes]
    if request.state == "absent":
        status.wait_gone(client, keys, timeout=request.wait_timeout)
        result["jobs"] = [
            _job_result(o, status.job_status(o.item.resource, None))
            for o in outcomes
            if o.item.is_job
        ]
    else:
        # An updated job's older events are about its earlier spec.
        since = {
            k: applied_at for o, k in zip(outcomes, keys, strict=True) if o.action == "updated"
        }
        try:
            reached = status.wait(
                client,
                keys,
                wait_for=request.wait_for,
                fail_on=request.fail_on,
                timeout=request.wait_timeout,
                unschedulable_grace=request.unschedulable_grace,
                since=since,
                workloads=any(kueue.queue_of(o.item.body) for o in outcomes),
            )
        except status.WaitError as exc:
            result["jobs"] = [
                _job_result(o, exc.statuses.get(k)) for o, k in zip(outcomes, keys, strict=True)
            ]
            raise
        result["jobs"] = [_job_result(o, reached[k]) for o, k in zip(outcomes, keys, strict=True)]
