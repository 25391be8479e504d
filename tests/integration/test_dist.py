"""`make dist` (tools/dist.py): the three kinds of release artifact, one version, the same bytes
from the same commit (built twice; only the chart index's timestamps differ), and each installed
as its users install it, outside this checkout:

* the wheel in an empty venv with the lean lock, validating the examples;
* the collection tarball with ``ansible-galaxy collection install``, running the README's
  playbook on the local cluster;
* the charts from their repository (index.yaml) served on 127.0.0.1, with ``helm install`` on
  a scratch local cluster, with the values the local inventory gives the roles.
"""

from __future__ import annotations

import functools
import hashlib
import http.server
import io
import json
import os
import subprocess
import sys
import tarfile
import threading
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

import checkout_scripts
from tfjob_kit.cluster import local
from tfjob_kit.cluster.build import helm_path

from ._ansible import BIN, ansible_env
from ._cluster import Cluster
from .conftest import KUBERNETES, session_name

ROOT = Path(__file__).resolve().parents[2]
CHARTS = sorted(p.parent.name for p in ROOT.glob("charts/*/Chart.yaml"))


def _build(out: Path) -> list[str]:
    proc = subprocess.run(
        [sys.executable, str(ROOT / "tools" / "dist.py"), "--out", str(out)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc.stdout.split()


@pytest.fixture(scope="module")
def builds(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, list[str]]:
    first, second = tmp_path_factory.mktemp("dist-a"), tmp_path_factory.mktemp("dist-b")
    listed = _build(first)
    assert _build(second) == listed
    return first, second, listed


def _version() -> str:
    text = (ROOT / "pyproject.toml").read_text()
    return text.split('\nversion = "', 1)[1].split('"', 1)[0]


def test_every_artifact_of_one_version(builds: tuple[Path, Path, list[str]]) -> None:
    out, _, listed = builds
    version = _version()
    assert listed == sorted(
        [
            f"python/tfjob_kit-{version}-py3-none-any.whl",
            f"python/tfjob_kit-{version}.tar.gz",
            f"collection/tfjob-kit-{version}.tar.gz",
            "charts/index.yaml",
            *(f"charts/{chart}-{version}.tgz" for chart in CHARTS),
        ]
    )
    # The collection: its manifest's version, the collection's own files and none of the
    # checkout's others.
    with tarfile.open(out / f"collection/tfjob-kit-{version}.tar.gz") as collection:
        names = collection.getnames()
        manifest = json.load(collection.extractfile("MANIFEST.json"))  # type: ignore[arg-type]
    assert manifest["collection_info"]["version"] == version
    shipped = {"plugins/modules/tfjob.py", "roles/volcano/tasks/main.yml", "playbooks/site.yml"}
    assert shipped <= set(names)
    for left_out in ("tests/", "src/", "build/", "dist/", ".venv/", ".hypothesis/", ".git/"):
        assert not [n for n in names if n.startswith(left_out)], left_out
    checkout_only = {"Makefile", "pyproject.toml", "ansible.cfg", "requirements/dev.txt"}
    assert not checkout_only & set(names)
    assert {"requirements/runtime.txt", "SECURITY.md", "versions.toml"} <= set(names)
    # The wheel carries the library and the same collection.
    wheel = zipfile.ZipFile(out / f"python/tfjob_kit-{version}-py3-none-any.whl").namelist()
    assert "tfjob_kit/cli.py" in wheel
    assert "ansible_collections/tfjob/kit/plugins/modules/tfjob.py" in wheel
    # The chart repository: every chart at this version, its digest the file's.
    index = yaml.safe_load((out / "charts/index.yaml").read_text())
    assert sorted(index["entries"]) == CHARTS
    for chart, (entry,) in index["entries"].items():
        packaged = out / "charts" / f"{chart}-{version}.tgz"
        assert entry["version"] == version
        assert entry["urls"] == [packaged.name]
        assert entry["digest"] == hashlib.sha256(packaged.read_bytes()).hexdigest()
        assert entry["annotations"]["tfjob-kit.io/chart"] == chart


def test_the_same_commit_gives_the_same_bytes(builds: tuple[Path, Path, list[str]]) -> None:
    first, second, listed = builds
    differ = [
        name for name in listed if (first / name).read_bytes() != (second / name).read_bytes()
    ]
    assert differ == ["charts/index.yaml"]
    # Only the times the index was made.
    a, b = (yaml.safe_load((out / "charts/index.yaml").read_text()) for out in (first, second))
    for index in (a, b):
        index.pop("generated")
        for (entry,) in index["entries"].values():
            entry.pop("created")
    assert a == b


def test_the_wheel_alone_validates_without_ansible_or_kubernetes(
    builds: tuple[Path, Path, list[str]], tmp_path: Path
) -> None:
    """An empty venv, the lean lock with hashes, the wheel without dependencies: validate,
    explain and the pre-commit hook's command work on the examples; what needs an extra says
    which one."""
    out, _, _ = builds
    (wheel,) = (out / "python").glob("*.whl")
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    for args in (
        ["--require-hashes", "-r", str(ROOT / "requirements" / "validate.txt")],
        ["--no-deps", str(wheel)],
    ):
        subprocess.run(
            [sys.executable, "-m", "pip", "--python", str(python), "install", "--quiet", *args],
            check=True,
            timeout=300,
        )
    probe = "import importlib.util as u; print([u.find_spec(m) is None for m in ('ansible', "
    probe += "'kubernetes', 'cryptography', 'jsonschema')])"
    found = subprocess.run([python, "-c", probe], capture_output=True, text=True, check=True)
    assert found.stdout.strip() == "[True, True, True, True]"

    def tfjob_kit(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [venv / "bin" / "tfjob-kit", *args],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )

    examples = ROOT / "examples" / "tfjobs"
    validated = tfjob_kit("validate", str(examples))
    assert validated.returncode == 0, validated.stderr
    assert "3 TFJobs checked" in validated.stdout + validated.stderr
    explained = tfjob_kit("explain", str(examples / "dist-mnist.yaml"))
    assert explained.returncode == 0, explained.stderr
    assert "TF_CONFIG" in explained.stdout
    # The pre-commit hook as pre-commit runs it: its entry and arguments, then the files' names;
    # a TFJob with cleanPodPolicy under spec (not spec.runPolicy) is refused, located.
    (hook,) = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())
    command, *options = hook["entry"].split()
    assert command == "tfjob-kit"
    bad = tmp_path / "bad.yaml"
    bad.write_text(
        (examples / "dist-mnist.yaml")
        .read_text()
        .replace("    cleanPodPolicy: Running\n", "")
        .replace("spec:\n  runPolicy:", "spec:\n  cleanPodPolicy: Running\n  runPolicy:", 1)
    )
    files = sorted(str(p) for p in examples.glob("*.yaml"))
    hooked = tfjob_kit(*options, *hook.get("args", []), *files)
    assert hooked.returncode == 0, hooked.stdout + hooked.stderr
    refused = tfjob_kit(*options, *hook.get("args", []), *files, str(bad))
    assert refused.returncode == 1, refused.stdout + refused.stderr
    assert f"{bad}:1:$.spec.cleanPodPolicy" in refused.stdout + refused.stderr
    server = tfjob_kit("validate", "--server", str(examples))
    assert (server.returncode, server.stderr) == (
        2,
        "tfjob-kit: error: validate --server needs cryptography and kubernetes, which are not "
        "installed: pip install 'tfjob-kit[cluster]'\n",
    )


@pytest.fixture(scope="module")
def installed(
    builds: tuple[Path, Path, list[str]], tmp_path_factory: pytest.TempPathFactory
) -> Path:
    """The collection tarball installed (``ansible-galaxy collection install --no-deps``) into
    an empty collections path: the installed copy's folder."""
    (tarball,) = (builds[0] / "collection").glob("*.tar.gz")
    dist = checkout_scripts.load("tools/dist.py")
    where: Path = dist.install_collection(tarball, tmp_path_factory.mktemp("collections"))
    assert (
        json.loads((where / "MANIFEST.json").read_text())["collection_info"]["version"]
        == _version()
    )
    return where


def _user_env(installed: Path, home: Path) -> dict[str, str]:
    """A user's environment: no ansible.cfg (the checkout's resolves tfjob.kit to itself), the
    installed collection first on the collections path."""
    return {
        "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}",
        "HOME": str(home),
        "ANSIBLE_COLLECTIONS_PATH": str(installed.parents[2]),
        "ANSIBLE_NOCOLOR": "1",
    }


def test_the_collection_tarball_installs_and_is_the_one_loaded(
    installed: Path, tmp_path: Path
) -> None:
    doc = subprocess.run(
        [BIN / "ansible-doc", "--json", "tfjob.kit.tfjob"],
        cwd=tmp_path,
        env=_user_env(installed, tmp_path),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert doc.returncode == 0, doc.stderr
    found = json.loads(doc.stdout)["tfjob.kit.tfjob"]["doc"]
    assert Path(found["filename"]).resolve() == (installed / "plugins/modules/tfjob.py").resolve()


@pytest.mark.parametrize("mode", [["--check", "--diff"], []])
def test_the_readme_playbook_runs_from_the_installed_collection(
    installed: Path, cluster: Cluster, tmp_path: Path, mode: list[str]
) -> None:
    """The README's collection section: its playbook (examples/playbooks/train.yml), run outside
    this checkout with the installed collection, does what the README says; each tfjob.kit
    module it runs is the installed copy's (``-vvv`` names each module file)."""
    env = {**_user_env(installed, tmp_path), "K8S_AUTH_KUBECONFIG": str(cluster.kubeconfig)}
    proc = subprocess.run(
        [BIN / "ansible-playbook", "-vvv", ROOT / "examples" / "playbooks" / "train.yml", *mode],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    output = proc.stdout + proc.stderr
    assert proc.returncode == 0, output[-8000:]
    assert "failed=0" in output
    used = {
        line.split("Using module file ", 1)[1].strip()
        for line in output.splitlines()
        if "Using module file " in line and "/tfjob/kit/" in line
    }
    modules = installed / "plugins" / "modules"
    assert used == {str(modules / "tfjob.py"), str(modules / "tfjob_info.py")}, used
    if mode:  # check mode: the job would be created, and is not
        assert '"kind": "TFJob"' in output or "kind: TFJob" in output or "+++" in output
    else:
        assert '"type": "worker"' in output  # the TF_CONFIG worker 0 received
    assert (
        cluster.items("tfjobs", "-n", "default", "--field-selector", "metadata.name=dist-mnist")
        == []
    )


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture(scope="module")
def repository(builds: tuple[Path, Path, list[str]]) -> Iterator[tuple[str, Path]]:
    """The chart folder, served on 127.0.0.1 (a free port): its URL, and the folder."""
    folder = builds[0] / "charts"
    handler = functools.partial(_Quiet, directory=str(folder))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", folder
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture(scope="module")
def scratch() -> Iterator[Cluster]:
    """A local cluster of its own (the operator and Volcano as on the session's), for releases
    and CRDs no other test expects."""
    name = session_name("charts")
    kubeconfig = local.up(
        local.UpOptions(name=name, kubernetes_version=KUBERNETES), out=io.StringIO()
    )
    try:
        yield Cluster(kubeconfig, name)
    finally:
        local.down(name, out=io.StringIO())


def chart_roles() -> dict[str, str]:
    """Each chart a role installs, and the role (charts/<chart>, roles/<chart with _>)."""
    return {
        chart: chart.replace("-", "_")
        for chart in CHARTS
        if (ROOT / "roles" / chart.replace("-", "_")).is_dir()
    }


@pytest.fixture(scope="module")
def role_settings(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, Any]]:
    """What each role would give its chart with inventories/local: the release, the namespace
    and the values, rendered by Ansible from the roles themselves (each imported, its tasks
    skipped, its defaults and vars then the play's)."""
    work = tmp_path_factory.mktemp("role-values")
    out = work / "settings.json"
    roles = chart_roles()
    rendered = ", ".join(
        f"'{chart}': {{'release': {role}_release, 'namespace': {role}_namespace, "
        f"'values': {role}_chart_values}}"
        for chart, role in roles.items()
    )
    tasks: list[dict[str, Any]] = [
        {"ansible.builtin.import_role": {"name": f"tfjob.kit.{role}"}, "when": False}
        for role in roles.values()
    ]
    tasks.append(
        {
            "name": "Write what the roles would give their charts",
            "ansible.builtin.copy": {
                "content": "{{ {" + rendered + "} | to_json }}",
                "dest": str(out),
                "mode": "0600",
            },
        }
    )
    playbook = work / "values.yml"
    playbook.write_text(
        yaml.safe_dump([{"hosts": "localhost", "gather_facts": False, "tasks": tasks}])
    )
    proc = subprocess.run(
        [BIN / "ansible-playbook", "-i", ROOT / "inventories" / "local", playbook],
        cwd=ROOT,
        env=ansible_env(work / "no-kubeconfig"),
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    settings: dict[str, dict[str, Any]] = json.loads(out.read_text())
    return settings


def test_the_roles_settings_are_the_local_inventorys(
    role_settings: dict[str, dict[str, Any]],
) -> None:
    """The rendering reads the inventory: its webhooks and Volcano's admission are off."""
    assert sorted(role_settings) == sorted(chart_roles())
    off = {
        chart: key
        for chart, found in role_settings.items()
        for key in ("webhook", "admission")
        if found["values"].get(key, {}).get("enabled") is False
    }
    assert off == {
        "jobset": "webhook",
        "kueue": "webhook",
        "trainer": "webhook",
        "training-operator": "webhook",
        "volcano": "admission",
    }
    assert role_settings["volcano"]["namespace"] == "volcano-system"


def test_each_chart_installs_from_the_served_repository(
    repository: tuple[str, Path],
    role_settings: dict[str, dict[str, Any]],
    scratch: Cluster,
    tmp_path: Path,
) -> None:
    url, folder = repository
    index = yaml.safe_load((folder / "index.yaml").read_text())
    env = {
        "PATH": "/usr/bin:/bin",
        "HOME": str(tmp_path),
        "HELM_CONFIG_HOME": str(tmp_path / "config"),
        "HELM_CACHE_HOME": str(tmp_path / "cache"),
        "HELM_DATA_HOME": str(tmp_path / "data"),
        "KUBECONFIG": str(scratch.kubeconfig),
    }

    def helm(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(helm_path()), *args],
            env=env,
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )

    added = helm("repo", "add", "tfjob-kit", url)
    assert added.returncode == 0, added.stderr
    found = helm("search", "repo", "tfjob-kit/", "--output", "json")
    assert found.returncode == 0, found.stderr
    listed = {entry["name"]: entry["version"] for entry in json.loads(found.stdout)}
    assert listed == {
        f"tfjob-kit/{chart}": entries[0]["version"] for chart, entries in index["entries"].items()
    }

    installed = {}
    for chart, (entry,) in sorted(index["entries"].items()):
        # The tfjob chart is a user's training job: no role installs it.
        settings = role_settings.get(chart, {"release": "mnist", "namespace": "default"})
        release, namespace = settings["release"], settings["namespace"]
        values = tmp_path / f"{chart}.values.yaml"
        values.write_text(yaml.safe_dump(settings.get("values", {})))
        result = helm(
            "install",
            release,
            f"tfjob-kit/{chart}",
            "--version",
            entry["version"],
            "--namespace",
            namespace,
            "--create-namespace",
            "--values",
            str(values),
            "--wait",
            "--timeout",
            "180s",
        )
        installed[chart] = (result.returncode, result.stderr.strip())

    refused = installed.pop("kube-batch")
    assert refused[0] != 0 and "chart requires kubeVersion: <1.22.0-0" in refused[1], refused
    assert {chart: err for chart, (rc, err) in installed.items() if rc} == {}
    releases = helm("list", "--all-namespaces", "--output", "json")
    assert releases.returncode == 0, releases.stderr
    deployed = {
        r["chart"]: r["status"] for r in json.loads(releases.stdout) if r["status"] == "deployed"
    }
    assert deployed == {
        f"{chart}-{entry['version']}": "deployed"
        for chart, (entry,) in index["entries"].items()
        if chart != "kube-batch"
    }
    # (--wait: each release's Deployments and DaemonSets became ready.) The tfjob chart's job:
    assert scratch.get("tfjob", "mnist", "-n", "default")["metadata"]["name"] == "mnist"
