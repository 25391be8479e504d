"""`tfjob-kit images`: every container image `playbooks/site.yml` would deploy, for mirroring.

Nothing here lists an image by hand. The list comes from the same sources an install uses:

1. `site.yml` says which roles run for the chosen options (its `include_role` tasks, their
   `when` and `vars`), read from the playbook itself;
2. each role's `<role>_chart_values` (roles/<role>/vars/main.yml) composes the values the role
   installs its chart with, from the role's defaults and the inventory's variables
   (`tfjob_kit_image_registry` among them); it is evaluated here with Jinja2 and the few
   Ansible filters it uses (`bool`, `combine`, `regex_replace`), without Ansible;
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
import shutil
import subprocess
import tempfile
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from itertools import chain, islice
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

from tfjob_kit.model import is_dns1123_label
from tfjob_kit.podcheck.names import is_dns1123_subdomain

if TYPE_CHECKING:  # jinja2 is imported when variables are templated, not with the CLI
    from jinja2.sandbox import ImmutableSandboxedEnvironment

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


# --------------------------------------------------------------------------- role variables


def _bool(value: Any) -> bool:
    """Ansible's `bool` filter."""
    if isinstance(value, str):
        return value.strip().lower() in ("yes", "on", "1", "true", "y", "t")
    return bool(value) if isinstance(value, (bool, int, float)) else False


def _merge(base: Mapping[str, Any], other: Mapping[str, Any], recursive: bool) -> dict[str, Any]:
    merged = dict(base)
    for key, value in other.items():
        if recursive and isinstance(value, Mapping) and isinstance(merged.get(key), Mapping):
            merged[key] = _merge(merged[key], value, recursive)
        else:
            merged[key] = value
    return merged


def _combine(*dicts: Mapping[str, Any], recursive: bool = False) -> dict[str, Any]:
    """Ansible's `combine` filter (lists replaced, as its default list_merge=replace)."""
    result: dict[str, Any] = {}
    for item in dicts:
        result = _merge(result, item, recursive)
    return result


def _regex_replace(value: Any, pattern: str = "", replacement: str = "") -> str:
    return re.sub(pattern, replacement, str(value))


def _concat(values: Iterable[Any]) -> Any:
    """A template's result as Ansible gives it: one expression's value as it is (a string stays
    a string: "1.10" is not read as the number 1.1, as Jinja's native mode would), several parts
    joined as a string. (An expression of constants alone, folded by Jinja's compiler, comes as
    its text.)"""
    values = iter(values)
    head = list(islice(values, 2))
    if not head:
        return None
    if len(head) == 1:
        return head[0]
    return "".join(str(part) for part in chain(head, values))


def _environment() -> ImmutableSandboxedEnvironment:
    """Ansible's kind of environment: sandboxed (a variable file cannot reach Python's
    internals, as Ansible refuses the same file) and native (a value keeps its type)."""
    from jinja2 import StrictUndefined
    from jinja2.nativetypes import NativeCodeGenerator, NativeTemplate
    from jinja2.sandbox import ImmutableSandboxedEnvironment

    class Environment(ImmutableSandboxedEnvironment):
        code_generator_class = NativeCodeGenerator
        concat = staticmethod(_concat)

    class Template(NativeTemplate):
        # NativeTemplate's render concatenates with its environment class's concat: ours.
        environment_class = Environment  # type: ignore[assignment]

    Environment.template_class = Template

    env = Environment(undefined=StrictUndefined)
    env.filters.update(
        {
            "bool": _bool,
            "combine": _combine,
            "regex_replace": _regex_replace,
            "ansible.builtin.bool": _bool,
            "ansible.builtin.combine": _combine,
            "ansible.builtin.regex_replace": _regex_replace,
        }
    )
    return env


