"""The Grafana dashboard, shipped as a ConfigMap the Grafana sidecar picks up (label `grafana_dashboard: "1"`)."""

from __future__ import annotations

import json
from typing import Any

from ..contract import GPU_RESOURCE
from ..spec import PlatformSpec
from .alerts import KUEUE_PENDING, stranded_expr
from .rules import (
    COST_BY_NAMESPACE,
    COST_BY_TEAM,
    RATE,
    SM_ACTIVE_POOL,
    SM_ACTIVE_TIER,
    UNITS_ALLOCATABLE,
    UNITS_ALLOCATED,
    rule_metadata_labels,
)

__all__ = ["DASHBOARD_KEY", "panel_queries", "render_dashboard_configmap"]

DASHBOARD_UID = "gpu-platform"
DASHBOARD_KEY = "gpu-platform.json"
_DS = {"type": "prometheus", "uid": "${datasource}"}


def _panel(
    pid: int, title: str, queries: list[tuple[str, str]], unit: str, x: int, y: int, kind: str = "timeseries"
) -> dict[str, Any]:
    return {
        "id": pid,
        "type": kind,
        "title": title,
        "datasource": _DS,
        "gridPos": {"h": 8, "w": 12, "x": x, "y": y},
        "fieldConfig": {"defaults": {"unit": unit}, "overrides": []},
        "targets": [
            {"refId": chr(65 + i), "datasource": _DS, "expr": expr, "legendFormat": legend}
            for i, (expr, legend) in enumerate(queries)
        ],
    }


COST_OF_RECORD_NOTE = (
    f"**GPU cost of record: `{COST_BY_NAMESPACE}` / `{COST_BY_TEAM}`** (the panels above). They price every "
    "tier unit the pods request, whole GPUs, MIG slices and time-sliced or MPS replicas alike, at "
    f"`{RATE}`: the pool's catalog node price (after overrides and discount) split among the units one "
    "node advertises. A resource no tier requests (MIG slices outside every tier's layout) is charged to no "
    "namespace: `gpu-platform cost` lists it as unattributed.\n\n"
    f"**OpenCost** is the CPU, memory and storage view. It reads only `{GPU_RESOURCE}` requests, so "
    "**MIG slices cost nothing there** (their GPUs show up as idle); do not report GPU spend from it."
)


def _text_panel(pid: int, title: str, content: str, x: int, y: int) -> dict[str, Any]:
    return {
        "id": pid,
        "type": "text",
        "title": title,
        "gridPos": {"h": 8, "w": 12, "x": x, "y": y},
        "options": {"mode": "markdown", "content": content},
    }


def _panels(spec: PlatformSpec) -> list[dict[str, Any]]:
    stranded = stranded_expr(spec)
    return [
        _panel(1, "SM active per tier (1 h average)", [(SM_ACTIVE_TIER, "{{tier}}")], "percentunit", 0, 0),
        _panel(2, "SM active per pool (1 h average)", [(SM_ACTIVE_POOL, "{{pool}}")], "percentunit", 12, 0),
        _panel(
            3,
            "Allocated vs. allocatable units per tier resource",
            [
                (f"sum by (resource) ({UNITS_ALLOCATED})", "allocated {{resource}}"),
                (f"sum by (resource) ({UNITS_ALLOCATABLE})", "allocatable {{resource}}"),
            ],
            "short",
            0,
            8,
        ),
        _panel(
            4,
            "Allocated units and SM active per tier",
            [
                (f"sum by (tier) ({UNITS_ALLOCATED})", "allocated {{tier}}"),
                (f"{SM_ACTIVE_TIER} * on (tier) sum by (tier) ({UNITS_ALLOCATED})", "used (SM-active units) {{tier}}"),
            ],
            "short",
            12,
            8,
        ),
        _panel(
            5,
            "GPU $ per hour per team and tier (cost of record)",
            [(COST_BY_TEAM, "{{team}} / {{tier}}")],
            "currencyUSD",
            0,
            16,
        ),
        _panel(
            6,
            "GPU $ per hour per namespace and tier (cost of record)",
            [(COST_BY_NAMESPACE, "{{namespace}} / {{tier}}")],
            "currencyUSD",
            12,
            16,
        ),
        _panel(
            7,
            "Stranded capacity: allocated GPUs idle under the SM-active threshold",
            [
                (f"count({stranded}) or vector(0)", "idle allocated GPUs"),
                (f"count by (namespace) ({stranded})", "idle in {{namespace}}"),
            ],
            "short",
            0,
            24,
        ),
        _panel(
            8,
            "Pending workloads per ClusterQueue",
            [
                (f"sum by (cluster_queue, status) ({KUEUE_PENDING})", "{{cluster_queue}} {{status}}"),
            ],
            "short",
            12,
            24,
        ),
        _panel(
            9,
            "Hourly rate per tier unit (catalog)",
            [(RATE, "{{tier}} {{resource}}")],
            "currencyUSD",
            0,
            32,
            kind="table",
        ),
        _text_panel(10, "Which cost is which", COST_OF_RECORD_NOTE, 12, 32),
    ]


def dashboard_json(spec: PlatformSpec) -> dict[str, Any]:
    """The dashboard model (Grafana schema 39) with a Prometheus datasource variable."""
    return {
        "uid": DASHBOARD_UID,
        "title": f"GPU platform: {spec.cluster_name}",
        "tags": ["gpu-platform", "gpu", "finops"],
        "schemaVersion": 39,
        "editable": False,
        "time": {"from": "now-24h", "to": "now"},
        "refresh": "5m",
        "templating": {
            "list": [{"name": "datasource", "type": "datasource", "query": "prometheus", "label": "Prometheus"}]
        },
        "panels": _panels(spec),
    }


def panel_queries(dashboard: dict[str, Any]) -> list[str]:
    """Every PromQL expression of the dashboard's panels."""
    return [t["expr"] for p in dashboard["panels"] for t in p.get("targets", [])]


def render_dashboard_configmap(spec: PlatformSpec) -> dict[str, Any]:
    """The ConfigMap the Grafana sidecar loads (searchNamespace ALL, label grafana_dashboard=1)."""
    labels = {**rule_metadata_labels(spec), "grafana_dashboard": "1"}
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {
            "name": "gpu-platform-dashboard",
            "namespace": spec.monitoring.prometheus.namespace,
            "labels": labels,
        },
        "data": {DASHBOARD_KEY: json.dumps(dashboard_json(spec), indent=1, sort_keys=False)},
    }
