"""``validate --server``: the cluster's verdict on each TFJob and Trainer object merged into the
offline report.

The preflight (``preflight.py``) dry-runs each loaded v1 TFJob and what it names, and
``trainer_preflight.py`` each TrainJob, (Cluster)TrainingRuntime and the TrainJobs' pods; their
findings
join the document's offline ones, in the same order and format, secret values masked. Where the
server has answered for itself, its verdict replaces the offline prediction of it (the
``server-rejects-*`` rules of ``rules/server.py``). Where the preflight was incomplete the
predictions stay, origin "offline", and the text report says so
(``report.text.kept_predictions``).
"""

from __future__ import annotations

import copy
from dataclasses import replace

from tfjob_kit import config, model, redact, validate_trainer
from tfjob_kit.kube import preflight, trainer_preflight
from tfjob_kit.kube.client import Client
from tfjob_kit.kube.connection import Connection
from tfjob_kit.kube.kinds import TRAINER_KINDS
from tfjob_kit.manifests import Document
from tfjob_kit.podcheck import release
from tfjob_kit.rules.server import SERVER_RULES
from tfjob_kit.validate import DocumentResult, Report
from tfjob_kit.validate_trainer import RUNTIME_NOT_FOUND
from tfjob_kit.versions import load_versions


def add_server_findings(
    docs: list[Document],
    result: Report,
    rule_config: config.RuleConfig,
    connection: Connection,
    namespace: str | None = None,
) -> list[str]:
    """Ask the cluster about each TFJob and Trainer object of `docs` (a namespace-less one goes
    to `namespace`, else the connection's, else 'default') and add its findings to `result`'s.
    Returns warnings about the cluster itself (a Kubernetes outside the window the toolkit is
    tested on). Raises KubeError when the cluster cannot be asked."""
    default_namespace = namespace or connection.namespace() or "default"
    chosen: list[tuple[DocumentResult, preflight.Target]] = []
    trainer: list[tuple[DocumentResult, trainer_preflight.TrainerTarget]] = []
    for doc, doc_result in zip(docs, result.results, strict=True):
        if doc_result.skipped is not None or not doc_result.loaded or not doc_result.name:
            continue
        content = copy.deepcopy(doc.content)
        if validate_trainer.is_trainer_object(content):
            if TRAINER_KINDS[content["kind"]].namespaced:
                content.setdefault("metadata", {}).setdefault("namespace", default_namespace)
            trainer.append(
                (
                    doc_result,
                    trainer_preflight.TrainerTarget(doc.source, doc.index, content, doc.line),
                )
            )
        elif doc.api_version == model.API_VERSION:  # the server serves v1 TFJobs only
            content.setdefault("metadata", {}).setdefault("namespace", default_namespace)
            chosen.append((doc_result, preflight.Target(doc.source, doc.index, content, doc.line)))
    if not chosen and not trainer:
        return []
    with Client(connection) as client:
        warnings = version_warnings(client.server_version())
        found = preflight.check(client, [t for _, t in chosen], rule_config, the_jobs=True)
        found += trainer_preflight.check(client, [t for _, t in trainer], rule_config)
    judged = [(r, t.source, t.document, t.tfjob) for r, t in chosen]
    judged += [(r, t.source, t.document, t.content) for r, t in trainer]
    for doc_result, source, document, content in judged:
        secrets = redact.secret_values(content)
        mine = [
            replace(f, message=redact.mask_message(f.message, f.path, secrets))
            for f in found
            if f.source == source and f.document == document
        ]
        offline = doc_result.findings
        if not any(f.rule == preflight.INCOMPLETE_RULE for f in mine):
            # The server answered: its verdict replaces the predictions of it, and a TrainJob's
            # runtime missing from the input was looked for there (the webhook says if it is not).
            offline = [f for f in offline if f.rule not in (*SERVER_RULES, RUNTIME_NOT_FOUND)]
        doc_result.findings = sorted([*offline, *mine], key=lambda f: (f.path, -f.severity, f.rule))
    return warnings


def server_minor(connection: Connection) -> str:
    """The minor of the window the offline pod checks follow for this server: its own, or the
    window's nearest when it runs another. Raises KubeError when it cannot be asked."""
    with Client(connection) as client:
        return release.nearest(client.server_version())


def version_warnings(server: str) -> list[str]:
    """What to say of a server outside the Kubernetes window the toolkit is tested on."""
    versions = load_versions()
    if versions.in_window(server):
        return []
    oldest, newest = versions.kubernetes_window
    return [
        f"the API server runs Kubernetes {server}; tfjob-kit is tested on {oldest} to {newest} "
        f"(make test-versions) and its offline pod checks follow {release.nearest(server)}: "
        "the server's answers (origin server) are its own, and the roles' preflight refuses "
        "this cluster"
    ]
