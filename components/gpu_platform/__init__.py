"""gpu-platform: one typed description of a GPU fleet -> a tiered, multi-tenant GPU platform on Kubernetes.

The spec, loading and validation import no Pulumi SDK; the components are imported on first use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .errors import GpuPlatformError, RenderError, SpecError
from .load import load_spec, parse_spec
from .spec import PlatformSpec
from .validation import check_spec

if TYPE_CHECKING:  # pragma: no cover
    from .platform import GpuPlatform, GpuPlatformArgs

__all__ = [
    "GpuPlatform",
    "GpuPlatformArgs",
    "GpuPlatformError",
    "PlatformSpec",
    "RenderError",
    "SpecError",
    "check_spec",
    "load_spec",
    "parse_spec",
]

_LAZY = {"GpuPlatform": ".platform", "GpuPlatformArgs": ".platform"}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name], __name__), name)
    raise AttributeError(f"module 'gpu_platform' has no attribute {name!r}")
