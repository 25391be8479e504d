"""`tfjob-kit validate --server` against the real API server on the differential test's cases.

The offline validation predicts the server (test_pod_validation_agrees.py); `--server` asks it:
the TFJob and the operator's pods are dry-run by the preflight, whose answers replace the
offline predictions. Every generated case, written as one multi-document file and validated by
the CLI exactly as a user runs it, must then get the server's own verdict, 100% of them. Only
the findings about cluster state are left out of the verdict (the cases name Secrets and
ConfigMaps that do not exist in the test's namespace: `missing-reference`, which the server's
dry run does not check; quotas; permissions).

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
from tfjob_kit import pods
from tfjob_kit.kube import preflight

from ._cluster import Cluster
from .test_pod_validation_agrees import THREADS, Api, server_verdict

CLUSTER_STATE = {"missing-reference", "quota-exceeded", "preflight-incomplete"}


def _rejects(api: Api, namespace: str, job: dict[str, Any]) -> bool:
    """Whether the server refuses the TFJob as a server-side apply (dryRun=All), or one of the
    pods the operator creates from it."""
    gang = pods.VOLCANO if preflight.is_gang(job) else ""
    for _, pod in pods.operator_pods(job, gang_scheduler=gang):
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
    report = tmp_path / "report.json"
    run = subprocess.run(
        [
            *(str(Path(sys.executable).parent / "tfjob-kit"), "validate", "--server"),
            *("--kubeconfig", str(cluster.kubeconfig), "-n", namespace),
            *("--format", "json", "-o", str(report), str(source)),
        ],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert run.returncode in (0, 1), run.stderr
    documents = json.loads(report.read_text())["documents"]
    assert len(documents) == len(cases)
    disagreements = []
    only_apply = 0
    for case, verdict, rejects, document in zip(cases, verdicts, applied, documents, strict=True):
        rejected = verdict.rejected or rejects
        only_apply += rejected and not verdict.rejected
        errors = [
            f
            for f in document["findings"]
            if f["severity"] == "error" and f["rule"] not in CLUSTER_STATE
        ]
        if bool(errors) != rejected:
            disagreements.append(
                f"{case.id} {case.mutations}: server {verdict.messages or rejected}; "
                f"validate --server {[(f['rule'], f['path'], f['message']) for f in errors]}"
            )
    print(
        f"{len(cases)} cases, {sum(v.rejected for v in verdicts)} rejected by the server, "
        f"{only_apply} more only as an apply or with gang annotations, "
        f"{len(disagreements)} disagree"
    )
    assert not disagreements, "\n".join(disagreements)
