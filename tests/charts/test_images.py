"""Air-gapped installs, proven at render time: with `tfjob_kit_image_registry` set, every image
reference that the roles' charts (and the smoke role's TFJob) render points into the mirror,
and without it every image is the upstream one.

The charts are rendered with the values the ROLES compose (`<role>_chart_values` in each
role's vars/main.yml, evaluated by `tfjob_kit.images` from the role's defaults and the
inventory's variables), not with hand-written chart values, so a role that forgets to pass the
registry to one image fails here. The local cluster (examples/demo, roles/local_cluster) runs its
components as host processes and pulls no image at all, so no cluster run could show a pull
from outside the mirror: the rendered manifests are the proof. They are searched whole:
containers, init and ephemeral containers, hooks and `helm test` pods, arguments, environment
values, annotations and configuration text.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from snippets import block
from tfjob_kit import images

from ._chart import CHARTS, ROOT, Chart, Doc, pod_specs, sets
from .test_every_chart import EVERY_CHART

MIRROR = "mirror.example.com:5000/tfjob"
PULL = [{"name": "mirror-pull"}]
MIRRORED = {"tfjob_kit_image_registry": MIRROR, "tfjob_kit_image_pull_secrets": PULL}
# Registries that public charts pull from: none may appear in a mirrored render.
PUBLIC_REGISTRIES = (
    "docker.io",
    "index.docker.io",
    "registry-1.docker.io",
    "ghcr.io",
    "nvcr.io",
    "quay.io",
    "gcr.io",
    "k8s.gcr.io",
    "registry.k8s.io",
    "mcr.microsoft.com",
    "public.ecr.aws",
)
# What each role deploys by default: the upstream images (the charts' values.yaml and the
# smoke role's default image).
UPSTREAM = {
    "training_operator": {"ghcr.io/kubeflow/training-v1/training-operator:v1-93c5489"},
    "volcano": {
        "docker.io/volcanosh/vc-scheduler:v1.14.1",
        "docker.io/volcanosh/vc-controller-manager:v1.14.1",
        "docker.io/volcanosh/vc-webhook-manager:v1.14.1",
    },
    "kube_batch": {"docker.io/kubesigs/kube-batch:v0.5"},
    "nvidia_device_plugin": {"nvcr.io/nvidia/k8s-device-plugin:v0.17.2"},
    "tfjob_smoke": {"docker.io/tensorflow/tensorflow:2.16.1"},
    "jobset": {"registry.k8s.io/jobset/jobset:v0.12.0"},
    "trainer": {"ghcr.io/kubeflow/trainer/trainer-controller-manager:v2.3.0"},
    "kueue": {"registry.k8s.io/kueue/kueue:v0.19.2"},
}
# Role variables that turn on every image a role can deploy (the webhooks are on by default).
EVERYTHING_ON: dict[str, dict[str, Any]] = {
    "training_operator": {"training_operator_webhook_enabled": True},
    "volcano": {"volcano_admission_enabled": True},
    "nvidia_device_plugin": {"nvidia_device_plugin_time_slicing_replicas": 4},
}


def rendered(helm: str, role: str, variables: dict[str, Any]) -> list[Doc]:
    """What the role deploys with these inventory variables, as the role composes it."""
    deployment = images.role_deployment(role, variables, {}, ROOT)
    assert deployment is not None, role
    return images.render(deployment, helm)


def strings(node: Any) -> Iterator[str]:
    """Every string of a document, keys included (annotations hold images in their values,
    configuration text holds them anywhere)."""
    if isinstance(node, dict):
        for key, value in node.items():
            yield str(key)
            yield from strings(value)
    elif isinstance(node, list):
        for value in node:
            yield from strings(value)
    elif isinstance(node, str):
        yield node


def outside_the_mirror(docs: list[Doc], upstream: set[str], mirror: str) -> list[str]:
    """Image references in the documents that do not point into the mirror: every container
    image (wherever it is nested) must start with the mirror, and no string anywhere may name a
    public registry or hold an upstream image's path other than under the mirror."""
    found = [
        f"{use.where}: {use.image}"
        for use in images.image_uses(docs)
        if not use.image.startswith(f"{mirror}/")
    ]
    registries = {ref.split("/", 1)[0] for ref in upstream} | set(PUBLIC_REGISTRIES)
    paths = {re.split(r"[:@]", ref.split("/", 1)[1], maxsplit=1)[0] for ref in upstream}
    for doc in docs:
        where = f"{doc.get('kind')}/{(doc.get('metadata') or {}).get('name')}"
        for text in strings(doc):
            for registry in registries:
                if re.search(rf"(?<![\w.-]){re.escape(registry)}/", text):
                    found.append(f"{where}: {registry} in {text[:200]!r}")
            for path in paths:
                for match in re.finditer(re.escape(path), text):
                    if not text[: match.start()].endswith(f"{mirror}/"):
                        found.append(f"{where}: {path} outside the mirror in {text[:200]!r}")
    return found


