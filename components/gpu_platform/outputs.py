"""What a consumer of the platform needs to know, rendered from the spec (no pulumi import).

`GpuPlatform` exports these as stack outputs so another stack (or a CI job) can build workloads that land:
per team its namespaces and LocalQueue, per tier what a pod or a pod template must carry (the tier label, the
resource, the node selector, tolerations and priority classes the admission routes would set), and the
in-cluster endpoints of Prometheus and OpenCost.
"""

from __future__ import annotations

from typing import Any

from .contract import GPU_TAINT, pool_label_key, team_label_key, tier_label_key
from .observability.prometheus import prometheus_query_url
from .queues.kueue import cluster_queue_name, local_queue_name
from .queues.priorities import priority_class_name
from .queues.render import team_tiers
from .spec import PlatformSpec, Tier

__all__ = ["platform_outputs"]


def tier_outputs(spec: PlatformSpec, tier: Tier) -> dict[str, Any]:
    """What a workload of `tier` carries once admitted (and may set itself)."""
    pool_key = pool_label_key(spec.label_domain)
    return {
        "labels": {tier_label_key(spec.label_domain): tier.name},
        "pool": tier.pool,
        "resource": spec.resource_of(tier),
        "nodeSelector": {pool_key: tier.pool},
        "tolerations": [
            {"key": pool_key, "operator": "Equal", "value": tier.pool, "effect": "NoSchedule"},
            {"key": GPU_TAINT["key"], "operator": "Exists", "effect": "NoSchedule"},
        ],
        "priorityClassName": priority_class_name(tier),
        "workloadPriorityClassName": priority_class_name(tier),
        "priority": spec.priority_of(tier),
    }


def team_outputs(spec: PlatformSpec) -> dict[str, dict[str, Any]]:
    """Per team: namespaces, the LocalQueue name in each, its ClusterQueue, and the tiers it may run."""
    return {
        t.name: {
            "namespaces": list(t.namespaces),
            "localQueue": local_queue_name(t),
            "clusterQueue": cluster_queue_name(t),
            "tiers": team_tiers(spec, t),
            "namespaceLabels": {team_label_key(spec.label_domain): t.name},
        }
        for t in spec.teams
    }


def opencost_url(spec: PlatformSpec) -> str | None:
    """OpenCost's in-cluster API (service `<release>` port 9003, opencost-helm-chart 2.5.x), when installed."""
    oc = spec.monitoring.opencost
    return f"http://{oc.release_name}.{oc.namespace}.svc:9003" if oc.enabled else None


def platform_outputs(spec: PlatformSpec) -> dict[str, Any]:
    """Every plain (spec-derived) output of GpuPlatform, camelCase keys."""
    return {
        "nodePoolNames": [p.name for p in spec.node_pools],
        "tierNames": [t.name for t in spec.tiers],
        "teams": team_outputs(spec),
        "tiers": {t.name: tier_outputs(spec, t) for t in spec.tiers},
        "prometheusUrl": prometheus_query_url(spec),
        "opencostUrl": opencost_url(spec),
    }
