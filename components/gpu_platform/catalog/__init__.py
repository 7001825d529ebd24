"""The hardware catalog: GPU models, MIG profiles and placements, instance types and prices, as data tables.

`Catalog` is the view a spec sees: the built-in tables plus the spec's own instance types and price overrides.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from .gpus import GPU_MODELS, MIG_CAPABLE_GPUS, GpuModel, gpu_families
from .instances import INSTANCE_TYPES, SOURCES, InstanceType
from .mig import (
    COMPUTE_SLICES,
    MEMORY_SLICES,
    MIG_PROFILES,
    layout_fits,
    placements_for,
    profiles_for,
)
from .network import EFA_INTERFACES, EFA_SOURCE
from .resources import GPU_RESOURCE

__all__ = [
    "Catalog",
    "GpuModel",
    "InstanceType",
    "EFA_INTERFACES",
    "EFA_SOURCE",
    "GPU_MODELS",
    "GPU_RESOURCE",
    "MIG_CAPABLE_GPUS",
    "INSTANCE_TYPES",
    "MIG_PROFILES",
    "SOURCES",
    "COMPUTE_SLICES",
    "MEMORY_SLICES",
    "gpu_families",
    "layout_fits",
    "placements_for",
    "profiles_for",
]


@dataclass(frozen=True)
class Catalog:
    """Built-in tables merged with a spec's additions and price overrides."""

    instance_types: Mapping[str, InstanceType] = field(default_factory=lambda: dict(INSTANCE_TYPES))
    gpu_models: Mapping[str, GpuModel] = field(default_factory=lambda: dict(GPU_MODELS))

    @classmethod
    def build(
        cls,
        extra: Iterable[InstanceType] = (),
        price_overrides: Mapping[str, float] | None = None,
        discount_percent: float = 0.0,
    ) -> Catalog:
        """The built-in catalog plus `extra` types, with overridden prices and a flat discount on list prices.

        The discount applies to built-in list prices only: `extra` types and overrides carry the price paid.
        """
        types = dict(INSTANCE_TYPES) | {t.name: t for t in extra}
        factor = 1.0 - discount_percent / 100.0
        out = {}
        for name, t in types.items():
            price = (price_overrides or {}).get(name)
            if price is None:
                price, source = (t.hourly_usd if t.source == "spec" else t.hourly_usd * factor), t.source
            else:
                source = "spec"
            out[name] = InstanceType(t.name, t.cloud, t.gpu_model, t.gpu_count, price, source)
        return cls(instance_types=out)

    def instance(self, name: str) -> InstanceType | None:
        """The instance type called `name`, or None."""
        return self.instance_types.get(name)

    def gpu(self, name: str) -> GpuModel | None:
        """The GPU model called `name`, or None."""
        return self.gpu_models.get(name)

    def gpu_of(self, instance_type: str) -> GpuModel | None:
        """The GPU model of an instance type, or None when either is unknown."""
        t = self.instance(instance_type)
        return None if t is None else self.gpu(t.gpu_model)
