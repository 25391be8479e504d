"""Rules on each replica's containers: the tensorflow container, images, TF_CONFIG, container
names and environment variables.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from tfjob_kit import explain, model
from tfjob_kit.findings import Severity
from tfjob_kit.model import Replica
from tfjob_kit.rules.registry import rule


@rule("containers-missing", Severity.ERROR, "Every replica template needs containers.")
def _containers_missing(job: dict[str, Any], reps: list[Replica]) -> Iterator[tuple[str, str]]:
    for replica in reps:
        if not replica.containers:
            # Where the operator's webhook and the API server say it: the containers field.
            where = replica.path + (".template.spec.containers" if replica.template else "")
            yield where, f"{replica.key} has no containers: add a container named 'tensorflow'"


@rule(
    "tensorflow-container-missing",
    Severity.ERROR,
    "Every replica needs a container named 'tensorflow' (TF_CONFIG goes there).",
)
def _tensorflow_missing(job: dict[str, Any], reps: list[Replica]) -> Iterator[tuple[str, str]]:
    for replica in reps:
        if replica.containers and replica.tensorflow_container() is None:
            names = [c.get("name") for c in replica.containers if isinstance(c, dict)]
            yield (
                replica.path + ".template.spec.containers",
                (
                    f"no container named 'tensorflow' in {replica.key} (found {names}): the "
                    "webhook "
                    "rejects the job, and the operator injects TF_CONFIG only there; rename the "
                    "training container"
                ),
            )


@rule("image-missing", Severity.ERROR, "Every container needs an image.")
def _image_missing(job: dict[str, Any], reps: list[Replica]) -> Iterator[tuple[str, str]]:
    for replica in reps:
        for path, container in replica.all_containers:
            image = container.get("image")
            if image is None or (isinstance(image, str) and not image.strip()):
                yield path + ".image", f"container {container.get('name')!r} has no image"


_PLACEHOLDER = re.compile(
    r"[<>]|\$\{|\$\(|\{\{|your[-_]|YOUR[-_]|changeme|CHANGEME|REPLACE|<none>|TODO", re.I
)
# _PLACEHOLDER's alternatives in lower case ('<none>' is in '<'): on ASCII text a case-blind
# match is a plain search of the lower-cased text, several times faster than the case-blind
# regex. Other text takes the regex (str.lower and the regex's case folding differ beyond ASCII).
_PLACEHOLDER_PARTS = ("<", ">", "${", "$(", "{{", "your-", "your_", "changeme", "replace", "todo")


def _is_placeholder(image: str) -> bool:
    if image.isascii():
        lower = image.lower()
        for part in _PLACEHOLDER_PARTS:  # noqa: SIM110 (a loop makes no generator, as any() does)
            if part in lower:
                return True
        return False
    return _PLACEHOLDER.search(image) is not None


@rule("image-placeholder", Severity.ERROR, "The image is a placeholder left from a tutorial.")
def _image_placeholder(job: dict[str, Any], reps: list[Replica]) -> Iterator[tuple[str, str]]:
    for replica in reps:
        for path, container in replica.all_containers:
            image = container.get("image")
            if isinstance(image, str) and _is_placeholder(image):
                yield (
                    path + ".image",
                    (
                        f"image {image!r} looks like a placeholder: put the registry, repository "
                        "and tag of your training image here"
                    ),
                )


@rule("image-latest", Severity.WARNING, "Images should be pinned to a tag or digest.")
def _image_latest(job: dict[str, Any], reps: list[Replica]) -> Iterator[tuple[str, str]]:
    for replica in reps:
        for path, container in replica.all_containers:
            image = container.get("image")
            if not isinstance(image, str) or "@" in image:
                continue
            last = image.rsplit("/", 1)[-1]
            tag = last.split(":", 1)[1] if ":" in last else ""
            if tag not in ("", "latest") or not image.strip() or _is_placeholder(image):
                continue  # pinned; or image-missing's, or image-placeholder's
            yield (
                path + ".image",
                (
                    f"image {image!r} is {'untagged' if not tag else ':latest'}: replicas may "
                    "run different code after a push; pin a version tag or a digest"
                ),
            )


@rule(
    "tf-config-set",
    Severity.WARNING,
    "A hand-set TF_CONFIG in a distributed job, which the operator's own overrides.",
)
def _tf_config_set(job: dict[str, Any], reps: list[Replica]) -> Iterator[tuple[str, str]]:
    # The operator (v1.9.4 SetClusterSpec) appends its TF_CONFIG after the container's env only
    # when the job is distributed (its replicas do not add up to exactly one); the container then
    # has two, and the last one wins. A single-replica job gets none: the hand-set one is used.
    if not explain.is_distributed(reps):
        return
    for replica in reps:
        found = replica.tensorflow_container()
        if found is None:
            continue
        index, container = found
        entries = container.get("env")
        if not isinstance(entries, list):
            continue
        for env_index, env in enumerate(entries):
            if isinstance(env, dict) and env.get("name") == "TF_CONFIG":
                yield (
                    f"{replica.path}.template.spec.containers[{index}].env[{env_index}]",
                    "this TF_CONFIG is ignored: the operator appends its own (this replica's "
                    "task in the job's cluster) after the container's env, and the last one "
                    "wins; remove it (tfjob-kit explain shows the one each pod gets)",
                )


def _tf_config_sizes(
    job: dict[str, Any], reps: list[Replica], over: int
) -> tuple[int, int, int] | None:
    """explain.tf_config_sizes, when a TF_CONFIG may be over ``over`` bytes; None when a cheap
    bound says none is (most jobs have a few replicas): one address is at most the job's and
    the namespace's names plus 40 bytes (type, index, ".svc", port, quotes), the rest ~100."""
    pods = sum(r.count for r in reps)
    names = len(model.job_name(job)) + len(model.namespace(job))
    if pods * (names + 40) + 100 <= over:
        return None
    return explain.tf_config_sizes(job, replicas=reps)


