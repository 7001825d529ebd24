"""NVIDIA GPU Operator with per-pool sharing: pure renderers here; `GpuOperator` (Pulumi) is imported on first use."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .device_plugin import render_device_plugin_configs
from .mig import render_mig_parted_config
from .render import (
    operator_enabled,
    operator_node_labels,
    render_gpu_operator,
    render_gpu_operator_artifacts,
)
from .values import render_values

if TYPE_CHECKING:  # pragma: no cover
    from .component import GpuOperator, GpuOperatorArgs

__all__ = [
    "GpuOperator",
    "GpuOperatorArgs",
    "operator_enabled",
    "operator_node_labels",
    "render_device_plugin_configs",
    "render_gpu_operator",
    "render_gpu_operator_artifacts",
    "render_mig_parted_config",
    "render_values",
]


def __getattr__(name: str) -> Any:
    if name in ("GpuOperator", "GpuOperatorArgs"):
        from . import component

        return getattr(component, name)
    raise AttributeError(f"module 'gpu_platform.gpu_operator' has no attribute {name!r}")
