"""Secrets stay secret, and connection settings fail closed.

Secret env values are masked in findings, results and diffs (the apply still sends them);
kubeconfig credentials are known to the module's no_log machinery; K8S_AUTH_VERIFY_SSL accepts
only booleans; several impersonation groups go out as several headers; the per-job TF_CONFIG
result grows linearly with the pod count.
"""

from __future__ import annotations

import copy
import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, HTTPServer
from typing import Any, ClassVar

import pytest

from tfjob_kit import explain, redact
from tfjob_kit.kube import apply, jobs, task
from tfjob_kit.kube.api_errors import KubeError
from tfjob_kit.kube.client import Client
from tfjob_kit.kube.connection import Connection
from tfjob_kit.kube.kinds import TFJOB
from tfjob_kit.manifests import Document
from tfjob_kit.validate import validate_text

SECRET = "hunter2-s3cr3t-value"


def tfjob(env: list[dict[str, Any]], workers: int = 2) -> dict[str, Any]:
    return {
        "apiVersion": "kubeflow.org/v1",
        "kind": "TFJob",
        "metadata": {"name": "mnist", "namespace": "ml"},
        "spec": {
            "tfReplicaSpecs": {
                "Worker": {
                    "replicas": workers,
                    "restartPolicy": "OnFailure",
                    "template": {
                        "spec": {
                            "containers": [
                                {"name": "tensorflow", "image": "example.com/tf:1.0", "env": env}
                            ]
                        }
                    },
                }
            }
        },
    }


# -- the rule ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "name",
    [
        "DB_PASSWORD",
        "MYSQL_ROOT_PASSWD",
        "AWS_SECRET_ACCESS_KEY",
        "HF_TOKEN",
        "GITHUB_TOKEN",
        "accessToken",
        "apiKey",
        "WANDB_API_KEY",
        "APIKEY",
        "SSH_PRIVATE_KEY",
        "GOOGLE_CREDENTIALS",
        "BASIC_AUTH",
        "db_pass",
        "REDIS_PWD",
        "gpg-passphrase",
        "client.secret",
        "JWT",
        "AUTH_HEADER",
        "DATABASE_URL",
        "MONGODB_URI",
        "REDIS_URL",
        "CELERY_BROKER_URL",
        "SENTRY_DSN",
        "AZURE_STORAGE_CONNECTION_STRING",
        "connectionString",
        "GITHUB_PAT",
        "KRB5_KEYTAB",
    ],
)
def test_secret_names(name: str) -> None:
    assert redact.is_secret_name(name)


@pytest.mark.parametrize(
    "name",
    [
        "TOKENIZERS_PARALLELISM",
        "KEYSPACE",
        "AUTHOR",
        "PASSES",
        "TF_CONFIG",
        "TLS_CERT",
        "MODEL_DIR",
        "PATH",
        "BATCH_SIZE",
        "MODEL_URL",
        "DATA_URI",
        "PATCH_LEVEL",
        "DSNAME",
        3,
        None,
    ],
)
def test_not_secret_names(name: object) -> None:
    assert not redact.is_secret_name(name)


def test_mask_hides_secret_values_only_and_keeps_the_original() -> None:
    job = tfjob(
        [
            {"name": "DB_PASSWORD", "value": SECRET},
            {"name": "BATCH", "value": "64"},
            {"name": "API_TOKEN", "valueFrom": {"secretKeyRef": {"name": "s", "key": "t"}}},
        ]
    )
    original = copy.deepcopy(job)
    masked = redact.mask(job)
    env = masked["spec"]["tfReplicaSpecs"]["Worker"]["template"]["spec"]["containers"][0]["env"]
    assert env == [
        {"name": "DB_PASSWORD", "value": redact.MASK},
        {"name": "BATCH", "value": "64"},
        {"name": "API_TOKEN", "valueFrom": {"secretKeyRef": {"name": "s", "key": "t"}}},
    ]
    assert job == original  # what is applied keeps the real value
    assert redact.secret_values(job) == {SECRET}
    assert redact.mask({"msg": f"bad: {SECRET}!"}, {SECRET, "1"}) == {"msg": f"bad: {redact.MASK}!"}


