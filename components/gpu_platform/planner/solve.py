"""Plan a fleet: which pools, instance types, node counts, MIG layouts and replicas serve a demand most cheaply.

One integer program (HiGHS through `scipy.optimize.milp`): integer nodes per candidate pool, a binary choice of
one pool per tier (a tier routes to exactly one pool), and per pool and unit kind: demand routed there <= units
the pool's nodes offer. Minimises $/hour. The MIG packing figures (exact, first-fit, slice bound) are computed
per GPU model alongside, for the report.
"""

from __future__ import annotations

import math
import time
from collections import defaultdict
from dataclasses import dataclass, field

import numpy as np
from scipy.optimize import Bounds, LinearConstraint, milp
from scipy.sparse import lil_array

from ..catalog import Catalog
from ..spec import SharingMode
from .candidates import Candidate, allowed_types, build_candidates, unit_capacity
from .demand import Demand, accepted_modes, catalog_of
from .mig_packing import PlanningError, first_fit, lower_bound, pack

__all__ = ["MigFigures", "Plan", "PlannedPool", "plan"]

_TIE_BREAK = 1e-3  # $/hour; far below any price difference between two node counts
_REL_GAP = 1e-6  # HiGHS stops at this relative gap (its default, 1e-4, could hide a node's price)


@dataclass(frozen=True)
class PlannedPool:
    """One pool of the plan."""

    name: str
    candidate: Candidate
    nodes: int
    max_nodes: int
    tiers: tuple[str, ...]

    @property
    def gpus(self) -> int:
        """GPUs provisioned at the planned node count."""
        return self.nodes * self.candidate.itype.gpu_count

    @property
    def hourly(self) -> float:
        """$/hour at the planned node count."""
        return self.nodes * self.candidate.itype.hourly_usd


@dataclass(frozen=True)
class MigFigures:
    """GPUs the MIG instances placed on one GPU model need: bound, exact packing, first-fit."""

    gpu_model: str
    instances: dict[str, int]
    lower_bound: int
    exact: int
    first_fit: int
    optimal: bool
    gap: float


@dataclass(frozen=True)
class Plan:
    """The cheapest plan found, with the figures it is compared against."""

    demand: Demand
    pools: tuple[PlannedPool, ...]
    tier_pool: dict[str, str]
    optimal: bool
    gap: float
    cost_bound: float
    seconds: float
    lower_bound_gpus: int
    baseline_gpus: int
    baseline_hourly: float
    mig: tuple[MigFigures, ...] = field(default=())

    @property
    def hourly(self) -> float:
        """$/hour of every pool at its planned size."""
        return sum(p.hourly for p in self.pools)

    @property
    def gpus(self) -> int:
        """GPUs provisioned."""
        return sum(p.gpus for p in self.pools)

    @property
    def saving_percent(self) -> float:
        """Saving against the whole-GPU baseline, in percent."""
        return 100.0 * (1 - self.hourly / self.baseline_hourly) if self.baseline_hourly else 0.0

    def pool_of(self, tier: str) -> PlannedPool:
        """The pool a tier routes to."""
        return next(p for p in self.pools if p.name == self.tier_pool[tier])


def _pairs(demand: Demand, cands: list[Candidate], catalog: Catalog) -> list[tuple[int, int, str]]:
    """(tier index, candidate index, unit kind) for every tier-candidate pair that works."""
    out = []
    for t, tier in enumerate(demand.tiers):
        allowed = {x.name for x in allowed_types(demand, tier, catalog)}
        found = False
        for c, cand in enumerate(cands):
            cap = unit_capacity(tier, cand, catalog) if cand.itype.name in allowed else None
            if cap:
                out.append((t, c, cap[0]))
                found = True
        if not found:
            raise PlanningError(f"tiers[{t}] ({tier.name}): no allowed instance type can serve it; allowed types: "
                                f"{', '.join(sorted(allowed)) or 'none'}; check the MIG profile, seats per GPU "
                                "(MPS <= 48) and isolation")
    return out


def _solve(demand: Demand, cands: list[Candidate], pairs: list[tuple[int, int, str]], time_limit: float):
    nc, ny, nt = len(cands), len(pairs), len(demand.tiers)
    rows = sorted({(c, k) for _, c, k in pairs})
    row_of = {rk: i for i, rk in enumerate(rows)}
    # Rows: capacity per (pool, unit kind); one pool per tier; and the cut "a tier alone needs
    # ceil(units / per node) nodes of its pool", which tightens the relaxation a lot.
    a = lil_array((len(rows) + nt + ny, nc + ny))
    load: dict[tuple[int, str], int] = defaultdict(int)
    upper = np.zeros(nc + ny)
    upper[nc:] = 1
    for j, (t, c, k) in enumerate(pairs):
        units, per_node = demand.tiers[t].units, cands[c].itype.gpu_count * cands[c].units_per_gpu[k]
        a[row_of[(c, k)], nc + j] = units
        a[len(rows) + t, nc + j] = 1
        a[len(rows) + nt + j, nc + j] = math.ceil(units / per_node)
        a[len(rows) + nt + j, c] = -1
        load[(c, k)] += units
    for (c, k), i in row_of.items():
        per_node = cands[c].itype.gpu_count * cands[c].units_per_gpu[k]
        a[i, c] = -per_node
        upper[c] = max(upper[c], math.ceil(load[(c, k)] / per_node))
    # A tiny charge on routes outside a tier's preferred sharing mode breaks ties towards the preferred one.
    tie = [_TIE_BREAK * (cands[c].mode != accepted_modes(demand.tiers[t])[0]) for t, c, _ in pairs]
    cost = np.concatenate([[x.itype.hourly_usd for x in cands], tie])
    lb = np.concatenate([np.full(len(rows), -np.inf), np.ones(nt), np.full(ny, -np.inf)])
    ub = np.concatenate([np.zeros(len(rows)), np.ones(nt), np.zeros(ny)])
    res = milp(cost, constraints=LinearConstraint(a.tocsr(), lb, ub), integrality=np.ones(nc + ny),
               bounds=Bounds(np.zeros(nc + ny), upper), options={"time_limit": time_limit, "mip_rel_gap": _REL_GAP})
    if res.x is None:
        raise PlanningError(f"the planner found no plan within {time_limit}s: {res.message}")
    return res


