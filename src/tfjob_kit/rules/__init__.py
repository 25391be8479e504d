"""Semantic rules: what the training-operator's webhook rejects, and what users trip on.

Each rule has an id, a default severity, a one-line summary (shown in SARIF and `tfjob-kit rules`)
and a check that yields (JSON path, message) pairs. Messages say how to fix the problem. Checks
read the object through :mod:`tfjob_kit.model`, so wrong types never crash them: the schema
reports those.

The modules, one job each:

* :mod:`.registry`: Rule, the :func:`rule` decorator that registers one, the ids of the findings
  the loader, the schema and cross-document checks produce (:data:`BUILTIN`), the preflight's
  (:data:`PREFLIGHT`), and :func:`run`,
  every rule on one object;
* :mod:`.metadata`: the API version, the job's name and the pod and Service names made from it;
* :mod:`.replicas`: replica types and counts, and which replicas decide success;
* :mod:`.containers`: the tensorflow container, images, TF_CONFIG, container names and env;
* :mod:`.resources`: GPUs, and requests against limits;
* :mod:`.policies`: where RunPolicy fields belong, cleanPodPolicy, restartPolicy;
* :mod:`.scheduling`: gang scheduling (minAvailable, PodGroups by hand, kube-batch);
* :mod:`.server`: what the API server rejects, in the pods the operator creates from each
  replica and in the TFJob's metadata (:mod:`tfjob_kit.podcheck`); imported last, and its
  findings give way to another rule's error at the same path;
* :mod:`.dropped`: template fields the API server of the minor validated for drops (a feature
  that is off there).

Webhook rules and pitfalls sit side by side in a topic (the webhook checks the name, the
containers and their images, and the number of chiefs), so the modules follow topics. A rule
registers when its module is imported, and :func:`run` reports in registration order: the topic
modules are imported below in that order, which this package alone decides.
"""

# isort: off
from tfjob_kit.rules.registry import (
    BUILTIN,
    PREFLIGHT,
    RULES,
    Check,
    Rule,
    all_rule_ids,
    default_severity,
    rule,
    run,
    summary,
)
from tfjob_kit.rules import (
    metadata,
    replicas,
    replica_containers,
    replica_resources,
    policies,
    gang,
)
from tfjob_kit.rules import server, dropped
# isort: on

TOPICS = (
    metadata,
    replicas,
    replica_containers,
    replica_resources,
    policies,
    gang,
    server,
    dropped,
)
"""The modules of rules, in the order their rules register (the order of :func:`run`'s findings)."""

__all__ = [
    "BUILTIN",
    "PREFLIGHT",
    "RULES",
    "Check",
    "Rule",
    "all_rule_ids",
    "default_severity",
    "rule",
    "run",
    "summary",
]
