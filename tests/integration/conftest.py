"""Integration tests: everything here runs against the real local cluster.

The session brings up a local cluster of its own (``tfjob-kit cluster up`` with the
training-operator and Volcano, under a fresh name) and removes it at the end. It never uses a
cluster it did not create: a cluster the user runs (``make demo``'s) is left exactly as it was,
which the whole run's guard (``ClusterGuard`` in tests/_guard.py) checks; it also checks
that each test leaves this session's cluster's cluster-scoped objects and live namespaces as
it found them. Knobs:

* ``TFJOB_KIT_KUBECONFIG=<path>``: use an already running cluster; nothing is started/stopped
  (run it without workers, ``TEST_WORKERS=0``: the per-test comparison needs the cluster alone).
* ``TFJOB_KIT_TEST_CLUSTER=<name>``: the local cluster's name (default ``tfjob-kit-test-<random>``);
  with ``TFJOB_KIT_KEEP_CLUSTER=1`` the cluster is left running and reused by the next session
  that names it. Under ``make test``'s pytest-xdist workers each worker has a session cluster
  of its own (the name gets the worker's id).
* ``TFJOB_KIT_TEST_KUBERNETES=<minor>``: the session's clusters run that Kubernetes minor (one
  of versions.toml's; ``make test-versions`` sets it), built on first use, and the offline pod
  checks of the tests on them follow that minor (``podcheck.release``).
"""

from __future__ import annotations

import io
import os
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from _guard import TEST_PREFIX
from tfjob_kit.cluster import local
from tfjob_kit.podcheck import release

from ._cluster import Cluster

__all__ = ["TEST_PREFIX", "session_name"]

KUBERNETES = os.environ.get("TFJOB_KIT_TEST_KUBERNETES", "")


def session_name(kind: str) -> str:
    """A name no user cluster has: the test prefix, the kind and a random suffix."""
    return f"{TEST_PREFIX}{kind}-{uuid.uuid4().hex[:6]}"


@pytest.fixture(scope="session")
def cluster() -> Iterator[Cluster]:
    existing = os.environ.get("TFJOB_KIT_KUBECONFIG")
    if existing:
        yield Cluster(Path(existing))
        return
    name = os.environ.get("TFJOB_KIT_TEST_CLUSTER") or session_name("main")
    worker = os.environ.get("PYTEST_XDIST_WORKER")  # `make test`'s workers: a cluster each
    if worker and os.environ.get("TFJOB_KIT_TEST_CLUSTER"):
        name = f"{name}-{worker}"
    # Whatever a test starts without naming a cluster (the CLI, the local_cluster role, the
    # README's snippets) lands on the session's cluster, never on the user's default one.
    os.environ["TFJOB_KIT_CLUSTER"] = name
    opts = local.UpOptions(name=name, tfjob_run_seconds=3.0, kubernetes_version=KUBERNETES)
    # Progress (a cold build takes minutes) goes to the real stderr, past pytest's capture.
    progress = sys.__stderr__ or sys.stderr
    kubeconfig = local.up(opts, out=progress)
    try:
        # The offline pod checks judge as this cluster's minor does, for every test on it (in
        # every thread).
        release.set_process_minor(KUBERNETES or None)
        yield Cluster(kubeconfig, name)
    finally:
        release.set_process_minor(None)
        if os.environ.get("TFJOB_KIT_KEEP_CLUSTER") != "1":
            local.down(name, out=progress)


@pytest.fixture
def namespace(cluster: Cluster) -> Iterator[str]:
    """A fresh namespace per test, deleted (without waiting) afterwards."""
    name = f"it-{uuid.uuid4().hex[:8]}"
    cluster.kubectl("create", "namespace", name)
    try:
        yield name
    finally:
        cluster.kubectl("delete", "namespace", name, "--wait=false", check=False)


@pytest.fixture(scope="module")
def bare_cluster() -> Iterator[Cluster]:
    """A second local cluster without addons: no TFJob or Volcano CRDs, no operator. Only for
    the module that asks for it (a cluster left running would hold ports other tests check)."""
    name = session_name("bare")
    opts = local.UpOptions(name=name, addons=False, kubernetes_version=KUBERNETES)
    kubeconfig = local.up(opts, out=io.StringIO())
    try:
        yield Cluster(kubeconfig, name)
    finally:
        local.down(name, out=io.StringIO())
