"""Queue-depth autoscaling: KEDA and one ScaledObject per `autoscaling.keda.scalers` entry.

Pure render modules (`keda`, `checks`) never import pulumi; `component` holds the thin Pulumi component.
"""

from __future__ import annotations

__all__: list[str] = []
