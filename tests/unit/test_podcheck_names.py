"""podcheck.names, meta and pod: the pure functions whose edges the differential test reaches
only in part (the IP parser and printer, byte lengths, the name rules' generateName masking,
metadata that a pod create never shows)."""

from __future__ import annotations

import ipaddress
import random

import pytest

from tfjob_kit.podcheck import meta, names, pod, release
from tfjob_kit.podcheck.field import ErrorType

LABEL_REGEX = names.regex_error(
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and "
    "must start and end with an alphanumeric character",
    "[a-z0-9]([-a-z0-9]*[a-z0-9])?",
    "my-name",
    "123-abc",
)


def test_regex_error_wording() -> None:
    assert names.regex_error("bad", "x+") == "bad (regex used for validation is 'x+')"
    assert names.regex_error("bad", "x+", "a", "b") == (
        "bad (e.g. 'a',  or 'b', regex used for validation is 'x+')"
    )
    assert LABEL_REGEX.endswith(
        "(e.g. 'my-name',  or '123-abc', regex used for validation is "
        "'[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
    )


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("worker-0", []),
        ("0", []),
        ("a" * 63, []),
        ("a" * 64, ["must be no more than 63 characters"]),
        ("a.b", ["must not contain dots"]),
        ("A", [LABEL_REGEX]),
        ("", [LABEL_REGEX]),
        ("a-", [LABEL_REGEX]),
        ("a\n", [LABEL_REGEX]),  # Go's $ is the end of the text, not of a line
        ("é" * 32, ["must be no more than 63 characters", LABEL_REGEX]),  # 64 bytes
    ],
)
def test_dns1123_label(value: str, expected: list[str]) -> None:
    assert names.is_dns1123_label(value) == expected


@pytest.mark.usefixtures("on_1_34")
def test_qualified_name_parts() -> None:
    assert names.is_qualified_name("example.com/Role_1") == []
    assert names.is_qualified_name("/x") == ["prefix part must be non-empty"]
    empty_name = names.is_qualified_name("example.com/")
    assert empty_name[0] == "name part must be non-empty"
    assert empty_name[1].startswith("name part must consist of alphanumeric characters")
    (three,) = names.is_qualified_name("a/b/c")
    assert three.startswith("a qualified name must consist of")
    assert three.endswith(
        " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"
    )
    (prefix,) = names.is_qualified_name("Example.com/x")
    assert prefix.startswith("prefix part a lowercase RFC 1123 subdomain")


@pytest.mark.usefixtures("on_1_34")
def test_label_values_and_lengths() -> None:
    assert names.is_valid_label_value("") == []
    assert names.is_valid_label_value("v" * 63) == []
    assert names.is_valid_label_value("v" * 64) == ["must be no more than 63 characters"]
    assert len(names.is_dns1123_subdomain("a" * 254)) == 1
    assert names.is_dns1123_subdomain("a" * 253) == []


def test_generate_name_prefix_masks_the_trailing_dash() -> None:
    assert names.name_is_dns_subdomain("worker-", True) == []
    assert names.name_is_dns_subdomain("worker-", False) != []
    assert names.name_is_dns_label("-", True) != []  # a lone dash is not masked
    # the character before the dash goes too: 254 bytes with the dash make 253
    assert names.name_is_dns_subdomain("g" * 253 + "-", True) == []
    assert names.name_is_dns_subdomain("g" * 254 + "-", True) == [
        "must be no more than 253 characters"
    ]
    assert names.name_is_dns1035_label("1abc-", True) != []


def test_port_names_and_env_names() -> None:
    assert names.is_valid_port_name("tfjob-port") == []
    assert names.is_valid_port_name("-a--b1234567890-") == [
        "must be no more than 15 characters",
        "must not contain consecutive hyphens",
        "must not begin or end with a hyphen",
    ]
    assert names.is_valid_port_name("8080") == ["must contain at least one letter (a-z)"]
    assert names.is_relaxed_env_var_name("1 weird.NAME-ok") == []
    assert names.is_relaxed_env_var_name("") == ["environment variable name must be non-empty"]
    assert names.is_relaxed_env_var_name("A=B") == [
        "a valid environment variable name must consist only of printable ASCII characters "
        "other than '='"
    ]
    assert names.is_relaxed_env_var_name("tab\t") != []
    assert names.is_env_var_name("..x")[-1] == "must not start with '..'"
    assert names.is_config_map_key(".") == ["must not be '.'"]


