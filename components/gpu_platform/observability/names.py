"""Metric and label names the rules, the dashboard and the tests agree on.

Label sanitising follows kube-state-metrics: a Kubernetes label `gpu.example.com/gpu-pool` becomes the
Prometheus label `label_gpu_example_com_gpu_pool` on `kube_node_labels` / `kube_pod_labels`, and a resource
`nvidia.com/mig-3g.40gb` becomes `resource="nvidia_com_mig_3g_40gb"` on the resource metrics.
"""

from __future__ import annotations

import re

from ..contract import MIG_CONFIG_STATE_LABEL, pool_label_key, tier_label_key
from ..dcgm import DCGM_METRICS

__all__ = [
    "APP_QUEUE_DEPTH",
    "DCGM_NODE_LABEL",
    "KNOWN_METRICS",
    "MIG_CONFIG_STATE_LABEL",
    "ksm_label",
    "ksm_resource",
    "pool_label",
    "tier_label",
]

# The node a DCGM series comes from. dcgm-exporter 4.6.0-4.8.3 (GPU Operator v26.7.0) writes it as `hostname`
# (NVIDIA/dcgm-exporter d5e5f51 "Rename Hostname label to hostname (#655)",
# internal/pkg/rendermetrics/render_metrics.go); the operator's DaemonSet sets it from NODE_NAME = spec.nodeName
# (NVIDIA/gpu-operator v26.7.0 assets/state-dcgm-exporter/0800_daemonset.yaml), so it equals the node name.
DCGM_NODE_LABEL = "hostname"

# kube-state-metrics series the rules read (kube-state-metrics v2 names).
KSM_METRICS = frozenset(
    {
        "kube_pod_container_resource_requests",
        "kube_pod_labels",
        "kube_pod_info",
        "kube_pod_status_phase",
        "kube_node_labels",
        "kube_node_status_allocatable",
    }
)
KUEUE_METRICS = frozenset({"kueue_pending_workloads", "kueue_admitted_active_workloads"})
# Whether a node takes new pods (kube-state-metrics `kube_node_spec_unschedulable{node}`) and whether it is
# Ready (`kube_node_status_condition{node,condition,status}`): the remediation alert reads them to tell a node
# that repair took out of service (cordoned, rebooted, replaced) from one still scheduling pods.
KSM_NODE_HEALTH = frozenset({"kube_node_spec_unschedulable", "kube_node_status_condition"})
# Exported by the user's application on time-sliced pools (see docs/observability.md).
APP_QUEUE_DEPTH = "gpu_app_queue_depth"
KNOWN_METRICS = (
    frozenset({f for f, _, _ in DCGM_METRICS}) | KSM_METRICS | KSM_NODE_HEALTH | KUEUE_METRICS | {APP_QUEUE_DEPTH}
)


def ksm_label(key: str) -> str:
    """The Prometheus label kube-state-metrics gives a Kubernetes label key."""
    return "label_" + re.sub(r"[^a-zA-Z0-9_]", "_", key)


def ksm_resource(resource: str) -> str:
    """The `resource` label value kube-state-metrics gives an extended resource."""
    return re.sub(r"[^a-zA-Z0-9_]", "_", resource)


def pool_label(label_domain: str) -> str:
    """Prometheus label of a node's pool on kube_node_labels."""
    return ksm_label(pool_label_key(label_domain))


def tier_label(label_domain: str) -> str:
    """Prometheus label of a pod's tier on kube_pod_labels."""
    return ksm_label(tier_label_key(label_domain))
