"""The fleet planner: from a workload demand to the cheapest valid pools, MIG layouts and replicas."""

from __future__ import annotations

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
