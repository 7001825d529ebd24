"""How every platform alert is shaped: labels, annotations and the GPU / pod templates they print."""

from __future__ import annotations

from typing import Any

from .names import DCGM_NODE_LABEL

__all__ = ["GPU", "POD", "alert"]

GPU = "{{ $labels." + DCGM_NODE_LABEL + " }} GPU {{ $labels.gpu }}"
POD = "{{ $labels.namespace }}/{{ $labels.pod }}"


def alert(
    name: str,
    expr: str,
    for_: str,
    severity: str,
    summary: str,
    description: str,
    runbook: str,
) -> dict[str, Any]:
    """One alerting rule with the platform's labels and a summary, a description and a runbook hint."""
    return {
        "alert": name,
        "expr": expr,
        "for": for_,
        "labels": {"severity": severity, "platform": "gpu-platform"},
        "annotations": {"summary": summary, "description": description, "runbook": runbook},
    }
