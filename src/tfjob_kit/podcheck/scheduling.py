"""Where a pod may run, as the API server checks it on create.

Mirrors the placement checks of ``ValidatePodSpec`` (pkg/apis/core/validation/validation.go):
``nodeSelector`` (ValidateLabels), ``affinity`` (validateAffinity), ``topologySpreadConstraints``
(validateTopologySpreadConstraints) and ``tolerations`` (ValidateTolerations), with the default
gates of the minor followed (:mod:`release`) and a create's PodValidationOptions: invalid label
values are not allowed in selectors or required node affinity; MatchLabelKeysInPodTopologySpread
and its SelectorMerge are on (1.34-1.37). From 1.35 a toleration's ``Lt``/``Gt`` operator is
refused among four choices while TaintTolerationComparisonOperators is off (all of 1.35-1.37).

Before validating, the pod strategy's PrepareForCreate merges ``matchLabelKeys`` (and
``mismatchLabelKeys``) into the label selectors, with the pod's own label values
(mutatePodAffinity, mutateTopologySpreadConstraints in pkg/registry/core/pod/strategy.go); the
checks see those merged expressions, so :func:`validate_scheduling` takes the pod's labels.

``priorityClassName`` and ``preemptionPolicy`` are left out: the Priority admission plugin
resolves (and rejects) them before validation runs, against the cluster's PriorityClasses.
``schedulerName`` is not validated; it defaults to ``default-scheduler`` (:func:`set_defaults`).
``schedulingGates`` and ``nodeName`` are checked by pod.py (validate_scheduling_gates here is the
same check, for callers that want it alone).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from tfjob_kit.podcheck import release

from .field import (
    FieldError,
    Path,
    duplicate,
    forbidden,
    invalid,
    not_supported,
    required,
    value_string,
)
from .fields import as_list, indexed_dicts, opt_int, str_of, strings_of
from .meta import validate_label_name, validate_labels
from .names import (
    is_dns1123_subdomain,
    is_qualified_name,
    is_valid_label_value,
    name_is_dns_label,
)

DEFAULT_SCHEDULER_NAME = "default-scheduler"
_NODE_OPERATORS_VALUES = ("In", "NotIn")
_NODE_OPERATORS_NO_VALUES = ("Exists", "DoesNotExist")
_NODE_OPERATORS_ONE_VALUE = ("Gt", "Lt")
_TAINT_EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")
_TOLERATION_OPERATORS = ("Equal", "Exists")
_COMPARISON_OPERATORS = ("Lt", "Gt")
_COMPARISON_CHOICES = ("Equal", "Exists", "Lt", "Gt")  # a literal slice: not sorted
_DECIMAL_INTEGER = re.compile(r"0|-?[1-9][0-9]*")
_WHEN_UNSATISFIABLE = ("DoNotSchedule", "ScheduleAnyway")  # sets.List: sorted
_INCLUSION_POLICIES = ("Honor", "Ignore")  # sets.List: sorted
_OBJECT_NAME_FIELD = "metadata.name"


def set_defaults(spec: dict[str, Any]) -> None:
    """``SetDefaults_PodSpec``'s placement default: an empty ``schedulerName`` becomes
    ``default-scheduler``."""
    if not spec.get("schedulerName"):
        spec["schedulerName"] = DEFAULT_SCHEDULER_NAME


# --- label selectors (k8s.io/apimachinery/pkg/apis/meta/v1/validation) ------------------------


def _selector_requirement(expr: Mapping[str, Any], path: Path) -> list[FieldError]:
    """``ValidateLabelSelectorRequirement`` with AllowInvalidLabelValueInSelector false."""
    errs: list[FieldError] = []
    origin = "ValidateLabelSelectorRequirement"
    operator = str_of(expr.get("operator"))
    values = strings_of(expr.get("values"))
    if operator in ("In", "NotIn"):
        if not values:
            detail = "must be specified when `operator` is 'In' or 'NotIn'"
            errs.append(required((*path, "values"), detail, origin))
    elif operator in ("Exists", "DoesNotExist"):
        if values:
            detail = "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"
            errs.append(forbidden((*path, "values"), detail, origin))
    else:
        detail = "not a valid selector operator"
        errs.append(invalid((*path, "operator"), operator, detail, origin))
    errs.extend(validate_label_name(str_of(expr.get("key")), (*path, "key")))
    for j, value in enumerate(values):
        errs.extend(
            invalid((*path, "values", j), value, msg, origin) for msg in is_valid_label_value(value)
        )
    return errs


def _label_selector(selector: Any, extra: list[dict[str, Any]], path: Path) -> list[FieldError]:
    """``ValidateLabelSelector``; ``extra`` are the expressions PrepareForCreate appended."""
    if not isinstance(selector, dict):
        return []
    errs = validate_labels(selector.get("matchLabels"), (*path, "matchLabels"))
    base = len(as_list(selector.get("matchExpressions")))
    for i, expr in indexed_dicts(selector.get("matchExpressions")):
        errs.extend(_selector_requirement(expr, (*path, "matchExpressions", i)))
    for k, expr in enumerate(extra):
        errs.extend(_selector_requirement(expr, (*path, "matchExpressions", base + k)))
    return errs


def _merged_expressions(
    selector: Any, match_keys: list[str], mismatch_keys: list[str], labels: Mapping[str, Any]
) -> list[dict[str, Any]]:
    """``applyLabelKeysToLabelSelector``: for each key the pod has a label for, ``key In
    (value)`` (matchLabelKeys) or ``key NotIn (value)`` (mismatchLabelKeys); nothing when the
    selector is absent or there are no keys."""
    if not isinstance(selector, dict) or not (match_keys or mismatch_keys):
        return []
    out: list[dict[str, Any]] = []
    for keys, operator in ((match_keys, "In"), (mismatch_keys, "NotIn")):
        for key in keys:
            value = labels.get(key)
            if isinstance(value, str):
                out.append({"key": key, "operator": operator, "values": [value]})
    return out


def _label_keys(keys: list[str], selector: Any, path: Path, origin: str) -> list[FieldError]:
    """``validateLabelKeys``."""
    if not keys:
        return []
    if not isinstance(selector, dict):
        detail = "must not be specified when labelSelector is not set"
        return [forbidden(path, detail, origin)]
    errs: list[FieldError] = []
    for i, key in enumerate(keys):
        errs.extend(validate_label_name(key, (*path, i)))
    return errs


def _match_label_keys(
    path: Path,
    match_keys: list[str],
    mismatch_keys: list[str],
    selector: Any,
    extra: list[dict[str, Any]],
) -> list[FieldError]:
    """``ValidateMatchLabelKeysAndMismatchLabelKeys`` (on the selector after the merge)."""
    if not match_keys and not mismatch_keys:
        return []  # nothing to validate and nothing to collide with
    origin = "ValidateMatchLabelKeysAndMismatchLabelKeys"
    errs = _label_keys(match_keys, selector, (*path, "matchLabelKeys"), origin)
    errs.extend(_label_keys(mismatch_keys, selector, (*path, "mismatchLabelKeys"), origin))
    if isinstance(selector, dict):
        index = {key: i for i, key in enumerate(match_keys)}
        labels = selector.get("matchLabels")
        seen = {k for k in labels if isinstance(k, str)} if isinstance(labels, dict) else set()
        expressions = [e for _, e in indexed_dicts(selector.get("matchExpressions"))] + extra
        for expr in expressions:
            key = str_of(expr.get("key"))
            if key in index and key in seen:
                errs.append(
                    invalid(
                        (*path, index[key]),
                        key,
                        "exists in both matchLabelKeys and labelSelector",
                        origin,
                    )
                )
            seen.add(key)
    mismatch = set(mismatch_keys)
    for i, key in enumerate(match_keys):
        if key in mismatch:
            errs.append(
                invalid(
                    (*path, "matchLabelKeys", i),
                    key,
                    "exists in both matchLabelKeys and mismatchLabelKeys",
                    origin,
                )
            )
    return errs


# --- node affinity ------------------------------------------------------------------------------


def _node_selector_requirement(
    req: Mapping[str, Any], allow_invalid_values: bool, path: Path
) -> list[FieldError]:
    """``ValidateNodeSelectorRequirement``."""
    errs: list[FieldError] = []
    origin = "ValidateNodeSelectorRequirement"
    operator = str_of(req.get("operator"))
    values = strings_of(req.get("values"))
    values_path = (*path, "values")
    if operator in _NODE_OPERATORS_VALUES:
        if not values:
            detail = "must be specified when `operator` is 'In' or 'NotIn'"
            errs.append(required(values_path, detail, origin))
    elif operator in _NODE_OPERATORS_NO_VALUES:
        if values:
            detail = "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"
            errs.append(forbidden(values_path, detail, origin))
    elif operator in _NODE_OPERATORS_ONE_VALUE:
        if len(values) != 1:
            detail = "must be specified single value when `operator` is 'Lt' or 'Gt'"
            errs.append(required(values_path, detail, origin))
    else:
        detail = "not a valid selector operator"
        errs.append(invalid((*path, "operator"), operator, detail, origin))
    errs.extend(validate_label_name(str_of(req.get("key")), (*path, "key")))
    if not allow_invalid_values:
        for j, value in enumerate(values):
            errs.extend(
                invalid((*values_path, j), value, msg, origin)
                for msg in is_valid_label_value(value)
            )
    return errs


def _node_field_selector_requirement(req: Mapping[str, Any], path: Path) -> list[FieldError]:
    """``ValidateNodeFieldSelectorRequirement``."""
    errs: list[FieldError] = []
    origin = "ValidateNodeFieldSelectorRequirement"
    operator = str_of(req.get("operator"))
    values = strings_of(req.get("values"))
    if operator in _NODE_OPERATORS_VALUES:
        if len(values) != 1:
            detail = (
                "must be only one value when `operator` is 'In' or 'NotIn' for node field selector"
            )
            errs.append(required((*path, "values"), detail, origin))
    else:
        detail = "not a valid selector operator"
        errs.append(invalid((*path, "operator"), operator, detail, origin))
    key = str_of(req.get("key"))
    if key != _OBJECT_NAME_FIELD:
        detail = "not a valid field selector key"
        errs.append(invalid((*path, "key"), key, detail, origin))
    else:
        for i, value in enumerate(values):
            errs.extend(
                invalid((*path, "values", i), value, msg, origin)
                for msg in is_dns1123_subdomain(value)
            )
    return errs


def _node_selector_term(
    term: Mapping[str, Any], allow_invalid_values: bool, path: Path
) -> list[FieldError]:
    """``ValidateNodeSelectorTerm``."""
    errs: list[FieldError] = []
    for j, req in indexed_dicts(term.get("matchExpressions")):
        errs.extend(
            _node_selector_requirement(req, allow_invalid_values, (*path, "matchExpressions", j))
        )
    for j, req in indexed_dicts(term.get("matchFields")):
        errs.extend(_node_field_selector_requirement(req, (*path, "matchFields", j)))
    return errs


def _node_affinity(affinity: Mapping[str, Any], path: Path) -> list[FieldError]:
    """``validateNodeAffinity``."""
    errs: list[FieldError] = []
    selector = affinity.get("requiredDuringSchedulingIgnoredDuringExecution")
    if isinstance(selector, dict):
        terms_path = (*path, "requiredDuringSchedulingIgnoredDuringExecution", "nodeSelectorTerms")
        terms = as_list(selector.get("nodeSelectorTerms"))
        if not terms:
            detail = "must have at least one node selector term"
            errs.append(required(terms_path, detail, "ValidateNodeSelector"))
        for i, term in indexed_dicts(terms):
            errs.extend(_node_selector_term(term, False, (*terms_path, i)))
    preferred_path = (*path, "preferredDuringSchedulingIgnoredDuringExecution")
    for i, term in indexed_dicts(affinity.get("preferredDuringSchedulingIgnoredDuringExecution")):
        weight = opt_int(term.get("weight"))
        weight = 0 if weight is None else weight
        if weight <= 0 or weight > 100:
            errs.append(
                invalid(
                    (*preferred_path, i, "weight"),
                    weight,
                    "must be in the range 1-100",
                    "ValidatePreferredSchedulingTerms",
                )
            )
        preference = term.get("preference")
        if isinstance(preference, dict):
            # invalid label values are always allowed in preferred terms
            errs.extend(_node_selector_term(preference, True, (*preferred_path, i, "preference")))
    return errs


# --- pod (anti-)affinity -----------------------------------------------------------------------


def _pod_affinity_term(
    term: Mapping[str, Any], labels: Mapping[str, Any], path: Path
) -> list[FieldError]:
    """``validatePodAffinityTerm``."""
    selector = term.get("labelSelector")
    match_keys = strings_of(term.get("matchLabelKeys"))
    mismatch_keys = strings_of(term.get("mismatchLabelKeys"))
    extra = _merged_expressions(selector, match_keys, mismatch_keys, labels)
    errs = _label_selector(selector, extra, (*path, "labelSelector"))
    errs.extend(_label_selector(term.get("namespaceSelector"), [], (*path, "namespaceSelector")))
    for name in strings_of(term.get("namespaces")):
        errs.extend(
            invalid((*path, "namespace"), name, msg, "validatePodAffinityTerm")
            for msg in name_is_dns_label(name, False)
        )
    errs.extend(_match_label_keys(path, match_keys, mismatch_keys, selector, extra))
    topology_key = str_of(term.get("topologyKey"))
    if not topology_key:
        errs.append(required((*path, "topologyKey"), "can not be empty", "validatePodAffinityTerm"))
    errs.extend(validate_label_name(topology_key, (*path, "topologyKey")))
    return errs


def _pod_affinity(
    affinity: Mapping[str, Any], labels: Mapping[str, Any], path: Path
) -> list[FieldError]:
    """``validatePodAffinity`` / ``validatePodAntiAffinity`` (the same checks)."""
    errs: list[FieldError] = []
    required_path = (*path, "requiredDuringSchedulingIgnoredDuringExecution")
    for i, term in indexed_dicts(affinity.get("requiredDuringSchedulingIgnoredDuringExecution")):
        errs.extend(_pod_affinity_term(term, labels, (*required_path, i)))
    preferred_path = (*path, "preferredDuringSchedulingIgnoredDuringExecution")
    for j, weighted in indexed_dicts(
        affinity.get("preferredDuringSchedulingIgnoredDuringExecution")
    ):
        weight = opt_int(weighted.get("weight"))
        weight = 0 if weight is None else weight
        if weight <= 0 or weight > 100:
            errs.append(
                invalid(
                    (*preferred_path, j, "weight"),
                    weight,
                    "must be in the range 1-100",
                    "validateWeightedPodAffinityTerms",
                )
            )
        inner = weighted.get("podAffinityTerm")
        inner = inner if isinstance(inner, dict) else {}
        errs.extend(_pod_affinity_term(inner, labels, (*preferred_path, j, "podAffinityTerm")))
    return errs


def validate_affinity(
    affinity: Any, path: Path, labels: Mapping[str, Any] | None = None
) -> list[FieldError]:
    """``validateAffinity``; ``path`` is the affinity's own path."""
    if not isinstance(affinity, dict):
        return []
    labels = labels or {}
    errs: list[FieldError] = []
    node = affinity.get("nodeAffinity")
    if isinstance(node, dict):
        errs.extend(_node_affinity(node, (*path, "nodeAffinity")))
    for key in ("podAffinity", "podAntiAffinity"):
        pod = affinity.get(key)
        if isinstance(pod, dict):
            errs.extend(_pod_affinity(pod, labels, (*path, key)))
    return errs


