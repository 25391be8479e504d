"""The preflight of a job submitted to Kueue (its label kueue.x-k8s.io/queue-name): what would
keep it waiting for ever, found before anything is applied. The LocalQueue it names must exist in
its namespace, with a ClusterQueue behind it that is active and can ever admit all of the job
(its nominal quota plus what it may borrow), and Kueue must take the job: its admission webhook
creates a managed job suspended, so a dry run that comes back running means Kueue is not
installed, or its integration for the job's kind is not enabled."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from tfjob_kit import kueue
from tfjob_kit.findings import SERVER, Finding, Severity
from tfjob_kit.kube.api_errors import KubeError
from tfjob_kit.kube.client import Client
from tfjob_kit.kube.kinds import CLUSTER_QUEUE, LOCAL_QUEUE, Resource

RULE = "kueue-queue"
INCOMPLETE_RULE = "preflight-incomplete"


@dataclass(frozen=True)
class QueuedJob:
    """One job of the input that names a queue: where it came from, what it is, what it asks for
    (Kueue's count: every pod's requests), and whether it is new (Kueue's webhook acts on
    creation only)."""

    source: str
    document: int
    resource: Resource
    body: dict[str, Any]
    demand: dict[str, Any]
    new: bool


def check(
    client: Client,
    jobs: list[QueuedJob],
    dry_run: Callable[[QueuedJob], dict[str, Any] | None],
) -> list[Finding]:
    """The findings for the jobs that name a queue (``dry_run``: the job as a server-side dry
    run of its creation returns it, None when that failed for another reason, which the apply
    reports). A credential that may not read Kueue's objects makes a ``preflight-incomplete``
    warning."""
    found: list[Finding] = []
    for job in jobs:
        queue = kueue.queue_of(job.body)
        if queue is None:
            continue
        try:
            problem = _queue_problem(client, job, queue)
        except KubeError as exc:
            if exc.reason == "crd-missing":
                message = f"the job names the Kueue queue {queue!r}, but Kueue is not installed"
                found.append(_finding(job, f"{message}: {exc}"))
            else:
                found.append(_finding(job, f"the queue {queue!r} was not checked: {exc}", False))
            continue
        if problem:
            found.append(_finding(job, problem))
            continue
        if job.new and not kueue.is_suspended(job.body):
            answer = dry_run(job)
            if answer is not None and not kueue.is_suspended(answer):
                found.append(_finding(job, _not_taken(job, queue)))
    return found


def _not_taken(job: QueuedJob, queue: str) -> str:
    framework = kueue.FRAMEWORKS[job.resource.kind]
    namespace = str((job.body.get("metadata") or {}).get("namespace") or "")
    return (
        f"Kueue did not take the {job.resource.kind}: its webhook would have created it "
        "suspended, and the dry run came back running, so it would start at once, outside the "
        f"queue {queue!r}. In Kueue's Configuration, enable the integration {framework!r} "
        "(integrations.frameworks; Kueue v0.19 enables no Kubeflow job by default; the "
        f"tfjob.kit.kueue role enables it), or let managedJobsNamespaceSelector take namespace "
        f"{namespace!r} (by default it leaves out kube-system and Kueue's own)"
    )


def _finding(job: QueuedJob, message: str, blocking: bool = True) -> Finding:
    """A finding at the job's queue label: the rule's error, or the incomplete-check warning."""
    rule, severity = (RULE, Severity.ERROR) if blocking else (INCOMPLETE_RULE, Severity.WARNING)
    finding = Finding(rule, severity, message, kueue.QUEUE_PATH, origin=SERVER)
    return finding.at(job.source, job.document, None)


def _queue_problem(client: Client, job: QueuedJob, queue: str) -> str | None:
    """Why the job would wait for ever in its queue, None when it would not."""
    namespace = str((job.body.get("metadata") or {}).get("namespace") or "")
    local = client.get(LOCAL_QUEUE, namespace, queue)
    if local is None:
        return (
            f"the LocalQueue {namespace}/{queue} does not exist: Kueue would hold the job "
            "suspended for ever. Create it (the tfjob.kit.kueue role's kueue_local_queues) or "
            "name another queue of the namespace"
        )
    name = str((local.get("spec") or {}).get("clusterQueue") or "")
    cluster_queue = client.get(CLUSTER_QUEUE, "", name)
    where = f"the ClusterQueue {name!r} of LocalQueue {namespace}/{queue}"
    if cluster_queue is None:
        return f"{where} does not exist: Kueue would hold the job suspended for ever"
    if (why := kueue.inactive(cluster_queue)) is not None:
        return f"{where} is inactive ({why}): it admits no job until that is fixed"
    too_much = kueue.never_fits(job.demand, kueue.capacity(cluster_queue))
    if too_much:
        return (
            f"the job's pods together need {'; '.join(too_much)} (its nominal quota plus what "
            f"it may borrow): {where} can never admit it"
        )
    return None
