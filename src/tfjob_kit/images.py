"""`tfjob-kit images`: every container image `playbooks/site.yml` would deploy, for mirroring.

Nothing here lists an image by hand. The list comes from the same sources an install uses:

1. `site.yml` says which roles run for the chosen options (its `include_role` tasks, their
   `when` and `vars`), read from the playbook itself;
2. each role's `<role>_chart_values` (roles/<role>/vars/main.yml) composes the values the role
   installs its chart with, from the role's defaults and the inventory's variables
   (`tfjob_kit_image_registry` among them); Ansible's own template engine evaluates it, so
   whatever filter or test a role uses means here what it means in the role;
3. `helm template` renders each chart with those values, and every image reference is read
   from the rendered manifests: containers, init and ephemeral containers of every pod
   template (Deployments, DaemonSets, Jobs, CronJobs, `helm test` hooks), and arguments,
   environment values and annotations that hold a registry-qualified reference. A role that
   applies a manifest of its own (the smoke TFJob) contributes that manifest.

Rendering once without the mirror and once with it pairs each upstream image with its mirror
reference (`-o mapping`, the `SOURCE=MIRROR` lines `oc image mirror` reads).
"""

from __future__ import annotations

import json
import re
import subprocess
import tempfile
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from tfjob_kit.ansible_vars import Variables, read_yaml_variables
from tfjob_kit.model import is_dns1123_label
from tfjob_kit.podcheck.names import is_dns1123_subdomain
from tfjob_kit.versions import VersionsError, charts_dir, load_versions

Doc = dict[str, Any]

# Roles that deploy a manifest of their own rather than a chart: the variable that holds it.
MANIFEST_VARS = {"tfjob_smoke": "tfjob_smoke_job"}
# The pod template's container lists.
CONTAINER_LISTS = ("containers", "initContainers", "ephemeralContainers")
# A registry-qualified image reference inside a string (an argument such as --image=REF, an
# environment value, an annotation): a registry host (with a "." or ":", or localhost), a path,
# and a tag or a digest.
_REF = re.compile(
    r"(?<![\w./-])((?:localhost|[a-z0-9-]+(?:\.[a-z0-9-]+)+)(?::\d+)?"
    r"(?:/[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*)+(?::[\w][\w.-]{0,127}|@sha256:[0-9a-f]{64}))"
)
DEFAULT_SCHEDULER = "volcano"


class ImagesError(Exception):
    """What stops the list: a missing helm, a chart that does not render, a bad variable."""


def read_variables(path: Path) -> dict[str, Any]:
    """The variables of a YAML file given with `-e` (group_vars style)."""
    if not path.is_file():
        raise ImagesError(f"{path}: no such variables file")
    return read_yaml_variables(path)


@dataclass(frozen=True)
class Options:
    """What decides the images: the inventory's variables (group_vars), as site.yml reads them,
    and whether the cluster has GPU nodes (site.yml installs the device plugin only then)."""

    variables: dict[str, Any] = field(default_factory=dict)
    gpu: bool = True


def collection_root() -> Path:
    """The collection (roles/, playbooks/, charts/): the checkout, or the installed wheel's."""
    try:
        return charts_dir().parent
    except VersionsError as exc:
        raise ImagesError(str(exc)) from exc


def _include(task: Mapping[str, Any]) -> str | None:
    for key in ("ansible.builtin.include_role", "include_role", "ansible.builtin.import_role"):
        if key in task:
            name = str(task[key]["name"])
            return name.removeprefix("tfjob.kit.")
    return None


def site_roles(options: Options, root: Path) -> list[tuple[str, dict[str, Any]]]:
    """The roles site.yml includes for these options, in order, each with the variables its
    include passes (`vars:`)."""
    plays = yaml.safe_load((root / "playbooks" / "site.yml").read_text(encoding="utf-8"))
    # What site.yml registers from its objects_info query for GPU nodes: one node, or none.
    gpu_nodes: list[dict[str, Any]] = [{}] if options.gpu else []
    facts: dict[str, Any] = {"tfjob_kit_gpu_nodes": {"objects": {"gpu_nodes": gpu_nodes}}}
    context = Variables(options.variables, facts)
    found: list[tuple[str, dict[str, Any]]] = []
    for play in plays:
        for task in play.get("tasks") or []:
            role = _include(task)
            if role is None:
                continue
            conditions = task.get("when", [])
            conditions = conditions if isinstance(conditions, list) else [conditions]
            if all(context.test(str(condition)) for condition in conditions):
                found.append((role, dict(task.get("vars") or {})))
    return found


