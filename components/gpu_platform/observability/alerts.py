"""The platform's alerts, each with a summary, a description and a runbook hint; thresholds from the spec."""

from __future__ import annotations

from typing import Any

from ..catalog.xid import hardware_xid_regex
from ..dcgm import XID_COUNT
from ..spec import Cloud, PlatformSpec, SharingMode
from .names import APP_QUEUE_DEPTH, DCGM_NODE_LABEL, MIG_CONFIG_STATE_LABEL, ksm_label, pool_label

__all__ = ["ALERTS", "alert_rules", "fb_used_ratio", "stranded_expr", "time_sliced_pools", "xid_exprs"]

ALERTS = (
    "GpuStrandedCapacity",
    "GpuXidHardwareError",
    "GpuXidApplicationError",
    "GpuXidHardwareNotRemediated",
    "GpuFramebufferMemoryHigh",
    "GpuTemperatureHigh",
    "GpuMigConfigFailed",
    "GpuMigConfigPending",
    "GpuPoolCapacityShortfall",
    "KueuePendingWorkloadsBacklog",
    "GpuTimeSlicedPodStarved",
)

# Every Kueue replica exports the gauge, labelled by its leader-election role (kubernetes-sigs/kueue v0.19.2
# pkg/metrics/metrics.go: replica_role leader | follower | standalone); counting followers double-counts.
KUEUE_PENDING = 'kueue_pending_workloads{replica_role!="follower"}'
_GPU = "{{ $labels." + DCGM_NODE_LABEL + " }} GPU {{ $labels.gpu }}"
_POD = "{{ $labels.namespace }}/{{ $labels.pod }}"


def _num(x: float) -> str:
    return f"{x:g}"


def _alert(name: str, expr: str, for_: str, severity: str, summary: str, description: str, runbook: str,
           ) -> dict[str, Any]:
    return {
        "alert": name,
        "expr": expr,
        "for": for_,
        "labels": {"severity": severity, "platform": "gpu-platform"},
        "annotations": {"summary": summary, "description": description, "runbook": runbook},
    }


def stranded_expr(spec: PlatformSpec) -> str:
    """GPUs (or MIG instances) held by a pod that requests GPU resources, yet idle under the SM-active threshold.

    The join matters: Prometheus Operator gives every scraped series the exporter's own `namespace` and `pod`
    target labels, so an unallocated GPU's series carries `pod="nvidia-dcgm-exporter-..."`, never `pod=""`.
    """
    gpu_pods = 'kube_pod_container_resource_requests{resource=~"nvidia_com_.+"} > 0'
    return (f"gpu:sm_active:avg1h < {_num(spec.monitoring.thresholds.stranded_sm_active)}"
            f" and on (namespace, pod) ({gpu_pods})")


def time_sliced_pools(spec: PlatformSpec) -> list[str]:
    """Pools whose pods share GPU time without the scheduler seeing it (time-slicing, time-sliced MIG slices)."""
    return [p.name for p in spec.node_pools
            if p.sharing.mode == SharingMode.TIME_SLICING
            or (p.sharing.mode == SharingMode.MIG and (p.sharing.replicas or 1) > 1)]


def fb_used_ratio() -> str:
    """Share of the framebuffer that is not free: the driver's reserve counts as taken.

    DCGM splits the framebuffer into FB_USED + FB_FREE + FB_RESERVED (= FB_TOTAL; the reserve is memory the
    driver keeps and no CUDA allocation can get). Leaving FB_RESERVED out of the total overstates how much
    room a workload has left.
    """
    total = "(DCGM_FI_DEV_FB_USED + DCGM_FI_DEV_FB_FREE + DCGM_FI_DEV_FB_RESERVED)"
    return f"(1 - DCGM_FI_DEV_FB_FREE / {total})"


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


def _xid_alerts(spec: PlatformSpec) -> list[dict[str, Any]]:
    th, exprs = spec.monitoring.thresholds, xid_exprs(spec)
    return [
        _alert("GpuXidHardwareError", exprs["hardware"], "0m", "critical", f"Hardware XID {{{{ $labels.xid }}}} on {_GPU}",
               f"XID {{{{ $labels.xid }}}} (a hardware fault in NVIDIA's XID catalog) was reported in the last "
               f"{th.xid_hardware_window}; the GPU must leave service.",
               f"{_repair_path(spec)} Work on the node will fail or hang: requeue it once the node is gone."),
        _alert("GpuXidApplicationError", exprs["application"], "0m", "warning",
               f"Application XID {{{{ $labels.xid }}}} on {_GPU}",
               f"XID {{{{ $labels.xid }}}} hit pod {_POD} in the last {th.xid_application_window}.",
               "Usually the application: a bad memory access (31), an exception (13) or a killed context "
               "(43, 45). Tell the owning team; the node stays in service."),
        _alert("GpuXidHardwareNotRemediated", exprs["not_remediated"], th.xid_remediation_for, "critical",
               "Node {{ $labels.node }} still schedules pods after a hardware XID",
               f"A hardware XID was reported on the node, which has stayed schedulable for "
               f"{th.xid_remediation_for}: node repair has not taken it out of service.",
               f"Cordon and drain the node by hand. {_repair_path(spec)} Check that repair is enabled for the pool."),
    ]


