"""Integration tests: everything here runs against the real local cluster.

One cluster is brought up for the whole session (``tfjob-kit cluster up`` with the
training-operator and Volcano) and removed at the end. Knobs:

* ``TFJOB_KIT_KUBECONFIG=<path>``: use an already running cluster; nothing is started/stopped.
* ``TFJOB_KIT_TEST_CLUSTER=<name>``: the local cluster's name (default ``tfjob-kit-test``).
* ``TFJOB_KIT_KEEP_CLUSTER=1``: leave the session's cluster running afterwards (reused next time).

When the default cluster (``tfjob-kit cluster up``) is already running with its addons, the
tests use it and leave it running.
"""

from __future__ import annotations

import os
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from tfjob_kit.cluster import local

from ._cluster import Cluster


@pytest.fixture(scope="session")
def cluster() -> Iterator[Cluster]:
    existing = os.environ.get("TFJOB_KIT_KUBECONFIG")
    if existing:
        yield Cluster(Path(existing))
        return
    name = os.environ.get("TFJOB_KIT_TEST_CLUSTER", "tfjob-kit-test")
    default = local.DEFAULT_NAME
    if name != default and local.is_running(default) and local.status(default).get("addons"):
        # `tfjob-kit cluster up` is already running (with addons): use it, leave it running.
        # (The operator's cert directory is machine-wide, so a second one could not start.)
        yield Cluster(local.kubeconfig_path(default), default)
        return
    opts = local.UpOptions(name=name, tfjob_run_seconds=3.0)
    # Progress (a cold build takes minutes) goes to the real stderr, past pytest's capture.
    progress = sys.__stderr__ or sys.stderr
    kubeconfig = local.up(opts, out=progress)
    try:
        yield Cluster(kubeconfig, name)
    finally:
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
    name = "tfjob-kit-bare"
    kubeconfig = local.up(local.UpOptions(name=name, addons=False))
    try:
        yield Cluster(kubeconfig, name)
    finally:
        local.down(name)
