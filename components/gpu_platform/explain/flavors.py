"""Kueue's flavor assignment for one Workload, on an empty cluster, read from the rendered queue objects.

kueue v0.19.2 pkg/scheduler/flavorassigner/flavorassigner.go: flavors in resource-group order, the flavor's
nodeTaints and nodeLabels against the pod set, then quota. No other workload holds quota, so nothing is
preempted (preemption, fair sharing, hierarchical cohorts and topology-aware scheduling are not modelled).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from .kueue import ADMISSION_GATE, KueueSetup
from .selectors import find_untolerated_taint, node_selector_matches, requirement_matches
from .workloads import pod_requests

__all__ = ["FlavorResult", "assign_flavor", "assign_workload", "merge_podset_info"]


@dataclass
class FlavorResult:
    """Where Kueue would admit one pod set: its queues, flavor, and whether the team's quota holds."""

    local_queue: str | None = None
    cluster_queue: str | None = None
    flavor: str | None = None
    requests: dict[str, float] = field(default_factory=dict)
    admitted: bool = False
    borrowing: bool = False
    reasons: list[str] = field(default_factory=list)
    flavors: dict[str, str] = field(default_factory=dict)  # resource -> flavor
    node_labels: dict[str, str] = field(default_factory=dict)
    tolerations: list[dict[str, Any]] = field(default_factory=list)


def _flavor_selector_matches(spec: dict[str, Any], node_labels: dict[str, str]) -> bool:
    """Kueue v0.19.2 pkg/scheduler/flavorassigner/flavorassigner.go flavorSelector: only the flavor's own label
    keys count; a required-affinity term left empty by that filter makes the affinity match any flavor."""
    keys = set(node_labels)
    selector = {k: v for k, v in (spec.get("nodeSelector") or {}).items() if k in keys}
    if not node_selector_matches(selector, node_labels):
        return False
    required = ((spec.get("affinity") or {}).get("nodeAffinity") or {}).get(
        "requiredDuringSchedulingIgnoredDuringExecution"
    ) or {}
    terms = []
    for term in required.get("nodeSelectorTerms") or []:
        kept = [e for e in term.get("matchExpressions") or [] if e.get("key") in keys]
        if not kept:
            return True
        terms.append(kept)
    return not terms or any(all(requirement_matches(e, node_labels) for e in t) for t in terms)


def _quota(cq: dict[str, Any], flavor: str, resource: str) -> dict[str, Any] | None:
    for group in cq["spec"].get("resourceGroups") or []:
        for f in group.get("flavors") or []:
            if f.get("name") == flavor:
                return next((r for r in f.get("resources") or [] if r.get("name") == resource), None)
    return None


def _lendable(setup: KueueSetup, cq_name: str, flavor: str, resource: str) -> float:
    """Quota the other ClusterQueues of the cohort can lend (their nominal, capped by lendingLimit)."""
    cohort = setup.cluster_queues[cq_name]["spec"].get("cohortName")
    total = 0.0
    for name, other in setup.cluster_queues.items():
        if name == cq_name or not cohort or other["spec"].get("cohortName") != cohort:
            continue
        q = _quota(other, flavor, resource) or {}
        nominal = float(q.get("nominalQuota", 0))
        total += min(nominal, float(q["lendingLimit"])) if "lendingLimit" in q else nominal
    return total


def _fits(
    setup: KueueSetup, cq_name: str, flavor: str, resource: str, amount: float, assumed: float = 0.0
) -> tuple[bool, bool, str]:
    """FitsResourceQuota on an empty cluster: within nominal, or within nominal + what borrowing can bring.

    kueue v0.19.2 pkg/scheduler/flavorassigner/flavorassigner.go fitsResourceQuota (PotentialAvailable =
    nominal + min(borrowingLimit, the cohort's lendable quota); hierarchical cohorts are not modelled).
    """
    q = _quota(setup.cluster_queues[cq_name], flavor, resource) or {}
    nominal = float(q.get("nominalQuota", 0))
    amount += assumed  # the workload's earlier pod sets on the same flavor (flavorassigner assignmentUsage)
    if amount <= nominal:
        return True, False, f"{resource} {_n(amount)} <= nominal {_n(nominal)} in flavor {flavor}"
    borrow = (
        _lendable(setup, cq_name, flavor, resource) if setup.cluster_queues[cq_name]["spec"].get("cohortName") else 0
    )
    limit = float(q.get("borrowingLimit", math.inf)) if "borrowingLimit" in q else math.inf
    ceiling = nominal + min(borrow, limit)
    if amount <= ceiling:
        return (
            True,
            True,
            f"{resource} {_n(amount)} > nominal {_n(nominal)}, fits by borrowing in the cohort (max {_n(ceiling)})",
        )
    return (
        False,
        False,
        f"insufficient quota for {resource} in flavor {flavor}: request {_n(amount)} > maximum capacity {_n(ceiling)}",
    )