# --- tolerations --------------------------------------------------------------------------------


def validate_tolerations(tolerations: Any, path: Path) -> list[FieldError]:
    """``ValidateTolerations``."""
    errs: list[FieldError] = []
    origin = "ValidateTolerations"
    for i, tol in indexed_dicts(tolerations):
        item = (*path, i)
        key = str_of(tol.get("key"))
        operator = str_of(tol.get("operator"))
        value = str_of(tol.get("value"))
        effect = str_of(tol.get("effect"))
        if key:
            errs.extend(validate_label_name(key, (*item, "key")))
        if not key and operator != "Exists":
            detail = (
                "operator must be Exists when `key` is empty, which means "
                '"match all values and all keys"'
            )
            errs.append(invalid((*item, "operator"), operator, detail, origin))
        if tol.get("tolerationSeconds") is not None and effect != "NoExecute":
            detail = "effect must be 'NoExecute' when `tolerationSeconds` is set"
            errs.append(invalid((*item, "effect"), effect, detail, origin))
        if operator in ("Equal", ""):
            msgs = is_valid_label_value(value)
            if msgs:
                errs.append(invalid((*item, "operator"), value, ";".join(msgs), origin))
        elif operator == "Exists":
            if value:
                detail = "value must be empty when `operator` is 'Exists'"
                errs.append(invalid((*item, "operator"), value, detail, origin))
        elif operator in _COMPARISON_OPERATORS and release.at_least("1.35"):
            errs.extend(_comparison_toleration(operator, value, item))
        else:
            errs.append(not_supported((*item, "operator"), operator, _TOLERATION_OPERATORS, origin))
        if effect and effect not in _TAINT_EFFECTS:
            errs.append(
                not_supported((*item, "effect"), effect, _TAINT_EFFECTS, "validateTaintEffect")
            )
    return errs


