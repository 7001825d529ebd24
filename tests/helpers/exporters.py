"""Input series for promtool, with exactly the label sets the pinned exporters emit as Prometheus stores them.

One place for every label set the rules read, each with its upstream source, so that a renamed label upstream
(or a typo in a rule) fails a test instead of silently returning nothing. `LABEL_SETS` lists the label names
per metric for the test that every label a rule names exists here.

Sources (re-check them when a pin moves):
- dcgm-exporter 4.6.0-4.8.3 (GPU Operator v26.7.0 `deployments/gpu-operator/values.yaml` dcgmExporter.version),
  code at NVIDIA/dcgm-exporter d5e5f51 ("Rename Hostname label to hostname (#655)"):
  `internal/pkg/rendermetrics/render_metrics.go` gpuMetricsFormat writes gpu, UUID, pci_bus_id, device,
  modelName, GPU_I_PROFILE and GPU_I_ID (MIG instances only) and hostname, then the label fields of the CSV
  (DCGM_FI_DRIVER_VERSION) and the attributes; `internal/pkg/transformation/kubernetes.go` adds namespace, pod,
  container of the pod holding the device and, with enablePodLabels, its allow-listed pod labels with every
  character outside [a-zA-Z0-9_] replaced by `_` (`internal/pkg/utils/utils.go` SanitizeLabelName);
  `internal/pkg/collector/gpu_collector.go` adds err_code and err_msg to DCGM_FI_DEV_XID_ERRORS;
  `internal/pkg/collector/xid_collector.go` + `expcollector.go` give DCGM_EXP_XID_ERRORS_COUNT xid and
  window_size_in_ms.
- The GPU Operator's ServiceMonitor (NVIDIA/gpu-operator v26.7.0 `assets/state-dcgm-exporter/0500_service_monitor.yaml`:
  port gpu-metrics, jobLabel app; the Service is `nvidia-dcgm-exporter`), scraped by Prometheus Operator,
  which adds the target labels job, instance, namespace, service, pod, container and endpoint
  (prometheus-operator `pkg/prometheus/promcfg.go`); the platform sets honorLabels (gpu_operator/values.py),
  so the exporter's namespace/pod/container win and a GPU no pod holds keeps the exporter pod's own.
- kube-state-metrics v2.x (chart 8.4.0 of kube-prometheus-stack 88.5.3), `docs/metrics/workload/pod-metrics.md`
  and `docs/metrics/cluster/node-metrics.md` at kubernetes/kube-state-metrics v2.19.0; scraped with
  honorLabels: true (kube-prometheus-stack values `kube-state-metrics.prometheus.monitor.http.honorLabels`),
  so node series carry kube-state-metrics' own namespace/pod as target labels.
- Kueue v0.19.2 `pkg/metrics/metrics.go`: kueue_pending_workloads{cluster_queue, status, replica_role}; the
  chart's ServiceMonitor (`charts/kueue/templates/prometheus/monitor.yaml`, no honorLabels) adds target labels.
- gpu_app_queue_depth is the application's own gauge (docs/observability.md), scraped by the user's
  PodMonitor: target labels only.
"""

from __future__ import annotations

import re
from typing import Any

from gpu_platform.contract import tier_label_key
from gpu_platform.observability.names import pool_label, tier_label

MODEL = "NVIDIA A100-SXM4-80GB"
DRIVER = "580.95.05"

# Target labels Prometheus Operator adds to every sample of the GPU Operator's DCGM ServiceMonitor.
_DCGM_TARGET = {"job": "nvidia-dcgm-exporter", "service": "nvidia-dcgm-exporter", "endpoint": "gpu-metrics"}
_DCGM_EXPORTER_POD = {"namespace": "gpu-operator", "container": "nvidia-dcgm-exporter"}
_KSM_TARGET = {
    "job": "kube-state-metrics",
    "service": "kube-prometheus-stack-kube-state-metrics",
    "endpoint": "http",
    "instance": "10.0.0.9:8080",
}
_KSM_POD = {
    "namespace": "monitoring",
    "pod": "kube-prometheus-stack-kube-state-metrics-6d9f7c5b8-xk2lq",
    "container": "kube-state-metrics",
}
_KUEUE_SERVICE = "kueue-controller-manager-metrics-service"
_KUEUE_TARGET = {
    "job": _KUEUE_SERVICE,
    "service": _KUEUE_SERVICE,
    "endpoint": "https",
    "instance": "10.0.0.7:8443",
    "namespace": "kueue-system",
    "pod": "kueue-controller-manager-5c7d8b9f4-abcde",
    "container": "manager",
}


