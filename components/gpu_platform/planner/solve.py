"""Plan a fleet: which pools, instance types, node counts, MIG layouts and replicas serve a demand most cheaply.

Tiers that can share no pool are planned apart (`columns.split_groups`); each group is solved exactly by
column generation, enumeration and a set-cover program (`master.solve_group`, HiGHS through highspy). Minimises
$/hour; a second pass (`tiebreak`) breaks cost ties towards each tier's preferred sharing mode without changing
the cost. The MIG packing figures (exact, first-fit, slice bound) are computed per GPU model alongside.
"""

from __future__ import annotations

import math
import time
from collections import defaultdict
from dataclasses import dataclass, field

from ..catalog import Catalog, InstanceType, profiles_for
from ..nodepools.checks import GKE_NODES_PER_ZONE, MAX_POOL_NODES
from ..nodepools.eks import EKS_NODE_GROUP_NAME_MAX, NAME_SUFFIX_LEN
from ..nodepools.gke import GKE_POOL_NAME_MAX
from ..spec import Cloud, SharingMode
from .candidates import Candidate, allowed_types, build_candidates, profile_memory_gb, served
from .columns import Column, Group, merged, split_groups, without_dominated
from .demand import Demand, DemandTier, accepted_modes, catalog_of
from .master import REL_GAP, greedy_plan, solve_group
from .mig_packing import PlanningError, first_fit, lower_bound, pack
from .tiebreak import fewer_nodes, prefer_mig

__all__ = ["Plan", "PlannedPool", "plan", "unit_floor"]

# An EKS managed node group is named `<pool>-` plus a generated suffix within EKS's limit; a GKE node pool
# `<pool>-` plus a hash within GKE's (`gke.node_pool_name`).
_NAME_MAX = {Cloud.AWS: EKS_NODE_GROUP_NAME_MAX - NAME_SUFFIX_LEN - 1, Cloud.GCP: GKE_POOL_NAME_MAX}


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
    notes: tuple[str, ...] = field(default=())  # sizes the node pool checks would warn about

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
    serves = served(demand, cands, catalog)
    out = [(t, c, cap[0]) for c, row in enumerate(serves) for t, cap in enumerate(row) if cap]
    problems = []
    for t, tier in enumerate(demand.tiers):
        if not any(row[t] for row in serves):
            allowed = allowed_types(demand, tier, catalog)
            problems.append(
                f"tiers[{t}] ({tier.name}): no allowed instance type can serve it; allowed types: "
                f"{', '.join(sorted({x.name for x in allowed})) or 'none'}; "
                + (
                    _mig_misfit(tier, allowed, catalog) + "check the instance types, isolation, gpuModel and "
                    "minGpuMemoryGiB"
                    if tier.kind == "mig"
                    else "check the MIG profile, seats per GPU (MPS <= 48), isolation, gpuModel and minGpuMemoryGiB"
                )
            )
    if problems:
        raise PlanningError("\n".join(problems))
    return sorted(out)


def _mig_misfit(tier: DemandTier, allowed: list[InstanceType], catalog: Catalog) -> str:
    """Why no allowed type serves a MIG tier: the GPU models that have its profile, and the GPU memory it needs
    on whole GPUs against the allowed types' (`candidates.unit_capacity`)."""
    profile = tier.mig_demand.profile
    models = sorted(m for m in catalog.gpu_models if profile in profiles_for(m))
    need = profile_memory_gb(profile)
    shown = ", ".join(
        f"{x.name} ({x.gpu_model}, {g.memory_gb} GB)"
        for x in sorted(allowed, key=lambda x: x.name)[:6]
        if (g := catalog.gpu(x.gpu_model)) is not None
    )
    return (
        f"{profile} is a MIG profile of {', '.join(models) or 'no catalog GPU'}"
        + (f", and on whole GPUs it needs {need} GB per GPU" if need else "")
        + (f" (the allowed types: {shown})" if shown else "")
        + "; "
    )


def _solve(
    demand: Demand, cands: list[Candidate], pairs: list[tuple[int, int, str]], deadline: float
) -> tuple[list[Column], float, bool]:
    """The pools of every group and the summed lower bound: (columns, bound, proven optimal), by `deadline` (the
    time limit counts from the start of `plan`, building the candidates included)."""
    mig_tiers = {t for t, tier in enumerate(demand.tiers) if accepted_modes(tier)[0] == SharingMode.MIG}
    itype_of = {c: cand.itype.name for c, cand in enumerate(cands)}
    mode_of = {c: cand.mode.value for c, cand in enumerate(cands)}
    columns: list[Column] = []
    bound, optimal = 0.0, True
    for group in sorted(split_groups([t.units for t in demand.tiers], pairs, cands), key=lambda g: len(g.units)):
        kept, left = without_dominated(group), deadline - time.perf_counter()
        # Past the limit, a group gets the greedy plan and its unit floor as bound (a solver call, at least 0.05 s
        # allowed and about 6 ms taken, made 1,000 groups 6 s late).
        solved = solve_group(kept, max(left, 0.05)) if left > 0 else greedy_plan(kept)
        preferred = prefer_mig(group, _one_pool_per_tier(group, solved.columns), mig_tiers, itype_of)
        columns += fewer_nodes(group, preferred, mode_of, 1 + demand.headroom_percent / 100, deadline)
        least = max(solved.bound, unit_floor(group, cands))  # no plan costs less than 0
        bound = bound + least
        optimal = optimal and (solved.optimal or solved.cost <= least + REL_GAP * solved.cost)
    return columns, bound, optimal


