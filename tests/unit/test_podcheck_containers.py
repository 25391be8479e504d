"""Pure tests of the container and security context checks' helpers (``podcheck.containers``,
``podcheck.security``): the image reference rule behind the pull policy default, the sysctl
namespace rules, the downward API field path split, and robustness against values of the wrong
JSON type. Whole pods are compared with the API server in
``tests/integration/test_podcheck_containers.py``."""

from __future__ import annotations

import copy
import itertools
from typing import Any

import pytest

from tfjob_kit.podcheck import containers, downward_api, security
from tfjob_kit.podcheck.field import ErrorType


@pytest.mark.parametrize(
    ("image", "tag"),
    [
        ("busybox", "latest"),
        ("busybox:1.36", "1.36"),
        ("busybox:latest", "latest"),
        ("busybox:Latest", "Latest"),  # tags are case-sensitive: not "latest"
        ("library/busybox@sha256:" + "a" * 64, ""),  # a digest and no tag
        ("busybox:latest@sha256:" + "b" * 64, "latest"),
        ("localhost:5000/tf/tf:2.15", "2.15"),
        ("Example.COM/team/busybox", "latest"),  # a registry host may be upper case
        ("Busybox", ""),  # a repository may not: unparsable
        ("c" * 64, ""),  # a bare image id is refused as a name
        ("busybox@sha256:abc", ""),  # a digest of the wrong length
        ("busy box", ""),
        ("", ""),
    ],
)
def test_image_tag(image: str, tag: str) -> None:
    assert containers.image_tag(image) == tag
    assert containers.image_tag(image) == tag  # remembered: the same answer again
    assert containers._image_tag(image) == tag


