"""The volcano role's decisions (``tfjob.kit.volcano_*`` filters): which Volcano installs on the
cluster are not the role's release, and which of Volcano's CRDs are the toolkit's.
``roles/volcano/tasks/preflight.yml`` and ``ownership.yml`` say what each result is for.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from tfjob_kit.installs.objects import Obj, managers, unique

# The field managers the toolkit applies Volcano's CRDs with: the role, `tfjob-kit cluster up`.
TOOLKIT_MANAGERS = ("tfjob-kit", "tfjob-kit-cluster")
SCHEDULER_CONTAINERS = ("vc-scheduler", "volcano-scheduler")
_SCHEDULER_IMAGE = re.compile(r"(^|/)vc-scheduler([:@]|$)")


def survey(objects: Obj, namespace: str, release: str) -> list[str]:
    """What is found that is not the toolkit's Volcano, from the preflight's ``objects_info``
    result: Deployments running vc-scheduler outside the role's release, and Volcano's CRDs that
    the toolkit did not apply (``queue_crd``; off the local cluster, whose ``marker`` says it runs
    Volcano itself)."""
    found: list[str] = []
    for deployment in objects.get("deployments") or []:
        meta = deployment.get("metadata") or {}
        annotations = meta.get("annotations") or {}
        pod = ((deployment.get("spec") or {}).get("template") or {}).get("spec") or {}
        for c in pod.get("containers") or []:
            image = str(c.get("image") or "")
            if c.get("name") not in SCHEDULER_CONTAINERS and not _SCHEDULER_IMAGE.search(image):
                continue
            ours = (
                meta.get("namespace") == namespace
                and annotations.get("meta.helm.sh/release-name", "") == release
                and c.get("name") == "vc-scheduler"
            )
            if not ours:
                found.append(
                    f"Deployment {meta.get('namespace')}/{meta.get('name')} "
                    f"(image {c.get('image') or '?'})"
                )
    found = unique(found)
    marker = (objects.get("marker") or [{}])[0] or {}
    local = bool((marker.get("data") or {}).get("volcano"))
    queue_crd = (objects.get("queue_crd") or [None])[0]
    if queue_crd and "tfjob-kit" not in managers(queue_crd) and not local:
        found.append(
            "Volcano CRDs (queues.scheduling.volcano.sh, applied by "
            f"{', '.join(managers(queue_crd))})"
        )
    return found


def ownership(objects: Obj, record_name: str) -> dict[str, Any]:
    """Which of Volcano's CRDs (``crds``) are the toolkit's: applied by its field managers, and
    no adoption record (``record``) says the Volcano is another install's. ``own`` and ``kept``
    (names), and ``kept_text``, what teardown says of those it keeps."""
    adopted = bool(objects.get("record"))
    crds: Sequence[Obj] = objects.get("crds") or []
    own = [
        c["metadata"]["name"]
        for c in crds
        if not adopted and any(m in TOOLKIT_MANAGERS for m in managers(c))
    ]
    kept = [c for c in crds if c["metadata"]["name"] not in own]
    parts = []
    for c in kept:
        others = [m for m in managers(c) if m != "kube-apiserver"]
        why = (
            f"of the adopted Volcano, record kube-system/{record_name}"
            if adopted
            else f"applied by {', '.join(others) or 'an unknown manager'}, not by the toolkit"
        )
        parts.append(f"{c['metadata']['name']} ({why})")
    return {
        "own": own,
        "kept": [c["metadata"]["name"] for c in kept],
        "kept_text": ", ".join(parts),
    }