def _comparison_toleration(operator: str, value: str, item: Path) -> list[FieldError]:
    """``ValidateTolerations``' Lt and Gt (1.35 on): refused unless
    TaintTolerationComparisonOperators is on; then the value must be a decimal integer in
    canonical form (``content.IsDecimalInteger``) that ``strconv.ParseInt`` reads as an int64."""
    origin = "ValidateTolerations"
    if not release.gate("TaintTolerationComparisonOperators"):
        return [not_supported((*item, "operator"), operator, _COMPARISON_CHOICES, origin)]
    errs: list[FieldError] = []
    if not value:
        errs.append(invalid((*item, "value"), value, "must be non-empty", origin))
    elif not _DECIMAL_INTEGER.fullmatch(value):
        detail = "must be a valid decimal integer in canonical form"
        errs.append(invalid((*item, "value"), value, detail, origin))
    digits = value[1:] if value[:1] in ("+", "-") else value
    if not digits.isascii() or not digits.isdigit():
        problem = "invalid syntax"
    elif not -(2**63) <= int(value) < 2**63:
        problem = "value out of range"
    else:
        return errs
    detail = f"strconv.ParseInt: parsing {value_string(value)}: {problem}"
    errs.append(invalid((*item, "value"), value, detail, origin))
    return errs


