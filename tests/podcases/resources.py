"""Pod template mutations for the resource checks (``podcheck.resources``): resource names
(standard, extended, hugepages, prefixed native), quantities as resource.Quantity reads and
prints them, requests against limits and their defaulting, claims, the pod ``overhead`` and the
pod-level ``resources`` (PodLevelResources is on in 1.34); ``ok-`` mutations are edge values the
server accepts."""

from __future__ import annotations

from typing import Any

from . import Mutate, Mutation, Template, VerdictChanges, all_of, set_spec


def _res(
    limits: dict[str, Any] | None = None, requests: dict[str, Any] | None = None, **extra: Any
) -> Mutate:
    """Set the first container's resources."""
    resources: dict[str, Any] = dict(extra)
    if limits is not None:
        resources["limits"] = limits
    if requests is not None:
        resources["requests"] = requests

    def mutate(t: Template) -> None:
        t["spec"]["containers"][0]["resources"] = resources

    return mutate


def _containers(*resources: dict[str, Any], init: list[dict[str, Any]] | None = None) -> Mutate:
    """Containers (and init containers) with these resources."""

    def mutate(t: Template) -> None:
        base = t["spec"]["containers"][0]
        t["spec"]["containers"] = [
            {**base, "name": f"c{i}", "resources": r} for i, r in enumerate(resources)
        ]
        if init is not None:
            t["spec"]["initContainers"] = [
                {"name": f"init{i}", "image": "busybox:1.36", **c} for i, c in enumerate(init)
            ]

    return mutate


def _quantity(name: str, text: Any, resource: str = "cpu") -> Mutation:
    """A request of ``text``: how the server reads, rounds and prints it."""
    return Mutation(name, _res(requests={resource: text}))


def _prefix(length: int) -> str:
    """A DNS subdomain of ``length`` characters: "requests." + it is a qualified name's prefix
    only up to 244."""
    labels = []
    while length > 0:
        labels.append("a" * min(63, length))
        length -= len(labels[-1]) + 1
    return ".".join(labels)


CLAIMS = [{"name": "gpu", "resourceClaimTemplateName": "gpu-template"}]

# 1.37 turns PodLevelResourcesFixDefaulting on: the pod-level defaults move from SetDefaults_Pod
# (before the lists are rounded) to PrepareForCreate (after), and complete the pod limits too
VERDICT_CHANGES: VerdictChanges = {
    "pod-requests-defaulted-from-nano-requests": ("1.37", True),
    "pod-hugepage-request-without-pod-limit": ("1.37", True),
}