@rule("tf-config-size", Severity.INFO, "A TF_CONFIG longer than 4 KiB: how big, over all pods.")
def _tf_config_size(job: dict[str, Any], reps: list[Replica]) -> Iterator[tuple[str, str]]:
    sizes = _tf_config_sizes(job, reps, explain.TF_CONFIG_INLINE)
    if sizes is None:
        return
    largest, total, pods = sizes
    if explain.TF_CONFIG_INLINE < largest <= explain.ETCD_REQUEST_BYTES:
        yield (
            "$.spec.tfReplicaSpecs",
            f"each pod's TF_CONFIG lists every address of the job: up to {largest:,} bytes per "
            f"pod, {total:,} bytes over its {pods} pods, stored with the pods in etcd "
            "(`tfjob-kit explain` shows it)",
        )


@rule(
    "tf-config-too-large",
    Severity.ERROR,
    "A pod's TF_CONFIG alone is over etcd's request limit (1.5 MiB): its pods cannot be stored.",
)
def _tf_config_too_large(job: dict[str, Any], reps: list[Replica]) -> Iterator[tuple[str, str]]:
    sizes = _tf_config_sizes(job, reps, explain.ETCD_REQUEST_BYTES)
    if sizes is None:
        return
    largest, _, pods = sizes
    if largest > explain.ETCD_REQUEST_BYTES:
        yield (
            "$.spec.tfReplicaSpecs",
            f"each pod's TF_CONFIG lists every address of the job's {pods:,} pods: up to "
            f"{largest:,} bytes per pod, over the {explain.ETCD_REQUEST_BYTES:,} bytes etcd "
            "accepts in one request (its --max-request-bytes default), so the API server "
            "cannot store the operator's pods: use fewer replicas (where etcd's limit was "
            "raised, re-level or disable this rule)",
        )


@rule("duplicate-container-name", Severity.ERROR, "Container names must be unique in a pod.")
def _duplicate_container(job: dict[str, Any], reps: list[Replica]) -> Iterator[tuple[str, str]]:
    for replica in reps:
        if len(replica.all_containers) < 2:
            continue  # no name twice
        seen: set[str] = set()
        # Containers first, as the API server checks them: an init container named like a
        # container is the duplicate. all_containers lists init containers first: when the
        # first entry is none, there is none and the order stands (the sort would keep it).
        ordered = replica.all_containers
        if ordered and ".initContainers[" in ordered[0][0]:
            ordered = sorted(ordered, key=lambda item: ".initContainers[" in item[0])
        for path, container in ordered:
            name = container.get("name")
            if isinstance(name, str):
                if name in seen:
                    yield path + ".name", f"container name {name!r} is used twice in {replica.key}"
                seen.add(name)


@rule("duplicate-env", Severity.WARNING, "An environment variable is defined twice.")
def _duplicate_env(job: dict[str, Any], reps: list[Replica]) -> Iterator[tuple[str, str]]:
    for replica in reps:
        for path, container in replica.all_containers:
            entries = container.get("env")
            if not isinstance(entries, list) or len(entries) < 2:
                continue  # nothing defined twice
            names = [e.get("name") for e in entries if isinstance(e, dict)]
            try:
                if len(set(names)) == len(names):
                    continue  # no name, of any type, twice (the loop below finds where)
            except TypeError:  # an unhashable name (the schema's finding): the loop decides
                pass
            seen: set[str] = set()
            for index, env in enumerate(entries):
                name = env.get("name") if isinstance(env, dict) else None
                if isinstance(name, str):
                    if name in seen:
                        yield (
                            f"{path}.env[{index}]",
                            (f"{name} is defined twice; only the last value takes effect"),
                        )
                    seen.add(name)