def test_remembered_image_tags_are_forgotten_when_full(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(containers, "_IMAGE_TAGS", {})
    monkeypatch.setattr(containers, "_IMAGE_TAGS_MAX", 2)
    images = ["a:1", "b", "Busybox", "a:1", "c@sha256:" + "d" * 64]
    assert [containers.image_tag(i) for i in images] == ["1", "latest", "", "1", ""]
    assert len(containers._IMAGE_TAGS) <= 2


def test_pull_policy_default_follows_the_tag() -> None:
    spec: dict[str, Any] = {
        "containers": [{"name": "a", "image": "busybox"}, {"name": "b", "image": "Busybox"}],
        "initContainers": [{"name": "c", "image": "busybox:1", "imagePullPolicy": "Never"}],
    }
    containers.set_defaults(spec)
    assert [c["imagePullPolicy"] for c in spec["containers"]] == ["Always", "IfNotPresent"]
    assert spec["initContainers"][0]["imagePullPolicy"] == "Never"


@pytest.mark.usefixtures("on_1_34")
def test_set_defaults_is_idempotent_and_drops_the_disabled_fields() -> None:
    spec: dict[str, Any] = {
        "hostNetwork": True,
        "containers": [
            {
                "name": "a",
                "image": "busybox",
                "restartPolicy": "Never",
                "ports": [{"containerPort": 80}],
                "lifecycle": {"stopSignal": "SIGTERM"},
                "env": [{"name": "X", "valueFrom": {"fileKeyRef": {"key": "k"}}}],
                "livenessProbe": {"httpGet": {"port": 80}, "periodSeconds": 0},
            }
        ],
        "initContainers": [
            {"name": "s", "image": "b", "restartPolicy": "Always", "restartPolicyRules": []},
            {"name": "i", "image": "b", "restartPolicy": "OnFailure"},
        ],
    }
    containers.set_defaults(spec)
    once = copy.deepcopy(spec)
    containers.set_defaults(spec)
    assert spec == once
    ctr = spec["containers"][0]
    assert "restartPolicy" not in ctr and "lifecycle" not in ctr
    assert ctr["env"][0]["valueFrom"] == {}
    assert ctr["ports"] == [{"containerPort": 80, "protocol": "TCP", "hostPort": 80}]
    assert ctr["livenessProbe"]["periodSeconds"] == 10
    assert ctr["livenessProbe"]["httpGet"] == {"port": 80, "path": "/", "scheme": "HTTP"}
    assert spec["initContainers"][0] == {
        "name": "s",
        "image": "b",
        "restartPolicy": "Always",
        "imagePullPolicy": "Always",  # "b" has no tag: latest
        "terminationMessagePath": "/dev/termination-log",
        "terminationMessagePolicy": "File",
    }
    assert "restartPolicy" not in spec["initContainers"][1]


@pytest.mark.parametrize(
    ("name", "namespace"),
    [
        ("net.ipv4.ip_forward", "Net"),
        ("net/ipv4/ip_forward", "Net"),  # the slash form is normalized first
        ("net.ipv4.conf.eno2/100.rp_filter", "Net"),
        ("kernel.shmmax", "IPC"),
        ("kernel/shm_rmid_forced", "IPC"),
        ("kernel.msg*", "IPC"),  # a prefix pattern: its prefix decides
        ("fs.mqueue.msg_max", "IPC"),
        ("fs.mqueue", ""),
        ("kernel.domainname", ""),
        ("network.x", ""),
        ("", ""),
    ],
)
def test_sysctl_namespace(name: str, namespace: str) -> None:
    assert security.sysctl_namespace(name) == namespace


@pytest.mark.parametrize(
    ("name", "valid"),
    [
        ("net.ipv4.ip_forward", True),
        ("kernel/shm_rmid_forced", True),
        ("a" * 253, True),
        ("a" * 254, False),
        ("Net.ipv4", False),
        ("kernel.", False),
        ("net..x", False),
        ("-a", False),
    ],
)
def test_sysctl_names(name: str, valid: bool) -> None:
    assert security.is_valid_sysctl_name(name) is valid


@pytest.mark.parametrize(
    ("path", "split"),
    [
        ("metadata.labels['app']", ("metadata.labels", "app", True)),
        ("metadata.annotations['a/b']", ("metadata.annotations", "a/b", True)),
        ("metadata.labels", ("metadata.labels", "", False)),
        ("['x']", ("['x']", "", False)),
        ("metadata.labels['a']b']", ("metadata.labels", "a']b", True)),
    ],
)
def test_split_maybe_subscripted_path(path: str, split: tuple[str, str, bool]) -> None:
    assert downward_api.split_maybe_subscripted_path(path) == split


def test_init_container_host_ports_are_indexed_as_a_slice_of_one() -> None:
    """Go checks each init container's host ports alone, so the error names index 0 (a
    server dry run shows ``spec.initContainers[0].ports[1].hostPort`` for the second init
    container)."""
    ports = [{"containerPort": 1, "hostPort": 99}, {"containerPort": 2, "hostPort": 99}]
    spec: dict[str, Any] = {
        "containers": [{"name": "a", "image": "b"}],
        "initContainers": [
            {"name": "i", "image": "b"},
            {"name": "j", "image": "b", "ports": ports},
        ],
    }
    containers.set_defaults(spec)
    errs = containers.validate_containers(spec, {}, set(), ("spec",))
    assert [(e.field, e.type, e.value) for e in errs] == [
        ("spec.initContainers[0].ports[1].hostPort", ErrorType.DUPLICATE, "TCP//99")
    ]


def test_a_security_context_is_printed_as_go_marshals_the_internal_type() -> None:
    sc = {
        "privileged": True,
        "allowPrivilegeEscalation": False,
        "capabilities": {"add": ["CAP_SYS_ADMIN"], "drop": []},
        "seLinuxOptions": {"user": "u", "level": "s0"},
        "runAsUser": 5,
        "readOnlyRootFilesystem": True,
        "seccompProfile": {"type": "RuntimeDefault"},
        "procMount": "Default",
    }
    errs = security.validate_security_context(
        sc, ("spec", "containers", 0, "securityContext"), True
    )
    # the body a server dry run of this context gave
    assert errs[0].body == (
        'Invalid value: {"Capabilities":{"Add":["CAP_SYS_ADMIN"],"Drop":[]},"Privileged":true,'
        '"SELinuxOptions":{"User":"u","Role":"","Type":"","Level":"s0"},"WindowsOptions":null,'
        '"RunAsUser":5,"RunAsGroup":null,"RunAsNonRoot":null,"ReadOnlyRootFilesystem":true,'
        '"AllowPrivilegeEscalation":false,"ProcMount":"Default","SeccompProfile":'
        '{"Type":"RuntimeDefault","LocalhostProfile":null},"AppArmorProfile":null}: '
        "cannot set `allowPrivilegeEscalation` to false and `privileged` to true"
    )
    assert len(errs) == 2


_ODD = [None, 0, -1, 1.5, True, "x", "", [], [None, 1, "a"], {}, {"a": None}]
_FIELDS = [
    "name",
    "image",
    "ports",
    "env",
    "envFrom",
    "livenessProbe",
    "lifecycle",
    "securityContext",
    "resizePolicy",
    "imagePullPolicy",
    "restartPolicy",
    "volumeMounts",
    "resources",
]


def _odd_specs() -> list[dict[str, Any]]:
    specs: list[dict[str, Any]] = []
    for field, value in itertools.product(_FIELDS, _ODD):
        specs.append({"containers": [{"name": "a", "image": "b", field: value}]})
    for key, value in itertools.product(
        [
            "containers",
            "initContainers",
            "ephemeralContainers",
            "securityContext",
            "hostNetwork",
            "hostUsers",
        ],
        _ODD,
    ):
        specs.append({"containers": [{"name": "a", "image": "b"}], key: value})
    nested = {
        "ports": [{"containerPort": "80", "hostPort": None, "protocol": 6, "name": 1}],
        "env": [{"name": 1, "valueFrom": {"fieldRef": {"fieldPath": 3}, "resourceFieldRef": []}}],
        "envFrom": [{"prefix": 1, "configMapRef": "cm"}],
        "livenessProbe": {"httpGet": {"port": None, "httpHeaders": [1, {"name": 2}]}, "grpc": 1},
        "lifecycle": {"preStop": {"sleep": {"seconds": "1"}}, "postStart": []},
        "securityContext": {"capabilities": {"add": "CAP_SYS_ADMIN"}, "seccompProfile": "x"},
    }
    specs.append({"containers": [{"name": "a", "image": "b", **nested}]})
    specs.append(
        {
            "containers": [{"name": "a", "image": "b"}],
            "securityContext": {
                "sysctls": [None, {"name": 1}, "x"],
                "supplementalGroups": "1",
                "windowsOptions": {"runAsUserName": 5, "hostProcess": "yes"},
            },
        }
    )
    return specs


@pytest.mark.parametrize("spec", _odd_specs())
def test_values_of_the_wrong_type_never_raise(spec: dict[str, Any]) -> None:
    containers.set_defaults(spec)
    containers.validate_containers(spec, {}, set(), ("spec",))
    containers.validate_containers_only_for_pod(spec, ("spec",))
    security.validate_pod_security_context(spec, ("spec",))
    security.validate_host_users(spec, ("spec",))
    security.validate_windows_host_process_pod(spec, ("spec",))
