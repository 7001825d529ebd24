"""In-cluster admission: deny unclassified GPU pods (ValidatingAdmissionPolicy), route tiered ones.

Render modules are pure (no pulumi import); `GpuAdmission` is imported on first use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .render import (
    mutation_engine,
    render_admission,
    render_admission_artifacts,
    render_deny,
    render_routes,
)

if TYPE_CHECKING:  # pragma: no cover
    from .component import GpuAdmission, GpuAdmissionArgs

__all__ = [
    "GpuAdmission",
    "GpuAdmissionArgs",
    "mutation_engine",
    "render_admission",
    "render_admission_artifacts",
    "render_deny",
    "render_routes",
]


def __getattr__(name: str) -> Any:
    if name in ("GpuAdmission", "GpuAdmissionArgs"):
        from . import component

        return getattr(component, name)
    raise AttributeError(f"module 'gpu_platform.admission' has no attribute {name!r}")