def test_a_password_in_a_url_is_masked_whatever_the_name() -> None:
    """`scheme://user:password@host` in any value: the password reads ******** in objects and
    in free text, the rest of the URL stays readable (issue 24, finding 16)."""
    job = tfjob([{"name": "STORE", "value": "postgres://trainer:hunter22@db:5432/runs"}])
    env = redact.mask(job)["spec"]["tfReplicaSpecs"]["Worker"]["template"]["spec"]
    assert env["containers"][0]["env"] == [
        {"name": "STORE", "value": f"postgres://trainer:{redact.MASK}@db:5432/runs"}
    ]
    assert redact.mask_text("redis://:s3cr3t@cache:6379/0 refused", []) == (
        f"redis://:{redact.MASK}@cache:6379/0 refused"
    )
    # no password, or no userinfo: nothing to mask
    for text in ("https://example.org/a:b@c", "s3://bucket/key", "http://user@host/"):
        assert redact.mask_text(text, []) == text


# -- findings and task results ----------------------------------------------------------------


def test_findings_do_not_echo_secret_values() -> None:
    job = tfjob(
        [
            {"name": "DB_PASSWORD", "value": 987654321},
            {"name": "API_TOKEN", "value": SECRET},
            {"name": "API_TOKEN", "value": SECRET},
        ]
    )
    report = validate_text(json.dumps(job))
    messages = " ".join(f.message for f in report.findings)
    assert "is not of type" in messages and "defined twice" in messages
    assert "987654321" not in messages and redact.MASK in messages


def test_failed_task_result_masks_secret_values() -> None:
    job = tfjob([{"name": "DB_PASSWORD", "value": 987654321}])
    with pytest.raises(task.TaskError) as caught:
        task.run(task.Request(definition=job, connection=Connection(host="https://127.0.0.1:1")))
    text = json.dumps(caught.value.result) + str(caught.value)
    assert "987654321" not in text and redact.MASK in text


def test_task_masks_objects_diff_findings_and_messages() -> None:
    job = tfjob([{"name": "DB_PASSWORD", "value": SECRET}])
    result = {
        "objects": [job],
        "diff": [{"before": {}, "after": job}],
        "findings": [{"message": f"x {SECRET}"}],
        "msg": f"rejected {SECRET}",
    }
    masked = redact.mask(result, redact.secret_values(job))
    assert SECRET not in json.dumps(masked)
    assert SECRET in json.dumps(result)


def test_kubeconfig_credentials() -> None:
    kubeconfig = {
        "clusters": [{"name": "c", "cluster": {"server": "https://k:6443"}}],
        "users": [
            {
                "name": "admin",
                "user": {
                    "token": "tok-1234567890",
                    "client-key-data": "S0VZREFUQQ==",
                    "client-certificate-data": "Q0VSVA==",
                    "username": "admin",
                    "password": "pw-secret",
                    "auth-provider": {"name": "oidc", "config": {"id-token": "idt-0987"}},
                    "exec": {
                        "command": "aws",
                        "args": ["eks", "get-token"],
                        "env": [{"name": "AWS_PROFILE", "value": "prof-xyz"}],
                    },
                },
            }
        ],
    }
    assert redact.kubeconfig_credentials(kubeconfig) == {
        "tok-1234567890",
        "S0VZREFUQQ==",
        "pw-secret",
        "idt-0987",
        "prof-xyz",
    }
    assert redact.kubeconfig_credentials("/path/to/config") == set()


# -- K8S_AUTH_VERIFY_SSL ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("true", True),
        ("True", True),
        ("yes", True),
        ("on", True),
        ("1", True),
        (" Y ", True),
        ("false", False),
        ("FALSE", False),
        ("no", False),
        ("off", False),
        ("0", False),
        ("n", False),
    ],
)
def test_verify_ssl_accepts_ansible_booleans(raw: str, expected: bool) -> None:
    conn = Connection.from_options({}, {"K8S_AUTH_VERIFY_SSL": raw})
    assert conn.validate_certs is expected


@pytest.mark.parametrize("raw", ["ture", "maybe", "disabled", "2", "nein"])
def test_verify_ssl_fails_closed(raw: str) -> None:
    with pytest.raises(KubeError, match="K8S_AUTH_VERIFY_SSL"):
        Connection.from_options({}, {"K8S_AUTH_VERIFY_SSL": raw})


def test_empty_verify_ssl_is_unset() -> None:
    assert Connection.from_options({}, {"K8S_AUTH_VERIFY_SSL": " "}).validate_certs is None


# -- impersonation ----------------------------------------------------------------------------


class _Recorder(BaseHTTPRequestHandler):
    seen: ClassVar[list[dict[str, list[str]]]] = []

    def do_GET(self) -> None:
        self.seen.append(
            {
                name: self.headers.get_all(name) or []
                for name in ("Impersonate-User", "Impersonate-Group")
            }
        )
        body = json.dumps({"kind": "TFJobList", "items": []}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *_: Any) -> None:
        pass


