"""Pure render of Volcano: a Queue per team, the scheduler configuration with the gang plugin, PodGroup shape.

Division of work when Kueue is enabled too: **Kueue admits, Volcano schedules.** Kueue owns quota, borrowing
and preemption (a Job stays suspended until its ClusterQueue admits it); Volcano then places the admitted
pods as a gang (`schedulerName: volcano`, a PodGroup with `minMember`). So that the two never disagree,
Volcano's Queues are then not reclaimable, carry no guarantee, and their capability is the team's Kueue
ceiling (nominal + borrowing limit, capped at the pools' capacity); the scheduler runs without the preempt
and reclaim actions. With Volcano alone, its Queues carry the quota themselves: deserved = nominal quota,
guarantee = the part the team never lends, reclaimable, and the scheduler reclaims between queues.
Volcano queues count resources by name, not by pool: pool routing is the pods' node selector.

The scheduler runs the `capacity` plugin, not `proportion`: proportion divides the cluster by queue weight and
ignores `deserved`, capacity enforces each queue's `deserved` and lends/reclaims around it (volcano-sh/volcano
v1.15.1 docs/user-guide/how_to_use_capacity_plugin.md, pkg/scheduler/plugins/capacity/capacity.go; the two
plugins cannot be used together). PodGroups reach the team's queue through the team namespace's
`scheduling.volcano.sh/queue-name` annotation (see `queues.render.namespace_metadata`).
"""

from __future__ import annotations

from typing import Any

import yaml

from ..capacity import pool_capacity
from ..spec import PlatformSpec, Team
from .kueue import tier_quotas

__all__ = ["queue_name", "render_podgroup", "render_volcano_queues", "scheduler_config"]

API_VERSION = "scheduling.volcano.sh/v1beta1"
SCHEDULER_NAME = "volcano"
GROUP_NAME_ANNOTATION = "scheduling.k8s.io/group-name"

_PLUGINS = [
    {"plugins": [{"name": "priority"}, {"name": "gang", "enablePreemptable": False}, {"name": "conformance"}]},
    {
        "plugins": [
            {"name": "overcommit"},
            {"name": "drf", "enablePreemptable": False},
            {"name": "predicates"},
            {"name": "capacity"},
            {"name": "nodeorder"},
            {"name": "binpack"},
        ]
    },
]


def queue_name(team: Team) -> str:
    """Volcano Queue name of a team (the team name)."""
    return team.name


def scheduler_config(spec: PlatformSpec) -> str:
    """volcano-scheduler.conf: gang on; preempt/reclaim actions only when Volcano alone owns quota."""
    kueue_admits = spec.scheduling.kueue.enabled
    actions = "enqueue, allocate, backfill" if kueue_admits else "enqueue, allocate, preempt, reclaim, backfill"
    return yaml.safe_dump({"actions": actions, "tiers": _PLUGINS}, sort_keys=False)


def _ceilings(spec: PlatformSpec, team: Team) -> tuple[dict[str, int], dict[str, int], dict[str, int]]:
    """Per resource name: (deserved, capability, guarantee) summed over the team's pools."""
    deserved: dict[str, int] = {}
    capability: dict[str, int] = {}
    guarantee: dict[str, int] = {}
    for (pool_name, resource), q in tier_quotas(spec, team).items():
        pool = spec.pools_by_name[pool_name]
        physical = pool_capacity(spec, pool).units(resource, pool.max_size)
        if not team.cohort:
            ceiling, kept = q.nominal, q.nominal
        else:
            ceiling = physical if q.borrowing is None else min(physical, q.nominal + q.borrowing)
            kept = 0 if q.lending is None else q.nominal - q.lending
        deserved[resource] = deserved.get(resource, 0) + q.nominal
        capability[resource] = capability.get(resource, 0) + max(ceiling, q.nominal)
        guarantee[resource] = guarantee.get(resource, 0) + kept
    return deserved, capability, {r: n for r, n in guarantee.items() if n > 0}


def render_volcano_queue(spec: PlatformSpec, team: Team) -> dict[str, Any]:
    """The team's Volcano Queue (see the module docstring for how Kueue changes it)."""
    deserved, capability, guarantee = _ceilings(spec, team)
    kueue_admits = spec.scheduling.kueue.enabled
    body: dict[str, Any] = {"weight": team.weight, "reclaimable": not kueue_admits}
    if capability:
        body["capability"] = capability
    if deserved:
        body["deserved"] = deserved
    if guarantee and not kueue_admits:
        body["guarantee"] = {"resource": guarantee}
    return {"apiVersion": API_VERSION, "kind": "Queue", "metadata": {"name": queue_name(team)}, "spec": body}


def render_volcano_queues(spec: PlatformSpec) -> list[dict[str, Any]]:
    """One Volcano Queue per team."""
    return [render_volcano_queue(spec, t) for t in spec.teams]


def render_podgroup(
    team: Team, namespace: str, name: str, min_member: int, priority_class: str | None = None
) -> dict[str, Any]:
    """A PodGroup for a distributed job: Volcano starts none of its pods until `min_member` can all run."""
    body: dict[str, Any] = {"minMember": min_member, "queue": queue_name(team)}
    if priority_class:
        body["priorityClassName"] = priority_class
    return {
        "apiVersion": API_VERSION,
        "kind": "PodGroup",
        "metadata": {"name": name, "namespace": namespace},
        "spec": body,
    }
