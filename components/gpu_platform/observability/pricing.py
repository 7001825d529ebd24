"""Prices of GPU pools and of the extended resources they advertise, from the spec's catalog view.

The unit price of a tier resource is the node's $/hour divided among the units one node advertises, so a
node's units add up to exactly the node price (units no tier requests included: `cost.Unattributed`).
Exclusive, time-slicing and MPS pools advertise one resource (`nvidia.com/gpu`): unit price = node $/h /
(GPUs per node x replicas). A MIG pool advertises several slice sizes: each GPU's price is split by compute
slices (a `3g` slice of a `3g+2g+1g+1g` layout carries 3/7 of the GPU), then divided by the slice's
time-slicing replicas, if any.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..capacity import PoolCapacity, pool_capacity
from ..catalog import profiles_for
from ..spec import NodePool, PlatformSpec, SharingMode

__all__ = ["HOURS_PER_MONTH", "PoolPrice", "pool_price"]

HOURS_PER_MONTH = 730  # the cloud billing convention: 8,760 h / 12


@dataclass(frozen=True)
class PoolPrice:
    """One pool's capacity and prices."""

    pool: NodePool
    capacity: PoolCapacity
    node_hourly: float  # $/hour of one node (catalog price after overrides and discount)
    unit_hourly: dict[str, float]  # extended resource -> $/hour of one unit

    @property
    def gpu_hourly(self) -> float:
        """$/hour of one whole GPU of this instance type."""
        return self.node_hourly / self.capacity.gpus_per_node if self.capacity.gpus_per_node else 0.0

    @property
    def hourly_min(self) -> float:
        """$/hour of the pool at min size (0 on Karpenter pools, which keep no nodes: `capacity.min_nodes`)."""
        return self.node_hourly * self.capacity.min_nodes

    @property
    def hourly_max(self) -> float:
        """$/hour of the pool at max size."""
        return self.node_hourly * self.pool.max_size


def _compute_slices(spec: PlatformSpec, pool: NodePool, profile: str) -> int:
    model = spec.hardware.gpu_of(pool.instance_type)
    found = profiles_for(model.name).get(profile) if model else None
    return found.compute if found else 1


def unit_prices(spec: PlatformSpec, pool: NodePool, node_hourly: float, cap: PoolCapacity) -> dict[str, float]:
    """$/hour of one unit of each extended resource the pool advertises (units of one node add up to the node)."""
    if not cap.units_per_node:
        return {}
    if pool.sharing.mode != SharingMode.MIG:
        return {r: node_hourly / n for r, n in cap.units_per_node.items() if n}
    replicas = pool.sharing.replicas or 1
    profiles = {p: n for p, n in (pool.sharing.mig_layout or {}).items() if n > 0}
    layout = {spec.mig_resource(p): n for p, n in profiles.items()}
    weights = {spec.mig_resource(p): _compute_slices(spec, pool, p) for p in profiles}
    slices_per_gpu = sum(weights[r] * n for r, n in layout.items())
    gpu_hourly = node_hourly / cap.gpus_per_node if cap.gpus_per_node else 0.0
    return {r: gpu_hourly * weights[r] / slices_per_gpu / replicas for r in layout}


def pool_price(spec: PlatformSpec, pool: NodePool) -> PoolPrice:
    """Capacity and prices of one pool (zero when its instance type is unknown)."""
    itype = spec.hardware.instance(pool.instance_type)
    node_hourly = itype.hourly_usd if itype else 0.0
    cap = pool_capacity(spec, pool)
    return PoolPrice(pool, cap, node_hourly, unit_prices(spec, pool, node_hourly, cap))
