"""Budget policy: the stack's GPU node pools at max size stay under a configured $/hour."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..catalog import INSTANCE_TYPES
from ..contract import INSTANCE_TYPE_LABEL
from .config import PolicyConfig, config_of
from .props import KARPENTER_NODE_POOL, POOL_TYPES, dig, gpu_pool, items

if TYPE_CHECKING:  # the engine's argument types, for annotations only: the checks import no policy SDK
    from pulumi_policy import StackValidationArgs

__all__ = ["check_budget", "pool_costs"]

Report = Callable[..., None]


@dataclass(frozen=True)
class PoolCost:
    """One GPU pool's maximum hourly cost (None when its instance type has no known price)."""

    pool: str
    instance_type: str
    max_nodes: int
    hourly: float | None


def _price(cfg: PolicyConfig, instance_type: str) -> float | None:
    if instance_type in cfg.prices:
        return cfg.prices[instance_type]
    it = INSTANCE_TYPES.get(instance_type)
    return it.hourly_usd if it else None


def _count(value: Any) -> int:
    """A node count from a resource property: numbers and numeric strings, 0 for anything else (unknowns too)."""
    try:
        number = float(value or 0)
    except (TypeError, ValueError):
        return 0
    return int(number) if 0 <= number <= 1e9 else 0


def _shape(r: Any) -> tuple[str, int] | None:
    """(instance type, max node count) of a node pool resource, or None when it cannot be costed."""
    if r.resource_type == "aws:eks/nodeGroup:NodeGroup":
        types = [str(t) for t in items(dig(r.props, "instanceTypes"))]
        return (types[0] if types else "?"), _count(dig(r.props, "scalingConfig", "maxSize", default=0))
    if r.resource_type == "gcp:container/nodePool:NodePool":
        machine = str(dig(r.props, "nodeConfig", "machineType", default="?"))
        total = dig(r.props, "autoscaling", "totalMaxNodeCount")
        if total:
            return machine, _count(total)
        zones = max(1, len(items(dig(r.props, "nodeLocations"))))
        per_zone = dig(r.props, "autoscaling", "maxNodeCount", default=dig(r.props, "nodeCount", default=0))
        return machine, _count(per_zone) * zones
    if r.resource_type in KARPENTER_NODE_POOL:
        return _karpenter_shape(r.props)
    return None


def _karpenter_shape(props: Any) -> tuple[str, int] | None:
    """A Karpenter NodePool pinned to one instance type with a `nodes` limit (as gpu_platform renders them)."""
    reqs = items(dig(props, "spec", "template", "spec", "requirements"))
    types = [
        v
        for q in reqs
        if dig(q, "key") == INSTANCE_TYPE_LABEL and dig(q, "operator") == "In"
        for v in items(dig(q, "values"))
    ]
    nodes = dig(props, "spec", "limits", "nodes")
    if len(types) != 1 or nodes is None or not str(nodes).isdigit():
        return None  # several types or no node limit: no maximum to cost
    return str(types[0]), _count(nodes)


def pool_costs(resources: list[Any], cfg: PolicyConfig) -> list[PoolCost]:
    """Max-size hourly cost of every costable GPU node pool in a stack."""
    out = []
    for r in resources:
        if r.resource_type not in POOL_TYPES:
            continue
        pool = gpu_pool(r.resource_type, r.name, r.props)
        shape = _shape(r) if pool else None
        if pool is None or shape is None:
            continue
        itype, nodes = shape
        if r.resource_type == "aws:eks/nodeGroup:NodeGroup":
            prices = [_price(cfg, str(t)) for t in items(dig(r.props, "instanceTypes"))]
            known = [p for p in prices if p is not None]
            price = max(known) if prices and len(known) == len(prices) else None  # mixed types: the dearest
        else:
            price = _price(cfg, itype)
        out.append(PoolCost(pool.name, itype, nodes, None if price is None else price * nodes))
    return out


def _summary(costs: list[PoolCost]) -> str:
    parts = [f"{c.pool} ${c.hourly:,.2f} ({c.max_nodes} x {c.instance_type})" for c in costs if c.hourly is not None]
    unknown = [f"{c.pool} ({c.instance_type})" for c in costs if c.hourly is None]
    tail = [f"not costed, no price known: {', '.join(unknown)} (set prices)"] if unknown else []
    return "; ".join([", ".join(parts)] * bool(parts) + tail)


def check_budget(args: StackValidationArgs, report_violation: Report) -> None:
    """GPU node pools at max size cost no more than budgetHourly (advisory until a budget is set)."""
    cfg = config_of(args)
    costs = pool_costs(list(args.resources), cfg)
    if not costs:
        args.not_applicable("no GPU node pools in this stack")
    total = sum(c.hourly or 0 for c in costs)
    if cfg.budget_hourly is None:
        args.not_applicable(
            f"no budgetHourly set; GPU node pools at max size cost ${total:,.2f}/hour: {_summary(costs)}"
        )
        return  # not reached: not_applicable raises
    unknown = [c for c in costs if c.hourly is None]
    if unknown and total <= cfg.budget_hourly:
        report_violation(
            f"GPU node pools cannot be checked against the budget of ${cfg.budget_hourly:,.2f}/hour: {_summary(costs)}."
        )
    elif total > cfg.budget_hourly:
        report_violation(
            f"GPU node pools at max size cost ${total:,.2f}/hour, over the budget of "
            f"${cfg.budget_hourly:,.2f}/hour: {_summary(costs)}. Lower maxSize or raise budgetHourly."
        )
