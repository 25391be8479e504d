"""The training_operator role's decisions (``tfjob.kit.training_operator_*`` filters).

``survey`` finds the training-operator installs that are not the role's release and says whose
the TFJob CRD is; ``dropped_crds`` and ``jobs_summary`` say which jobs an upgrade would leave
without a controller; ``ownership`` says whether teardown may remove the CRD.
``roles/training_operator/tasks/preflight.yml`` and ``ownership.yml`` say what each result is for.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from tfjob_kit.installs.objects import (
    Obj,
    annotations_of,
    labels_of,
    managers,
    meta_of,
    unique,
)

CRD = "tfjobs.kubeflow.org"
GROUP = "kubeflow.org"
# The annotations on the TFJob CRD: created by the toolkit (present.yml, `tfjob-kit cluster up`),
# or another install's that an upgrade applied over.
CREATED_BY = "tfjob-kit.io/created-by"
UPGRADED_BY = "tfjob-kit.io/upgraded-by"
# The toolkit's field managers: the roles' CRD apply, `tfjob-kit cluster up`, present.yml's mark.
TOOLKIT_MANAGERS = ("tfjob-kit", "tfjob-kit-cluster", "tfjob-kit-owner")
# The operator's container in upstream's manifests (training-operator; tf-operator's
# tf-job-operator) and the chart's: a Deployment running one is an operator whatever its image.
CONTAINER_NAMES = ("training-operator", "tf-job-operator", "tf-operator")
_IMAGE = re.compile(r"(^|/)(training-operator|tf[-_]operator)([:@]|$)")
_TAG = re.compile(r"[:@][^/]*$")
# The job kinds a training-operator serves, by --enable-scheme value (its lower-cased kind);
# without that flag it serves every one (v1.8: all but JAXJob, which it lacks and never asks for).
SCHEMES = {
    "tfjob": "TFJob",
    "pytorchjob": "PyTorchJob",
    "mxjob": "MXJob",
    "xgboostjob": "XGBoostJob",
    "mpijob": "MPIJob",
    "paddlejob": "PaddleJob",
    "jaxjob": "JAXJob",
}
# Image tags of upstream's published builds, by release (reported when the Deployment has no
# app.kubernetes.io/version label).
KNOWN_IMAGES = {"v1-04f9f13": "v1.8.1", "v1-93c5489": "v1.9.4"}


def _containers(deployment: Obj) -> list[Obj]:
    spec = ((deployment.get("spec") or {}).get("template") or {}).get("spec") or {}
    return list(spec.get("containers") or [])


def enabled_schemes(argv: Sequence[str]) -> list[str]:
    """The --enable-scheme values of an operator's command line, lower-cased (``-`` or ``--``,
    ``=VALUE`` or the next argument)."""
    enabled: list[str] = []
    for i, arg in enumerate(argv):
        if re.match(r"^--?enable-scheme=", arg):
            enabled.append(arg.split("=", 1)[1].lower())
        elif re.match(r"^--?enable-scheme$", arg) and i + 1 < len(argv):
            enabled.append(argv[i + 1].lower())
    return enabled


def runs_operator(container: Obj) -> bool:
    """Whether a container runs a training-operator: its image or its name says so."""
    image = str(container.get("image") or "")
    return bool(_IMAGE.search(image)) or container.get("name") in CONTAINER_NAMES


def _operator(deployment: Obj, container: Obj) -> dict[str, Any]:
    where = meta_of(deployment)
    image = str(container.get("image") or "")
    tag = (m.group(0) if (m := _TAG.search(image)) else ":")[1:]
    argv = list(container.get("command") or []) + list(container.get("args") or [])
    enabled = enabled_schemes(argv)
    return {
        "namespace": where.get("namespace"),
        "name": where.get("name"),
        "image": image,
        "version": labels_of(deployment).get(
            "app.kubernetes.io/version", KNOWN_IMAGES.get(tag, "unknown")
        ),
        "all_schemes": not enabled,
        "other_kinds": [
            kind
            for scheme, kind in SCHEMES.items()
            if (scheme in enabled or not enabled) and scheme != "tfjob"
        ],
    }


def crd_created(crd: Obj | None) -> bool:
    """Whether the toolkit created the TFJob CRD: its annotation ``CREATED_BY``, or (a CRD an
    earlier release created, before the annotation) no field manager but the toolkit's and the
    API server's ever wrote it. A CRD the toolkit only applied over is not its."""
    if not crd:
        return False
    if CREATED_BY in annotations_of(crd):
        return True
    writers = set(managers(crd)) - {"kube-apiserver"}
    return bool(writers) and writers <= set(TOOLKIT_MANAGERS)


def crd_writers(crd: Obj | None) -> str:
    """Who else wrote the CRD: its field managers but the API server's and the toolkit's."""
    others = [m for m in managers(crd or {}) if m not in ("kube-apiserver", *TOOLKIT_MANAGERS)]
    return ", ".join(others) or "an unknown manager"


