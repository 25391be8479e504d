"""`tfjob-kit validate --server` against the real API server on the differential test's cases.

The offline validation predicts the server (test_pod_validation_agrees.py); `--server` asks it:
the TFJob and the operator's pods are dry-run by the preflight, whose answers replace the
offline predictions. Every generated case, written as one multi-document file and validated by
the CLI exactly as a user runs it, must then get the server's own verdict, 100% of them. Only
the findings about cluster state are left out of the verdict (the cases name Secrets and
ConfigMaps that do not exist in the test's namespace: `missing-reference`, which the server's
dry run does not check; quotas; permissions).

The verdict must come from the server: `--server` drops the offline predictions of it once the
preflight has answered, and every finding says where it came from (``origin``). A rejected case
must have an error of origin ``server``; a case whose preflight was incomplete, or that still
carries an offline prediction (``server-rejects-pod`` or ``-metadata`` of origin ``offline``),
is a disagreement. So the test fails when `--server` answered nothing or fell back.

The verdict is the server's on the requests the operator and the module make: the TFJob as a
server-side apply (it refuses what a create accepts in one respect, a `null` where the CRD's
schema wants a value; the test counts those cases), and the pods as the local cluster's operator
creates them, with Volcano's gang annotations for a job that asks for gang scheduling (they can
push a template's annotations over the 256 KiB limit).
"""

from __future__ import annotations

import json
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import yaml

from podcases import generate
from tfjob_kit import operator_objects
from tfjob_kit.findings import OFFLINE, SERVER
from tfjob_kit.kube import preflight
from tfjob_kit.rules.server import SERVER_RULES

from ._cluster import Cluster
from .test_pod_validation_agrees import THREADS, Api, server_verdict
from .test_preflight import _kubeconfig_for

UNDEFINED_MOUNT = (
    Path(__file__).resolve().parents[1]
    / "data"
    / "corpus"
    / "invalid"
    / "server-volume-mount-undefined.yaml"
)

# Findings about the test namespace's state, not the job: left out of the verdict.
CLUSTER_STATE = {"missing-reference", "quota-exceeded"}


def _rejects(api: Api, namespace: str, job: dict[str, Any]) -> bool:
    """Whether the server refuses the TFJob as a server-side apply (dryRun=All), or one of the
    pods the operator creates from it."""
    gang = operator_objects.VOLCANO if preflight.is_gang(job) else ""
    for _, pod in operator_objects.operator_pods(job, gang_scheduler=gang):
        if api.dry_run_pod(namespace, pod)[0] >= 300:
            return True
    name = job["metadata"]["name"]
    request = api.api_client.param_serialize(
        "PATCH",
        f"/apis/kubeflow.org/v1/namespaces/{namespace}/tfjobs/{name}",
        query_params=[("dryRun", "All"), ("fieldManager", "tfjob-kit"), ("force", "true")],
        header_params={"Content-Type": "application/apply-patch+yaml", "Accept": "*/*"},
        body=job,
        auth_settings=["BearerToken"],
    )
    response: Any = api.api_client.call_api(*request, _request_timeout=60)
    response.read()
    return int(response.status) >= 300


