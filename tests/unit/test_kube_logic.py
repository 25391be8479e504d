"""Pure logic of tfjob_kit.kube: options, error sentences, status reading, input preparation.

Everything that talks to a cluster is tested in tests/integration against the real one.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tfjob_kit.config import from_settings
from tfjob_kit.kube import apply, jobs, status
from tfjob_kit.kube.api_errors import OPERATOR_WEBHOOK_CONFIGURATION, from_api_exception
from tfjob_kit.kube.connection import Connection
from tfjob_kit.kube.kinds import TFJOB, VOLCANO_JOB
from tfjob_kit.manifests import Document, load_text


def job(name: str | None = "mnist", namespace: str | None = None, **extra: Any) -> dict[str, Any]:
    metadata: dict[str, Any] = {}
    if name is not None:
        metadata["name"] = name
    if namespace is not None:
        metadata["namespace"] = namespace
    return {
        "apiVersion": "kubeflow.org/v1",
        "kind": "TFJob",
        "metadata": metadata,
        "spec": {
            "tfReplicaSpecs": {
                "Worker": {
                    "replicas": 2,
                    "restartPolicy": "OnFailure",
                    "template": {
                        "spec": {
                            "containers": [
                                {"name": "tensorflow", "image": "example.com/tf:1.0", **extra}
                            ]
                        }
                    },
                }
            }
        },
    }


def docs(*contents: Any) -> list[Document]:
    return [Document("jobs.yaml", i, 1, content=c) for i, c in enumerate(contents, 1)]


# -- connection -----------------------------------------------------------------------------


def test_options_come_from_k8s_auth_environment() -> None:
    env = {
        "K8S_AUTH_KUBECONFIG": "/k/config",
        "K8S_AUTH_CONTEXT": "prod",
        "K8S_AUTH_VERIFY_SSL": "no",
        "K8S_AUTH_IMPERSONATE_GROUPS": "a, b",
    }
    conn = Connection.from_options({"context": "dev"}, env)
    assert conn.kubeconfig == "/k/config"
    assert conn.context == "dev"  # the option wins
    assert conn.validate_certs is False
    assert conn.impersonate_groups == ["a", "b"]


def test_explicit_host_ignores_the_environment_kubeconfig() -> None:
    conn = Connection.from_options(
        {"host": "https://h:6443", "api_key": "s3cr3t-token"}, {"K8S_AUTH_KUBECONFIG": "/k/config"}
    )
    assert conn.kubeconfig is None and conn.host == "https://h:6443"
    assert "s3cr3t" not in repr(conn)  # the token never shows


def test_namespace_of_the_selected_context() -> None:
    config = {
        "current-context": "a",
        "contexts": [
            {"name": "a", "context": {"namespace": "team-a"}},
            {"name": "b", "context": {}},
        ],
    }
    assert Connection(kubeconfig=config).namespace() == "team-a"
    assert Connection(kubeconfig=config, context="b").namespace() is None


# -- error sentences --------------------------------------------------------------------------


@dataclass
class ApiFailure:
    """The shape of kubernetes.client's ApiException: a status and the Status body."""

    status: int
    body: str
    reason: str = ""


def failure(
    status: int, message: str, reason: str, details: dict[str, Any] | None = None
) -> ApiFailure:
    body = {
        "kind": "Status",
        "status": "Failure",
        "message": message,
        "reason": reason,
        "code": status,
    }
    if details is not None:
        body["details"] = details
    return ApiFailure(status, json.dumps(body))


def test_forbidden_names_user_verb_resource_and_namespace() -> None:
    exc = failure(
        403,
        'tfjobs.kubeflow.org "a" is forbidden: User "system:serviceaccount:ci:'
        'bot" cannot patch resource "tfjobs" in API group "kubeflow.org" in the '
        'namespace "ml"',
        "Forbidden",
        {"name": "a", "kind": "tfjobs"},
    )
    error = from_api_exception(exc, "applying", TFJOB, "ml", "a")
    assert error.reason == "forbidden"
    assert (
        "forbidden by RBAC: user 'system:serviceaccount:ci:bot' may not 'patch' "
        "tfjobs.kubeflow.org in namespace 'ml'" in str(error)
    )