# --- topology spread constraints --------------------------------------------------------------


def validate_topology_spread_constraints(
    constraints: Any, path: Path, labels: Mapping[str, Any] | None = None
) -> list[FieldError]:
    """``validateTopologySpreadConstraints`` with MatchLabelKeysInPodTopologySpread and its
    SelectorMerge on (``ValidateMatchLabelKeysAndMismatchLabelKeys`` on the merged selector)."""
    if not isinstance(constraints, list) or not constraints:
        return []
    labels = labels or {}
    errs: list[FieldError] = []
    items = [c if isinstance(c, dict) else None for c in constraints]
    for i, constraint in enumerate(items):
        if constraint is None:
            continue
        item = (*path, i)
        max_skew = opt_int(constraint.get("maxSkew"))
        max_skew = 0 if max_skew is None else max_skew
        if max_skew <= 0:
            errs.append(
                invalid(
                    (*item, "maxSkew"),
                    max_skew,
                    "must be greater than zero",
                    "ValidatePositiveField",
                )
            )
        topology_key = str_of(constraint.get("topologyKey"))
        if not topology_key:
            errs.append(required((*item, "topologyKey"), "can not be empty", "ValidateTopologyKey"))
        action = str_of(constraint.get("whenUnsatisfiable"))
        if action not in _WHEN_UNSATISFIABLE:
            errs.append(
                not_supported(
                    (*item, "whenUnsatisfiable"),
                    action,
                    _WHEN_UNSATISFIABLE,
                    "ValidateWhenUnsatisfiable",
                )
            )
        for other in items[i + 1 :]:
            if (
                other is not None
                and str_of(other.get("topologyKey")) == topology_key
                and str_of(other.get("whenUnsatisfiable")) == action
            ):
                errs.append(
                    duplicate(
                        (*item, "{topologyKey, whenUnsatisfiable}"),
                        f"{{{topology_key}, {action}}}",
                        "ValidateSpreadConstraintNotRepeat",
                    )
                )
                break
        md = opt_int(constraint.get("minDomains"))
        if md is not None:
            if md <= 0:
                errs.append(
                    invalid(
                        (*item, "minDomains"),
                        md,
                        "must be greater than zero",
                        "ValidatePositiveField",
                    )
                )
            if action != "DoNotSchedule":
                detail = f"can only use minDomains if whenUnsatisfiable=DoNotSchedule, not {action}"
                errs.append(invalid((*item, "minDomains"), md, detail, "validateMinDomains"))
        for key in ("nodeAffinityPolicy", "nodeTaintsPolicy"):
            policy = constraint.get(key)
            if isinstance(policy, str) and policy not in _INCLUSION_POLICIES:
                errs.append(
                    not_supported(
                        (*item, key), policy, _INCLUSION_POLICIES, "validateNodeInclusionPolicy"
                    )
                )
        selector = constraint.get("labelSelector")
        match_keys = strings_of(constraint.get("matchLabelKeys"))
        extra = _merged_expressions(selector, match_keys, [], labels)
        errs.extend(_match_label_keys(item, match_keys, [], selector, extra))
        errs.extend(_label_selector(selector, extra, (*item, "labelSelector")))
    return errs