def _device_alerts(spec: PlatformSpec) -> list[dict[str, Any]]:
    th = spec.monitoring.thresholds
    fb = f"{fb_used_ratio()} * 100"
    return [
        _alert("GpuStrandedCapacity", stranded_expr(spec), th.stranded_for, "warning", f"Allocated GPU idle: {_POD} on {_GPU}",
               f"SM active averaged {{{{ $value | humanizePercentage }}}} over 1 h, under "
               f"{_num(th.stranded_sm_active * 100)} % for {th.stranded_for}, while the pod holds the GPU.",
               "Ask the owning team to release or right-size it: move it to a MIG slice or a time-sliced tier, "
               "or scale the workload down; the cost report shows what the tier costs per unit."),
        *_xid_alerts(spec),
        _alert("GpuFramebufferMemoryHigh", f"{fb} > {_num(th.fb_memory_percent)}", th.fb_memory_for, "warning",
               f"GPU memory almost full on {_GPU}",
               "{{ $value | humanize }} % of the framebuffer (used plus the driver's reserve) is taken (pod "
               + _POD + ").",
               "Expect out-of-memory failures: lower the batch size, move the workload to a larger MIG slice "
               "or a whole GPU, or check for a leak."),
        _alert("GpuTemperatureHigh", f"DCGM_FI_DEV_GPU_TEMP > {_num(th.temperature_celsius)}",
               th.temperature_for, "warning", f"GPU hot on {_GPU}",
               "GPU temperature is {{ $value }} C; the GPU will throttle its clocks.",
               "Check the node's cooling and power with the cloud provider; drain the node if it persists."),
    ]


def _node_state(spec: PlatformSpec, value: str) -> str:
    """Nodes whose MIG config state is `value`, by node and pool only.

    kube-state-metrics is scraped with honorLabels, so node series also carry its own pod and namespace as
    target labels; keeping them would route a node alert to the monitoring namespace.
    """
    state, pl = ksm_label(MIG_CONFIG_STATE_LABEL), pool_label(spec.label_domain)
    return f'max by (node, {pl}, {state}) (kube_node_labels{{{state}="{value}"}}) == 1'


def _mig_alerts(spec: PlatformSpec) -> list[dict[str, Any]]:
    if not any(p.sharing.mode == SharingMode.MIG for p in spec.node_pools):
        return []
    th = spec.monitoring.thresholds
    pl = pool_label(spec.label_domain)
    where = "Node {{ $labels.node }} (pool {{ $labels." + pl + " }})"
    return [
        _alert("GpuMigConfigFailed", _node_state(spec, "failed"), th.mig_failed_for, "critical",
               f"{where}: MIG reconfiguration failed",
               "mig-manager set nvidia.com/mig.config.state=failed; the node advertises no MIG slices.",
               "Read the nvidia-mig-manager logs on the node; GPUs busy with processes block reconfiguration: "
               "drain the node and relabel nvidia.com/mig.config to retry."),
        _alert("GpuMigConfigPending", _node_state(spec, "pending"), th.mig_pending_for, "warning",
               f"{where}: MIG reconfiguration stuck pending",
               f"nvidia.com/mig.config.state has been pending for more than {th.mig_pending_for}.",
               "Check that the mig-manager pod runs on the node and that no GPU pod still holds a GPU."),
    ]


def _capacity_alerts(spec: PlatformSpec) -> list[dict[str, Any]]:
    th = spec.monitoring.thresholds
    expected, have = "pool_resource:gpu_units_expected:sum", "pool_resource:gpu_units_allocatable:sum"
    rules = [_alert(
        "GpuPoolCapacityShortfall", f"{expected} > ({have} or {expected} * 0)", th.capacity_mismatch_for,
        "warning", "Pool {{ $labels.pool }} advertises fewer {{ $labels.resource }} than its sharing config",
        "The pool's nodes should advertise {{ $value }} units of {{ $labels.resource }} but report fewer.",
        "Check the device-plugin config label and the GPU Operator's device-plugin and mig-manager pods on the "
        "pool's nodes; a node may still be reconfiguring, or its GPUs may have fallen off the bus.")]
    if spec.scheduling.kueue.enabled:
        rules.append(_alert(
            "KueuePendingWorkloadsBacklog",
            f"sum by (cluster_queue) ({KUEUE_PENDING}) > {th.pending_workloads}", th.pending_for,
            "warning", "ClusterQueue {{ $labels.cluster_queue }} has a backlog",
            "{{ $value }} workloads have waited in the queue for more than " + th.pending_for + ".",
            "Compare the queue's quota with its demand: raise the team's quota or borrowing limit, or scale "
            "the pool's maxSize; `gpu-platform cost` shows what the extra capacity costs."))
    return rules


def _starved_alerts(spec: PlatformSpec) -> list[dict[str, Any]]:
    pools = time_sliced_pools(spec)
    if not pools:
        return []
    th, pl = spec.monitoring.thresholds, pool_label(spec.label_domain)
    on_pool = f'kube_pod_info * on (node) group_left () kube_node_labels{{{pl}=~"{"|".join(pools)}"}}'
    expr = (f"max by (namespace, pod) ({APP_QUEUE_DEPTH}) > {_num(th.starved_queue_depth)}"
            ' and on (namespace, pod) (kube_pod_status_phase{phase="Running"} == 1)'
            f" and on (namespace, pod) ({on_pool})")
    return [_alert(
        "GpuTimeSlicedPodStarved", expr, th.starved_for, "warning",
        f"{_POD} is Running but starved on a time-sliced GPU",
        f"Its {APP_QUEUE_DEPTH} is {{{{ $value }}}}: time-slicing hides the GPU's queue from the scheduler.",
        "Move the workload to a MIG or exclusive tier, or lower the pool's time-slicing replicas.")]


def alert_rules(spec: PlatformSpec) -> list[dict[str, Any]]:
    """Every alert that applies to the spec (MIG, Kueue and time-slicing alerts only when those are used)."""
    return [*_device_alerts(spec), *_mig_alerts(spec), *_capacity_alerts(spec), *_starved_alerts(spec)]
