"""The cost report: per pool and tier $/hour and $/month at min and max size, against a whole-GPU baseline.

Baseline (how it is computed): every unit each tier can use at the pool's max size, served instead on whole
exclusive GPUs of the same instance type, one GPU per unit, priced at the instance's $/GPU-hour
(node $/h / GPUs per node, no rounding up to whole nodes). A resource shared by two tiers of a pool counts
once. Exclusive pools therefore cost the same as their baseline; a time-sliced x4 pool's baseline is 4 times
its price. saving % = (baseline - max-size price) / baseline x 100.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from ..catalog.instances import SOURCES
from ..errors import Finding, Severity
from ..names import gcp_region
from ..spec import CapacityType, Cloud, PlatformSpec
from .pricing import HOURS_PER_MONTH, PoolPrice, pool_price

__all__ = ["CostReport", "cost_report", "unattributed_notes"]


@dataclass(frozen=True)
class Units:
    """Units of one resource on a pool's nodes, and what they cost."""

    resource: str
    units_per_node: int
    units_min: int
    units_max: int
    unit_hourly: float

    @property
    def hourly_min(self) -> float:
        """$/hour of these units at min size."""
        return self.units_min * self.unit_hourly

    @property
    def hourly_max(self) -> float:
        """$/hour of these units at max size."""
        return self.units_max * self.unit_hourly


@dataclass(frozen=True)
class TierCost(Units):
    """One tier's resource on its pool."""

    tier: str = ""


@dataclass(frozen=True)
class Unattributed(Units):
    """A resource the pool's nodes advertise that no tier requests (e.g. MIG slices of a layout no tier uses).

    Its share of the node price is in the pool's $/h but in no tier's: the recording rules attribute it to no
    namespace, so on a fully allocated fleet `sum(namespace_tier:gpu_cost_hourly:sum)` is below the node price by
    this much."""


@dataclass(frozen=True)
class PoolCost:
    """One pool's figures."""

    price: PoolPrice
    tiers: tuple[TierCost, ...]
    baseline_gpus: int
    unattributed: tuple[Unattributed, ...] = ()

    @property
    def baseline_hourly(self) -> float:
        """$/hour of the baseline: one whole GPU per tier unit at max size."""
        return self.baseline_gpus * self.price.gpu_hourly


def _saving(baseline: float, actual: float) -> float:
    return (baseline - actual) / baseline * 100 if baseline else 0.0


def _pool_cost(spec: PlatformSpec, price: PoolPrice) -> PoolCost:
    pool, cap = price.pool, price.capacity
    tiers = []
    for tier in spec.tiers_of(pool.name):
        r = spec.resource_of(tier)
        n = cap.units_per_node.get(r, 0)
        tiers.append(
            TierCost(r, n, n * cap.min_nodes, n * pool.max_size, price.unit_hourly.get(r, 0.0), tier=tier.name)
        )
    demand = {t.resource: t.units_max for t in tiers}
    spare = tuple(
        Unattributed(r, n, n * cap.min_nodes, n * pool.max_size, price.unit_hourly.get(r, 0.0))
        for r, n in sorted(cap.units_per_node.items())
        if n and r not in demand
    )
    return PoolCost(price, tuple(tiers), sum(demand.values()), spare)


