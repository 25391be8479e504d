"""The local cluster's defaults have one source, ``UpOptions`` (and ``NodePlan``): the CLI
takes them from there, and the ``local_cluster`` role's copy (Ansible reads YAML) must agree
with it, in defaults/main.yml and in meta/argument_specs.yml alike (that each role's two files
and README agree with one another is tests/unit/test_drift.py's)."""

from __future__ import annotations

import argparse
import dataclasses
import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from tfjob_kit.cluster.options import DEFAULT_NAME, UpOptions
from tfjob_kit.commands import cluster_command

ROLE = Path(__file__).resolve().parents[2] / "roles" / "local_cluster"
UP = UpOptions()
# Each role variable that is an `up` option, and the default UpOptions gives it.
ROLE_OPTIONS: dict[str, Any] = {
    "local_cluster_cpu_nodes": UP.nodes.cpu_nodes,
    "local_cluster_gpu_nodes": UP.nodes.gpu_nodes,
    "local_cluster_gpus_per_node": UP.nodes.gpus_per_node,
    "local_cluster_kubernetes_version": UP.kubernetes_version,
    "local_cluster_addons": UP.addons,
    "local_cluster_jobset": UP.jobset,
    "local_cluster_trainer": UP.trainer,
    "local_cluster_kueue": UP.kueue,
    "local_cluster_tfjob_run_seconds": UP.tfjob_run_seconds,
    "local_cluster_operator_threads": UP.operator_threads,
    "local_cluster_operator_qps": UP.operator_qps,
    "local_cluster_operator_burst": UP.operator_burst,
    "local_cluster_schedule_period": UP.schedule_period,
}


def _defaults() -> dict[str, Any]:
    data: dict[str, Any] = yaml.safe_load((ROLE / "defaults" / "main.yml").read_text("utf-8"))
    return data


def _specs() -> dict[str, Any]:
    data = yaml.safe_load((ROLE / "meta" / "argument_specs.yml").read_text("utf-8"))
    options: dict[str, Any] = data["argument_specs"]["main"]["options"]
    return options


@pytest.mark.parametrize("variable", sorted(ROLE_OPTIONS))
def test_role_defaults_are_up_options(variable: str) -> None:
    expected = ROLE_OPTIONS[variable]
    for where, value in (
        ("defaults/main.yml", _defaults()[variable]),
        ("meta/argument_specs.yml", _specs()[variable]["default"]),
    ):
        assert value == expected, f"{where}: {variable} is {value!r}, UpOptions says {expected!r}"
        assert type(value) is type(expected) or isinstance(expected, float), where


def test_role_default_name_is_the_cli_default_name() -> None:
    """The role's name falls back as ``default_name()`` does: $TFJOB_KIT_CLUSTER, else
    DEFAULT_NAME."""
    template = _defaults()["local_cluster_name"]
    assert "lookup('ansible.builtin.env', 'TFJOB_KIT_CLUSTER')" in template
    assert re.search(r"default\('([^']*)', true\)", template)[1] == DEFAULT_NAME  # type: ignore[index]


def test_cli_defaults_are_up_options(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TFJOB_KIT_CLUSTER", raising=False)
    parser = argparse.ArgumentParser()
    cluster_command.register(parser.add_subparsers())
    args = parser.parse_args(["cluster", "up"])
    assert args.name == UP.name
    assert (args.cpu_nodes, args.gpu_nodes, args.gpus_per_node) == (
        UP.nodes.cpu_nodes,
        UP.nodes.gpu_nodes,
        UP.nodes.gpus_per_node,
    )
    assert args.addons is UP.addons
    assert args.webhook is UP.webhook
    assert args.jobset is UP.jobset
    assert args.trainer is UP.trainer
    assert args.kueue is UP.kueue
    assert args.tfjob_run_seconds == UP.tfjob_run_seconds
    assert args.gang_scheduler == UP.gang_scheduler
    assert args.timeout == UP.timeout
    assert (args.operator_threads, args.operator_qps, args.operator_burst) == (
        UP.operator_threads,
        UP.operator_qps,
        UP.operator_burst,
    )
    assert args.schedule_period == UP.schedule_period


def test_the_defaults_pass_their_own_checks() -> None:
    assert UP.tuning_problems() == []


@pytest.mark.parametrize(
    ("changes", "problem"),
    [
        ({"operator_qps": 0}, "operator_qps is 0; it must be a whole number of at least 1"),
        ({"operator_threads": -1}, "operator_threads is -1"),
        ({"operator_burst": 2.5}, "operator_burst is 2.5"),
        ({"schedule_period": "0ms"}, "schedule_period is '0ms'; it must be a Go duration"),
        ({"schedule_period": "fast"}, "schedule_period is 'fast'"),
    ],
)
def test_bad_tuning_is_named(changes: dict[str, Any], problem: str) -> None:
    problems = dataclasses.replace(UP, **changes).tuning_problems()
    assert len(problems) == 1 and problems[0].startswith(problem)


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (
            ["--operator-qps", "0"],
            "argument --operator-qps: '0' is not a whole number of at least 1",
        ),
        (["--operator-threads", "two"], "argument --operator-threads: 'two' is not a whole"),
        (["--schedule-period", "0s"], "'0s' is not a Go duration of more than zero"),
        (["--schedule-period", "1"], "argument --schedule-period: '1' is not a Go duration"),
    ],
)
def test_cli_refuses_bad_tuning(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    parser = argparse.ArgumentParser()
    cluster_command.register(parser.add_subparsers())
    with pytest.raises(SystemExit) as exited:
        parser.parse_args(["cluster", "up", *argv])
    assert exited.value.code == 2
    assert message in capsys.readouterr().err
