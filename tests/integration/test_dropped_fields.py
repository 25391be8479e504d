"""The ``field-dropped`` rule (``rules/dropped.py``) against the real API server: for every pod
case of ``tests/podcases/`` the server accepts, the template fields the rule says the server
drops are exactly those missing from the pod the server returns from a dry run (``dryRun=All``,
nothing stored), at the minor of the session's cluster."""

from __future__ import annotations

import copy
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from podcases import area_mutations
from tfjob_kit.rules.dropped import dropped_paths, removed

from ._cluster import Cluster
from ._dryrun import PodDryRun


def _template() -> dict[str, Any]:
    return {
        "metadata": {"labels": {"app": "mnist"}},
        "spec": {
            "restartPolicy": "OnFailure",
            "containers": [{"name": "tensorflow", "image": "tensorflow/tensorflow:2.15.0"}],
        },
    }


def test_the_fields_said_dropped_are_those_the_server_drops(cluster: Cluster) -> None:
    templates = []
    for cases in area_mutations().values():
        for case in cases:
            template = _template()
            case.mutate(template)
            templates.append((case.name, template))
    pods = [
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {**template.get("metadata", {}), "name": f"dropped-{i}"},
            "spec": copy.deepcopy(template["spec"]),
        }
        for i, (_, template) in enumerate(templates)
    ]
    with PodDryRun(cluster.kubeconfig) as server, ThreadPoolExecutor(8) as pool:
        answers = list(pool.map(server, pods))
    compared = dropping = 0
    disagreements = []
    for (name, template), (status, body) in zip(templates, answers, strict=True):
        if status != 201:
            continue
        compared += 1
        said = sorted(("spec", *p) for p in removed(template["spec"], body["spec"]))
        mine = sorted(dropped_paths(copy.deepcopy(template)))
        dropping += bool(said)
        if mine != said:
            disagreements.append((name, mine, said))
    assert disagreements == [], "\n".join(map(str, disagreements))
    assert compared >= 100 and dropping >= 1, (compared, dropping)  # stopSignal: every minor
