"""The run's guard (``ClusterGuard``): a test run never changes a local cluster it did not create
(say, ``make demo``'s). Once the tests are collected, before the first one runs (the fault
suite, the charts and the integration suite alike), it takes a snapshot of every such cluster
(its namespaces, TFJobs, Helm releases, CRDs, webhook configurations and cluster RBAC by
identity, and its host processes by pid and kernel start time), and at the end of the run it
takes another; any difference, or any read that fails, is an error of the run's last test (or,
when the run stopped early, a report that makes pytest's exit status non-zero). A run that
selects only pure tests needs no cluster binaries and is not guarded. Where tests share the
integration session's cluster, the guard compares that cluster's cluster-scoped objects and live
namespaces before and after each test (or each module, for a module's fixtures), so a test that
leaks there fails at its own teardown.
"""

from __future__ import annotations

import json
import os
from collections.abc import Generator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

# Every local cluster a test creates is named with this prefix; the guard leaves those alone.
TEST_PREFIX = "tfjob-kit-test-"

# What the guard compares: (kind, API path, whether the metadata alone is enough). The
# cluster-scoped kinds (namespaces among them) are compared on the shared cluster after each
# test too; a foreign cluster's Helm releases (Helm keeps each in a Secret labelled
# owner=helm) and TFJobs as well. Lists of metadata only keep the reads cheap (the CRDs'
# schemas are megabytes).
CLUSTER_KINDS = (
    ("Namespace", "/api/v1/namespaces", True),
    ("CustomResourceDefinition", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", True),
    (
        "ValidatingWebhookConfiguration",
        "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations",
        True,
    ),
    (
        "MutatingWebhookConfiguration",
        "/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations",
        True,
    ),
    ("ClusterRole", "/apis/rbac.authorization.k8s.io/v1/clusterroles", True),
    ("ClusterRoleBinding", "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings", True),
)
HELM_RELEASES = ("Helm release Secret", "/api/v1/secrets", True, "owner=helm")
TFJOB_CRD = "tfjobs.kubeflow.org"
TFJOBS = ("TFJob", "/apis/kubeflow.org/v1/tfjobs", True)
METADATA_ONLY = "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1"
WEBHOOK_KINDS = {"ValidatingWebhookConfiguration", "MutatingWebhookConfiguration"}
DELETING = "being deleted"
# An object's key ("Kind namespace/name", "process NAME") and what must not change about it.
Identities = dict[str, str]


class GuardReadError(Exception):
    """A read the guard needs failed: it cannot vouch for the cluster."""


def identity(item: dict[str, Any]) -> str:
    """What must not change about an object: its uid, its generation where it has one, and
    whether it is being deleted. A webhook configuration is held to its uid alone: its
    generation moves whenever its ``caBundle`` rotates, and the local cluster points its
    webhooks anew at their servers whenever ``cluster up`` (re)starts one, both by design."""
    meta = item["metadata"]
    parts = [f"uid {meta.get('uid')}"]
    if item.get("kind") not in WEBHOOK_KINDS and "generation" in meta:
        parts.append(f"generation {meta['generation']}")
    if meta.get("deletionTimestamp"):
        parts.append(DELETING)
    return ", ".join(parts)


class Reader:
    """Lists from one cluster's API server, with the kubeconfig's admin credentials; a failed
    read raises GuardReadError, it is never an empty list."""

    def __init__(self, kubeconfig: Path) -> None:
        from kubernetes import client
        from kubernetes import config as loader

        config: Any = loader
        cfg = client.Configuration()
        try:
            config.load_kube_config(str(kubeconfig), client_configuration=cfg, persist_config=False)
        except (config.ConfigException, OSError) as exc:
            raise GuardReadError(f"cannot use {kubeconfig}: {exc}") from exc
        self.api: Any = client.ApiClient(cfg)

    def items(
        self, kind: str, path: str, metadata_only: bool, selector: str = ""
    ) -> list[dict[str, Any]]:
        from kubernetes.client.exceptions import ApiException
        from urllib3.exceptions import HTTPError

        accept = METADATA_ONLY if metadata_only else "application/json"
        query = [("labelSelector", selector)] if selector else []
        try:
            method, url, headers, _, _ = self.api.param_serialize(
                "GET",
                path,
                query_params=query,
                header_params={"Accept": accept},
                auth_settings=["BearerToken"],
            )
            response = self.api.call_api(method, url, header_params=headers, _request_timeout=60)
            body = response.read()
            if response.status != 200:
                raise GuardReadError(f"listing {path} answered {response.status}: {body[:300]!r}")
            items: list[dict[str, Any]] = json.loads(body)["items"] or []
        except (ApiException, HTTPError, OSError, ValueError, KeyError) as exc:
            raise GuardReadError(f"listing {path} failed: {exc!r}") from exc
        return [{**item, "kind": kind} for item in items]

    def identities(self, namespaced: bool) -> Identities:
        """The cluster-scoped objects the guard compares, and with ``namespaced`` the Helm
        releases and TFJobs of every namespace (no TFJobs to read without the TFJob CRD; the
        CRD itself is compared)."""
        items = [i for kind in CLUSTER_KINDS for i in self.items(*kind)]
        if namespaced:
            items += self.items(*HELM_RELEASES)
            crds = {i["metadata"]["name"] for i in items if i["kind"] == CLUSTER_KINDS[1][0]}
            if TFJOB_CRD in crds:
                items += self.items(*TFJOBS)
        found: Identities = {}
        for item in items:
            meta = item["metadata"]
            where = f"{meta['namespace']}/" if meta.get("namespace") else ""
            found[f"{item['kind']} {where}{meta['name']}"] = identity(item)
        return found


def host_processes(name: str) -> Identities:
    """The cluster's host processes (``procs.records`` and kwokctl's pids), each with the
    kernel's start time of its pid: a process restarted under a reused pid differs."""
    from tfjob_kit.cluster.procs import kwok_pids, proc_start_time, records

    def alive(pid: int, start: str | None) -> str:
        return f"pid {pid} started at tick {start}" if start else f"pid {pid} not running"

    found = {
        f"process {r.name}": alive(r.pid, r.start if r.alive() else None) for r in records(name)
    }
    for pid in kwok_pids(name):
        found[f"process {pid} (kwokctl's)"] = alive(pid, proc_start_time(pid))
    return found


@dataclass
class ClusterState:
    exists: bool
    running: bool
    objects: Identities = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)


