"""``tfjob-kit cluster build``: build the local cluster's binaries from Go modules.

Every component lands in ``<cache>/bin/<name>-<version>/`` with a ``.stamp.json`` written
last; a directory whose stamp matches the pinned version (and, for wrapper modules, the
hash of the wrapper's sources) is reused, so a second run builds nothing. Builds run one
at a time with ``go build -p 2`` (link steps need GBs of RAM; CI machines have 2 cores).
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

import yaml

from tfjob_kit.cluster.paths import ClusterError, bin_root
from tfjob_kit.versions import Versions, load_versions, repo_root

STAMP = ".stamp.json"
KUBE_COMPONENTS = ("kube-apiserver", "kube-controller-manager", "kube-scheduler")
OPERATOR_ROLE = "training-operator-clusterrole.yaml"
# The upgrade-from operator's upstream manifests (copied from its Go module download).
UPSTREAM_MANIFESTS = "manifests"
# The components of the pinned training-operator and of the release upgrades start from.
OPERATOR_UPGRADE_FROM = "training-operator-upgrade-from"
VOLCANO_ROLES = ("volcano-scheduler", "volcano-controllers")


@dataclass(frozen=True)
class Component:
    name: str
    version: str
    outputs: tuple[str, ...]
    recipe: Callable[[Component, Path, Builder], None]
    module: str | None = None  # wrapper module directory under components/go
    description: str = ""
    # The wrapper's requirements (go build -modfile) and build tags: one source built at two
    # releases (the training-operator's pinned one and the one upgrades start from).
    modfile: str = "go.mod"
    tags: str = ""

    @property
    def dirname(self) -> str:
        return f"{self.name}-{self.version}"


@dataclass
class Built:
    component: Component
    path: Path
    seconds: float
    cached: bool


@dataclass
class Builder:
    versions: Versions
    root: Path
    out: TextIO = field(default_factory=lambda: sys.stderr)
    go: str = "go"
    jobs: int = 2

    # ---- helpers -------------------------------------------------------------------
    def say(self, message: str) -> None:
        print(message, file=self.out, flush=True)

    def module_dir(self, component: Component) -> Path:
        assert component.module is not None
        return self.root / "components" / "go" / component.module

    def env(self, **extra: str) -> dict[str, str]:
        env = dict(os.environ)
        env.setdefault("CGO_ENABLED", "0")
        env.update(extra)
        return env

    def go_run(
        self,
        label: str,
        args: Sequence[str],
        cwd: Path | None = None,
        env: dict[str, str] | None = None,
    ) -> None:
        """Run a go command with ``-v``-style output condensed into periodic progress lines."""
        cmd = ["nice", "-n", "10", self.go, *args] if shutil.which("nice") else [self.go, *args]
        start = time.monotonic()
        lines: list[str] = []
        count = 0
        lock = threading.Lock()
        done = threading.Event()

        def ticker() -> None:
            while not done.wait(15.0):
                with lock:
                    n = count
                self.say(f"  {label}: {n} packages built ({time.monotonic() - start:.0f}s)")

        proc = subprocess.Popen(
            cmd,
            cwd=cwd,
            env=env or self.env(),
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        thread = threading.Thread(target=ticker, daemon=True)
        thread.start()
        assert proc.stdout is not None
        for line in proc.stdout:
            with lock:
                count += 1
            lines.append(line.rstrip("\n"))
            if len(lines) > 400:
                del lines[:200]
        rc = proc.wait()
        done.set()
        thread.join()
        if rc != 0:
            tail = "\n".join(lines[-60:])
            raise ClusterError(f"{label}: `{' '.join(cmd)}` failed (exit {rc}):\n{tail}")

    def module_download_dir(self, module: str, version: str) -> Path:
        proc = subprocess.run(
            [self.go, "mod", "download", "-json", f"{module}@{version}"],
            capture_output=True,
            text=True,
            env=self.env(),
            check=False,
        )
        try:
            info = json.loads(proc.stdout)
        except json.JSONDecodeError:
            info = {}
        if proc.returncode != 0 or "Dir" not in info:
            raise ClusterError(
                f"go mod download {module}@{version} failed: {info.get('Error') or proc.stderr}"
            )
        return Path(info["Dir"])

    def check_requires(self, component: Component, expected: dict[str, str]) -> None:
        """The wrapper go.mod must pin what versions.toml says (required or replaced)."""
        gomod = self.module_dir(component) / component.modfile
        proc = subprocess.run(
            [self.go, "mod", "edit", "-json", str(gomod)],
            capture_output=True,
            text=True,
            check=False,
        )
        if proc.returncode != 0:
            raise ClusterError(f"{gomod}: {proc.stderr.strip()}")
        data: dict[str, Any] = json.loads(proc.stdout)
        pinned: dict[str, str] = {}
        for req in data.get("Require") or []:
            pinned[req["Path"]] = req["Version"]
        for rep in data.get("Replace") or []:
            new = rep.get("New", {})
            if new.get("Version"):
                pinned[rep["Old"]["Path"]] = new["Version"]
        wrong = [
            f"{mod} is {pinned.get(mod, 'missing')}, versions.toml wants {want}"
            for mod, want in expected.items()
            if pinned.get(mod) != want
        ]
        if wrong:
            raise ClusterError(
                f"{gomod} does not match versions.toml: "
                + "; ".join(wrong)
                + " (edit the wrapper's go.mod, then `go mod tidy` in that directory)"
            )

    def source_hash(self, component: Component) -> str:
        if component.module is None:
            return ""
        digest = hashlib.sha256()
        base = self.module_dir(component)
        requirements = (component.modfile, component.modfile.removesuffix(".mod") + ".sum")
        digest.update(component.tags.encode())
        for path in sorted(base.rglob("*")):
            if path.is_file() and (path.suffix == ".go" or path.name in requirements):
                digest.update(str(path.relative_to(base)).encode())
                digest.update(path.read_bytes())
        return digest.hexdigest()[:16]

    # ---- cache ---------------------------------------------------------------------
    def target(self, component: Component) -> Path:
        return bin_root() / component.dirname

    def is_built(self, component: Component) -> bool:
        target = self.target(component)
        try:
            stamp = json.loads((target / STAMP).read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError):
            return False
        return (
            stamp.get("version") == component.version
            and stamp.get("source") == self.source_hash(component)
            and all((target / name).exists() for name in component.outputs)
        )

    def build(self, component: Component, force: bool = False) -> Built:
        target = self.target(component)
        if not force and self.is_built(component):
            return Built(component, target, 0.0, cached=True)
        self.say(f"[build] {component.name} {component.version}: {component.description}")
        staging = target.with_name(f"{target.name}.partial-{os.getpid()}")
        shutil.rmtree(staging, ignore_errors=True)
        staging.mkdir(parents=True)
        start = time.monotonic()
        try:
            component.recipe(component, staging, self)
            missing = [n for n in component.outputs if not (staging / n).exists()]
            if missing:
                raise ClusterError(f"{component.name}: build produced no {', '.join(missing)}")
            seconds = time.monotonic() - start
            stamp = {
                "name": component.name,
                "version": component.version,
                "source": self.source_hash(component),
                "seconds": round(seconds, 1),
                "built": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            }
            (staging / STAMP).write_text(json.dumps(stamp, indent=2) + "\n", encoding="utf-8")
            if target.exists():
                shutil.rmtree(target)
            staging.rename(target)
        finally:
            shutil.rmtree(staging, ignore_errors=True)
        self.say(f"[build] {component.name} {component.version}: done in {seconds:.0f}s")
        return Built(component, target, seconds, cached=False)


# ---- recipes ---------------------------------------------------------------------------
def _ldflags(*pairs: tuple[str, str]) -> str:
    return " ".join(["-s", "-w", *(f"-X {k}={v}" for k, v in pairs)])


def _kube_version_flags(version: str) -> list[tuple[str, str]]:
    major, minor = version.lstrip("v").split(".")[:2]
    pairs: list[tuple[str, str]] = []
    for pkg in ("k8s.io/component-base/version", "k8s.io/client-go/pkg/version"):
        pairs += [
            (f"{pkg}.gitVersion", version),
            (f"{pkg}.gitMajor", major),
            (f"{pkg}.gitMinor", minor),
            (f"{pkg}.gitTreeState", "clean"),
        ]
    return pairs


def _kube_expected(release: str) -> dict[str, str]:
    staging = "v0." + release.lstrip("v").split(".", 1)[1]
    return {"k8s.io/kubernetes": release, "k8s.io/api": staging, "k8s.io/apiserver": staging}


def _build_kube(c: Component, out: Path, b: Builder) -> None:
    b.check_requires(c, _kube_expected(c.version))
    flags = _ldflags(*_kube_version_flags(c.version))
    _go_build(b, "kube", out / "kube", ".", flags, b.module_dir(c), c)
    for name in KUBE_COMPONENTS:
        (out / name).symlink_to("kube")


def _build_kubectl(c: Component, out: Path, b: Builder) -> None:
    b.check_requires(c, _kube_expected(c.version))
    flags = _ldflags(*_kube_version_flags(c.version))
    _go_build(b, "kubectl", out / "kubectl", "./kubectl", flags, b.module_dir(c))


def _build_etcd(c: Component, out: Path, b: Builder) -> None:
    b.check_requires(c, {"go.etcd.io/etcd/server/v3": c.version})
    _go_build(b, "etcd", out / "etcd", ".", "-s -w", b.module_dir(c))


def _go_flags(b: Builder, ldflags: str) -> list[str]:
    return ["-v", "-p", str(b.jobs), "-trimpath", "-buildvcs=false", "-ldflags", ldflags]


def _go_build(
    b: Builder,
    label: str,
    output: Path,
    package: str,
    ldflags: str,
    cwd: Path,
    component: Component | None = None,
) -> None:
    """`go build` of a package of a wrapper module into one binary (with the component's
    requirements file and build tags, where it has its own)."""
    extra = []
    if component is not None and component.modfile != "go.mod":
        extra.append(f"-modfile={component.modfile}")
    if component is not None and component.tags:
        extra.append(f"-tags={component.tags}")
    command = ["build", *_go_flags(b, ldflags), *extra, "-o", str(output), package]
    b.go_run(label, command, cwd=cwd)


def _go_install(b: Builder, label: str, out: Path, pkgs: Iterable[str], ldflags: str) -> None:
    """`go install` of published commands (no wrapper module) into the directory out."""
    b.go_run(label, ["install", *_go_flags(b, ldflags), *pkgs], env=b.env(GOBIN=str(out)))


def _build_kwok(c: Component, out: Path, b: Builder) -> None:
    _go_install(
        b,
        "kwok",
        out,
        [f"sigs.k8s.io/kwok/cmd/kwokctl@{c.version}", f"sigs.k8s.io/kwok/cmd/kwok@{c.version}"],
        _ldflags(("sigs.k8s.io/kwok/pkg/consts.Version", c.version.lstrip("v"))),
    )


def _build_operator(c: Component, out: Path, b: Builder) -> None:
    module = "github.com/kubeflow/training-operator"
    b.check_requires(c, {module: c.version})
    _go_build(b, "training-operator", out / "training-operator", ".", "-s -w", b.module_dir(c), c)
    manifests = b.module_download_dir(module, c.version) / "manifests" / "base"
    rbac = out / "rbac"
    rbac.mkdir()
    shutil.copyfile(manifests / "rbac" / "role.yaml", rbac / OPERATOR_ROLE)
    if UPSTREAM_MANIFESTS in c.outputs:
        # The release's own install manifests (kustomize), for installing it the upstream way.
        shutil.copytree(manifests.parent, out / UPSTREAM_MANIFESTS)


def _build_volcano(c: Component, out: Path, b: Builder) -> None:
    b.check_requires(
        c, {"volcano.sh/volcano": c.version, "volcano.sh/apis": b.versions.volcano_apis}
    )
    flags = _ldflags(("volcano.sh/volcano/pkg/version.Version", c.version))
    for binary, pkg in (
        ("vc-scheduler", "volcano.sh/volcano/cmd/scheduler"),
        ("vc-controller-manager", "volcano.sh/volcano/cmd/controller-manager"),
        ("vc-webhook-manager", "volcano.sh/volcano/cmd/webhook-manager"),
    ):
        _go_build(b, binary, out / binary, pkg, flags, b.module_dir(c))
    module_dir = b.module_download_dir("volcano.sh/volcano", c.version)
    crds = out / "crds"
    crds.mkdir()
    for path in sorted((module_dir / "config" / "crd" / "volcano" / "bases").glob("*.yaml")):
        shutil.copyfile(path, crds / path.name)
    # The ClusterRoles of Volcano's rendered install manifest, so the local processes run
    # with exactly the permissions a real install grants them.
    rendered = module_dir / "installer" / "volcano-development.yaml"
    roles = {
        doc["metadata"]["name"]: doc
        for doc in yaml.safe_load_all(rendered.read_text(encoding="utf-8"))
        if isinstance(doc, dict) and doc.get("kind") == "ClusterRole"
    }
    rbac = out / "rbac"
    rbac.mkdir()
    for role in VOLCANO_ROLES:
        if role not in roles:
            raise ClusterError(f"{rendered}: no ClusterRole {role}")
        (rbac / f"{role}.yaml").write_text(yaml.safe_dump(roles[role]), encoding="utf-8")


def _build_helm(c: Component, out: Path, b: Builder) -> None:
    _go_install(
        b,
        "helm",
        out,
        [f"helm.sh/helm/v3/cmd/helm@{c.version}"],
        _ldflags(("helm.sh/helm/v3/internal/version.version", c.version)),
    )


def _build_jobset(c: Component, out: Path, b: Builder) -> None:
    b.check_requires(c, {"sigs.k8s.io/jobset": c.version})
    flags = _ldflags(("sigs.k8s.io/jobset/pkg/version.GitVersion", c.version))
    _go_build(b, "jobset", out / "jobset", "sigs.k8s.io/jobset", flags, b.module_dir(c))


def _build_trainer(c: Component, out: Path, b: Builder) -> None:
    b.check_requires(
        c, {"github.com/kubeflow/trainer/v2": c.version, "sigs.k8s.io/jobset": b.versions.jobset}
    )
    package = "github.com/kubeflow/trainer/v2/cmd/trainer-controller-manager"
    _go_build(b, "trainer", out / "trainer", package, _ldflags(), b.module_dir(c))


def _build_kueue(c: Component, out: Path, b: Builder) -> None:
    b.check_requires(c, {"sigs.k8s.io/kueue": c.version})
    flags = _ldflags(("sigs.k8s.io/kueue/pkg/version.GitVersion", c.version))
    _go_build(b, "kueue", out / "kueue", "sigs.k8s.io/kueue/cmd/kueue", flags, b.module_dir(c))


def components(versions: Versions) -> dict[str, Component]:
    v = versions
    items = [
        Component("etcd", v.etcd, ("etcd",), _build_etcd, "etcd", "etcd server (wrapper module)"),
        Component(
            "kube",
            v.kubernetes,
            ("kube", *KUBE_COMPONENTS),
            _build_kube,
            "kube",
            "kube-apiserver/-controller-manager/-scheduler multi-call binary (slowest)",
            modfile=v.kube_modfile,
        ),
        Component(
            "kwok", v.kwok, ("kwokctl", "kwok"), _build_kwok, None, "kwokctl + kwok controller"
        ),
        Component(
            "training-operator",
            v.training_operator,
            ("training-operator", f"rbac/{OPERATOR_ROLE}"),
            _build_operator,
            "training-operator",
            "Kubeflow training-operator v1 (wrapper module: webhook host and cert dir)",
        ),
        Component(
            "volcano",
            v.volcano,
            (
                "vc-scheduler",
                "vc-controller-manager",
                "vc-webhook-manager",
                "crds",
                *(f"rbac/{r}.yaml" for r in VOLCANO_ROLES),
            ),
            _build_volcano,
            "volcano",
            "Volcano scheduler, controller-manager, webhook-manager (wrapper module)",
        ),
        Component("helm", v.helm, ("helm",), _build_helm, None, "helm 3"),
        Component(
            "jobset", v.jobset, ("jobset",), _build_jobset, "jobset", "JobSet controller (wrapper)"
        ),
        Component(
            "trainer",
            v.trainer,
            ("trainer",),
            _build_trainer,
            "trainer",
            "Kubeflow Trainer v2 controller-manager (wrapper)",
        ),
        Component(
            "kueue",
            v.kueue,
            ("kueue",),
            _build_kueue,
            "kueue",
            "Kueue controller-manager (wrapper)",
        ),
        Component("kubectl", v.kubectl, ("kubectl",), _build_kubectl, "kube", "kubectl"),
    ]
    # Built on demand (the upgrade tests), into training-operator-<upgrade_from>/.
    upgrade_from = Component(
        "training-operator",
        v.training_operator_upgrade_from,
        ("training-operator", f"rbac/{OPERATOR_ROLE}", UPSTREAM_MANIFESTS),
        _build_operator,
        "training-operator",
        "Kubeflow training-operator the upgrades start from (wrapper module, its manifests)",
        modfile="upgrade-from.mod",
        tags="upgradefrom",
    )
    return {**{c.name: c for c in items}, OPERATOR_UPGRADE_FROM: upgrade_from}


CORE = ("etcd", "kube", "kwok")
ADDONS = ("training-operator", "volcano")
DEFAULT = (*CORE, *ADDONS, "helm", "jobset", "trainer", "kueue")


def wanted(names: Sequence[str] | None, with_kubectl: bool | None) -> list[str]:
    chosen = list(names) if names else list(DEFAULT)
    if with_kubectl is None:
        with_kubectl = shutil.which("kubectl") is None
    if with_kubectl and "kubectl" not in chosen:
        chosen.append("kubectl")
    return chosen


def build_all(
    names: Sequence[str] | None = None,
    *,
    with_kubectl: bool | None = None,
    force: bool = False,
    out: TextIO | None = None,
    versions: Versions | None = None,
) -> list[Built]:
    """Build (or find cached) the components named (default: ``DEFAULT``) at `versions`
    (versions.toml's; ``Versions.for_kubernetes`` for another Kubernetes release)."""
    root = repo_root()
    versions = versions or load_versions(root)
    builder = Builder(versions, root, out=out or sys.stderr)
    table = components(versions)
    todo = wanted(names, with_kubectl)
    unknown = [n for n in todo if n not in table]
    if unknown:
        raise ClusterError(f"unknown component {unknown[0]!r}; known: {', '.join(table)}")
    if not force and all(builder.is_built(table[n]) for n in todo):
        return [builder.build(table[n]) for n in todo]  # all cached: no lock to take
    if not shutil.which("go"):
        raise ClusterError(
            "building the local cluster needs Go (>= 1.24, see components/go/*/go.mod) on PATH; "
            "the binaries are then cached in " + str(bin_root())
        )
    with _one_build_at_a_time(builder):
        return [builder.build(table[n], force=force) for n in todo]


@contextlib.contextmanager
def _one_build_at_a_time(builder: Builder) -> Iterator[None]:
    """Hold the cache's build lock. Two ``cluster up`` at once (a fleet's hosts in one play)
    would each build what is missing; the second now waits, then finds it built."""
    bin_root().mkdir(parents=True, exist_ok=True)
    path = bin_root() / ".build.lock"
    handle = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o600)
    try:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            builder.say(f"[build] waiting for another process's build in {bin_root()}")
            fcntl.flock(handle, fcntl.LOCK_EX)
        yield
    finally:
        os.close(handle)  # releases the lock


