"""The fleet planner: from a workload demand to the cheapest valid pools, MIG layouts and replicas."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .demand import Demand, load_demand, parse_demand
    from .mig_packing import Packing, PlanningError, first_fit, lower_bound, pack
    from .report import plan_dict, spec_fragment
    from .solve import Plan, plan

__all__ = [
    "Demand",
    "Packing",
    "Plan",
    "PlanningError",
    "first_fit",
    "load_demand",
    "lower_bound",
    "pack",
    "parse_demand",
    "plan",
    "plan_dict",
    "spec_fragment",
]

# The solver modules import scipy and highspy (about 1 s): exported names load their module on first use, so the
# CLI can list `plan` (and `gpu_platform.planner.cli` be imported) without them.
_LAZY = {
    "Demand": "demand",
    "load_demand": "demand",
    "parse_demand": "demand",
    "Packing": "mig_packing",
    "PlanningError": "mig_packing",
    "first_fit": "mig_packing",
    "lower_bound": "mig_packing",
    "pack": "mig_packing",
    "plan_dict": "report",
    "spec_fragment": "report",
    "Plan": "solve",
    "plan": "solve",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(f".{_LAZY[name]}", __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
