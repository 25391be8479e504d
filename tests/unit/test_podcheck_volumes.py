"""podcheck.volumes: the pure parts (defaults, canonical quantities, host:port splitting) and
robustness against values of the wrong type. What the checks say is compared with the server in
tests/integration/test_podcheck_volumes.py."""

from __future__ import annotations

import copy
import random
from typing import Any

import pytest

from tfjob_kit import quantity
from tfjob_kit.podcheck import volume_sources, volumes
from tfjob_kit.podcheck.field import FieldError


@pytest.mark.parametrize(
    ("text", "canonical"),
    [
        ("1", "1"),
        ("1000m", "1"),
        ("0.001", "1m"),
        ("1k", "1k"),
        ("2000", "2k"),
        ("1500", "1500"),
        ("1024Ki", "1Mi"),
        ("0.5Gi", "512Mi"),
        ("1023Ki", "1023Ki"),
        ("1536", "1536"),
        ("100Mi", "100Mi"),
        ("-1024Mi", "-1Gi"),
        ("1e3", "1e3"),
        ("1000e0", "1e3"),
        ("1E", "1E"),
        ("100m", "100m"),
        ("0", "0"),
    ],
)
def test_quantity_string_is_the_canonical_form(text: str, canonical: str) -> None:
    decoded = quantity.decode(text)
    assert decoded is not None and decoded.string() == canonical


@pytest.mark.parametrize(
    ("pair", "ok"),
    [
        ("a:1", True),
        ("a:", True),
        ("[::1]:2", True),
        ("[b]:", True),
        ("a", False),
        ("::1", False),
        ("[::1]", False),
        ("[a]b:1", False),
        ("a]:1", False),
        ("c:d:e", False),
    ],
)
def test_split_host_port(pair: str, ok: bool) -> None:
    assert volume_sources._split_host_port(pair) is ok


@pytest.mark.usefixtures("on_1_34")
def test_defaults_fill_each_source() -> None:
    spec: dict[str, Any] = {
        "volumes": [
            {"name": "plain"},
            {"name": "nulls", "secret": None, "configMap": None},
            {"name": "s", "secret": {"secretName": "s"}},
            {"name": "h", "hostPath": {"path": "/x"}},
            {
                "name": "d",
                "downwardAPI": {"items": [{"path": "p", "fieldRef": {"fieldPath": "x"}}]},
            },
            {
                "name": "p",
                "projected": {
                    "sources": [
                        {"serviceAccountToken": {"path": "t"}},
                        {"clusterTrustBundle": {"path": "b"}, "podCertificate": {}},
                    ]
                },
            },
            {"name": "a", "azureDisk": {"diskName": "d", "diskURI": "u"}},
            {"name": "e", "ephemeral": {"volumeClaimTemplate": {"spec": {}}}},
        ]
    }
    volumes.set_defaults(spec)
    by_name = {v["name"]: v for v in spec["volumes"]}
    assert by_name["plain"]["emptyDir"] == {}
    assert by_name["nulls"]["emptyDir"] == {}
    assert by_name["s"]["secret"]["defaultMode"] == 0o644
    assert by_name["h"]["hostPath"]["type"] == ""
    assert by_name["d"]["downwardAPI"]["defaultMode"] == 0o644
    assert by_name["d"]["downwardAPI"]["items"][0]["fieldRef"]["apiVersion"] == "v1"
    projected = by_name["p"]["projected"]
    assert projected["defaultMode"] == 0o644
    assert projected["sources"] == [
        {"serviceAccountToken": {"path": "t", "expirationSeconds": 3600}},
        {},
    ]
    assert by_name["a"]["azureDisk"] == {
        "diskName": "d",
        "diskURI": "u",
        "cachingMode": "ReadWrite",
        "fsType": "ext4",
        "readOnly": False,
        "kind": "Shared",
    }
    assert by_name["e"]["ephemeral"]["volumeClaimTemplate"]["spec"]["volumeMode"] == "Filesystem"


@pytest.mark.usefixtures("on_1_34")
def test_image_volumes_and_their_mounts_are_dropped() -> None:
    spec: dict[str, Any] = {
        "volumes": [{"name": "model", "image": {"reference": "m"}}, {"name": "data"}],
        "containers": [
            {"name": "c", "volumeMounts": [{"name": "model", "mountPath": "/m"}, {"name": "data"}]}
        ],
        "initContainers": [{"name": "i", "volumeMounts": [{"name": "model", "mountPath": "/m"}]}],
    }
    volumes.set_defaults(spec)
    assert spec["volumes"] == [{"name": "data", "emptyDir": {}}]
    assert spec["containers"][0]["volumeMounts"] == [{"name": "data"}]
    assert spec["initContainers"][0]["volumeMounts"] == []