ROLES = sorted(UPSTREAM)


def test_every_role_that_deploys_images_is_checked() -> None:
    """A role deploys images when it composes chart values or owns a manifest; each of them
    is here, and together they install every chart but the user's tfjob chart (checked
    below with its own values)."""
    roles = [path.parent.parent.name for path in (ROOT / "roles").glob("*/vars/main.yml")]
    composing = sorted(
        role
        for role in roles
        if f"{role}_chart_values"
        in yaml.safe_load((ROOT / "roles" / role / "vars" / "main.yml").read_text())
        or role in images.MANIFEST_VARS
    )
    assert composing == ROLES
    installed = set()
    for role in ROLES:
        deployment = images.role_deployment(role, {}, {}, ROOT)
        assert deployment is not None
        if deployment.chart is not None:
            installed.add(deployment.chart.name)
    assert installed | {"tfjob"} == {p.parent.name for p in CHARTS.glob("*/Chart.yaml")}


@pytest.mark.parametrize("role", ROLES)
def test_without_a_mirror_the_images_are_upstream(helm: str, role: str) -> None:
    docs = rendered(helm, role, EVERYTHING_ON.get(role, {}))
    assert {use.image for use in images.image_uses(docs)} == UPSTREAM[role]
    for where, spec in pod_specs(docs):
        assert not spec.get("imagePullSecrets"), where


@pytest.mark.parametrize("role", ROLES)
def test_with_a_mirror_no_image_points_outside_it(helm: str, role: str) -> None:
    docs = rendered(helm, role, {**EVERYTHING_ON.get(role, {}), **MIRRORED})
    uses = images.image_uses(docs)
    assert len(uses) >= len(UPSTREAM[role])
    assert not outside_the_mirror(docs, UPSTREAM[role], MIRROR)
    # the same images, under the mirror: registry replaced, path, tag and digest kept
    expected = {f"{MIRROR}/{ref.split('/', 1)[1]}" for ref in UPSTREAM[role]}
    assert {use.image for use in uses} == expected
    # and every pod pulls with the mirror's secret
    specs = list(pod_specs(docs))
    assert specs
    for where, spec in specs:
        assert spec.get("imagePullSecrets") == PULL, where


