"""OpenCost (chart 2.5.17) with custom pricing from the catalog, wired to the platform's Prometheus.

What OpenCost does with these values (opencost/opencost, read at 5f653330; the same code paths in 1.120):
- It picks its pricing provider from the first node's providerID (`aws://`, `gce://` ...) unless
  `USE_CUSTOM_PROVIDER=true` (`pkg/cloud/provider/provider.go` getClusterProperties). Without it an EKS node is
  priced from the AWS public list (the spec's `priceOverrides` and discount do nothing) and a GKE cluster without
  a `CLOUD_PROVIDER_API_KEY` fails ("Supply a GCP Key", opencost issues #3501, #3235). The chart's
  `customPricing.enabled` only mounts the ConfigMap (CONFIG_PATH, PRICING_CONFIGMAP_NAME in
  `charts/opencost/templates/deployment.yaml` @ opencost-2.5.17), so the platform sets the variable through
  `opencost.exporter.extraEnv`.
- The custom provider treats a node as a GPU node when it carries the `gpuLabel` (`customprovider.go`
  GPUType) and prices it as CPU x vCPUs + RAM x GiB + GPU x GPUs (`pkg/costmodel/costmodel.go`). The GPU count
  is `getGPUCount`: with a `nvidia.com/gpu.replicas` label, the `nvidia.com/gpu.count` label; else the
  `nvidia.com/gpu` capacity. The GPU Operator's feature discovery puts both labels on every GPU node, MIG or not
  (NVIDIA/k8s-device-plugin v0.20.0 `internal/lm/resource.go` baseLabeler), so OpenCost counts physical GPUs;
  on GKE's own GPU stack it counts the advertised `nvidia.com/gpu` (MIG partitions, time-sharing clients).
  So the GPU price here is what is left of the node price after its vCPUs and RAM, per GPU: a node's three
  parts add up to the instance price. One GPU price serves the whole cluster; with pools of different $/GPU
  it is their GPU-weighted mean and `opencost_prices` reports each pool's deviation.
- Allocation reads GPU requests as `kube_pod_container_resource_requests{resource="nvidia_com_gpu"}`
  (`pkg/costmodel/allocation.go`), so MIG slices (`nvidia.com/mig-*`) cost nothing and a MIG node's GPU cost
  shows up as idle. For GPUs the platform's recording rules (`namespace_tier:gpu_cost_hourly:sum`) are the cost
  of record; OpenCost stays the CPU/RAM/storage view.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..artifacts import deep_merge, helm_release
from ..catalog.instances import SHAPES, Shape
from ..contract import operator_enabled
from ..spec import NodePool, PlatformSpec
from .pricing import PoolPrice, pool_price
from .rules import rule_metadata_labels

__all__ = [
    "CHART",
    "CUSTOM_PROVIDER_ENV",
    "OpenCostPrices",
    "opencost_container_env",
    "opencost_prices",
    "render_opencost_release",
    "render_opencost_service_monitor",
    "render_opencost_values",
]

CHART = "opencost"
CUSTOM_PROVIDER_ENV = "USE_CUSTOM_PROVIDER"
# The GPU Operator's feature discovery labels every GPU node with this; GKE labels its GPU nodes with the second.
GPU_NODE_LABEL = ("nvidia.com/gpu.present", "true")
GKE_ACCELERATOR_LABEL = "cloud.google.com/gke-accelerator"


@dataclass(frozen=True)
class PoolOpenCost:
    """How OpenCost will price one node of a pool with the cluster's custom prices."""

    pool: NodePool
    catalog_hourly: float  # the node's catalog $/h (after overrides and discount)
    opencost_hourly: float  # CPU x vCPUs + RAM x GiB + GPU x the GPUs OpenCost counts
    gpu_share_hourly: float  # the node's $/h less its vCPUs and RAM, per GPU

    @property
    def deviation_percent(self) -> float:
        """OpenCost's node price against the catalog's, in percent (0 when they agree)."""
        return (self.opencost_hourly / self.catalog_hourly - 1) * 100 if self.catalog_hourly else 0.0


@dataclass(frozen=True)
class OpenCostPrices:
    """The custom-pricing figures for the cluster and what they do to each pool."""

    cpu: float
    ram: float
    gpu: float
    pools: tuple[PoolOpenCost, ...]


def _shape(spec: PlatformSpec, instance_type: str) -> Shape | None:
    for t in spec.catalog.instance_types:
        if t.name == instance_type and t.vcpus and t.memory_gib:
            return Shape(t.vcpus, t.memory_gib, "spec")
    return SHAPES.get(instance_type)


def _opencost_gpus(spec: PlatformSpec, price: PoolPrice) -> int:
    """The GPUs OpenCost counts on one node of the pool (see the module doc)."""
    if operator_enabled(spec):
        return price.capacity.gpus_per_node  # the nvidia.com/gpu.count label
    return price.capacity.units_per_node.get("nvidia.com/gpu", 0) or 1  # capacity, else the provider's "1"