def unit_floor(group: Group, cands: list[Candidate]) -> float:
    """A lower bound on the group's cost that needs no solver: each tier's units at the least any candidate that
    serves it charges per unit. A node's price is spread over its capacity: per GPU for a candidate without MIG
    (its one unit kind, whole GPUs or seats, shares the node's GPUs), per compute slice for a MIG layout (a GPU
    has 7, and a profile takes its `compute` slices). Where column generation stops short on a large group,
    its bound can lie far below this one: 1,000 one-GPU tiers got 219.58 $/h against a plan of 2,744.71, which
    this bound proves optimal."""
    least: dict[int, float] = {}
    for c, kinds in group.slots.items():
        cand = cands[c]
        for kind, tiers in kinds.items():
            if cand.mode == SharingMode.MIG:  # a MIG pool's unit kinds are the profiles of its layout
                slices = profiles_for(cand.itype.gpu_model)[kind].compute
                each = group.price[c] * slices / (7 * cand.itype.gpu_count)
            else:
                each = group.price[c] / group.per_node[(c, kind)]
            for t in tiers:
                least[t] = min(least.get(t, math.inf), each)
    return sum(group.units[t] * least.get(t, 0.0) for t in group.units)


def _one_pool_per_tier(group: Group, columns: tuple[Column, ...]) -> list[Column]:
    """Merge pools of one candidate and keep each tier in one pool; nodes never grow."""
    on: dict[int, set[int]] = defaultdict(set)
    seen: set[int] = set()
    for col in columns:
        on[col.cand] |= col.tiers - seen
        seen |= col.tiers
    return [merged(group, c, tiers) for c, tiers in on.items() if tiers]


def _pool_name(cand: Candidate, taken: set[str], longest: int) -> str:
    """`<sharing>-<type>[-<layout>]`, at most `longest` characters (the size is dropped if need be)."""
    slug = cand.itype.name.replace(".", "-")
    prefix = {SharingMode.EXCLUSIVE: "excl", SharingMode.MIG: "mig"}.get(cand.mode)
    prefix = prefix or f"{'ts' if cand.mode == SharingMode.TIME_SLICING else 'mps'}{cand.replicas}"
    layout = [
        p.replace("gb", "").replace(".", "").replace("+", "") + (f"x{n}" if n > 1 else "")
        for p, n in sorted(cand.layout or (), key=lambda kv: (-int(kv[0].split("g")[0]), kv[0]))
    ]
    name = "-".join([prefix, slug, *layout])
    if len(name) > longest:
        name = "-".join([prefix, slug.split("-")[0], *layout])
    name = base = name[:longest].strip("-")
    i = 2
    while name in taken:
        name, i = f"{base[: longest - 1 - len(str(i))].strip('-')}-{i}", i + 1
    taken.add(name)
    return name


def _mig_figures(
    demand: Demand, pools: list[PlannedPool], tier_pool: dict[str, str], deadline: float
) -> tuple[MigFigures, ...]:
    per_model: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    by_name = {p.name: p for p in pools}
    for tier in demand.tiers:
        pool = by_name[tier_pool[tier.name]]
        if tier.kind == "mig" and pool.candidate.mode == SharingMode.MIG:
            per_model[pool.candidate.itype.gpu_model][tier.mig_demand.profile] += tier.mig_demand.instances
    out = []
    for model, counts in sorted(per_model.items()):
        exact = pack(model, counts, max(deadline - time.perf_counter(), 0.0))
        out.append(
            MigFigures(
                model,
                dict(counts),
                lower_bound(model, counts),
                exact.gpus,
                len(first_fit(model, counts)),
                exact.optimal,
                exact.gap,
            )
        )
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
            seats[pool.name] += tier.seat_demand.count
            per_gpu[pool.name] = pool.candidate.units_per_gpu["gpu"]
        elif pool.candidate.mode != SharingMode.MIG:
            whole += tier.units
    return whole + sum(math.ceil(n / per_gpu[name]) for name, n in seats.items())


def _pools(demand: Demand, cands: list[Candidate], columns: list[Column]) -> tuple[list[PlannedPool], dict[str, str]]:
    """The planned pools (exclusive first) and the pool each tier routes to."""
    taken: set[str] = set()
    pools: list[PlannedPool] = []
    tier_pool: dict[str, str] = {}
    grow = 1 + demand.headroom_percent / 100
    for col in sorted(columns, key=lambda col: (cands[col.cand].mode != SharingMode.EXCLUSIVE, col.cand)):
        name = _pool_name(cands[col.cand], taken, _NAME_MAX[demand.cloud or Cloud.AWS])
        tiers = tuple(demand.tiers[t].name for t in sorted(col.tiers))
        grown = math.ceil(col.nodes * grow - 1e-9)
        pools.append(PlannedPool(name, cands[col.cand], col.nodes, min(grown, max(MAX_POOL_NODES, col.nodes)), tiers))
        tier_pool.update(dict.fromkeys(tiers, name))
    return pools, tier_pool


