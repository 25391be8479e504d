"""Pure logic of podcheck.scheduling and podcheck.resources: resource.Quantity's reading,
rounding and printing (each spelling below was seen printed so by the 1.34 API server, see
tests/integration/test_podcheck_scheduling.py), the resource helpers, the aggregation of
container requests, the matchLabelKeys merge, and robustness against wrong types."""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import pytest

from tfjob_kit import quantity
from tfjob_kit.podcheck import resources, scheduling
from tfjob_kit.quantity import parse_quantity, quantity_error, quantity_text

# text -> (String() as parsed, String() after SetDefaults_ResourceList's RoundUp(-3))
PRINTED = {
    "+3Ki": ("+3Ki", "+3Ki"),  # canonical text is kept as written, sign and all
    "001": ("001", "001"),
    "1e3": ("1e3", "1e3"),
    "2000m": ("2", "2"),
    "1.5": ("1500m", "1500m"),
    "0.5": ("500m", "500m"),
    ".": ("0", "0"),
    "+": ("0", "0"),
    "-0": ("0", "0"),
    "5.": ("5.", "5."),
    ".25": ("250m", "250m"),
    "1n": ("1n", "1m"),
    "-1n": ("-1n", "-1m"),  # rounding goes away from zero
    "-1500u": ("-1500u", "-2m"),
    "1500u": ("1500u", "2m"),
    "1e-20": ("1e-9", "1e-3"),  # the inf.Dec path rounds up to 1n first
    "1.5e-07": ("150e-9", "1e-3"),
    "1e+20": ("100e18", "100e18"),
    "12E2": ("1200", "1200"),  # E alone is exa; E2 an exponent
    "1000E": ("1", "1"),  # 10^21 has no DecimalSI suffix: Go prints the mantissa alone
    "1024Mi": ("1Gi", "1Gi"),
    "1.5Gi": ("1536Mi", "1536Mi"),
    "8Gi": ("8Gi", "8Gi"),
    "1025Ki": ("1025Ki", "1025Ki"),
    "0.5Ki": ("512", "512"),  # under 1024 a binary quantity prints in decimal
    "1.001Ki": ("1025024m", "1025024m"),  # not whole: decimal
    "100Ei": ("9223372036854775807", "9223372036854775807"),  # binary values are capped
    "1000k": ("1M", "1M"),
    "1234567890123456789.5": ("1234567890123456789500m", "1234567890123456789500m"),
    "12345678901234567890123": ("12345678901234567890123", "12345678901234567890123"),
}


@pytest.mark.parametrize("text", list(PRINTED))
def test_quantity_prints_as_the_server(text: str) -> None:
    parsed = parse_quantity(text)
    assert parsed is not None
    assert (parsed.string(), parsed.round_up(-3).string()) == PRINTED[text]


def test_quantity_values_are_exact() -> None:
    assert parse_quantity("1.5Gi") == quantity.Quantity(Fraction(3 * 2**29), "BinarySI", "", None)
    assert parse_quantity("1500m") == quantity.Quantity(Fraction(3, 2), "DecimalSI", "1500m", -3)
    tiny = parse_quantity("0.1n")
    assert tiny is not None and tiny.value == Fraction(1, 10**9)


@pytest.mark.parametrize(
    ("text", "error"),
    [
        ("", quantity.FORMAT_ERROR),
        ("1x", quantity.FORMAT_ERROR),
        ("1Gi1", quantity.SUFFIX_ERROR),
        ("1 Gi", quantity.FORMAT_ERROR),
        ("true", quantity.FORMAT_ERROR),
        ("1e+", quantity.SUFFIX_ERROR),
        ("1K", quantity.SUFFIX_ERROR),  # only the binary Ki is upper-case K
        ("1e99999999999999999999", quantity.SUFFIX_ERROR),  # the exponent is no int64
        ("e-12", quantity.NUMERIC_ERROR),  # no digits, and the inf.Dec path wants some
        ("-Pi", quantity.NUMERIC_ERROR),
        ("e3", None),  # no digits, but the int64 path reads a zero
        ("0Pi", None),
        ("1e5", None),
        ("1" * 200, None),  # readable, only too long to judge
    ],
)
def test_quantity_errors(text: str, error: str | None) -> None:
    assert quantity_error(text) == error
    if error is not None:
        assert parse_quantity(text) is None


