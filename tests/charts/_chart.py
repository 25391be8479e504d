"""Rendering a chart of charts/ with helm (`helm template`, `helm lint`), no cluster, and the
checks that every chart's tests make, each in one place."""

from __future__ import annotations

import json
import re
import subprocess
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema
import yaml

from tfjob_kit.versions import load_versions

ROOT = Path(__file__).resolve().parents[2]
CHARTS = ROOT / "charts"
KUBE = load_versions(ROOT).kubernetes.lstrip("v")  # the pinned cluster line, e.g. 1.37.2
LEGACY_KUBE = "1.21.0"  # the newest line kube-batch can run on

Doc = dict[str, Any]
Args = tuple[str, ...]  # helm arguments: -f FILE, --set KEY=VALUE (see `sets`)

# How the tests render each chart: release name, namespace, --kube-version. A release named like
# the chart gets the upstream object names (what the local cluster uses).
SETUP = {
    "training-operator": ("training-operator", "training-operator", KUBE),
    "tfjob": ("tfjob", "kubeflow", KUBE),
    "volcano": ("rel", "volcano-system", KUBE),
    "kube-batch": ("rel", "kube-system", LEGACY_KUBE),
    "nvidia-device-plugin": ("rel", "gpu", KUBE),
    "jobset": ("jobset", "jobset-system", KUBE),
    "trainer": ("trainer", "kubeflow-system", KUBE),
    "kueue": ("kueue", "kueue-system", KUBE),
}


Triple = tuple[str, str, str]  # (API group, resource, verb) that a rule grants


def rule_triples(rules: list[Doc]) -> set[Triple]:
    """Every (group, resource, verb) the RBAC rules grant, names aside."""
    return {
        (group, resource, verb)
        for rule in rules
        for group in rule["apiGroups"]
        for resource in rule["resources"]
        for verb in rule["verbs"]
    }


def go_json_tags(path: Path) -> set[str]:
    """The JSON field names a Go source file's struct tags declare."""
    return set(re.findall(r'json:"([A-Za-z]+)[,"]', path.read_text(encoding="utf-8")))


def nested_keys(node: Any) -> set[str]:
    """Every mapping key at any depth of ``node``."""
    if isinstance(node, dict):
        return set(node) | {k for value in node.values() for k in nested_keys(value)}
    return set()


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


@cache
def _cached_text(chart: Chart, args: tuple[str, ...]) -> str:
    return chart.render_text(*args)


def of_kind(docs: Iterable[Doc], kind: str) -> list[Doc]:
    return [doc for doc in docs if doc["kind"] == kind]


def one(docs: Iterable[Doc], kind: str, name_part: str = "") -> Doc:
    found = [d for d in of_kind(docs, kind) if name_part in d["metadata"]["name"]]
    assert len(found) == 1, f"expected one {kind} *{name_part}*, got {len(found)}"
    return found[0]


# Kinds whose objects carry a pod template at spec.template.
TEMPLATE_KINDS = ("Deployment", "DaemonSet", "StatefulSet", "ReplicaSet", "Job")
# Kinds that run pods some other way, which the checks below would not see.
UNHANDLED_KINDS = ("CronJob", "ReplicationController", "PodTemplate")


def pod_templates(docs: Iterable[Doc]) -> Iterator[tuple[str, Doc]]:
    """Every pod a chart renders, as ("Kind/name", pod template with metadata and spec): the
    templates of workloads, a TFJob's replicas (as "TFJob/name[Replica]") and bare Pods such as
    `helm test` hooks."""
    for doc in docs:
        where = f"{doc['kind']}/{doc['metadata']['name']}"
        assert doc["kind"] not in UNHANDLED_KINDS, f"{where}: its pods are not checked"
        if doc["kind"] in TEMPLATE_KINDS:
            yield where, doc["spec"]["template"]
        elif doc["kind"] == "Pod":
            yield where, {"metadata": doc["metadata"], "spec": doc["spec"]}
        elif doc["kind"] == "TFJob":
            for replica, spec in doc["spec"]["tfReplicaSpecs"].items():
                yield f"{where}[{replica}]", spec["template"]


def pod_specs(docs: Iterable[Doc]) -> Iterator[tuple[str, Doc]]:
    """The pod spec of each of `pod_templates`."""
    for where, template in pod_templates(docs):
        yield where, template["spec"]


# --------------------------------------------------------------------------- shared checks
# Each chart's test module runs every check below the same way, parametrized over the chart's
# own `scenarios`.


def scenarios(chart: str, *extra: Args) -> list[Args]:
    """The helm arguments a chart's shared checks render it with: the defaults, each file of its
    ci/ (`-f`), then the value sets in `extra` (see `sets`) that no ci/ file covers."""
    files = sorted((CHARTS / chart / "ci").glob("*.yaml"))
    return [(), *(("-f", str(path)) for path in files), *extra]


def scenario_id(args: Args) -> str:
    """A test id for helm arguments: "defaults", else the values files' names and the values."""
    pairs = zip(args[::2], args[1::2], strict=True)
    return ",".join(Path(v).name if flag == "-f" else v for flag, v in pairs) or "defaults"