@pytest.fixture
def recorder() -> Iterator[str]:
    server = HTTPServer(("127.0.0.1", 0), _Recorder)
    _Recorder.seen = []
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def test_each_impersonated_group_is_its_own_header(recorder: str) -> None:
    conn = Connection(
        host=recorder, impersonate_user="alice", impersonate_groups=["team-a", "team, b"]
    )
    with Client(conn) as client:
        assert client.list_objects(TFJOB, "ml") == []
        assert client.list_objects(TFJOB, "ml") == []  # the pool keeps sending them
    assert (
        _Recorder.seen
        == [{"Impersonate-User": ["alice"], "Impersonate-Group": ["team-a", "team, b"]}] * 2
    )


# -- TF_CONFIG result -------------------------------------------------------------------------


def _item(workers: int, **spec: Any) -> jobs.Item:
    """A job of `workers` workers and 2 parameter servers."""
    job = tfjob([], workers)
    job["spec"].update(spec)
    job["spec"]["tfReplicaSpecs"]["PS"] = copy.deepcopy(job["spec"]["tfReplicaSpecs"]["Worker"])
    job["spec"]["tfReplicaSpecs"]["PS"]["replicas"] = 2
    (item,) = jobs.prepare([Document("jobs.yaml", 1, 1, content=job)], validate="off")
    return item


def test_tf_config_result_grows_linearly() -> None:
    small = len(json.dumps(_item(998).tf_config()))  # 1,000 pods
    large = len(json.dumps(_item(1998).tf_config()))  # 2,000 pods (was about 290 MB)
    assert large < 2.2 * small, (small, large)
    assert large < 400_000  # about 140 bytes per pod


@pytest.mark.parametrize("dynamic", [False, True])
def test_tf_config_result_rebuilds_what_each_pod_receives(dynamic: bool) -> None:
    item = _item(3, **({"enableDynamicWorker": True} if dynamic else {}))
    result = item.tf_config()
    assert sorted(result["tasks"]) == [
        "mnist-ps-0",
        "mnist-ps-1",
        "mnist-worker-0",
        "mnist-worker-1",
        "mnist-worker-2",
    ]
    for pod, where in result["tasks"].items():
        expected = explain.tf_config(item.body, where["type"], where["index"], "ml")
        assert expected is not None
        assert explain.pod_tf_config(result, pod) == json.loads(expected)


# -- the applied-digest annotation ------------------------------------------------------------


def test_digest_does_not_depend_on_secret_values_but_a_changed_secret_is_applied() -> None:
    # The digest is shown in objects and diffs; derived from a secret, it would let anyone with
    # the log test guesses of a weak password offline.
    old = tfjob([{"name": "DB_PASSWORD", "value": "weak-1"}])
    new = tfjob([{"name": "DB_PASSWORD", "value": "weak-2"}])
    assert apply.digest(old) == apply.digest(new)
    assert apply.digest(old) != apply.digest(tfjob([{"name": "BATCH", "value": "1"}]))
    # ... and a re-run with a changed secret is still applied, not taken as already applied.
    held = copy.deepcopy(old)
    held["metadata"]["annotations"] = {apply.DIGEST_ANNOTATION: apply.digest(old)}
    held["metadata"]["managedFields"] = [{"manager": "tfjob-kit", "operation": "Apply"}]
    new["metadata"]["annotations"] = {apply.DIGEST_ANNOTATION: apply.digest(new)}
    assert not apply._already_applied(held, new, "tfjob-kit")
    same = copy.deepcopy(held)
    same["metadata"].pop("managedFields")
    assert apply._already_applied(
        held, {**copy.deepcopy(old), "metadata": same["metadata"]}, "tfjob-kit"
    )


def _job_with_secret(value: str) -> dict[str, Any]:
    return {
        "apiVersion": "kubeflow.org/v1",
        "kind": "TFJob",
        "metadata": {"name": "j"},
        "spec": {
            "tfReplicaSpecs": {
                "Worker": {
                    "template": {
                        "spec": {
                            "containers": [
                                {
                                    "name": "tensorflow",
                                    "image": "tf:2",
                                    "env": [{"name": "DB_PASSWORD", "value": value}],
                                }
                            ]
                        }
                    }
                }
            }
        },
    }


