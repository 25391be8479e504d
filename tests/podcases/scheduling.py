"""Pod template mutations for the placement checks (``podcheck.scheduling``): nodeSelector,
node and pod (anti-)affinity with the matchLabelKeys merge of PrepareForCreate, tolerations and
topology spread constraints; ``ok-`` mutations are edge values the server accepts."""

from __future__ import annotations

from typing import Any

from . import Mutate, Mutation, Template, all_of, set_spec

LONG_PREFIX = "a" * 254 + "/x"


def _labels(**labels: str) -> Mutate:
    def mutate(t: Template) -> None:
        t.setdefault("metadata", {}).setdefault("labels", {}).update(labels)

    return mutate


# --- node affinity ---------------------------------------------------------------------------


def _required(*terms: dict[str, Any]) -> Mutate:
    selector = {"nodeSelectorTerms": list(terms)}
    return set_spec(
        affinity={"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": selector}}
    )


def _expr(key: str, operator: str, values: list[str] | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"key": key, "operator": operator}
    if values is not None:
        out["values"] = values
    return out


def _node_expr(key: str, operator: str, values: list[str] | None = None) -> Mutate:
    return _required({"matchExpressions": [_expr(key, operator, values)]})


def _node_field(key: str, operator: str, values: list[str] | None = None) -> Mutate:
    return _required({"matchFields": [_expr(key, operator, values)]})