def _pool_name(cand: Candidate, taken: set[str]) -> str:
    slug = cand.itype.name.replace(".", "-")
    prefix = {SharingMode.EXCLUSIVE: "excl", SharingMode.MIG: "mig"}.get(cand.mode)
    prefix = prefix or f"{'ts' if cand.mode == SharingMode.TIME_SLICING else 'mps'}{cand.replicas}"
    parts = [prefix, slug]
    if cand.layout:
        parts += [p.replace("gb", "").replace(".", "").replace("+", "") + (f"x{n}" if n > 1 else "")
                  for p, n in sorted(cand.layout, key=lambda kv: (-int(kv[0].split("g")[0]), kv[0]))]
    name = "-".join(parts)[:63].strip("-")
    base, i = name, 2
    while name in taken:
        name, i = f"{base[:59]}-{i}", i + 1
    taken.add(name)
    return name


def _mig_figures(demand: Demand, pools: list[PlannedPool], tier_pool: dict[str, str], limit: float):
    per_model: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    by_name = {p.name: p for p in pools}
    for tier in demand.tiers:
        pool = by_name[tier_pool[tier.name]]
        if tier.kind == "mig" and pool.candidate.mode == SharingMode.MIG:
            per_model[pool.candidate.itype.gpu_model][tier.mig.profile] += tier.mig.instances
    out = []
    for model, counts in sorted(per_model.items()):
        exact = pack(model, counts, limit)
        out.append(MigFigures(model, dict(counts), lower_bound(model, counts), exact.gpus,
                              len(first_fit(model, counts)), exact.optimal, exact.gap))
    return tuple(out)


def _gpus_needed(demand: Demand, pool_of: dict[str, PlannedPool]) -> int:
    """GPUs no plan with these pools can go below: whole-GPU tiers count their GPUs, and the seat
    tiers that share a pool share its GPUs, so their seats are rounded up per pool, not per tier."""
    seats: dict[str, int] = defaultdict(int)
    per_gpu: dict[str, int] = {}
    whole = 0
    for tier in demand.tiers:
        pool = pool_of[tier.name]
        if tier.kind == "seats":
            seats[pool.name] += tier.seats.count
            per_gpu[pool.name] = pool.candidate.units_per_gpu["gpu"]
        elif pool.candidate.mode != SharingMode.MIG:
            whole += tier.units
    return whole + sum(math.ceil(n / per_gpu[name]) for name, n in seats.items())


def _pools(demand: Demand, cands: list[Candidate], pairs: list[tuple[int, int, str]], x: np.ndarray):
    """The solved pools (exclusive first) and the pool each tier routes to."""
    tiers_at: dict[int, list[str]] = defaultdict(list)
    for j, (t, c, _) in enumerate(pairs):
        if x[len(cands) + j]:
            tiers_at[c].append(demand.tiers[t].name)
    taken: set[str] = set()
    pools, tier_pool = [], {}
    grow = 1 + demand.headroom_percent / 100
    for c in sorted(tiers_at, key=lambda c: (cands[c].mode != SharingMode.EXCLUSIVE, c)):
        name, nodes = _pool_name(cands[c], taken), int(x[c])
        pools.append(PlannedPool(name, cands[c], nodes, math.ceil(nodes * grow - 1e-9), tuple(tiers_at[c])))
        tier_pool.update(dict.fromkeys(tiers_at[c], name))
    return pools, tier_pool


def plan(demand: Demand, time_limit: float = 10.0) -> Plan:
    """The cheapest valid plan for `demand` found within `time_limit` seconds."""
    start = time.perf_counter()
    catalog = catalog_of(demand)
    cands = build_candidates(demand, catalog)
    pairs = _pairs(demand, cands, catalog)
    res = _solve(demand, cands, pairs, time_limit)
    pools, tier_pool = _pools(demand, cands, pairs, np.round(res.x).astype(int))
    mig = _mig_figures(demand, pools, tier_pool, time_limit)
    pool_of = {t.name: next(p for p in pools if p.name == tier_pool[t.name]) for t in demand.tiers}
    bound = sum(m.lower_bound for m in mig) + _gpus_needed(demand, pool_of)
    baseline = sum(t.units * pool_of[t.name].candidate.itype.hourly_per_gpu for t in demand.tiers)
    optimal = res.status == 0
    return Plan(
        demand=demand, pools=tuple(pools), tier_pool=tier_pool, optimal=optimal,
        gap=0.0 if optimal else float(getattr(res, "mip_gap", float("nan"))),
        cost_bound=min(float(getattr(res, "mip_dual_bound", res.fun)), sum(p.hourly for p in pools)),
        seconds=time.perf_counter() - start,
        lower_bound_gpus=bound, baseline_gpus=sum(t.units for t in demand.tiers), baseline_hourly=baseline, mig=mig,
    )