def _gpu_share(spec: PlatformSpec, price: PoolPrice) -> float:
    gpus = price.capacity.gpus_per_node
    if not gpus:
        return 0.0
    shape, oc = _shape(spec, price.pool.instance_type), spec.monitoring.opencost
    cpu_ram = shape.vcpus * oc.cpu_hourly_price + shape.memory_gib * oc.ram_gib_hourly_price if shape else 0.0
    return max(price.node_hourly - cpu_ram, 0.0) / gpus


def _weighted_gpu_price(spec: PlatformSpec, prices: list[PoolPrice], shares: list[float]) -> float:
    # Weighted by GPUs at max size over the pools where OpenCost counts physical GPUs.
    counted = [(s, p) for s, p in zip(shares, prices, strict=True)
               if _opencost_gpus(spec, p) == p.capacity.gpus_per_node]
    pairs = counted or list(zip(shares, prices, strict=True))
    gpus = sum(p.capacity.gpus_max for _, p in pairs)
    return round(sum(s * p.capacity.gpus_max for s, p in pairs) / gpus, 6) if gpus else 0.0


def opencost_prices(spec: PlatformSpec) -> OpenCostPrices:
    """CPU, RAM and GPU custom prices, and each pool's node price as OpenCost will compute it."""
    oc = spec.monitoring.opencost
    prices = [pool_price(spec, p) for p in spec.node_pools]
    shares = [_gpu_share(spec, p) for p in prices]
    gpu = oc.gpu_hourly_price
    if gpu is None:
        gpu = _weighted_gpu_price(spec, prices, shares)
    pools = []
    for price, share in zip(prices, shares, strict=True):
        shape = _shape(spec, price.pool.instance_type)
        cpu_ram = shape.vcpus * oc.cpu_hourly_price + shape.memory_gib * oc.ram_gib_hourly_price if shape else 0.0
        pools.append(PoolOpenCost(price.pool, price.node_hourly, cpu_ram + gpu * _opencost_gpus(spec, price), share))
    return OpenCostPrices(oc.cpu_hourly_price, oc.ram_gib_hourly_price, gpu, tuple(pools))


def _prometheus(spec: PlatformSpec) -> dict[str, Any]:
    prom = spec.monitoring.prometheus
    if prom.url:
        return {"external": {"enabled": True, "url": prom.url}, "internal": {"enabled": False}}
    return {"internal": {"enabled": True, "serviceName": "prometheus-operated", "namespaceName": prom.namespace,
                         "port": 9090, "scheme": "http", "path": ""}, "external": {"enabled": False}}


def _gpu_label(spec: PlatformSpec) -> dict[str, str]:
    # Only the label's presence matters (customprovider.go GPUType); GKE's own stack has no GFD labels.
    if operator_enabled(spec):
        return {"gpuLabel": GPU_NODE_LABEL[0], "gpuLabelValue": GPU_NODE_LABEL[1]}
    return {"gpuLabel": GKE_ACCELERATOR_LABEL}


def render_opencost_values(spec: PlatformSpec) -> dict[str, Any]:
    """Chart values: custom pricing with the catalog GPU price, Prometheus wiring; overrides last."""
    prices = opencost_prices(spec)
    cost_model = {
        "description": f"gpu-platform catalog prices for {spec.cluster_name}",
        "CPU": prices.cpu,
        "RAM": prices.ram,
        "GPU": prices.gpu,
        **_gpu_label(spec),
    }
    values = {
        "opencost": {
            # Without it OpenCost ignores the custom prices and picks the cloud's provider (see the module doc).
            "exporter": {"defaultClusterId": spec.cluster_name, "extraEnv": {CUSTOM_PROVIDER_ENV: "true"}},
            "customPricing": {"enabled": True, "provider": "custom", "createConfigmap": True, "costModel": cost_model},
            "prometheus": _prometheus(spec),
            # The platform renders the ServiceMonitor itself (validated against the CRD, same shape as the chart's).
            "metrics": {"serviceMonitor": {"enabled": False}},
        },
    }
    return deep_merge(values, spec.monitoring.opencost.values_overrides, "monitoring.opencost.valuesOverrides")


def opencost_container_env(values: dict[str, Any]) -> dict[str, str]:
    """The pricing-related environment the chart gives the OpenCost container for these values.

    Mirrors `charts/opencost/templates/deployment.yaml` @ opencost-2.5.17: CONFIG_PATH and PRICING_CONFIGMAP_NAME
    when `customPricing.enabled`, CLOUD_PROVIDER_API_KEY when `exporter.cloudProviderApiKey` is set, then every
    `exporter.extraEnv` entry (quoted, so always a string).
    """
    oc = values.get("opencost", {})
    pricing, exporter = oc.get("customPricing", {}), oc.get("exporter", {})
    env: dict[str, str] = {}
    if exporter.get("cloudProviderApiKey"):
        env["CLOUD_PROVIDER_API_KEY"] = "<secret>"
    if pricing.get("enabled"):
        env["CONFIG_PATH"] = str(pricing.get("configPath", "/tmp/custom-config"))
        env["PRICING_CONFIGMAP_NAME"] = str(pricing.get("configmapName", "custom-pricing-model"))
    env |= {str(k): str(v).lower() if isinstance(v, bool) else str(v) for k, v in exporter.get("extraEnv", {}).items()}
    return env


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