def test_a_per_image_override_wins_over_the_mirror(helm: str) -> None:
    digest = "sha256:" + "a" * 64
    docs = rendered(
        helm,
        "volcano",
        {
            **MIRRORED,
            "volcano_admission_image": {"registry": "internal.example.com", "digest": digest},
            "volcano_scheduler_image": {"tag": "v1.14.1-patched"},
        },
    )
    assert {use.image for use in images.image_uses(docs)} == {
        f"internal.example.com/volcanosh/vc-webhook-manager@{digest}",
        f"{MIRROR}/volcanosh/vc-scheduler:v1.14.1-patched",
        f"{MIRROR}/volcanosh/vc-controller-manager:v1.14.1",
    }
    # the mirroring list copies the upstream image to where the override points
    pairs = dict(
        images.mapping(
            images.Options(
                {
                    **MIRRORED,
                    "tfjob_kit_scheduler": "volcano",
                    "volcano_admission_image": {"registry": "internal.example.com"},
                },
                gpu=False,
            ),
            helm,
        )
    )
    assert pairs["docker.io/volcanosh/vc-webhook-manager:v1.14.1"] == (
        "internal.example.com/volcanosh/vc-webhook-manager:v1.14.1"
    )
    assert pairs["docker.io/volcanosh/vc-scheduler:v1.14.1"] == (
        f"{MIRROR}/volcanosh/vc-scheduler:v1.14.1"
    )
    # a role's own registry variable wins over the group's
    docs = rendered(
        helm, "training_operator", {**MIRRORED, "training_operator_image_registry": "o.io"}
    )
    assert [use.image for use in images.image_uses(docs)] == [
        "o.io/kubeflow/training-v1/training-operator:v1-93c5489"
    ]


def test_the_smoke_image_keeps_its_path_under_the_mirror(helm: str) -> None:
    for image, expected in (
        ("tensorflow/tensorflow:2.16.1", f"{MIRROR}/tensorflow/tensorflow:2.16.1"),
        ("localhost:5000/tf/tf:1", f"{MIRROR}/tf/tf:1"),
        ("python:3.12", f"{MIRROR}/python:3.12"),
        (
            "nvcr.io/nvidia/tensorflow@sha256:" + "b" * 64,
            f"{MIRROR}/nvidia/tensorflow@sha256:" + "b" * 64,
        ),
    ):
        docs = rendered(helm, "tfjob_smoke", {**MIRRORED, "tfjob_smoke_image": image})
        assert [use.image for use in images.image_uses(docs)] == [expected]


def test_the_tfjob_chart_takes_a_mirror_for_both_its_images(tfjob: Chart) -> None:
    """No role installs the tfjob chart (it is the user's job template); its two images take
    a registry each."""
    values = sets(
        "tensorboard.enabled=true",
        "storage.enabled=true",
        f"image.registry={MIRROR}",
        f"tensorboard.image.registry={MIRROR}",
        "json:imagePullSecrets=" + json.dumps(PULL),
    )
    upstream = {"volcanosh/dist-mnist-tf-example:0.0.1", "tensorflow/tensorflow:2.15.0"}
    docs = tfjob.render(*values)
    assert not outside_the_mirror(docs, {f"docker.io/{ref}" for ref in upstream}, MIRROR)
    assert {use.image for use in images.image_uses(docs)} == {f"{MIRROR}/{ref}" for ref in upstream}
    plain = tfjob.render(*sets("tensorboard.enabled=true", "storage.enabled=true"))
    assert {use.image for use in images.image_uses(plain)} == upstream


def test_an_image_left_out_is_found() -> None:
    """The check above finds an image a chart would not rewrite, wherever it hides."""
    doc: Doc = {
        "kind": "Deployment",
        "metadata": {"name": "x", "annotations": {"sidecar": "docker.io/library/busybox:1"}},
        "spec": {
            "template": {
                "spec": {
                    "initContainers": [{"name": "i", "image": "busybox:1"}],
                    "containers": [
                        {
                            "name": "c",
                            "image": f"{MIRROR}/a/b:1",
                            "args": ["--helper-image=ghcr.io/a/helper:2"],
                        }
                    ],
                }
            }
        },
    }
    found = outside_the_mirror([doc], {"docker.io/a/b:1"}, MIRROR)
    assert any("busybox:1" in f for f in found)
    assert any("ghcr.io/a/helper:2" in f for f in found)
    assert any("sidecar" in f or "docker.io in" in f for f in found)
    assert {u.image for u in images.image_uses([doc])} == {
        "busybox:1",
        f"{MIRROR}/a/b:1",
        "ghcr.io/a/helper:2",
        "docker.io/library/busybox:1",
    }