def cluster_state(name: str) -> ClusterState:
    """A local cluster's state as the guard sees it: whether it exists and runs, its host
    processes and, when it runs, its objects; failed reads are kept as errors."""
    from tfjob_kit.cluster import local

    if not local.cluster_dir(name).is_dir():
        return ClusterState(exists=False, running=False)
    state = ClusterState(exists=True, running=local.is_running(name))
    state.objects = host_processes(name)
    if state.running:
        try:
            state.objects.update(Reader(local.kubeconfig_path(name)).identities(namespaced=True))
        except GuardReadError as exc:
            state.errors.append(f"could not be read: {exc}")
    return state


def changes(before: Identities, after: Identities) -> list[str]:
    """Each object added, removed or changed. An object being deleted at the start may go,
    and one that came and is being deleted at the end (a test's namespace) is no leak."""
    found = []
    for key in sorted(before.keys() | after.keys()):
        old, new = before.get(key), after.get(key)
        if old == new or (old and DELETING in old) or (old is None and new and DELETING in new):
            continue
        if old is None:
            found.append(f"{key}: added ({new})")
        elif new is None:
            found.append(f"{key}: removed (was {old})")
        else:
            found.append(f"{key}: changed ({old} -> {new})")
    return found


def cluster_changes(before: ClusterState, after: ClusterState) -> list[str]:
    """What differs between two states of one cluster, and every read that failed."""
    found = [f"at the start: {e}" for e in before.errors]
    if not after.exists:
        return [*found, "was removed"]
    if before.running != after.running:
        found.append("was down at the start and runs now" if after.running else "went down")
    found += [f"at the end: {e}" for e in after.errors]
    if before.running and after.running:
        return found + changes(before.objects, after.objects)
    processes = {k for k in before.objects.keys() | after.objects.keys() if k.startswith("process")}
    return found + changes(
        {k: v for k, v in before.objects.items() if k in processes},
        {k: v for k, v in after.objects.items() if k in processes},
    )


