"""OpenCost (chart 2.5.17) with custom pricing from the catalog, wired to the platform's Prometheus.

OpenCost's custom provider has one GPU price for the whole cluster and counts one GPU per GPU node (upstream
`customprovider.go`: "TODO: support more than one gpu"); it prices `nvidia.com/gpu` requests only, so MIG
slices cost nothing and time-sliced replicas each cost a whole GPU. The platform's recording rules
(`namespace_tier:gpu_cost_hourly:sum`) price every tier unit instead; OpenCost stays the CPU/RAM/storage view.
"""

from __future__ import annotations

from typing import Any

from ..artifacts import deep_merge, helm_release
from ..spec import PlatformSpec
from .pricing import pool_price
from .rules import rule_metadata_labels

__all__ = [
    "CHART",
    "OPENCOST_DEFAULT_CPU_HOURLY",
    "OPENCOST_DEFAULT_RAM_HOURLY",
    "catalog_gpu_hourly",
    "render_opencost_release",
    "render_opencost_service_monitor",
    "render_opencost_values",
]

CHART = "opencost"
# OpenCost's own configs/default.json hourly prices (per vCPU-hour, per GiB-hour); facts.md section 6.
OPENCOST_DEFAULT_CPU_HOURLY = 0.031611
OPENCOST_DEFAULT_RAM_HOURLY = 0.004237
# The GPU Operator's feature discovery labels every GPU node with this.
GPU_NODE_LABEL = ("nvidia.com/gpu.present", "true")


def catalog_gpu_hourly(spec: PlatformSpec) -> float:
    """One $/GPU-hour for the cluster: the spec's override, else the pools' catalog price weighted by max GPUs."""
    if spec.monitoring.opencost.gpu_hourly_price is not None:
        return spec.monitoring.opencost.gpu_hourly_price
    prices = [pool_price(spec, p) for p in spec.node_pools]
    gpus = sum(p.capacity.gpus_max for p in prices)
    if not gpus:
        return 0.0
    return round(sum(p.gpu_hourly * p.capacity.gpus_max for p in prices) / gpus, 6)


def _prometheus(spec: PlatformSpec) -> dict[str, Any]:
    prom = spec.monitoring.prometheus
    if prom.url:
        return {"external": {"enabled": True, "url": prom.url}, "internal": {"enabled": False}}
    return {"internal": {"enabled": True, "serviceName": "prometheus-operated", "namespaceName": prom.namespace,
                         "port": 9090, "scheme": "http", "path": ""}, "external": {"enabled": False}}


def render_opencost_values(spec: PlatformSpec) -> dict[str, Any]:
    """Chart values: custom pricing with the catalog GPU price, Prometheus wiring; overrides last."""
    cost_model = {
        "description": f"gpu-platform catalog prices for {spec.cluster_name}",
        "CPU": OPENCOST_DEFAULT_CPU_HOURLY,
        "RAM": OPENCOST_DEFAULT_RAM_HOURLY,
        "GPU": catalog_gpu_hourly(spec),
        "gpuLabel": GPU_NODE_LABEL[0],
        "gpuLabelValue": GPU_NODE_LABEL[1],
    }
    values = {
        "opencost": {
            "exporter": {"defaultClusterId": spec.cluster_name},
            "customPricing": {"enabled": True, "provider": "custom", "createConfigmap": True, "costModel": cost_model},
            "prometheus": _prometheus(spec),
            # The platform renders the ServiceMonitor itself (validated against the CRD, same shape as the chart's).
            "metrics": {"serviceMonitor": {"enabled": False}},
        },
    }
    return deep_merge(values, spec.monitoring.opencost.values_overrides, "monitoring.opencost.valuesOverrides")


def render_opencost_service_monitor(spec: PlatformSpec) -> dict[str, Any]:
    """ServiceMonitor for OpenCost's metrics port (the chart's template: port http, /metrics, honorLabels)."""
    oc = spec.monitoring.opencost
    return {
        "apiVersion": "monitoring.coreos.com/v1",
        "kind": "ServiceMonitor",
        "metadata": {"name": "opencost", "namespace": oc.namespace, "labels": rule_metadata_labels(spec)},
        "spec": {
            "endpoints": [{"port": "http", "scheme": "http", "path": "/metrics", "interval": "1m",
                           "scrapeTimeout": "10s", "honorLabels": True}],
            "selector": {"matchLabels": {"app.kubernetes.io/name": "opencost",
                                         "app.kubernetes.io/instance": oc.release_name}},
            "namespaceSelector": {"matchNames": [oc.namespace]},
        },
    }


def render_opencost_release(spec: PlatformSpec) -> dict[str, Any] | None:
    """The OpenCost release document, or None when disabled."""
    oc = spec.monitoring.opencost
    if not oc.enabled:
        return None
    return helm_release(oc.release_name, CHART, oc.repository, oc.version, oc.namespace, render_opencost_values(spec))
