"""Solve one tier group exactly: column generation for the bound, enumeration and a cover program for the plan.

1. Column generation (HiGHS LP through `scipy.optimize.linprog`, exact knapsack pricing, at most one pool per
   candidate) gives a lower bound L on the cost of any plan, with tier and candidate duals.
2. Every pool of a plan costing at most L + s has reduced cost <= s. The planner lists every such MIG pool
   for a small slack s (0.2 % of L) and solves the cover program over them (`cover.solve_cover`). When that
   program's optimum is within L + s, it is the true optimum: proven. Otherwise s doubles, up to the gap of
   the best plan found, until the time limit.
3. When column generation does not converge in its share of the time, or no listing yields a plan (large
   groups), the compact model, where every pool is modelled directly, gets the time left; the greedy plan
   (each tier where it alone is cheapest) is the last resort.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, replace

import numpy as np
from scipy.optimize import linprog
from scipy.sparse import csc_array

from .columns import Column, Duals, Group, enumerate_columns, merged, price_columns, within_gap
from .cover import Cover, solve_cover

__all__ = ["GroupPlan", "solve_group"]

REL_GAP = 1e-6  # a plan within this relative gap of the bound is reported optimal
_ENUM_LIMIT = 50_000  # pools listed for one proof step before the planner settles for the gap
_SMOOTHING = 0.5  # weight of the best duals so far when pricing
_CG_GAP = 2e-4  # column generation stops when the best bound is this close (relative) to the LP value
_CG_SHARE = 0.4  # of the time limit, at most, for column generation
_FIRST_SLACK = 2e-3  # the first listing holds the pools within 0.2 % of the bound; then the slack doubles


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


def _lp(group: Group, cols: list[Column]) -> tuple[Duals, float]:
    """The duals (clipped at 0) and the value of the column model's LP over `cols`."""
    a, tiers, cands = _matrix(group, cols)
    b = np.concatenate([-np.ones(len(tiers)), np.ones(len(cands))])
    res = linprog([group.cost(c) for c in cols], A_ub=a, b_ub=b, bounds=(0, None), method="highs")
    marg = [max(0.0, -float(m)) for m in res.ineqlin.marginals]
    return Duals(dict(zip(tiers, marg)), dict(zip(cands, marg[len(tiers):]))), float(res.fun)


def _mix(a: Duals, b: Duals, weight: float) -> Duals:
    """weight * a + (1 - weight) * b."""
    return Duals({t: weight * v + (1 - weight) * b.tiers[t] for t, v in a.tiers.items()},
                 {c: weight * v + (1 - weight) * b.cands[c] for c, v in a.cands.items()})


def _generate(group: Group, cols: list[Column], deadline: float) -> tuple[Duals, float, bool]:
    """Column generation: the duals with the best Lagrangian bound found, that bound, and whether it converged.

    Any duals give a valid bound, so the loop may stop at the deadline; it prices at a mix of the best duals
    and the LP's (Wentges smoothing), which needs far fewer rounds than the LP's duals alone.
    """
    known, center, bound = set(cols), None, -math.inf
    while True:
        duals, value = _lp(group, cols)
        new: list[Column] = []
        for at in ([_mix(center, duals, _SMOOTHING), duals] if center else [duals]):
            new, lagrange = price_columns(group, at)
            if lagrange > bound:
                center, bound = at, lagrange
            new = [c for c in new if c not in known]
            if new:
                break
        converged = not new or value - bound <= _CG_GAP * abs(value)
        if converged or time.perf_counter() > deadline:
            return center, bound, converged
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
    generated = list({*start, *_full(group)})
    duals, bound, converged = _generate(group, generated, time.perf_counter() + time_limit * _CG_SHARE)
    best, proven = Cover(tuple(start), sum(group.cost(c) for c in start), False), bound
    solved, too_many, slack = 0.0, math.inf, _FIRST_SLACK * bound if converged else 0.0
    while best.cost > bound + REL_GAP * best.cost and time.perf_counter() < deadline and slack:
        # Every pool of a plan costing at most bound + slack has reduced cost <= slack, so with all of
        # them listed, the cover program's optimum is the true optimum whenever it is within the slack.
        listed = enumerate_columns(group, duals, slack, _ENUM_LIMIT)
        if listed is None:
            too_many, slack = slack, _next_slack(solved, slack, math.inf, bound)
            continue
        found = solve_cover(within_gap(group, duals, slack), listed + list(best.columns),
                            deadline - time.perf_counter(), REL_GAP)
        best = found if found is not None and found.cost < best.cost else best
        if found is not None and found.optimal and found.cost <= bound + slack:
            return GroupPlan(best.columns, best.cost, best.cost, True)
        if found is not None:  # no plan within the slack is missing, so the program's bound holds up to it
            proven = max(proven, min(found.bound, bound + slack))
        solved, slack = slack, _next_slack(slack, too_many, best.cost - bound + REL_GAP * best.cost, bound)
    if best.columns == tuple(start) and time.perf_counter() < deadline:  # the compact model gets the time left
        found = solve_cover(replace(group, direct=set(group.slots)), [], deadline - time.perf_counter(), REL_GAP)
        best = found if found is not None and found.cost < best.cost else best
        proven = max(proven, found.bound if found is not None else proven)
    return GroupPlan(best.columns, best.cost, min(proven, best.cost), best.cost <= proven + REL_GAP * best.cost)


def _next_slack(solved: float, too_many: float, needed: float, bound: float) -> float:
    """The next slack to list: double the last solved one, up to what the proof needs, below one that listed
    too many pools; 0 when no slack is left to try."""
    if too_many < math.inf:
        low = solved or too_many / 8
        nxt = (low + too_many) / 2 if solved else low
    else:
        nxt = min(2 * solved, needed)
    nxt = min(nxt, needed)
    return 0.0 if nxt <= solved * 1.05 or nxt < REL_GAP * bound else nxt
