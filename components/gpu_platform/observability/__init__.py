"""Observability and FinOps: DCGM-based recording rules and alerts, OpenCost, the Grafana dashboard, cost report.

Pure render modules (`rules`, `alerts`, `pricing`, `cost`, `dashboard`, `opencost`, `prometheus`, `render`)
never import pulumi; `GpuObservability` (in `component`) is imported on first use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .cost import CostReport, cost_report
from .render import ObservabilityDocs, render_observability, render_observability_artifacts

if TYPE_CHECKING:  # pragma: no cover
    from .component import GpuObservability, GpuObservabilityArgs

__all__ = [
    "CostReport",
    "GpuObservability",
    "GpuObservabilityArgs",
    "ObservabilityDocs",
    "cost_report",
    "render_observability",
    "render_observability_artifacts",
]


def __getattr__(name: str) -> Any:
    if name in ("GpuObservability", "GpuObservabilityArgs"):
        from . import component

        return getattr(component, name)
    raise AttributeError(f"module 'gpu_platform.observability' has no attribute {name!r}")
