"""Every role's Molecule scenario (converge, idempotence, verify, cleanup) against the local
cluster: `molecule test` in roles/<role>, with the session cluster's kubeconfig."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from tfjob_kit.cluster.build import helm_path

from ._ansible import BIN, REPO
from ._cluster import Cluster

ROLES = sorted(p.parents[2].name for p in REPO.glob("roles/*/molecule/default/molecule.yml"))
# Internal roles: tested through the roles that use them (tests/unit/test_drift.py holds every
# chart role to helm_release; test_coexistence and the fault suite run it), not on their own.
INTERNAL = {"helm_release"}


def test_every_role_has_a_scenario() -> None:
    roles = sorted(p.name for p in (REPO / "roles").iterdir() if p.is_dir())
    assert sorted(set(roles) - INTERNAL) == ROLES
    assert set(roles) >= INTERNAL


@pytest.mark.parametrize("role", ROLES)
def test_molecule(cluster: Cluster, role: str, tmp_path: Path) -> None:
    # The roles find helm on PATH (the one `make cluster-build` built, as `tfjob-kit cluster
    # env` puts it there for users).
    path = os.pathsep.join([str(BIN), str(helm_path().parent), os.environ["PATH"]])
    env = {
        **os.environ,
        "K8S_AUTH_KUBECONFIG": str(cluster.kubeconfig),
        "KUBECONFIG": str(cluster.kubeconfig),
        "PATH": path,
        "ANSIBLE_NOCOLOR": "1",
        "PY_COLORS": "0",
        "NO_COLOR": "1",
        # Whatever Molecule or Ansible would write under ANSIBLE_HOME (~/.ansible by default)
        # stays in the test's directory: a copy of the collection there, left behind, would
        # shadow the checkout for every later ansible-lint and ansible-playbook of this user.
        "ANSIBLE_HOME": str(tmp_path / "ansible-home"),
    }
    proc = subprocess.run(
        [str(BIN / "molecule"), "test"],
        cwd=REPO / "roles" / role,
        env=env,
        capture_output=True,
        text=True,
        timeout=1200,
        check=False,
    )
    output = proc.stdout + proc.stderr
    # molecule exits non-zero when any step fails, idempotence included (a second converge
    # that reports a change).
    assert proc.returncode == 0, output[-6000:]