def test_unknown_resource_path_means_the_crd_is_missing() -> None:
    exc = failure(404, "the server could not find the requested resource", "NotFound")
    error = from_api_exception(exc, "applying", VOLCANO_JOB, "ml", "a")
    assert error.reason == "crd-missing"
    assert "jobs.batch.volcano.sh" in str(error) and "tfjob.kit.volcano role" in str(error)


def test_missing_namespace_and_conflict_and_invalid() -> None:
    missing = failure(
        404, 'namespaces "nope" not found', "NotFound", {"name": "nope", "kind": "namespaces"}
    )
    assert "namespace 'nope' does not exist" in str(
        from_api_exception(missing, "applying", TFJOB, "nope", "a")
    )
    conflict = failure(
        409,
        'Apply failed with 1 conflict: conflict with "helm" using '
        "kubeflow.org/v1: .spec.runPolicy.backoffLimit",
        "Conflict",
        {"causes": [{"field": ".spec.runPolicy.backoffLimit"}]},
    )
    text = str(from_api_exception(conflict, "applying", TFJOB, "ml", "a"))
    assert "conflict with field manager(s) helm over .spec.runPolicy.backoffLimit" in text
    invalid = failure(
        422,
        "TFJob is invalid",
        "Invalid",
        {"causes": [{"field": "spec.runPolicy.cleanPodPolicy", "message": "Unsupported value"}]},
    )
    assert str(from_api_exception(invalid, "applying", TFJOB, "ml", "a")).endswith(
        "the API server rejected it: spec.runPolicy.cleanPodPolicy: Unsupported value"
    )


# -- status -----------------------------------------------------------------------------------


def test_tfjob_phase_is_the_latest_true_condition() -> None:
    obj = {
        "status": {
            "conditions": [
                {"type": "Created", "status": "True"},
                {"type": "Running", "status": "False"},
                {"type": "Failed", "status": "True", "reason": "TFJobFailed", "message": "chief"},
            ],
            "replicaStatuses": {"Chief": {"failed": 1}},
        }
    }
    read = status.job_status(TFJOB, obj)
    assert (read.phase, read.reason, read.message) == ("Failed", "TFJobFailed", "chief")
    assert read.true == {"Created", "Failed"}
    assert status.job_status(TFJOB, {}).phase == "Pending"
    assert status.job_status(TFJOB, None).phase == "Absent"


@pytest.mark.parametrize(
    ("phase", "also"),
    [
        ("Completed", "Succeeded"),
        ("Aborted", "Failed"),
        ("Terminated", "Failed"),
        ("Running", None),
    ],
)
def test_volcano_phases_read_as_tfjob_conditions(phase: str, also: str | None) -> None:
    read = status.job_status(VOLCANO_JOB, {"status": {"state": {"phase": phase}}})
    assert read.phase == phase
    assert read.true == ({phase, also} if also else {phase})


def test_volcano_times_come_from_the_running_condition_and_the_final_state() -> None:
    obj: dict[str, Any] = {
        "status": {
            "state": {"phase": "Completed", "lastTransitionTime": "t9"},
            "conditions": [
                {"status": "Pending", "lastTransitionTime": "t1"},
                {"status": "Running", "lastTransitionTime": "t3"},
                {"status": "Completed", "lastTransitionTime": "t9"},
            ],
        }
    }
    read = status.job_status(VOLCANO_JOB, obj)
    assert (read.start_time, read.completion_time) == ("t3", "t9")
    obj["status"]["state"]["phase"] = "Running"
    assert status.job_status(VOLCANO_JOB, obj).completion_time is None


