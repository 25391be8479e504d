"""The shortcuts that keep the offline pod validation fast give the answers of the full checks."""

from __future__ import annotations

import copy

import pytest

from tfjob_kit.podcheck import names, volume_defaults, volume_sources

PATH = ("spec", "volumes", 3, "projected")


def test_token_projection_is_valid_by_the_full_check(monkeypatch: pytest.MonkeyPatch) -> None:
    token = copy.deepcopy(volume_defaults._TOKEN_PROJECTION)
    assert volume_defaults.is_token_projection(token)
    monkeypatch.setattr(volume_sources, "is_token_projection", lambda src: False)
    assert volume_sources._projected(token, PATH) == []


@pytest.mark.parametrize(
    ("where", "value"),
    [("defaultMode", 420.0), ("defaultMode", 0o644 + 1), ("expirationSeconds", 3607.0)],
)
def test_token_projection_shortcut_needs_the_same_types(where: str, value: object) -> None:
    token = copy.deepcopy(volume_defaults._TOKEN_PROJECTION)
    if where == "defaultMode":
        token["defaultMode"] = value
    else:
        token["sources"][0]["serviceAccountToken"]["expirationSeconds"] = value
    assert not volume_defaults.is_token_projection(token)


def test_token_projection_shortcut_with_a_short_expiry_checks() -> None:
    token = copy.deepcopy(volume_defaults._TOKEN_PROJECTION)
    token["sources"][0]["serviceAccountToken"]["expirationSeconds"] = 60
    assert [e.message for e in volume_sources._projected(token, PATH)] == [
        "spec.volumes[3].projected.sources[0].serviceAccountToken.expirationSeconds: "
        "Invalid value: 60: may not specify a duration less than 10 minutes"
    ]


@pytest.mark.parametrize(
    "check",
    [
        names.is_qualified_name,
        names.is_valid_label_value,
        names.is_dns1123_label,
        names.is_dns1123_subdomain,
        names.is_relaxed_env_var_name,
        names.is_config_map_key,
    ],
)
def test_remembered_checks_answer_as_before(check: object) -> None:
    values = ["ok", "app.kubernetes.io/name", "Bad_Value!", "", "a" * 70, "x.y", "-x", "A=B", "U P"]
    assert callable(check)
    first = [check(v) for v in values]
    again = [check(v) for v in values]
    assert first == again
    assert any(first) and not all(first)  # valid and invalid values both seen
    fresh = check("ok")
    fresh.append("changed by a caller")
    assert check("ok") == first[0]  # a remembered answer is a new list each time