class Variables:
    """Variables in layers, as Ansible stacks them (later layers win), templated when read:
    a string with `{{` is rendered with the variables it names, each resolved the same way."""

    def __init__(self, *layers: Mapping[str, Any]) -> None:
        self.raw: dict[str, Any] = {}
        for layer in layers:
            self.raw.update(layer)
        self._env = _environment()
        self._done: dict[str, Any] = {}
        self._resolving: list[str] = []

    def __contains__(self, name: str) -> bool:
        return name in self.raw

    def get(self, name: str) -> Any:
        if name in self._done:
            return self._done[name]
        if name in self._resolving:
            raise ImagesError(f"variables refer to each other: {' -> '.join(self._resolving)}")
        self._resolving.append(name)
        try:
            value = self.template(self.raw[name])
        finally:
            self._resolving.pop()
        self._done[name] = value
        return value

    def template(self, value: Any) -> Any:
        if isinstance(value, str) and ("{{" in value or "{%" in value):
            from jinja2 import meta

            tree = self._env.parse(value)
            names = {n for n in meta.find_undeclared_variables(tree) if n in self.raw}
            context = {name: self.get(name) for name in names}
            try:
                return self._env.from_string(tree).render(context)
            except Exception as exc:  # Jinja2 raises many kinds; each is a bad variable
                where = self._resolving[-1] if self._resolving else "a value"
                raise ImagesError(f"cannot evaluate {where}: {exc}") from exc
        if isinstance(value, Mapping):
            return {key: self.template(item) for key, item in value.items()}
        if isinstance(value, list):
            return [self.template(item) for item in value]
        return value

    def test(self, expression: str) -> bool:
        """A `when:` condition (a bare expression)."""
        return _bool(self.template("{{ (" + expression + ") | bool }}"))


def read_variables(path: Path) -> dict[str, Any]:
    """The variables of a YAML file given with `-e` (group_vars style)."""
    if not path.is_file():
        raise ImagesError(f"{path}: no such variables file")
    try:
        return _load_yaml(path)
    except (OSError, yaml.YAMLError) as exc:
        raise ImagesError(f"{path}: {exc}") from exc


def _load_yaml(path: Path) -> dict[str, Any]:
    if not path.is_file():
        return {}
    data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    if not isinstance(data, dict):
        raise ImagesError(f"{path}: not a mapping of variables")
    return data


# --------------------------------------------------------------------------- what site.yml runs


@dataclass(frozen=True)
class Options:
    """What decides the images: the inventory's variables (group_vars), as site.yml reads them,
    and whether the cluster has GPU nodes (site.yml installs the device plugin only then)."""

    variables: dict[str, Any] = field(default_factory=dict)
    gpu: bool = True


def collection_root() -> Path:
    """The collection (roles/, playbooks/, charts/): the checkout, or the installed wheel's."""
    from tfjob_kit.cluster.chart_rbac import charts_dir
    from tfjob_kit.cluster.paths import ClusterError

    try:
        return charts_dir().parent
    except ClusterError as exc:
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
    facts: dict[str, Any] = {"tfjob_kit_gpu_nodes": {"resources": [{}] if options.gpu else []}}
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
        _load_yaml(folder / "defaults" / "main.yml"),
        variables,
        _load_yaml(folder / "vars" / "main.yml"),
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


# --------------------------------------------------------------------------- rendering


def default_helm() -> str:
    """The helm `make cluster-build` built, else the one on PATH."""
    from tfjob_kit.cluster import build
    from tfjob_kit.cluster.paths import ClusterError

    try:
        return str(build.helm_path())
    except ClusterError:
        found = shutil.which("helm")
        if found is None:
            raise ImagesError("no helm: run `tfjob-kit cluster build`, or pass --helm") from None
        return found


def default_kube_version() -> str:
    from tfjob_kit.cluster.paths import load_versions

    return load_versions().kubernetes


def chart_kube_version(chart: Path, kube_version: str | None) -> str:
    """The Kubernetes version a chart renders for: the one given, else the pinned one, or, for
    a chart that runs only below some line (kube-batch: kubeVersion "<1.22.0-0"), the line
    before it. The images do not depend on it; the chart's kubeVersion check does."""
    if kube_version:
        return kube_version
    pinned = default_kube_version().lstrip("v")
    meta = _load_yaml(chart / "Chart.yaml")
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