# --------------------------------------------------------------------------- the command


def tfjob_kit_images(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "tfjob_kit.cli", "images", *args],
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )


def test_the_command_lists_what_site_yml_deploys(helm: str) -> None:
    full = tfjob_kit_images("--helm", helm)
    assert full.returncode == 0, full.stderr
    assert full.stdout.split() == sorted(
        UPSTREAM["training_operator"]
        | UPSTREAM["volcano"]
        | UPSTREAM["nvidia_device_plugin"]
        | UPSTREAM["tfjob_smoke"]
    )
    bare = tfjob_kit_images("--helm", helm, "--scheduler", "none", "--no-gpu", "--no-smoke-test")
    assert bare.stdout.split() == sorted(UPSTREAM["training_operator"]), bare.stderr
    mapped = tfjob_kit_images("--helm", helm, "--registry", MIRROR, "-o", "mapping")
    assert mapped.returncode == 0, mapped.stderr
    pairs = [line.split("=") for line in mapped.stdout.splitlines()]
    assert {source for source, _ in pairs} == set(full.stdout.split())
    assert all(target == f"{MIRROR}/{source.split('/', 1)[1]}" for source, target in pairs)
    listed = json.loads(tfjob_kit_images("--helm", helm, "--registry", MIRROR, "-o", "json").stdout)
    assert sorted((e["source"], e["image"]) for e in listed) == sorted(map(tuple, pairs))
    assert all(entry["uses"] for entry in listed)


def readme_block(test: str) -> str:
    return block(f"test tests/charts/test_images.py::{test}")


def test_readme_mirror_script(helm: str, tmp_path: Path) -> None:
    """The README's mirroring script, run as written with `skopeo` stubbed: it copies every
    image site.yml deploys from its upstream reference to the mirror's."""
    stubs = tmp_path / "stubs"
    stubs.mkdir()
    log = tmp_path / "copied"
    skopeo = stubs / "skopeo"
    skopeo.write_text(f'#!/bin/sh\necho "$*" >> {log}\n')
    skopeo.chmod(0o755)
    env = {
        **os.environ,
        "PATH": os.pathsep.join([str(stubs), str(Path(sys.executable).parent), os.environ["PATH"]]),
    }
    proc = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", readme_block("test_readme_mirror_script")],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    copies = log.read_text().splitlines()
    # The other schedulers' (tfjob_kit_scheduler chooses one) are not there.
    upstream = set().union(*(UPSTREAM[r] for r in ROLES if r not in ("kube_batch", "kueue")))
    assert {line.split()[-2].removeprefix("docker://") for line in copies} == upstream
    for line in copies:
        assert line.split()[-1].startswith("docker://mirror.example.com:5000/"), line


def test_readme_group_vars(helm: str) -> None:
    """The README's group_vars for a mirror send every role's images to the mirror."""
    variables = yaml.safe_load(readme_block("test_readme_group_vars"))
    registry = variables["tfjob_kit_image_registry"]
    for role in ROLES:
        docs = rendered(helm, role, {**EVERYTHING_ON.get(role, {}), **variables})
        assert not outside_the_mirror(docs, UPSTREAM[role], registry), role


# --------------------------------------------------------------------------- digests
# Every image of every chart can be pinned by digest (security finding 20). The digests here are
# made up: they name no real image.

