"""GPU node pools: pure render functions (`render`, `eks`, `gke`, `karpenter`) and the Pulumi components.

`EksGpuNodePool`, `KarpenterGpuNodePool` and `EksNodeHealth` live in `aws` (imports `pulumi_aws`),
`GkeGpuNodePool` in `gcp` (imports `pulumi_gcp`), `GpuNodeAddons` in `component`; each is imported on first use,
so importing this package loads no cloud SDK.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .render import render_capacity, render_node_pool, render_nodepool_artifacts

if TYPE_CHECKING:  # pragma: no cover
    from .aws import (
        EksGpuNodePool,
        EksGpuNodePoolArgs,
        EksNodeHealth,
        EksNodeHealthArgs,
        KarpenterGpuNodePool,
        KarpenterGpuNodePoolArgs,
    )
    from .component import GpuNodeAddons, GpuNodeAddonsArgs
    from .gcp import GkeGpuNodePool, GkeGpuNodePoolArgs

__all__ = [
    "EksGpuNodePool",
    "EksGpuNodePoolArgs",
    "EksNodeHealth",
    "EksNodeHealthArgs",
    "GkeGpuNodePool",
    "GkeGpuNodePoolArgs",
    "GpuNodeAddons",
    "GpuNodeAddonsArgs",
    "KarpenterGpuNodePool",
    "KarpenterGpuNodePoolArgs",
    "render_capacity",
    "render_node_pool",
    "render_nodepool_artifacts",
]

_LAZY = {
    **dict.fromkeys(
        (
            "EksGpuNodePool",
            "EksGpuNodePoolArgs",
            "EksNodeHealth",
            "EksNodeHealthArgs",
            "KarpenterGpuNodePool",
            "KarpenterGpuNodePoolArgs",
        ),
        "aws",
    ),
    **dict.fromkeys(("GkeGpuNodePool", "GkeGpuNodePoolArgs"), "gcp"),
    **dict.fromkeys(("GpuNodeAddons", "GpuNodeAddonsArgs"), "component"),
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(f".{_LAZY[name]}", __name__), name)
    raise AttributeError(f"module 'gpu_platform.nodepools' has no attribute {name!r}")