def test_comparable_drops_what_the_server_manages() -> None:
    obj = {**job(), "status": {"x": 1}}
    obj["metadata"].update(
        resourceVersion="7",
        uid="u",
        generation=2,
        managedFields=[{}],
        creationTimestamp="t",
        labels={"a": "b"},
    )
    assert apply.comparable(obj)["metadata"] == {"name": "mnist", "labels": {"a": "b"}}
    assert "status" not in apply.comparable(obj)


# -- preparing input --------------------------------------------------------------------------


def test_namespace_option_fills_in_and_conflicts_are_refused() -> None:
    (item,) = jobs.prepare(docs(job()), namespace="ml")
    assert item.namespace == "ml"
    (item,) = jobs.prepare(docs(job()), default_namespace="from-context")
    assert item.namespace == "from-context"
    with pytest.raises(
        jobs.InvalidInputError,
        match=r"document 1: \$\.metadata\.namespace: "
        r"'a' differs from the namespace option 'b'",
    ):
        jobs.prepare(docs(job(namespace="a")), namespace="b")


def test_every_problem_is_reported_with_its_location() -> None:
    text = (
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n---\n"
        "kind: TFJob\napiVersion: kubeflow.org/v1\nmetadata: {name: x}\nspec: [\n---\n"
    )
    documents = load_text(text, "in.yaml") + docs(job(name=None), job(), job())
    with pytest.raises(jobs.InvalidInputError) as caught:
        jobs.prepare(documents)
    problems = caught.value.problems
    assert problems[0].startswith("in.yaml: document 2 (line ")
    assert "in.yaml: document 1: v1 ConfigMap is not a TFJob" in problems[1]
    assert any(p.startswith("jobs.yaml: document 1: $.metadata") for p in problems)
    assert problems[-1] == (
        "jobs.yaml: document 3: TFJob default/mnist is also defined in jobs.yaml: document 2"
    )


def test_strict_fails_on_errors_warn_does_not() -> None:
    bad = job()
    bad["spec"]["runPolicy"] = {"cleanPodPolicy": "all"}
    with pytest.raises(jobs.InvalidInputError, match="clean-pod-policy-case"):
        jobs.prepare(docs(bad))
    (item,) = jobs.prepare(docs(bad), validate="warn")
    assert [f.rule for f in item.findings] == ["clean-pod-policy-case"]
    (item,) = jobs.prepare(docs(bad), validate="off")
    assert item.findings == []
    quiet = from_settings({"clean-pod-policy-case": "off"}, "test")
    (item,) = jobs.prepare(docs(bad), rules=quiet)
    assert item.findings == []


def test_conversion_is_opt_in_and_volcano_is_a_backend() -> None:
    legacy = job()
    legacy["apiVersion"] = "kubeflow.org/v1beta2"
    with pytest.raises(jobs.InvalidInputError, match="set convert: true"):
        jobs.prepare(docs(legacy))
    (item,) = jobs.prepare(docs(legacy), allow_convert=True)
    assert item.body["apiVersion"] == "kubeflow.org/v1"
    (item,) = jobs.prepare(docs(job()), backend="volcano")
    assert item.resource is VOLCANO_JOB and item.body["kind"] == "Job"
    assert item.tfjob["kind"] == "TFJob" and item.tf_config() == {}


def test_digest_ignores_itself_and_contains_allows_more_keys() -> None:
    body = job()
    first = apply.digest(body)
    body["metadata"]["annotations"] = {apply.DIGEST_ANNOTATION: first}
    assert apply.digest(body) == first
    body["spec"]["runPolicy"] = {"backoffLimit": 2}
    assert apply.digest(body) != first
    held = {"a": {"b": [{"c": 1, "server": "x"}], "extra": True}}
    assert apply.contains(held, {"a": {"b": [{"c": 1}]}})
    assert not apply.contains(held, {"a": {"b": [{"c": 2}]}})
    assert not apply.contains(held, {"a": {"b": [{"c": 1}, {"c": 1}]}})
    assert not apply.contains({"n": 1}, {"n": True})


