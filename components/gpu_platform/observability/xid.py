"""XID alerts: hardware XIDs page and lead to node repair, application XIDs tell the pod's team.

They read the exporter's windowed per-XID count (`gpu_platform.dcgm.XID_COUNT`), not DCGM_FI_DEV_XID_ERRORS,
which holds the last XID until the exporter restarts; the hardware codes come from `catalog.xid`.
"""

from __future__ import annotations

from typing import Any

from ..catalog.xid import hardware_xid_regex
from ..dcgm import XID_COUNT
from ..spec import Cloud, PlatformSpec
from .alert_format import GPU, POD, alert
from .names import DCGM_NODE_LABEL

__all__ = ["xid_alerts"]


def out_of_service_expr() -> str:
    """Nodes out of service at an instant, by node: cordoned, or not Ready (rebooting, replaced).

    kube-state-metrics v2 `kube_node_spec_unschedulable{node}` and `kube_node_status_condition{node, condition,
    status}` (docs/metrics/cluster/node-metrics.md); `max by (node)` drops its own target labels (honorLabels).
    EKS node auto repair cordons and drains before it reboots or replaces a node; a reboot also takes the node
    NotReady; the node keeps its name after a reboot.
    """
    return (
        "max by (node) (kube_node_spec_unschedulable) == 1"
        ' or max by (node) (kube_node_status_condition{condition="Ready",status="true"}) == 0'
    )


def xid_exprs(spec: PlatformSpec) -> dict[str, str]:
    """PromQL of the three XID alerts, from the exporter's windowed per-XID count (see `gpu_platform.dcgm`).

    `max_over_time` over the window keeps an alert firing for the window after the last occurrence, then lets
    it clear; the hardware regex comes from the spec (default: `catalog.xid.HARDWARE_XIDS`).

    Not remediated: the last time a hardware XID was counted on the node is later than the last time the node
    was out of service (both over the hardware window, 1-minute subquery steps), and the node schedules pods
    now. A node that repair cordoned, rebooted or replaced after the XID therefore stays quiet once it is back,
    while the XID is still inside the window; a new XID after its return arms the alert again.
    """
    th = spec.monitoring.thresholds
    hw = hardware_xid_regex(th.xid_hardware_codes)
    node = DCGM_NODE_LABEL
    window = th.xid_hardware_window
    hw_seen = f'max_over_time({XID_COUNT}{{xid=~"{hw}"}}[{window}])'
    app_seen = f'max_over_time({XID_COUNT}{{xid!~"{hw}",xid!=""}}[{th.xid_application_window}])'
    hw_last = (
        f'max by (node) (label_replace(max_over_time(timestamp({XID_COUNT}{{xid=~"{hw}"}} > 0)[{window}:1m]),'
        f' "node", "$1", "{node}", "(.+)"))'
    )
    out_last = f"max by (node) (max_over_time(timestamp({out_of_service_expr()})[{window}:1m]))"
    schedulable = "max by (node) (kube_node_spec_unschedulable) == 0"
    return {
        "hardware": f"max by ({node}, gpu, UUID, modelName, xid) ({hw_seen}) > 0",
        "application": f"max by ({node}, gpu, UUID, namespace, pod, xid) ({app_seen}) > 0",
        "not_remediated": f"{hw_last} > on (node) ({out_last} or on (node) {hw_last} * 0)"
        f" and on (node) ({schedulable})",
    }


def _repair_path(spec: PlatformSpec) -> str:
    if spec.cloud == Cloud.AWS:
        return (
            "EKS: the node monitoring agent sets AcceleratedHardwareReady=False and node auto repair reboots "
            "or replaces the node after 10 min."
        )
    # GKE repairs nodes that are NotReady, silent or out of boot disk (GKE docs "Node auto-repair"), not XIDs.
    return (
        "GKE: auto repair does not act on XIDs: cordon and drain the node (kubectl drain --ignore-daemonsets "
        "--delete-emptydir-data), then delete its VM (gcloud compute instances delete); the node pool's "
        "managed instance group recreates it."
    )


def xid_alerts(spec: PlatformSpec) -> list[dict[str, Any]]:
    """Hardware (critical), application (warning) and not-remediated (critical) XID alerts."""
    th, exprs = spec.monitoring.thresholds, xid_exprs(spec)
    return [
        alert(
            "GpuXidHardwareError",
            exprs["hardware"],
            "0m",
            "critical",
            f"Hardware XID {{{{ $labels.xid }}}} on {GPU}",
            f"XID {{{{ $labels.xid }}}} (a hardware fault in NVIDIA's XID catalog) was reported in the last "
            f"{th.xid_hardware_window}; the GPU must leave service.",
            f"{_repair_path(spec)} Work on the node will fail or hang: requeue it once the node is gone.",
        ),
        alert(
            "GpuXidApplicationError",
            exprs["application"],
            "0m",
            "warning",
            f"Application XID {{{{ $labels.xid }}}} on {GPU}",
            f"XID {{{{ $labels.xid }}}} hit pod {POD} in the last {th.xid_application_window}.",
            "Usually the application: a bad memory access (31), an exception (13) or a killed context "
            "(43, 45). Tell the owning team; the node stays in service.",
        ),
        alert(
            "GpuXidHardwareNotRemediated",
            exprs["not_remediated"],
            th.xid_remediation_for,
            "critical",
            "Node {{ $labels.node }} still schedules pods after a hardware XID",
            f"A hardware XID was reported on the node {th.xid_remediation_for} or more ago and the node has "
            "not been cordoned or gone NotReady since: node repair has not taken it out of service.",
            f"Cordon and drain the node by hand. {_repair_path(spec)} Check that repair is enabled for the pool.",
        ),
    ]