def foreign_clusters() -> list[str]:
    """The local clusters this test run did not create: every one under the kwok workdir,
    running or down, except those named with the test prefix and the one
    ``TFJOB_KIT_KUBECONFIG`` hands to the integration session."""
    from tfjob_kit.cluster import local
    from tfjob_kit.cluster.paths import kwok_workdir

    clusters = kwok_workdir() / "clusters"
    found = sorted(p.name for p in clusters.iterdir() if p.is_dir()) if clusters.is_dir() else []
    given = os.environ.get("TFJOB_KIT_KUBECONFIG")
    return [
        n
        for n in found
        if not n.startswith(TEST_PREFIX)
        and not (given and Path(given).resolve() == local.kubeconfig_path(n).resolve())
    ]


# A fixture's scope, and the scope of the fixtures a node holds: a node's comparison opens
# before the first fixture of its scope (or a narrower one) is set up.
SCOPE_RANK = {"function": 0, "class": 1, "module": 2, "package": 3, "session": 4}


def node_rank(node: pytest.Item | pytest.Collector) -> int:
    return 2 if isinstance(node, pytest.Module) else 1 if isinstance(node, pytest.Class) else 0


@dataclass
class _Open:
    """A node (module, class or test) being compared: the shared cluster's objects before
    it, patched with what the nodes inside it changed (each reports its own)."""

    node: pytest.Item | pytest.Collector
    before: Identities


