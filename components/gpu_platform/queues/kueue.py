"""Pure render of Kueue v1beta2 objects: a ResourceFlavor per pool, a ClusterQueue per team, LocalQueues, Cohorts.

Routing model: a flavor's only node label is the pool label, so a workload whose pods select
`<labelDomain>/gpu-pool=<pool>` (set by the tier's admission mutation, or by hand) can be assigned only that
pool's flavor. Quotas cover GPU extended resources only (nvidia.com/gpu and nvidia.com/mig-*); CPU and
memory stay outside Kueue's quota so a team is limited by what it can never share, the GPUs.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..contract import KUEUE_PRIORITY_LABEL, KUEUE_QUEUE_LABEL, NAMESPACE_NAME_LABEL, pool_label_key, pool_taints
from ..spec import NodePool, PlatformSpec, Team, Tier

__all__ = [
    "QUEUE_NAME_LABEL",
    "PRIORITY_CLASS_LABEL",
    "cluster_queue_name",
    "flavor_name",
    "local_queue_name",
    "namespace_selector",
    "render_kueue_objects",
    "resource_groups",
    "tier_quotas",
]

API_VERSION = "kueue.x-k8s.io/v1beta2"
QUEUE_NAME_LABEL = KUEUE_QUEUE_LABEL
PRIORITY_CLASS_LABEL = KUEUE_PRIORITY_LABEL
_NS_NAME_LABEL = NAMESPACE_NAME_LABEL


def flavor_name(pool: NodePool) -> str:
    """ResourceFlavor name of a pool (the pool name)."""
    return pool.name


def cluster_queue_name(team: Team) -> str:
    """ClusterQueue name of a team (the team name)."""
    return team.name


def local_queue_name(team: Team) -> str:
    """LocalQueue name in each of a team's namespaces (the team name): the Job label `kueue.x-k8s.io/queue-name`."""
    return team.name


def namespace_selector(namespaces: list[str]) -> dict[str, Any]:
    """A label selector matching exactly `namespaces` by their built-in name label."""
    return {"matchExpressions": [{"key": _NS_NAME_LABEL, "operator": "In", "values": sorted(namespaces)}]}


def render_resource_flavor(spec: PlatformSpec, pool: NodePool) -> dict[str, Any]:
    """The pool's ResourceFlavor: the pool label as node label, tolerations for the pool and GPU taints."""
    tolerations = [
        {"key": t["key"], "operator": "Equal", "value": t["value"], "effect": t["effect"]}
        for t in pool_taints(spec, pool)
    ]
    return {
        "apiVersion": API_VERSION,
        "kind": "ResourceFlavor",
        "metadata": {"name": flavor_name(pool)},
        "spec": {"nodeLabels": {pool_label_key(spec.label_domain): pool.name}, "tolerations": tolerations},
    }


@dataclass
class Quota:
    """A team's quota of one (pool, resource): nominal, borrowing limit and lending limit (None = unlimited)."""

    nominal: int = 0
    borrowing: int | None = 0  # None = unlimited
    lending: int | None = 0  # None = no limit


@dataclass
class ResourceGroup:
    """One ClusterQueue resource group: resources covered, and per flavor (pool) the quota of each resource."""

    resources: list[str] = field(default_factory=list)
    flavors: dict[str, dict[str, Quota]] = field(default_factory=dict)


def tier_quotas(spec: PlatformSpec, team: Team) -> dict[tuple[str, str], Quota]:
    """(pool, resource) -> summed quota of the team's tiers routing there."""
    out: dict[tuple[str, str], Quota] = {}
    for tier_name, nominal in team.quotas.items():
        tier: Tier = spec.tiers_by_name[tier_name]
        q = out.setdefault((tier.pool, spec.resource_of(tier)), Quota())
        q.nominal += nominal
        for attr, limits in (("borrowing", team.borrowing_limit), ("lending", team.lending_limit)):
            have, add = getattr(q, attr), limits.get(tier_name)
            setattr(q, attr, None if have is None or add is None else have + add)
    return out