def series(name: str, labels: dict[str, str], values: str) -> dict[str, str]:
    """One promtool input series."""
    body = ",".join(f'{k}="{v}"' for k, v in labels.items())
    return {"series": f"{name}{{{body}}}", "values": values}


def _node_index(node: str) -> int:
    return sum(map(ord, node)) % 200


def dcgm_labels(
    spec: Any,
    node: str,
    gpu: int,
    *,
    pod: tuple[str, str] | None = None,
    tier: str | None = None,
    mig: tuple[str, int] | None = None,
    container: str = "main",
) -> dict[str, str]:
    """Labels of one DCGM GPU (or MIG instance) series as stored after the scrape.

    `pod` is (namespace, pod) of the workload holding the device; without it the series keeps the exporter
    pod's target labels. `tier` is that pod's tier label (exported because enablePodLabels allow-lists it).
    """
    labels = {
        "gpu": str(gpu),
        "UUID": f"GPU-{_node_index(node):03d}-{gpu}",
        "pci_bus_id": f"00000000:{16 + gpu:02X}:00.0",
        "device": f"nvidia{gpu}",
        "modelName": MODEL,
    }
    if mig:
        labels |= {"GPU_I_PROFILE": mig[0], "GPU_I_ID": str(mig[1])}
    labels |= {"hostname": node, "DCGM_FI_DRIVER_VERSION": DRIVER}
    labels |= {**_DCGM_TARGET, "instance": f"10.0.{_node_index(node)}.5:9400"}
    if pod:
        labels |= {"namespace": pod[0], "pod": pod[1], "container": container}
        if tier:
            labels[re.sub(r"[^a-zA-Z0-9_]", "_", tier_label_key(spec.label_domain))] = tier
    else:
        labels |= {**_DCGM_EXPORTER_POD, "pod": f"nvidia-dcgm-exporter-{_node_index(node):05x}"}
    return labels


def xid_labels(spec: Any, node: str, gpu: int, xid: int | None, **kw: Any) -> dict[str, str]:
    """DCGM_EXP_XID_ERRORS_COUNT labels: one series per XID seen in the window, none (no `xid`) when quiet."""
    labels = dcgm_labels(spec, node, gpu, **kw)
    labels["window_size_in_ms"] = "300000"
    if xid is not None:
        labels["xid"] = str(xid)
    return labels


def ksm_pod(
    spec: Any, ns: str, pod: str, node: str, tier: str | None, phase: str = "Running", n: int = 200
) -> list[dict[str, str]]:
    """kube_pod_status_phase (all five phases, as kube-state-metrics emits them), kube_pod_labels, kube_pod_info."""
    uid = f"uid-{pod}"
    base = {"namespace": ns, "pod": pod, "uid": uid, **_KSM_TARGET, "container": "kube-state-metrics"}
    out = [
        series("kube_pod_status_phase", {**base, "phase": p}, f"{int(p == phase)}x{n}")
        for p in ("Pending", "Running", "Succeeded", "Failed", "Unknown")
    ]
    tl = {tier_label(spec.label_domain): tier} if tier else {}
    out.append(series("kube_pod_labels", {**base, **tl}, f"1x{n}"))
    info = {
        **base,
        "host_ip": "10.0.1.10",
        "pod_ip": "10.1.0.4",
        "node": node,
        "created_by_kind": "ReplicaSet",
        "created_by_name": f"{pod}-rs",
        "priority_class": "",
        "host_network": "false",
    }
    out.append(series("kube_pod_info", info, f"1x{n}"))
    return out


def ksm_requests(
    ns: str, pod: str, node: str, resource: str, units: float, container: str = "main", n: int = 200
) -> dict[str, str]:
    """kube_pod_container_resource_requests for one container and resource."""
    labels = {
        "namespace": ns,
        "pod": pod,
        "uid": f"uid-{pod}",
        "container": container,
        "node": node,
        "resource": resource,
        "unit": "integer",
        **_KSM_TARGET,
    }
    labels["container"] = container  # the metric's own label wins over the target's (honorLabels)
    return series("kube_pod_container_resource_requests", labels, f"{units!r}x{n}")


def ksm_node(spec: Any, node: str, pool: str | None, n: int = 200, **labels: str) -> dict[str, str]:
    """kube_node_labels of one node: the allow-listed node labels plus kube-state-metrics' target labels."""
    pl = {pool_label(spec.label_domain): pool} if pool else {}
    return series("kube_node_labels", {"node": node, **pl, **labels, **_KSM_TARGET, **_KSM_POD}, f"1x{n}")