@dataclass(frozen=True)
class Shared:
    """What the checks every chart gets (tests/charts/test_every_chart.py) need to know of one
    chart: its folder, the conftest fixture that renders it, the scenarios to render, the Pod
    Security violations it cannot avoid, the scenarios that render no pod, and what it
    generates afresh on purpose (masked before two renders are compared)."""

    chart: str
    fixture: str
    scenarios: list[Args]
    not_restricted: tuple[str, ...] = ()
    without_pods: tuple[Args, ...] = ()
    mask: Callable[[list[Doc]], list[Doc]] | None = None


def check_helm_lint_strict(chart: Chart, args: Args) -> None:
    """`helm lint --strict` passes with these values, and says nothing worse than [INFO]."""
    result = chart.lint(*args)
    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    assert "0 chart(s) failed" in output, output
    assert "[WARNING]" not in output and "[ERROR]" not in output, output
    # helm lint does not treat `fail` as fatal; it logs it. None may fire here.
    assert "Fail:" not in output, output


def _undocumented_keys(
    node: yaml.Node, lines: list[str], ancestor: bool, in_list: bool
) -> Iterator[str]:
    """Keys of values.yaml without a comment on the line right above them. A key reached
    through a list (list items are data, e.g. a plugin list) may lean on the comment of a key
    above it instead."""
    if isinstance(node, yaml.SequenceNode):
        for item in node.value:
            yield from _undocumented_keys(item, lines, ancestor, True)
    elif isinstance(node, yaml.MappingNode):
        for key, value in node.value:
            line = key.start_mark.line
            commented = line > 0 and lines[line - 1].lstrip().startswith("#")
            if not commented and not (in_list and ancestor):
                yield f"{key.value} (line {line + 1})"
            yield from _undocumented_keys(value, lines, ancestor or commented, in_list)


def check_chart_conventions(chart: Path) -> None:
    """Chart.yaml, values.yaml, values.schema.json, the helpers, validation.yaml, README.md and
    ci/ as every chart of charts/ has them. (Chart.yaml's kubeVersion is held to versions.toml by
    tests/unit/test_drift.py.)"""
    meta = yaml.safe_load((chart / "Chart.yaml").read_text(encoding="utf-8"))
    assert meta["apiVersion"] == "v2"
    assert meta["name"] == chart.name
    assert meta["version"] == "0.1.0"
    assert meta["appVersion"] and meta["kubeVersion"]
    text = (chart / "values.yaml").read_text(encoding="utf-8")
    lines = text.splitlines()
    assert lines[0] == "# yaml-language-server: $schema=values.schema.json"
    root = yaml.compose(text)
    assert isinstance(root, yaml.MappingNode)
    missing = list(_undocumented_keys(root, lines, ancestor=False, in_list=False))
    assert not missing, f"{chart.name}/values.yaml keys without a comment right above: {missing}"
    schema = json.loads((chart / "values.schema.json").read_text(encoding="utf-8"))
    assert schema["$schema"] == "http://json-schema.org/draft-07/schema#"
    jsonschema.Draft7Validator.check_schema(schema)
    assert schema["additionalProperties"] is False
    jsonschema.Draft7Validator(schema).validate(yaml.safe_load(text))
    helpers = (chart / "templates" / "_helpers.tpl").read_text(encoding="utf-8")
    for helper in ("name", "fullname", "chart", "labels", "selectorLabels", "serviceAccountName"):
        assert f'define "{chart.name}.{helper}"' in helpers, helper
    assert (chart / "templates" / "validation.yaml").is_file()
    assert (chart / "README.md").is_file()
    for scenario in (chart / "ci").iterdir():
        # chart-testing (ct) reads only ci/*-values.yaml
        assert scenario.name.endswith("-values.yaml"), scenario


def check_chart_labels(chart: Chart, docs: list[Doc]) -> None:
    """Every object carries the chart's standard labels, with this release's values."""
    version = yaml.safe_load((chart.path / "Chart.yaml").read_text(encoding="utf-8"))["version"]
    assert docs
    for doc in docs:
        labels = doc["metadata"].get("labels") or {}
        where = f"{doc['kind']}/{doc['metadata']['name']}: {labels}"
        assert labels.get("app.kubernetes.io/name") == chart.name, where
        assert labels.get("helm.sh/chart") == f"{chart.name}-{version}", where
        assert labels.get("app.kubernetes.io/instance") == chart.release, where
        assert labels.get("app.kubernetes.io/managed-by") == "Helm", where


