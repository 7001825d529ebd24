"""Solve one tier group exactly: column generation for the bound, enumeration and a cover program for the plan.

1. Column generation (an LP on one `highspy` model, grown by columns and re-solved from its last basis; exact
   knapsack pricing, at most one pool per candidate) gives a lower bound L on the cost of any plan, with tier
   and candidate duals.
2. A first plan: two dives on that LP (fix the tiers it serves mostly on one candidate, price again, repeat),
   LP rounding and the greedy plan, each improved by a local search (`local.improve`); the best one starts
   every integer program below, so a time limit still returns a good plan.
3. Every pool of a plan costing at most L + s has reduced cost <= s. The planner lists every such MIG pool
   for a small slack s (0.4 % of L, halved while the listing is too long) and solves the cover program over
   them (`cover.solve_cover`). When that program's optimum is within L + s, it is the true optimum: proven.
   Otherwise s doubles, up to the gap of the best plan found, until the time limit.
4. When column generation does not converge in its share of the time, or no listing holds few enough pools
   (large groups), the compact model, where every pool is modelled directly, gets the time left.
5. The bound is rounded up to the least cost whole nodes can add up to (`branch.next_cost`); when the listings
   stop before the time limit without a proof, branch-and-price (`branch.branch_and_price`) gets the rest.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, replace

import numpy as np
from scipy.sparse import csc_array

from .branch import branch_and_price, next_cost
from .columns import Column, Duals, Group, enumerate_columns, merged, price_columns, within_gap, within_plan
from .cover import Cover, solve_cover
from .highs import ColumnLP
from .local import improve, rounded

__all__ = ["solve_group", "REL_GAP", "merged"]

REL_GAP = 1e-6  # a plan within this relative gap of the bound is reported optimal
_ENUM_LIMIT = 12_000  # pools listed for one proof step; more make a program HiGHS rarely closes in time
_ENUM_TRIES = 3  # listings that hold too many pools (each halves the slack) before the compact model
_SMOOTHING = 0.5  # weight of the best duals so far when pricing
_CG_GAP = 2e-4  # column generation stops when the best bound is this close (relative) to the LP value
_CG_SHARE = 0.4  # of the time limit, at most, for column generation
_DIVE_SHARE = 0.4  # of the time left, at most, for the dives that find the first plan
_DIVE_ROUNDS = 4  # pricing rounds, at most, after each fixing
_DIVE_FIX = (0.7, 0.95)  # a dive fixes every tier the LP serves at least this much on one candidate; one dive
# per threshold (the first is quicker, the second slower and often better)
_FIRST_SLACK = 4e-3  # the first listing holds the pools within 0.4 % of the bound; then the slack doubles


@dataclass(frozen=True)
class GroupPlan:
    """The pools of one group, their cost and the proven lower bound on it."""

    columns: tuple[Column, ...]
    cost: float
    bound: float
    optimal: bool


class _Master:
    """The column model's LP: a cover row (>= 1) per tier, a convexity row (<= 1) per candidate, grown by
    columns on one HiGHS instance that re-optimises from its last basis."""

    def __init__(self, group: Group, cols: list[Column]) -> None:
        self.group, self.tiers, self.cands = group, sorted(group.units), sorted(group.slots)
        self.row: dict[int | tuple[str, int], int] = {t: i for i, t in enumerate(self.tiers)}
        self.row.update({("cand", c): len(self.tiers) + i for i, c in enumerate(self.cands)})
        self.lp = ColumnLP(
            np.concatenate([np.ones(len(self.tiers)), np.full(len(self.cands), -np.inf)]),
            np.concatenate([np.full(len(self.tiers), np.inf), np.ones(len(self.cands))]),
        )
        self.cols: list[Column] = []
        self.add(cols)

    def add(self, cols: list[Column]) -> None:
        """Append columns to the LP."""
        rows = [sorted([self.row[t] for t in col.tiers] + [self.row[("cand", col.cand)]]) for col in cols]
        ptr = np.concatenate([[0], np.cumsum([len(r) for r in rows])]).astype(np.int64)
        idx = np.fromiter((i for r in rows for i in r), dtype=np.int64, count=int(ptr[-1]))
        a = csc_array((np.ones(len(idx)), idx, ptr), shape=(len(self.row), len(cols)))
        self.lp.add(np.array([self.group.cost(c) for c in cols], dtype=float), a)
        self.cols += cols

    def solve(self) -> tuple[Duals, float, np.ndarray]:
        """The duals (clipped at 0), the value and the solution of the LP over the columns so far."""
        value, x, y = self.lp.solve()
        n = len(self.tiers)
        return (
            Duals(
                {t: max(0.0, float(v)) for t, v in zip(self.tiers, y[:n], strict=True)},
                {c: max(0.0, -float(v)) for c, v in zip(self.cands, y[n:], strict=True)},
            ),
            value,
            x,
        )


def _mix(a: Duals, b: Duals, weight: float) -> Duals:
    """Weight * a + (1 - weight) * b."""
    return Duals(
        {t: weight * v + (1 - weight) * b.tiers[t] for t, v in a.tiers.items()},
        {c: weight * v + (1 - weight) * b.cands[c] for c, v in a.cands.items()},
    )


def _generate(
    group: Group,
    cols: list[Column],
    deadline: float,
    lp: _Master | None = None,
    rounds: float = math.inf,
    cutoff: float = math.inf,
    gap: float = _CG_GAP,
) -> tuple[Duals, float, bool, np.ndarray]:
    """Column generation: the duals with the best Lagrangian bound found, that bound, whether it converged, and
    the last LP solution over `cols` (which grows by the columns generated). It also stops once the bound
    reaches `cutoff` (the cost of a known plan: nothing cheaper is left to find); it has converged when the bound
    is within the relative `gap` of the LP value.

    Any duals give a valid bound, so the loop may stop at the deadline; it prices at a mix of the best duals
    and the LP's (Wentges smoothing), which needs far fewer rounds than the LP's duals alone.
    """
    known, center, bound = set(cols), None, -math.inf
    lp = lp or _Master(group, cols)
    while True:
        duals, value, x = lp.solve()
        new: list[Column] = []
        for at in [_mix(center, duals, _SMOOTHING), duals] if center else [duals]:
            new, lagrange = price_columns(group, at)
            if lagrange > bound:
                center, bound = at, lagrange
            new = [c for c in new if c not in known]
            if new:
                break
        converged = not new or value - bound <= gap * abs(value)
        rounds -= 1
        if converged or time.perf_counter() > deadline or rounds <= 0 or bound >= cutoff - REL_GAP * cutoff:
            return (center if center is not None else duals), bound, converged, x
        known.update(new)
        cols += new
        lp.add(new)


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


def _assignment_dive(group: Group, cols: list[Column], deadline: float, fix_at: float) -> dict[int, int]:
    """Tier -> candidate from diving on the column LP: fix the tiers the LP serves mostly on one candidate to
    it (no other candidate may serve them), price new pools, repeat until every tier sits on one candidate;
    at the deadline, each tier left goes where the LP serves most of it. A plan without proof."""
    cols = list(cols)
    lp = _Master(group, cols)
    slots = {c: {k: list(ts) for k, ts in kinds.items()} for c, kinds in group.slots.items()}
    while True:
        sub = replace(group, slots=slots)
        _, _, _, x = _generate(sub, cols, deadline, lp, _DIVE_ROUNDS)
        share: dict[int, dict[int, float]] = {t: {} for t in group.units}
        for col, v in zip(cols, x, strict=True):
            for t in col.tiers if v > 1e-9 else ():
                share[t][col.cand] = share[t].get(col.cand, 0.0) + float(v)
        top = {t: max(sh.items(), key=lambda kv: kv[1]) for t, sh in share.items() if sh}
        if len(top) < len(share) or all(v > 1 - 1e-6 for _, v in top.values()) or time.perf_counter() > deadline:
            return {t: c for t, (c, _) in top.items()}  # a tier left out (no LP solution): the caller skips it
        open_ = {t: cv for t, cv in top.items() if cv[1] <= 1 - 1e-6}
        fix = {t: c for t, (c, v) in open_.items() if v >= fix_at} or dict(
            [max(((t, c) for t, (c, _) in open_.items()), key=lambda tc: open_[tc[0]][1])]
        )
        for t, c in fix.items():
            for other, kinds in slots.items():
                if other != c:
                    for k in kinds:
                        kinds[k] = [u for u in kinds[k] if u != t]
        lp.lp.forbid(
            [
                j
                for j, col in enumerate(cols)
                if any(t in col.tiers and fix[t] != col.cand for t in col.tiers & fix.keys())
            ]
        )
        # Per candidate, one pool with every tier it may still serve: keeps the LP feasible.
        have = set(cols)
        full = [c for c in _full(replace(group, slots=slots)) if c.tiers and c not in have]
        cols += full
        lp.add(full)


def solve_group(group: Group, time_limit: float) -> GroupPlan:
    """The cheapest pools for one group found within `time_limit` seconds, with a proven lower bound."""
    deadline = time.perf_counter() + time_limit
    start = _greedy(group)
    generated = list({*start, *_full(group)})
    duals, bound, converged, x = _generate(group, generated, time.perf_counter() + time_limit * _CG_SHARE)
    best, proven = Cover(tuple(start), sum(group.cost(c) for c in start), False), bound
    dive_end = time.perf_counter() + _DIVE_SHARE * (deadline - time.perf_counter())
    dived = [_assignment_dive(group, generated, dive_end, fix) for fix in _DIVE_FIX]
    for where in (*dived, rounded(group, generated, x), {t: c.cand for c in start for t in c.tiers}):
        if len(where) == len(group.units):
            found = improve(group, where, deadline)
            cost = sum(group.cost(c) for c in found)
            best = Cover(tuple(found), cost, False) if cost < best.cost - 1e-9 else best
    solved, too_many, slack = 0.0, math.inf, _FIRST_SLACK * bound if converged else 0.0
    searched, failed = False, 0  # whether a cover program over listed pools ran; listings that held too many
    while best.cost > bound + REL_GAP * best.cost and time.perf_counter() < deadline and slack:
        # Every pool of a plan costing at most bound + slack has reduced cost <= slack, so with all of
        # them listed, the cover program's optimum is the true optimum whenever it is within the slack.
        listed = enumerate_columns(group, duals, slack, _ENUM_LIMIT)
        if listed is None:  # too many pools: half the slack, at most twice, then the compact model
            failed += 1
            too_many, slack = slack, _next_slack(solved, slack, math.inf, bound) if failed < _ENUM_TRIES else 0.0
            continue
        searched = True
        covered = solve_cover(
            within_plan(within_gap(group, duals, slack), best.columns),
            listed + list(best.columns),
            deadline - time.perf_counter(),
            REL_GAP,
            list(best.columns),
            bound,
        )
        best = covered if covered is not None and covered.cost < best.cost else best
        if covered is not None and covered.optimal and covered.cost <= bound + slack:
            return GroupPlan(best.columns, best.cost, best.cost, True)
        if covered is not None:  # no plan within the slack is missing, so the program's bound holds up to it
            proven = max(proven, min(covered.bound, bound + slack))
        solved, slack = slack, _next_slack(slack, too_many, best.cost - bound + REL_GAP * best.cost, bound)
    if not searched and time.perf_counter() < deadline:  # the compact model gets the time left
        covered = solve_cover(
            replace(group, direct=set(group.slots)),
            [],
            deadline - time.perf_counter(),
            REL_GAP,
            list(best.columns),
            bound,
        )
        best = covered if covered is not None and covered.cost < best.cost else best
        proven = max(proven, covered.bound if covered is not None else proven)
    proven = next_cost(set(group.price.values()), proven)
    if searched and best.cost > proven + REL_GAP * best.cost and time.perf_counter() < deadline:
        branched = branch_and_price(group, generated, best.columns, best.cost, proven, deadline, REL_GAP)
        best = Cover(branched.columns, branched.cost, False) if branched.cost < best.cost else best
        proven = max(proven, branched.bound)
    return GroupPlan(best.columns, best.cost, min(proven, best.cost), best.cost <= proven + REL_GAP * best.cost)


def _next_slack(solved: float, too_many: float, needed: float, bound: float) -> float:
    """The next slack to list: double the last solved one, up to what the proof needs, below one that listed
    too many pools; 0 when no slack is left to try."""
    if too_many < math.inf:
        low = solved or too_many / 2
        nxt = (low + too_many) / 2 if solved else low
    else:
        nxt = min(2 * solved, needed)
    nxt = min(nxt, needed)
    return 0.0 if nxt <= solved * 1.05 or nxt < REL_GAP * bound else nxt
