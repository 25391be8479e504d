"""The fault suite: each test breaks a local cluster on purpose and checks what users would
expect to see: a clear error, then recovery.

A fault test never breaks the integration session's cluster. Most fault tests break something
that ``tfjob-kit cluster up`` brings back in place (a killed API server, etcd, operator or
vc-scheduler), so they share one cluster, ``shared_fault_cluster``: after each of them the
fixture runs ``up`` again (which restarts whatever is still dead), deletes the namespaces the
test made, and fails the test when the cluster is not back as it was before it (a process
still dead, a TFJob, namespace or cluster-scoped object left). A test whose fault cannot be
undone that way (every process killed and the cluster removed, a node deleted, another gang
scheduler) asks ``fault_cluster`` for a fresh cluster of its own, removed when it ends. Both are
named with the test prefix, so the run's guard of foreign clusters leaves them alone.
"""

from __future__ import annotations

import io
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

import pytest

from _guard import Identities, Reader, changes
from integration._cluster import Cluster
from integration.conftest import session_name
from tfjob_kit.cluster import kwok, local, procs
from tfjob_kit.cluster.nodes import NodePlan

MakeCluster = Callable[..., Cluster]

# One CPU node and two GPU nodes of 4 GPUs: what the shared cluster's tests size their jobs for.
SHARED_NODES = NodePlan(cpu_nodes=1, gpu_nodes=2)


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


@dataclass
class Shared:
    cluster: Cluster
    options: local.UpOptions
    baseline: Identities = field(default_factory=dict)


# How long a TFJob pod of the shared cluster runs (a test that needs longer asks per pod).
SHARED_RUN_SECONDS = 3.0


def shared_options(name: str) -> local.UpOptions:
    """The shared cluster's ``up`` options (a test that restarts it in place passes the same)."""
    return local.UpOptions(name=name, nodes=SHARED_NODES, tfjob_run_seconds=SHARED_RUN_SECONDS)


# The same as `tfjob-kit cluster up` flags, for the tests that run the CLI as users do.
SHARED_UP_FLAGS = (
    f"--cpu-nodes={SHARED_NODES.cpu_nodes}",
    f"--gpu-nodes={SHARED_NODES.gpu_nodes}",
    f"--gpus-per-node={SHARED_NODES.gpus_per_node}",
    f"--tfjob-run-seconds={SHARED_RUN_SECONDS}",
)


@pytest.fixture(scope="package")
def _shared_fault_cluster() -> Iterator[Shared]:
    """Up for the fault suite's files and down after them (package scope: an idle cluster costs
    a tenth of a core, and `make test`'s workers run other files after these)."""
    name = session_name("fault-shared")
    options = shared_options(name)
    try:
        kubeconfig = local.up(options, out=sys.__stderr__ or io.StringIO())
        shared = Shared(Cluster(kubeconfig, name), options)
        shared.baseline = Reader(kubeconfig).identities(namespaced=False)
        yield shared
    finally:
        local.down(name, out=io.StringIO())


@pytest.fixture
def shared_fault_cluster(_shared_fault_cluster: Shared) -> Iterator[Cluster]:
    """The fault suite's shared cluster, reset after the test: ``up`` restarts what the test
    left dead, the namespaces it made are deleted (and waited for), and then every process runs,
    no TFJob is left and the cluster-scoped objects are those it had before the test."""
    shared = _shared_fault_cluster
    cluster = shared.cluster
    assert cluster.name
    yield cluster
    local.up(shared.options, out=io.StringIO())
    reader = Reader(cluster.kubeconfig)
    now = reader.identities(namespaced=False)
    made = sorted(
        key.split(" ", 1)[1]
        for key in now.keys() - shared.baseline.keys()
        if key.startswith("Namespace ")
    )
    if made:
        deleted = cluster.kubectl(
            "delete", "namespace", *made, "--wait=true", "--timeout=120s", check=False, timeout=150
        )
        if deleted.returncode != 0:
            conditions = [
                cluster.get("namespace", name).get("status", {}).get("conditions", [])
                for name in made
            ]
            raise AssertionError(f"namespaces {made} not deleted in 120 s: {conditions}")
    dead = [r.name for r in procs.records(cluster.name) if not r.alive()]
    dead += kwok.stopped_components(cluster.name)
    assert not dead, f"processes of the shared fault cluster still dead after up: {dead}"
    left = cluster.items("tfjobs.kubeflow.org", "-A")
    assert not left, [f"{j['metadata']['namespace']}/{j['metadata']['name']}" for j in left]
    leaks = changes(shared.baseline, reader.identities(namespaced=False))
    assert not leaks, "the test left the shared fault cluster changed:\n" + "\n".join(leaks)
