"""The chart tests: `helm lint` and `helm template` of each chart in charts/ (no cluster), one
module per chart. Every test here is marked `helm` (tests/conftest.py): it needs the helm binary
that `make cluster-build` builds, and fails when it is not built.

Each fixture below is one chart, rendered with the release, namespace and Kubernetes version of
`_chart.SETUP`."""

from __future__ import annotations

import pytest

from ._chart import Chart


@pytest.fixture(scope="session")
def operator(helm: str) -> Chart:
    return Chart.named("training-operator", helm)


@pytest.fixture(scope="session")
def tfjob(helm: str) -> Chart:
    return Chart.named("tfjob", helm)


@pytest.fixture(scope="session")
def volcano(helm: str) -> Chart:
    return Chart.named("volcano", helm)


@pytest.fixture(scope="session")
def kube_batch(helm: str) -> Chart:
    return Chart.named("kube-batch", helm)


@pytest.fixture(scope="session")
def device_plugin(helm: str) -> Chart:
    return Chart.named("nvidia-device-plugin", helm)


@pytest.fixture(scope="session")
def jobset(helm: str) -> Chart:
    return Chart.named("jobset", helm)


@pytest.fixture(scope="session")
def trainer(helm: str) -> Chart:
    return Chart.named("trainer", helm)


@pytest.fixture(scope="session")
def kueue(helm: str) -> Chart:
    return Chart.named("kueue", helm)
