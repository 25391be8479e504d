"""Nothing secret in Ansible output, and impersonation as Kubernetes reads it, on the real cluster.

A ``-vvv`` run with the kubeconfig given as a dictionary prints none of its credentials; env
values whose names say they are secret are masked in objects, diffs, findings and the invocation,
while the object in the cluster keeps the real value. Impersonating two groups sends two
Impersonate-Group headers: only the second group may read TFJobs, and the read succeeds.
"""

from __future__ import annotations

import base64
import copy
import json
import uuid
from pathlib import Path
from typing import Any

import yaml

from tfjob_kit import redact

from ._ansible import run_tasks
from ._cluster import Cluster
from .test_module_tfjob import tfjob

PASSWORD = f"pw-{uuid.uuid4().hex}"
API_KEY = f"key-{uuid.uuid4().hex}"
DEEP_PASSWORD = f"deep-{uuid.uuid4().hex}"
TEXT_PASSWORD = f"text-{uuid.uuid4().hex}"
PROXY_PASSWORD = f"proxy-{uuid.uuid4().hex}"
OPTION_PASSWORD = f"option-{uuid.uuid4().hex}"


def inline_kubeconfig(cluster: Cluster) -> dict[str, Any]:
    """The cluster's admin kubeconfig with every file inlined (as a CI secret would hold it)."""
    config: dict[str, Any] = yaml.safe_load(cluster.kubeconfig.read_text())
    base = cluster.kubeconfig.parent

    def inline(section: dict[str, Any], field: str) -> None:
        if field in section:
            path = Path(section.pop(field))
            data = (path if path.is_absolute() else base / path).read_bytes()
            section[f"{field}-data"] = base64.b64encode(data).decode()

    for entry in config["clusters"]:
        inline(entry["cluster"], "certificate-authority")
    for entry in config["users"]:
        inline(entry["user"], "client-certificate")
        inline(entry["user"], "client-key")
    return config


def service_account_kubeconfig(cluster: Cluster, namespace: str) -> tuple[dict[str, Any], str]:
    """A kubeconfig dict whose user is a token of a service account that may manage TFJobs (and
    read their pods and events) in the namespace; and the token."""
    token = cluster.service_account_token(
        namespace, "deployer", "tfjob-deployer", "*", "tfjobs.kubeflow.org,pods,events"
    )
    config = inline_kubeconfig(cluster)
    config["users"] = [{"name": "deployer", "user": {"token": token}}]
    for context in config["contexts"]:
        context["context"]["user"] = "deployer"
    return config, token


def with_env(job: dict[str, Any], env: list[dict[str, Any]]) -> dict[str, Any]:
    job["spec"]["tfReplicaSpecs"]["Worker"]["template"]["spec"]["containers"][0]["env"] = env
    return job


def container_env(obj: dict[str, Any]) -> dict[str, Any]:
    container = obj["spec"]["tfReplicaSpecs"]["Worker"]["template"]["spec"]["containers"][0]
    return {e["name"]: e.get("value") for e in container["env"]}