def resource_groups(spec: PlatformSpec, team: Team) -> list[ResourceGroup]:
    """The team's resource groups: connected components of pools and resources linked by the team's tiers.

    Kueue lets each resource and each flavor appear in one group only, and every flavor of a group must list
    every covered resource in the same order, so pools sharing a resource name (nvidia.com/gpu on an exclusive
    and a time-sliced pool) share a group, and a pool's missing resources get a zero quota.
    """
    quotas = tier_quotas(spec, team)
    groups: list[tuple[set[str], set[str]]] = []
    for pool, resource in quotas:
        hits = [g for g in groups if pool in g[0] or resource in g[1]]
        merged = ({pool}, {resource})
        for g in hits:
            merged[0].update(g[0])
            merged[1].update(g[1])
            groups.remove(g)
        groups.append(merged)
    pool_order = [p.name for p in spec.node_pools]
    out = []
    for pools, resources in sorted(groups, key=lambda g: min(pool_order.index(p) for p in g[0])):
        res = sorted(resources)
        flavors = {p: {r: quotas.get((p, r), Quota()) for r in res} for p in pool_order if p in pools}
        out.append(ResourceGroup(res, flavors))
    return out


def _resource_entry(name: str, q: Quota, cohort: bool) -> dict[str, Any]:
    entry: dict[str, Any] = {"name": name, "nominalQuota": q.nominal}
    if cohort and q.borrowing is not None:
        entry["borrowingLimit"] = q.borrowing
    if cohort and q.lending is not None and q.nominal:
        entry["lendingLimit"] = q.lending
    return entry


def _preemption(team: Team) -> dict[str, str]:
    # Higher tiers preempt lower ones inside the queue; a team always gets its lent quota back.
    out = {"withinClusterQueue": "LowerPriority"}
    if team.cohort:
        out = {"reclaimWithinCohort": "Any", **out}
    return out


def render_cluster_queue(spec: PlatformSpec, team: Team) -> dict[str, Any]:
    """The team's ClusterQueue: cohort, namespaces, GPU resource groups, preemption, queueing strategy."""
    kueue = spec.scheduling.kueue
    cohort = bool(team.cohort)
    body: dict[str, Any] = {}
    if team.cohort:
        body["cohortName"] = team.cohort
    body["namespaceSelector"] = namespace_selector(team.namespaces)
    body["queueingStrategy"] = kueue.queueing_strategy
    body["preemption"] = _preemption(team)
    if kueue.fair_sharing:
        body["fairSharing"] = {"weight": team.weight}
    groups = resource_groups(spec, team)
    if groups:
        body["resourceGroups"] = [
            {
                "coveredResources": g.resources,
                "flavors": [
                    {"name": pool, "resources": [_resource_entry(r, qs[r], cohort) for r in g.resources]}
                    for pool, qs in g.flavors.items()
                ],
            }
            for g in groups
        ]
    return {
        "apiVersion": API_VERSION,
        "kind": "ClusterQueue",
        "metadata": {"name": cluster_queue_name(team)},
        "spec": body,
    }


def render_local_queues(team: Team) -> list[dict[str, Any]]:
    """One LocalQueue per team namespace, pointing at the team's ClusterQueue."""
    return [
        {
            "apiVersion": API_VERSION,
            "kind": "LocalQueue",
            "metadata": {"name": local_queue_name(team), "namespace": ns},
            "spec": {"clusterQueue": cluster_queue_name(team)},
        }
        for ns in team.namespaces
    ]


def render_cohorts(spec: PlatformSpec) -> list[dict[str, Any]]:
    """One Cohort per entry of `scheduling.cohorts` (team cohorts not listed there stay implicit roots)."""
    return [
        {
            "apiVersion": API_VERSION,
            "kind": "Cohort",
            "metadata": {"name": c.name},
            "spec": {"parentName": c.parent} if c.parent else {},
        }
        for c in spec.scheduling.cohorts
    ]


def render_kueue_objects(spec: PlatformSpec) -> list[dict[str, Any]]:
    """Every Kueue object except WorkloadPriorityClasses (see `priorities`), in apply order."""
    docs = [render_resource_flavor(spec, p) for p in spec.node_pools]
    docs += render_cohorts(spec)
    docs += [render_cluster_queue(spec, t) for t in spec.teams]
    docs += [lq for t in spec.teams for lq in render_local_queues(t)]
    return docs
