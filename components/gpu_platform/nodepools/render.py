"""Pure render of each pool's cloud node pool resources and capacity (no pulumi import).

The document for `DIR/nodepools/<pool>.yaml` names the primary provider resource (`type`, `inputs`), the
resources created with it (`resources`, each with its type and inputs) and the capacity the pool advertises.
"""

from __future__ import annotations

import re
from typing import Any

from ..artifacts import Artifact
from ..capacity import pool_capacity
from ..spec import Cloud, NodePool, PlatformSpec
from .eks import (
    ASG_TAG_TYPE,
    LAUNCH_TEMPLATE_TYPE,
    NODE_GROUP_TYPE,
    autoscaler_tags,
    render_eks_launch_template,
    render_eks_node_group,
)
from .gke import NODE_POOL_TYPE, gpu_stack, render_gke_node_pool
from .health import ADDON_TYPE, NODE_MONITORING_ADDON, render_node_monitoring_addon

__all__ = ["render_capacity", "render_node_pool", "render_nodepool_artifacts", "snake_kwargs"]

_CAMEL = re.compile(r"(?<!^)(?=[A-Z])")


def snake_kwargs(inputs: dict[str, Any]) -> dict[str, Any]:
    """Top-level camelCase input names as Python keyword names; nested values stay camelCase as rendered."""
    return {_CAMEL.sub("_", k).lower(): v for k, v in inputs.items()}


def render_capacity(spec: PlatformSpec, pool: NodePool) -> dict[str, Any]:
    """GPU model, GPUs and extended-resource units of a pool, per node and at min and max size."""
    cap = pool_capacity(spec, pool)
    return {
        "gpuModel": cap.gpu_model,
        "gpusPerNode": cap.gpus_per_node,
        "gpus": {"min": cap.gpus_min, "max": cap.gpus_max},
        "unitsPerNode": dict(cap.units_per_node),
        "units": {r: {"min": n * pool.min_size, "max": n * pool.max_size} for r, n in cap.units_per_node.items()},
    }


def _render_aws(spec: PlatformSpec, pool: NodePool) -> dict[str, Any]:
    tags = autoscaler_tags(spec, pool)
    return {
        "type": NODE_GROUP_TYPE,
        "inputs": render_eks_node_group(spec, pool),
        "resources": [
            {"role": "lt", "type": LAUNCH_TEMPLATE_TYPE, "inputs": render_eks_launch_template(spec, pool)},
            # Node group tags do not reach its Auto Scaling group; the autoscaler reads the group's tags.
            {"role": "asg-tags", "type": ASG_TAG_TYPE,
             "inputs": [{"key": k, "value": v, "propagateAtLaunch": False} for k, v in tags.items()]},
        ],
    }


def _render_gcp(spec: PlatformSpec, pool: NodePool) -> dict[str, Any]:
    return {"type": NODE_POOL_TYPE, "gpuStack": gpu_stack(spec).value, "inputs": render_gke_node_pool(spec, pool)}


def render_node_pool(spec: PlatformSpec, pool: NodePool) -> dict[str, Any]:
    """The provider resource type(s) and inputs of one pool, plus its capacity."""
    body = _render_aws(spec, pool) if spec.cloud == Cloud.AWS else _render_gcp(spec, pool)
    return {"name": pool.name, "cloud": spec.cloud.value, **body, "capacity": render_capacity(spec, pool)}


def render_nodepool_artifacts(spec: PlatformSpec) -> list[Artifact]:
    """One `DIR/nodepools/<pool>.yaml` per pool, plus `addons/eks-node-monitoring-agent.yaml` on EKS (in a
    subdirectory, so `nodepools/*.yaml` stays one file per pool)."""
    out = [Artifact("nodepools", p.name, (render_node_pool(spec, p),)) for p in spec.node_pools]
    addon = render_node_monitoring_addon(spec)
    if addon:
        note = ("nodepools: eks-node-monitoring-agent add-on: hardware XIDs set AcceleratedHardwareReady=False, "
                "node auto repair reboots or replaces the node")
        out.append(Artifact("nodepools", f"addons/{NODE_MONITORING_ADDON}", ({"type": ADDON_TYPE, "inputs": addon},),
                            (note,)))
    return out