@dataclass
class Deployment:
    """What one role deploys: its chart with the values the role composes (or its manifest)."""

    role: str
    chart: Path | None
    release: str
    namespace: str
    values: dict[str, Any]
    manifest: Doc | None = None


def role_deployment(
    role: str, variables: Mapping[str, Any], include: Mapping[str, Any], root: Path
) -> Deployment | None:
    """The role's chart and values (or manifest), evaluated as Ansible would: the role's
    defaults, the inventory's variables, the role's vars, the include's vars."""
    folder = root / "roles" / role
    layers = Variables(
        {"role_path": str(folder)},
        read_yaml_variables(folder / "defaults" / "main.yml"),
        variables,
        read_yaml_variables(folder / "vars" / "main.yml"),
        include,
    )
    if role in MANIFEST_VARS:
        manifest = layers.get(MANIFEST_VARS[role])
        return Deployment(role, None, "", layers.get(f"{role}_namespace"), {}, manifest)
    if f"{role}_chart_values" not in layers:
        return None  # a role that deploys no image (gpu_node, local_cluster)
    release, namespace = layers.get(f"{role}_release"), layers.get(f"{role}_namespace")
    # Helm's own rule for a release name; one like --post-renderer=... would be read as an option.
    if not (isinstance(release, str) and len(release) <= 53 and not is_dns1123_subdomain(release)):
        raise ImagesError(
            f"{role}_release: {release!r} is not a Helm release name (a DNS-1123 subdomain of "
            "at most 53 characters)"
        )
    if not (isinstance(namespace, str) and is_dns1123_label(namespace)):
        raise ImagesError(f"{role}_namespace: {namespace!r} is not a namespace name")
    return Deployment(
        role,
        Path(layers.get(f"{role}_chart")).resolve(),
        release,
        namespace,
        layers.get(f"{role}_chart_values"),
    )


def deployments(options: Options, root: Path | None = None) -> list[Deployment]:
    """What site.yml deploys for these options."""
    root = root or collection_root()
    found = []
    for role, include in site_roles(options, root):
        deployment = role_deployment(role, options.variables, include, root)
        if deployment is not None:
            found.append(deployment)
    return found


def default_kube_version() -> str:
    try:
        return load_versions().kubernetes
    except VersionsError as exc:
        raise ImagesError(str(exc)) from exc


def chart_kube_version(chart: Path, kube_version: str | None) -> str:
    """The Kubernetes version a chart renders for: the one given, else the pinned one, or, for
    a chart that runs only below some line (kube-batch: kubeVersion "<1.22.0-0"), the line
    before it. The images do not depend on it; the chart's kubeVersion check does."""
    if kube_version:
        return kube_version
    pinned = default_kube_version().lstrip("v")
    meta = yaml.safe_load((chart / "Chart.yaml").read_text(encoding="utf-8")) or {}
    below = re.fullmatch(r"\s*<\s*v?(\d+)\.(\d+)\.0(?:-0)?\s*", str(meta.get("kubeVersion", "")))
    if below:
        bound = (int(below.group(1)), int(below.group(2)))
        if tuple(int(part) for part in pinned.split(".")[:2]) >= bound:
            return f"{bound[0]}.{bound[1] - 1}.0"
    return pinned


def render(deployment: Deployment, helm: str, kube_version: str | None = None) -> list[Doc]:
    """The manifests the deployment creates: `helm template` of its chart with its values
    (hooks and `helm test` pods included), or its own manifest."""
    if deployment.manifest is not None:
        return [deployment.manifest]
    assert deployment.chart is not None
    kube_version = chart_kube_version(deployment.chart, kube_version)
    with tempfile.NamedTemporaryFile("w", suffix=".json", encoding="utf-8") as values:
        json.dump(deployment.values, values)
        values.flush()
        command = [
            helm,
            "template",
            deployment.release,
            str(deployment.chart),
            "--namespace",
            deployment.namespace,
            "--kube-version",
            kube_version,
            "--values",
            values.name,
        ]
        proc = subprocess.run(command, capture_output=True, text=True, check=False, timeout=120)
    if proc.returncode != 0:
        raise ImagesError(
            f"helm template {deployment.chart.name} (Kubernetes {kube_version}) failed: "
            f"{proc.stderr.strip()}"
        )
    return [doc for doc in yaml.safe_load_all(proc.stdout) if isinstance(doc, dict)]


