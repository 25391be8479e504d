"""The checks every chart gets, each over every chart's scenarios: the conventions, `helm lint
--strict`, the chart labels, Pod Security "restricted", least-privilege RBAC, pod templates the
Kubernetes schema accepts, and a deterministic render. What each chart's module says of it is
its `SHARED` (`_chart.Shared`)."""

from __future__ import annotations

import pytest

from . import (
    test_jobset,
    test_kube_batch,
    test_kueue,
    test_nvidia_device_plugin,
    test_tfjob,
    test_trainer,
    test_training_operator,
    test_volcano,
)
from ._chart import (
    CHARTS,
    Args,
    Chart,
    Shared,
    check_chart_conventions,
    check_chart_labels,
    check_helm_lint_strict,
    check_pod_security_restricted,
    check_pod_templates_match_the_kubernetes_schema,
    check_rbac_is_least_privilege,
    check_render_is_deterministic,
    scenario_id,
)

EVERY_CHART = [
    module.SHARED
    for module in (
        test_jobset,
        test_kube_batch,
        test_kueue,
        test_nvidia_device_plugin,
        test_tfjob,
        test_trainer,
        test_training_operator,
        test_volcano,
    )
]
SCENARIOS = [
    pytest.param(shared, args, id=f"{shared.chart}-{scenario_id(args)}")
    for shared in EVERY_CHART
    for args in shared.scenarios
]


def rendered_chart(request: pytest.FixtureRequest, shared: Shared) -> Chart:
    chart: Chart = request.getfixturevalue(shared.fixture)
    return chart


def test_every_chart_is_checked() -> None:
    assert sorted(shared.chart for shared in EVERY_CHART) == sorted(
        path.parent.name for path in CHARTS.glob("*/Chart.yaml")
    )


@pytest.mark.parametrize("shared", EVERY_CHART, ids=lambda shared: shared.chart)
def test_chart_conventions(shared: Shared) -> None:
    check_chart_conventions(CHARTS / shared.chart)


@pytest.mark.parametrize(("shared", "args"), SCENARIOS)
def test_helm_lint_strict(request: pytest.FixtureRequest, shared: Shared, args: Args) -> None:
    check_helm_lint_strict(rendered_chart(request, shared), args)


@pytest.mark.parametrize(("shared", "args"), SCENARIOS)
def test_every_object_carries_the_chart_labels(
    request: pytest.FixtureRequest, shared: Shared, args: Args
) -> None:
    chart = rendered_chart(request, shared)
    check_chart_labels(chart, chart.rendered(*args))


@pytest.mark.parametrize(("shared", "args"), SCENARIOS)
def test_workloads_meet_pod_security_restricted(
    request: pytest.FixtureRequest, shared: Shared, args: Args
) -> None:
    docs = rendered_chart(request, shared).rendered(*args)
    check_pod_security_restricted(docs, shared.not_restricted, pods=args not in shared.without_pods)


@pytest.mark.parametrize(("shared", "args"), SCENARIOS)
def test_rbac_is_least_privilege(
    request: pytest.FixtureRequest, shared: Shared, args: Args
) -> None:
    chart = rendered_chart(request, shared)
    check_rbac_is_least_privilege(chart, chart.rendered(*args))


@pytest.mark.parametrize(("shared", "args"), SCENARIOS)
def test_pod_templates_match_the_kubernetes_schema(
    request: pytest.FixtureRequest, shared: Shared, args: Args
) -> None:
    check_pod_templates_match_the_kubernetes_schema(rendered_chart(request, shared).rendered(*args))


@pytest.mark.parametrize(("shared", "args"), SCENARIOS)
def test_render_is_deterministic(
    request: pytest.FixtureRequest, shared: Shared, args: Args
) -> None:
    check_render_is_deterministic(rendered_chart(request, shared), args, mask=shared.mask)
