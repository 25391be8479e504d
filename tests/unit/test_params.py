"""kube.params.from_params: a module's parameters become the library's request, field by name."""

from __future__ import annotations

import dataclasses

import pytest

from tfjob_kit.kube.connection import Connection
from tfjob_kit.kube.info import Query
from tfjob_kit.kube.params import from_params
from tfjob_kit.kube.task import Request

pytestmark = pytest.mark.pure


def test_every_parameter_reaches_its_field_converted() -> None:
    params = {
        "src": None,
        "definition": {"kind": "TFJob"},
        "state": "absent",
        "namespace": "ml",
        "field_manager": "me",
        "force_conflicts": True,
        "validate": "warn",
        "rules": {"image-latest": "off"},
        "backend": "volcano",
        "convert": True,
        "wait": True,
        "wait_for": ["Running"],
        "fail_on": [],
        "wait_timeout": 30,  # YAML gives an int
        "unschedulable_grace": 5,
        "preflight": False,
        "kubeconfig": "/k",  # a connection option: not a field
    }
    connection = Connection(kubeconfig="/k")
    request = from_params(Request, params, check_mode=True, diff=True, connection=connection)
    assert request == Request(
        definition={"kind": "TFJob"},
        state="absent",
        namespace="ml",
        field_manager="me",
        force_conflicts=True,
        validate="warn",
        rules={"image-latest": "off"},
        backend="volcano",
        convert=True,
        wait=True,
        wait_for=["Running"],
        fail_on=[],
        wait_timeout=30.0,
        unschedulable_grace=5.0,
        preflight=False,
        check_mode=True,
        diff=True,
        connection=connection,
    )
    assert isinstance(request.wait_timeout, float) and isinstance(
        request.unschedulable_grace, float
    )
    assert request.rules is not params["rules"]  # a copy


def test_a_field_the_parameters_leave_out_keeps_its_default() -> None:
    query = from_params(Query, {"name": "j", "unschedulable_grace": 2})
    defaults = Query()
    assert query == dataclasses.replace(defaults, name="j", unschedulable_grace=2.0)
