"""Rendering a chart of charts/ with helm (`helm template`, `helm lint`), no cluster, and the
checks that more than one chart's tests make."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema
import yaml

from tfjob_kit.cluster.paths import load_versions

ROOT = Path(__file__).resolve().parents[2]
CHARTS = ROOT / "charts"
KUBE = load_versions(ROOT).kubernetes.lstrip("v")  # the pinned cluster line, e.g. 1.34.4
LEGACY_KUBE = "1.21.0"  # the newest line kube-batch can run on

Doc = dict[str, Any]

# How the tests render each chart: release name, namespace, --kube-version. A release named like
# the chart gets the upstream object names (what the local cluster uses).
SETUP = {
    "training-operator": ("training-operator", "kubeflow", KUBE),
    "tfjob": ("tfjob", "kubeflow", KUBE),
    "volcano": ("rel", "volcano-system", KUBE),
    "kube-batch": ("rel", "kube-system", LEGACY_KUBE),
    "nvidia-device-plugin": ("rel", "gpu", KUBE),
}


def sets(*values: str) -> tuple[str, ...]:
    """helm arguments that set values: each "key=value" with --set, each "json:key=value" with
    --set-json."""
    args: list[str] = []
    for value in values:
        args += ["--set-json", value[5:]] if value.startswith("json:") else ["--set", value]
    return tuple(args)


@dataclass(frozen=True)
class Chart:
    """One chart, rendered by the helm binary of the tool cache."""

    helm: str
    path: Path
    release: str
    namespace: str
    kube: str

    @classmethod
    def named(cls, name: str, helm: str) -> Chart:
        return cls(helm, CHARTS / name, *SETUP[name])

    @property
    def name(self) -> str:
        return self.path.name

    def run(self, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [self.helm, *args], capture_output=True, text=True, check=False, timeout=120
        )

    def lint(self, *args: str) -> subprocess.CompletedProcess[str]:
        """`helm lint --strict` with the chart's namespace and Kubernetes version."""
        return self.run(
            "lint",
            "--strict",
            str(self.path),
            "--namespace",
            self.namespace,
            "--kube-version",
            self.kube,
            *args,
        )

    def template(
        self, *args: str, namespace: str | None = None, kube: str | None = None
    ) -> subprocess.CompletedProcess[str]:
        """`helm template` with helm arguments (see `sets`), whatever its outcome."""
        return self.run(
            "template",
            self.release,
            str(self.path),
            "--namespace",
            namespace or self.namespace,
            "--kube-version",
            kube or self.kube,
            *args,
        )

    def render_text(self, *args: str, namespace: str | None = None) -> str:
        result = self.template(*args, namespace=namespace)
        assert result.returncode == 0, result.stderr
        return result.stdout

    def render(self, *args: str, namespace: str | None = None, crds: bool = False) -> list[Doc]:
        """The documents `helm template` renders, in output order (a fresh render each time)."""
        text = self.render_text(*args, *(["--include-crds"] if crds else []), namespace=namespace)
        return [doc for doc in yaml.safe_load_all(text) if doc]

    def rendered(self, *args: str) -> list[Doc]:
        """`render`, cached: for charts that render the same output every time."""
        return [doc for doc in yaml.safe_load_all(_cached_text(self, args)) if doc]

    def render_error(
        self, *args: str, namespace: str | None = None, kube: str | None = None
    ) -> str:
        """A render that must fail: helm's error output."""
        result = self.template(*args, namespace=namespace, kube=kube)
        assert result.returncode != 0, f"rendered although it should fail:\n{result.stdout[:2000]}"
        return result.stderr

    def scenarios(self) -> list[Path]:
        """The chart's ci/*-values.yaml."""
        return sorted((self.path / "ci").glob("*-values.yaml"))


@cache
def _cached_text(chart: Chart, args: tuple[str, ...]) -> str:
    return chart.render_text(*args)


def of_kind(docs: Iterable[Doc], kind: str) -> list[Doc]:
    return [doc for doc in docs if doc["kind"] == kind]


