"""The local Kubeflow Trainer v2 controller-manager (``tfjob-kit cluster up --trainer``): the real
controller, built from the Go module pinned in versions.toml ([trainer]), as a local process with
the trainer chart's CRDs, webhooks and identity (``local_controller``). It runs beside the local
JobSet controller, which makes the Jobs of the JobSets it creates.

Its Configuration has no certificate directory: with its certificate rotator off, the webhook
server reads controller-runtime's default, ``$TMPDIR/k8s-webhook-server/serving-certs``, so the
process gets a ``TMPDIR`` of the cluster's own, private directory.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from tfjob_kit.cluster.local_controller import LocalController
from tfjob_kit.cluster.paths import state_dir


def temp_dir(name: str) -> Path:
    return state_dir(name) / "trainer-tmp"


def cert_dir(name: str) -> Path:
    return temp_dir(name) / "k8s-webhook-server" / "serving-certs"


def environment(name: str) -> dict[str, str]:
    return {**os.environ, "TMPDIR": str(temp_dir(name))}


def configuration(name: str, ports: dict[str, int]) -> dict[str, Any]:
    """The chart's Configuration, made local: the webhook and health endpoints on loopback
    ports, the certificate rotator off, no leader election, no metrics."""
    config = CONTROLLER.local_configuration(ports)
    config["certManagement"] = {**config["certManagement"], "enable": False}
    return config


CONTROLLER = LocalController(
    process="trainer-controller-manager",
    chart="trainer",
    label="Kubeflow Trainer",
    crds=(
        "trainjobs.trainer.kubeflow.org",
        "trainingruntimes.trainer.kubeflow.org",
        "clustertrainingruntimes.trainer.kubeflow.org",
    ),
    configure=configuration,
    cert_dir=cert_dir,
    environment=environment,
)
