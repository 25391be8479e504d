"""The local JobSet controller (``tfjob-kit cluster up --jobset``): the real controller, built
from the Go module pinned in versions.toml ([jobset]), as a local process with the jobset chart's
CRD, webhooks and identity (``local_controller``). Its Configuration names the certificate
directory itself (``webhook.certDir``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tfjob_kit.cluster.local_controller import LocalController
from tfjob_kit.cluster.paths import state_dir


def cert_dir(name: str) -> Path:
    return state_dir(name) / "jobset-certs"


def configuration(name: str, ports: dict[str, int]) -> dict[str, Any]:
    """The chart's Configuration, made local: loopback ports, the certificate from the cluster's
    directory (the rotator off), no leader election, no metrics."""
    config = CONTROLLER.local_configuration(ports, cert_dir(name))
    config["internalCertManagement"] = {"enable": False}
    return config


CONTROLLER = LocalController(
    process="jobset-controller",
    chart="jobset",
    label="JobSet",
    crds=("jobsets.jobset.x-k8s.io",),
    configure=configuration,
    cert_dir=cert_dir,
)
