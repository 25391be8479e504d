"""The API server's verdict on a pod, for the podcheck differential tests: a create with
``dryRun=All`` through the toolkit's own client (``kube.client.Client.dry_run_create``, the call
the preflight makes), in the ``default`` namespace, whose ServiceAccount always exists. Nothing is
stored."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tfjob_kit.kube.client import Client
from tfjob_kit.kube.connection import Connection

NAMESPACE = "default"
DECODE = "<decode>"
"""The field of the one cause of a pod the server could not decode (400 BadRequest)."""

Causes = list[tuple[str, str]]


def causes(status: int, body: dict[str, Any]) -> Causes:
    """The server's answer as sorted (field, message) causes: none when it took the pod."""
    if status == 201:
        return []
    if status == 400 and body.get("reason") == "BadRequest":
        return [(DECODE, str(body.get("message", "")))]
    assert status == 422 and body.get("reason") == "Invalid", (status, body)
    return sorted((c.get("field", ""), c.get("message", "")) for c in body["details"]["causes"])


class PodDryRun:
    """Dry-run pod creates on one cluster; safe to share between threads."""

    def __init__(self, kubeconfig: Path) -> None:
        self.client = Client(Connection(kubeconfig=str(kubeconfig)))

    def __enter__(self) -> PodDryRun:
        return self

    def __exit__(self, *exc: object) -> None:
        self.client.close()

    def __call__(self, pod: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        """(HTTP status, body): the pod the server would store, or its Status."""
        return self.client.dry_run_create("pods", NAMESPACE, pod)

    def causes(self, pod: dict[str, Any]) -> Causes:
        return causes(*self(pod))

    def answer(self, pod: dict[str, Any]) -> tuple[Causes, dict[str, Any]]:
        """The causes, and the pod the server would store (empty when it refuses it)."""
        status, body = self(pod)
        return causes(status, body), body if status == 201 else {}
