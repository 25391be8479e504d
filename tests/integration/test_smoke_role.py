"""The tfjob.kit.tfjob_smoke role's TFJob: built from data, so variables cannot add fields, and
its pods are admitted under Pod Security "restricted" (a server-side dry run on the cluster).

The job is rendered as the role renders it: its defaults and vars files, with the test's extra
variables on top, through ansible-playbook.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import yaml

from ._ansible import BIN, REPO, ansible_env
from ._cluster import Cluster

ROLE = REPO / "roles" / "tfjob_smoke"


def rendered_job(tmp_path: Path, **variables: Any) -> dict[str, Any]:
    out = tmp_path / "job.json"
    play = [
        {
            "name": "Render the smoke TFJob",
            "hosts": "localhost",
            "gather_facts": False,
            "vars_files": [str(ROLE / "defaults" / "main.yml"), str(ROLE / "vars" / "main.yml")],
            "tasks": [
                {
                    "name": "Write it",
                    "ansible.builtin.copy": {
                        "content": "{{ tfjob_smoke_job | to_json }}",
                        "dest": str(out),
                        "mode": "0600",
                    },
                }
            ],
        }
    ]
    (tmp_path / "play.yml").write_text(yaml.safe_dump(play))
    (tmp_path / "vars.json").write_text(json.dumps(variables))
    proc = subprocess.run(
        [
            str(BIN / "ansible-playbook"),
            "-i",
            "localhost,",
            "-c",
            "local",
            str(tmp_path / "play.yml"),
            "-e",
            f"ansible_python_interpreter={sys.executable}",
            "-e",
            f"@{tmp_path / 'vars.json'}",
        ],
        cwd=REPO,
        env=ansible_env(tmp_path / "no-kubeconfig"),
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-4000:]
    job: dict[str, Any] = json.loads(out.read_text())
    return job


HOSTILE = {
    "tfjob_smoke_name": "smoke\n  namespace: kube-system",
    "tfjob_smoke_image": "img:1\n              securityContext: {privileged: true}",
    "tfjob_smoke_pod_annotations": {"a": "b\n  injected: true", "c": "{d: e}"},
    "tfjob_smoke_workers": 3,
    "tfjob_smoke_gpus_per_worker": 1,
    "tfjob_smoke_gang_scheduling": True,
}


def test_variables_are_values_and_cannot_add_fields(tmp_path: Path) -> None:
    job = rendered_job(tmp_path, **HOSTILE)
    assert job["metadata"]["name"] == HOSTILE["tfjob_smoke_name"]
    assert set(job["metadata"]) == {"name", "labels"}
    worker = job["spec"]["tfReplicaSpecs"]["Worker"]
    assert worker["replicas"] == 3
    assert job["spec"]["runPolicy"]["schedulingPolicy"] == {"minAvailable": 3}
    template = worker["template"]
    assert template["metadata"]["annotations"] == HOSTILE["tfjob_smoke_pod_annotations"]
    (container,) = template["spec"]["containers"]
    assert container["image"] == HOSTILE["tfjob_smoke_image"]
    assert container["securityContext"]["allowPrivilegeEscalation"] is False
    assert "privileged" not in container["securityContext"]
    assert container["resources"]["limits"] == {
        "cpu": "500m",
        "memory": "512Mi",
        "nvidia.com/gpu": 1,
    }


def test_defaults_render_a_cpu_job_without_gang_scheduling(tmp_path: Path) -> None:
    job = rendered_job(tmp_path)
    assert job["metadata"]["name"] == "tfjob-smoke"
    assert "schedulingPolicy" not in job["spec"]["runPolicy"]
    worker = job["spec"]["tfReplicaSpecs"]["Worker"]
    assert worker["replicas"] == 2
    assert worker["template"]["spec"]["containers"][0]["resources"]["limits"] == {
        "cpu": "500m",
        "memory": "512Mi",
    }


def test_smoke_pods_pass_pod_security_restricted(cluster: Cluster, tmp_path: Path) -> None:
    """A server-side dry run of the worker pod in a namespace that enforces "restricted" (and
    warns at the latest version) is admitted without a warning."""
    job = rendered_job(tmp_path, tfjob_smoke_gpus_per_worker=0)
    template = job["spec"]["tfReplicaSpecs"]["Worker"]["template"]
    name = f"it-smoke-pss-{tmp_path.name[-6:].lower().replace('_', '-')}"
    namespace = {
        "apiVersion": "v1",
        "kind": "Namespace",
        "metadata": {
            "name": name,
            "labels": {
                "pod-security.kubernetes.io/enforce": "restricted",
                "pod-security.kubernetes.io/warn": "restricted",
            },
        },
    }
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "smoke-worker-0", "namespace": name, **template["metadata"]},
        "spec": {**template["spec"], "restartPolicy": "Never"},
    }
    cluster.kubectl("apply", "-f", "-", stdin=json.dumps(namespace))
    try:
        proc = cluster.kubectl(
            "create", "--dry-run=server", "-f", "-", stdin=json.dumps(pod), check=False
        )
        assert proc.returncode == 0, proc.stderr
        assert "violate" not in proc.stderr and "Warning" not in proc.stderr, proc.stderr
    finally:
        cluster.kubectl("delete", "namespace", name, "--wait=true", check=False)
