"""The toolkit's own kubeconfig reading against kubernetes.config, the library it stands in for.

Every shape ``tfjob_kit.kube.kubeconfig`` reads itself is read by both, and the two must agree
on the server, the TLS material (compared by content: kubernetes.config writes data to temporary
files), the Authorization header and the TLS options. Every other shape goes to kubernetes.config,
whose errors the user then sees unchanged.
"""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

import pytest

from tfjob_kit.kube import kubeconfig
from tfjob_kit.kube.api_errors import KubeError
from tfjob_kit.kube.connection import Connection

CA, CERT, KEY = b"-----CA-----\n", b"-----CERT-----\n", b"-----KEY-----\n"


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def config(cluster: dict[str, Any], user: dict[str, Any] | None, **extra: Any) -> dict[str, Any]:
    found: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [
            {"name": "other", "cluster": {"server": "https://elsewhere:1"}},
            {"name": "c", "cluster": cluster},
        ],
        "contexts": [
            {"name": "ctx", "context": {"cluster": "c", "user": "u", "namespace": "ns"}},
            {"name": "far", "context": {"cluster": "other", "user": "u"}},
        ],
        "current-context": "ctx",
        "users": [] if user is None else [{"name": "u", "user": user}],
    }
    found.update(extra)
    return found


FILES = {"certificate-authority": "pki/ca.crt"}
USER_FILES = {"client-certificate": "pki/user.crt", "client-key": "pki/user.key"}
DATA = {"certificate-authority-data": b64(CA)}
USER_DATA = {"client-certificate-data": b64(CERT), "client-key-data": b64(KEY)}
SERVER = {"server": "https://127.0.0.1:6443/"}

READ_HERE = {
    "files, relative to the kubeconfig": (config({**SERVER, **FILES}, USER_FILES), None),
    "data": (config({**SERVER, **DATA}, USER_DATA), None),
    "data preferred over files": (
        config({**SERVER, **FILES, **DATA}, {**USER_FILES, **USER_DATA}),
        None,
    ),
    "a token": (config({**SERVER, **DATA}, {"token": "abc.def"}), None),
    "a token beside a certificate": (config({**SERVER, **DATA}, {**USER_DATA, "token": "t"}), None),
    "insecure, a TLS server name and a proxy": (
        config(
            {
                **SERVER,
                "insecure-skip-tls-verify": True,
                "tls-server-name": "kubernetes.default",
                "proxy-url": "http://proxy:3128",
            },
            {"token": "t"},
        ),
        None,
    ),
    "insecure false": (config({**SERVER, **DATA, "insecure-skip-tls-verify": False}, {}), None),
    "empty data is none": (
        config({**SERVER, "certificate-authority-data": ""}, {"client-certificate-data": ""}),
        None,
    ),
    "plain http takes no TLS material": (
        config({"server": "http://127.0.0.1:8080", **FILES}, USER_FILES),
        None,
    ),
    "the context asked for": (config({**SERVER, **DATA}, {"token": "t"}), "far"),
    "a user the kubeconfig does not list": (config({**SERVER, **DATA}, None), None),
}


def write(tmp_path: Path, data: dict[str, Any]) -> str:
    import yaml

    pki = tmp_path / "pki"
    pki.mkdir(exist_ok=True)
    for name, content in (("ca.crt", CA), ("user.crt", CERT), ("user.key", KEY)):
        (pki / name).write_bytes(content)
    path = tmp_path / "config"
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    return str(path)


def content(file: str | None, data: bytes | None) -> bytes | None:
    return data if data is not None else (Path(file).read_bytes() if file else None)


def seen(found: kubeconfig.Settings) -> dict[str, Any]:
    """What a request is made of, with files read."""
    return {
        "host": found.host,
        "verify": found.verify,
        "ca": content(found.ca_file, found.ca_data),
        "cert": content(found.cert_file, found.cert_data),
        "key": content(found.key_file, found.key_data),
        "authorization": found.authorization,
        "tls_server_name": found.tls_server_name,
        "proxy": found.proxy,
    }