FAKE_DIGESTS = ["sha256:" + c * 64 for c in "abcdef"]
# Each chart's image settings (a mapping with a repository in values.yaml), with the reference
# the chart renders from it without its tag, and the values that turn on every image.
CHART_IMAGES: dict[str, dict[tuple[str, ...], str]] = {
    "jobset": {("image",): "registry.k8s.io/jobset/jobset"},
    "trainer": {("image",): "ghcr.io/kubeflow/trainer/trainer-controller-manager"},
    "kueue": {("image",): "registry.k8s.io/kueue/kueue"},
    "kube-batch": {("image",): "docker.io/kubesigs/kube-batch"},
    "nvidia-device-plugin": {("image",): "nvcr.io/nvidia/k8s-device-plugin"},
    "tfjob": {
        ("image",): "volcanosh/dist-mnist-tf-example",
        ("tensorboard", "image"): "tensorflow/tensorflow",
    },
    "training-operator": {("image",): "ghcr.io/kubeflow/training-v1/training-operator"},
    "volcano": {
        ("scheduler", "image"): "docker.io/volcanosh/vc-scheduler",
        ("controllers", "image"): "docker.io/volcanosh/vc-controller-manager",
        ("admission", "image"): "docker.io/volcanosh/vc-webhook-manager",
    },
}
EVERY_IMAGE_ON: dict[str, tuple[str, ...]] = {
    "tfjob": ("tensorboard.enabled=true", "storage.enabled=true"),
    "nvidia-device-plugin": ("test.enabled=true",),
}
CHART_FIXTURES = {shared.chart: shared.fixture for shared in EVERY_CHART}


def image_settings(node: Any, where: tuple[str, ...] = ()) -> Iterator[tuple[str, ...]]:
    """Where values.yaml holds an image setting: a mapping with a `repository`."""
    if isinstance(node, dict):
        if "repository" in node:
            yield where
        for key, value in node.items():
            yield from image_settings(value, (*where, key))


def test_every_image_setting_has_a_digest() -> None:
    """Each chart's image settings are the ones CHART_IMAGES lists, each with a `digest` value
    (empty by default) that its schema holds to sha256:<64 hex digits>."""
    assert set(CHART_IMAGES) == {path.parent.name for path in CHARTS.glob("*/Chart.yaml")}
    for chart, expected in CHART_IMAGES.items():
        values = yaml.safe_load((CHARTS / chart / "values.yaml").read_text(encoding="utf-8"))
        schema = json.loads((CHARTS / chart / "values.schema.json").read_text(encoding="utf-8"))
        assert set(image_settings(values)) == set(expected), chart
        for where in expected:
            setting = values
            for key in where:
                setting = setting[key]
            assert setting["digest"] == "", (chart, where)
            node = schema["properties"]
            for key in where:
                node = node[key]
                if "$ref" in node:
                    node = schema["definitions"][node["$ref"].rsplit("/", 1)[1]]
                node = node["properties"]
            assert node["digest"]["pattern"] == "^(|sha256:[a-f0-9]{64})$", (chart, where)


@pytest.mark.parametrize("chart", sorted(CHART_IMAGES))
def test_a_digest_pins_every_image_of_the_chart(request: pytest.FixtureRequest, chart: str) -> None:
    """With a digest (and a tag) given to each image setting, every image the chart renders,
    `helm test` pods and hooks included, is <repository>@<that digest>: the digest wins over the
    tag. Each image is also pinned alone, leaving the others on their tags."""
    helm_chart: Chart = request.getfixturevalue(CHART_FIXTURES[chart])
    settings = list(CHART_IMAGES[chart].items())
    on = EVERY_IMAGE_ON.get(chart, ())
    values = [
        f"{'.'.join(where)}.{key}={value}"
        for (where, _), digest in zip(settings, FAKE_DIGESTS, strict=False)
        for key, value in (("tag", "not-this-tag"), ("digest", digest))
    ]
    docs = helm_chart.render(*sets(*on, *values))
    uses = images.image_uses(docs)
    expected = {
        f"{repository}@{digest}"
        for (_, repository), digest in zip(settings, FAKE_DIGESTS, strict=False)
    }
    assert {use.image for use in uses} == expected
    assert len(uses) >= len(expected)
    if chart == "nvidia-device-plugin":  # the privileged DaemonSet and its `helm test` pod
        assert {use.where.split()[0] for use in uses} == {
            "DaemonSet/rel-nvidia-device-plugin",
            "Pod/rel-nvidia-device-plugin-gpu-test",
        }
    for index, (where, repository) in enumerate(settings):
        digest = FAKE_DIGESTS[index]
        alone = helm_chart.render(*sets(*on, f"{'.'.join(where)}.digest={digest}"))
        found = {use.image for use in images.image_uses(alone)}
        assert f"{repository}@{digest}" in found
        assert all("@" not in image for image in found - {f"{repository}@{digest}"})