@pytest.mark.parametrize(
    ("text", "milli"),
    [
        ("1500m", 1500),
        ("1n", 1),  # rounded up to 1m first
        ("55784Ti", 55784 * 2**40 * 1000 - 3 * 2**64),  # int64 wraps
        ("1e30", 0),  # the checked multiplication gives up: 0
        ("12345678901234567", 12345678901234567000 - 2**64),
    ],
)
def test_milli_value_overflows_as_go_does(text: str, milli: int) -> None:
    parsed = resources.read_quantity(text)
    assert parsed is not None
    assert resources.scaled_value(parsed, -3) == milli


def test_too_long_quantities_are_not_judged() -> None:
    assert parse_quantity("1" * 200) is None
    assert quantity_text(10**400) is None
    assert (
        resources.validate_container_resources(
            {"resources": {"requests": {"cpu": "1" * 200}, "limits": {"cpu": "1e3000000"}}},
            set(),
            ("spec", "containers", 0),
        )
        == []
    )


def test_quantity_text_reads_json_values() -> None:
    assert [quantity_text(v) for v in (None, True, 3, 0.25, " 2 ", [1])] == [
        "0",
        "true",
        "3",
        "0.25",
        "2",
        "?",
    ]


def test_the_rules_read_the_value_the_server_holds() -> None:
    """quantity.parse (the rules' reader) is ParseQuantity's value: JSON's whitespace trimmed,
    "." is zero as Go reads it, a float as its JSON text, a value past int64 in a binary
    suffix capped."""
    assert quantity.parse(" 1.5Gi ") == Fraction(3 * 2**29)
    assert quantity.parse(".") == 0
    assert quantity.parse(1e-10) == Fraction(1, 10**9)
    assert quantity.parse("16Ei") == 2**63 - 1
    assert quantity.parse("1Gb") is None
    assert quantity.parse(True) is None


@pytest.mark.parametrize(
    ("name", "extended", "native", "overcommit"),
    [
        ("cpu", False, True, True),
        ("hugepages-2Mi", False, True, False),
        ("nvidia.com/gpu", True, False, False),
        ("kubernetes.io/foo", False, True, True),
        ("requests.example.com/foo", False, False, False),
        ("a" * 245 + "/x", False, False, False),  # "requests." + it is no qualified name
    ],
)
def test_resource_name_kinds(name: str, extended: bool, native: bool, overcommit: bool) -> None:
    assert resources.is_extended(name) is extended
    assert resources.is_native(name) is native
    assert resources.is_overcommit_allowed(name) is overcommit


def _messages(errs: list[Any]) -> list[str]:
    return sorted(e.message for e in errs)


def test_container_resource_messages() -> None:
    container = {
        "resources": {
            "limits": {"cpu": "1", "nvidia.com/gpu": "1500m"},
            "requests": {"cpu": "1500m", "gpu": "1"},
        }
    }
    errs = resources.validate_container_resources(container, set(), ("spec", "containers", 0))
    assert _messages(errs) == [
        'spec.containers[0].resources.limits[nvidia.com/gpu]: Invalid value: "1500m": '
        "must be an integer",
        'spec.containers[0].resources.requests: Invalid value: "1500m": '
        "must be less than or equal to cpu limit of 1",
        'spec.containers[0].resources.requests[gpu]: Invalid value: "gpu": '
        "must be a standard resource for containers",
        'spec.containers[0].resources.requests[gpu]: Invalid value: "gpu": '
        "must be a standard resource type or fully qualified",
    ]


def test_set_defaults_copies_limits_into_missing_requests() -> None:
    spec: dict[str, Any] = {
        "containers": [
            {"resources": {"limits": {"cpu": "2", "memory": "1Gi"}, "requests": {"cpu": "1"}}}
        ],
        "initContainers": [{"resources": {"limits": {"nvidia.com/gpu": 1}}}],
    }
    resources.set_defaults(spec)
    assert spec["containers"][0]["resources"]["requests"] == {"cpu": "1", "memory": "1Gi"}
    assert spec["initContainers"][0]["resources"]["requests"] == {"nvidia.com/gpu": 1}