def one(docs: Iterable[Doc], kind: str, name_part: str = "") -> Doc:
    found = [d for d in of_kind(docs, kind) if name_part in d["metadata"]["name"]]
    assert len(found) == 1, f"expected one {kind} *{name_part}*, got {len(found)}"
    return found[0]


def pod_specs(docs: Iterable[Doc]) -> Iterator[tuple[str, Doc]]:
    for doc in docs:
        if doc["kind"] in ("Deployment", "DaemonSet", "StatefulSet"):
            yield doc["metadata"]["name"], doc["spec"]["template"]["spec"]
        elif doc["kind"] == "Pod":
            yield doc["metadata"]["name"], doc["spec"]


# --------------------------------------------------------------------------- shared checks
# The training-operator and tfjob charts, and the volcano, kube-batch and nvidia-device-plugin
# charts, were written to two sets of conventions; each set is checked the same way for each of
# its charts.


def check_lint_with_scenarios(chart: Chart) -> None:
    """`helm lint --strict` with the defaults and with each ci/*-values.yaml scenario."""
    result = chart.lint()
    assert result.returncode == 0, result.stdout + result.stderr
    for scenario in chart.scenarios():
        result = chart.lint("-f", str(scenario))
        assert result.returncode == 0, f"{scenario.name}: {result.stdout}{result.stderr}"


def check_chart_conventions(chart: Path) -> None:
    meta = yaml.safe_load((chart / "Chart.yaml").read_text())
    assert meta["apiVersion"] == "v2"
    assert meta["kubeVersion"] == ">=1.27.0-0"
    assert meta["version"] == "0.1.0"
    assert meta["appVersion"]
    lines = (chart / "values.yaml").read_text().splitlines()
    assert lines[0] == "# yaml-language-server: $schema=values.schema.json"
    schema = yaml.safe_load((chart / "values.schema.json").read_text())
    assert schema["$schema"] == "http://json-schema.org/draft-07/schema#"
    jsonschema.Draft7Validator.check_schema(schema)
    assert schema["additionalProperties"] is False
    helpers = (chart / "templates" / "_helpers.tpl").read_text()
    for helper in ("name", "fullname", "chart", "labels", "selectorLabels", "serviceAccountName"):
        assert f'define "{chart.name}.{helper}"' in helpers
    assert (chart / "templates" / "validation.yaml").is_file()
    assert (chart / "README.md").is_file()


def undocumented_values(path: Path) -> list[str]:
    """Leaf keys of values.yaml with no comment above them or above one of their parents."""
    keys: list[tuple[int, str, bool]] = []  # (indent, key, comment right above)
    previous = ""
    for line in path.read_text().splitlines():
        stripped = line.strip()
        if stripped and not stripped.startswith(("#", "-")) and ":" in stripped:
            keys.append(
                (
                    len(line) - len(line.lstrip()),
                    stripped.split(":", 1)[0],
                    previous.startswith("#"),
                )
            )
        if stripped:
            previous = stripped
    missing: list[str] = []
    parents: list[tuple[int, bool]] = []
    for index, (indent, key, commented) in enumerate(keys):
        while parents and parents[-1][0] >= indent:
            parents.pop()
        documented = commented or any(c for _, c in parents)
        is_leaf = index + 1 == len(keys) or keys[index + 1][0] <= indent
        if is_leaf and not documented:
            missing.append(key)
        parents.append((indent, commented))
    return missing


def check_chart_labels(chart: Chart, docs: list[Doc]) -> None:
    for doc in docs:
        labels = doc["metadata"].get("labels") or {}
        where = f"{doc['kind']}/{doc['metadata']['name']}"
        assert labels.get("app.kubernetes.io/name") == chart.name, where
        assert labels.get("helm.sh/chart") == f"{chart.name}-0.1.0", where
        assert labels.get("app.kubernetes.io/instance"), where


def workload_pod_specs(doc: Doc) -> Iterator[tuple[str, Doc]]:
    """The pod specs of a workload, a TFJob's replicas included."""
    name = f"{doc['kind']}/{doc['metadata']['name']}"
    if doc["kind"] in ("Deployment", "StatefulSet", "DaemonSet", "Job"):
        yield name, doc["spec"]["template"]["spec"]
    elif doc["kind"] == "TFJob":
        for replica, spec in doc["spec"]["tfReplicaSpecs"].items():
            yield f"{name}[{replica}]", spec["template"]["spec"]