@dataclass(frozen=True)
class ImageUse:
    """One image reference in a rendered object: the reference and where it stands."""

    image: str
    role: str
    where: str  # Kind/name and the path to the field


def _walk(node: Any, path: str) -> Iterator[tuple[str, Any]]:
    """(path, value) of every scalar under node."""
    if isinstance(node, dict):
        items: Iterator[tuple[str, Any]] = ((f"{path}.{k}", v) for k, v in node.items())
    elif isinstance(node, list):
        items = ((f"{path}[{i}]", v) for i, v in enumerate(node))
    else:
        yield path, node
        return
    for where, value in items:
        yield from _walk(value, where)


_CONTAINER_IMAGE = re.compile(rf"\.(?:{'|'.join(CONTAINER_LISTS)})\[\d+\]\.image$")
# Other fields that may carry an image reference: a container's arguments, command and
# environment values (a --sidecar-image=REF flag), and annotations (an injector's image).
_MAY_CARRY = re.compile(
    rf"\.(?:{'|'.join(CONTAINER_LISTS)})\[\d+\]\.(?:args\[|command\[|env\[\d+\]\.value$)"
    r"|\.metadata\.annotations\."
)


def image_uses(docs: list[Doc], role: str = "") -> list[ImageUse]:
    """Every image reference in the documents: the `image` of each container, init container
    and ephemeral container wherever it is nested (any workload, hook or job template), and
    each registry-qualified reference in their arguments, commands and environment values and
    in annotations."""
    uses = []
    for doc in docs:
        metadata = doc.get("metadata") or {}
        name = f"{doc.get('kind')}/{metadata.get('name')}"
        for path, value in _walk(doc, ""):
            if not isinstance(value, str):
                continue
            if _CONTAINER_IMAGE.search(path):
                uses.append(ImageUse(value, role, f"{name} {path[1:]}"))
            elif _MAY_CARRY.search(path):
                uses.extend(
                    ImageUse(m.group(1), role, f"{name} {path[1:]}") for m in _REF.finditer(value)
                )
    return uses


def collect(options: Options, helm: str, kube_version: str | None = None) -> list[ImageUse]:
    """Every image use of what site.yml deploys for these options."""
    uses = []
    for deployment in deployments(options):
        uses.extend(image_uses(render(deployment, helm, kube_version), deployment.role))
    return uses


def _without_registry(image: Any) -> Any:
    """An image setting ({registry, repository, tag, digest}) without its registry."""
    if isinstance(image, Mapping):
        return {key: value for key, value in image.items() if key != "registry"}
    return image


def _values_without_registries(values: Any) -> Any:
    """Chart values with the registry of every `image` setting in them removed."""
    if isinstance(values, Mapping):
        return {
            key: _without_registry(value) if key == "image" else _values_without_registries(value)
            for key, value in values.items()
        }
    return values


def without_mirror(variables: Mapping[str, Any]) -> dict[str, Any]:
    """The variables with every image registry setting removed: the upstream images. That is
    the mirror (`*_image_registry`), and a registry given to one image (`<role>_image`, or an
    `image` in `<role>_values`)."""
    upstream: dict[str, Any] = {}
    for name, value in variables.items():
        if name == "tfjob_kit_image_registry" or name.endswith("_image_registry"):
            continue
        if name.endswith("_image"):
            value = _without_registry(value)
        elif name.endswith("_values"):
            value = _values_without_registries(value)
        upstream[name] = value
    return upstream


def mapping(options: Options, helm: str, kube_version: str | None = None) -> list[tuple[str, str]]:
    """(upstream, mirror) for every image, paired by where each stands in the manifests."""
    upstream = Options(without_mirror(options.variables), options.gpu)
    sources = {(u.role, u.where): u.image for u in collect(upstream, helm, kube_version)}
    pairs = []
    for use in collect(options, helm, kube_version):
        source = sources.get((use.role, use.where))
        if source is None:
            raise ImagesError(f"{use.image} ({use.where}) has no upstream counterpart")
        pairs.append((source, use.image))
    return sorted(set(pairs))