def _larger_types(demand: Demand, pool: PlannedPool) -> str:
    """For a pool over the node limit: the types all its tiers allow with more GPUs per node (cheapest GPU
    first), as advice; empty when there are none."""
    catalog = catalog_of(demand)
    by_name = {t.name: t for t in demand.tiers}
    allowed = [{i.name: i for i in allowed_types(demand, by_name[t], catalog)} for t in pool.tiers]
    common = set.intersection(*(set(a) for a in allowed)) if allowed else set()
    larger = sorted(
        (allowed[0][n] for n in common if allowed[0][n].gpu_count > pool.candidate.itype.gpu_count),
        key=lambda i: (i.hourly_per_gpu, -i.gpu_count, i.name),
    )
    if not larger:
        return ""
    shown = ", ".join(f"{i.name} ({i.gpu_count} GPUs)" for i in larger[:4])
    return (
        f"the tiers of pool {pool.name!r} ({', '.join(pool.tiers)}) also allow types with more GPUs per node than "
        f"{pool.candidate.itype.name}, cheapest GPU first: {shown}"
    )


_ZONES_PER_REGION = 4  # the most zones a GCP region has (most have 3)


def _size_notes(demand: Demand, pools: list[PlannedPool]) -> tuple[str, ...]:
    """What the node pool checks would say about the planned sizes; a pool beyond one cluster is an error."""
    over = [p for p in pools if p.nodes > MAX_POOL_NODES]
    if over:
        advice = [a for p in over if (a := _larger_types(demand, p))]
        raise PlanningError(
            "; ".join(f"pool {p.name!r} needs {p.nodes:,} nodes" for p in over)
            + f": a Kubernetes cluster supports at most {MAX_POOL_NODES:,} nodes; "
            + "".join(f"{a}; " for a in advice)
            + ("list only such types in the tiers' instanceTypes, or " if advice else "")
            + "split the demand across clusters"
        )
    grow = 1 + demand.headroom_percent / 100
    notes = [
        f"pool {p.name!r}: maxSize {p.max_nodes:,}, not {math.ceil(p.nodes * grow - 1e-9):,} (headroom "
        f"{demand.headroom_percent:g}%): a Kubernetes cluster supports at most {MAX_POOL_NODES:,} nodes"
        for p in pools
        if p.max_nodes < math.ceil(p.nodes * grow - 1e-9)
    ]
    if demand.cloud == Cloud.GCP:  # GKE: at most 1,000 nodes per node pool per zone
        notes += [
            f"pool {p.name!r}: maxSize {p.max_nodes:,} needs at least {math.ceil(p.max_nodes / GKE_NODES_PER_ZONE)} "
            f"zones in gcp.zones (GKE allows {GKE_NODES_PER_ZONE:,} nodes per node pool per zone)"
            + (
                "; a region has 3 or 4 zones: split the pool"
                if math.ceil(p.max_nodes / GKE_NODES_PER_ZONE) > _ZONES_PER_REGION
                else ""
            )
            for p in pools
            if p.max_nodes > GKE_NODES_PER_ZONE
        ]
    total = sum(p.max_nodes for p in pools)
    if total > MAX_POOL_NODES:
        notes.append(
            f"the pools reach {total:,} nodes at maxSize together, more than the {MAX_POOL_NODES:,} a cluster supports"
        )
    return tuple(notes)


def plan(demand: Demand, time_limit: float = 10.0) -> Plan:
    """The cheapest valid plan for `demand` found within `time_limit` seconds."""
    start = time.perf_counter()
    catalog = catalog_of(demand)
    cands = build_candidates(demand, catalog)
    pairs = _pairs(demand, cands, catalog)
    columns, cost_bound, optimal = _solve(demand, cands, pairs, start + time_limit)
    pools, tier_pool = _pools(demand, cands, columns)
    notes = _size_notes(demand, pools)
    hourly = sum(p.hourly for p in pools)
    optimal = optimal or hourly <= cost_bound + REL_GAP * hourly
    mig = _mig_figures(demand, pools, tier_pool, start + time_limit)
    pool_of = {t.name: next(p for p in pools if p.name == tier_pool[t.name]) for t in demand.tiers}
    bound = sum(m.lower_bound for m in mig) + _gpus_needed(demand, pool_of)
    baseline = sum(t.units * pool_of[t.name].candidate.itype.hourly_per_gpu for t in demand.tiers)
    return Plan(
        demand=demand,
        pools=tuple(pools),
        tier_pool=tier_pool,
        optimal=optimal,
        gap=0.0 if optimal else (hourly - cost_bound) / hourly,
        cost_bound=min(cost_bound, hourly),
        seconds=time.perf_counter() - start,
        lower_bound_gpus=bound,
        baseline_gpus=sum(t.units for t in demand.tiers),
        baseline_hourly=baseline,
        mig=mig,
        notes=notes,
    )
