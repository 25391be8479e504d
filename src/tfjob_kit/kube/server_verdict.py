"""``validate --server``: the cluster's verdict on each TFJob merged into the offline report.

The preflight (``preflight.py``) dry-runs each loaded v1 TFJob and what it names; its findings
join the document's offline ones, in the same order and format, secret values masked. Where the
server has answered for itself, its verdict replaces the offline prediction of it (the
``server-rejects-*`` rules of ``rules/server.py``). Where the preflight was incomplete the
predictions stay, origin "offline", and the text report says so
(``report.text.kept_predictions``).
"""

from __future__ import annotations

import copy
from dataclasses import replace

from tfjob_kit import config, model, redact
from tfjob_kit.kube import preflight
from tfjob_kit.kube.client import Client
from tfjob_kit.kube.connection import Connection
from tfjob_kit.manifests import Document
from tfjob_kit.rules.server import SERVER_RULES
from tfjob_kit.validate import Report


def add_server_findings(
    docs: list[Document],
    result: Report,
    rule_config: config.RuleConfig,
    connection: Connection,
    namespace: str | None = None,
) -> None:
    """Ask the cluster about each TFJob of `docs` (a namespace-less one goes to `namespace`, else
    the connection's, else 'default') and add its findings to `result`'s. Raises KubeError when
    the cluster cannot be asked."""
    default_namespace = namespace or connection.namespace() or "default"
    chosen = []
    for doc, doc_result in zip(docs, result.results, strict=True):
        if doc_result.skipped is not None or not doc_result.loaded or not doc_result.name:
            continue
        if doc.api_version != model.API_VERSION:  # the server serves v1 only
            continue
        job = copy.deepcopy(doc.content)
        job.setdefault("metadata", {}).setdefault("namespace", default_namespace)
        chosen.append((doc_result, preflight.Target(doc.source, doc.index, job, doc.line)))
    if not chosen:
        return
    with Client(connection) as client:
        found = preflight.check(client, [t for _, t in chosen], rule_config, the_jobs=True)
    for doc_result, target in chosen:
        secrets = redact.secret_values(target.tfjob)
        mine = [
            replace(f, message=redact.mask_message(f.message, f.path, secrets))
            for f in found
            if f.source == target.source and f.document == target.document
        ]
        offline = doc_result.findings
        if not any(f.rule == preflight.INCOMPLETE_RULE for f in mine):
            offline = [f for f in offline if f.rule not in SERVER_RULES]
        doc_result.findings = sorted([*offline, *mine], key=lambda f: (f.path, -f.severity, f.rule))