# --- the rest of the placement fields ---------------------------------------------------------


def validate_scheduling_gates(gates: Any, path: Path) -> list[FieldError]:
    """``validateSchedulingGates``: qualified names, no duplicates."""
    errs: list[FieldError] = []
    seen: set[str] = set()
    for i, gate in indexed_dicts(gates):
        name = str_of(gate.get("name"))
        errs.extend(
            invalid((*path, i), name, msg, "ValidateQualifiedName")
            for msg in is_qualified_name(name)
        )
        if name in seen:
            errs.append(duplicate((*path, i), name, "validateSchedulingGates"))
        seen.add(name)
    return errs


def validate_scheduling(
    spec: Mapping[str, Any], path: Path, labels: Mapping[str, Any] | None = None
) -> list[FieldError]:
    """The placement checks of ``ValidatePodSpec``, in its order: nodeSelector, affinity,
    topologySpreadConstraints, tolerations (schedulingGates and nodeName are pod.py's). ``path``
    is the spec's path; ``labels`` the pod's labels, which PrepareForCreate merges into the
    selectors of terms and constraints with matchLabelKeys/mismatchLabelKeys."""
    labels = labels if isinstance(labels, dict) else {}
    errs = validate_labels(spec.get("nodeSelector"), (*path, "nodeSelector"))
    errs.extend(validate_affinity(spec.get("affinity"), (*path, "affinity"), labels))
    errs.extend(
        validate_topology_spread_constraints(
            spec.get("topologySpreadConstraints"), (*path, "topologySpreadConstraints"), labels
        )
    )
    if as_list(spec.get("tolerations")):
        errs.extend(validate_tolerations(spec.get("tolerations"), (*path, "tolerations")))
    return errs
