"""The pure half of kube/access.py: what a review asks, and how a permission reads in words.
(The answers are the API server's: tests/integration/test_preflight.py asks a real one.)"""

from __future__ import annotations

from typing import Any

import pytest

from tfjob_kit.kube import access


def test_attributes_keep_the_fields_that_have_a_value() -> None:
    asked = {"verb": "create", "group": "", "resource": "namespaces", "name": None}
    assert access.attributes(asked) == {"verb": "create", "resource": "namespaces"}


@pytest.mark.parametrize(
    ("asked", "words"),
    [
        (
            {"verb": "create", "resource": "namespaces", "resources": "x"},
            "unknown field(s) resources",
        ),
        ({"resource": "namespaces"}, "no verb"),
        ({"verb": "", "resource": "namespaces"}, "no verb"),
    ],
)
def test_a_malformed_review_is_refused(asked: dict[str, Any], words: str) -> None:
    with pytest.raises(ValueError, match=words.replace("(", r"\(").replace(")", r"\)")):
        access.attributes(asked)


@pytest.mark.parametrize(
    ("attributes", "words"),
    [
        ({"verb": "list", "resource": "nodes"}, "list nodes"),
        (
            {"verb": "create", "group": "apps", "resource": "deployments", "namespace": "ci"},
            "create deployments.apps in namespace 'ci'",
        ),
        (
            {"verb": "get", "resource": "pods", "subresource": "log", "name": "p-0"},
            "get pods/log 'p-0'",
        ),
    ],
)
def test_a_permission_in_words(attributes: dict[str, str], words: str) -> None:
    assert access.describe(attributes) == words
    assert access.Review(attributes, allowed=False).as_dict()["description"] == words
