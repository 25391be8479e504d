"""Pod template mutations for the metadata checks (``podcheck.meta`` and the pod-specific
annotation checks of ``podcheck.pod``): what of a template's metadata reaches the operator's pods
(labels, annotations, finalizers), with the edge values that pass beside the ones that fail.

The pod's name, namespace and ownerReferences come from the operator, not the template; the
integration test checks those on pods it builds itself."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from . import Mutation, Template, all_of


def _meta(key: str, values: dict[str, Any]) -> Callable[[Template], None]:
    """Add entries to the template's ``labels`` or ``annotations``."""

    def mutate(t: Template) -> None:
        t.setdefault("metadata", {}).setdefault(key, {}).update(values)

    return mutate


def _label(key: str, value: str) -> Callable[[Template], None]:
    return _meta("labels", {key: value})


def _annotation(key: str, value: str) -> Callable[[Template], None]:
    return _meta("annotations", {key: value})


def _finalizers(*names: str) -> Callable[[Template], None]:
    def mutate(t: Template) -> None:
        t.setdefault("metadata", {})["finalizers"] = list(names)

    return mutate


def _pod_security(**fields: Any) -> Callable[[Template], None]:
    def mutate(t: Template) -> None:
        t["spec"].setdefault("securityContext", {}).update(fields)

    return mutate


def _container_security(**fields: Any) -> Callable[[Template], None]:
    def mutate(t: Template) -> None:
        t["spec"]["containers"][0].setdefault("securityContext", {}).update(fields)

    return mutate


SECCOMP_POD = "seccomp.security.alpha.kubernetes.io/pod"
SECCOMP_TF = "container.seccomp.security.alpha.kubernetes.io/tensorflow"
APPARMOR_TF = "container.apparmor.security.beta.kubernetes.io/tensorflow"
DELETION_COST = "controller.kubernetes.io/pod-deletion-cost"
# 256 KiB of annotations in all, keys and values: the most the server takes.
_BIG_KEY = "example.com/big"
_BIG_VALUE = "x" * (256 * 1024 - len(_BIG_KEY))