@pytest.mark.parametrize(
    "digest",
    [
        "sha256:abc",
        "sha256:" + "A" * 64,
        "sha512:" + "a" * 128,
        "a" * 64,
        "sha256:" + "a" * 64 + "\n  hostNetwork: true",
        "sha256:" + "g" * 64,
    ],
    ids=["short", "upper-case", "sha512", "no-algorithm", "newline", "not-hex"],
)
def test_the_schemas_refuse_a_malformed_digest(request: pytest.FixtureRequest, digest: str) -> None:
    for chart, settings in CHART_IMAGES.items():
        helm_chart: Chart = request.getfixturevalue(CHART_FIXTURES[chart])
        for where in settings:
            error = helm_chart.render_error(
                *sets(f"json:{'.'.join(where)}.digest={json.dumps(digest)}")
            )
            assert "values don't meet the specifications of the schema" in error, (chart, error)
            assert f"at '/{'/'.join(where)}/digest'" in error, (chart, error)


# The role variables that override one image each, with the image's upstream repository.
ROLE_IMAGE_VARS = {
    "kube_batch": {"kube_batch_image": "docker.io/kubesigs/kube-batch"},
    "nvidia_device_plugin": {"nvidia_device_plugin_image": "nvcr.io/nvidia/k8s-device-plugin"},
    "training_operator": {
        "training_operator_image": "ghcr.io/kubeflow/training-v1/training-operator"
    },
    "volcano": {
        "volcano_scheduler_image": "docker.io/volcanosh/vc-scheduler",
        "volcano_controllers_image": "docker.io/volcanosh/vc-controller-manager",
        "volcano_admission_image": "docker.io/volcanosh/vc-webhook-manager",
    },
}


@pytest.mark.parametrize("role", sorted(ROLE_IMAGE_VARS))
def test_a_digest_given_to_a_role_pins_its_images(helm: str, role: str) -> None:
    """`<role>_image: {digest: ...}` (with a tag too: the digest wins) pins the image the role
    installs, upstream and under a mirror, which keeps the digest."""
    pins = {
        variable: {"tag": "not-this-tag", "digest": digest}
        for variable, digest in zip(ROLE_IMAGE_VARS[role], FAKE_DIGESTS, strict=False)
    }
    expected = {
        f"{ROLE_IMAGE_VARS[role][variable]}@{pin['digest']}" for variable, pin in pins.items()
    }
    docs = rendered(helm, role, {**EVERYTHING_ON.get(role, {}), **pins})
    assert {use.image for use in images.image_uses(docs)} == expected
    docs = rendered(helm, role, {**EVERYTHING_ON.get(role, {}), **MIRRORED, **pins})
    assert {use.image for use in images.image_uses(docs)} == {
        f"{MIRROR}/{ref.split('/', 1)[1]}" for ref in expected
    }


