"""Present a plan: rich tables, a JSON-ready dict, and the spec fragment (`nodePools`, `tiers`) it implies."""

from __future__ import annotations

from typing import Any

from rich.console import Group
from rich.markup import escape
from rich.table import Table

from ..catalog.resources import mig_resource
from ..spec import Cloud, SharingMode
from .solve import Plan, PlannedPool

__all__ = ["needs_gpu_operator", "plan_dict", "plan_tables", "spec_fragment"]

HOURS_PER_MONTH = 730


def _sharing(pool: PlannedPool) -> dict[str, Any]:
    cand = pool.candidate
    out: dict[str, Any] = {"mode": cand.mode.value}
    if cand.replicas:
        out["replicas"] = cand.replicas
    if cand.layout:
        out["migLayout"] = dict(cand.layout)
    return out


def spec_fragment(plan: Plan) -> dict[str, Any]:
    """The `nodePools` and `tiers` of the plan, ready to merge into a spec (plus price overrides, if any)."""
    pools = [
        {
            "name": p.name,
            "instanceType": p.candidate.itype.name,
            "sharing": _sharing(p),
            "minSize": p.nodes,
            "maxSize": p.max_nodes,
        }
        for p in plan.pools
    ]
    tiers = []
    for t in plan.demand.tiers:
        pool = plan.pool_of(t.name)
        tier: dict[str, Any] = {"name": t.name, "pool": pool.name}
        if pool.candidate.mode == SharingMode.MIG:
            tier["resource"] = mig_resource(t.mig_demand.profile)
        if t.priority is not None:  # else the spec's default ladder by sharing mode applies
            tier["priority"] = t.priority
        if t.description:
            tier["description"] = t.description
        tiers.append(tier)
    out: dict[str, Any] = {"nodePools": pools, "tiers": tiers}
    if plan.demand.price_overrides or plan.demand.discount_percent:
        out["catalog"] = {
            "priceOverrides": dict(plan.demand.price_overrides),
            "discountPercent": plan.demand.discount_percent,
        }
    return out


def _noun(n: int | None, noun: str) -> str:
    return noun if n == 1 else f"{noun}s"


def _tier_need(plan: Plan, name: str) -> str:
    t = next(x for x in plan.demand.tiers if x.name == name)
    if t.kind == "gpus":
        return f"{name}: {t.gpus} {_noun(t.gpus, 'GPU')}"
    if t.kind == "mig":
        return f"{name}: {t.mig_demand.instances}x {t.mig_demand.profile}"
    return f"{name}: {t.seat_demand.count} {_noun(t.seat_demand.count, 'seat')} /{t.seat_demand.per_gpu}"


def needs_gpu_operator(plan: Plan) -> str | None:
    """On GKE a plan with MIG pools names MIG resources, which only the GPU Operator advertises there."""
    mig = [p.name for p in plan.pools if p.candidate.mode == SharingMode.MIG]
    if plan.demand.cloud != Cloud.GCP or not mig:
        return None
    return (
        f"set gcp.gpuStack: gpu-operator in the spec: the MIG pools ({', '.join(mig)}) serve tiers that request "
        "nvidia.com/mig-<profile>, which GKE's own GPU stack does not advertise"
    )


def plan_dict(plan: Plan) -> dict[str, Any]:
    """The plan as plain data (the `--format json` output)."""
    return {
        "pools": [
            {
                "name": p.name,
                "instanceType": p.candidate.itype.name,
                "gpuModel": p.candidate.itype.gpu_model,
                "sharing": _sharing(p),
                "nodes": p.nodes,
                "maxNodes": p.max_nodes,
                "gpus": p.gpus,
                "hourly": round(p.hourly, 4),
                "tiers": list(p.tiers),
            }
            for p in plan.pools
        ],
        "totalHourly": round(plan.hourly, 4),
        "totalMonthly": round(plan.hourly * HOURS_PER_MONTH, 2),
        "costLowerBound": round(plan.cost_bound, 4),
        "optimal": plan.optimal,
        "mipGap": plan.gap,
        "gpus": plan.gpus,
        "gpuLowerBound": plan.lower_bound_gpus,
        "baselineGpus": plan.baseline_gpus,
        "baselineHourly": round(plan.baseline_hourly, 4),
        "savingPercent": round(plan.saving_percent, 2),
        "mig": [
            {
                "gpuModel": m.gpu_model,
                "instances": m.instances,
                "lowerBound": m.lower_bound,
                "exact": m.exact,
                "firstFit": m.first_fit,
                "optimal": m.optimal,
                "mipGap": m.gap,
            }
            for m in plan.mig
        ],
        "seconds": round(plan.seconds, 3),
        "notes": [*plan.notes, *filter(None, [needs_gpu_operator(plan)])],
        "spec": spec_fragment(plan),
    }