def _validate_server(kubeconfig: Path, namespace: str, path: Path, fmt: str) -> tuple[int, str]:
    """`tfjob-kit validate --server` as a user runs it: (exit code, the report)."""
    report = path.with_suffix(f".{fmt}")
    run = subprocess.run(
        [
            *(str(Path(sys.executable).parent / "tfjob-kit"), "validate", "--server"),
            *("--kubeconfig", str(kubeconfig), "-n", namespace),
            *("--format", fmt, "-o", str(report), str(path)),
        ],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert run.returncode in (0, 1), run.stderr
    return run.returncode, report.read_text()


def _judge(document: dict[str, Any], rejected: bool) -> str | None:
    """Why the report on one document is not the server's verdict (None when it is): its errors
    (cluster state left out) must be there exactly when the server rejects the case, one of them
    at least of origin server; an incomplete preflight, or an offline prediction of the
    server's verdict left in the report, is a fall-back."""
    findings = document["findings"]
    assert all(f["origin"] in (SERVER, OFFLINE) for f in findings), findings
    errors = [
        f
        for f in findings
        if f["severity"] == "error"
        and f["rule"] not in CLUSTER_STATE
        and f["rule"] != preflight.INCOMPLETE_RULE
    ]
    from_server = [f for f in errors if f["origin"] == SERVER]
    fell_back = [
        (f["rule"], f["origin"], f["message"])
        for f in findings
        if f["rule"] == preflight.INCOMPLETE_RULE
        or (f["origin"] == OFFLINE and f["rule"] in SERVER_RULES)
    ]
    said = [(f["rule"], f["origin"], f["path"], f["message"]) for f in errors]
    if fell_back:
        return f"fell back to the offline predictions: {fell_back}; errors {said}"
    if bool(errors) != rejected or bool(from_server) != rejected:
        return f"validate --server {said}"
    return None


def test_validate_server_gives_the_api_servers_verdict(
    cluster: Cluster, namespace: str, tmp_path: Path
) -> None:
    cases = generate()
    jobs: list[dict[str, Any]] = []
    for case in cases:
        job = json.loads(json.dumps(case.job))
        job["metadata"]["namespace"] = namespace
        jobs.append(job)
    api = Api(cluster.kubeconfig)
    with ThreadPoolExecutor(THREADS) as pool:
        verdicts = list(pool.map(lambda job: server_verdict(api, namespace, job)[0], jobs))
        applied = list(pool.map(lambda job: _rejects(api, namespace, job), jobs))
    source = tmp_path / "cases.yaml"
    source.write_text(yaml.safe_dump_all(jobs, sort_keys=False))
    _, report = _validate_server(cluster.kubeconfig, namespace, source, "json")
    documents = json.loads(report)["documents"]
    assert len(documents) == len(cases)
    disagreements = []
    only_apply = 0
    for case, verdict, rejects, document in zip(cases, verdicts, applied, documents, strict=True):
        rejected = verdict.rejected or rejects
        only_apply += rejected and not verdict.rejected
        if (why := _judge(document, rejected)) is not None:
            disagreements.append(
                f"{case.id} {case.mutations}: server {verdict.messages or rejected}; {why}"
            )
    answered = sum(any(f["origin"] == SERVER for f in d["findings"]) for d in documents)
    print(
        f"{len(cases)} cases, {sum(v.rejected for v in verdicts)} rejected by the server, "
        f"{only_apply} more only as an apply or with gang annotations, {answered} with "
        f"findings of origin server, {len(disagreements)} disagree"
    )
    assert not disagreements, "\n".join(disagreements)
    # The cases exercise the server's side: many are rejected, each in the server's own words.
    assert answered >= 0.4 * len(cases)


def test_a_fall_back_to_the_offline_predictions_shows_and_fails_the_verdict(
    cluster: Cluster, namespace: str, tmp_path: Path
) -> None:
    """Credentials that may not dry-run the TFJob or its pods: the preflight is incomplete, the
    offline prediction of the pod's rejection stays, of origin offline, the text report says
    so, and the judge of the test above counts the document as a disagreement."""
    token = cluster.service_account_token(
        namespace,
        "reader",
        "reader",
        "get,list",
        "secrets,configmaps,persistentvolumeclaims,serviceaccounts,resourcequotas",
    )
    kubeconfig = _kubeconfig_for(cluster, token, tmp_path / "limited.yaml")
    job = yaml.safe_load(UNDEFINED_MOUNT.read_text())
    job["metadata"]["namespace"] = namespace
    source = tmp_path / "job.yaml"
    source.write_text(yaml.safe_dump(job))
    api = Api(cluster.kubeconfig)
    assert server_verdict(api, namespace, job)[0].rejected  # the server would reject it
    code, report = _validate_server(kubeconfig, namespace, source, "json")
    assert code == 1
    (document,) = json.loads(report)["documents"]
    origins = {(f["rule"], f["origin"]) for f in document["findings"]}
    assert origins == {("server-rejects-pod", OFFLINE), (preflight.INCOMPLETE_RULE, SERVER)}
    assert _judge(document, rejected=True) is not None
    _, text = _validate_server(kubeconfig, namespace, source, "text")
    assert (
        f"{source}:1: note: the preflight was incomplete, so 1 finding(s) above "
        "(server-rejects-pod) are offline predictions, not the API server's answer"
    ) in text.splitlines()
    # With credentials that may, the server's answer replaces the prediction.
    code, report = _validate_server(cluster.kubeconfig, namespace, source, "json")
    (document,) = json.loads(report)["documents"]
    assert code == 1 and _judge(document, rejected=True) is None
    assert {(f["rule"], f["origin"]) for f in document["findings"]} == {
        ("server-rejects-pod", SERVER)
    }
