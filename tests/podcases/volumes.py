"""Pod template mutations for volumes, volume mounts and volume devices (podcheck.volumes).

Each mutation changes a valid TFJob replica template in place (its first container; the base
templates may already hold a volume ``scratch`` mounted at ``/scratch``, which no mutation here
reuses). Names starting ``ok-`` leave the pod valid on the oldest minor (1.34): edge values the
server accepts; VERDICT_CHANGES lists those a newer minor refuses. The "-dropped" cases are
sources 1.34 drops before it validates (their gates off) and newer minors keep and check.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

from . import Mutation, Template, VerdictChanges, all_of, set_spec
from .containers import DIVISOR_CASES


def _spec(t: Template) -> dict[str, Any]:
    spec: dict[str, Any] = t.setdefault("spec", {})
    return spec


def _container(t: Template, index: int = 0) -> dict[str, Any]:
    container: dict[str, Any] = _spec(t)["containers"][index]
    return container


def vol(
    volume: dict[str, Any] | list[dict[str, Any]],
    mounts: list[dict[str, Any]] | None = None,
    devices: list[dict[str, Any]] | None = None,
    *,
    privileged: bool = False,
) -> Callable[[Template], None]:
    """Add volumes, and mounts/devices to the first container."""
    volumes = volume if isinstance(volume, list) else [volume]

    def mutate(t: Template) -> None:
        _spec(t).setdefault("volumes", []).extend(copy.deepcopy(volumes))
        c = _container(t)
        if mounts:
            c.setdefault("volumeMounts", []).extend(copy.deepcopy(mounts))
        if devices:
            c.setdefault("volumeDevices", []).extend(copy.deepcopy(devices))
        if privileged:
            c.setdefault("securityContext", {})["privileged"] = True

    return mutate


def source(name: str, src: dict[str, Any], **mount: Any) -> Callable[[Template], None]:
    """One volume with one source, mounted at /mnt/<name> (with extra mount fields)."""
    return vol({"name": name, **src}, [{"name": name, "mountPath": f"/mnt/{name}", **mount}])


def claim_template(spec: dict[str, Any], **meta: Any) -> dict[str, Any]:
    template: dict[str, Any] = {"spec": spec}
    if meta:
        template["metadata"] = meta
    return {"ephemeral": {"volumeClaimTemplate": template}}


GOOD_CLAIM = {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}


def claim(**changes: Any) -> dict[str, Any]:
    spec = copy.deepcopy(GOOD_CLAIM)
    for key, value in changes.items():
        if value is None:
            spec.pop(key, None)
        else:
            spec[key] = value
    return claim_template(spec)


def dapi(*items: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"downwardAPI": {"items": list(items), **extra}}


def field_ref(path: str, field_path: str, **extra: Any) -> dict[str, Any]:
    return {"path": path, "fieldRef": {"fieldPath": field_path, **extra}}


def resource_ref(path: str, **ref: Any) -> dict[str, Any]:
    return {"path": path, "resourceFieldRef": ref}


def projected(*sources: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"projected": {"sources": list(sources), **extra}}


def mount(**fields: Any) -> Callable[[Template], None]:
    """An emptyDir volume "data" and one mount of it with the given fields."""
    entry = {"name": "data", "mountPath": "/data", **fields}
    return vol({"name": "data", "emptyDir": {}}, [entry], privileged=False)


def _mounts_on_init_container(t: Template) -> None:
    _spec(t)["volumes"] = [{"name": "data", "emptyDir": {}}]
    _spec(t)["initContainers"] = [
        {
            "name": "init",
            "image": "busybox:1.36",
            "volumeMounts": [
                {"name": "data", "mountPath": "/data"},
                {"name": "missing", "mountPath": "/data"},
            ],
        }
    ]


def _two_containers_same_path(t: Template) -> None:
    _spec(t)["volumes"] = [{"name": "data", "emptyDir": {}}]
    second = copy.deepcopy(_container(t))
    second["name"] = "sidecar"
    _spec(t)["containers"].append(second)
    for c in _spec(t)["containers"]:
        c["volumeMounts"] = [{"name": "data", "mountPath": "/data"}]


TOKEN_PATH = "/var/run/secrets/kubernetes.io/serviceaccount"
PVC = {"name": "block", "persistentVolumeClaim": {"claimName": "data"}}
EPHEMERAL_BLOCK = {"name": "eblock", **claim(volumeMode="Block")}

MUTATIONS: list[Mutation] = [
    # --- valid: the sources, defaults and edge values the server accepts ---
    Mutation("ok-emptydir", source("tmp", {"emptyDir": {}})),
    Mutation(
        "ok-emptydir-memory", source("shm", {"emptyDir": {"medium": "Memory", "sizeLimit": "1Gi"}})
    ),
    Mutation("ok-emptydir-sizelimit-zero", source("z", {"emptyDir": {"sizeLimit": "0"}})),
    Mutation(
        "ok-no-source-is-emptydir", vol({"name": "plain"}, [{"name": "plain", "mountPath": "/p"}])
    ),
    Mutation(
        "ok-hostpath",
        source("host", {"hostPath": {"path": "/var/log", "type": "DirectoryOrCreate"}}),
    ),
    Mutation(
        "ok-hostpath-relative", source("host", {"hostPath": {"path": "var/..log", "type": ""}})
    ),
    Mutation(
        "ok-secret",
        source(
            "creds",
            {
                "secret": {
                    "secretName": "creds",
                    "defaultMode": 0o400,
                    "items": [
                        {"key": "a", "path": "x/a", "mode": 0o777},
                        {"key": "b", "path": "b"},
                    ],
                    "optional": True,
                }
            },
        ),
    ),
    Mutation(
        "ok-secret-mode-zero", source("creds", {"secret": {"secretName": "c", "defaultMode": 0}})
    ),
    Mutation(
        "configmap-item-path-dots-prefix",
        source("cfg", {"configMap": {"name": "cfg", "items": [{"key": "k", "path": "..k/x"}]}}),
    ),
    Mutation(
        "ok-downwardapi",
        source(
            "info",
            dapi(
                field_ref("labels", "metadata.labels"),
                field_ref("app", "metadata.labels['app']"),
                field_ref("note", "metadata.annotations['Example.COM/Note']"),
                field_ref("uid", "metadata.uid", apiVersion="v1"),
                resource_ref(
                    "mem", containerName="tensorflow", resource="limits.memory", divisor="1Mi"
                ),
                resource_ref(
                    "cpu", containerName="tensorflow", resource="requests.cpu", divisor="1m"
                ),
                resource_ref("hp", containerName="tensorflow", resource="limits.hugepages-2Mi"),
                resource_ref(
                    "eph", containerName="tensorflow", resource="requests.ephemeral-storage"
                ),
                defaultMode=0o777,
            ),
        ),
    ),
    Mutation(
        "ok-downwardapi-divisor-canonical",
        source(
            "info",
            dapi(
                resource_ref(
                    "cpu", containerName="tensorflow", resource="limits.cpu", divisor="1000m"
                )
            ),
        ),
    ),
    Mutation(
        "ok-projected",
        source(
            "all",
            projected(
                {"secret": {"name": "s", "items": [{"key": "a", "path": "a"}]}},
                {"configMap": {"name": "c", "items": [{"key": "b", "path": "b"}]}},
                {"downwardAPI": {"items": [field_ref("c", "metadata.name")]}},
                {
                    "serviceAccountToken": {
                        "path": "token",
                        "expirationSeconds": 600,
                        "audience": "x",
                    }
                },
                {"serviceAccountToken": {"path": "a", "expirationSeconds": 4294967296}},
            ),
        ),
    ),
    Mutation("ok-projected-empty-source", source("p", projected({}))),
    Mutation(
        "ok-pvc", source("data", {"persistentVolumeClaim": {"claimName": "data", "readOnly": True}})
    ),
    Mutation("ok-ephemeral", source("eph", claim())),
    Mutation(
        "ok-ephemeral-full",
        source(
            "eph",
            claim_template(
                {
                    "accessModes": ["ReadWriteOncePod"],
                    "resources": {"requests": {"storage": "0.0001"}, "limits": {"storage": "2Gi"}},
                    "storageClassName": "fast",
                    "volumeAttributesClassName": "gold",
                    "volumeMode": "Filesystem",
                    "selector": {"matchExpressions": [{"key": "tier", "operator": "Exists"}]},
                    "dataSource": {"kind": "PersistentVolumeClaim", "name": "src"},
                    "dataSourceRef": {"kind": "PersistentVolumeClaim", "name": "src"},
                },
                labels={"app": "x"},
                annotations={"note": "y"},
                creationTimestamp=None,
            ),
        ),
    ),
    Mutation("ok-nfs", source("nfs", {"nfs": {"server": "10.0.0.1", "path": "/exports"}})),
    Mutation("ok-csi", source("csi", {"csi": {"driver": "Secrets-Store.CSI.k8s.io"}})),
    Mutation(
        "ok-csi-secret-ref",
        source(
            "csi", {"csi": {"driver": "x.example.com", "nodePublishSecretRef": {"name": "a.b"}}}
        ),
    ),
    Mutation(
        "ok-gitrepo",
        source("repo", {"gitRepo": {"repository": "https://x/y.git", "directory": "."}}),
    ),
    Mutation(
        "ok-image-volume-dropped",
        vol(
            [{"name": "model", "image": {"reference": ""}}, {"name": "after", "emptyDir": {}}],
            [{"name": "model", "mountPath": "/model"}],
        ),
    ),
    Mutation(
        "image-volume-dropped-shifts-indexes",
        vol(
            [
                {"name": "model", "image": {"reference": "m:1"}, "secret": {}},
                {"name": "after", "secret": {}},
            ]
        ),
    ),
    Mutation(
        "ok-iscsi",
        source(
            "disk",
            {
                "iscsi": {
                    "targetPortal": "10.0.0.1:3260",
                    "iqn": "iqn.2001-04.com.example:storage",
                    "lun": 255,
                    "initiatorName": "iqn.1996-04.de.suse:01:a",
                }
            },
        ),
    ),
    Mutation(
        "ok-iscsi-eui",
        source("disk", {"iscsi": {"targetPortal": "p", "iqn": "eui.02004567A425678D"}}),
    ),
    Mutation("ok-rbd", source("rbd", {"rbd": {"monitors": ["m:6789"], "image": "img"}})),
    Mutation("ok-cephfs", source("cephfs", {"cephfs": {"monitors": ["m:6789"]}})),
    Mutation("ok-fc-wwids", source("fc", {"fc": {"wwids": ["w"]}})),
    Mutation("ok-fc-wwns", source("fc", {"fc": {"targetWWNs": ["500a"], "lun": 0}})),
    Mutation(
        "ok-azuredisk",
        source(
            "az",
            {"azureDisk": {"diskName": "d", "diskURI": "https://a.blob.core.windows.net/c/d.vhd"}},
        ),
    ),
    Mutation(
        "ok-azuredisk-managed",
        source(
            "az", {"azureDisk": {"diskName": "d", "diskURI": "/subscriptions/x", "kind": "Managed"}}
        ),
    ),
    Mutation("ok-quobyte", source("q", {"quobyte": {"registry": "a:1,[::1]:2", "volume": "v"}})),
    Mutation(
        "ok-flex", source("flex", {"flexVolume": {"driver": "x/y", "options": {"a.io/b": "c"}}})
    ),
    Mutation(
        "ok-storageos", source("sos", {"storageos": {"volumeName": "v", "volumeNamespace": "ns"}})
    ),
    Mutation("ok-flocker", source("flk", {"flocker": {"datasetUUID": "u"}})),
    Mutation(
        "ok-mount-options",
        mount(
            readOnly=True, recursiveReadOnly="Enabled", mountPropagation="None", subPath="a/b..c"
        ),
    ),
    Mutation("ok-mount-rro-ifpossible", mount(readOnly=True, recursiveReadOnly="IfPossible")),
    Mutation(
        "ok-mount-rro-disabled",
        mount(recursiveReadOnly="Disabled", mountPropagation="HostToContainer"),
    ),
    Mutation("ok-mount-subpathexpr", mount(subPathExpr="$(POD_NAME)/logs")),
    Mutation(
        "ok-mount-bidirectional-privileged",
        vol(
            {"name": "data", "emptyDir": {}},
            [{"name": "data", "mountPath": "/data", "mountPropagation": "Bidirectional"}],
            privileged=True,
        ),
    ),
    Mutation("ok-mount-relative-path", mount(mountPath="data")),
    Mutation(
        "ok-mount-same-volume-twice",
        vol(
            {"name": "data", "emptyDir": {}},
            [{"name": "data", "mountPath": "/a"}, {"name": "data", "mountPath": "/b"}],
        ),
    ),
    Mutation("ok-two-containers-same-mount", _two_containers_same_path),
    Mutation("ok-device-pvc", vol(PVC, devices=[{"name": "block", "devicePath": "/dev/xvda"}])),
    Mutation(
        "ok-device-ephemeral",
        vol(EPHEMERAL_BLOCK, devices=[{"name": "eblock", "devicePath": "/dev/x"}]),
    ),
    # --- volume names and source counts ---
    Mutation("volume-name-invalid", source("Bad_Name", {"emptyDir": {}})),
    Mutation("volume-name-dots", source("a.b", {"emptyDir": {}})),
    Mutation("volume-name-too-long", source("v" * 64, {"emptyDir": {}})),
    Mutation("volume-name-empty", vol({"name": "", "emptyDir": {}})),
    Mutation(
        "volume-name-duplicate",
        vol([{"name": "d", "emptyDir": {}}, {"name": "d", "secret": {"secretName": "s"}}]),
    ),
    Mutation(
        "volume-name-duplicate-of-invalid",
        vol(
            [{"name": "d", "secret": {}}, {"name": "d", "emptyDir": {}}],
            [{"name": "d", "mountPath": "/d"}],
        ),
    ),
    Mutation(
        "volume-two-sources", vol({"name": "two", "emptyDir": {}, "hostPath": {"path": "/x"}})
    ),
    Mutation(
        "volume-three-sources",
        vol({"name": "three", "secret": {}, "configMap": {"name": "c"}, "downwardAPI": {}}),
    ),
    Mutation("volume-cephfs-and-gce", vol({"name": "x", "gcePersistentDisk": {}, "cephfs": {}})),
    Mutation(
        "volume-csi-and-ephemeral", vol({"name": "x", "csi": {"driver": "d"}, "ephemeral": {}})
    ),
    # --- emptyDir, hostPath, gitRepo ---
    Mutation("emptydir-negative-size", source("e", {"emptyDir": {"sizeLimit": "-1Gi"}})),
    Mutation("hostpath-empty-path", source("h", {"hostPath": {"path": "", "type": "Bogus"}})),
    Mutation("hostpath-backsteps", source("h", {"hostPath": {"path": "/a/../b"}})),
    Mutation("hostpath-type", source("h", {"hostPath": {"path": "/a", "type": "directory"}})),
    Mutation("gitrepo-missing", source("g", {"gitRepo": {"directory": "/abs/../x"}})),
    Mutation("gitrepo-backsteps", source("g", {"gitRepo": {"repository": "r", "directory": ".."}})),
    # --- secret, configMap (validateKeyToPath) ---
    Mutation("secret-no-name", source("s", {"secret": {}})),
    Mutation(
        "secret-default-mode-high", source("s", {"secret": {"secretName": "s", "defaultMode": 512}})
    ),
    Mutation(
        "secret-default-mode-negative",
        source("s", {"secret": {"secretName": "s", "defaultMode": -1}}),
    ),
    Mutation(
        "secret-items",
        source(
            "s",
            {
                "secret": {
                    "secretName": "s",
                    "items": [
                        {"key": "", "path": ""},
                        {"key": "a", "path": "/abs"},
                        {"key": "b", "path": "x/../y"},
                        {"key": "c", "path": "..c"},
                        {"key": "d", "path": "..", "mode": 1000},
                        {"key": "e", "path": "e", "mode": -5},
                    ],
                }
            },
        ),
    ),
    Mutation("configmap-no-name", source("c", {"configMap": {"defaultMode": 4096}})),
    Mutation(
        "configmap-items",
        source("c", {"configMap": {"name": "c", "items": [{"key": "k"}, {"path": "../p"}]}}),
    ),
    # --- downwardAPI ---
    Mutation("downwardapi-item-no-path", source("d", dapi(field_ref("", "metadata.name")))),
    Mutation("downwardapi-item-abs-path", source("d", dapi(field_ref("/x", "metadata.name")))),
    Mutation("downwardapi-field-not-supported", source("d", dapi(field_ref("p", "metadata.foo")))),
    Mutation(
        "downwardapi-field-not-for-volumes", source("d", dapi(field_ref("p", "status.podIP")))
    ),
    Mutation("downwardapi-field-spec-host", source("d", dapi(field_ref("p", "spec.host")))),
    Mutation(
        "downwardapi-field-subscript", source("d", dapi(field_ref("p", "metadata.name['x']")))
    ),
    Mutation(
        "downwardapi-label-key", source("d", dapi(field_ref("p", "metadata.labels['bad key']")))
    ),
    Mutation(
        "downwardapi-annotation-key",
        source("d", dapi(field_ref("p", "metadata.annotations['Bad/Key/X']"))),
    ),
    Mutation(
        "downwardapi-empty-subscript", source("d", dapi(field_ref("p", "metadata.labels['']")))
    ),
    Mutation(
        "downwardapi-api-version",
        source("d", dapi(field_ref("p", "metadata.name", apiVersion="v2"))),
    ),
    Mutation("downwardapi-no-field-path", source("d", dapi({"path": "p", "fieldRef": {}}))),
    Mutation("downwardapi-no-ref", source("d", dapi({"path": "p", "mode": 1000}))),
    Mutation(
        "downwardapi-both-refs",
        source(
            "d",
            dapi(
                {
                    "path": "p",
                    "fieldRef": {"fieldPath": "metadata.name"},
                    "resourceFieldRef": {"containerName": "tensorflow", "resource": "limits.cpu"},
                }
            ),
        ),
    ),
    Mutation(
        "downwardapi-resource-no-container",
        source("d", dapi(resource_ref("p", resource="limits.cpu"))),
    ),
    Mutation(
        "downwardapi-resource-empty",
        source("d", dapi(resource_ref("p", containerName="tensorflow"))),
    ),
    Mutation(
        "downwardapi-resource-unsupported",
        source("d", dapi(resource_ref("p", containerName="tensorflow", resource="limits.gpu"))),
    ),
    Mutation(
        "downwardapi-divisor-cpu",
        source(
            "d",
            dapi(resource_ref("p", containerName="tensorflow", resource="limits.cpu", divisor="2")),
        ),
    ),
    Mutation(
        "downwardapi-divisor-memory",
        source(
            "d",
            dapi(
                resource_ref(
                    "p", containerName="tensorflow", resource="requests.memory", divisor="3Mi"
                )
            ),
        ),
    ),
    Mutation(
        "downwardapi-divisor-storage",
        source(
            "d",
            dapi(
                resource_ref(
                    "p",
                    containerName="tensorflow",
                    resource="limits.ephemeral-storage",
                    divisor="1m",
                )
            ),
        ),
    ),
    Mutation(
        "downwardapi-divisor-hugepages",
        source(
            "d",
            dapi(
                resource_ref(
                    "p", containerName="tensorflow", resource="limits.hugepages-1Gi", divisor="2Gi"
                )
            ),
        ),
    ),
    Mutation(
        "downwardapi-divisor-no-resource",
        source("d", dapi(resource_ref("p", resource="limits.memory", divisor="1e3"))),
    ),
    Mutation(
        "ok-downwardapi-divisor-zero",
        source("d", dapi(resource_ref("p", containerName="x", resource="limits.cpu", divisor="0"))),
    ),
    Mutation(
        "downwardapi-divisor-cpu-binary",
        source(
            "d", dapi(resource_ref("p", containerName="x", resource="limits.cpu", divisor="1Ki"))
        ),
    ),
    Mutation(
        "ok-downwardapi-divisor-memory-canonical",
        source(
            "d",
            dapi(resource_ref("p", containerName="x", resource="limits.memory", divisor="1024Ki")),
        ),
    ),
    Mutation("downwardapi-default-mode", source("d", dapi(defaultMode=-1))),
    # --- projected ---
    Mutation("projected-default-mode", source("p", projected(defaultMode=1024))),
    Mutation(
        "projected-duplicate-paths",
        source(
            "p",
            projected(
                {"secret": {"name": "s", "items": [{"key": "a", "path": "x"}]}},
                {"configMap": {"name": "c", "items": [{"key": "b", "path": "x"}]}},
                {"downwardAPI": {"items": [field_ref("x", "metadata.name")]}},
            ),
        ),
    ),
    Mutation(
        "projected-two-types-in-source",
        source(
            "p",
            projected(
                {
                    "secret": {"name": "s"},
                    "configMap": {"name": "c"},
                    "serviceAccountToken": {"path": "t"},
                }
            ),
        ),
    ),
    Mutation(
        "projected-sources-invalid",
        source(
            "p",
            projected(
                {"secret": {"items": [{"key": "", "path": "/a"}]}},
                {"configMap": {"items": [{"key": "k", "path": "..b"}]}},
                {"downwardAPI": {"items": [{"path": "d"}, field_ref("/e", "metadata.nope")]}},
            ),
        ),
    ),
    Mutation(
        "projected-item-no-path",
        source(
            "p",
            projected(
                {"secret": {"name": "s", "items": [{"key": "a", "path": ""}]}},
                {"configMap": {"name": "c", "items": [{"key": "b", "path": ""}]}},
            ),
        ),
    ),
    Mutation(
        "projected-token-expiration-short",
        source("p", projected({"serviceAccountToken": {"path": "t", "expirationSeconds": 599}})),
    ),
    Mutation(
        "projected-token-expiration-long",
        source(
            "p", projected({"serviceAccountToken": {"path": "t", "expirationSeconds": 4294967297}})
        ),
    ),
    Mutation("projected-token-no-path", source("p", projected({"serviceAccountToken": {}}))),
    Mutation(
        "projected-token-abs-path", source("p", projected({"serviceAccountToken": {"path": "/t"}}))
    ),
    Mutation(
        "ok-projected-cluster-trust-bundle-dropped",
        source(
            "p", projected({"clusterTrustBundle": {"path": "/bad", "name": "x", "signerName": "y"}})
        ),
    ),
    Mutation(
        "ok-projected-pod-certificate-dropped",
        source("p", projected({"podCertificate": {"keyType": "DSA", "signerName": "x"}})),
    ),
    # --- claims ---
    Mutation("pvc-no-claim-name", source("c", {"persistentVolumeClaim": {}})),
    Mutation("ephemeral-no-template", source("e", {"ephemeral": {}})),
    Mutation("ephemeral-no-spec", source("e", {"ephemeral": {"volumeClaimTemplate": {}}})),
    Mutation(
        "ephemeral-access-modes", source("e", claim(accessModes=["ReadWriteOnce", "Sometimes"]))
    ),
    Mutation(
        "ephemeral-rwop-with-others",
        source("e", claim(accessModes=["ReadWriteOncePod", "ReadOnlyMany"])),
    ),
    Mutation("ephemeral-no-storage", source("e", claim(resources={"limits": {"storage": "1Gi"}}))),
    Mutation(
        "ephemeral-storage-zero", source("e", claim(resources={"requests": {"storage": "0"}}))
    ),
    Mutation(
        "ephemeral-storage-negative",
        source("e", claim(resources={"requests": {"storage": "-1024Mi"}})),
    ),
    Mutation("ephemeral-storage-class", source("e", claim(storageClassName="Fast_Disks"))),
    Mutation("ephemeral-attributes-class", source("e", claim(volumeAttributesClassName="-gold"))),
    Mutation("ephemeral-volume-mode", source("e", claim(volumeMode="Raw"))),
    Mutation(
        "ephemeral-selector",
        source(
            "e",
            claim(
                selector={
                    "matchLabels": {"bad key": "v"},
                    "matchExpressions": [
                        {"key": "a", "operator": "In"},
                        {"key": "b", "operator": "Exists", "values": ["x"]},
                        {"key": "c/d/e", "operator": "Near", "values": ["bad value!"]},
                    ],
                }
            ),
        ),
    ),
    Mutation(
        "ephemeral-data-source", source("e", claim(dataSource={"kind": "Snapshot", "apiGroup": ""}))
    ),
    Mutation(
        "ephemeral-data-source-group",
        source("e", claim(dataSource={"kind": "Snap", "name": "s", "apiGroup": "Bad_Group"})),
    ),
    Mutation(
        "ephemeral-data-source-ref-mismatch",
        source(
            "e",
            claim(
                dataSource={"kind": "PersistentVolumeClaim", "name": "a"},
                dataSourceRef={"kind": "PersistentVolumeClaim", "name": "b"},
            ),
        ),
    ),
    Mutation(
        "ephemeral-data-source-ref-namespace",
        source(
            "e",
            claim(
                dataSource={"kind": "PersistentVolumeClaim", "name": "a"},
                dataSourceRef={
                    "kind": "PersistentVolumeClaim",
                    "name": "a",
                    "namespace": "Other_NS",
                },
            ),
        ),
    ),
    Mutation(
        "ephemeral-metadata",
        source(
            "e",
            claim_template(
                GOOD_CLAIM,
                name="x",
                namespace="y",
                generateName="z",
                labels={"bad key": "v", "ok": "bad value!"},
                annotations={"Bad Key": "v"},
                finalizers=["a/b"],
            ),
        ),
    ),
    Mutation(
        "ephemeral-metadata-set-empty",
        source(
            "e",
            claim_template(
                GOOD_CLAIM,
                finalizers=[],
                ownerReferences=[],
                managedFields=[],
                deletionGracePeriodSeconds=0,
            ),
        ),
    ),
    Mutation(
        "ok-ephemeral-metadata-zero",
        source("e", claim_template(GOOD_CLAIM, name="", uid="", generation=0, labels={})),
    ),
    # --- network and block sources ---
    Mutation("nfs-missing", source("n", {"nfs": {}})),
    Mutation("nfs-relative-path", source("n", {"nfs": {"server": "s", "path": "exports"}})),
    Mutation("iscsi-missing", source("i", {"iscsi": {"lun": -1}})),
    Mutation(
        "iscsi-bad-iqn",
        source("i", {"iscsi": {"targetPortal": "p", "iqn": "iqn.20-01.x", "lun": 256}}),
    ),
    Mutation("iscsi-iqn-prefix", source("i", {"iscsi": {"targetPortal": "p", "iqn": "foo"}})),
    Mutation(
        "iscsi-iqn-eui-short", source("i", {"iscsi": {"targetPortal": "p", "iqn": "eui.0123"}})
    ),
    Mutation(
        "iscsi-iqn-naa-short", source("i", {"iscsi": {"targetPortal": "p", "iqn": "naa.0123"}})
    ),
    Mutation(
        "iscsi-chap-without-secret",
        source(
            "i",
            {
                "iscsi": {
                    "targetPortal": "p",
                    "iqn": "eui.02004567A425678D",
                    "chapAuthSession": True,
                }
            },
        ),
    ),
    Mutation(
        "iscsi-initiator-name",
        source(
            "i",
            {
                "iscsi": {
                    "targetPortal": "p",
                    "iqn": "eui.02004567A425678D",
                    "initiatorName": "bogus",
                }
            },
        ),
    ),
    Mutation(
        "iscsi-initiator-name-iqn",
        source(
            "i",
            {
                "iscsi": {
                    "targetPortal": "p",
                    "iqn": "eui.02004567A425678D",
                    "initiatorName": "iqn.x",
                }
            },
        ),
    ),
    Mutation(
        "iscsi-initiator-name-too-long",
        source(
            "i" * 30,
            {
                "iscsi": {
                    "targetPortal": "t" * 34,
                    "iqn": "eui.02004567A425678D",
                    "initiatorName": "eui.02004567A425678D",
                }
            },
        ),
    ),
    Mutation(
        "ok-iscsi-iqn-found-inside",
        source("i", {"iscsi": {"targetPortal": "p", "iqn": "iqn-x-iqn.2001-04.com.example:disk"}}),
    ),
    Mutation(
        "iscsi-iqn-trailing-newline",
        source("i", {"iscsi": {"targetPortal": "p", "iqn": "eui.02004567A425678D\n"}}),
    ),
    Mutation(
        "iscsi-iqn-trailing-space",
        source("i", {"iscsi": {"targetPortal": "p", "iqn": "iqn.2001-04.com.example:disk x"}}),
    ),
    Mutation(
        "iscsi-initiator-name-empty",
        source(
            "i", {"iscsi": {"targetPortal": "p", "iqn": "naa." + "0" * 32, "initiatorName": ""}}
        ),
    ),
    Mutation("rbd-missing", source("r", {"rbd": {}})),
    Mutation("cephfs-missing", source("c", {"cephfs": {}})),
    Mutation("glusterfs-missing", source("g", {"glusterfs": {}})),
    Mutation("flocker-neither", source("f", {"flocker": {}})),
    Mutation("flocker-both", source("f", {"flocker": {"datasetName": "a/b", "datasetUUID": "u"}})),
    Mutation("fc-neither", source("f", {"fc": {}})),
    Mutation(
        "fc-both", source("f", {"fc": {"targetWWNs": ["a", "b"], "wwids": ["w"], "lun": 256}})
    ),
    Mutation("fc-no-lun", source("f", {"fc": {"targetWWNs": ["a"]}})),
    Mutation(
        "flex-missing", source("f", {"flexVolume": {"options": {"kubernetes.io/secret": "x"}}})
    ),
    Mutation(
        "flex-reserved-options",
        source(
            "f",
            {
                "flexVolume": {
                    "driver": "d",
                    "options": {"a.K8S.io": "x", "k8s.io/b": "y", "xk8s.io": "z"},
                }
            },
        ),
    ),
    Mutation("gce-pd-missing", source("g", {"gcePersistentDisk": {"partition": 256}})),
    Mutation("aws-ebs-missing", source("a", {"awsElasticBlockStore": {"partition": -1}})),
    Mutation("cinder-secret-ref", source("c", {"cinder": {"secretRef": {}}})),
    Mutation("azure-file-missing", source("a", {"azureFile": {}})),
    Mutation("azure-disk-missing", source("a", {"azureDisk": {}})),
    Mutation(
        "azure-disk-managed-uri",
        source("a", {"azureDisk": {"diskName": "d", "diskURI": "https://x", "kind": "Managed"}}),
    ),
    Mutation(
        "azure-disk-bad-enums",
        source(
            "a",
            {"azureDisk": {"diskName": "d", "diskURI": "/x", "kind": "Huge", "cachingMode": "All"}},
        ),
    ),
    Mutation(
        "azure-disk-dedicated-uri",
        source("a", {"azureDisk": {"diskName": "d", "diskURI": "/x", "kind": "Dedicated"}}),
    ),
    Mutation("vsphere-missing", source("v", {"vsphereVolume": {}})),
    Mutation("photon-missing", source("p", {"photonPersistentDisk": {}})),
    Mutation("portworx-missing", source("p", {"portworxVolume": {}})),
    Mutation("scaleio-missing", source("s", {"scaleIO": {}})),
    Mutation(
        "storageos-invalid",
        source(
            "s",
            {"storageos": {"volumeName": "Bad_Name", "volumeNamespace": "a.b", "secretRef": {}}},
        ),
    ),
    Mutation("storageos-missing", source("s", {"storageos": {}})),
    Mutation("quobyte-missing", source("q", {"quobyte": {}})),
    Mutation(
        "quobyte-registry", source("q", {"quobyte": {"registry": "a:1,b,c:d:e", "volume": "v"}})
    ),
    Mutation(
        "quobyte-tenant",
        source("q", {"quobyte": {"registry": "a:1", "tenant": "t" * 65, "volume": "v"}}),
    ),
    Mutation(
        "ok-quobyte-empty-port", source("q", {"quobyte": {"registry": "a:,[b]:", "volume": "v"}})
    ),
    Mutation(
        "quobyte-registry-brackets",
        source("q", {"quobyte": {"registry": "[::1],[a]b:1,a]:1", "volume": "v"}}),
    ),
    Mutation("csi-no-driver", source("c", {"csi": {}})),
    Mutation("csi-driver-too-long", source("c", {"csi": {"driver": "d" * 64}})),
    Mutation("csi-driver-invalid", source("c", {"csi": {"driver": "my_driver"}})),
    Mutation(
        "csi-secret-ref",
        source("c", {"csi": {"driver": "d", "nodePublishSecretRef": {"name": "Bad_Secret"}}}),
    ),
    Mutation(
        "csi-secret-ref-no-name", source("c", {"csi": {"driver": "d", "nodePublishSecretRef": {}}})
    ),
    # --- volume mounts ---
    Mutation("mount-not-found", vol([], [{"name": "nowhere", "mountPath": "/x"}])),
    Mutation(
        "mount-of-invalid-volume",
        vol({"name": "s", "secret": {}}, [{"name": "s", "mountPath": "/s"}]),
    ),
    Mutation("mount-no-name", vol([], [{"name": "", "mountPath": "/x"}])),
    Mutation("mount-no-path", mount(mountPath="")),
    Mutation(
        "mount-duplicate-path",
        vol(
            [{"name": "a", "emptyDir": {}}, {"name": "b", "emptyDir": {}}],
            [{"name": "a", "mountPath": "/x"}, {"name": "b", "mountPath": "/x"}],
        ),
    ),
    Mutation("mount-subpath-absolute", mount(subPath="/etc")),
    Mutation("mount-subpath-backsteps", mount(subPath="a/../../b")),
    Mutation("mount-subpathexpr-with-subpath", mount(subPath="a", subPathExpr="/$(X)/..")),
    Mutation("mount-propagation-unsupported", mount(mountPropagation="Shared")),
    Mutation("mount-propagation-bidirectional", mount(mountPropagation="Bidirectional")),
    Mutation("mount-rro-without-read-only", mount(recursiveReadOnly="Enabled")),
    Mutation("mount-rro-unsupported", mount(readOnly=True, recursiveReadOnly="Always")),
    Mutation(
        "mount-rro-with-propagation",
        mount(readOnly=True, recursiveReadOnly="IfPossible", mountPropagation="HostToContainer"),
    ),
    Mutation(
        "mount-errors-in-two-mounts",
        vol(
            {"name": "data", "emptyDir": {}},
            [
                {"name": "data", "mountPath": "/a", "subPath": "/x"},
                {
                    "name": "data",
                    "mountPath": "/b",
                    "subPath": "../y",
                    "mountPropagation": "Bidirectional",
                },
            ],
        ),
    ),
    Mutation("mount-on-init-container", _mounts_on_init_container),
    # named Go string types print through encoding/json (HTML-escaped), plain strings with %q
    Mutation("mount-propagation-html", mount(mountPropagation="<Shared>&")),
    Mutation("mount-rro-html", mount(readOnly=True, recursiveReadOnly="<on>")),
    Mutation("hostpath-type-html", source("h", {"hostPath": {"path": "/a", "type": "<File>"}})),
    Mutation("nfs-path-html", source("n", {"nfs": {"server": "s", "path": "<exports>&"}})),
    Mutation(
        "fc-both-html", source("f", {"fc": {"targetWWNs": ["<a>"], "wwids": ["w"], "lun": 1}})
    ),
    Mutation("ephemeral-access-mode-html", source("e", claim(accessModes=["<RWO>"]))),
    # the ServiceAccount admission plugin mounts the token into every container first
    Mutation("ok-mount-at-token-path", mount(mountPath=TOKEN_PATH)),
    Mutation(
        "ok-token-volume-name-reused",
        vol({"name": "kube-api-access-mine", "emptyDir": {}}),
    ),
    Mutation(
        "token-volume-name-reused-invalid",
        vol({"name": "kube-api-access-mine", "secret": {}}),
    ),
    Mutation(
        "token-volume-name-reused-device",
        vol(
            {"name": "kube-api-access-mine", "persistentVolumeClaim": {"claimName": "c"}},
            devices=[{"name": "kube-api-access-mine", "devicePath": "/dev/k"}],
        ),
    ),
    Mutation(
        "device-at-token-path", vol(PVC, devices=[{"name": "block", "devicePath": TOKEN_PATH}])
    ),
    Mutation(
        "ok-device-at-token-path-without-automount",
        all_of(
            vol(PVC, devices=[{"name": "block", "devicePath": TOKEN_PATH}]),
            set_spec(automountServiceAccountToken=False),
        ),
    ),
    # --- volume devices ---
    Mutation(
        "device-not-pvc",
        vol({"name": "e", "emptyDir": {}}, devices=[{"name": "e", "devicePath": "/dev/e"}]),
    ),
    Mutation("device-not-found", vol([], devices=[{"name": "nope", "devicePath": "/dev/n"}])),
    Mutation("device-no-name-no-path", vol(PVC, devices=[{"name": "", "devicePath": ""}])),
    Mutation(
        "device-duplicates",
        vol(
            PVC,
            devices=[
                {"name": "block", "devicePath": "/dev/a"},
                {"name": "block", "devicePath": "/dev/a"},
            ],
        ),
    ),
    Mutation("device-backsteps", vol(PVC, devices=[{"name": "block", "devicePath": "/dev/../a"}])),
    Mutation(
        "device-and-mount-overlap",
        vol(
            PVC,
            [{"name": "block", "mountPath": "/dev/a"}],
            [{"name": "block", "devicePath": "/dev/a"}],
        ),
    ),
]

# Sources whose gates newer minors turn on: kept and checked from then on (ImageVolume from
# 1.35: an image volume needs a reference; ClusterTrustBundleProjection and
# PodCertificateRequest from 1.37).
VERDICT_CHANGES: VerdictChanges = {
    "ok-image-volume-dropped": ("1.35", False),
    "ok-projected-cluster-trust-bundle-dropped": ("1.37", False),
    "ok-projected-pod-certificate-dropped": ("1.37", False),
}

# The divisors of podcases.containers.DIVISOR_CASES in a downward API volume file.
DIVISORS: list[Mutation] = [
    Mutation(
        f"{'ok-' if accepted else ''}downwardapi-divisor {divisor} of {resource}",
        source(
            "d",
            dapi(resource_ref("p", containerName="tensorflow", resource=resource, divisor=divisor)),
        ),
    )
    for resource, divisor, accepted in DIVISOR_CASES
]
