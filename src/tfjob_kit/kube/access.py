"""What the credentials may do, as the API server's authorizer answers it.

Each permission is asked with a SelfSubjectAccessReview (its ``resourceAttributes``: verb, group,
resource, and optionally version, subresource, name and namespace; no namespace asks
cluster-wide). The server answers and stores nothing, so the reviews are safe in check mode.
All of them are asked in one go, in parallel, with one client; ``tfjob.kit.access_info`` runs
them, and site.yml's preflight asks for what the bootstrap needs with it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from tfjob_kit.kube.apply import parallel
from tfjob_kit.kube.client import Client

# The resourceAttributes of a review, in the order they are described.
FIELDS = ("verb", "group", "version", "resource", "subresource", "name", "namespace")


@dataclass(frozen=True)
class Review:
    """One permission asked about, and the authorizer's answer: allowed or not (RBAC never
    denies outright, it only does not allow), and why where the server says."""

    attributes: dict[str, str]
    allowed: bool
    reason: str = ""
    evaluation_error: str = ""

    def describe(self) -> str:
        """The permission in words: ``create deployments.apps``, ``get pods/log in namespace
        "ci"``, ``list nodes`` (cluster-wide unless a namespace is named)."""
        return describe(self.attributes)

    def as_dict(self) -> dict[str, Any]:
        return {
            **{f: self.attributes.get(f, "") for f in FIELDS},
            "description": self.describe(),
            "allowed": self.allowed,
            "reason": self.reason,
            "evaluation_error": self.evaluation_error,
        }


def describe(attributes: Mapping[str, str]) -> str:
    resource = attributes.get("resource", "")
    if attributes.get("subresource"):
        resource = f"{resource}/{attributes['subresource']}"
    if attributes.get("group"):
        resource = f"{resource}.{attributes['group']}"
    words = [attributes.get("verb", ""), resource]
    if attributes.get("name"):
        words.append(repr(attributes["name"]))
    if attributes.get("namespace"):
        words.append(f"in namespace {attributes['namespace']!r}")
    return " ".join(w for w in words if w)


def attributes(asked: Mapping[str, Any]) -> dict[str, str]:
    """A review's resourceAttributes from what was asked: the known fields that have a value,
    as strings. Raises ValueError for an unknown field or a missing verb."""
    unknown = sorted(set(asked) - set(FIELDS))
    if unknown:
        raise ValueError(
            f"unknown field(s) {', '.join(unknown)} in {dict(asked)!r}; a review takes "
            + ", ".join(FIELDS)
        )
    found = {f: str(asked[f]) for f in FIELDS if asked.get(f) not in (None, "")}
    if "verb" not in found:
        raise ValueError(f"no verb in {dict(asked)!r}: a review asks whether a verb is allowed")
    return found


def review(client: Client, asked: Iterable[Mapping[str, Any]]) -> list[Review]:
    """Ask about every permission, in parallel; the answers in the order asked. Raises
    ValueError for a malformed entry (before anything is asked) and KubeError when a review
    cannot be made (the server unreachable, or the credentials rejected)."""
    wanted = [attributes(a) for a in asked]

    def ask(attrs: dict[str, str]) -> Review:
        status = client.access_review(attrs)
        return Review(
            attrs,
            allowed=status.get("allowed") is True,
            reason=str(status.get("reason") or ""),
            evaluation_error=str(status.get("evaluationError") or ""),
        )

    return parallel(ask, wanted) if wanted else []


def not_allowed(reviews: Iterable[Review]) -> list[Review]:
    """The reviews the credentials may not do (denied outright, or simply not allowed)."""
    return [r for r in reviews if not r.allowed]