def assert_restricted(where: str, pod: Doc) -> None:
    """Pod Security Standard "restricted", as far as the rendered pod spec can show it."""
    pod_context = pod.get("securityContext") or {}
    assert not pod.get("hostNetwork") and not pod.get("hostPID") and not pod.get("hostIPC"), where
    for volume in pod.get("volumes") or []:
        assert "hostPath" not in volume, f"{where}: hostPath volume {volume['name']}"
    containers = [*(pod.get("initContainers") or []), *pod["containers"]]
    for container in containers:
        at = f"{where} container {container['name']}"
        context = container.get("securityContext") or {}
        assert context.get("allowPrivilegeEscalation") is False, at
        assert not context.get("privileged"), at
        assert "ALL" in ((context.get("capabilities") or {}).get("drop") or []), at
        assert not (context.get("capabilities") or {}).get("add"), at
        non_root = context.get("runAsNonRoot", pod_context.get("runAsNonRoot"))
        assert non_root is True, at
        assert context.get("runAsUser", pod_context.get("runAsUser")) != 0, at
        seccomp = context.get("seccompProfile") or pod_context.get("seccompProfile") or {}
        assert seccomp.get("type") in ("RuntimeDefault", "Localhost"), at
        assert context.get("readOnlyRootFilesystem") is True, at
        mounts = {m["mountPath"]: m["name"] for m in container.get("volumeMounts") or []}
        volumes = {v["name"]: v for v in pod.get("volumes") or []}
        assert "emptyDir" in volumes[mounts["/tmp"]], f"{at}: /tmp is not an emptyDir"
        assert container.get("resources", {}).get("limits"), f"{at}: no resource limits"


def check_every_workload_is_restricted(docs: list[Doc]) -> None:
    workloads = [spec for doc in docs for spec in workload_pod_specs(doc)]
    assert workloads
    for where, pod in workloads:
        assert_restricted(where, pod)


def check_no_binding_to_cluster_admin(docs: list[Doc]) -> None:
    for doc in docs:
        if doc["kind"] in ("ClusterRoleBinding", "RoleBinding"):
            assert doc["roleRef"]["name"] not in ("cluster-admin", "admin", "edit"), doc


def scenario_id(args: tuple[str, ...]) -> str:
    """A test id for helm arguments: the values file's name, else the arguments."""
    if not args:
        return "defaults"
    return Path(args[1]).name if args[0] == "-f" else " ".join(args)


# The conventions of the scheduler and GPU charts (volcano, kube-batch, nvidia-device-plugin).


def lint_cases(chart: str) -> list[Path | None]:
    """None (the defaults) and each ci/*.yaml of the chart."""
    return [None, *sorted((CHARTS / chart / "ci").glob("*.yaml"))]


def lint_id(values_file: Path | None) -> str:
    return values_file.stem if values_file else "defaults"


def variant_id(values: list[str]) -> str:
    return ",".join(values) or "defaults"


def check_helm_lint_strict(chart: Chart, values_file: Path | None) -> None:
    """`helm lint --strict` with the defaults and with each ci/*-values.yaml scenario."""
    extra = ["--values", str(values_file)] if values_file else []
    result = chart.lint(*extra)
    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    assert "0 chart(s) failed" in output
    assert "[WARNING]" not in output and "[ERROR]" not in output, output
    # helm lint does not treat `fail` as fatal; it logs it. None may fire here.
    assert "Fail:" not in output, output


def _mapping_key_lines(node: yaml.Node) -> Iterator[int]:
    """0-based lines of the keys reachable from the root through mappings only (list items are
    data, e.g. a plugin list, and need no comment of their own)."""
    if isinstance(node, yaml.MappingNode):
        for key, value in node.value:
            yield key.start_mark.line
            yield from _mapping_key_lines(value)