def _n(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else f"{x:g}"


def _counted(requests: dict[str, float], setup: KueueSetup) -> dict[str, float]:
    """Requests without the manager's excludeResourcePrefixes (kueue v0.19.2 pkg/workload/resources.go)."""
    return {r: v for r, v in requests.items() if v and not any(r.startswith(p) for p in setup.exclude_prefixes)}


def _try_group(
    setup: KueueSetup,
    cq_name: str,
    group: dict[str, Any],
    spec: dict[str, Any],
    requests: dict[str, float],
    result: FlavorResult,
    usage: dict[tuple[str, str], float],
) -> bool:
    """Flavors of one resource group in order; the first that matches and fits all its resources wins."""
    wanted = {r: v for r, v in requests.items() if r in (group.get("coveredResources") or [])}
    for f in group.get("flavors") or []:
        name = f["name"]
        flavor = (setup.flavors.get(name) or {}).get("spec") or {}
        taint = find_untolerated_taint(
            flavor.get("nodeTaints") or [], (spec.get("tolerations") or []) + (flavor.get("tolerations") or [])
        )
        if taint:
            result.reasons.append(
                f"untolerated taint {taint.get('key')}={taint.get('value', '')}:{taint.get('effect')} in flavor {name}"
            )
            continue
        if not _flavor_selector_matches(spec, flavor.get("nodeLabels") or {}):
            result.reasons.append(f"flavor {name} doesn't match node affinity")
            continue
        checks = [_fits(setup, cq_name, name, r, v, usage.get((name, r), 0.0)) for r, v in wanted.items()]
        result.reasons += [c[2] for c in checks]
        if all(c[0] for c in checks):
            result.flavor = result.flavor or name
            result.borrowing = result.borrowing or any(c[1] for c in checks)
            result.flavors.update({r: name for r in wanted})
            result.node_labels.update(flavor.get("nodeLabels") or {})
            result.tolerations += [t for t in flavor.get("tolerations") or [] if t not in result.tolerations]
            return True
    return False


def assign_flavor(
    setup: KueueSetup,
    namespace: str,
    queue: str,
    spec: dict[str, Any],
    count: int,
    usage: dict[tuple[str, str], float] | None = None,
) -> FlavorResult:
    """LocalQueue -> ClusterQueue -> the flavor of each covered resource for one pod set of `count` pods.

    kueue v0.19.2 pkg/scheduler/flavorassigner/flavorassigner.go assignFlavors / findFlavorForPodSets /
    checkFlavorForPodSets: flavors in resource-group order, the flavor's nodeTaints against the pod's and the
    flavor's tolerations, flavorSelector on the flavor's nodeLabels, then quota (the first fit wins: the
    v1beta2 default flavorFungibility whenCanBorrow MayStopSearch). A multi-group pod set is reported by the
    flavor of its first group.
    """
    result = FlavorResult(local_queue=queue)
    lq = setup.local_queues.get((namespace, queue))
    if lq is None:
        result.reasons.append(f"LocalQueue {queue} doesn't exist in namespace {namespace}")
        return result
    cq_name = lq["spec"].get("clusterQueue", "")
    result.cluster_queue = cq_name
    cq = setup.cluster_queues.get(cq_name)
    if cq is None:
        result.reasons.append(f"ClusterQueue {cq_name} doesn't exist")
        return result
    requests = {r: v * count for r, v in _counted(pod_requests(spec, prefix=""), setup).items()}
    result.requests = requests
    groups = cq["spec"].get("resourceGroups") or []
    missing = [r for r in requests if not any(r in (g.get("coveredResources") or []) for g in groups)]
    if missing:
        result.reasons.append(f"resource {missing[0]} unavailable in ClusterQueue {cq_name}")
        return result
    touched = [g for g in groups if any(r in (g.get("coveredResources") or []) for r in requests)]
    for g in touched:
        if not _try_group(setup, cq_name, g, spec, requests, result, usage or {}):
            return result
    result.admitted = True
    if not requests:
        result.reasons.append("no quota-counted resource requested (excludeResourcePrefixes)")
    return result


def assign_workload(
    setup: KueueSetup, namespace: str, queue: str, podsets: list[tuple[dict[str, Any], int]]
) -> list[FlavorResult]:
    """Every pod set of one Workload, each charged on top of the earlier ones; all fit or none is admitted."""
    usage: dict[tuple[str, str], float] = {}
    results = []
    for spec, count in podsets:
        r = assign_flavor(setup, namespace, queue, spec, count, usage)
        results.append(r)
        for resource, amount in r.requests.items():
            if r.admitted and resource in r.flavors:
                key = (r.flavors[resource], resource)
                usage[key] = usage.get(key, 0.0) + amount
    if not all(r.admitted for r in results):
        for r in results:
            if r.admitted:
                r.admitted = False
                r.reasons.append("another pod set of the same workload does not fit, so none is admitted")
    return results


def merge_podset_info(spec: dict[str, Any], result: FlavorResult) -> str | None:
    """On admission Kueue merges the flavor's nodeLabels and tolerations into the pod template (or the gated pod)
    and removes the admission gate; a nodeSelector key with another value is a conflict that stops the job.

    kueue v0.19.2 pkg/podset/podset.go Merge / PodSetInfo.Merge.
    """
    selector = spec["nodeSelector"] = dict(spec.get("nodeSelector") or {})
    for k, v in result.node_labels.items():
        if k in selector and selector[k] != v:
            return f"conflict for nodeSelector {k}: {selector[k]} != {v} (flavor {result.flavor})"
    selector.update(result.node_labels)
    tolerations = spec["tolerations"] = list(spec.get("tolerations") or [])
    for t in result.tolerations:
        if t not in tolerations:
            tolerations.append(t)
    gates = [g for g in spec.get("schedulingGates") or [] if g.get("name") != ADMISSION_GATE]
    if "schedulingGates" in spec:
        spec["schedulingGates"] = gates
    return None