def survey(objects: Obj, namespace: str, release: str) -> dict[str, Any]:
    """What the preflight found, from its ``objects_info`` result (``deployments``, ``crds``):

    - ``foreign``: the operators that are not the toolkit's (namespace, name, image, version,
      all_schemes, other_kinds: the kinds besides TFJob they serve);
    - ``own_elsewhere``: the toolkit's own releases of the chart outside ``namespace``/``release``;
    - ``crd``: the TFJob CRD ({} without one), ``crd_created`` (the toolkit created it),
      ``crd_foreign`` (another install's that the toolkit has not upgraded), ``crd_writers``;
    - ``other_crds``: the other CRDs of the kubeflow.org group (left as they are);
    - ``dropped_crds``: those of the kinds the foreign operators serve besides TFJob;
    - ``text``: what the messages call the installs found (``operators_text``: the operators).
    """
    foreign: list[dict[str, Any]] = []
    own_elsewhere: list[dict[str, Any]] = []
    for deployment in objects.get("deployments") or []:
        where = meta_of(deployment)
        name_of_release = annotations_of(deployment).get("meta.helm.sh/release-name", "")
        ours = where.get("namespace") == namespace and name_of_release == release
        operators = [c for c in _containers(deployment) if runs_operator(c)]
        if ours or not operators:
            continue
        if labels_of(deployment).get("app.kubernetes.io/part-of") == "tfjob-kit":
            if name_of_release and any(c.get("name") in CONTAINER_NAMES for c in operators):
                own_elsewhere.append(
                    {"namespace": where.get("namespace"), "release": name_of_release}
                )
            continue
        foreign.extend(_operator(deployment, c) for c in operators)
    crds: list[Obj] = list(objects.get("crds") or [])
    crd: Obj = next((c for c in crds if meta_of(c).get("name") == CRD), {})
    created = crd_created(crd)
    crd_foreign = bool(crd) and not created and UPGRADED_BY not in annotations_of(crd)
    foreign = unique(foreign)
    return {
        "foreign": foreign,
        "own_elsewhere": own_elsewhere,
        "crd": crd,
        "crd_created": created,
        "crd_foreign": crd_foreign,
        "crd_writers": crd_writers(crd),
        "other_crds": sorted(
            meta_of(c).get("name")
            for c in crds
            if (c.get("spec") or {}).get("group") == GROUP and meta_of(c).get("name") != CRD
        ),
        "dropped_crds": dropped_crds(foreign, crds),
        "text": found_text(foreign, crd if crd_foreign else None),
        "operators_text": found_text(foreign, None),
    }


def found_text(foreign: Sequence[Obj], crd: Obj | None) -> str:
    """What the messages call the installs found: each operator, then the CRD."""
    parts = [
        f"Deployment {f['namespace']}/{f['name']} (image {f['image']}, version {f['version']})"
        for f in foreign
    ]
    if crd:
        alone = (
            ""
            if parts
            else ", and no operator Deployment the preflight recognizes (one may run under "
            "another image name)"
        )
        parts.append(
            f"the CRD {CRD}, which the toolkit did not create (written by {crd_writers(crd)}), "
            f"with every TFJob in it{alone}"
        )
    return "; ".join(parts)


def dropped_crds(foreign: Sequence[Obj], crds: Sequence[Obj]) -> list[Obj]:
    """The kubeflow.org CRDs of the kinds the replaced operators serve besides TFJob, where the
    CRD serves v1 (the operator's version: mpi-operator v2's mpijobs, v2beta1, are not its)."""
    kinds = {kind for f in foreign for kind in f.get("other_kinds") or []}
    return [
        crd
        for crd in crds
        if (spec := crd.get("spec") or {}).get("group") == GROUP
        and (spec.get("names") or {}).get("kind") in kinds
        and any(v.get("name") == "v1" and v.get("served") for v in spec.get("versions") or [])
    ]


def jobs_summary(results: Sequence[Obj]) -> list[str]:
    """From k8s_info results looped over ``dropped_crds``: ``Kind: N (ns/a, ns/b, ...)`` for each
    kind with jobs, five names at most."""
    parts = []
    for result in results:
        resources = result.get("resources") or []
        if not resources:
            continue
        names = [f"{meta_of(r).get('namespace', '')}/{meta_of(r).get('name')}" for r in resources]
        more = ", ..." if len(names) > 5 else ""
        kind = ((result.get("item") or {}).get("spec") or {}).get("names", {}).get("kind")
        parts.append(f"{kind}: {len(names)} ({', '.join(names[:5])}{more})")
    return parts


def ownership(objects: Obj, record_name: str) -> dict[str, Any]:
    """Whether the TFJob CRD is the toolkit's (``crd_ours``: it created the CRD and no adoption
    record names another install), and ``kept_text``, what teardown says when it keeps it; from
    ``objects_info``'s ``record`` (the adoption record) and ``crd``."""
    records = objects.get("record") or []
    crd = (objects.get("crd") or [{}])[0]
    if not crd:
        return {"crd_ours": False, "kept_text": ""}
    if records:
        data = records[0].get("data") or {}
        install = (
            f"{data.get('namespace', '?')}/{data['deployment']}"
            if data.get("deployment")
            else data.get("found", "?")
        )
        why = f"of the adopted training-operator {install}, record kube-system/{record_name}"
    else:
        why = f"applied by {crd_writers(crd)}, not created by the toolkit"
    return {"crd_ours": not records and crd_created(crd), "kept_text": f"{CRD} ({why})"}
