"""Solve one tier group exactly: column generation for the bound, set cover for the plan, enumeration for proof.

1. Column generation (HiGHS LP through `scipy.optimize.linprog`, exact knapsack pricing) gives the bound L of
   the column model, which is at least as tight as the compact model's LP bound.
2. A set cover over the columns found gives a plan U quickly.
3. Every column an optimal plan can use has reduced cost <= U - L; when those are few enough they are all
   listed and the set cover over them is solved to optimality, which proves the plan optimal.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
from scipy.optimize import linprog
from scipy.sparse import csc_array

from .columns import Column, Duals, Group, enumerate_columns, merged, price_columns, within_gap
from .cover import Cover, solve_cover

__all__ = ["GroupPlan", "solve_group"]

REL_GAP = 1e-6  # a plan within this relative gap of the bound is reported optimal
_ENUM_LIMIT = 50_000
_FIRST_SLACK = 2e-3  # the first enumeration lists pools within 0.2 % of the bound; then the slack doubles  # columns listed for the proof before the planner settles for the gap


@dataclass(frozen=True)
class GroupPlan:
    """The pools of one group, their cost and the proven lower bound on it."""

    columns: tuple[Column, ...]
    cost: float
    bound: float
    optimal: bool


def _matrix(group: Group, cols: list[Column]) -> tuple[csc_array, list[int], list[int]]:
    """Cover rows (one per tier) over convexity rows (one per candidate), as `-cover <= -1, conv <= 1`."""
    tiers, cands = sorted(group.units), sorted(group.slots)
    row = {t: i for i, t in enumerate(tiers)}
    conv = {c: len(tiers) + i for i, c in enumerate(cands)}
    data = [(row[t], j, -1.0) for j, col in enumerate(cols) for t in col.tiers]
    data += [(conv[col.cand], j, 1.0) for j, col in enumerate(cols)]
    r, c, v = zip(*data)
    return csc_array((v, (r, c)), shape=(len(tiers) + len(cands), len(cols))), tiers, cands


def _lp(group: Group, cols: list[Column]) -> Duals:
    """The duals of the column model's LP over `cols` (clipped at 0, which keeps the bound valid)."""
    a, tiers, cands = _matrix(group, cols)
    b = np.concatenate([-np.ones(len(tiers)), np.ones(len(cands))])
    res = linprog([group.cost(c) for c in cols], A_ub=a, b_ub=b, bounds=(0, None), method="highs")
    marg = [max(0.0, -float(m)) for m in res.ineqlin.marginals]
    return Duals(dict(zip(tiers, marg)), dict(zip(cands, marg[len(tiers):])))


def _generate(group: Group, cols: list[Column], deadline: float) -> tuple[Duals, float, bool]:
    """Column generation until no pool prices out: (duals, lower bound, converged)."""
    known, bound = set(cols), 0.0
    while True:
        duals = _lp(group, cols)
        new, lagrange = price_columns(group, duals)
        bound = max(bound, lagrange)
        new = [c for c in new if c not in known]
        if not new or time.perf_counter() > deadline:
            return duals, bound, not new
        known.update(new)
        cols += new


def _greedy(group: Group) -> list[Column]:
    """Each tier on the candidate that serves it alone most cheaply, tiers on one candidate pooled."""
    best: dict[int, tuple[float, int]] = {}
    for cand, kinds in group.slots.items():
        for kind, tiers in kinds.items():
            for t in tiers:
                cost = group.price[cand] * -(-group.units[t] // group.per_node[(cand, kind)])
                best[t] = min(best.get(t, (cost, cand)), (cost, cand))
    on: dict[int, list[int]] = {}
    for t, (_, cand) in best.items():
        on.setdefault(cand, []).append(t)
    return [merged(group, cand, tiers) for cand, tiers in on.items()]


def _full(group: Group) -> list[Column]:
    """Per candidate, one pool serving every tier it can: keeps the first LP feasible."""
    return [merged(group, c, [t for ts in kinds.values() for t in ts]) for c, kinds in group.slots.items()]


def solve_group(group: Group, time_limit: float) -> GroupPlan:
    """The cheapest pools for one group found within `time_limit` seconds, with a proven lower bound."""
    deadline = time.perf_counter() + time_limit
    start = _greedy(group)
    duals, bound, converged = _generate(group, list({*start, *_full(group)}), deadline)
    best, proven = Cover(tuple(start), sum(group.cost(c) for c in start), False), bound
    slack = _FIRST_SLACK * bound
    while converged and best.cost > bound + REL_GAP * best.cost and time.perf_counter() < deadline:
        # Every pool of a plan costing at most bound + slack has reduced cost <= slack, so with all of
        # them listed, the cover program's optimum is the true optimum whenever it is within the slack.
        listed = enumerate_columns(group, duals, slack, _ENUM_LIMIT)
        if listed is None:
            break
        found = solve_cover(within_gap(group, duals, slack), listed + list(best.columns),
                            deadline - time.perf_counter(), REL_GAP)
        if found is not None and found.cost < best.cost:
            best = found
        if found is not None and found.optimal and found.cost <= bound + slack:
            return GroupPlan(best.columns, best.cost, best.cost, True)
        # No plan within the slack is missing from the program, so its dual bound holds up to bound + slack.
        if found is not None:
            proven = max(proven, min(found.bound, bound + slack))
        if slack >= best.cost - bound:
            break
        slack = min(2 * slack, best.cost - bound + REL_GAP * best.cost)
    return GroupPlan(best.columns, best.cost, min(proven, best.cost), best.cost <= proven + REL_GAP * best.cost)
