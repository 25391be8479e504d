"""The one kubectl runner: the library's local-cluster code and the integration tests use it.

It runs the cluster-matched kubectl (``build.kubectl_path``) against one kubeconfig, under the
private ``UMASK``, with kubectl's discovery/HTTP cache next to the kubeconfig (inside the
cluster's directory, which ``down`` removes) rather than in ``~/.kube``.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import yaml

from tfjob_kit.cluster import build
from tfjob_kit.cluster.paths import UMASK, ClusterError


class Kubectl:
    """Thin runner for the cluster-matched kubectl against one kubeconfig.

    ``cache=False`` leaves kubectl's cache where kubectl puts it (for a kubeconfig that is not
    a local cluster's, whose directory is not ours to write in).
    """

    def __init__(self, kubeconfig: Path, binary: str | None = None, cache: bool = True) -> None:
        self.kubeconfig = kubeconfig
        self.binary = binary or build.kubectl_path()
        self.cache = cache

    def command(self, *args: str) -> list[str]:
        cache = ["--cache-dir", str(self.kubeconfig.parent / "kubectl-cache")] if self.cache else []
        return [self.binary, "--kubeconfig", str(self.kubeconfig), *cache, *args]

    def run(
        self, *args: str, stdin: str | None = None, check: bool = True, timeout: float = 120
    ) -> subprocess.CompletedProcess[str]:
        """Run ``kubectl ARGS``; with ``check``, a non-zero exit raises ClusterError (so does
        running past ``timeout`` seconds, checked or not)."""
        try:
            proc = subprocess.run(
                self.command(*args),
                input=stdin,
                capture_output=True,
                text=True,
                timeout=timeout,
                check=False,
                umask=UMASK,
            )
        except subprocess.TimeoutExpired as exc:
            raise ClusterError(
                f"`kubectl {' '.join(args)}` did not finish in {timeout:.0f}s"
            ) from exc
        if check and proc.returncode != 0:
            raise ClusterError(f"`kubectl {' '.join(args)}` failed: {proc.stderr.strip()}")
        return proc

    def apply(self, docs: Sequence[dict[str, Any]] | str, *extra: str) -> None:
        """Server-side apply (field manager ``tfjob-kit-cluster``, conflicts forced)."""
        text = docs if isinstance(docs, str) else yaml.safe_dump_all(docs, sort_keys=False)
        self.run(
            "apply",
            "--server-side",
            "--force-conflicts",
            "--field-manager=tfjob-kit-cluster",
            "-f",
            "-",
            *extra,
            stdin=text,
        )

    def get_json(self, *args: str) -> dict[str, Any] | None:
        """``kubectl get ARGS -o json``, or None when it fails (say, not found)."""
        proc = self.run("get", *args, "-o", "json", check=False)
        if proc.returncode != 0:
            return None
        data: dict[str, Any] = json.loads(proc.stdout)
        return data

    def crds_established(self, names: Sequence[str]) -> bool:
        """Every one of the CRDs ``names`` is Established (its API is served)."""
        for crd in names:
            obj = self.get_json("crd", crd) or {}
            conditions = obj.get("status", {}).get("conditions") or []
            if not any(
                c.get("type") == "Established" and c.get("status") == "True" for c in conditions
            ):
                return False
        return True

    def ready(self) -> bool:
        """The API server answers ``/readyz``."""
        try:
            return self.run("get", "--raw", "/readyz", check=False, timeout=10).returncode == 0
        except subprocess.TimeoutExpired:
            return False
