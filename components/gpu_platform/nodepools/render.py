"""Pure render of each pool's cloud node pool inputs (no pulumi import)."""

from __future__ import annotations

from typing import Any

from ..artifacts import Artifact
from ..capacity import pool_capacity
from ..contract import pool_labels, pool_taints
from ..spec import Cloud, NodePool, PlatformSpec

__all__ = ["render_node_pool", "render_nodepool_artifacts"]

_EFFECT = {"NoSchedule": "NO_SCHEDULE", "NoExecute": "NO_EXECUTE", "PreferNoSchedule": "PREFER_NO_SCHEDULE"}


def render_node_pool(spec: PlatformSpec, pool: NodePool) -> dict[str, Any]:
    """The provider resource type and inputs of one pool, plus its capacity."""
    cap = pool_capacity(spec, pool)
    taints = [{**t, "effect": _EFFECT[t["effect"]]} for t in pool_taints(spec, pool)]
    if spec.cloud == Cloud.AWS:
        rtype = "aws:eks/nodeGroup:NodeGroup"
        inputs = {
            "clusterName": spec.cluster_name,
            "nodeGroupName": pool.name,
            "instanceTypes": [pool.instance_type],
            "labels": pool_labels(spec, pool),
            "taints": taints,
            "scalingConfig": {"minSize": pool.min_size, "maxSize": pool.max_size},
        }
    else:
        rtype = "gcp:container/nodePool:NodePool"
        inputs = {
            "cluster": spec.cluster_name,
            "name": pool.name,
            "nodeConfig": {"machineType": pool.instance_type, "labels": pool_labels(spec, pool), "taints": taints},
            "autoscaling": {"minNodeCount": pool.min_size, "maxNodeCount": pool.max_size},
        }
    return {
        "type": rtype,
        "name": pool.name,
        "inputs": inputs,
        "capacity": {
            "gpuModel": cap.gpu_model,
            "gpusPerNode": cap.gpus_per_node,
            "gpus": {"min": cap.gpus_min, "max": cap.gpus_max},
            "units": {r: {"min": n * pool.min_size, "max": n * pool.max_size} for r, n in cap.units_per_node.items()},
        },
    }


def render_nodepool_artifacts(spec: PlatformSpec) -> list[Artifact]:
    """One `DIR/nodepools/<pool>.yaml` per pool."""
    return [Artifact("nodepools", p.name, (render_node_pool(spec, p),)) for p in spec.node_pools]