def test_aggregate_counts_sidecars_and_the_largest_init_container() -> None:
    def ctr(cpu: str, **extra: Any) -> dict[str, Any]:
        return {"resources": {"requests": {"cpu": cpu}}, **extra}

    spec = {
        "containers": [ctr("500m"), ctr("250m")],
        "initContainers": [ctr("300m", restartPolicy="Always"), ctr("2"), ctr("1")],
    }
    total = resources.aggregate(spec, "requests")
    # sidecar 300m runs beside everything: 750m + 300m; the init container needs 2 + 300m
    assert total["cpu"].value == Fraction(23, 10)
    assert total["cpu"].string() == "2300m"


def test_pod_level_requests_default_from_containers() -> None:
    spec: dict[str, Any] = {
        "resources": {"limits": {"cpu": "4", "memory": "1Gi", "hugepages-2Mi": "2Mi"}},
        "containers": [{"resources": {"requests": {"cpu": "1", "nvidia.com/gpu": "1"}}}],
    }
    resources.set_defaults(spec)
    assert spec["resources"]["requests"] == {"cpu": "1", "memory": "1Gi", "hugepages-2Mi": "2Mi"}


def test_match_label_keys_are_merged_with_the_pod_labels() -> None:
    term = {
        "topologyKey": "zone",
        "labelSelector": {"matchLabels": {"app": "x"}},
        "matchLabelKeys": ["app", "team"],
    }
    spec = {"affinity": {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term]}}}
    path = ("spec",)
    # without the label, nothing is merged, nothing collides
    assert scheduling.validate_scheduling(spec, path, {"team": "a"}) == []
    # app's label becomes "app In (x)" after matchLabels' app: reported at the term's index 0
    errs = scheduling.validate_scheduling(spec, path, {"app": "x"})
    assert _messages(errs) == [
        "spec.affinity.podAffinity.requiredDuringSchedulingIgnoredDuringExecution[0][0]: "
        'Invalid value: "app": exists in both matchLabelKeys and labelSelector'
    ]


@pytest.mark.usefixtures("on_1_34")
def test_toleration_messages() -> None:
    errs = scheduling.validate_tolerations(
        [{"operator": "Gt", "effect": "Never", "tolerationSeconds": 1}], ("spec", "tolerations")
    )
    assert _messages(errs) == [
        'spec.tolerations[0].effect: Invalid value: "Never": '
        "effect must be 'NoExecute' when `tolerationSeconds` is set",
        'spec.tolerations[0].effect: Unsupported value: "Never": supported values: '
        '"NoSchedule", "PreferNoSchedule", "NoExecute"',
        'spec.tolerations[0].operator: Invalid value: "Gt": operator must be Exists when `key` '
        'is empty, which means "match all values and all keys"',
        'spec.tolerations[0].operator: Unsupported value: "Gt": supported values: "Equal", '
        '"Exists"',
    ]


WRONG: list[Any] = [None, 1, "x", [], [1, None, "a"], {"a": [1]}, True, {}, [{}], [{"a": None}]]
FIELDS = (
    "nodeSelector",
    "affinity",
    "tolerations",
    "topologySpreadConstraints",
    "resources",
    "overhead",
    "resourceClaims",
    "containers",
    "initContainers",
)


@pytest.mark.parametrize("value", WRONG, ids=[repr(v)[:20] for v in WRONG])
def test_wrong_types_never_raise(value: Any) -> None:
    for key in FIELDS:
        spec: dict[str, Any] = {key: value}
        resources.set_defaults(spec)
        scheduling.validate_scheduling(spec, ("spec",), value if isinstance(value, dict) else None)
        resources.validate_pod_resources(spec, ("spec",))
    nested: dict[str, Any] = {
        "affinity": {
            "nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": value},
            "podAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [value]},
        },
        "topologySpreadConstraints": [{"labelSelector": value, "matchLabelKeys": value}],
        "containers": [
            {"resources": {"limits": value, "requests": {"cpu": value}, "claims": value}}
        ],
    }
    resources.set_defaults(nested)
    scheduling.validate_scheduling(nested, ("spec",), {})
    resources.validate_pod_resources(nested, ("spec",))
    resources.validate_container_resources(
        nested["containers"][0], set(), ("spec", "containers", 0)
    )