def test_vvv_output_holds_no_credentials_and_no_secret_env_values(
    cluster: Cluster, namespace: str, tmp_path: Path
) -> None:
    admin = inline_kubeconfig(cluster)
    # Every value of the kubeconfig's users but the client certificate (public), read here and
    # not by the redaction under test (redact.kubeconfig_credentials), so a credential field it
    # missed is still looked for.
    public = ("client-certificate", "client-certificate-data")
    credentials = [
        value
        for user in admin["users"]
        for key, value in user["user"].items()
        if key not in public and isinstance(value, str)
    ]
    assert credentials, "the admin kubeconfig has inline credentials"
    deployer, token = service_account_kubeconfig(cluster, namespace)
    env = [
        {"name": "DB_PASSWORD", "value": PASSWORD},
        {"name": "WANDB_API_KEY", "value": API_KEY},
        {"name": "BATCH_SIZE", "value": "64"},
    ]
    job = with_env(tfjob("secretive", namespace), env)
    changed = with_env(
        tfjob("secretive", namespace), [*env[:2], {"name": "BATCH_SIZE", "value": "128"}]
    )
    broken = with_env(tfjob("broken", namespace), [{"name": "DB_PASSWORD", "value": 1234}])
    # A document that does not load gives its secrets all the same: given as data (nested too
    # deep for the loader), or as text (a YAML error after the secret: the text is not shown).
    deep = with_env(tfjob("deep", namespace), [{"name": "DB_PASSWORD", "value": DEEP_PASSWORD}])
    nest: dict[str, Any] = deep["spec"]
    for _ in range(150):
        nest = nest.setdefault("x", {})
    unloadable = yaml.safe_dump(
        with_env(tfjob("text", namespace), [{"name": "DB_PASSWORD", "value": TEXT_PASSWORD}])
    )
    (tmp_path / "unloadable.yaml").write_text(unloadable + "  broken: [\n")
    # As a pipeline holds them: in files (or the vault), read by lookups. (ansible-core shows
    # the playbook lines around a failed task, so secrets written into a playbook are shown.)
    # A proxy's password, in a kubeconfig's proxy-url or in the proxy option (nothing listens
    # there: the tasks fail).
    proxied = copy.deepcopy(deployer)
    proxied["clusters"][0]["cluster"]["proxy-url"] = f"http://me:{PROXY_PASSWORD}@127.0.0.1:9"
    files = {
        "admin": admin,
        "deployer": deployer,
        "job": job,
        "broken": broken,
        "deep": deep,
        "proxied": proxied,
    }
    for name, data in files.items():
        (tmp_path / f"{name}.json").write_text(json.dumps(data))
    (tmp_path / "changed.yaml").write_text(yaml.safe_dump(changed))

    def read(name: str) -> str:
        return f"{{{{ lookup('file', '{tmp_path / name}.json') | from_json }}}}"

    result = run_tasks(
        tmp_path,
        cluster.kubeconfig,
        [
            {
                "tfjob.kit.tfjob": {"definition": read("job"), "kubeconfig": read("admin")},
                "diff": True,
            },
            {
                "tfjob.kit.tfjob": {
                    "definition": f"{{{{ lookup('file', '{tmp_path}/changed.yaml') }}}}",
                    "kubeconfig": read("deployer"),
                },
                "diff": True,
            },
            {"tfjob.kit.tfjob_info": {"namespace": namespace, "kubeconfig": read("deployer")}},
            # fails in the module's argument parsing, before any of its own code runs
            {
                "tfjob.kit.tfjob": {
                    "definition": read("job"),
                    "kubeconfig": read("deployer"),
                    "wait_timeout": "soon",
                }
            },
            # fails validation: the finding quotes the value
            {"tfjob.kit.tfjob": {"definition": read("broken"), "kubeconfig": read("admin")}},
            # fail to load
            {"tfjob.kit.tfjob": {"definition": [read("job"), read("deep")]}},
            {
                "tfjob.kit.tfjob": {
                    "definition": f"{{{{ lookup('file', '{tmp_path}/unloadable.yaml') }}}}"
                }
            },
            {"tfjob.kit.tfjob_info": {"namespace": namespace, "kubeconfig": read("proxied")}},
            {
                "tfjob.kit.tfjob_info": {
                    "namespace": namespace,
                    "kubeconfig": read("deployer"),
                    "proxy": f"http://me:{OPTION_PASSWORD}@127.0.0.1:9",
                }
            },
        ],
        "-vvv",
    )
    created, updated, info, bad_option, invalid, too_deep, unloaded, *proxies = result.results
    assert created.get("changed") and updated.get("changed"), result.output
    assert not info.get("failed") and [j["name"] for j in info["jobs"]] == ["secretive"]
    assert bad_option.get("failed") and "wait_timeout" in bad_option["msg"]
    assert invalid.get("failed") and "is not of type" in invalid["msg"]
    registered = json.dumps(result.results)
    for secret in (*credentials, token, PASSWORD, API_KEY):
        assert secret not in result.output, f"{secret[:12]}... is in the -vvv output"
        assert secret not in registered, f"{secret[:12]}... is in a registered result"
    assert "1234 is not of type" not in result.output + registered
    assert too_deep.get("failed") and "nesting deeper than" in too_deep["msg"], too_deep
    assert unloaded.get("failed") and "while parsing a flow node" in unloaded["msg"], unloaded
    assert all(p.get("failed") and "proxy" in p["msg"] for p in proxies), proxies
    assert '"proxy-url": "http://me:********@127.0.0.1:9"' in result.output
    for secret in (DEEP_PASSWORD, TEXT_PASSWORD, PROXY_PASSWORD, OPTION_PASSWORD):
        assert secret not in result.output + registered, f"{secret} is shown"
    assert "could not be loaded, so the secret values" in result.output
    # Masked where they are shown ...
    assert container_env(created["objects"][0])["DB_PASSWORD"] == redact.MASK
    assert container_env(created["objects"][0])["BATCH_SIZE"] == "64"
    assert container_env(updated["diff"][0]["after"])["WANDB_API_KEY"] == redact.MASK
    assert container_env(updated["diff"][0]["after"])["BATCH_SIZE"] == "128"
    # (registered results carry no invocation; -vvv prints it)
    assert '"module_args": {' in result.output and '"value": "********"' in result.output
    # ... and real in the cluster.
    held = cluster.get("tfjob", "secretive", "-n", namespace)
    assert container_env(held) == {
        "DB_PASSWORD": PASSWORD,
        "WANDB_API_KEY": API_KEY,
        "BATCH_SIZE": "128",
    }
    # The rest of the kubeconfig is still shown in the invocation: only credentials are hidden.
    assert f'"server": "{admin["clusters"][0]["cluster"]["server"]}"' in result.output


def test_impersonated_groups_arrive_one_by_one(
    cluster: Cluster, namespace: str, tmp_path: Path
) -> None:
    suffix = uuid.uuid4().hex[:6]
    first, second = f"it-idle-{suffix}", f"it-readers-{suffix}"
    cluster.kubectl(
        "create",
        "role",
        "tfjob-reader",
        "-n",
        namespace,
        "--verb=get,list",
        "--resource=tfjobs.kubeflow.org",
    )
    cluster.kubectl(
        "create",
        "rolebinding",
        "tfjob-reader",
        "-n",
        namespace,
        "--role=tfjob-reader",
        f"--group={second}",
    )
    user = f"it-user-{suffix}"
    result = run_tasks(
        tmp_path,
        cluster.kubeconfig,
        [
            {
                "tfjob.kit.tfjob_info": {
                    "namespace": namespace,
                    "impersonate_user": user,
                    "impersonate_groups": [first, second],
                }
            },
            {
                "tfjob.kit.tfjob_info": {
                    "namespace": namespace,
                    "impersonate_user": user,
                    "impersonate_groups": [first],
                }
            },
        ],
    )
    both, only_first = result.results
    # Only the second group may read TFJobs here: the read succeeds only if it arrived as a
    # group of its own (a joined "first, second" header is one group nobody bound).
    assert not both.get("failed"), both
    assert both["jobs"] == []
    assert only_first.get("failed") and "forbidden" in only_first["msg"], only_first
