"""Label selectors, node selectors and taint toleration, with the API machinery's semantics.

Each function cites the upstream code it follows; all take plain dicts as they appear in manifests.
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "find_untolerated_taint",
    "label_selector_matches",
    "node_selector_matches",
    "requirement_matches",
    "required_node_affinity_matches",
]


def _expression_matches(expr: dict[str, Any], labels: dict[str, str]) -> bool:
    key, op, values = expr.get("key", ""), expr.get("operator", ""), expr.get("values") or []
    if op == "In":
        return key in labels and labels[key] in values
    if op == "NotIn":
        return key not in labels or labels[key] not in values
    if op == "Exists":
        return key in labels
    if op == "DoesNotExist":
        return key not in labels
    return False  # an invalid operator makes the selector invalid: it matches nothing


def label_selector_matches(selector: dict[str, Any] | None, labels: dict[str, str]) -> bool:
    """metav1.LabelSelector: matchLabels AND matchExpressions; absent or `{}` matches everything.

    kubernetes/apimachinery v0.33.0 pkg/apis/meta/v1/helpers.go LabelSelectorAsSelector, pkg/labels/selector.go
    (Requirement.Matches: NotIn and DoesNotExist match an absent key).
    """
    if not selector:
        return True
    if any(labels.get(k) != v for k, v in (selector.get("matchLabels") or {}).items()):
        return False
    return all(_expression_matches(e, labels) for e in selector.get("matchExpressions") or [])


def requirement_matches(req: dict[str, Any], labels: dict[str, str]) -> bool:
    """One NodeSelectorRequirement: In, NotIn, Exists, DoesNotExist, Gt, Lt (Gt/Lt compare integers).

    kubernetes/component-helpers v0.33.0 scheduling/corev1/nodeaffinity/nodeaffinity.go
    nodeSelectorRequirementsAsSelector.
    """
    op, key, values = req.get("operator", ""), req.get("key", ""), req.get("values") or []
    if op in ("Gt", "Lt"):
        if key not in labels or len(values) != 1:
            return False
        try:
            have, want = int(labels[key]), int(values[0])
        except ValueError:
            return False
        return have > want if op == "Gt" else have < want
    return _expression_matches(req, labels)


def node_selector_matches(node_selector: dict[str, str] | None, labels: dict[str, str]) -> bool:
    """`spec.nodeSelector`: every key equals the node's label."""
    return all(labels.get(k) == v for k, v in (node_selector or {}).items())


def required_node_affinity_matches(affinity: dict[str, Any] | None, labels: dict[str, str]) -> bool:
    """requiredDuringSchedulingIgnoredDuringExecution: terms ORed, a term's matchExpressions ANDed.

    kubernetes/component-helpers v0.33.0 scheduling/corev1/nodeaffinity/nodeaffinity.go (a term with no
    requirements matches nothing; matchFields are not modelled: they select by node name).
    """
    required = ((affinity or {}).get("nodeAffinity") or {}).get("requiredDuringSchedulingIgnoredDuringExecution")
    if not required:
        return True
    for term in required.get("nodeSelectorTerms") or []:
        exprs = term.get("matchExpressions") or []
        if exprs and all(requirement_matches(e, labels) for e in exprs):
            return True
    return False


def tolerates(toleration: dict[str, Any], taint: dict[str, Any]) -> bool:
    """One toleration against one taint.

    kubernetes/api v0.33.0 core/v1/toleration.go ToleratesTaint: the effect matches (or the toleration has
    none), the key matches (an empty key with Exists matches every key), Exists ignores the value, Equal (the
    default operator) compares it.
    """
    effect = toleration.get("effect") or ""
    if effect and effect != taint.get("effect"):
        return False
    key, op = toleration.get("key") or "", toleration.get("operator") or "Equal"
    if key and key != taint.get("key"):
        return False
    if op == "Exists":
        return True
    return op == "Equal" and (toleration.get("value") or "") == (taint.get("value") or "")


def find_untolerated_taint(taints: list[dict[str, Any]], tolerations: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The first NoSchedule/NoExecute taint no toleration tolerates, or None.

    kubernetes/component-helpers v0.33.0 scheduling/corev1/helpers.go FindMatchingUntoleratedTaint, as used by
    kubernetes v1.33.0 pkg/scheduler/framework/plugins/tainttoleration/taint_toleration.go Filter
    (PreferNoSchedule never filters).
    """
    for taint in taints:
        if taint.get("effect") not in ("NoSchedule", "NoExecute"):
            continue
        if not any(tolerates(t, taint) for t in tolerations):
            return taint
    return None