def _pool_table(plan: Plan) -> Table:
    table = Table(title="plan: pools", title_justify="left")
    for col in ("pool", "instance type", "sharing", "nodes", "GPUs", "$/hour", "tiers (demand)"):
        table.add_column(col, justify="right" if col in ("nodes", "GPUs", "$/hour") else "left")
    for p in plan.pools:
        s = _sharing(p)
        sharing = s["mode"] + (f" x{s['replicas']}" if "replicas" in s else "")
        if "migLayout" in s:
            sharing += " " + "+".join(f"{n}x{k}" for k, n in s["migLayout"].items())
        table.add_row(  # names from the demand: text, never markup
            escape(p.name),
            escape(p.candidate.itype.name),
            escape(sharing),
            f"{p.nodes}-{p.max_nodes}",
            str(p.gpus),
            f"{p.hourly:,.2f}",
            escape(", ".join(_tier_need(plan, t) for t in p.tiers)),
        )
    return table


def _summary_table(plan: Plan) -> Table:
    table = Table(title="plan: cost comparison", title_justify="left")
    table.add_column("figure")
    table.add_column("GPUs", justify="right")
    table.add_column("$/hour", justify="right")
    table.add_column("$/month", justify="right")
    status = "optimal" if plan.optimal else f"not proven optimal, MIP gap {plan.gap:.2%}"
    rows = (
        (f"plan ({status})", plan.gpus, plan.hourly),
        ("lower bound (GPUs: slice bound; $: proven)", plan.lower_bound_gpus, plan.cost_bound),
        ("whole-GPU baseline (one GPU per instance/seat)", plan.baseline_gpus, plan.baseline_hourly),
    )
    for label, gpus, hourly in rows:
        table.add_row(escape(label), str(gpus), f"{hourly:,.2f}", f"{hourly * HOURS_PER_MONTH:,.0f}")
    table.add_row("saving vs baseline", "", f"{plan.baseline_hourly - plan.hourly:,.2f}", f"{plan.saving_percent:.1f}%")
    if plan.baseline_hourly < plan.hourly:
        table.caption = (
            f"The baseline is below the plan: it puts each GPU, instance or seat demanded on a GPU of its own "
            f"({plan.baseline_gpus:,} {_noun(plan.baseline_gpus, 'GPU')}) at its type's price per GPU, "
            "while nodes are bought whole "
            f"({plan.gpus:,} GPUs planned)."
        )
        table.caption_justify = "left"
    return table


def _mig_table(plan: Plan) -> Table:
    table = Table(title="MIG packing per GPU model (GPUs, before tier routing and node rounding)", title_justify="left")
    for col in ("GPU model", "instances", "lower bound", "exact", "first-fit"):
        table.add_column(col, justify="left" if col in ("GPU model", "instances") else "right")
    for m in plan.mig:
        inst = ", ".join(f"{n}x {p}" for p, n in sorted(m.instances.items()))
        exact = str(m.exact) + ("" if m.optimal else f" (gap {m.gap:.1%})")
        table.add_row(escape(m.gpu_model), escape(inst), str(m.lower_bound), exact, str(m.first_fit))
    return table


def plan_tables(plan: Plan) -> Group:
    """Pools, the cost comparison and the MIG packing figures, as rich tables."""
    parts = [_pool_table(plan), _summary_table(plan)]
    if plan.mig:
        parts.append(_mig_table(plan))
    return Group(*parts)
