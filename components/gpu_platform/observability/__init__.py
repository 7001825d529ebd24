"""Observability and FinOps: DCGM-based recording rules and alerts, OpenCost, the Grafana dashboard, cost report.

Pure render modules (`rules`, `alerts`, `pricing`, `cost`, `dashboard`, `opencost`, `prometheus`, `render`)
never import pulumi; `component` holds the thin Pulumi component.
"""

from __future__ import annotations

__all__: list[str] = []