def test_a_webhook_that_cannot_be_called_names_it_and_says_how_to_recover() -> None:
    url = "https://training-operator.kubeflow.svc:443/validate-kubeflow-org-v1-tfjob?timeout=10s"
    exc = failure(
        500,
        'Internal error occurred: failed calling webhook "validator.tfjob.training-operator.'
        f'kubeflow.org": failed to call webhook: Post "{url}": dial tcp 10.0.0.7:443: connect: '
        "connection refused",
        "InternalError",
    )
    error = from_api_exception(exc, "applying", TFJOB, "ml", "a")
    assert error.reason == "webhook-unavailable"
    text = str(error)
    assert text.startswith(
        "applying TFJob ml/a: the training-operator's admission webhook "
        '"validator.tfjob.training-operator.kubeflow.org" (ValidatingWebhookConfiguration '
        f"validator.training-operator.kubeflow.org), served at Service kubeflow/training-operator "
        f"port 443 ({url}), cannot be called: dial tcp 10.0.0.7:443: connect: connection refused."
    ), text
    assert "`tfjob-kit cluster up`" in text
    assert "kubectl delete validatingwebhookconfiguration validator.training-operator." in text
    other = failure(
        500,
        'Internal error occurred: failed calling webhook "validatejob.volcano.sh": failed to '
        'call webhook: Post "https://hooks.example.com/jobs": context deadline exceeded',
        "InternalError",
    )
    text = str(from_api_exception(other, "applying", TFJOB, "ml", "a"))
    assert '"validatejob.volcano.sh", served at https://hooks.example.com/jobs, cannot' in text
    assert "kubectl get validatingwebhookconfigurations,mutatingwebhookconfigurations" in text


def test_the_operator_webhook_configuration_name_is_the_charts() -> None:
    helpers = Path(__file__).parents[2] / "charts/training-operator/templates/_helpers.tpl"
    text = helpers.read_text()
    block = text.split('define "training-operator.webhookConfigurationName" -}}')[1]
    assert block.split("{{-")[0].strip() == OPERATOR_WEBHOOK_CONFIGURATION


def test_transport_reasons_read_as_words_without_python_reprs() -> None:
    from http.client import RemoteDisconnected

    from urllib3.connection import HTTPSConnection
    from urllib3.exceptions import MaxRetryError, NewConnectionError, ProtocolError

    from tfjob_kit.kube.client import transport_reason

    refused = NewConnectionError(
        HTTPSConnection("127.0.0.1", 1), "Failed to establish a new connection: [Errno 111] x"
    )
    aborted = ProtocolError("Connection aborted.", RemoteDisconnected("Remote end closed"))
    assert transport_reason(MaxRetryError(None, "/api", refused)) == (  # type: ignore[arg-type]
        "Failed to establish a new connection: [Errno 111] x"
    )
    assert transport_reason(aborted) == "connection aborted: Remote end closed"


@pytest.mark.parametrize("depth", [98, 330, 5000])
def test_a_definition_nested_too_deep_is_a_located_problem_not_a_traceback(depth: int) -> None:
    """A module `definition` given as data skips the loader: nested deeper than the loader
    allows, it is refused where it goes too deep, before it is copied or validated (both
    recurse once per level: 330 levels ended in a traceback, issue 24 finding 12)."""
    deep: dict[str, Any] = {}
    node = deep
    for _ in range(depth):
        node["a"] = {}
        node = node["a"]
    definition = job()
    definition["metadata"]["annotations"] = deep
    with pytest.raises(jobs.InvalidInputError) as caught:
        jobs.prepare(jobs.load_input(None, definition))
    [problem] = caught.value.problems
    assert problem.startswith("definition: document 1: $.metadata.annotations.a.a")
    assert problem.endswith(": nesting deeper than 100 levels")
