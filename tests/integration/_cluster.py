"""Helpers for the integration tests: a kubectl-driven view of the local cluster, through the
library's own kubectl runner (``tfjob_kit.cluster.kubectl.Kubectl``)."""

from __future__ import annotations

import json
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from tfjob_kit.cluster import local
from tfjob_kit.cluster.kubectl import Kubectl

T = TypeVar("T")


@dataclass
class Cluster:
    kubeconfig: Path
    name: str | None = None
    runner: Kubectl = field(init=False)

    def __post_init__(self) -> None:
        # A local cluster's kubectl cache stays inside its private directory (next to its
        # kubeconfig); a kubeconfig given from outside keeps kubectl's own cache.
        self.runner = Kubectl(self.kubeconfig, cache=self.name is not None)

    def kubectl(
        self, *args: str, stdin: str | None = None, check: bool = True, timeout: float = 120
    ) -> subprocess.CompletedProcess[str]:
        proc = self.runner.run(*args, stdin=stdin, check=False, timeout=timeout)
        if check and proc.returncode != 0:
            raise AssertionError(f"{' '.join(args)} failed:\n{proc.stdout}\n{proc.stderr}")
        return proc

    def service_account_token(
        self, namespace: str, account: str, role: str, verbs: str, resources: str
    ) -> str:
        """A token of a new ServiceAccount bound to a new Role (verbs on resources, as
        `kubectl create role` takes them) in the namespace."""
        self.kubectl("create", "serviceaccount", account, "-n", namespace)
        self.kubectl(
            "create", "role", role, "-n", namespace, f"--verb={verbs}", f"--resource={resources}"
        )
        self.kubectl(
            "create",
            "rolebinding",
            role,
            "-n",
            namespace,
            f"--role={role}",
            f"--serviceaccount={namespace}:{account}",
        )
        return self.kubectl("create", "token", account, "-n", namespace).stdout.strip()

    def gone(self, kind: str, name: str, namespace: str | None = None) -> bool:
        """Whether the server answers that the object does not exist (NotFound): True when
        it does not, False when it does. Anything else (an unreachable server, a kind the
        server does not serve, a denial) fails the test: a gone check never takes an error
        for an absence. ``kubectl get --ignore-not-found`` exits 0 with no output exactly
        when the server answered NotFound."""
        where = ("-n", namespace) if namespace else ()
        proc = self.kubectl("get", kind, name, *where, "--ignore-not-found", "-o", "name")
        return proc.stdout.strip() == ""

    def get(self, *args: str) -> Any:
        return json.loads(self.kubectl("get", *args, "-o", "json").stdout)

    def items(self, *args: str) -> list[dict[str, Any]]:
        result: list[dict[str, Any]] = self.get(*args)["items"]
        return result

    def apply_file(self, path: Path, namespace: str) -> None:
        # Plain client-side kubectl apply, as a user would do it.
        self.kubectl("apply", "-n", namespace, "-f", str(path))

    def diagnostics(self, namespace: str) -> str:
        parts = []
        for args in (
            ("get", "tfjobs,podgroups,pods,services", "-n", namespace, "-o", "wide"),
            ("get", "events", "-n", namespace, "--sort-by=.lastTimestamp"),
        ):
            proc = self.kubectl(*args, check=False)
            parts.append(f"$ kubectl {' '.join(args)}\n{proc.stdout}{proc.stderr}")
        if self.name:
            logs = local.cluster_dir(self.name) / "logs"
            for log in ("training-operator.log", "vc-scheduler.log"):
                path = logs / log
                if path.exists():
                    lines = path.read_text(errors="replace").splitlines()[-25:]
                    parts.append(f"--- {path} (tail)\n" + "\n".join(lines))
        return "\n".join(parts)

    def wait_for(
        self,
        what: str,
        probe: Callable[[], T | None],
        namespace: str,
        timeout: float = 90.0,
        interval: float = 1.0,
    ) -> T:
        deadline = time.monotonic() + timeout
        while True:
            value = probe()
            if value:
                return value
            if time.monotonic() > deadline:
                raise AssertionError(
                    f"timed out after {timeout:.0f}s waiting for {what}\n"
                    + self.diagnostics(namespace)
                )
            time.sleep(interval)