def check_values_files_follow_the_conventions(chart: Path) -> None:
    text = (chart / "values.yaml").read_text(encoding="utf-8")
    lines = text.splitlines()
    assert lines[0] == "# yaml-language-server: $schema=values.schema.json"
    root = yaml.compose(text)
    assert root is not None
    for line in _mapping_key_lines(root):
        above = lines[line - 1].strip()
        assert above.startswith("#"), f"{chart.name}/values.yaml:{line + 1} has no comment above"
    schema = (chart / "values.schema.json").read_text(encoding="utf-8")
    assert '"http://json-schema.org/draft-07/schema#"' in schema
    chart_yaml = yaml.safe_load((chart / "Chart.yaml").read_text(encoding="utf-8"))
    assert chart_yaml["apiVersion"] == "v2" and chart_yaml["version"] == "0.1.0"
    assert chart_yaml["kubeVersion"] and chart_yaml["appVersion"]
    assert (chart / "templates" / "validation.yaml").is_file()
    assert (chart / "README.md").is_file()


def check_rbac_is_least_privilege(chart: Chart, docs: list[Doc]) -> None:
    for role in of_kind(docs, "ClusterRole") + of_kind(docs, "Role"):
        for rule in role["rules"]:
            for field in ("apiGroups", "resources", "verbs"):
                assert "*" not in rule.get(field, []), f"{role['metadata']['name']}: {rule}"
            assert not rule.get("nonResourceURLs"), role["metadata"]["name"]
            assert rule["verbs"] and rule["resources"]
    for binding in of_kind(docs, "ClusterRoleBinding") + of_kind(docs, "RoleBinding"):
        assert binding["roleRef"]["name"] not in ("cluster-admin", "admin", "edit"), binding
        own = {r["metadata"]["name"] for r in of_kind(docs, binding["roleRef"]["kind"])}
        assert binding["roleRef"]["name"] in own, "bindings only grant the chart's own roles"
        for subject in binding["subjects"]:
            assert subject["kind"] == "ServiceAccount"
            assert subject["namespace"] == chart.namespace


def check_every_object_carries_the_chart_labels(chart: Chart, docs: list[Doc]) -> None:
    for doc in docs:
        labels = doc["metadata"].get("labels", {})
        assert labels.get("helm.sh/chart") == f"{chart.name}-0.1.0", doc["metadata"]["name"]
        assert labels.get("app.kubernetes.io/instance") == "rel"
        assert labels.get("app.kubernetes.io/managed-by") == "Helm"


def check_workloads_meet_pod_security_restricted(docs: list[Doc]) -> None:
    for name, spec in pod_specs(docs):
        pod = spec.get("securityContext", {})
        assert pod.get("runAsNonRoot") is True and pod.get("runAsUser", 0) > 0, name
        assert pod["seccompProfile"]["type"] == "RuntimeDefault", name
        assert not spec.get("hostNetwork") and not spec.get("hostPID"), name
        assert not [v for v in spec.get("volumes", []) if "hostPath" in v], name
        for container in spec["containers"]:
            context = container["securityContext"]
            assert context["allowPrivilegeEscalation"] is False, name
            assert context["capabilities"]["drop"] == ["ALL"], name
            assert "add" not in context["capabilities"], name
            assert context["readOnlyRootFilesystem"] is True, name
            assert not context.get("privileged"), name


def check_pod_templates_match_the_kubernetes_schema(docs: list[Doc]) -> None:
    """Every pod template is a valid core/v1 PodTemplateSpec of the pinned Kubernetes (closed
    objects: a misspelt or misplaced field fails here, not at install time)."""
    schema = json.loads((ROOT / "schemas" / "k8s" / "podtemplatespec.json").read_text())
    validator = jsonschema.Draft202012Validator(schema)
    for doc in docs:
        if doc["kind"] in ("Deployment", "DaemonSet"):
            template = doc["spec"]["template"]
        elif doc["kind"] == "Pod":
            template = {"metadata": doc["metadata"], "spec": doc["spec"]}
        else:
            continue
        errors = [f"{list(e.absolute_path)}: {e.message}" for e in validator.iter_errors(template)]
        assert not errors, f"{doc['metadata']['name']}: {errors}"