def _preferred(weight: int, *exprs: dict[str, Any]) -> Mutate:
    term = {"weight": weight, "preference": {"matchExpressions": list(exprs)}}
    return set_spec(
        affinity={"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [term]}}
    )


# --- pod affinity ------------------------------------------------------------------------------


def _term(
    selector: Any = None, topology_key: str = "kubernetes.io/hostname", **extra: Any
) -> dict[str, Any]:
    term: dict[str, Any] = {"topologyKey": topology_key, **extra}
    if selector is not None:
        term["labelSelector"] = selector
    return term


def _pod_required(term: dict[str, Any], kind: str = "podAffinity") -> Mutate:
    return set_spec(affinity={kind: {"requiredDuringSchedulingIgnoredDuringExecution": [term]}})


def _pod_preferred(weight: int, term: dict[str, Any], kind: str = "podAffinity") -> Mutate:
    weighted = {"weight": weight, "podAffinityTerm": term}
    return set_spec(
        affinity={kind: {"preferredDuringSchedulingIgnoredDuringExecution": [weighted]}}
    )


APP = {"matchLabels": {"app": "podcheck"}}


# --- tolerations and spread --------------------------------------------------------------------


def _tolerate(*tolerations: dict[str, Any]) -> Mutate:
    return set_spec(tolerations=list(tolerations))


def _spread(*constraints: dict[str, Any]) -> Mutate:
    return set_spec(topologySpreadConstraints=list(constraints))


def _constraint(**fields: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "maxSkew": 1,
        "topologyKey": "topology.kubernetes.io/zone",
        "whenUnsatisfiable": "DoNotSchedule",
        "labelSelector": {"matchLabels": {"app": "podcheck"}},
    }
    base.update(fields)
    return {k: v for k, v in base.items() if v is not None}


MUTATIONS: list[Mutation] = [
    # nodeSelector: unversionedvalidation.ValidateLabels at the map's path
    Mutation(
        "ok-node-selector",
        set_spec(nodeSelector={"kubernetes.io/os": "linux", "example.com/pool": ""}),
    ),
    Mutation("node-selector-bad-key", set_spec(nodeSelector={"bad key": "x"})),
    Mutation("node-selector-bad-prefix", set_spec(nodeSelector={"Example.com/pool": "a"})),
    Mutation("node-selector-prefix-too-long", set_spec(nodeSelector={LONG_PREFIX: "a"})),
    Mutation("node-selector-bad-value", set_spec(nodeSelector={"pool": "bad value!"})),
    Mutation("node-selector-value-too-long", set_spec(nodeSelector={"pool": "v" * 64})),
    Mutation("ok-node-selector-value-63", set_spec(nodeSelector={"pool": "v" * 63})),
    Mutation("node-selector-empty-key", set_spec(nodeSelector={"": "x"})),
    # required node affinity
    Mutation("node-affinity-no-terms", _required()),
    Mutation("ok-node-affinity-empty-term", _required({})),
    Mutation(
        "node-affinity-null-terms",
        set_spec(affinity={"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {}}}),
    ),
    Mutation(
        "ok-empty-affinities",
        set_spec(affinity={"nodeAffinity": {}, "podAffinity": {}, "podAntiAffinity": {}}),
    ),
    Mutation("ok-node-affinity-in", _node_expr("kubernetes.io/arch", "In", ["amd64", "arm64"])),
    Mutation("node-affinity-in-no-values", _node_expr("kubernetes.io/arch", "In")),
    Mutation("node-affinity-notin-empty-values", _node_expr("kubernetes.io/arch", "NotIn", [])),
    Mutation("ok-node-affinity-exists", _node_expr("example.com/gpu", "Exists")),
    Mutation("node-affinity-exists-with-values", _node_expr("example.com/gpu", "Exists", ["x"])),
    Mutation(
        "node-affinity-doesnotexist-values", _node_expr("example.com/gpu", "DoesNotExist", ["x"])
    ),
    Mutation("ok-node-affinity-gt", _node_expr("example.com/cores", "Gt", ["4"])),
    Mutation("ok-node-affinity-lt-not-a-number", _node_expr("example.com/cores", "Lt", ["many"])),
    Mutation("node-affinity-gt-two-values", _node_expr("example.com/cores", "Gt", ["1", "2"])),
    Mutation("node-affinity-lt-no-values", _node_expr("example.com/cores", "Lt")),
    Mutation("node-affinity-bad-operator", _node_expr("example.com/cores", "Equals", ["1"])),
    Mutation("node-affinity-empty-operator", _node_expr("example.com/cores", "", ["1"])),
    Mutation("node-affinity-bad-key", _node_expr("bad key", "Exists")),
    Mutation("node-affinity-empty-key", _node_expr("", "Exists")),
    Mutation("node-affinity-bad-value", _node_expr("pool", "In", ["ok", "not ok"])),
    Mutation("node-affinity-bad-operator-and-key", _node_expr("-x", "Near", ["a b"])),
    Mutation("ok-node-field-name", _node_field("metadata.name", "In", ["node-1"])),
    Mutation("ok-node-field-notin", _node_field("metadata.name", "NotIn", ["node-1"])),
    Mutation("node-field-two-values", _node_field("metadata.name", "In", ["a", "b"])),
    Mutation("node-field-no-values", _node_field("metadata.name", "In")),
    Mutation("node-field-exists", _node_field("metadata.name", "Exists")),
    Mutation("node-field-bad-key", _node_field("metadata.namespace", "In", ["x"])),
    Mutation("node-field-bad-node-name", _node_field("metadata.name", "In", ["Node_1"])),
    Mutation(
        "node-affinity-two-terms",
        _required(
            {"matchExpressions": [_expr("a", "In")]},
            {"matchFields": [_expr("metadata.name", "Gt", ["x"])]},
        ),
    ),
    # preferred node affinity: weights 1-100; invalid label values allowed
    Mutation("ok-node-preferred", _preferred(100, _expr("pool", "In", ["a"]))),
    Mutation(
        "ok-node-preferred-bad-value-allowed", _preferred(1, _expr("pool", "In", ["not ok!"]))
    ),
    Mutation("node-preferred-weight-0", _preferred(0, _expr("pool", "In", ["a"]))),
    Mutation("node-preferred-weight-101", _preferred(101, _expr("pool", "In", ["a"]))),
    Mutation("node-preferred-weight-negative", _preferred(-5, _expr("pool", "Exists"))),
    Mutation("node-preferred-bad-key-and-operator", _preferred(5, _expr("a b", "Is", ["x"]))),
    Mutation(
        "ok-node-preferred-no-preference",
        set_spec(
            affinity={
                "nodeAffinity": {
                    "preferredDuringSchedulingIgnoredDuringExecution": [
                        {"weight": 1, "preference": {}}
                    ]
                }
            }
        ),
    ),
    # pod affinity and anti-affinity terms
    Mutation("ok-pod-affinity", _pod_required(_term(APP))),
    Mutation("ok-pod-affinity-no-selector", _pod_required(_term())),
    Mutation("ok-pod-anti-affinity", _pod_required(_term(APP), "podAntiAffinity")),
    Mutation("pod-affinity-no-topology-key", _pod_required(_term(APP, ""))),
    Mutation("pod-anti-affinity-no-topology-key", _pod_required(_term(APP, ""), "podAntiAffinity")),
    Mutation("pod-affinity-bad-topology-key", _pod_required(_term(APP, "zone name"))),
    Mutation(
        "pod-affinity-selector-bad-label-key", _pod_required(_term({"matchLabels": {"a b": "x"}}))
    ),
    Mutation(
        "pod-affinity-selector-bad-label-value",
        _pod_required(_term({"matchLabels": {"app": "x y"}})),
    ),
    Mutation(
        "pod-affinity-selector-in-no-values",
        _pod_required(_term({"matchExpressions": [_expr("app", "In")]})),
    ),
    Mutation(
        "pod-affinity-selector-exists-values",
        _pod_required(_term({"matchExpressions": [_expr("app", "Exists", ["x"])]})),
    ),
    Mutation(
        "pod-affinity-selector-bad-operator",
        _pod_required(_term({"matchExpressions": [_expr("app", "Gt", ["1"])]})),
    ),
    Mutation(
        "pod-affinity-selector-bad-value",
        _pod_required(_term({"matchExpressions": [_expr("app", "NotIn", ["ok", "-bad"])]})),
    ),
    Mutation(
        "pod-affinity-selector-bad-expression-key",
        _pod_required(_term({"matchExpressions": [_expr("", "DoesNotExist")]})),
    ),
    Mutation(
        "ok-pod-affinity-namespaces",
        _pod_required(_term(APP, namespaces=["default", "kube-system"])),
    ),
    Mutation("pod-affinity-bad-namespace", _pod_required(_term(APP, namespaces=["ok", "Bad_NS"]))),
    Mutation("pod-affinity-long-namespace", _pod_required(_term(APP, namespaces=["n" * 64]))),
    Mutation("ok-pod-affinity-namespace-selector", _pod_required(_term(APP, namespaceSelector={}))),
    Mutation(
        "pod-affinity-bad-namespace-selector",
        _pod_required(_term(APP, namespaceSelector={"matchExpressions": [_expr("team", "In")]})),
    ),
    Mutation("ok-pod-preferred", _pod_preferred(100, _term(APP))),
    Mutation("pod-preferred-weight-0", _pod_preferred(0, _term(APP))),
    Mutation("pod-anti-preferred-weight-101", _pod_preferred(101, _term(APP), "podAntiAffinity")),
    Mutation(
        "pod-anti-preferred-no-topology-key", _pod_preferred(10, _term(APP, ""), "podAntiAffinity")
    ),
    Mutation(
        "pod-preferred-no-term",
        set_spec(
            affinity={
                "podAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 1}]}
            }
        ),
    ),
    # matchLabelKeys / mismatchLabelKeys (merged into the selector with the pod's labels)
    Mutation(
        "ok-pod-affinity-match-label-keys",
        _pod_required(_term({"matchLabels": {"role": "ps"}}, matchLabelKeys=["app"])),
    ),
    Mutation(
        "ok-pod-affinity-mismatch-label-keys", _pod_required(_term({}, mismatchLabelKeys=["app"]))
    ),
    Mutation(
        "ok-pod-affinity-match-label-key-not-a-pod-label",
        _pod_required(_term(APP, matchLabelKeys=["team"])),
    ),
    Mutation(
        "pod-affinity-match-label-key-in-selector",
        _pod_required(_term(APP, matchLabelKeys=["app"])),
    ),
    Mutation(
        "pod-affinity-match-label-key-in-expression",
        _pod_required(
            _term({"matchExpressions": [_expr("app", "Exists")]}, matchLabelKeys=["app"])
        ),
    ),
    Mutation(
        "ok-pod-affinity-mismatch-label-key-in-selector",
        _pod_required(_term(APP, mismatchLabelKeys=["app"])),
    ),
    Mutation(
        "pod-affinity-match-label-keys-no-selector",
        _pod_required(_term(None, matchLabelKeys=["app"])),
    ),
    Mutation(
        "pod-anti-affinity-mismatch-label-keys-no-selector",
        _pod_required(_term(None, mismatchLabelKeys=["app"]), "podAntiAffinity"),
    ),
    Mutation(
        "pod-affinity-match-label-keys-bad-key", _pod_required(_term({}, matchLabelKeys=["a b"]))
    ),
    Mutation(
        "pod-affinity-mismatch-label-keys-bad-key",
        _pod_required(_term({}, mismatchLabelKeys=["", "x/"])),
    ),
    Mutation(
        "pod-affinity-key-in-match-and-mismatch",
        _pod_required(_term({}, matchLabelKeys=["app"], mismatchLabelKeys=["app"])),
    ),
    Mutation(
        "pod-affinity-match-label-key-twice",
        _pod_required(_term({}, matchLabelKeys=["app", "app"])),
    ),
    Mutation(
        "pod-affinity-match-label-key-bad-pod-label",
        all_of(
            _labels(team="x"),
            _pod_required(_term({"matchLabels": {"team": "y"}}, matchLabelKeys=["team"])),
        ),
    ),
    Mutation(
        "pod-preferred-match-label-key-in-selector",
        _pod_preferred(3, _term(APP, matchLabelKeys=["app"]), "podAntiAffinity"),
    ),
    # tolerations
    Mutation("ok-toleration-everything", _tolerate({"operator": "Exists"})),
    Mutation(
        "ok-toleration-equal",
        _tolerate(
            {"key": "example.com/gpu", "operator": "Equal", "value": "true", "effect": "NoSchedule"}
        ),
    ),
    Mutation("ok-toleration-operator-omitted", _tolerate({"key": "dedicated", "value": "tf"})),
    Mutation(
        "ok-toleration-seconds",
        _tolerate(
            {
                "key": "node.kubernetes.io/not-ready",
                "operator": "Exists",
                "effect": "NoExecute",
                "tolerationSeconds": 30,
            }
        ),
    ),
    Mutation(
        "ok-toleration-negative-seconds",
        _tolerate(
            {"key": "a", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": -1}
        ),
    ),
    Mutation("toleration-empty-key-equal", _tolerate({"operator": "Equal", "value": "x"})),
    Mutation("toleration-empty-key-no-operator", _tolerate({"effect": "NoSchedule"})),
    Mutation("toleration-bad-key", _tolerate({"key": "bad key", "operator": "Exists"})),
    Mutation(
        "toleration-seconds-no-effect",
        _tolerate({"key": "a", "operator": "Exists", "tolerationSeconds": 10}),
    ),
    Mutation(
        "toleration-seconds-noschedule",
        _tolerate(
            {"key": "a", "operator": "Exists", "effect": "NoSchedule", "tolerationSeconds": 10}
        ),
    ),
    Mutation(
        "toleration-exists-with-value", _tolerate({"key": "a", "operator": "Exists", "value": "b"})
    ),
    Mutation(
        "toleration-bad-value", _tolerate({"key": "a", "operator": "Equal", "value": "not valid"})
    ),
    Mutation("toleration-long-value", _tolerate({"key": "a", "value": "v" * 64})),
    Mutation("toleration-bad-operator", _tolerate({"key": "a", "operator": "In", "value": "b"})),
    # Lt and Gt: unsupported (1.35 on: among four choices, TaintTolerationComparisonOperators off)
    Mutation("toleration-lt-operator", _tolerate({"key": "cores", "operator": "Lt", "value": "4"})),
    Mutation(
        "toleration-gt-operator-bad-number",
        _tolerate({"key": "cores", "operator": "Gt", "value": "04", "effect": "NoSchedule"}),
    ),
    Mutation(
        "toleration-bad-effect",
        _tolerate({"key": "a", "operator": "Exists", "effect": "NoScheduleNoAdmit"}),
    ),
    Mutation(
        "toleration-everything-wrong",
        _tolerate({"operator": "Gt", "value": "!", "effect": "Never", "tolerationSeconds": 5}),
    ),
    Mutation(
        "tolerations-second-bad",
        _tolerate(
            {"operator": "Exists"}, {"key": "a", "operator": "Exists", "effect": "Sometimes"}
        ),
    ),
    # topology spread constraints
    Mutation("ok-spread", _spread(_constraint())),
    Mutation("ok-spread-no-selector", _spread(_constraint(labelSelector=None))),
    Mutation(
        "ok-spread-two-kinds",
        _spread(_constraint(), _constraint(whenUnsatisfiable="ScheduleAnyway")),
    ),
    Mutation("spread-max-skew-0", _spread(_constraint(maxSkew=0))),
    Mutation("spread-max-skew-negative", _spread(_constraint(maxSkew=-2))),
    Mutation("spread-max-skew-missing", _spread(_constraint(maxSkew=None))),
    Mutation("spread-no-topology-key", _spread(_constraint(topologyKey=""))),
    Mutation("spread-bad-when-unsatisfiable", _spread(_constraint(whenUnsatisfiable="Never"))),
    Mutation("spread-no-when-unsatisfiable", _spread(_constraint(whenUnsatisfiable=None))),
    Mutation("spread-duplicate", _spread(_constraint(), _constraint(maxSkew=2))),
    Mutation("spread-three-duplicates", _spread(_constraint(), _constraint(), _constraint())),
    Mutation("ok-spread-min-domains", _spread(_constraint(minDomains=3))),
    Mutation("spread-min-domains-0", _spread(_constraint(minDomains=0))),
    Mutation(
        "spread-min-domains-schedule-anyway",
        _spread(_constraint(minDomains=2, whenUnsatisfiable="ScheduleAnyway")),
    ),
    Mutation(
        "spread-min-domains-negative-anyway",
        _spread(_constraint(minDomains=-1, whenUnsatisfiable="ScheduleAnyway")),
    ),
    Mutation(
        "ok-spread-policies",
        _spread(_constraint(nodeAffinityPolicy="Ignore", nodeTaintsPolicy="Honor")),
    ),
    Mutation("spread-bad-node-affinity-policy", _spread(_constraint(nodeAffinityPolicy="honor"))),
    Mutation("spread-bad-node-taints-policy", _spread(_constraint(nodeTaintsPolicy=""))),
    Mutation(
        "ok-spread-match-label-keys",
        _spread(_constraint(labelSelector={"matchLabels": {"role": "w"}}, matchLabelKeys=["app"])),
    ),
    Mutation("spread-match-label-key-in-selector", _spread(_constraint(matchLabelKeys=["app"]))),
    Mutation(
        "ok-spread-match-label-key-not-a-pod-label", _spread(_constraint(matchLabelKeys=["team"]))
    ),
    Mutation(
        "spread-match-label-keys-no-selector",
        _spread(_constraint(labelSelector=None, matchLabelKeys=["app"])),
    ),
    Mutation(
        "spread-match-label-keys-bad-key",
        _spread(_constraint(labelSelector={}, matchLabelKeys=["a b", "app"])),
    ),
    Mutation(
        "spread-merged-key-in-expression",
        _spread(
            _constraint(
                labelSelector={"matchExpressions": [_expr("app", "Exists")]}, matchLabelKeys=["app"]
            )
        ),
    ),
    Mutation(
        "spread-match-label-key-twice",
        _spread(_constraint(labelSelector={}, matchLabelKeys=["app", "app"])),
    ),
    Mutation(
        "spread-selector-bad-value",
        _spread(_constraint(labelSelector={"matchLabels": {"app": "a b"}})),
    ),
    Mutation(
        "spread-selector-bad-expression",
        _spread(
            _constraint(
                labelSelector={
                    "matchExpressions": [_expr("app", "In"), _expr("x", "Exists", ["y"])]
                }
            )
        ),
    ),
    Mutation(
        "spread-everything-wrong",
        _spread(
            _constraint(
                maxSkew=0,
                topologyKey="",
                whenUnsatisfiable="No",
                minDomains=0,
                nodeTaintsPolicy="x",
            )
        ),
    ),
]