@pytest.mark.parametrize(
    ("text", "printed"),
    [
        ("10.0.0.1", "10.0.0.1"),
        ("010.000.000.001", "10.0.0.1"),  # legacy parsing: leading zeros are decimal
        ("::", "::"),
        ("::1", "::1"),
        ("1::", "1::"),
        ("2001:DB8:0:0:0:0:0:1", "2001:db8::1"),
        ("1:0:0:2:0:0:0:3", "1:0:0:2::3"),
        ("1:0:2:0:3:0:4:0", "1:0:2:0:3:0:4:0"),
        ("::ffff:10.0.0.1", "10.0.0.1"),
        ("1:2:3:4:5:6:10.0.0.1", "1:2:3:4:5:6:a00:1"),
        ("::10.0.0.1", "::a00:1"),
        ("0001:2::3", "1:2::3"),
    ],
)
def test_sloppy_ip_parsing_and_printing(text: str, printed: str) -> None:
    ip = names.parse_ip_sloppy(text)
    assert ip is not None
    assert names.ip_string(ip) == printed


@pytest.mark.parametrize(
    "text",
    [
        "",
        "10.0.0",
        "10.0.0.1.2",
        "256.0.0.1",
        "10.0.0.1 ",
        "1::2::3",
        "1:2:3:4:5:6:7:8:9",
        "1:2:3:4:5:6:7:10.0.0.1",
        "fe80::1%eth0",
        "12345::1",
        ":1",
        "1:",
        "dns.example.com",
    ],
)
def test_sloppy_ip_parsing_refuses(text: str) -> None:
    assert names.parse_ip_sloppy(text) is None


def test_ipv6_printing_is_rfc5952() -> None:
    """Go's net.IP.String and Python's ipaddress agree on RFC 5952 for every IPv6 address that
    is not IPv4-mapped (Go prints those dotted): random addresses with runs of zero groups."""
    rng = random.Random(5952)
    for _ in range(2000):
        groups = [rng.choice((0, 0, 0, 1, 0xABCD, rng.randrange(65536))) for _ in range(8)]
        raw = b"".join(g.to_bytes(2, "big") for g in groups)
        if raw[:12] == bytes(10) + b"\xff\xff":
            continue
        assert names.ip_string(raw) == str(ipaddress.IPv6Address(raw))


@pytest.mark.usefixtures("on_1_34")
def test_strict_ip_messages() -> None:
    def details(text: str) -> list[str]:
        return [e.detail for e in names.is_valid_ip(("ip",), text)]

    assert details("10.0.0.1") == []
    assert details("010.0.0.1") == ["must not have leading 0s"]
    assert details("::ffff:10.0.0.1") == ["must not be an IPv4-mapped IPv6 address"]
    assert details("2001:DB8::1") == ['must be in canonical form ("2001:db8::1")']
    assert details("x") == ["must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)"]
    assert names.is_valid_ip_for_legacy_field(("ip",), "010.0.0.1") == []


def test_domain_names() -> None:
    assert names.is_fully_qualified_domain_name(("d",), "example.com.") == []
    (short,) = names.is_fully_qualified_domain_name(("d",), "localhost")
    assert short.detail == "should be a domain with at least two segments separated by dots"
    (empty,) = names.is_fully_qualified_domain_name(("d",), "")
    assert empty.type is ErrorType.REQUIRED
    (three,) = names.is_fully_qualified_name(("d",), "example.com")
    assert three.detail == "should be a domain with at least three segments separated by dots"


