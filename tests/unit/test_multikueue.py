"""A MultiKueue worker's kubeconfig, as the manager's Secret holds it (tfjob_kit.kube.multikueue):
its shape, the token's expiry read back, and when a run renews it. The module and the role are
tested on three local clusters that run the real Kueue (tests/integration/test_multikueue.py)."""

from __future__ import annotations

import base64
import json

import yaml

from tfjob_kit.kube import multikueue

CA = b"-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"
WEEK = 604800


def _jwt(claims: dict[str, object]) -> str:
    def part(data: dict[str, object]) -> str:
        return base64.urlsafe_b64encode(json.dumps(data).encode()).decode().rstrip("=")

    return f"{part({'alg': 'RS256'})}.{part(claims)}.signature"


def _secret(text: str) -> dict[str, object]:
    return {"data": {"kubeconfig": base64.b64encode(text.encode()).decode()}}


def test_the_kubeconfig_holds_nothing_read_from_a_file() -> None:
    """What Kueue accepts: the server, the CA inline and a token; no path, no exec."""
    config = yaml.safe_load(multikueue.kubeconfig("worker-a", "https://10.0.0.1:6443", CA, "t"))
    assert config["clusters"] == [
        {
            "name": "worker-a",
            "cluster": {
                "server": "https://10.0.0.1:6443",
                "certificate-authority-data": base64.b64encode(CA).decode(),
            },
        }
    ]
    assert config["users"] == [{"name": "worker-a", "user": {"token": "t"}}]
    assert config["current-context"] == "worker-a"


def test_what_the_secret_holds_is_read_back() -> None:
    token = _jwt({"exp": 2_000_000_000, "sub": "system:serviceaccount:kueue-system:x"})
    text = multikueue.kubeconfig("worker-a", "https://w:6443", CA, token)
    assert multikueue.held(_secret(text)) == multikueue.Held("https://w:6443", CA, 2e9)
    assert multikueue.held(None) is None
    assert multikueue.held(_secret("not: [a, kubeconfig")) is None
    assert multikueue.held({"data": {"kubeconfig": "!!"}}) is None


def test_a_token_whose_expiry_cannot_be_read() -> None:
    assert multikueue.token_expiry("opaque") is None
    assert multikueue.token_expiry("a.!!!.c") is None
    assert multikueue.token_expiry(_jwt({"sub": "x"})) is None
    assert multikueue.token_expiry(_jwt({"exp": "soon"})) is None


def test_a_token_is_renewed_once_half_its_lifetime_is_gone() -> None:
    now = 1_000_000.0
    fresh = multikueue.Held("https://w:6443", CA, now + WEEK)
    assert multikueue.renewal_reason(fresh, "https://w:6443", CA, WEEK, now) == ""
    half = multikueue.Held("https://w:6443", CA, now + WEEK / 2 - 1)
    assert multikueue.renewal_reason(half, "https://w:6443", CA, WEEK, now) == (
        "its token expires in 302399 s"
    )
    gone = multikueue.Held("https://w:6443", CA, now - 1)
    assert multikueue.renewal_reason(gone, "https://w:6443", CA, WEEK, now) == (
        "its token has expired"
    )


def test_a_new_address_or_ca_renews_at_once() -> None:
    now = 1_000_000.0
    held = multikueue.Held("https://w:6443", CA, now + WEEK)
    assert multikueue.renewal_reason(None, "https://w:6443", CA, WEEK, now) == "no kubeconfig yet"
    assert multikueue.renewal_reason(held, "https://v:6443", CA, WEEK, now) == (
        "the worker's server changed (https://w:6443 -> https://v:6443)"
    )
    assert multikueue.renewal_reason(held, "https://w:6443", b"other", WEEK, now) == (
        "the worker's CA changed"
    )
    unreadable = multikueue.Held("https://w:6443", CA, None)
    assert multikueue.renewal_reason(unreadable, "https://w:6443", CA, WEEK, now) == (
        "its token's expiry cannot be read"
    )
