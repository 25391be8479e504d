"""The fault suite: each test breaks a local cluster of its own on purpose and checks what users
would expect to see: a clear error, then recovery.

A fault test never breaks the integration session's shared cluster: it asks ``fault_cluster``
for a fresh one (named with the test prefix, so the session's check of foreign clusters leaves
it alone) and the fixture removes it afterwards, whatever the test left running or dead.
"""

from __future__ import annotations

import io
import sys
from collections.abc import Callable, Iterator

import pytest

from integration._cluster import Cluster
from integration.conftest import session_name
from tfjob_kit.cluster import local

MakeCluster = Callable[..., Cluster]


@pytest.fixture
def fault_cluster() -> Iterator[MakeCluster]:
    """``fault_cluster(**UpOptions fields)``: a fresh local cluster for this test alone (the
    training-operator and Volcano by default), removed when the test ends."""
    made: list[str] = []

    def make(**options: object) -> Cluster:
        name = session_name("fault")
        made.append(name)
        opts = local.UpOptions(name=name, **options)  # type: ignore[arg-type]
        kubeconfig = local.up(opts, out=sys.__stderr__ or io.StringIO())
        return Cluster(kubeconfig, name)

    yield make
    for name in made:
        local.down(name, out=io.StringIO())
