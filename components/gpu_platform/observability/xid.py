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

__all__ = ["xid_alerts", "xid_exprs"]


def xid_exprs(spec: PlatformSpec) -> dict[str, str]:
    """PromQL of the three XID alerts, from the exporter's windowed per-XID count (see `gpu_platform.dcgm`).

    `max_over_time` over the window keeps an alert firing for the window after the last occurrence, then lets
    it clear; the hardware regex comes from the spec (default: `catalog.xid.HARDWARE_XIDS`).
    """
    th = spec.monitoring.thresholds
    hw = hardware_xid_regex(th.xid_hardware_codes)
    node = DCGM_NODE_LABEL
    hw_seen = f'max_over_time({XID_COUNT}{{xid=~"{hw}"}}[{th.xid_hardware_window}])'
    app_seen = f'max_over_time({XID_COUNT}{{xid!~"{hw}",xid!=""}}[{th.xid_application_window}])'
    on_node = f'label_replace({hw_seen}, "node", "$1", "{node}", "(.+)")'
    return {
        "hardware": f"max by ({node}, gpu, UUID, modelName, xid) ({hw_seen}) > 0",
        "application": f"max by ({node}, gpu, UUID, namespace, pod, xid) ({app_seen}) > 0",
        "not_remediated": f"max by (node) ({on_node}) > 0 and on (node) (kube_node_spec_unschedulable == 0)",
    }


def _repair_path(spec: PlatformSpec) -> str:
    if spec.cloud == Cloud.AWS:
        return ("EKS: the node monitoring agent sets AcceleratedHardwareReady=False and node auto repair reboots "
                "or replaces the node after 10 min.")
    # GKE repairs nodes that are NotReady, silent or out of boot disk (GKE docs "Node auto-repair"), not XIDs.
    return ("GKE: auto repair does not act on XIDs: cordon and drain the node (kubectl drain --ignore-daemonsets "
            "--delete-emptydir-data), then delete its VM (gcloud compute instances delete); the node pool's "
            "managed instance group recreates it.")


def xid_alerts(spec: PlatformSpec) -> list[dict[str, Any]]:
    """Hardware (critical), application (warning) and not-remediated (critical) XID alerts."""
    th, exprs = spec.monitoring.thresholds, xid_exprs(spec)
    return [
        alert("GpuXidHardwareError", exprs["hardware"], "0m", "critical",
              f"Hardware XID {{{{ $labels.xid }}}} on {GPU}",
              f"XID {{{{ $labels.xid }}}} (a hardware fault in NVIDIA's XID catalog) was reported in the last "
              f"{th.xid_hardware_window}; the GPU must leave service.",
              f"{_repair_path(spec)} Work on the node will fail or hang: requeue it once the node is gone."),
        alert("GpuXidApplicationError", exprs["application"], "0m", "warning",
              f"Application XID {{{{ $labels.xid }}}} on {GPU}",
              f"XID {{{{ $labels.xid }}}} hit pod {POD} in the last {th.xid_application_window}.",
              "Usually the application: a bad memory access (31), an exception (13) or a killed context "
              "(43, 45). Tell the owning team; the node stays in service."),
        alert("GpuXidHardwareNotRemediated", exprs["not_remediated"], th.xid_remediation_for, "critical",
              "Node {{ $labels.node }} still schedules pods after a hardware XID",
              f"A hardware XID was reported on the node, which has stayed schedulable for "
              f"{th.xid_remediation_for}: node repair has not taken it out of service.",
              f"Cordon and drain the node by hand. {_repair_path(spec)} Check that repair is enabled for the pool."),
    ]
