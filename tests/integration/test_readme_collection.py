"""The README's collection section: its playbook (examples/playbooks/train.yml) runs, and does
what it says."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from ._ansible import BIN, REPO, ansible_env
from ._cluster import Cluster

PLAYBOOK = REPO / "examples" / "playbooks" / "train.yml"


@pytest.mark.parametrize("mode", [["--check", "--diff"], []])
def test_example_playbook_runs(cluster: Cluster, tmp_path: Path, mode: list[str]) -> None:
    proc = subprocess.run(
        [str(BIN / "ansible-playbook"), str(PLAYBOOK), *mode],
        cwd=REPO,
        env=ansible_env(cluster.kubeconfig),
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    output = proc.stdout + proc.stderr
    assert proc.returncode == 0, output
    assert "failed=0" in output
    if mode:  # check mode: the job would be created, and is not
        assert '"kind": "TFJob"' in output or "kind: TFJob" in output or "+++" in output
    else:
        assert '"type": "worker"' in output  # the TF_CONFIG worker 0 received
    assert (
        cluster.items("tfjobs", "-n", "default", "--field-selector", "metadata.name=dist-mnist")
        == []
    )