@dataclass(frozen=True)
class CostReport:
    """The whole fleet's cost figures."""

    cluster: str
    pools: tuple[PoolCost, ...]
    prices: tuple[str, ...] = ()  # where the node prices come from (`price_notes`)

    @property
    def total_hourly_min(self) -> float:
        """$/hour of every pool at min size."""
        return sum(p.price.hourly_min for p in self.pools)

    @property
    def total_hourly_max(self) -> float:
        """$/hour of every pool at max size."""
        return sum(p.price.hourly_max for p in self.pools)

    @property
    def baseline_hourly(self) -> float:
        """$/hour of the whole-GPU baseline."""
        return sum(p.baseline_hourly for p in self.pools)

    @property
    def unattributed_hourly_max(self) -> float:
        """$/hour at max size of the capacity no tier requests (in the totals, in no tier)."""
        return sum(u.hourly_max for p in self.pools for u in p.unattributed)

    @property
    def saving_percent(self) -> float:
        """Saving of the max-size fleet against the baseline, in percent."""
        return _saving(self.baseline_hourly, self.total_hourly_max)

    def to_json(self) -> dict[str, Any]:
        """The `--format json` document (DESIGN contract keys plus detail)."""
        return {
            "cluster": self.cluster,
            "currency": "USD",
            "hoursPerMonth": HOURS_PER_MONTH,
            "pools": [_pool_json(p) for p in self.pools],
            "totalHourlyMin": _r(self.total_hourly_min),
            "totalHourlyMax": _r(self.total_hourly_max),
            "totalMonthlyMin": _r(self.total_hourly_min * HOURS_PER_MONTH),
            "totalMonthlyMax": _r(self.total_hourly_max * HOURS_PER_MONTH),
            "baselineHourly": _r(self.baseline_hourly),
            "baselineMonthly": _r(self.baseline_hourly * HOURS_PER_MONTH),
            "savingPercent": round(self.saving_percent, 2),
            "unattributedHourlyMax": _r(self.unattributed_hourly_max),
            "prices": list(self.prices),
        }


def _r(x: float) -> float:
    return round(x, 4)


def _pool_json(p: PoolCost) -> dict[str, Any]:
    pr, cap, pool = p.price, p.price.capacity, p.price.pool
    return {
        "name": pool.name,
        "instanceType": pool.instance_type,
        "gpuModel": cap.gpu_model,
        "sharing": pool.sharing.mode.value,
        "nodesMin": cap.min_nodes,
        "nodesMax": pool.max_size,
        "gpusMin": cap.gpus_min,
        "gpusMax": cap.gpus_max,
        "nodeHourly": _r(pr.node_hourly),
        "gpuHourly": _r(pr.gpu_hourly),
        "hourlyMin": _r(pr.hourly_min),
        "hourlyMax": _r(pr.hourly_max),
        "monthlyMin": _r(pr.hourly_min * HOURS_PER_MONTH),
        "monthlyMax": _r(pr.hourly_max * HOURS_PER_MONTH),
        "baselineGpus": p.baseline_gpus,
        "baselineHourly": _r(p.baseline_hourly),
        "savingPercent": round(_saving(p.baseline_hourly, pr.hourly_max), 2),
        "tiers": [
            {
                "name": t.tier,
                "resource": t.resource,
                "unitsPerNode": t.units_per_node,
                "unitsMin": t.units_min,
                "unitsMax": t.units_max,
                "unitHourly": round(t.unit_hourly, 6),
                "hourlyMin": _r(t.hourly_min),
                "hourlyMax": _r(t.hourly_max),
                "monthlyMin": _r(t.hourly_min * HOURS_PER_MONTH),
                "monthlyMax": _r(t.hourly_max * HOURS_PER_MONTH),
            }
            for t in p.tiers
        ],
        "unattributed": [
            {
                "resource": u.resource,
                "unitsPerNode": u.units_per_node,
                "unitsMin": u.units_min,
                "unitsMax": u.units_max,
                "unitHourly": round(u.unit_hourly, 6),
                "hourlyMin": _r(u.hourly_min),
                "hourlyMax": _r(u.hourly_max),
            }
            for u in p.unattributed
        ],
    }


def cost_report(spec: PlatformSpec) -> CostReport:
    """The cost report of a validated spec."""
    pools = tuple(_pool_cost(spec, pool_price(spec, p)) for p in spec.node_pools)
    return CostReport(spec.cluster_name, pools, tuple(price_notes(spec)))


# The region of the built-in list prices (`catalog.instances.SOURCES`: Karpenter's generated AWS table for
# us-east-1, the GCP calculator's us-central1 column).
PRICE_REGION = {Cloud.AWS: "us-east-1", Cloud.GCP: "us-central1"}