def test_a_definition_document_that_does_not_load_still_gives_its_secrets() -> None:
    """Given as data, a document nested deeper than the loader allows does not load, but its
    secret env values are read from the data; given as text, a document that does not load
    makes the whole text unshowable (its secrets cannot be found)."""
    from ansible_collections.tfjob.kit.plugins.module_utils import common

    deep = _job_with_secret("deep-" + SECRET)
    nest = deep["spec"]
    for _ in range(150):
        nest = nest.setdefault("x", {})
    secrets, unreadable = common._definition_secrets([_job_with_secret(SECRET), deep])
    assert secrets == {SECRET, "deep-" + SECRET} and not unreadable
    text = json.dumps(_job_with_secret(SECRET)) + "\n---\n" + "a: [\n"
    secrets, unreadable = common._definition_secrets(text)
    assert secrets == {SECRET} and unreadable
    secrets, unreadable = common._definition_secrets(json.dumps(deep))  # one line, too deep
    assert unreadable
    assert common._definition_secrets(None) == (set(), False)


def test_last_applied_configuration_is_masked_as_data() -> None:
    """kubectl's last-applied annotation holds an earlier apply's values (no secret given now
    finds them) in JSON (whose escapes hide a value that is given): it is masked as data."""
    earlier = _job_with_secret('old-"quoted"-\u00e9-' + SECRET)
    earlier["metadata"]["annotations"] = {"team": "ml"}
    now = _job_with_secret(SECRET)
    text = json.dumps(earlier, ensure_ascii=True) + "\n"
    now["metadata"]["annotations"] = {redact.LAST_APPLIED: text, "team": "ml"}
    shown = redact.mask(now, {SECRET})
    kept = shown["metadata"]["annotations"][redact.LAST_APPLIED]
    assert SECRET not in json.dumps(shown) and "old-" not in kept and kept.endswith("\n")
    assert json.loads(kept)["metadata"]["annotations"] == {"team": "ml"}  # the rest is shown
    env = json.loads(kept)["spec"]["tfReplicaSpecs"]["Worker"]["template"]["spec"]
    assert env["containers"][0]["env"] == [{"name": "DB_PASSWORD", "value": redact.MASK}]
    assert now["metadata"]["annotations"][redact.LAST_APPLIED] == text  # the original kept
    for unreadable in ("{not json", "[1, 2]", "[" * 100_000 + "]" * 100_000):
        now["metadata"]["annotations"][redact.LAST_APPLIED] = unreadable
        assert redact.mask(now)["metadata"]["annotations"][redact.LAST_APPLIED] == redact.MASK


def test_proxy_passwords_are_credentials() -> None:
    config = {
        "clusters": [
            {"name": "a", "cluster": {"server": "https://k", "proxy-url": "http://me:pw1@p:3128"}},
            {"name": "b", "cluster": {"proxy-url": "socks5://p:1080"}},
        ],
        "users": [{"name": "u", "user": {"token": "t0ken"}}],
    }
    assert redact.kubeconfig_credentials(config) == {"pw1", "t0ken"}
    assert redact.url_passwords("http://a:b@h https://c:d%40e@h2/x") == {"b", "d%40e"}
    assert redact.url_passwords(None) == set() and redact.url_passwords("http://h") == set()


def _helm_secret(release: dict[str, Any], gzipped: bool = True) -> dict[str, Any]:
    import base64
    import gzip

    raw = json.dumps(release).encode()
    stored = base64.b64encode(gzip.compress(raw) if gzipped else raw)
    return {
        "kind": "Secret",
        "type": "helm.sh/release.v1",
        "metadata": {"name": "sh.helm.release.v1.x.v1"},
        "data": {"release": base64.b64encode(stored).decode()},
    }


def test_a_helm_release_secret_shows_its_chart_not_its_content() -> None:
    from tfjob_kit.kube import objects

    release = {
        "name": "x",
        "manifest": "kind: Secret\ndata: {key: " + SECRET + "}",
        "config": {"password": SECRET},
        "chart": {
            "metadata": {
                "name": "nvidia-device-plugin",
                "version": "0.17.2",
                "annotations": {"a": "b"},
                "description": "d",
            },
            "templates": [{"name": "t", "data": SECRET}],
        },
    }
    for gzipped in (True, False):
        shown = objects._without_secret_content(_helm_secret(release, gzipped))
        assert "data" not in shown and SECRET not in json.dumps(shown)
        assert shown["helmChart"] == {
            "name": "nvidia-device-plugin",
            "version": "0.17.2",
            "annotations": {"a": "b"},
        }
    broken = _helm_secret(release)
    broken["data"]["release"] = "not base64!"
    assert "helmChart" not in objects._without_secret_content(broken)
    plain = {**_helm_secret(release), "type": "Opaque"}
    assert "helmChart" not in objects._without_secret_content(plain)