def binary(name: str, component: str, versions: Versions | None = None) -> Path:
    """Path of a built binary; raises if its component has not been built."""
    versions = versions or load_versions()
    comp = components(versions)[component]
    path = bin_root() / comp.dirname / name
    if not path.exists():
        raise ClusterError(f"{path} is missing: run `tfjob-kit cluster build`")
    return path


def kubectl_path(versions: Versions | None = None) -> str:
    """The cluster-matched kubectl from the cache if built, else the one on PATH."""
    versions = versions or load_versions()
    built = bin_root() / components(versions)["kubectl"].dirname / "kubectl"
    if built.exists():
        return str(built)
    found = shutil.which("kubectl")
    if found is None:
        raise ClusterError("no kubectl: run `tfjob-kit cluster build --with-kubectl`")
    return found


def helm_path(versions: Versions | None = None) -> Path:
    return binary("helm", "helm", versions)


def tool_paths(versions: Versions | None = None) -> list[Path]:
    """The built client tools (helm, and kubectl when it was built), for PATH."""
    versions = versions or load_versions()
    table = components(versions)
    found = []
    for name in ("helm", "kubectl"):
        path = bin_root() / table[name].dirname / name
        if path.exists():
            found.append(path)
    return found


def operator_clusterrole_path(versions: Versions | None = None) -> Path:
    """The upstream operator's ClusterRole (manifests/base/rbac/role.yaml, copied from the Go
    module cache): the charts' roles are checked to stay within it. The local process runs
    with the chart's rules (chart_rbac)."""
    return binary(f"rbac/{OPERATOR_ROLE}", "training-operator", versions)


def volcano_clusterrole_path(role: str, versions: Versions | None = None) -> Path:
    """Upstream's ClusterRole ``volcano-scheduler`` or ``volcano-controllers`` (from Volcano's
    rendered install manifest): the chart's roles are checked to stay within it. The local
    processes run with the chart's rules (chart_rbac)."""
    return binary(f"rbac/{role}.yaml", "volcano", versions)