class ClusterGuard:
    """The guard of the module docstring, as a plugin (``pytest_configure`` registers it)."""

    def __init__(self) -> None:
        self.before: dict[str, ClusterState] | None = None  # None: this run is not guarded
        self.checked = False
        self.shared: Reader | None = None  # the integration session's cluster, once up
        self.live: set[str] = set()  # node ids set up and not torn down
        self.pending: list[pytest.Item | pytest.Collector] = []  # nodes whose setup began
        self.opened: list[_Open] = []

    # -- foreign clusters: a snapshot before the first test, a comparison after the last --
    @pytest.hookimpl(trylast=True)
    def pytest_collection_finish(self, session: pytest.Session) -> None:
        guarded = any(not i.get_closest_marker("pure") for i in session.items)
        if session.config.option.collectonly or not guarded:
            return
        self.before = {name: cluster_state(name) for name in foreign_clusters()}
        reporter = session.config.pluginmanager.get_plugin("terminalreporter")
        if reporter is not None:
            watched = ", ".join(
                f"{n} ({'running' if s.running else 'down'})" for n, s in self.before.items()
            )
            reporter.write_line(f"cluster guard: watching {watched or 'no foreign cluster'}")

    def pytest_report_header(self, config: pytest.Config) -> str | None:
        """Under pytest-xdist (``make test``) each worker snapshots and compares for itself;
        their terminal lines are not shown, so the controller names what they watch."""
        if not getattr(config.option, "numprocesses", None):
            return None
        names = ", ".join(foreign_clusters()) or "no foreign cluster"
        return f"cluster guard: each worker watches {names}"

    def report(self) -> list[str]:
        assert self.before is not None
        self.checked = True
        return [
            f"cluster {name!r}: {change}"
            for name, state in self.before.items()
            for change in cluster_changes(state, cluster_state(name))
        ]

    def message(self, found: list[str]) -> str:
        return (
            "local clusters this run did not create changed, or could not be read:\n"
            + "\n".join(f"  {line}" for line in found)
        )

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_teardown(
        self, item: pytest.Item, nextitem: pytest.Item | None
    ) -> Generator[None, None, None]:
        try:
            result = yield
        finally:
            self.live &= {n.nodeid for n in nextitem.listchain()} if nextitem else set()
        # After the last test's teardown (the session's fixtures are gone too), as an error of
        # that test. When its teardown failed, pytest_sessionfinish reports instead.
        if nextitem is None and self.before is not None and not self.checked:
            found = self.report()
            if found:
                pytest.fail(self.message(found), pytrace=False)
        return result

    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        """The run stopped before its last test's teardown (``-x``, an interrupt), or that
        teardown failed: compare now and make pytest's exit status non-zero."""
        if self.before is None or self.checked:
            return
        found = self.report()
        if found:
            reporter = session.config.pluginmanager.get_plugin("terminalreporter")
            if reporter is not None:
                reporter.write_sep("=", "cluster guard", red=True)
                reporter.write_line(self.message(found))
            session.exitstatus = pytest.ExitCode.TESTS_FAILED

    # -- the shared cluster: its cluster-scoped objects before and after each node ------------
    def shared_objects(self) -> Identities:
        assert self.shared is not None
        try:
            return self.shared.identities(namespaced=False)
        except GuardReadError as exc:
            pytest.fail(f"cluster guard: the shared cluster {exc}", pytrace=False)

    def open(self, rank: int) -> None:
        """Open the comparison of each pending node whose scope is ``rank`` or wider: a
        snapshot now, and a finalizer registered before its fixtures' (so it runs after
        them, when the node is torn down)."""
        ready = [n for n in self.pending if node_rank(n) >= rank]
        if not ready or self.shared is None:
            return
        self.pending = [n for n in self.pending if n not in ready]
        before = self.shared_objects()
        for node in ready:
            opened = _Open(node, dict(before))
            self.opened.append(opened)
            node.addfinalizer(lambda opened=opened: self.close(opened))  # type: ignore[misc]

    def close(self, opened: _Open) -> None:
        self.opened.remove(opened)
        if self.shared is None:
            return
        after = self.shared_objects()
        for outer in self.opened:  # what this node changed is its own to report
            for key in opened.before.keys() | after.keys():
                if opened.before.get(key) != after.get(key):
                    if key in after:
                        outer.before[key] = after[key]
                    else:
                        outer.before.pop(key, None)
        found = changes(opened.before, after)
        if found:
            pytest.fail(
                f"{opened.node.nodeid} left the shared cluster changed (its cluster-scoped "
                "objects and live namespaces):\n" + "\n".join(f"  {line}" for line in found),
                pytrace=False,
            )

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_setup(self, item: pytest.Item) -> Generator[None, None, None]:
        # Every test of the integration suites, once the shared cluster runs: a test that does
        # not ask for it still reaches it (the CLI defaults to it, see TFJOB_KIT_CLUSTER).
        if item.get_closest_marker("integration"):
            self.pending = [
                n
                for n in item.listchain()
                if isinstance(n, SCOPED_NODES) and n.nodeid not in self.live
            ]
        self.live |= {n.nodeid for n in item.listchain()}
        try:
            result = yield
            self.open(0)
            return result
        finally:
            self.pending = []

    @pytest.hookimpl(wrapper=True)
    def pytest_fixture_setup(
        self, fixturedef: pytest.FixtureDef[Any], request: pytest.FixtureRequest
    ) -> Generator[None, Any, Any]:
        self.open(SCOPE_RANK.get(str(fixturedef.scope), 0))
        result = yield
        if fixturedef.argname == "cluster" and fixturedef.scope == "session" and not self.shared:
            kubeconfig = getattr(result, "kubeconfig", None)
            if isinstance(kubeconfig, Path):
                try:
                    self.shared = Reader(kubeconfig)
                except GuardReadError as exc:
                    pytest.fail(f"cluster guard: the shared cluster: {exc}", pytrace=False)
        return result


# The nodes whose fixtures are set up and torn down around tests in the shared cluster.
SCOPED_NODES = (pytest.Module, pytest.Class, pytest.Function)


def pytest_configure(config: pytest.Config) -> None:
    if not config.pluginmanager.has_plugin("tfjob-kit-cluster-guard"):
        config.pluginmanager.register(ClusterGuard(), "tfjob-kit-cluster-guard")
