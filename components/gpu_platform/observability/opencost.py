"""OpenCost (chart 2.5.17) priced per node from the catalog through its CSV provider, wired to Prometheus.

What OpenCost does with these values (opencost/opencost read at 5f653330, v1.112.0-9; the chart ships 1.120.1:
re-read these paths when the pin moves):
- Provider choice (`pkg/cloud/provider/provider.go` getClusterProperties): with `USE_CUSTOM_PROVIDER=true` it
  returns before looking at the node's providerID, so neither the AWS public list (which would ignore the spec's
  `priceOverrides` and discount) nor the GCP provider (which fails without `CLOUD_PROVIDER_API_KEY`: "Supply a
  GCP Key", opencost issues #3501, #3235) is ever picked; `USE_CSV_PROVIDER=true` then selects the CSV provider,
  which reads the file at `CSV_PATH` (`pkg/env/costmodelenv.go`).
- The CSV provider (`pkg/cloud/provider/csvprovider.go`) reads the columns EndTimestamp, InstanceID, Region,
  AssetClass, InstanceIDField, InstanceType, MarketPriceHourly, Version. A `node` row prices every node whose
  value at InstanceIDField (here `metadata.labels.<domain>/gpu-pool`, lower-cased) equals InstanceID, at
  MarketPriceHourly for the whole node. With no `gpu` rows the node carries no GPU price of its own.
- `pkg/costmodel/costmodel.go` GetNodeCost then splits that node price: GPUs counted by `getGPUCount` (the
  `nvidia.com/gpu.count` label when GFD's `nvidia.com/gpu.replicas` label is there, else the `nvidia.com/gpu`
  capacity) and, with a GPU count, `ramPrice = node / (GPUs x GPU/RAM + vCPUs x CPU/RAM + GiB)`, CPU and GPU
  prices at the configured ratios; without one, CPU and RAM share it the same way. Either way vCPUs x CPU +
  GiB x RAM + GPUs x GPU is exactly the CSV's node price, whatever the GPU count. The configured CPU, RAM and
  GPU prices only set the ratios (and price nodes that have no row, such as system nodes).
- The chart writes every `customPricing.costModel` key into its ConfigMap, and OpenCost's watcher reads CPU,
  RAM, GPU, spot and storage prices from it as $ per month, dividing them by 730 (`pkg/cloud/provider/
  providerconfig.go` UpdateFromMap); an unknown key fails the whole update (`models.SetCustomPricingField`),
  so the CSV cannot travel in that ConfigMap. The chart has no CSV setting (`charts/opencost/templates/
  deployment.yaml` @ opencost-2.5.17): the CSV goes into a pod annotation, a downward-API volume
  (`extraVolumes`) writes it to a file the exporter mounts (`opencost.exporter.extraVolumeMounts`), and a
  price change rolls the pod. The CSV prices already carry the spec's discount, so the ConfigMap sets OpenCost's
  own discounts (applied to CPU and RAM in `allocation_helpers.go` applyNodeDiscount) to 0 %.
- Allocation reads GPU requests as `kube_pod_container_resource_requests{resource="nvidia_com_gpu"}`
  (`pkg/costmodel/allocation.go`), so MIG slices (`nvidia.com/mig-*`) cost nothing and a MIG node's GPU cost
  shows up as idle. For GPUs the platform's recording rules (`namespace_tier:gpu_cost_hourly:sum`) are the cost
  of record; OpenCost stays the CPU/RAM/storage view.
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass
from typing import Any

from ..artifacts import deep_merge, helm_release
from ..catalog.instances import SHAPES, Shape
from ..contract import GPU_RESOURCE, operator_enabled, pool_label_key
from ..spec import NodePool, PlatformSpec
from .pricing import HOURS_PER_MONTH, PoolPrice, pool_price
from .rules import rule_metadata_labels

__all__ = [
    "CSV_COLUMNS",
    "CSV_PATH",
    "OpenCostPrices",
    "PRICING_CSV_ANNOTATION",
    "opencost_container_env",
    "opencost_prices",
    "pricing_csv",
    "render_opencost_release",
    "render_opencost_service_monitor",
    "render_opencost_values",
]

CHART = "opencost"
CUSTOM_PROVIDER_ENV = "USE_CUSTOM_PROVIDER"
CSV_PROVIDER_ENV = "USE_CSV_PROVIDER"
# csvprovider.go `price` struct, in its csv tag order (csvutil.Header).
CSV_COLUMNS = (
    "EndTimestamp",
    "InstanceID",
    "Region",
    "AssetClass",
    "InstanceIDField",
    "InstanceType",
    "MarketPriceHourly",
    "Version",
)
PRICING_CSV_ANNOTATION = "gpu-platform.io/pricing-csv"
CSV_DIR = "/var/lib/gpu-platform-pricing"
CSV_PATH = f"{CSV_DIR}/pricing.csv"
_CSV_VOLUME = "gpu-platform-pricing-csv"


def _price(x: float) -> str:
    """A $ figure as plain decimal text (never exponent notation), exact to 1e-9."""
    text = f"{x:.9f}".rstrip("0").rstrip(".")
    return text or "0"


@dataclass(frozen=True)
class PoolOpenCost:
    """How OpenCost will price one node of a pool: its CSV price split into vCPUs, RAM and GPUs."""

    pool: NodePool
    catalog_hourly: float  # the node's catalog $/h (after overrides and discount): its CSV MarketPriceHourly
    gpus: int  # the GPUs OpenCost counts on the node (getGPUCount)
    cpu_hourly: float  # $/vCPU-h OpenCost derives for the node
    ram_hourly: float  # $/GiB-h
    gpu_hourly: float  # $/GPU-h
    vcpus: float
    memory_gib: float

    @property
    def opencost_hourly(self) -> float:
        """VCPUs x CPU + GiB x RAM + GPUs x GPU, as OpenCost adds the node up."""
        return self.vcpus * self.cpu_hourly + self.memory_gib * self.ram_hourly + self.gpus * self.gpu_hourly

    @property
    def deviation_percent(self) -> float:
        """OpenCost's node price against the catalog's, in percent (0 when they agree)."""
        return (self.opencost_hourly / self.catalog_hourly - 1) * 100 if self.catalog_hourly else 0.0


@dataclass(frozen=True)
class OpenCostPrices:
    """The configured $/h prices (ratios and the price of nodes without a CSV row) and each pool's node split."""

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
    """The GPUs OpenCost counts on one node of the pool (costmodel.go getGPUCount, see the module doc)."""
    if operator_enabled(spec):
        return price.capacity.gpus_per_node  # GFD's nvidia.com/gpu.count label
    return price.capacity.units_per_node.get(GPU_RESOURCE, 0)  # the advertised capacity (MIG partitions)


