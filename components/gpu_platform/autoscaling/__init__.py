"""Queue-depth autoscaling: KEDA and one ScaledObject per `autoscaling.keda.scalers` entry.

Pure render modules (`keda`, `checks`, `render`) never import pulumi; `GpuAutoscaling` (in `component`) is
imported on first use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .render import AutoscalingDocs, render_autoscaling, render_autoscaling_artifacts

if TYPE_CHECKING:  # pragma: no cover
    from .component import GpuAutoscaling, GpuAutoscalingArgs

__all__ = [
    "AutoscalingDocs",
    "GpuAutoscaling",
    "GpuAutoscalingArgs",
    "render_autoscaling",
    "render_autoscaling_artifacts",
]


def __getattr__(name: str) -> Any:
    if name in ("GpuAutoscaling", "GpuAutoscalingArgs"):
        from . import component

        return getattr(component, name)
    raise AttributeError(f"module 'gpu_platform.autoscaling' has no attribute {name!r}")