def ksm_allocatable(node: str, resource: str, units: float, n: int = 200) -> dict[str, str]:
    """kube_node_status_allocatable of one node and resource."""
    labels = {"node": node, "resource": resource, "unit": "integer", **_KSM_TARGET, **_KSM_POD}
    return series("kube_node_status_allocatable", labels, f"{units!r}x{n}")


def ksm_unschedulable(node: str, values: str) -> dict[str, str]:
    """kube_node_spec_unschedulable of one node (1 once cordoned)."""
    return series("kube_node_spec_unschedulable", {"node": node, **_KSM_TARGET, **_KSM_POD}, values)


def ksm_condition(node: str, condition: str, values_true: str, n: int) -> list[dict[str, str]]:
    """kube_node_status_condition of one node and condition: one series per status (true, false, unknown), as
    kube-state-metrics emits them; `values_true` is the `status="true"` series (1 while the condition holds)."""

    def flip(values: str) -> str:
        return " ".join(f"{1 - int(v.split('x')[0])}x{v.split('x')[1]}" if "x" in v else v for v in values.split())

    base = {"node": node, "condition": condition, **_KSM_TARGET, **_KSM_POD}
    return [
        series("kube_node_status_condition", {**base, "status": "true"}, values_true),
        series("kube_node_status_condition", {**base, "status": "false"}, flip(values_true)),
        series("kube_node_status_condition", {**base, "status": "unknown"}, f"0x{n}"),
    ]


def kueue_pending(cluster_queue: str, status: str, values: str, role: str = "leader") -> dict[str, str]:
    """kueue_pending_workloads of one ClusterQueue and status."""
    labels = {"cluster_queue": cluster_queue, "status": status, "replica_role": role, **_KUEUE_TARGET}
    return series("kueue_pending_workloads", labels, values)


def app_queue_depth(ns: str, pod: str, values: str) -> dict[str, str]:
    """The application's gpu_app_queue_depth, scraped through a PodMonitor (target labels only)."""
    labels = {
        "namespace": ns,
        "pod": pod,
        "container": "app",
        "job": f"{ns}/inference",
        "endpoint": "metrics",
        "instance": "10.1.0.4:8000",
    }
    return series("gpu_app_queue_depth", labels, values)


def label_sets(spec: Any) -> dict[str, frozenset[str]]:
    """Label names of every metric above, from the builders themselves (the fixture is the source of truth)."""
    gpu = set(dcgm_labels(spec, "n", 0, mig=("3g.40gb", 1))) | set(dcgm_labels(spec, "n", 0, pod=("a", "b"), tier="t"))
    pods = {s["series"].split("{")[0]: _names(s) for s in ksm_pod(spec, "a", "b", "n", "t")}
    return {
        "DCGM_FI_PROF_SM_ACTIVE": frozenset(gpu),
        "DCGM_FI_DEV_FB_USED": frozenset(gpu),
        "DCGM_FI_DEV_FB_FREE": frozenset(gpu),
        "DCGM_FI_DEV_FB_RESERVED": frozenset(gpu),
        "DCGM_FI_DEV_GPU_TEMP": frozenset(gpu),
        "DCGM_FI_DEV_XID_ERRORS": frozenset(gpu | {"err_code", "err_msg"}),
        "DCGM_EXP_XID_ERRORS_COUNT": frozenset(gpu | {"xid", "window_size_in_ms"}),
        **pods,
        "kube_pod_container_resource_requests": _names(ksm_requests("a", "b", "n", "r", 1)),
        "kube_node_labels": _names(ksm_node(spec, "n", "p", **{"label_nvidia_com_mig_config_state": "x"})),
        "kube_node_status_allocatable": _names(ksm_allocatable("n", "r", 1)),
        "kube_node_spec_unschedulable": _names(ksm_unschedulable("n", "0")),
        "kube_node_status_condition": _names(ksm_condition("n", "Ready", "1x1", 1)[0]),
        "kueue_pending_workloads": _names(kueue_pending("q", "active", "1")),
        "gpu_app_queue_depth": _names(app_queue_depth("a", "b", "1")),
    }


def _names(s: dict[str, str]) -> frozenset[str]:
    return frozenset(re.findall(r'([a-zA-Z_][a-zA-Z0-9_]*)="', s["series"].split("{", 1)[1]))