def _gpu_share(spec: PlatformSpec, price: PoolPrice) -> float:
    gpus = price.capacity.gpus_per_node
    if not gpus:
        return 0.0
    shape, oc = _shape(spec, price.pool.instance_type), spec.monitoring.opencost
    cpu_ram = shape.vcpus * oc.cpu_hourly_price + shape.memory_gib * oc.ram_gib_hourly_price if shape else 0.0
    return max(price.node_hourly - cpu_ram, 0.0) / gpus


def _weighted_gpu_price(prices: list[PoolPrice], shares: list[float]) -> float:
    # The configured GPU price only sets the GPU:RAM ratio of the split: GPUs at max size weight each pool's share.
    pairs = [(s, p) for s, p in zip(shares, prices, strict=True) if s > 0]
    gpus = sum(p.capacity.gpus_max for _, p in pairs)
    return round(sum(s * p.capacity.gpus_max for s, p in pairs) / gpus, 6) if gpus else 0.95


def _split(
    node: float, gpus: int, vcpus: float, gib: float, cpu: float, ram: float, gpu: float
) -> tuple[float, float, float]:
    """costmodel.go GetNodeCost: a node price split at the configured ratios (NaN ratios fall back as upstream)."""
    cpu_to_ram = cpu / ram if ram else 10.0
    if gpus:
        gpu_to_ram = gpu / ram if ram else 100.0
        multiple = gpus * gpu_to_ram + vcpus * cpu_to_ram + gib
        ram_price = node / multiple if multiple else 0.0
        return ram_price * cpu_to_ram, ram_price, ram_price * gpu_to_ram
    multiple = vcpus * cpu_to_ram + gib
    ram_price = node / multiple if multiple else 0.0
    return ram_price * cpu_to_ram, ram_price, 0.0


