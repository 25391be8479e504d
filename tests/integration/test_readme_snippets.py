"""The README's shell snippets, run as written against the session's local cluster.

``TFJOB_KIT_CLUSTER`` names the session's cluster, so ``tfjob-kit cluster ...`` and
``inventories/local`` find it as they would find the default one.
"""

from __future__ import annotations

import pytest

from snippets import tagged

from ._ansible import run_readme_shell
from ._cluster import Cluster

BLOCKS = [body for _, body in tagged("shell")]


@pytest.mark.parametrize("script", BLOCKS, ids=[b.splitlines()[0][:50] for b in BLOCKS])
def test_readme_shell_snippet(cluster: Cluster, script: str) -> None:
    if not cluster.name:
        pytest.skip("the README's snippets drive an embedded local cluster by name")
    try:
        output = run_readme_shell(script, cluster.kubeconfig, cluster.name)
        assert "failed=1" not in output
    finally:
        # what the snippets leave for a user to look at: gone before the next test
        cluster.kubectl("delete", "tfjobs", "--all", "-n", "default", "--wait=false", check=False)