MUTATIONS: list[Mutation] = [
    # names
    Mutation("ok-cpu-memory", _res({"cpu": "2", "memory": "4Gi"}, {"cpu": "1", "memory": "2Gi"})),
    Mutation("ok-limits-only", _res({"cpu": "2", "memory": "4Gi", "ephemeral-storage": "10Gi"})),
    Mutation("ok-requests-only", _res(requests={"cpu": "100m", "memory": "128Mi"})),
    Mutation("ok-empty-resources", _res({}, {})),
    Mutation("unknown-resource", _res(requests={"gpu": "1"})),
    Mutation("quota-resource-in-container", _res(limits={"pods": "1"})),
    Mutation("storage-in-container", _res(requests={"storage": "1Gi"})),
    Mutation("requests-prefixed-name", _res(requests={"requests.cpu": "1"})),
    Mutation("bad-qualified-name", _res(limits={"example.com/bad name": "1"})),
    Mutation("name-with-two-slashes", _res(limits={"a/b/c": "1"})),
    Mutation("uppercase-name", _res(requests={"CPU": "1"})),
    Mutation("ok-native-prefixed-name", _res(limits={"kubernetes.io/foo": "1"})),
    Mutation("ok-native-prefixed-name-fraction", _res(requests={"kubernetes.io/foo": "500m"})),
    Mutation("requests-dot-extended-name", _res(limits={"requests.example.com/foo": "1"})),
    Mutation("ok-extended-name-long", _res(limits={"example.com/" + "g" * 63: "1"})),
    Mutation("extended-prefix-too-long-for-quota", _res(limits={_prefix(245) + "/gpu": "1"})),
    Mutation("ok-extended-prefix-fits-quota", _res(limits={_prefix(244) + "/gpu": "1"})),
    # extended resources: integers, requests == limits
    Mutation("ok-gpu-limit", _res({"nvidia.com/gpu": "1"})),
    Mutation("ok-gpu-equal", _res({"nvidia.com/gpu": 2}, {"nvidia.com/gpu": "2"})),
    Mutation("gpu-request-without-limit", _res(requests={"nvidia.com/gpu": "1"})),
    Mutation("gpu-request-below-limit", _res({"nvidia.com/gpu": "2"}, {"nvidia.com/gpu": "1"})),
    Mutation("gpu-request-above-limit", _res({"nvidia.com/gpu": "1"}, {"nvidia.com/gpu": "2"})),
    Mutation("gpu-fraction", _res({"nvidia.com/gpu": "0.5"})),
    Mutation("gpu-milli", _res({"nvidia.com/gpu": "1500m"})),
    Mutation("ok-gpu-1000m", _res({"nvidia.com/gpu": "1000m"})),
    Mutation("gpu-negative", _res({"nvidia.com/gpu": "-1"})),
    # MilliValue overflows int64: it wraps (binary: not whole any more) or reads 0 (1e30)
    Mutation("gpu-huge-binary-overflows-milli", _res({"nvidia.com/gpu": "55784Ti"})),
    Mutation("ok-gpu-huge-exponent-reads-zero", _res({"nvidia.com/gpu": "1e30"})),
    Mutation("gpu-huge-decimal-wraps", _res({"nvidia.com/gpu": "12345678901234567"})),
    Mutation("ok-gpu-zero", _res({"nvidia.com/gpu": "0"})),
    # quantities and requests <= limits
    Mutation("cpu-request-above-limit", _res({"cpu": "1"}, {"cpu": "1500m"})),
    Mutation("memory-request-above-limit", _res({"memory": "1Gi"}, {"memory": "1025Mi"})),
    Mutation("ok-memory-equal-spelled-differently", _res({"memory": "1Gi"}, {"memory": "1024Mi"})),
    Mutation("negative-cpu-request", _res(requests={"cpu": "-1"})),
    Mutation("negative-memory-limit", _res({"memory": "-128Mi"})),
    Mutation("negative-limit-defaulted-request", _res({"ephemeral-storage": "-1Gi"})),
    Mutation("negative-and-above-limit", _res({"cpu": "-2"}, {"cpu": "-1"})),
    Mutation("ok-zero-everything", _res({"cpu": 0, "memory": "0"}, {"cpu": "0m", "memory": "0Gi"})),
    Mutation("tiny-negative-rounds-to-milli", _res(requests={"cpu": "-1n"})),
    Mutation("negative-micro-rounds-away", _res(requests={"cpu": "-1500u"})),
    Mutation("signed-text-kept", _res({"cpu": "+3Ki"}, {"cpu": "+4Ki"})),
    Mutation("leading-zeros-kept", _res({"cpu": "001"}, {"cpu": "2"})),
    Mutation("exponent-text-kept", _res({"cpu": "1e3"}, {"cpu": "2e3"})),
    Mutation("huge-decimal-suffix", _res({"cpu": "1"}, {"cpu": "1000E"})),
    Mutation("binary-fraction", _res({"memory": "1Gi"}, {"memory": "1.5Gi"})),
    Mutation("binary-capped", _res({"memory": "1Gi"}, {"memory": "100Ei"})),
    Mutation("float-above-limit", _res({"cpu": 0.5}, {"cpu": 0.75})),
    Mutation("quantity-bad-suffix", _res(requests={"cpu": "1x"})),
    Mutation("quantity-bad-format", _res(limits={"memory": "1Gi1"})),
    Mutation("quantity-empty", _res(requests={"cpu": ""})),
    Mutation("quantity-bad-exponent", _res(requests={"cpu": "1e99999999999999999999"})),
    _quantity("quantity-no-digits-small-exponent", "e-12", "memory"),
    _quantity("quantity-no-digits-binary", "-Pi", "memory"),
    _quantity("ok-quantity-no-digits-exponent", "e3"),
    Mutation("quantity-sign-only-suffix", _res(requests={"cpu": "1e+"})),
    Mutation("ok-gpu-null-limit", _res({"nvidia.com/gpu": None})),
    Mutation("gpu-null-request", _res(requests={"nvidia.com/gpu": None})),
    Mutation("null-limit-below-request", _res({"cpu": None}, {"cpu": "1"})),
    Mutation("quantity-bool", _res(requests={"cpu": True})),
    Mutation("quantity-list", _res(requests={"cpu": [1]})),
    Mutation("quantity-object", _res(limits={"memory": {"value": "1Gi"}})),
    _quantity("ok-quantity-null", None),
    _quantity("ok-quantity-float-exponent", 1.5e-07),
    _quantity("ok-quantity-float-huge", 1e20),
    _quantity("ok-quantity-dot", "."),
    _quantity("ok-quantity-negative-zero", "-0"),
    _quantity("quantity-upper-k", "1K"),
    _quantity("quantity-inner-space", "1 Gi", "memory"),
    _quantity("ok-quantity-sign", "+"),
    _quantity("ok-quantity-nano", "1n"),
    _quantity("ok-quantity-micro", "1500u"),
    _quantity("ok-quantity-half", "0.5"),
    _quantity("ok-quantity-trailing-dot", "5."),
    _quantity("ok-quantity-leading-dot", ".25"),
    _quantity("ok-quantity-spaces", " 2 "),
    _quantity("ok-quantity-2000m", "2000m"),
    _quantity("ok-quantity-int", 3),
    _quantity("ok-quantity-float", 0.25),
    _quantity("ok-quantity-tiny-exponent", "1e-20"),
    _quantity("ok-quantity-E-exponent", "12E2"),
    _quantity("ok-quantity-many-digits", "1234567890123456789.5"),
    _quantity("ok-quantity-1024Mi", "1024Mi", "memory"),
    _quantity("ok-quantity-1536Mi", "1.5Gi", "memory"),
    _quantity("ok-quantity-8Gi", "8Gi", "memory"),
    _quantity("ok-quantity-1025Ki", "1025Ki", "memory"),
    _quantity("ok-quantity-binary-small", "0.5Ki", "memory"),
    _quantity("ok-quantity-binary-odd", "1.001Ki", "memory"),
    _quantity("ok-quantity-kilo", "1k", "ephemeral-storage"),
    _quantity("ok-quantity-1000k", "1000k", "ephemeral-storage"),
    _quantity("ok-quantity-decimal-huge", "12345678901234567890123", "ephemeral-storage"),
    Mutation(
        "ok-init-and-sidecar-defaults",
        _containers(
            {"limits": {"cpu": "1", "memory": "1Gi"}, "requests": {"cpu": "250m"}},
            init=[
                {"resources": {"limits": {"cpu": "2", "nvidia.com/gpu": "1"}}},
                {"restartPolicy": "Always", "resources": {"limits": {"memory": "64Mi"}}},
            ],
        ),
    ),
    Mutation(
        "init-container-request-above-limit",
        _containers({}, init=[{"resources": {"limits": {"cpu": "1"}, "requests": {"cpu": "2"}}}]),
    ),
    # hugepages
    Mutation("ok-hugepages", _res({"hugepages-2Mi": "4Mi", "memory": "1Gi"})),
    Mutation("ok-hugepages-with-cpu-request", _res({"hugepages-1Gi": "2Gi"}, {"cpu": "1"})),
    Mutation("hugepages-alone", _res({"hugepages-2Mi": "4Mi"})),
    Mutation("hugepages-not-a-multiple", _res({"hugepages-2Mi": "3Mi", "memory": "1Gi"})),
    Mutation(
        "hugepages-request-differs",
        _res({"hugepages-2Mi": "4Mi", "memory": "1Gi"}, {"hugepages-2Mi": "2Mi"}),
    ),
    Mutation(
        "hugepages-request-without-limit", _res(requests={"hugepages-2Mi": "2Mi", "memory": "1Gi"})
    ),
    Mutation("hugepages-bad-page-size", _res({"hugepages-foo": "4Mi", "memory": "1Gi"})),
    Mutation("hugepages-fractional-page", _res({"hugepages-1.5": "3", "memory": "1Gi"})),
    Mutation("hugepages-negative", _res({"hugepages-2Mi": "-2Mi", "memory": "1Gi"})),
    # claims
    Mutation("ok-claim", all_of(set_spec(resourceClaims=CLAIMS), _res(claims=[{"name": "gpu"}]))),
    Mutation(
        "ok-claim-request",
        all_of(
            set_spec(resourceClaims=CLAIMS),
            _res(claims=[{"name": "gpu", "request": "a"}, {"name": "gpu", "request": "b"}]),
        ),
    ),
    Mutation("claim-not-in-pod", _res(claims=[{"name": "gpu"}])),
    Mutation(
        "claim-not-in-pod-with-others",
        all_of(set_spec(resourceClaims=CLAIMS), _res(claims=[{"name": "tpu"}])),
    ),
    Mutation(
        "claim-empty-name", all_of(set_spec(resourceClaims=CLAIMS), _res(claims=[{"name": ""}]))
    ),
    Mutation(
        "claim-duplicate",
        all_of(set_spec(resourceClaims=CLAIMS), _res(claims=[{"name": "gpu"}, {"name": "gpu"}])),
    ),
    Mutation(
        "claim-duplicate-request",
        all_of(
            set_spec(resourceClaims=CLAIMS),
            _res(claims=[{"name": "gpu", "request": "a"}, {"name": "gpu", "request": "a"}]),
        ),
    ),
    Mutation(
        "claim-whole-after-request",
        all_of(
            set_spec(resourceClaims=CLAIMS),
            _res(claims=[{"name": "gpu", "request": "a"}, {"name": "gpu"}]),
        ),
    ),
    Mutation(
        "claim-request-after-whole",
        all_of(
            set_spec(resourceClaims=CLAIMS),
            _res(claims=[{"name": "gpu"}, {"name": "gpu", "request": "a"}]),
        ),
    ),
    Mutation(
        "claim-bad-request",
        all_of(
            set_spec(resourceClaims=CLAIMS),
            _res(claims=[{"name": "gpu", "request": "Bad_Request"}]),
        ),
    ),
    # overhead (checked as container limits)
    Mutation("overhead-negative", set_spec(overhead={"cpu": "-1"})),
    Mutation("overhead-unknown-name", set_spec(overhead={"pods": "1", "example.com/x": "0.5"})),
    Mutation("overhead-hugepages-alone", set_spec(overhead={"hugepages-2Mi": "2Mi"})),
    # pod-level resources
    Mutation("ok-pod-resources", set_spec(resources={"limits": {"cpu": "2", "memory": "4Gi"}})),
    Mutation("ok-pod-resources-requests", set_spec(resources={"requests": {"cpu": "1"}})),
    Mutation(
        "pod-resources-unsupported",
        set_spec(resources={"limits": {"ephemeral-storage": "1Gi", "nvidia.com/gpu": "1"}}),
    ),
    Mutation("pod-resources-bad-name", set_spec(resources={"requests": {"bad name": "1"}})),
    Mutation(
        "pod-resources-request-above-limit",
        set_spec(resources={"limits": {"cpu": "1"}, "requests": {"cpu": "2"}}),
    ),
    Mutation("pod-resources-negative", set_spec(resources={"requests": {"memory": "-1Gi"}})),
    Mutation(
        "pod-resources-claims",
        all_of(set_spec(resourceClaims=CLAIMS, resources={"claims": [{"name": "gpu"}]})),
    ),
    Mutation("pod-resources-empty-claims", set_spec(resources={"claims": []})),
    Mutation("ok-pod-resources-empty", set_spec(resources={})),
    Mutation("ok-container-empty-claims", _res(claims=[])),
    Mutation(
        "pod-resources-windows",
        set_spec(os={"name": "windows"}, resources={"limits": {"cpu": "1"}}),
    ),
    Mutation(
        "pod-requests-below-containers",
        all_of(
            set_spec(resources={"requests": {"cpu": "1"}}),
            _containers({"requests": {"cpu": "700m"}}, {"requests": {"cpu": "0.5"}}),
        ),
    ),
    Mutation(
        "ok-pod-requests-cover-containers",
        all_of(
            set_spec(resources={"requests": {"cpu": "1200m"}}),
            _containers({"requests": {"cpu": "700m"}}, {"requests": {"cpu": "0.5"}}),
        ),
    ),
    Mutation(
        "pod-limits-default-requests-below-containers",
        all_of(
            set_spec(resources={"limits": {"memory": "1Gi"}}),
            _containers({"requests": {"memory": "2Gi"}}),
        ),
    ),
    Mutation(
        "ok-pod-limits-default-requests-from-containers",
        all_of(
            set_spec(resources={"limits": {"cpu": "4", "memory": "1Gi"}}),
            _containers({"requests": {"cpu": "1", "memory": "256Mi"}}, {"limits": {"cpu": "1"}}),
        ),
    ),
    # before 1.37 SetDefaults_Pod defaults the pod requests from the unrounded 1n + 1n (2n, then
    # 1m), below the rounded containers' 2m; from 1.37 PrepareForCreate sums the rounded 1m + 1m
    Mutation(
        "pod-requests-defaulted-from-nano-requests",
        all_of(
            set_spec(resources={"limits": {"cpu": "1"}}),
            _containers({"requests": {"cpu": "1n"}}, {"requests": {"cpu": "1n"}}),
        ),
    ),
    Mutation(
        "ok-pod-requests-from-sidecars-and-init",
        all_of(
            set_spec(resources={"limits": {"cpu": "4", "memory": "2Gi"}}),
            _containers(
                {"requests": {"cpu": "500m"}},
                init=[
                    {
                        "restartPolicy": "Always",
                        "resources": {"requests": {"cpu": "300m", "memory": "100Mi"}},
                    },
                    {"resources": {"requests": {"cpu": "2", "memory": "50Mi"}}},
                ],
            ),
        ),
    ),
    Mutation(
        "container-limits-above-pod-limits",
        all_of(
            set_spec(resources={"limits": {"cpu": "1", "memory": "1Gi"}}),
            _containers({"limits": {"cpu": "500m"}}, {"limits": {"cpu": "1500m", "memory": "2Gi"}}),
        ),
    ),
    Mutation(
        "pod-hugepage-request-without-pod-limit",
        all_of(
            set_spec(resources={"requests": {"hugepages-2Mi": "4Mi", "memory": "1Gi"}}),
            _containers({"limits": {"hugepages-2Mi": "4Mi", "memory": "512Mi"}}),
        ),
    ),
    # from 1.37 (PodLevelResourcesFixDefaulting) pod requests alone are completed too, and the
    # pod limits default to max(request, aggregate container limits) where every container has one
    Mutation(
        "ok-pod-requests-completed-from-containers",
        all_of(
            set_spec(resources={"requests": {"cpu": "1"}}),
            _containers({"requests": {"memory": "256Mi"}}, {"limits": {"memory": "1Gi"}}),
        ),
    ),
    Mutation(
        "ok-pod-limits-defaulted-from-container-limits",
        all_of(
            set_spec(resources={"requests": {"cpu": "2", "memory": "2Gi"}}),
            _containers(
                {"limits": {"cpu": "1", "memory": "1Gi"}},
                init=[{"resources": {"limits": {"cpu": "2", "memory": "512Mi"}}}],
            ),
        ),
    ),
    Mutation(
        "ok-pod-limits-not-defaulted-without-every-container-limit",
        all_of(
            set_spec(resources={"requests": {"cpu": "2"}}),
            _containers({"limits": {"cpu": "1"}}, {"requests": {"cpu": "500m"}}),
        ),
    ),
    Mutation(
        "pod-hugepage-request-below-containers",
        all_of(
            set_spec(resources={"requests": {"hugepages-2Mi": "2Mi", "memory": "1Gi"}}),
            _containers({"limits": {"hugepages-2Mi": "4Mi", "memory": "512Mi"}}),
        ),
    ),
    Mutation(
        "ok-pod-requests-rounded-before-defaulting",
        all_of(
            set_spec(resources={"requests": {"memory": "1Gi"}}),
            _containers({"requests": {"cpu": "1500u"}}, {"requests": {"cpu": "0.5m"}}),
        ),
    ),
    Mutation(
        "container-limit-above-pod-limit",
        all_of(set_spec(resources={"limits": {"cpu": "1"}}), _containers({"limits": {"cpu": "2"}})),
    ),
    Mutation(
        "pod-requests-below-init-container",
        all_of(
            set_spec(resources={"requests": {"cpu": "1"}}),
            _containers(
                {"requests": {"cpu": "500m"}}, init=[{"resources": {"requests": {"cpu": "2"}}}]
            ),
        ),
    ),
    Mutation(
        "pod-requests-below-sidecars",
        all_of(
            set_spec(resources={"requests": {"cpu": "1"}}),
            _containers(
                {"requests": {"cpu": "500m"}},
                init=[
                    {"restartPolicy": "Always", "resources": {"requests": {"cpu": "300m"}}},
                    {"resources": {"requests": {"cpu": "800m"}}},
                ],
            ),
        ),
    ),
    Mutation(
        "pod-hugepage-limit-below-containers",
        all_of(
            set_spec(resources={"limits": {"hugepages-2Mi": "2Mi", "memory": "1Gi"}}),
            _containers({"limits": {"hugepages-2Mi": "4Mi", "memory": "512Mi"}}),
        ),
    ),
    Mutation(
        "ok-pod-hugepage-limit-defaulted",
        all_of(
            set_spec(resources={"limits": {"memory": "1Gi"}}),
            _containers({"limits": {"hugepages-2Mi": "4Mi", "memory": "512Mi"}}),
        ),
    ),
]
