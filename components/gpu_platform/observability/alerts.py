"""The platform's alerts, each with a summary, a description and a runbook hint; thresholds from the spec."""

from __future__ import annotations

from typing import Any

from ..contract import MIG_CONFIG_LABEL
from ..spec import PlatformSpec, SharingMode
from .alert_format import GPU as _GPU
from .alert_format import POD as _POD
from .alert_format import alert as _alert
from .checks import exact_number
from .names import APP_QUEUE_DEPTH, MIG_CONFIG_STATE_LABEL, ksm_label, pool_label
from .xid import xid_alerts

__all__ = ["ALERTS", "KUEUE_PENDING", "alert_rules", "stranded_expr", "time_sliced_pools"]

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


def _num(x: float) -> str:
    return exact_number(x)


def stranded_expr(spec: PlatformSpec) -> str:
    """GPUs (or MIG instances) held by a pod that requests GPU resources, yet idle under the SM-active threshold.

    The join matters: Prometheus Operator gives every scraped series the exporter's own `namespace` and `pod`
    target labels, so an unallocated GPU's series carries `pod="nvidia-dcgm-exporter-..."`, never `pod=""`.
    """
    gpu_pods = 'kube_pod_container_resource_requests{resource=~"nvidia_com_.+"} > 0'
    return (
        f"gpu:sm_active:avg1h < {_num(spec.monitoring.thresholds.stranded_sm_active)}"
        f" and on (namespace, pod) ({gpu_pods})"
    )


def time_sliced_pools(spec: PlatformSpec) -> list[str]:
    """Pools whose pods share GPU time without the scheduler seeing it (time-slicing, time-sliced MIG slices)."""
    return [
        p.name
        for p in spec.node_pools
        if p.sharing.mode == SharingMode.TIME_SLICING
        or (p.sharing.mode == SharingMode.MIG and (p.sharing.replicas or 1) > 1)
    ]


def fb_used_ratio() -> str:
    """Share of the framebuffer that is not free: the driver's reserve counts as taken.

    DCGM splits the framebuffer into FB_USED + FB_FREE + FB_RESERVED (= FB_TOTAL; the reserve is memory the
    driver keeps and no CUDA allocation can get). Leaving FB_RESERVED out of the total overstates how much
    room a workload has left.
    """
    total = "(DCGM_FI_DEV_FB_USED + DCGM_FI_DEV_FB_FREE + DCGM_FI_DEV_FB_RESERVED)"
    return f"(1 - DCGM_FI_DEV_FB_FREE / {total})"


def _device_alerts(spec: PlatformSpec) -> list[dict[str, Any]]:
    th = spec.monitoring.thresholds
    fb = f"{fb_used_ratio()} * 100"
    return [
        _alert(
            "GpuStrandedCapacity",
            stranded_expr(spec),
            th.stranded_for,
            "warning",
            f"Allocated GPU idle: {_POD} on {_GPU}",
            f"SM active averaged {{{{ $value | humanizePercentage }}}} over 1 h, under "
            f"{_num(th.stranded_sm_active * 100)} % for {th.stranded_for}, while the pod holds the GPU.",
            "Ask the owning team to release or right-size it: move it to a MIG slice or a time-sliced tier, "
            "or scale the workload down; the cost report shows what the tier costs per unit.",
        ),
        *xid_alerts(spec),
        _alert(
            "GpuFramebufferMemoryHigh",
            f"{fb} > {_num(th.fb_memory_percent)}",
            th.fb_memory_for,
            "warning",
            f"GPU memory almost full on {_GPU}",
            "{{ $value | humanize }} % of the framebuffer (used plus the driver's reserve) is taken (pod "
            + _POD
            + ").",
            "Expect out-of-memory failures: lower the batch size, move the workload to a larger MIG slice "
            "or a whole GPU, or check for a leak.",
        ),
        _alert(
            "GpuTemperatureHigh",
            f"DCGM_FI_DEV_GPU_TEMP > {_num(th.temperature_celsius)}",
            th.temperature_for,
            "warning",
            f"GPU hot on {_GPU}",
            "GPU temperature is {{ $value }} C; the GPU will throttle its clocks.",
            "Check the node's cooling and power with the cloud provider; drain the node if it persists.",
        ),
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
        _alert(
            "GpuMigConfigFailed",
            _node_state(spec, "failed"),
            th.mig_failed_for,
            "critical",
            f"{where}: MIG reconfiguration failed",
            f"mig-manager set {MIG_CONFIG_STATE_LABEL}=failed; the node advertises no MIG slices.",
            "Read the nvidia-mig-manager logs on the node; GPUs busy with processes block reconfiguration: "
            f"drain the node and relabel {MIG_CONFIG_LABEL} to retry.",
        ),
        _alert(
            "GpuMigConfigPending",
            _node_state(spec, "pending"),
            th.mig_pending_for,
            "warning",
            f"{where}: MIG reconfiguration stuck pending",
            f"{MIG_CONFIG_STATE_LABEL} has been pending for more than {th.mig_pending_for}.",
            "Check that the mig-manager pod runs on the node and that no GPU pod still holds a GPU.",
        ),
    ]