def restricted_violations(where: str, pod: Doc) -> Iterator[str]:
    """Where a pod spec falls short of Pod Security "restricted" (as far as the rendered spec can
    show it), or of the charts' own hardening: a read-only root file system with an emptyDir on
    /tmp, and resource limits on every container."""
    for field in ("hostNetwork", "hostPID", "hostIPC"):
        if pod.get(field):
            yield f"{where}: {field}"
    volumes = {v["name"]: v for v in pod.get("volumes") or []}
    for name, volume in volumes.items():
        if "hostPath" in volume:
            yield f"{where}: hostPath volume {name}"
    pod_context = pod.get("securityContext") or {}
    if pod_context.get("runAsNonRoot") is not True:
        yield f"{where}: pod runAsNonRoot is not true"
    if not pod_context.get("runAsUser", 0) > 0:
        yield f"{where}: pod runAsUser is not above 0"
    if (pod_context.get("seccompProfile") or {}).get("type") != "RuntimeDefault":
        yield f"{where}: pod seccompProfile is not RuntimeDefault"
    for container in [*(pod.get("initContainers") or []), *pod["containers"]]:
        at = f"{where} container {container['name']}"
        context = container.get("securityContext") or {}
        capabilities = context.get("capabilities") or {}
        if context.get("allowPrivilegeEscalation") is not False:
            yield f"{at}: allowPrivilegeEscalation is not false"
        if context.get("privileged"):
            yield f"{at}: privileged"
        if capabilities.get("drop") != ["ALL"]:
            yield f"{at}: capabilities.drop is not [ALL]"
        if "add" in capabilities:
            yield f"{at}: capabilities.add"
        if context.get("runAsNonRoot", pod_context.get("runAsNonRoot")) is not True:
            yield f"{at}: runAsNonRoot is not true"
        if context.get("runAsUser", pod_context.get("runAsUser")) == 0:
            yield f"{at}: runAsUser 0"
        seccomp = context.get("seccompProfile") or pod_context.get("seccompProfile") or {}
        if seccomp.get("type") not in ("RuntimeDefault", "Localhost"):
            yield f"{at}: seccompProfile is not RuntimeDefault or Localhost"
        if context.get("readOnlyRootFilesystem") is not True:
            yield f"{at}: readOnlyRootFilesystem is not true"
        mounts = {m["mountPath"]: m["name"] for m in container.get("volumeMounts") or []}
        if "emptyDir" not in volumes.get(mounts.get("/tmp", ""), {}):
            yield f"{at}: /tmp is not an emptyDir"
        if not (container.get("resources") or {}).get("limits"):
            yield f"{at}: no resource limits"


def check_pod_security_restricted(
    docs: list[Doc], exceptions: Iterable[str] = (), *, pods: bool = True
) -> None:
    """Every pod the chart renders meets `restricted_violations`, but for `exceptions`: the
    violations a component cannot avoid, each of which must still occur. `pods`: the values
    render at least one pod."""
    specs = list(pod_specs(docs))
    assert bool(specs) == pods, f"{len(specs)} pods rendered, expected {'some' if pods else 'none'}"
    found = {violation for where, pod in specs for violation in restricted_violations(where, pod)}
    expected = set(exceptions)
    assert not found - expected, f"not restricted: {sorted(found - expected)}"
    assert not expected - found, f"exceptions that no longer occur: {sorted(expected - found)}"


def check_rbac_is_least_privilege(chart: Chart, docs: list[Doc]) -> None:
    """No wildcard, no non-resource URL; bindings grant only the chart's own roles, never
    cluster-admin, admin or edit, and only to ServiceAccounts of the release's namespace."""
    for role in of_kind(docs, "ClusterRole") + of_kind(docs, "Role"):
        for rule in role["rules"]:
            for field in ("apiGroups", "resources", "verbs", "resourceNames"):
                assert "*" not in rule.get(field, []), f"{role['metadata']['name']}: {rule}"
            assert not rule.get("nonResourceURLs"), role["metadata"]["name"]
            assert rule["verbs"] and rule["resources"], role["metadata"]["name"]
    for binding in of_kind(docs, "ClusterRoleBinding") + of_kind(docs, "RoleBinding"):
        assert binding["roleRef"]["name"] not in ("cluster-admin", "admin", "edit"), binding
        own = {r["metadata"]["name"] for r in of_kind(docs, binding["roleRef"]["kind"])}
        assert binding["roleRef"]["name"] in own, "bindings only grant the chart's own roles"
        for subject in binding["subjects"]:
            assert subject["kind"] == "ServiceAccount", binding
            assert subject["namespace"] == chart.namespace, binding


def check_pod_templates_match_the_kubernetes_schema(docs: list[Doc]) -> None:
    """Every pod template is a valid core/v1 PodTemplateSpec of the pinned Kubernetes (closed
    objects: a misspelt or misplaced field fails here, not at install time)."""
    schema = json.loads((ROOT / "schemas" / "k8s" / "podtemplatespec.json").read_text())
    validator = jsonschema.Draft202012Validator(schema)
    for where, template in pod_templates(docs):
        errors = [f"{list(e.absolute_path)}: {e.message}" for e in validator.iter_errors(template)]
        assert not errors, f"{where}: {errors}"


def check_render_is_deterministic(
    chart: Chart, args: Args, mask: Callable[[list[Doc]], list[Doc]] | None = None
) -> None:
    """Two renders with the same values are byte-identical; with `mask`, identical once `mask`
    has replaced what the chart generates afresh on purpose."""
    first, second = chart.render_text(*args), chart.render_text(*args)
    if mask is None:
        assert first == second
    else:
        parsed = [[doc for doc in yaml.safe_load_all(text) if doc] for text in (first, second)]
        assert mask(parsed[0]) == mask(parsed[1])
