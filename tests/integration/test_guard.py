"""The whole run's guard (``ClusterGuard`` in tests/_guard.py) fails a run that changes a
local cluster it did not create, and a test that leaves the shared cluster changed.

The oracle is pytest's own exit status and report of sub-runs: each runs a small generated test
file with tests/conftest.py loaded (``-p conftest``) against one throwaway cluster named
``guardcheck-<random>`` (not with the test prefix, so the sub-runs count it as foreign), which
the module removes at its end. The sub-runs see none of this session's cluster settings.
"""

from __future__ import annotations

import io
import os
import subprocess
import sys
import textwrap
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from tfjob_kit.cluster import local

from ._cluster import Cluster

ROOT = Path(__file__).resolve().parents[2]
# What this session sets for itself (its cluster, a kubeconfig it was given) stays here.
PARENT_ONLY = (
    "TFJOB_KIT_CLUSTER",
    "TFJOB_KIT_KUBECONFIG",
    "TFJOB_KIT_TEST_CLUSTER",
    "TFJOB_KIT_KEEP_CLUSTER",
    "KUBECONFIG",
)


@pytest.fixture(scope="module")
def foreign() -> Iterator[Cluster]:
    name = f"guardcheck-{uuid.uuid4().hex[:6]}"
    try:
        yield Cluster(local.up(local.UpOptions(name=name), out=io.StringIO()), name)
    finally:
        local.down(name, out=io.StringIO())


def sub_run(
    tmp_path: Path, foreign: Cluster, body: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """``pytest`` on a generated test file (marked ``integration``, so the run is guarded),
    which finds the foreign cluster as ``NAME`` and ``KUBECONFIG``."""
    test = tmp_path / "test_sub.py"
    header = f"""
        from pathlib import Path

        import pytest

        from tfjob_kit.cluster.kubectl import Kubectl

        NAME = {foreign.name!r}
        KUBECONFIG = Path({str(foreign.kubeconfig)!r})
        pytestmark = pytest.mark.integration
    """
    test.write_text(textwrap.dedent(header) + textwrap.dedent(body), encoding="utf-8")
    # (and the pytest-xdist worker's identity, when this session runs on `make test`'s workers)
    child = {
        k: v
        for k, v in os.environ.items()
        if k not in PARENT_ONLY and not k.startswith("PYTEST_XDIST_")
    }
    child["PYTHONPATH"] = str(ROOT / "tests")
    child.update(env or {})
    command = [sys.executable, "-m", "pytest", "-c", str(ROOT / "pyproject.toml")]
    command += ["--rootdir", str(tmp_path)]
    command += ["-p", "conftest", "-p", "no:cacheprovider", str(test)]
    return subprocess.run(
        command, cwd=tmp_path, env=child, capture_output=True, text=True, timeout=300
    )


def test_a_run_that_changes_nothing_passes(foreign: Cluster, tmp_path: Path) -> None:
    proc = sub_run(
        tmp_path,
        foreign,
        """
        def test_reads() -> None:
            assert "default" in Kubectl(KUBECONFIG).run("get", "namespaces").stdout
        """,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert f"cluster guard: watching {foreign.name} (running)" in proc.stdout, proc.stdout
    assert "1 passed" in proc.stdout


def test_a_test_that_leaks_on_the_shared_cluster_fails_at_its_teardown(
    foreign: Cluster, tmp_path: Path
) -> None:
    """The foreign cluster plays the shared one (handed over as ``TFJOB_KIT_KUBECONFIG``,
    so the sub-run does not count it as foreign): a test's namespace deleted by its fixture
    is no leak, a ClusterRole left behind is."""
    leak = f"guardcheck-leak-{uuid.uuid4().hex[:6]}"
    try:
        proc = sub_run(
            tmp_path,
            foreign,
            f"""
            from collections.abc import Iterator
            from types import SimpleNamespace

            @pytest.fixture(scope="session")
            def cluster() -> SimpleNamespace:
                return SimpleNamespace(kubeconfig=KUBECONFIG, name=NAME)

            @pytest.fixture
            def namespace(cluster: SimpleNamespace) -> Iterator[str]:
                Kubectl(KUBECONFIG).run("create", "namespace", "guardcheck-ns")
                yield "guardcheck-ns"
                Kubectl(KUBECONFIG).run("delete", "namespace", "guardcheck-ns", "--wait=false")

            def test_uses_a_namespace(namespace: str) -> None:
                pass

            def test_leaks(cluster: SimpleNamespace) -> None:
                Kubectl(KUBECONFIG).run("create", "clusterrole", {leak!r}, "--verb=get",
                                        "--resource=pods")
            """,
            env={"TFJOB_KIT_KUBECONFIG": str(foreign.kubeconfig)},
        )
    finally:
        foreign.kubectl("delete", "clusterrole", leak, "--ignore-not-found")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    watched = proc.stdout.split("cluster guard: watching ", 1)[1].splitlines()[0]
    assert str(foreign.name) not in watched, proc.stdout
    assert "2 passed, 1 error" in proc.stdout, proc.stdout
    assert "ERROR at teardown of test_leaks" in proc.stdout, proc.stdout
    assert "test_sub.py::test_leaks left the shared cluster changed" in proc.stdout
    assert f"ClusterRole {leak}: added (uid " in proc.stdout, proc.stdout


def test_deleting_a_foreign_namespace_fails_the_run(foreign: Cluster, tmp_path: Path) -> None:
    victim = f"guardcheck-victim-{uuid.uuid4().hex[:6]}"
    foreign.kubectl("create", "namespace", victim)
    proc = sub_run(
        tmp_path,
        foreign,
        f"""
        def test_deletes() -> None:
            Kubectl(KUBECONFIG).run("delete", "namespace", {victim!r}, "--wait=false")
        """,
    )
    assert proc.returncode == 1, proc.stdout + proc.stderr
    # The change is an error of the run's last test: pytest counts and lists it.
    assert "1 passed, 1 error" in proc.stdout, proc.stdout
    assert "ERROR at teardown of test_deletes" in proc.stdout, proc.stdout
    assert "local clusters this run did not create changed" in proc.stdout
    assert f"cluster {foreign.name!r}: Namespace {victim}: " in proc.stdout, proc.stdout


def test_killing_the_foreign_operator_fails_the_run(foreign: Cluster, tmp_path: Path) -> None:
    """Last in the module: the foreign cluster's operator stays dead. The run stops early
    (``pytest.exit`` with status 0), so the guard reports at the session's end and sets the
    exit status."""
    proc = sub_run(
        tmp_path,
        foreign,
        """
        from tfjob_kit.cluster.procs import records

        def test_kills() -> None:
            operator = [r for r in records(NAME) if r.name == "training-operator"]
            assert operator and operator[0].alive()
            operator[0].stop()
            pytest.exit("the run stops here", returncode=0)

        def test_never_runs() -> None:
            pass
        """,
    )
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "cluster guard" in proc.stdout and "the run stops here" in proc.stdout, proc.stdout
    line = f"cluster {foreign.name!r}: process training-operator: changed (pid "
    assert line in proc.stdout, proc.stdout
    assert " not running)" in proc.stdout.split(line)[1].splitlines()[0], proc.stdout
