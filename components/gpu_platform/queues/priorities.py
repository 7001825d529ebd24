"""Pure render of the priority ladder: a PriorityClass and a Kueue WorkloadPriorityClass per tier.

The default ladder (dev stack and examples) is pre-training > inference > fine-tuning > dev > CI; the values
come from each tier's `priority`, and `preemptionPolicy` from the tier (Never for tiers that must wait).
"""

from __future__ import annotations

from typing import Any

from ..spec import PlatformSpec, Tier

__all__ = ["priority_class_name", "render_priority_classes", "render_workload_priority_classes"]


def priority_class_name(tier: Tier) -> str:
    """Name of the tier's PriorityClass and WorkloadPriorityClass: `gpu-<tier>`."""
    return f"gpu-{tier.name}"


def _description(tier: Tier) -> str:
    return tier.description or f"GPU tier {tier.name} (pool {tier.pool})"


def render_priority_class(spec: PlatformSpec, tier: Tier) -> dict[str, Any]:
    """The tier's `scheduling.k8s.io/v1` PriorityClass (never the global default)."""
    return {
        "apiVersion": "scheduling.k8s.io/v1",
        "kind": "PriorityClass",
        "metadata": {"name": priority_class_name(tier)},
        "value": spec.priority_of(tier),
        "globalDefault": False,
        "preemptionPolicy": tier.preemption_policy.value,
        "description": _description(tier),
    }


def render_workload_priority_class(spec: PlatformSpec, tier: Tier) -> dict[str, Any]:
    """The tier's Kueue WorkloadPriorityClass (label `kueue.x-k8s.io/priority-class` on jobs)."""
    return {
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "WorkloadPriorityClass",
        "metadata": {"name": priority_class_name(tier)},
        "value": spec.priority_of(tier),
        "description": _description(tier),
    }


def _ladder(spec: PlatformSpec) -> list[Tier]:
    return sorted(spec.tiers, key=lambda t: -spec.priority_of(t))


def render_priority_classes(spec: PlatformSpec) -> list[dict[str, Any]]:
    """PriorityClasses of every tier, highest first."""
    return [render_priority_class(spec, t) for t in _ladder(spec)]


def render_workload_priority_classes(spec: PlatformSpec) -> list[dict[str, Any]]:
    """WorkloadPriorityClasses of every tier, highest first."""
    return [render_workload_priority_class(spec, t) for t in _ladder(spec)]
