"""How a GPU with a hardware XID leaves service on EKS: the node monitoring agent add-on next to node auto repair.

EKS node auto repair (`nodeRepairConfig`, on by default for every pool) acts on node conditions; the condition
for GPUs, AcceleratedHardwareReady, is set by the EKS node monitoring agent. The agent reads XIDs through DCGM
(aws/eks-node-monitoring-agent v1.7.0 `monitors/nvidia/dcgm/dcgm_policies.go`: XIDs in WellKnownXidCodes set
the condition with reason NvidiaXID<code>Error, others only raise an event); node repair then reboots or
replaces the node after 10 min (EKS user guide "Automatically repair nodes"). Without the agent the
condition never changes and repair never starts for a GPU fault.

The agent's `dcgm-server` DaemonSet (nv-hostengine on hostPort 5555, which the agent queries) has no
tolerations by default (chart `charts/eks-node-monitoring-agent/values.yaml` dcgmAgent.tolerations: []),
so on the platform's tainted GPU pools it would never run: the add-on gets the pools' taint tolerations.
"""

from __future__ import annotations

import json
from typing import Any

from ..contract import pool_taints
from ..spec import Cloud, PlatformSpec

__all__ = ["ADDON_TYPE", "NODE_MONITORING_ADDON", "render_node_monitoring_addon"]

ADDON_TYPE = "aws:eks/addon:Addon"
NODE_MONITORING_ADDON = "eks-node-monitoring-agent"


def node_taint_tolerations(spec: PlatformSpec) -> list[dict[str, str]]:
    """One `Exists` toleration per (taint key, effect) of the GPU pools."""
    seen: dict[tuple[str, str], dict[str, str]] = {}
    for pool in spec.node_pools:
        for t in pool_taints(spec, pool):
            seen.setdefault((t["key"], t["effect"]), {"key": t["key"], "operator": "Exists", "effect": t["effect"]})
    return list(seen.values())


def render_node_monitoring_addon(spec: PlatformSpec) -> dict[str, Any] | None:
    """`aws.eks.Addon` inputs for the agent, or None (GKE, agent disabled, or no pool with node repair)."""
    if spec.cloud != Cloud.AWS or spec.aws is None or not spec.aws.node_monitoring_agent:
        return None
    if not any(p.aws.node_repair for p in spec.node_pools):
        return None
    config = {"dcgmAgent": {"tolerations": node_taint_tolerations(spec)}}
    out: dict[str, Any] = {
        "clusterName": spec.cluster_name,
        "addonName": NODE_MONITORING_ADDON,
        "configurationValues": json.dumps(config, sort_keys=True),
        "resolveConflictsOnCreate": "OVERWRITE",
        "resolveConflictsOnUpdate": "OVERWRITE",
    }
    if spec.aws.node_monitoring_agent_version:
        out["addonVersion"] = spec.aws.node_monitoring_agent_version
    return out