MUTATIONS: list[Mutation] = [
    # labels: ValidateLabels
    Mutation("ok-label with a prefixed key", _label("example.com/role", "worker")),
    Mutation("ok-label with an empty value", _label("empty", "")),
    Mutation("ok-label value of 63 characters", _label("long", "v" * 63)),
    Mutation("label value of 64 characters", _label("long", "v" * 64)),
    Mutation("label value with a space", _label("app", "x y")),
    Mutation("label value starting with a dash", _label("app", "-x")),
    Mutation("label key with two slashes", _label("a/b/c", "x")),
    Mutation("label key with an empty prefix", _label("/x", "x")),
    Mutation("label key with an empty name", _label("example.com/", "x")),
    Mutation("label key with an upper-case prefix", _label("Example.com/x", "x")),
    Mutation("label key with a prefix of 254 characters", _label("p" * 254 + "/x", "x")),
    Mutation("label key name of 64 characters", _label("k" * 64, "x")),
    Mutation("ok-label key name of 63 characters", _label("k" * 63, "x")),
    Mutation("label key starting with a dot", _label(".x", "x")),
    # annotations: ValidateAnnotations
    Mutation("ok-annotation with an upper-case key", _annotation("Example.COM/Key", "v")),
    Mutation("annotation key with a space", _annotation("a b", "v")),
    Mutation("annotation key with an empty prefix", _annotation("/x", "v")),
    Mutation("annotation key with two slashes", _annotation("a/b/c", "v")),
    Mutation("ok-annotations of 256 KiB", _annotation(_BIG_KEY, _BIG_VALUE)),
    Mutation("annotations over 256 KiB", _annotation(_BIG_KEY, _BIG_VALUE + "x")),
    # finalizers: ValidateFinalizers and validateKubeFinalizerName
    Mutation("ok-qualified finalizer", _finalizers("example.com/cleanup")),
    Mutation("ok-standard finalizer", _finalizers("kubernetes")),
    Mutation("unqualified finalizer", _finalizers("cleanup")),
    Mutation("finalizer with a bad prefix", _finalizers("Example_com/cleanup")),
    Mutation("finalizer with two slashes", _finalizers("a/b/c")),
    Mutation("orphan and foregroundDeletion", _finalizers("orphan", "foregroundDeletion")),
    # ValidatePodSpecificAnnotations: pod deletion cost
    Mutation("ok-deletion cost", _annotation(DELETION_COST, "10")),
    Mutation("ok-negative deletion cost", _annotation(DELETION_COST, "-2147483648")),
    Mutation("ok-deletion cost 0", _annotation(DELETION_COST, "0")),
    Mutation("deletion cost with a leading 0", _annotation(DELETION_COST, "01")),
    Mutation("deletion cost with a plus sign", _annotation(DELETION_COST, "+1")),
    Mutation("deletion cost over 32 bits", _annotation(DELETION_COST, "2147483648")),
    Mutation("deletion cost not a number", _annotation(DELETION_COST, "high")),
    Mutation("deletion cost empty", _annotation(DELETION_COST, "")),
    # mirror pods
    Mutation("mirror pod annotation", _annotation("kubernetes.io/config.mirror", "x")),
    # tolerations annotation
    Mutation(
        "ok-tolerations annotation",
        _annotation("scheduler.alpha.kubernetes.io/tolerations", '[{"operator": "Exists"}]'),
    ),
    Mutation(
        "tolerations annotation an object",
        _annotation("scheduler.alpha.kubernetes.io/tolerations", '{"key": "k"}'),
    ),
    Mutation(
        "tolerations annotation with a number",
        _annotation("scheduler.alpha.kubernetes.io/tolerations", "[1]"),
    ),
    Mutation(
        "tolerations annotation with a numeric key",
        _annotation("scheduler.alpha.kubernetes.io/tolerations", '[{"KEY": 1}]'),
    ),
    Mutation(
        "tolerations annotation with fractional seconds",
        _annotation(
            "scheduler.alpha.kubernetes.io/tolerations",
            '[{"operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 1.5}]',
        ),
    ),
    Mutation(
        "tolerations annotation with a bad operator",
        _annotation("scheduler.alpha.kubernetes.io/tolerations", '[{"operator": "Bogus"}]'),
    ),
    # Nesting Go takes (up to 10,000 deep) and Python's recursive json does not
    Mutation(
        "tolerations annotation nested 5000 deep",
        _annotation("scheduler.alpha.kubernetes.io/tolerations", "[" * 5000 + "]" * 5000),
    ),
    Mutation(
        "tolerations annotation with a key nested 5000 deep",
        _annotation(
            "scheduler.alpha.kubernetes.io/tolerations",
            '[{"key": ' + "[" * 5000 + "]" * 5000 + "}]",
        ),
    ),
    Mutation(
        "ok-tolerations annotation with an unknown field nested 5000 deep",
        _annotation(
            "scheduler.alpha.kubernetes.io/tolerations",
            '[{"operator": "Exists", "x": ' + '{"a": ' * 5000 + "1" + "}" * 5000 + "}]",
        ),
    ),
    Mutation(
        "tolerations annotation not JSON",
        _annotation("scheduler.alpha.kubernetes.io/tolerations", "not json"),
    ),
    # Go's JSON syntax errors (podcheck.gojson), as the server words them
    *(
        Mutation(
            f"tolerations annotation JSON syntax: {what}",
            _annotation("scheduler.alpha.kubernetes.io/tolerations", text),
        )
        for what, text in (
            ("cut short", '[{"operator": "Exists"'),
            ("trailing comma", '[{"operator": "Exists"},]'),
            ("single quotes", "[{'operator': 'Exists'}]"),
            ("NaN", '[{"tolerationSeconds": NaN}]'),
            ("bad escape", '[{"key": "a\\qb"}]'),
            ("control character", '[{"key": "a\tb"}]'),
            ("no colon", '[{"key" "k"}]'),
            ("two values", "[] []"),
            ("bare exponent", '[{"tolerationSeconds": 1e}]'),
            ("non-ASCII", "[\u00a0]"),
            ("misspelt true", "[tru]"),
        )
    ),
    # seccomp annotations: ValidateSeccompPodAnnotations
    Mutation(
        "ok-seccomp pod annotation runtime/default", _annotation(SECCOMP_POD, "runtime/default")
    ),
    Mutation(
        "ok-seccomp pod annotation docker/default", _annotation(SECCOMP_POD, "docker/default")
    ),
    Mutation(
        "ok-seccomp pod annotation localhost", _annotation(SECCOMP_POD, "localhost/prof.json")
    ),
    Mutation("seccomp pod annotation unknown", _annotation(SECCOMP_POD, "strict")),
    Mutation("seccomp pod annotation absolute", _annotation(SECCOMP_POD, "localhost//etc/p")),
    Mutation("seccomp pod annotation backsteps", _annotation(SECCOMP_POD, "localhost/../p")),
    Mutation("seccomp container annotation unknown", _annotation(SECCOMP_TF, "strict")),
    Mutation("ok-seccomp container annotation unconfined", _annotation(SECCOMP_TF, "unconfined")),
    # seccomp annotations against fields: validateSeccompAnnotationsAndFields
    Mutation(
        "ok-seccomp pod annotation and field agree",
        all_of(
            _annotation(SECCOMP_POD, "runtime/default"),
            _pod_security(seccompProfile={"type": "RuntimeDefault"}),
        ),
    ),
    Mutation(
        "seccomp pod annotation and field differ",
        all_of(
            _annotation(SECCOMP_POD, "unconfined"),
            _pod_security(seccompProfile={"type": "RuntimeDefault"}),
        ),
    ),
    Mutation(
        "seccomp container annotation and field differ",
        all_of(
            _annotation(SECCOMP_TF, "runtime/default"),
            _container_security(seccompProfile={"type": "Unconfined"}),
        ),
    ),
    Mutation(
        "seccomp localhost profiles differ",
        all_of(
            _annotation(SECCOMP_TF, "localhost/a.json"),
            _container_security(seccompProfile={"type": "Localhost", "localhostProfile": "b.json"}),
        ),
    ),
    Mutation(
        "seccomp annotation localhost, field not",
        all_of(
            _annotation(SECCOMP_TF, "localhost/a.json"),
            _container_security(seccompProfile={"type": "RuntimeDefault"}),
        ),
    ),
    # AppArmor annotations: ValidateAppArmorPodAnnotations
    Mutation("ok-apparmor annotation runtime/default", _annotation(APPARMOR_TF, "runtime/default")),
    Mutation("ok-apparmor annotation localhost", _annotation(APPARMOR_TF, "localhost/prof")),
    Mutation("apparmor annotation unknown profile", _annotation(APPARMOR_TF, "strict")),
    Mutation(
        "apparmor annotation for no container",
        _annotation("container.apparmor.security.beta.kubernetes.io/other", "runtime/default"),
    ),
    # AppArmor annotations against fields (after the version skew the server applies)
    Mutation(
        "apparmor annotation and container field differ",
        all_of(
            _annotation(APPARMOR_TF, "unconfined"),
            _container_security(appArmorProfile={"type": "RuntimeDefault"}),
        ),
    ),
    Mutation(
        "ok-apparmor annotation and pod field differ",
        all_of(
            _annotation(APPARMOR_TF, "unconfined"),
            _pod_security(appArmorProfile={"type": "RuntimeDefault"}),
        ),
    ),
    Mutation(
        "apparmor localhost profiles differ",
        all_of(
            _annotation(APPARMOR_TF, "localhost/a"),
            _container_security(appArmorProfile={"type": "Localhost", "localhostProfile": "b"}),
        ),
    ),
    Mutation(
        "apparmor annotation localhost, field not",
        all_of(
            _annotation(APPARMOR_TF, "localhost/a"),
            _container_security(appArmorProfile={"type": "Unconfined"}),
        ),
    ),
    Mutation(
        "ok-apparmor annotation and field agree",
        all_of(
            _annotation(APPARMOR_TF, "localhost/a"),
            _container_security(appArmorProfile={"type": "Localhost", "localhostProfile": "a"}),
        ),
    ),
]
