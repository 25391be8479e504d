"""The local Kueue controller-manager (``tfjob-kit cluster up --kueue``): the real controller,
built from the Go module pinned in versions.toml ([kueue]), as a local process with the kueue
chart's CRDs (their conversion webhooks pointed at it too), webhooks and identity
(``local_controller``), and the chart's integrations: TFJobs, and TrainJobs where the cluster
runs Trainer (``up --trainer``; elsewhere there is no TrainJob CRD, and a MultiKueue manager would
look for one on its workers).

Its own certificate rotator stays on, as in the chart (without it Kueue insists on a metrics
certificate at a fixed path, /etc/kueue/metrics/certs): it writes the webhook certificate into
the cluster's private directory (the Configuration's webhook.certDir) and the chart's Secret, and
injects the CA into the webhook configurations and the CRDs' conversion webhooks, with exactly
the chart's rules.

Its visibility API stays off, as in the chart: an APIService cannot reach a process on the host's
loopback interface.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tfjob_kit.cluster import procs, trainer
from tfjob_kit.cluster.local_controller import LocalController
from tfjob_kit.cluster.paths import state_dir

TRAINJOB_FRAMEWORK = "trainer.kubeflow.org/trainjob"

# Every Kueue CRD (the controller-manager watches them all); tools/gen_upstream_crds.py copies
# these from the module into charts/kueue.
CRDS = tuple(
    f"{plural}.kueue.x-k8s.io"
    for plural in (
        "admissionchecks",
        "clusterqueues",
        "cohorts",
        "localqueues",
        "multikueueclusters",
        "multikueueconfigs",
        "provisioningrequestconfigs",
        "resourceflavors",
        "topologies",
        "workloadpriorityclasses",
        "workloads",
    )
)


def cert_dir(name: str) -> Path:
    return state_dir(name) / "kueue-certs"


def configuration(name: str, ports: dict[str, int]) -> dict[str, Any]:
    """The chart's Configuration, made local (``LocalController.local_configuration``, the
    certificate in the cluster's directory), without TrainJobs where Trainer does not run."""
    config = CONTROLLER.local_configuration(ports, cert_dir(name))
    if not any(r.name == trainer.CONTROLLER.process for r in procs.records(name)):
        frameworks = config["integrations"]["frameworks"]
        config["integrations"]["frameworks"] = [f for f in frameworks if f != TRAINJOB_FRAMEWORK]
    return config


CONTROLLER = LocalController(
    process="kueue-controller-manager",
    chart="kueue",
    label="Kueue",
    crds=CRDS,
    configure=configuration,
    cert_dir=cert_dir,
    rotates_certificate=True,
)