def _cluster_region(spec: PlatformSpec) -> str | None:
    if spec.cloud == Cloud.AWS:
        return spec.aws.region if spec.aws else None
    return gcp_region(spec.gcp.location) if spec.gcp else None


def _as_of(source: str) -> str:
    """When a built-in price table was made (`SOURCES`), as ' as of <date>', or how a derived price was made."""
    if source == "derived":
        return " (derived from a sibling size of the same family)"
    found = re.search(r"generated ([0-9]{4}-[0-9]{2}-[0-9]{2})", SOURCES.get(source, ""))
    return f" as of {found.group(1)}" if found else ""


def _billed_otherwise(spec: PlatformSpec) -> list[str]:
    """Pools whose nodes are not billed at the on-demand price: Spot (AWS, GCP) and EC2 Capacity Blocks."""
    out = []
    for pool in spec.node_pools:
        if spec.cloud == Cloud.AWS and pool.aws.capacity_type != CapacityType.ON_DEMAND:
            kind = "Spot" if pool.aws.capacity_type == CapacityType.SPOT else "Capacity Block"
            out.append(f"pool {pool.name} runs {kind} capacity")
        elif spec.cloud == Cloud.GCP and pool.gcp.spot:
            out.append(f"pool {pool.name} runs Spot VMs")
    return out


def price_notes(spec: PlatformSpec) -> list[str]:
    """Where the prices of the spec's instance types come from: the list-price region and date, the cluster's
    other region, a price taken from another type, the discount, prices from the spec."""
    found = {name: spec.hardware.instance(name) for name in sorted({p.instance_type for p in spec.node_pools})}
    home, region = PRICE_REGION[spec.cloud], _cluster_region(spec)
    less = f", less catalog.discountPercent {spec.catalog.discount_percent:g}%" if spec.catalog.discount_percent else ""
    by_date: dict[str, list[str]] = {}
    proxies, given = [], []
    for name, itype in found.items():
        if itype is None:
            continue
        if itype.source == "spec":
            given.append(name)
            continue
        if itype.source.startswith("proxy"):  # no list price of its own: priced as another type
            proxies.append(f"{name}: {SOURCES[itype.source]}")
        else:
            by_date.setdefault(_as_of(itype.source), []).append(name)
    notes = [f"{', '.join(names)}: on-demand list prices in {home}{as_of}{less}" for as_of, names in by_date.items()]
    if (by_date or proxies) and region and region != home:
        notes.append(
            f"the cluster is in {region}: the list prices above are {home}'s, and differ there; set "
            "catalog.priceOverrides to what you pay"
        )
    notes += proxies
    billed = _billed_otherwise(spec)
    if billed:
        notes.append(
            f"{'; '.join(billed)}: billed at Spot or Capacity Block rates, not at the on-demand prices the "
            "figures here use (catalog.priceOverrides sets one price per instance type)"
        )
    if given:
        undiscounted = "; catalog.discountPercent does not apply to it" if spec.catalog.discount_percent else ""
        notes.append(
            f"{', '.join(given)}: the price in the spec (catalog.priceOverrides or catalog.instanceTypes)"
            + undiscounted
        )
    return notes


def unattributed_notes(report: CostReport) -> list[Finding]:
    """One note per resource a pool advertises that no tier requests, with what it costs at max size (the path
    is the pool's; the reports show the message)."""
    return [
        Finding(
            f"nodePools[{i}]",
            f"{p.price.pool.name} advertises {u.resource} ({u.units_min}-{u.units_max} units, "
            f"${u.hourly_max:,.2f}/h at max size) that no tier requests: it is in the pool's price but in no "
            "tier's, and the cost rules attribute it to no namespace",
            Severity.INFO,
        )
        for i, p in enumerate(report.pools)
        for u in p.unattributed
    ]