def test_annotation_size_counts_bytes() -> None:
    key = "k"
    fits = {key: "é" * ((256 * 1024 - 1) // 2)}  # 262143 bytes with the key
    assert meta.validate_annotations(fits, ("a",)) == []
    (too_long,) = meta.validate_annotations({key: "é" * (256 * 512)}, ("a",))
    assert too_long.message == "a: Too long: may not be more than 262144 bytes"


def test_kube_finalizer_rule_is_for_built_in_types() -> None:
    """Custom resources only get warnings for unqualified finalizers: the rule is opt-in."""
    metadata = {"name": "job", "namespace": "ns", "finalizers": ["cleanup"]}
    rule = names.name_is_dns_subdomain
    assert meta.validate_object_meta(metadata, ("metadata",), name_rule=rule) == []
    (error,) = meta.validate_object_meta(
        metadata, ("metadata",), name_rule=rule, kube_finalizers=True
    )
    assert error.field == "metadata.finalizers[0]"
    (forbidden,) = meta.validate_object_meta(
        metadata, ("metadata",), name_rule=rule, namespaced=False
    )
    assert forbidden.message == "metadata.namespace: Forbidden: not allowed on this type"


@pytest.mark.usefixtures("on_1_34")
def test_managed_fields_messages() -> None:
    entries = [{"operation": "Bogus", "fieldsType": "X", "manager": "a\tb"}]
    assert [e.message for e in meta.validate_managed_fields(entries, ("m",))] == [
        'm[0].operation: Invalid value: "Bogus": must be `Apply` or `Update`',
        'm[0].fieldsType: Invalid value: "X": must be `FieldsV1`',
        'm[0].manager: Invalid value: "a\\tb": invalid character U+0009 (at position 1)',
    ]


def test_validate_pod_never_raises_on_wrong_types() -> None:
    odd: list[object] = [
        None,
        [],
        "pod",
        {"metadata": [], "spec": "x"},
        {"metadata": {"labels": [1], "annotations": {"a": 1}}, "spec": {"containers": "x"}},
        {"spec": {"dnsConfig": [], "hostAliases": [1, {"ip": 5}], "os": {"name": 3}}},
        {"spec": {"resourceClaims": [None, {"name": 1}], "schedulingGates": "g"}},
    ]
    for value in odd:
        errs = pod.validate_pod(value)
        assert all(e.message for e in errs)


@pytest.mark.parametrize(
    "check",
    [names.is_valid_port_name, names.is_dns1123_label, names.is_qualified_name],
)
def test_remembered_check_twice_and_its_set(check: object) -> None:
    """A remembered check answers the same the second time; a string in its set is one the
    check accepts (callers look the set up in place of the call)."""
    assert callable(check)
    values = ["http", "tfjob-port", "a--b", "-a", "8080", "x" * 16, "Bad", "a.b", "", "a/b"]
    first = [check(v) for v in values]
    assert [check(v) for v in values] == first
    remembered = {
        names.is_valid_port_name: names.VALID_PORT_NAMES,
        names.is_dns1123_label: names.VALID_DNS1123_LABELS,
        names.is_qualified_name: names.VALID_QUALIFIED_NAMES,
    }[check]
    for value, errs in zip(values, first, strict=True):
        assert (value in remembered) == (not errs)


def test_annotation_bytes_counted_past_a_quarter_of_the_limit() -> None:
    limit = meta.TOTAL_ANNOTATION_SIZE_LIMIT_B
    quarter = "x" * (limit // 4 - 1)
    assert meta.validate_annotations({"k": quarter}, ("a",)) == []
    wide = "é" * (limit // 2 - 1)  # 2 bytes a character: one byte under the limit with "k"
    assert meta.validate_annotations({"k": wide}, ("a",)) == []
    (too_long,) = meta.validate_annotations({"k": wide + "é"}, ("a",))
    assert too_long.message == f"a: Too long: may not be more than {limit} bytes"


def test_labels_of_remembered_strings_and_of_other_types() -> None:
    good: dict[object, object] = {"app.kubernetes.io/name": "tfjob", "team": "nlp"}
    assert meta.validate_labels(good, ("l",)) == []
    assert meta.validate_labels(good, ("l",)) == []  # now all remembered
    odd: dict[object, object] = {**good, "team": ["nlp"], 1: "x", "n": 5, "m": {"a": "b"}}
    assert meta.validate_labels(odd, ("l",)) == []  # what is not a string is skipped
    bad = {**good, "team": "NLP team"}
    assert [e.value for e in meta.validate_labels(bad, ("l",))] == ["NLP team"]


def test_label_key_and_value_wording_by_minor() -> None:
    """From 1.35 the label checks are content's: lengths in bytes, "a valid label key"."""
    with release.following("1.34"):
        assert names.is_valid_label_value("v" * 64) == ["must be no more than 63 characters"]
        assert names.is_qualified_name("a/b/c")[0].startswith("a qualified name must")
    for minor in ("1.35", "1.37"):
        with release.following(minor):
            assert names.is_valid_label_value("v" * 64) == ["must be no more than 63 bytes"]
            assert names.is_qualified_name("k" * 64) == ["name part must be no more than 63 bytes"]
            assert names.is_qualified_name("p" * 254 + "/x") == [
                "prefix part must be no more than 253 bytes"
            ]
            assert names.is_qualified_name("a/b/c")[0].startswith("a valid label key must")
            # the other checks keep validation.MaxLenError
            assert names.is_dns1123_label("a" * 64) == ["must be no more than 63 characters"]


def test_legacy_ip_fields_strict_from_136() -> None:
    for minor, strict in (("1.35", False), ("1.36", True), ("1.37", True)):
        with release.following(minor):
            leading = names.is_valid_ip_for_legacy_field(("ip",), "010.0.0.1")
            mapped = names.is_valid_ip_for_legacy_field(("ip",), "::ffff:10.0.0.1")
            assert [e.detail for e in leading] == (["must not have leading 0s"] if strict else [])
            assert [e.detail for e in mapped] == (
                ["must not be an IPv4-mapped IPv6 address"] if strict else []
            )
            assert names.is_valid_ip_for_legacy_field(("ip",), "010.0.0.1", strict=False) == []


def test_owner_references_by_minor() -> None:
    refs = [
        {"apiVersion": "v1", "kind": "Job", "name": "a", "uid": "1"},
        {"apiVersion": "a/b/c", "kind": "", "name": "b", "uid": ""},
        {"apiVersion": "v1", "kind": "Event", "name": "e", "uid": "2"},
    ]
    with release.following("1.36"):
        assert [e.message for e in meta.validate_owner_references(refs, ("o",))] == [
            'o.apiVersion: Invalid value: "a/b/c": version must not be empty',
            'o.kind: Invalid value: "": must not be empty',
            'o.uid: Invalid value: "": must not be empty',
            'o: Invalid value: {"apiVersion":"v1","kind":"Event","name":"e","uid":"2"}: '
            "/v1, Kind=Event is disallowed from being an owner",
        ]
    with release.following("1.37"):
        assert [e.message for e in meta.validate_owner_references(refs, ("o",))] == [
            'o[1].apiVersion: Invalid value: "a/b/c": must be <group>/<version> or <version>',
            "o[1].kind: Required value: must not be empty",
            "o[1].uid: Required value: must not be empty",
            'o[2]: Invalid value: {"apiVersion":"v1","kind":"Event","name":"e","uid":"2"}: '
            "/v1, Kind=Event is disallowed from being an owner",
        ]


def test_managed_fields_operation_from_137() -> None:
    entries = [{"operation": "Bogus"}, {}]
    with release.following("1.37"):
        assert [e.message for e in meta.validate_managed_fields(entries, ("m",))] == [
            'm[0].operation: Unsupported value: "Bogus": supported values: "Apply", "Update"',
            "m[1].operation: Required value: must not be empty",
        ]


def test_hostname_override_kept_from_135() -> None:
    pod_ = {
        "metadata": {"name": "p"},
        "spec": {"containers": [{"name": "c", "image": "i"}], "hostnameOverride": "Bad_Name"},
    }
    with release.following("1.34"):
        assert pod.validate_pod(pod_) == []
    with release.following("1.35"):
        (error,) = pod.validate_pod(pod_)
        assert error.field == "spec.hostnameOverride"