@pytest.mark.parametrize("shape", list(READ_HERE))
def test_read_here_as_kubernetes_config_reads_it(
    shape: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data, context = READ_HERE[shape]
    monkeypatch.chdir(tmp_path)  # where another directory would resolve relative paths
    conn = Connection(kubeconfig=write(tmp_path, data), context=context)
    ours = kubeconfig._read(conn)
    theirs = kubeconfig._through_kubernetes(conn)
    assert seen(ours) == seen(theirs)
    assert kubeconfig.settings(conn) == kubeconfig._overridden(ours, conn)


def test_an_inline_kubeconfig_is_read_as_kubernetes_config_reads_it() -> None:
    conn = Connection(kubeconfig=config({**SERVER, **DATA}, USER_DATA))
    assert seen(kubeconfig._read(conn)) == seen(kubeconfig._through_kubernetes(conn))


def environment(monkeypatch: pytest.MonkeyPatch, value: str) -> None:
    """KUBECONFIG, also where kubernetes.config read it when it was imported."""
    from kubernetes.config import kube_config

    monkeypatch.setenv("KUBECONFIG", value)
    monkeypatch.setattr(kube_config, "KUBE_CONFIG_DEFAULT_LOCATION", value)


def test_kubeconfig_from_the_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = write(tmp_path, config({**SERVER, **DATA}, {"token": "env"}))
    environment(monkeypatch, path)
    conn = Connection()
    assert seen(kubeconfig._read(conn)) == seen(kubeconfig._through_kubernetes(conn))
    assert kubeconfig.settings(conn).authorization == "Bearer env"


LEFT_TO_KUBERNETES: dict[str, dict[str, Any]] = {
    "an exec plugin": {"exec": {"apiVersion": "client.authentication.k8s.io/v1", "command": "x"}},
    "an auth provider": {"auth-provider": {"name": "oidc", "config": {}}},
    "a token file": {"tokenFile": "pki/user.crt"},
    "a username and password": {"username": "a", "password": "b"},
}


@pytest.mark.parametrize("shape", list(LEFT_TO_KUBERNETES))
def test_other_credentials_are_left_to_kubernetes_config(shape: str, tmp_path: Path) -> None:
    conn = Connection(kubeconfig=write(tmp_path, config(SERVER, LEFT_TO_KUBERNETES[shape])))
    with pytest.raises(kubeconfig._NotReadHereError):
        kubeconfig._read(conn)


def test_a_token_file_reads_as_kubernetes_config_reads_it(tmp_path: Path) -> None:
    conn = Connection(kubeconfig=write(tmp_path, config(SERVER, {"tokenFile": "pki/user.crt"})))
    assert kubeconfig.settings(conn).authorization == f"Bearer {CERT.decode()}"


def test_several_kubeconfigs_are_merged_by_kubernetes_config(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = write(tmp_path, config({**SERVER, **DATA}, {"token": "one"}))
    second = tmp_path / "second"
    second.write_text("apiVersion: v1\nkind: Config\n", encoding="utf-8")
    environment(monkeypatch, f"{first}:{second}")
    with pytest.raises(kubeconfig._NotReadHereError):
        kubeconfig._read(Connection())
    assert kubeconfig.settings(Connection()).authorization == "Bearer one"


@pytest.mark.parametrize(
    ("change", "words"),
    [
        ({"current-context": "missing"}, "missing"),
        ({"clusters": []}, "c"),
        ({"contexts": "not a list"}, ""),
    ],
)
def test_a_broken_kubeconfig_fails_with_kubernetes_configs_words(
    change: dict[str, Any], words: str, tmp_path: Path
) -> None:
    path = write(tmp_path, config({**SERVER, **DATA}, {"token": "t"}, **change))
    conn = Connection(kubeconfig=path)
    with pytest.raises(kubeconfig._NotReadHereError):
        kubeconfig._read(conn)
    with pytest.raises(KubeError, match=f"cannot use {path}: .*{words}"):
        kubeconfig.settings(conn)


def test_options_override_the_kubeconfig(tmp_path: Path) -> None:
    conn = Connection(
        kubeconfig=write(tmp_path, config({**SERVER, **DATA}, USER_DATA)),
        host="https://other:443/",
        api_key="s3cr3t",
        validate_certs=False,
        ca_cert="/ca.pem",
    )
    found = kubeconfig.settings(conn)
    assert (found.host, found.authorization, found.verify) == (
        "https://other:443",
        "Bearer s3cr3t",
        False,
    )
    assert (found.ca_file, found.ca_data, found.cert_data, found.key_data) == (
        "/ca.pem",
        None,
        None,
        None,
    )
    assert "s3cr3t" not in repr(found)


def test_a_host_without_a_kubeconfig_reads_no_file(monkeypatch: pytest.MonkeyPatch) -> None:
    environment(monkeypatch, "/nonexistent/config")
    found = kubeconfig.settings(Connection(host="https://h:6443", api_key="t"))
    assert (found.host, found.authorization, found.verify) == ("https://h:6443", "Bearer t", True)
