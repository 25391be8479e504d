"""``validate --server`` for Kubeflow Trainer v2's objects: what the cluster says of each
TrainJob, TrainingRuntime and ClusterTrainingRuntime, and of the pods JobSet would make.

Each object is dry-run (server-side apply, ``dryRun=All``, strict field validation, as kubectl
applies): the CRD's schema and CEL rules and Trainer's webhooks answer. A TrainJob's runtime is
read from the cluster (the one Trainer will use), else taken from the input; each pod
:func:`trainjob.pods` plans on it is dry-run created, so admission (Pod Security, LimitRanges,
quotas' webhooks) answers too. Trainer's webhook refuses a TrainJob whose runtime does not exist:
when the runtime is only in the input, the TrainJob is not dry-run, and a ``preflight-incomplete``
finding says to apply the runtime first.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from functools import partial
from typing import Any

from tfjob_kit import trainjob, validate_trainer
from tfjob_kit.config import RuleConfig
from tfjob_kit.findings import SERVER, Finding, json_path
from tfjob_kit.kube.api_errors import KubeError
from tfjob_kit.kube.apply import parallel
from tfjob_kit.kube.client import Client
from tfjob_kit.kube.kinds import TRAINER_KINDS, TRAINJOB, Resource
from tfjob_kit.kube.preflight import INCOMPLETE_RULE, field_json_path, object_refusals
from tfjob_kit.model import as_dict
from tfjob_kit.rules import registry
from tfjob_kit.rules.server import POD_RULE, parse_field

TRAINER_RULE = "server-rejects-trainer"
WORKERS = 8


@dataclass(frozen=True)
class TrainerTarget:
    """One Trainer object to judge (namespaced kinds with metadata.namespace set)."""

    source: str
    document: int
    content: dict[str, Any]
    line: int | None = None

    @property
    def resource(self) -> Resource:
        return TRAINER_KINDS[str(self.content["kind"])]

    @property
    def describe(self) -> str:
        meta = as_dict(self.content.get("metadata"))
        where = f"{meta.get('namespace')}/" if self.resource.namespaced else ""
        return f"{self.resource.kind} {where}{meta.get('name')}"

    def finding(self, rule_id: str, message: str, path: str) -> Finding:
        return Finding(
            rule_id, registry.default_severity(rule_id), message, path, origin=SERVER
        ).at(self.source, self.document, self.line)


def check(
    client: Client,
    targets: list[TrainerTarget],
    config: RuleConfig | None = None,
    field_manager: str = "tfjob-kit",
) -> list[Finding]:
    """The cluster's findings for each target, configured. Raises KubeError only when the server
    cannot be reached."""
    config = config or RuleConfig()
    contents = [t.content for t in targets]
    found: list[Finding] = []
    for target in targets:
        for finding in _judge(client, target, contents, field_manager):
            if (configured := config.apply(finding)) is not None:
                found.append(configured)
    return found


def _judge(
    client: Client, target: TrainerTarget, contents: list[dict[str, Any]], field_manager: str
) -> Iterator[Finding]:
    runtime = None
    if target.resource is TRAINJOB:
        try:
            runtime = _server_runtime(client, target.content)
        except KubeError as exc:
            yield target.finding(
                INCOMPLETE_RULE,
                f"the preflight cannot read the runtime of {target.describe}: {exc}",
                json_path("spec", "runtimeRef", "name"),
            )
            return
        in_input = trainjob.find_runtime(target.content, contents)
        if runtime is None and in_input is not None:
            yield target.finding(
                INCOMPLETE_RULE,
                f"the {in_input.get('kind')} {as_dict(in_input.get('metadata')).get('name')!r} "
                "is in this input but not on the cluster, and Trainer's webhook refuses a "
                f"TrainJob whose runtime does not exist: {target.describe} and its pods were "
                "not dry-run; apply the runtime first",
                json_path("spec", "runtimeRef", "name"),
            )
            return
    status, body = client.dry_run_apply(
        target.resource, target.content, field_manager=field_manager, fieldValidation="Strict"
    )
    grant = f"patch on {target.resource.crd_name}"
    for incomplete, field, message in object_refusals(target.describe, status, body, grant):
        rule_id = INCOMPLETE_RULE if incomplete else TRAINER_RULE
        yield target.finding(rule_id, message, field_json_path(field))
    if runtime is not None and status in (200, 201):
        yield from pod_findings(client, target, runtime)


def runtime_of(
    client: Client, target: TrainerTarget, contents: list[dict[str, Any]]
) -> dict[str, Any] | None:
    """The runtime a TrainJob will run on: the cluster's, else the one in ``contents``."""
    return _server_runtime(client, target.content) or trainjob.find_runtime(
        target.content, contents
    )


def _server_runtime(client: Client, job: dict[str, Any]) -> dict[str, Any] | None:
    """The runtime the TrainJob names, as the cluster holds it (None: there is none)."""
    ref = as_dict(as_dict(job.get("spec")).get("runtimeRef"))
    resource = TRAINER_KINDS.get(str(ref.get("kind") or "ClusterTrainingRuntime"))
    if resource is None or resource is TRAINJOB or not ref.get("name"):
        return None
    namespace = str(as_dict(job.get("metadata")).get("namespace") or "default")
    found = client.get(resource, namespace, str(ref["name"]))
    if found is not None:
        found.setdefault("kind", resource.kind)
    return found


def pod_findings(
    client: Client, target: TrainerTarget, runtime: dict[str, Any]
) -> Iterator[Finding]:
    """Each planned pod dry-run created; a reason common to the pods of a replicated job is
    said once."""
    plans = trainjob.pods(target.content, runtime)
    calls = [
        partial(client.dry_run_create, "pods", p.pod["metadata"]["namespace"], p.pod) for p in plans
    ]
    seen: set[tuple[str, str]] = set()
    for plan, (status, body) in zip(plans, parallel(_call, calls, workers=WORKERS), strict=True):
        what = f"pod {plan.pod['metadata']['name']} (replicated job {plan.replicated_job})"
        grant = "create on pods in that namespace (a dry run stores nothing)"
        if status == 409:  # a pod of that name exists, so admission passed
            continue
        for incomplete, field, message in object_refusals(what, status, body, grant):
            if incomplete:
                path = json_path("spec", "runtimeRef", "name")
            else:
                parts = parse_field(field)
                path, _ = validate_trainer.pod_source(target.content, runtime, plan, parts)
            # The same reason for each pod of a replicated job, the pod's name aside: said once.
            reason = message.replace(plan.pod["metadata"]["name"], "")
            if (path, reason) not in seen:
                seen.add((path, reason))
                yield target.finding(INCOMPLETE_RULE if incomplete else POD_RULE, message, path)


def _call(call: Any) -> Any:
    return call()
