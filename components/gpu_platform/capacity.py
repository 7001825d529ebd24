"""Capacity arithmetic: what a pool advertises, per node and at min and max size."""

from __future__ import annotations

from dataclasses import dataclass

from .catalog.resources import GPU_RESOURCE
from .spec import Cloud, NodePool, PlatformSpec, Provisioner, SharingMode

__all__ = ["PoolCapacity", "pool_capacity", "units_per_gpu"]


@dataclass(frozen=True)
class PoolCapacity:
    """The extended resources one pool advertises."""

    pool: str
    gpu_model: str
    gpus_per_node: int
    units_per_node: dict[str, int]  # extended resource -> count per node
    min_nodes: int
    max_nodes: int

    @property
    def gpus_min(self) -> int:
        """Physical GPUs at min size."""
        return self.gpus_per_node * self.min_nodes

    @property
    def gpus_max(self) -> int:
        """Physical GPUs at max size."""
        return self.gpus_per_node * self.max_nodes

    def units(self, resource: str, nodes: int) -> int:
        """Units of `resource` on `nodes` nodes."""
        return self.units_per_node.get(resource, 0) * nodes


def units_per_gpu(spec: PlatformSpec, pool: NodePool) -> dict[str, int]:
    """Extended resources one GPU of the pool advertises: 1 exclusive, replicas shared, profile counts for MIG."""
    s = pool.sharing
    if s.mode == SharingMode.MIG:
        slice_replicas = s.replicas or 1
        out: dict[str, int] = {}
        for p, n in (s.mig_layout or {}).items():
            if n > 0:
                resource = spec.mig_resource(p)
                out[resource] = out.get(resource, 0) + n * slice_replicas
        return out
    if s.mode in (SharingMode.TIME_SLICING, SharingMode.MPS):
        return {GPU_RESOURCE: s.replicas or 1}
    return {GPU_RESOURCE: 1}


def min_nodes(spec: PlatformSpec, pool: NodePool) -> int:
    """Nodes the pool keeps when idle: `minSize`, except on Karpenter pools, which keep none (Karpenter launches
    nodes for pending pods and removes empty ones; `minSize` > 0 there is a validation warning)."""
    if spec.cloud == Cloud.AWS and pool.aws.provisioner == Provisioner.KARPENTER:
        return 0
    return pool.min_size


def pool_capacity(spec: PlatformSpec, pool: NodePool) -> PoolCapacity:
    """Capacity of a pool (zero GPUs when its instance type is unknown)."""
    itype = spec.hardware.instance(pool.instance_type)
    gpus = itype.gpu_count if itype else 0
    per_node = {r: n * gpus for r, n in units_per_gpu(spec, pool).items()}
    model = itype.gpu_model if itype else "?"
    return PoolCapacity(pool.name, model, gpus, per_node, min_nodes(spec, pool), pool.max_size)