def opencost_prices(spec: PlatformSpec) -> OpenCostPrices:
    """Configured CPU, RAM and GPU prices, and how OpenCost splits each pool's CSV node price."""
    oc = spec.monitoring.opencost
    prices = [pool_price(spec, p) for p in spec.node_pools]
    gpu = oc.gpu_hourly_price
    if gpu is None:
        gpu = _weighted_gpu_price(prices, [_gpu_share(spec, p) for p in prices])
    pools = []
    for price in prices:
        shape = _shape(spec, price.pool.instance_type)
        vcpus, gib = (shape.vcpus, shape.memory_gib) if shape else (0.0, 0.0)
        gpus = _opencost_gpus(spec, price)
        c, r, g = _split(price.node_hourly, gpus, vcpus, gib, oc.cpu_hourly_price, oc.ram_gib_hourly_price, gpu)
        pools.append(PoolOpenCost(price.pool, price.node_hourly, gpus, c, r, g, vcpus, gib))
    return OpenCostPrices(oc.cpu_hourly_price, oc.ram_gib_hourly_price, gpu, tuple(pools))


def pricing_csv(spec: PlatformSpec) -> str:
    """The CSV provider's file: one `node` row per pool, matched on the pool label, at the catalog node price."""
    field = f"metadata.labels.{pool_label_key(spec.label_domain)}"
    text = io.StringIO()
    # Quoted where a field needs it, as Go's encoding/csv (which the provider's csvutil decoder reads) expects; the
    # names are checked when the spec is built, so none does today.
    writer = csv.writer(text, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    for pool in spec.node_pools:
        price = pool_price(spec, pool)
        writer.writerow(("", pool.name.lower(), "", "node", field, pool.instance_type, _price(price.node_hourly), ""))
    return text.getvalue()


def _prometheus(spec: PlatformSpec) -> dict[str, Any]:
    prom = spec.monitoring.prometheus
    if prom.url:
        return {"external": {"enabled": True, "url": prom.url}, "internal": {"enabled": False}}
    return {
        "internal": {
            "enabled": True,
            "serviceName": "prometheus-operated",
            "namespaceName": prom.namespace,
            "port": 9090,
            "scheme": "http",
            "path": "",
        },
        "external": {"enabled": False},
    }


def render_opencost_values(spec: PlatformSpec) -> dict[str, Any]:
    """Chart values: the CSV provider with the catalog node prices, ratio prices, Prometheus wiring; overrides last."""
    prices = opencost_prices(spec)
    cost_model = {
        "description": f"gpu-platform catalog prices for {spec.cluster_name}",
        # $ per month: OpenCost divides ConfigMap prices by 730 (see the module doc).
        "CPU": _price(prices.cpu * HOURS_PER_MONTH),
        "RAM": _price(prices.ram * HOURS_PER_MONTH),
        "GPU": _price(prices.gpu * HOURS_PER_MONTH),
        "discount": "0%",
        "negotiatedDiscount": "0%",
    }
    env = {CUSTOM_PROVIDER_ENV: "true", CSV_PROVIDER_ENV: "true", "CSV_PATH": CSV_PATH}
    values = {
        "podAnnotations": {PRICING_CSV_ANNOTATION: pricing_csv(spec)},
        "extraVolumes": [
            {
                "name": _CSV_VOLUME,
                "downwardAPI": {
                    "items": [
                        {
                            "path": "pricing.csv",
                            "fieldRef": {"fieldPath": f"metadata.annotations['{PRICING_CSV_ANNOTATION}']"},
                        }
                    ]
                },
            }
        ],
        "opencost": {
            # Without these OpenCost ignores the catalog and picks the cloud's provider (see the module doc).
            "exporter": {
                "defaultClusterId": spec.cluster_name,
                "extraEnv": env,
                "extraVolumeMounts": [{"name": _CSV_VOLUME, "mountPath": CSV_DIR, "readOnly": True}],
            },
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
            "endpoints": [
                {
                    "port": "http",
                    "scheme": "http",
                    "path": "/metrics",
                    "interval": "1m",
                    "scrapeTimeout": "10s",
                    "honorLabels": True,
                }
            ],
            "selector": {
                "matchLabels": {"app.kubernetes.io/name": "opencost", "app.kubernetes.io/instance": oc.release_name}
            },
            "namespaceSelector": {"matchNames": [oc.namespace]},
        },
    }


def render_opencost_release(spec: PlatformSpec) -> dict[str, Any] | None:
    """The OpenCost release document, or None when disabled."""
    oc = spec.monitoring.opencost
    if not oc.enabled:
        return None
    return helm_release(oc.release_name, CHART, oc.repository, oc.version, oc.namespace, render_opencost_values(spec))