def test_the_token_is_mounted_where_nothing_is() -> None:
    token = volumes.SERVICE_ACCOUNT_TOKEN_PATH
    spec: dict[str, Any] = {
        "volumes": [{"name": "data", "emptyDir": {}}],
        "initContainers": [{"name": "i"}],
        "containers": [
            {"name": "a", "volumeMounts": [{"name": "data", "mountPath": token}]},
            {"name": "b", "volumeMounts": [{"name": "data", "mountPath": "/d"}]},
        ],
    }
    volumes.mount_service_account_token(spec)
    name = spec["volumes"][1]["name"]
    assert name.startswith("kube-api-access-")
    added = {"name": name, "readOnly": True, "mountPath": token}
    assert spec["initContainers"][0]["volumeMounts"] == [added]
    assert spec["containers"][0]["volumeMounts"] == [{"name": "data", "mountPath": token}]
    assert spec["containers"][1]["volumeMounts"][1] == added
    valid, errs = volumes.validate_volumes(spec, ("spec",))
    assert name in valid and not errs


def test_the_token_reuses_a_kube_api_access_volume_or_stays_away() -> None:
    spec: dict[str, Any] = {
        "volumes": [{"name": "kube-api-access-mine", "secret": {"secretName": "s"}}],
        "containers": [{"name": "a"}],
    }
    volumes.mount_service_account_token(spec)
    assert len(spec["volumes"]) == 1
    assert spec["containers"][0]["volumeMounts"][0]["name"] == "kube-api-access-mine"
    spec = {"automountServiceAccountToken": False, "containers": [{"name": "a"}]}
    volumes.mount_service_account_token(spec)
    assert spec == {"automountServiceAccountToken": False, "containers": [{"name": "a"}]}


def test_valid_volumes_are_returned_by_name() -> None:
    spec: dict[str, Any] = {
        "volumes": [
            {"name": "good", "emptyDir": {}},
            {"name": "bad", "secret": {}},
            {"name": "good", "emptyDir": {}},
        ]
    }
    valid, errs = volumes.validate_volumes(spec, ("spec",))
    assert list(valid) == ["good"]
    assert [e.message for e in errs] == [
        "spec.volumes[1].secret.secretName: Required value",
        'spec.volumes[2].name: Duplicate value: "good"',
    ]
    mounts = volumes.validate_volume_mounts(
        {"volumeMounts": [{"name": "bad", "mountPath": "/b"}]}, valid, ("spec", "containers", 0)
    )
    assert [e.message for e in mounts] == [
        'spec.containers[0].volumeMounts[0].name: Not found: "bad"'
    ]
    assert all(e.origin for e in errs + mounts)


_JUNK: list[Any] = [None, 0, -1, 1.5, True, "", "x", "/a/../b", [], [1], {}, {"a": 1}]


def _mutate_randomly(value: Any, rng: random.Random) -> Any:
    """Replace random leaves and containers of a JSON value by values of the wrong type."""
    if rng.random() < 0.15:
        return copy.deepcopy(rng.choice(_JUNK))
    if isinstance(value, dict):
        return {k: _mutate_randomly(v, rng) for k, v in value.items()}
    if isinstance(value, list):
        return [_mutate_randomly(v, rng) for v in value]
    return value


def test_values_of_the_wrong_type_never_raise() -> None:
    from podcases.volumes import MUTATIONS

    rng = random.Random(11)
    base = {"metadata": {}, "spec": {"containers": [{"name": "c", "image": "i"}]}}
    for mutation in MUTATIONS:
        template = copy.deepcopy(base)
        mutation.mutate(template)
        for _ in range(5):
            spec = _mutate_randomly(template["spec"], rng)
            if not isinstance(spec, dict):
                continue
            volumes.set_defaults(spec)
            volumes.mount_service_account_token(spec)
            valid, errs = volumes.validate_volumes(spec, ("spec",), pod_name="p")
            containers = spec.get("containers")
            for container in containers if isinstance(containers, list) else []:
                if isinstance(container, dict):
                    errs.extend(volumes.validate_volume_mounts(container, valid, ("spec",)))
            assert all(isinstance(e, FieldError) and e.message for e in errs)