def _capacity_alerts(spec: PlatformSpec) -> list[dict[str, Any]]:
    th = spec.monitoring.thresholds
    expected, have = "pool_resource:gpu_units_expected:sum", "pool_resource:gpu_units_allocatable:sum"
    rules = [
        _alert(
            "GpuPoolCapacityShortfall",
            f"{expected} > ({have} or {expected} * 0)",
            th.capacity_mismatch_for,
            "warning",
            "Pool {{ $labels.pool }} advertises fewer {{ $labels.resource }} than its sharing config",
            "The pool's nodes should advertise {{ $value }} units of {{ $labels.resource }} but report fewer.",
            "Check the device-plugin config label and the GPU Operator's device-plugin and mig-manager pods on the "
            "pool's nodes; a node may still be reconfiguring, or its GPUs may have fallen off the bus.",
        )
    ]
    if spec.scheduling.kueue.enabled:
        rules.append(
            _alert(
                "KueuePendingWorkloadsBacklog",
                f"sum by (cluster_queue) ({KUEUE_PENDING}) > {th.pending_workloads}",
                th.pending_for,
                "warning",
                "ClusterQueue {{ $labels.cluster_queue }} has a backlog",
                "{{ $value }} workloads have waited in the queue for more than " + th.pending_for + ".",
                "Compare the queue's quota with its demand: raise the team's quota or borrowing limit, or scale "
                "the pool's maxSize; `gpu-platform cost` shows what the extra capacity costs.",
            )
        )
    return rules


def _starved_alerts(spec: PlatformSpec) -> list[dict[str, Any]]:
    pools = time_sliced_pools(spec)
    if not pools:
        return []
    th, pl = spec.monitoring.thresholds, pool_label(spec.label_domain)
    on_pool = f'kube_pod_info * on (node) group_left () kube_node_labels{{{pl}=~"{"|".join(pools)}"}}'
    expr = (
        f"max by (namespace, pod) ({APP_QUEUE_DEPTH}) > {_num(th.starved_queue_depth)}"
        ' and on (namespace, pod) (kube_pod_status_phase{phase="Running"} == 1)'
        f" and on (namespace, pod) ({on_pool})"
    )
    return [
        _alert(
            "GpuTimeSlicedPodStarved",
            expr,
            th.starved_for,
            "warning",
            f"{_POD} is Running but starved on a time-sliced GPU",
            f"Its {APP_QUEUE_DEPTH} is {{{{ $value }}}}: time-slicing hides the GPU's queue from the scheduler.",
            "Move the workload to a MIG or exclusive tier, or lower the pool's time-slicing replicas.",
        )
    ]


def alert_rules(spec: PlatformSpec) -> list[dict[str, Any]]:
    """Every alert that applies to the spec (MIG, Kueue and time-slicing alerts only when those are used)."""
    return [*_device_alerts(spec), *_mig_alerts(spec), *_capacity_alerts(spec), *_starved_alerts(spec)]
