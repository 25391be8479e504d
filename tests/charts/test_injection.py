"""No value can add a field to what a chart renders (security finding 18).

Every value a template writes into YAML is quoted (`quote`), coerced (`int64`, `toJson`) or
written whole as a structure (`toYaml`), so a value holding a newline and YAML, such as
`priorityClassName: "x\\n      hostNetwork: true"`, stays one string. The values that are
Kubernetes names (and the image pieces and paths) also have a pattern in values.schema.json, so
helm refuses such a value before it renders anything.

Both layers are checked on their own: the templates with helm's schema check off
(`--skip-schema-validation`, as a copy of a chart without its schema would render), the schemas
with it on.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
import yaml

from ._chart import CHARTS, Chart, Doc, pod_specs
from .test_every_chart import EVERY_CHART

Path_ = tuple[str | int, ...]  # where a value is in the values: keys and list indices

# The field every injection tries to add, and a document it tries to append.
INJECTED_FIELD = "hostNetwork"
INJECTED_NAME = "injected"
FIXTURES = {shared.chart: shared.fixture for shared in EVERY_CHART}  # chart -> conftest fixture

# Values over each chart's values.yaml that render every template and every optional field
# (so each value reaches the YAML), each valid for the schema.
EVERYTHING: dict[str, dict[str, Any]] = {
    "jobset": {
        "imagePullSecrets": [{"name": "regcred"}],
        "featureGates": {"TLSOptions": True},
        "metrics": {"enabled": True, "serviceAnnotations": {"a": "b"}},
        "extraEnv": [{"name": "MODE", "value": "x"}],
        "serviceAccount": {"annotations": {"a": "b"}},
        "podAnnotations": {"a": "b"},
        "podLabels": {"team": "ml"},
        "priorityClassName": "high",
        "nodeSelector": {"pool": "system"},
        "tolerations": [{"key": "k", "operator": "Exists"}],
    },
    "trainer": {
        "imagePullSecrets": [{"name": "regcred"}],
        "featureGates": {"TrainJobStatus": True},
        "metrics": {"enabled": True, "serviceAnnotations": {"a": "b"}},
        "extraEnv": [{"name": "MODE", "value": "x"}],
        "serviceAccount": {"annotations": {"a": "b"}},
        "podAnnotations": {"a": "b"},
        "podLabels": {"team": "ml"},
        "priorityClassName": "high",
        "nodeSelector": {"pool": "system"},
        "tolerations": [{"key": "k", "operator": "Exists"}],
    },
    "kueue": {
        "imagePullSecrets": [{"name": "regcred"}],
        "featureGates": {"PartialAdmission": True},
        "metrics": {"enabled": True, "serviceAnnotations": {"a": "b"}},
        "extraEnv": [{"name": "MODE", "value": "x"}],
        "serviceAccount": {"annotations": {"a": "b"}},
        "podAnnotations": {"a": "b"},
        "podLabels": {"team": "ml"},
        "priorityClassName": "high",
        "nodeSelector": {"pool": "system"},
        "tolerations": [{"key": "k", "operator": "Exists"}],
    },
    "kube-batch": {
        "replicas": 2,
        "leaderElect": True,
        "imagePullSecrets": [{"name": "regcred"}],
        "extraArgs": ["--v=4"],
        "nodeSelector": {"pool": "system"},
        "tolerations": [{"key": "k", "operator": "Exists"}],
        "serviceAccount": {"create": True, "name": "batch"},
    },
    "nvidia-device-plugin": {
        "imagePullSecrets": [{"name": "regcred"}],
        "runtimeClass": {"create": True},
        "runtimeClassName": "nvidia",
        "config": {"deviceListStrategy": "cdi-cri"},
        "sharing": {"mps": {"enabled": True}},
        "tolerations": [{"key": "k", "operator": "Exists"}],
    },
    "tfjob": {
        "imagePullSecrets": [{"name": "regcred"}],
        "args": ["--steps=10"],
        "env": [{"name": "MODE", "value": "train"}],
        "chief": {"replicas": 1, "gpus": 1},
        "worker": {"gpus": 1},
        "evaluator": {"replicas": 1},
        "gpu": {"runtimeClassName": "nvidia"},
        "gang": {"enabled": True, "queue": "research", "priorityClass": "high"},
        "storage": {"enabled": True, "storageClass": "standard"},
        "tensorboard": {"enabled": True, "logDir": "/tmp/tensorflow/logs"},
        "serviceAccount": {"create": True, "name": "trainer", "annotations": {"a": "b"}},
        "podLabels": {"team": "ml"},
        "podAnnotations": {"note": "x"},
        "priorityClassName": "high",
        "nodeSelector": {"pool": "gpu"},
    },
    "training-operator": {
        "imagePullSecrets": [{"name": "regcred"}],
        "gangScheduler": "volcano",
        "watchNamespace": "training",
        "extraArgs": ["--zap-log-level=info"],
        "extraEnv": [{"name": "MODE", "value": "x"}],
        "webhook": {"namespaceSelector": {"matchLabels": {"a": "b"}}},
        "metrics": {"serviceAnnotations": {"a": "b"}},
        "serviceAccount": {"annotations": {"a": "b"}},
        "podAnnotations": {"a": "b"},
        "podLabels": {"team": "ml"},
        "priorityClassName": "high",
        "nodeSelector": {"pool": "system"},
    },
    "volcano": {
        "imagePullSecrets": [{"name": "regcred"}],
        "admission": {
            "excludedNamespaces": ["batch"],
            "enabledAdmissions": ["/jobs/mutate", "/jobs/validate", "/podgroups/mutate"],
        },
        "scheduler": {"extraArgs": ["--percentage-nodes-to-find=50"]},
        "queues": [
            {"name": "default", "weight": 1, "reclaimable": True},
            {"name": "research", "weight": 2, "parent": "default"},
        ],
    },
}

# Values that must move together for the chart's own checks to pass (the default queue is one
# of the queues; a parent queue is listed): set together, both get the injection.
TOGETHER: dict[str, list[tuple[Path_, Path_]]] = {
    "kube-batch": [(("defaultQueue",), ("queues", 0, "name"))],
    "nvidia-device-plugin": [(("runtimeClassName",), ("runtimeClass", "name"))],
    "volcano": [(("queues", 1, "parent"), ("queues", 0, "name"))],
}

# Values the chart refuses itself (a `fail` or a template error, never broken YAML) when they
# carry the injection, though the schema check is off: each is read by a check first.
REFUSED: dict[str, set[Path_]] = {
    "jobset": {("metrics", "enabled")},  # not a boolean: the Configuration cannot choose
    "trainer": {("metrics", "enabled")},  # not a boolean: the Configuration cannot choose
    "kueue": {("metrics", "enabled")},  # not a boolean: the Configuration cannot choose
    "kube-batch": {("schedulerConfig", "tiers", 0, "plugins", 1, "name")},  # no `gang` plugin left
    "nvidia-device-plugin": {
        ("config", "migStrategy"),  # MPS needs migStrategy none
        ("sharing", "timeSlicing", "enabled"),  # read as true: two sharing modes
        ("sharing", "mps", "resources", 0, "replicas"),  # read as 0
    },
    "tfjob": {("name",)},  # not a DNS-1035 label
    "training-operator": {("operatorVersion",)},  # not a version
    "volcano": {
        ("admission", "enabledAdmissions", 1),  # /jobs/mutate left without /jobs/validate
        ("admission", "certValidityDays"),  # read as 0 days
        ("scheduler", "config", "tiers", 0, "plugins", 1, "name"),  # no `gang` plugin left
        ("scheduler", "config", "tiers", 1, "plugins", 3, "name"),  # no `proportion` for enqueue
    },
}
# Values rendered with another value set: volcano's scheduler, controllers and queues with the
# admission webhook off (the certificate it makes is most of a render's time; it reads none of
# them).
ALONGSIDE: dict[str, list[tuple[str, Path_, Any]]] = {
    "volcano": [
        (component, ("admission", "enabled"), False)
        for component in ("scheduler", "controllers", "queues")
    ],
}


def merged(base: Any, over: Any) -> Any:
    """`over` merged into `base` as helm merges values: maps key by key, anything else replaced."""
    if isinstance(base, dict) and isinstance(over, dict):
        return {key: merged(base.get(key), over.get(key, base.get(key))) for key in base | over}
    return copy.deepcopy(over)


def everything(chart: str) -> dict[str, Any]:
    defaults = yaml.safe_load((CHARTS / chart / "values.yaml").read_text(encoding="utf-8"))
    values: dict[str, Any] = merged(defaults, EVERYTHING[chart])
    return values


def scalars(node: Any, where: Path_ = ()) -> Iterator[tuple[Path_, Any]]:
    """Every scalar of the values (strings, numbers, booleans, nulls), with where it is."""
    if isinstance(node, dict):
        for key, value in node.items():
            yield from scalars(value, (*where, key))
    elif isinstance(node, list):
        for index, value in enumerate(node):
            yield from scalars(value, (*where, index))
    else:
        yield where, node


def put(values: dict[str, Any], where: Path_, value: Any) -> None:
    node: Any = values
    for step in where[:-1]:
        node = node[step]
    node[where[-1]] = value


def injection(value: Any) -> str:
    """The value, then a field and a document of its own on the following lines."""
    text = json.dumps(value) if isinstance(value, bool) or value is None else str(value)
    return (
        f"{text}\n{INJECTED_FIELD}: true\n---\napiVersion: v1\nkind: Pod\n"
        f"metadata:\n  name: {INJECTED_NAME}"
    )


def keys(node: Any) -> Iterator[str]:
    """Every mapping key in a document, at any depth."""
    if isinstance(node, dict):
        for key, value in node.items():
            yield str(key)
            yield from keys(value)
    elif isinstance(node, list):
        for value in node:
            yield from keys(value)


def render(
    chart: Chart, values: dict[str, Any], path: Path, *extra: str
) -> tuple[list[Doc] | None, str]:
    """(the documents, "") when the chart renders these values (written to `path`), else (None,
    helm's error)."""
    path.write_text(json.dumps(values), encoding="utf-8")
    result = chart.template("-f", str(path), *extra)
    if result.returncode != 0:
        return None, result.stderr
    return [doc for doc in yaml.safe_load_all(result.stdout) if doc], ""


def broken_yaml(error: str) -> bool:
    """helm's error for a template whose output is not the YAML the template meant."""
    return "YAML parse error" in error or "error converting YAML" in error


def injected(docs: list[Doc]) -> list[str]:
    return [
        f"{doc['kind']}/{doc['metadata']['name']}"
        for doc in docs
        if INJECTED_FIELD in set(keys(doc)) or doc["metadata"].get("name") == INJECTED_NAME
    ]


def chart_of(request: pytest.FixtureRequest, name: str) -> Chart:
    chart: Chart = request.getfixturevalue(FIXTURES[name])
    return chart


@pytest.mark.parametrize("name", sorted(FIXTURES))
def test_everything_renders_and_meets_the_schema(
    request: pytest.FixtureRequest, name: str, tmp_path: Path
) -> None:
    """The values the sweep below starts from render with the schema check on."""
    docs, error = render(chart_of(request, name), everything(name), tmp_path / "values.json")
    assert docs is not None, error
    assert not injected(docs)


@pytest.mark.parametrize("name", sorted(FIXTURES))
def test_no_value_can_add_a_field_or_a_document(
    request: pytest.FixtureRequest, name: str, tmp_path: Path
) -> None:
    """Each value of the chart in turn (every scalar of values.yaml and of `EVERYTHING`), set to
    itself followed by `hostNetwork: true` and a second document on the lines after, with the
    schema check off: the chart renders it as one string (no object gains the field, no
    document is added, the YAML never breaks), or refuses it with its own check (`REFUSED`)."""
    chart = chart_of(request, name)
    base = everything(name)
    together = dict(TOGETHER.get(name, [])) | {b: a for a, b in TOGETHER.get(name, [])}

    def outcome(index: int, case: tuple[Path_, Any]) -> tuple[Path_, list[Doc] | None, str]:
        where, value = case
        values = copy.deepcopy(base)
        for under, other, setting in ALONGSIDE.get(name, []):
            if where[0] == under:
                put(values, other, setting)
        put(values, where, injection(value))
        if where in together:
            put(values, together[where], injection(value))
        path = tmp_path / f"{index}.json"
        return (where, *render(chart, values, path, "--skip-schema-validation"))

    with ThreadPoolExecutor(max_workers=4) as pool:
        cases = list(scalars(base))
        results = list(pool.map(outcome, range(len(cases)), cases))
    problems, refused = [], set()
    for where, docs, error in results:
        if docs is None:
            if broken_yaml(error):
                problems.append(f"{where}: broke the YAML: {error.strip()[:300]}")
            refused.add(where)
        elif injected(docs):
            problems.append(f"{where}: injected into {injected(docs)}")
    assert not problems, "\n".join(problems)
    assert refused == REFUSED[name]


# The headline case, value by value: a name written where the pod spec's fields are, indented
# to be one of them (the indentation of the template line plus any nindent of its helper).
POD_FIELDS: list[tuple[str, Path_, int, dict[str, Any]]] = [
    ("kube-batch", ("priorityClassName",), 6, {}),
    ("kube-batch", ("serviceAccount", "name"), 6, {}),
    ("nvidia-device-plugin", ("priorityClassName",), 6, {}),
    ("nvidia-device-plugin", ("runtimeClassName",), 6, {}),
    ("nvidia-device-plugin", ("runtimeClass", "name"), 2, {"runtimeClass": {"create": True}}),
    ("tfjob", ("priorityClassName",), 4, {}),
    ("tfjob", ("serviceAccount", "name"), 4, {}),
    ("tfjob", ("gpu", "runtimeClassName"), 4, {"worker": {"gpus": 1}}),
    ("tfjob", ("gang", "schedulerName"), 4, {"gang": {"enabled": True}}),
    ("training-operator", ("priorityClassName",), 6, {}),
    ("training-operator", ("serviceAccount", "name"), 6, {}),
    ("volcano", ("scheduler", "priorityClassName"), 6, {}),
    ("volcano", ("controllers", "priorityClassName"), 6, {}),
    ("volcano", ("admission", "priorityClassName"), 6, {}),
    ("volcano", ("admission", "serviceAccount", "name"), 6, {}),
]


def pointer(where: Path_) -> str:
    """The JSON pointer helm's schema errors name a value by."""
    return "/" + "/".join(str(step) for step in where)


@pytest.mark.parametrize(
    ("name", "where", "indent", "extra"),
    POD_FIELDS,
    ids=[f"{name}-{'.'.join(map(str, where))}" for name, where, _, _ in POD_FIELDS],
)
def test_a_name_cannot_add_a_pod_field(
    request: pytest.FixtureRequest,
    name: str,
    where: Path_,
    indent: int,
    extra: dict[str, Any],
    tmp_path: Path,
) -> None:
    chart = chart_of(request, name)
    values = merged(yaml.safe_load((CHARTS / name / "values.yaml").read_text()), extra)
    value = f"x\n{' ' * indent}{INJECTED_FIELD}: true"
    put(values, where, value)
    path = tmp_path / "values.json"
    docs, error = render(chart, values, path, "--skip-schema-validation")
    assert docs is not None, error
    specs = list(pod_specs(docs))
    assert specs
    for at, spec in specs:
        assert INJECTED_FIELD not in spec, at
    rendered = {json.dumps(doc) for doc in docs}
    assert any(json.dumps(value) in text for text in rendered), "the value is kept, as one string"
    # with its schema, the chart refuses the value before rendering
    docs, error = render(chart, values, path)
    assert docs is None
    assert "values don't meet the specifications of the schema" in error, error
    assert f"at '{pointer(where)}'" in error, error


# The values that are Kubernetes names, image pieces or paths: each has a schema pattern.
PATTERNED: dict[str, list[Path_]] = {
    "kube-batch": [
        ("nameOverride",),
        ("fullnameOverride",),
        ("image", "repository"),
        ("image", "tag"),
        ("image", "digest"),
        ("imagePullSecrets", 0, "name"),
        ("schedulerName",),
        ("defaultQueue",),
        ("queues", 0, "name"),
        ("priorityClassName",),
        ("serviceAccount", "name"),
    ],
    "nvidia-device-plugin": [
        ("nameOverride",),
        ("fullnameOverride",),
        ("image", "repository"),
        ("image", "tag"),
        ("image", "digest"),
        ("imagePullSecrets", 0, "name"),
        ("gpuNodeLabels", 0),
        ("priorityClassName",),
        ("runtimeClassName",),
        ("runtimeClass", "name"),
        ("runtimeClass", "handler"),
        ("sharing", "mps", "root"),
        ("test", "resourceName"),
    ],
    "tfjob": [
        ("nameOverride",),
        ("fullnameOverride",),
        ("image", "repository"),
        ("image", "tag"),
        ("image", "digest"),
        ("imagePullSecrets", 0, "name"),
        ("gpu", "runtimeClassName"),
        ("gang", "schedulerName"),
        ("gang", "queue"),
        ("gang", "priorityClass"),
        ("storage", "existingClaim"),
        ("storage", "storageClass"),
        ("storage", "mountPath"),
        ("tensorboard", "image", "repository"),
        ("tensorboard", "image", "tag"),
        ("tensorboard", "image", "digest"),
        ("tensorboard", "logDir"),
        ("serviceAccount", "name"),
        ("tmpSizeLimit",),
        ("priorityClassName",),
    ],
    "training-operator": [
        ("nameOverride",),
        ("fullnameOverride",),
        ("image", "repository"),
        ("image", "tag"),
        ("image", "digest"),
        ("imagePullSecrets", 0, "name"),
        ("gangScheduler",),
        ("watchNamespace",),
        ("serviceAccount", "name"),
        ("priorityClassName",),
    ],
    "volcano": [
        ("nameOverride",),
        ("fullnameOverride",),
        ("image", "registry"),
        ("image", "tag"),
        ("imagePullSecrets", 0, "name"),
        ("schedulerName",),
        *(
            (component, *field)
            for component in ("scheduler", "controllers", "admission")
            for field in (
                ("image", "repository"),
                ("image", "tag"),
                ("image", "digest"),
                ("priorityClassName",),
                ("serviceAccount", "name"),
            )
        ),
        ("admission", "excludedNamespaces", 0),
        ("queues", 0, "name"),
        ("queues", 1, "parent"),
    ],
}
PATTERNED_CASES = [(name, where) for name, paths in PATTERNED.items() for where in paths]


@pytest.mark.parametrize(
    ("name", "where"),
    PATTERNED_CASES,
    ids=[f"{name}-{'.'.join(map(str, where))}" for name, where in PATTERNED_CASES],
)
def test_the_schema_refuses_an_injected_name(
    request: pytest.FixtureRequest, name: str, where: Path_, tmp_path: Path
) -> None:
    """`helm template` and `helm lint` refuse the value with a schema error that names it."""
    chart = chart_of(request, name)
    values = everything(name)
    original: Any = values
    for step in where:
        original = original[step]
    put(values, where, injection(original or "x"))
    path = tmp_path / "values.json"
    docs, error = render(chart, values, path)
    assert docs is None
    assert "values don't meet the specifications of the schema" in error, error
    assert f"at '{pointer(where)}'" in error, error
    lint = chart.lint("-f", str(path))
    assert lint.returncode != 0
    assert f"at '{pointer(where)}'" in lint.stdout + lint.stderr


@pytest.mark.parametrize(
    ("name", "where", "value"),
    [
        ("kube-batch", ("priorityClassName",), "system-cluster-critical"),
        ("kube-batch", ("serviceAccount", "name"), "kube-batch.scheduler"),
        ("nvidia-device-plugin", ("runtimeClassName",), "nvidia"),
        ("nvidia-device-plugin", ("sharing", "mps", "root"), "/run/nvidia/mps two"),
        ("tfjob", ("storage", "existingClaim"), "team-a.checkpoints"),
        ("tfjob", ("image", "repository"), "localhost:5000/ml/train_job"),
        ("tfjob", ("tmpSizeLimit",), "512Mi"),
        ("tfjob", ("tmpSizeLimit",), ""),
        ("training-operator", ("image", "tag"), "v1-93c5489"),
        ("training-operator", ("nameOverride",), "op"),
        ("volcano", ("queues", 1, "parent"), "root"),
        ("volcano", ("image", "tag"), "v1.14.1_patch-1"),
    ],
)
def test_the_patterns_accept_valid_names(
    request: pytest.FixtureRequest, name: str, where: Path_, value: str, tmp_path: Path
) -> None:
    values = everything(name)
    put(values, where, value)
    docs, error = render(chart_of(request, name), values, tmp_path / "values.json")
    assert docs is not None, error
