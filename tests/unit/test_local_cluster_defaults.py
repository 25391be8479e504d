"""The local cluster's defaults have one source, ``UpOptions`` (and ``NodePlan``): the CLI
takes them from there, and the ``local_cluster`` role's copy (Ansible reads YAML) must agree
with it, in defaults/main.yml and in meta/argument_specs.yml alike (that each role's two files
and README agree with one another is tests/unit/test_drift.py's)."""

from __future__ import annotations

import argparse
import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from tfjob_kit.cluster import cli
from tfjob_kit.cluster.options import DEFAULT_NAME, UpOptions

ROLE = Path(__file__).resolve().parents[2] / "roles" / "local_cluster"
UP = UpOptions()
# Each role variable that is an `up` option, and the default UpOptions gives it.
ROLE_OPTIONS: dict[str, Any] = {
    "local_cluster_cpu_nodes": UP.nodes.cpu_nodes,
    "local_cluster_gpu_nodes": UP.nodes.gpu_nodes,
    "local_cluster_gpus_per_node": UP.nodes.gpus_per_node,
    "local_cluster_addons": UP.addons,
    "local_cluster_tfjob_run_seconds": UP.tfjob_run_seconds,
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
    cli.register(parser.add_subparsers())
    args = parser.parse_args(["cluster", "up"])
    assert args.name == UP.name
    assert (args.cpu_nodes, args.gpu_nodes, args.gpus_per_node) == (
        UP.nodes.cpu_nodes,
        UP.nodes.gpu_nodes,
        UP.nodes.gpus_per_node,
    )
    assert args.addons is UP.addons
    assert args.webhook is UP.webhook
    assert args.tfjob_run_seconds == UP.tfjob_run_seconds
    assert args.gang_scheduler == UP.gang_scheduler
    assert args.timeout == UP.timeout
