"""What `GpuPlatform` composes for a spec, decided without pulumi: the optional children and the plain outputs."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .contract import operator_enabled
from .nodepools.addons import render_node_addons
from .nodepools.health import render_node_monitoring_addon
from .outputs import platform_outputs
from .spec import PlatformSpec

__all__ = ["render_platform"]


@dataclass(frozen=True)
class PlatformRender:
    """Which optional children the spec needs and the plain values `GpuPlatform` exports (see `platform_outputs`)."""

    outputs: dict[str, Any]
    node_addons: bool  # cluster-autoscaler, the EFA device plugin or GKE's driver installer
    node_health: bool  # EKS: the node monitoring agent add-on
    gpu_operator: bool  # absent on GKE's gke-native GPU stack
    autoscaling: bool  # KEDA


def render_platform(spec: PlatformSpec) -> PlatformRender:
    """The composition of the platform for `spec` (a validated spec)."""
    return PlatformRender(
        outputs=platform_outputs(spec),
        node_addons=not render_node_addons(spec).empty,
        node_health=bool(render_node_monitoring_addon(spec)),
        gpu_operator=operator_enabled(spec),
        autoscaling=spec.autoscaling.keda.enabled,
    )