def test_the_command_lists_the_digests_of_a_variables_file(helm: str, tmp_path: Path) -> None:
    """`tfjob-kit images -e vars.yml` with digests in the role variables lists every image of
    site.yml by digest, and `-o mapping` copies each digest to the same digest in the mirror."""
    variables = {
        "nvidia_device_plugin_image": {"digest": FAKE_DIGESTS[0]},
        "training_operator_image": {"digest": FAKE_DIGESTS[1]},
        "volcano_scheduler_image": {"digest": FAKE_DIGESTS[2]},
        "volcano_controllers_image": {"digest": FAKE_DIGESTS[3]},
        "volcano_admission_image": {"digest": FAKE_DIGESTS[4]},
        "tfjob_smoke_image": f"docker.io/tensorflow/tensorflow@{FAKE_DIGESTS[5]}",
    }
    path = tmp_path / "vars.yml"
    path.write_text(yaml.safe_dump(variables), encoding="utf-8")
    expected = {
        f"nvcr.io/nvidia/k8s-device-plugin@{FAKE_DIGESTS[0]}",
        f"ghcr.io/kubeflow/training-v1/training-operator@{FAKE_DIGESTS[1]}",
        f"docker.io/volcanosh/vc-scheduler@{FAKE_DIGESTS[2]}",
        f"docker.io/volcanosh/vc-controller-manager@{FAKE_DIGESTS[3]}",
        f"docker.io/volcanosh/vc-webhook-manager@{FAKE_DIGESTS[4]}",
        f"docker.io/tensorflow/tensorflow@{FAKE_DIGESTS[5]}",
    }
    listed = tfjob_kit_images("--helm", helm, "-e", str(path))
    assert listed.returncode == 0, listed.stderr
    assert set(listed.stdout.split()) == expected
    mapped = tfjob_kit_images(
        "--helm", helm, "-e", str(path), "--registry", MIRROR, "-o", "mapping"
    )
    assert mapped.returncode == 0, mapped.stderr
    pairs = dict(line.split("=") for line in mapped.stdout.splitlines())
    assert set(pairs) == expected
    for source, target in pairs.items():
        assert target == f"{MIRROR}/{source.split('/', 1)[1]}"


# The role variables each chart's README names for pinning through Ansible (none installs tfjob).
README_ROLE_VARS = {
    "kube-batch": ["kube_batch_image"],
    "jobset": [],  # no role installs it yet
    "trainer": [],  # no role installs it yet
    "kueue": ["kueue_image"],
    "nvidia-device-plugin": ["nvidia_device_plugin_image"],
    "tfjob": ["tfjob_smoke_image"],
    "training-operator": ["training_operator_image"],
    "volcano": ["volcano_scheduler_image", "volcano_controllers_image", "volcano_admission_image"],
}


@pytest.mark.parametrize("chart", sorted(CHART_IMAGES))
def test_the_readme_says_how_to_pin_every_image(
    request: pytest.FixtureRequest, chart: str, tmp_path: Path
) -> None:
    """Each chart's README has a section on pinning by digest: where a digest comes from
    (`crane digest`, `skopeo inspect`, run where the registry is reachable), values that pin
    every image the chart renders (rendered here, with made-up digests) and the role variable."""
    text = (CHARTS / chart / "README.md").read_text(encoding="utf-8")
    assert "\n## Pinning images by digest\n" in text
    section = text.split("\n## Pinning images by digest\n", 1)[1].split("\n## ", 1)[0]
    assert "crane digest" in section and "skopeo inspect" in section
    for variable in README_ROLE_VARS[chart]:
        assert f"`{variable}" in section, variable
    (block,) = re.findall(r"```yaml\n(.*?)```", section, re.S)
    digests = set(re.findall(r"sha256:[0-9a-f]{64}", block))
    assert digests and all(len(set(d.removeprefix("sha256:"))) == 1 for d in digests), "fake"
    values = tmp_path / "pins.yaml"
    values.write_text(block, encoding="utf-8")
    helm_chart: Chart = request.getfixturevalue(CHART_FIXTURES[chart])
    uses = images.image_uses(helm_chart.render("-f", str(values)))
    assert uses
    assert {use.image.partition("@")[2] for use in uses} == digests
    assert {use.image for use in uses} == {
        f"{repository}@{digest}"
        for repository, digest in zip(CHART_IMAGES[chart].values(), sorted(digests), strict=True)
    }
