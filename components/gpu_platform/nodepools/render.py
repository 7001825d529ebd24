"""Pure render of each pool's cloud node pool resources and capacity (no pulumi import).

The document for `DIR/nodepools/<pool>.yaml` names the primary provider resource (`type`, `inputs`), the
resources created with it (`resources`, each with its type and inputs) and the capacity the pool advertises.
"""

from __future__ import annotations

import re
from typing import Any

from ..artifacts import Artifact, ArtifactKind
from ..capacity import pool_capacity
from ..errors import Finding, Severity
from ..spec import Cloud, NodePool, PlatformSpec, Provisioner
from .addons import render_node_addon_artifacts
from .efa import (
    PLACEMENT_GROUP_TYPE,
    SECURITY_GROUP_TYPE,
    render_efa_security_group,
    render_placement_group,
    uses_efa,
    uses_placement_group,
)
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
from .karpenter import (
    EC2_NODE_CLASS_TYPE,
    KARPENTER_NODE_POOL_TYPE,
    render_ec2_node_class,
    render_karpenter_node_pool,
)

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
        "units": {r: {"min": n * cap.min_nodes, "max": n * pool.max_size} for r, n in cap.units_per_node.items()},
    }


def _network_resources(spec: PlatformSpec, pool: NodePool) -> list[dict[str, Any]]:
    out = []
    if uses_placement_group(spec, pool):
        out.append({"role": "pg", "type": PLACEMENT_GROUP_TYPE, "inputs": render_placement_group(spec, pool)})
    if uses_efa(spec, pool):
        out.append({"role": "efa-sg", "type": SECURITY_GROUP_TYPE, "inputs": render_efa_security_group(spec, pool)})
    return out


def _render_karpenter(spec: PlatformSpec, pool: NodePool) -> dict[str, Any]:
    return {
        "type": KARPENTER_NODE_POOL_TYPE,
        "provisioner": Provisioner.KARPENTER.value,
        "inputs": render_karpenter_node_pool(spec, pool),
        "resources": [
            {"role": "ec2nodeclass", "type": EC2_NODE_CLASS_TYPE, "inputs": render_ec2_node_class(spec, pool)},
            *_network_resources(spec, pool),
        ],
    }


def _render_aws(spec: PlatformSpec, pool: NodePool) -> dict[str, Any]:
    if pool.aws.provisioner == Provisioner.KARPENTER:
        return _render_karpenter(spec, pool)
    tags = autoscaler_tags(spec, pool)
    return {
        "type": NODE_GROUP_TYPE,
        "inputs": render_eks_node_group(spec, pool),
        "resources": [
            {"role": "lt", "type": LAUNCH_TEMPLATE_TYPE, "inputs": render_eks_launch_template(spec, pool)},
            # Node group tags do not reach its Auto Scaling group; the autoscaler reads the group's tags.
            {
                "role": "asg-tags",
                "type": ASG_TAG_TYPE,
                "inputs": [{"key": k, "value": v, "propagateAtLaunch": False} for k, v in tags.items()],
            },
            *_network_resources(spec, pool),
        ],
    }


def _render_gcp(spec: PlatformSpec, pool: NodePool) -> dict[str, Any]:
    return {"type": NODE_POOL_TYPE, "gpuStack": gpu_stack(spec).value, "inputs": render_gke_node_pool(spec, pool)}


def render_node_pool(spec: PlatformSpec, pool: NodePool) -> dict[str, Any]:
    """The provider resource type(s) and inputs of one pool, plus its capacity."""
    body = _render_aws(spec, pool) if spec.cloud == Cloud.AWS else _render_gcp(spec, pool)
    return {"name": pool.name, "cloud": spec.cloud.value, **body, "capacity": render_capacity(spec, pool)}


def _karpenter_artifact(spec: PlatformSpec) -> list[Artifact]:
    """`DIR/kubernetes/karpenter.yaml`: the Karpenter pools' EC2NodeClasses and NodePools, ready to apply."""
    pools = [p for p in spec.node_pools if spec.cloud == Cloud.AWS and p.aws.provisioner == Provisioner.KARPENTER]
    docs = [d for p in pools for d in (render_ec2_node_class(spec, p), render_karpenter_node_pool(spec, p))]
    return [Artifact(ArtifactKind.KUBERNETES, "karpenter", tuple(docs))] if docs else []


def render_nodepool_artifacts(spec: PlatformSpec) -> list[Artifact]:
    """One `DIR/nodepools/<pool>.yaml` per pool, plus `addons/eks-node-monitoring-agent.yaml` on EKS (in a
    subdirectory, so `nodepools/*.yaml` stays one file per pool), the Karpenter objects again as Kubernetes
    documents, and the pools' cluster-wide add-ons (autoscaler, EFA plugin, GKE driver)."""
    out = [Artifact(ArtifactKind.NODEPOOLS, p.name, (render_node_pool(spec, p),)) for p in spec.node_pools]
    addon = render_node_monitoring_addon(spec)
    if addon:
        note = Finding(
            "nodepools",
            "eks-node-monitoring-agent add-on: hardware XIDs set AcceleratedHardwareReady=False, "
            "node auto repair reboots or replaces the node",
            Severity.INFO,
        )
        out.append(
            Artifact(
                ArtifactKind.NODEPOOLS,
                f"addons/{NODE_MONITORING_ADDON}",
                ({"type": ADDON_TYPE, "inputs": addon},),
                (note,),
            )
        )
    return out + _karpenter_artifact(spec) + render_node_addon_artifacts(spec)
