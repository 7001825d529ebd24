"""Solve one tier group exactly: column generation for the bound, enumeration and a cover program for the plan.

1. Column generation (an LP on one `highspy` model, grown by columns and re-solved from its last basis; exact
   knapsack pricing, at most one pool per candidate) gives a lower bound L on the cost of any plan, with tier
   and candidate duals.
2. A first plan: dives on that LP (fix the tiers it serves mostly on one candidate, price again, repeat; one
   for a group branch-and-price may search with 1.5 s or more left, else two), LP rounding and the greedy plan,
   each improved by a local search (`local.improve`); the best one starts every integer program below, so a
   time limit still returns a good plan.
3. Every pool of a plan costing at most L + s has reduced cost <= s. The planner lists every such MIG pool
   for a small slack s (0.4 % of L, halved while the listing is too long) and solves the cover program over
   them (`cover.solve_cover`). When that program's optimum is within L + s, it is the true optimum: proven.
   Otherwise s doubles, up to the gap of the best plan found, until the time limit. A group of `_REPACK_TIERS`
   or more that branch-and-price searches (step 5) gets no listing: its first plan is repacked instead, the
   compact model over the candidates that plan uses (`_repacked`).
4. When column generation does not converge in its share of the time, or no listing holds few enough pools
   (large groups), the compact model, where every pool is modelled directly, gets the time left, unless
   branch-and-price (step 5) is there to take it.
5. The bound is rounded up to the least cost whole nodes can add up to (`branch.next_cost`). With at most three
   node prices, steps 3-4 run on a second thread; when they have not ended after `_RACE_AFTER` seconds,
   branch-and-price (`branch.branch_and_price`) joins them on the main thread, the two sharing plans and
   bounds through a `highs.Race` (HiGHS releases the GIL while it solves); the listings then end after the
   integer program they are solving, and branch-and-price's second lane takes their core. When the listings
   stop early without a proof, branch-and-price gets the time left.
"""

from __future__ import annotations

import contextlib
import math
import time
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import NamedTuple

import numpy as np
from scipy.sparse import csc_array, csr_array

from . import remote
from .branch import LATTICE_PRICES, branch_and_price, next_cost
from .columns import Column, Cut, Duals, Group, enumerate_columns, merged, price_columns, within_gap, within_plan
from .cover import Cover, solve_cover
from .cuts import coefficient
from .highs import ColumnLP, Race, SolverThread
from .local import improve, rounded

__all__ = ["GroupPlan", "solve_group", "REL_GAP", "merged", "root", "greedy_plan"]

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
# A group that branch-and-price may search (at most `LATTICE_PRICES` node prices), with at least `_ONE_DIVE_FROM`
# seconds left, gets the first dive only: the search's LP roundings and local search find plans as good within
# its first branches, and on the 64-tier scale benchmark's large groups the second dive held the main thread
# 0.4-0.8 s before the search could start. Those 20 groups searched alone, two sweeps: 78.7 / 78.5 s in all against
# 83.6 / 84.6 s; seed 16 8.4-11.4 s in ten runs against 10.1-13.2 s. Whole plans of seeds 3 / 5 / 6 limited to
# 1 s came out 0.3-0.8 % dearer with one dive (the search gets too little time to make up for it), limited to 2 s
# as cheap or 0.3-0.6 % cheaper (figures in benchmarks/RESULTS.md).
_DIVE_FIX_SEARCHED = _DIVE_FIX[:1]
_ONE_DIVE_FROM = 1.5  # seconds left when the dives start
_ARTIFICIAL = 1e3  # $/hour per node, as a multiple of the dearest node, of going outside a branch's node totals
_WORKER_TIERS = 40  # tiers in a group, at least, to start branch-and-price's worker process ahead (`remote`)
_WORKER_AFTER = 2.0  # seconds of time limit, at least, for that (with less, it would seldom get to work)
_RACE_AFTER = 0.5  # seconds the listings run alone before branch-and-price joins them
_FIRST_SLACK = 4e-3  # the first listing holds the pools within 0.4 % of the bound; then the slack doubles
# A group of at least this many tiers that branch-and-price searches gets its first plan repacked instead of the
# listings (`_repacked`), for at most `_REPACK_SECONDS`.
_REPACK_TIERS = 40
_REPACK_SECONDS = 3.0


@dataclass(frozen=True)
class GroupPlan:
    """The pools of one group, their cost and the proven lower bound on it."""

    columns: tuple[Column, ...]
    cost: float
    bound: float
    optimal: bool


class _Master:
    """The column model's LP: a cover row (>= 1) per tier, a convexity row (<= 1, or = 1 for a candidate a branch
    gave a pool: `set_used`) per candidate, grown by columns on one HiGHS instance that re-optimises from its last
    basis.

    With `counters` (candidate -> the counters it counts towards, numbered from 0), one more row per counter
    counts the nodes of its candidates' pools, between bounds a branch sets (`box`); each such row has two
    artificial columns priced at `_ARTIFICIAL` per node, so the LP stays feasible and a node whose box no plan
    fits gets a bound far above any plan (a plan of the box has them at 0, so the bound holds for all of them).
    """

    def __init__(
        self,
        group: Group,
        cols: list[Column],
        counters: dict[int, list[int]] | None = None,
        cuts: Sequence[Cut] = (),
    ) -> None:
        self.group, self.tiers, self.cands = group, sorted(group.units), sorted(group.slots)
        self.row: dict[int | tuple[str, int], int] = {t: i for i, t in enumerate(self.tiers)}
        self.row.update({("cand", c): len(self.tiers) + i for i, c in enumerate(self.cands)})
        self.counters = counters or {}
        count = 1 + max((k for ks in self.counters.values() for k in ks), default=-1)
        self.box_row = len(self.row)  # the first class row
        self.lp = ColumnLP(
            np.concatenate([np.ones(len(self.tiers)), np.full(len(self.cands) + count, -np.inf)]),
            np.concatenate([np.full(len(self.tiers), np.inf), np.ones(len(self.cands)), np.full(count, np.inf)]),
        )
        self.extra = 2 * count  # artificial columns, ahead of the pools
        if count:
            rows = np.repeat(np.arange(self.box_row, self.box_row + count), 2)
            big = _ARTIFICIAL * max(group.price.values())
            self.lp.add(
                np.full(self.extra, big),
                csc_array(
                    (np.tile([1.0, -1.0], count), rows, np.arange(self.extra + 1)),
                    shape=(self.box_row + count, self.extra),
                ),
            )
        self.box: tuple[tuple[float, float], ...] = ((0.0, math.inf),) * count
        self.used: frozenset[int] = frozenset()  # candidates whose convexity row is an equality (`set_used`)
        self.cuts: list[Cut] = []  # subset-row cuts, one row each after the counters' (>= 2)
        self._on: dict[int, list[int]] = {}  # tier -> the cuts it is in
        self.cols: list[Column] = []
        self.add(cols)
        self.add_cuts(list(cuts))

    def add(self, cols: list[Column]) -> None:
        """Append columns to the LP."""
        cut_row = self.box_row + len(self.box)
        entries = [
            sorted(
                [(self.row[t], 1.0) for t in col.tiers]
                + [(self.row[("cand", col.cand)], 1.0)]
                + [(self.box_row + k, float(col.nodes)) for k in self.counters.get(col.cand, ())]
                + [(cut_row + r, float(v)) for r, v in self._in_cuts(col).items()]
            )
            for col in cols
        ]
        n_rows = cut_row + len(self.cuts)
        ptr = np.concatenate([[0], np.cumsum([len(e) for e in entries])]).astype(np.int64)
        idx = np.fromiter((i for e in entries for i, _ in e), dtype=np.int64, count=int(ptr[-1]))
        val = np.fromiter((v for e in entries for _, v in e), dtype=float, count=int(ptr[-1]))
        a = csc_array((val, idx, ptr), shape=(n_rows, len(cols)))
        self.lp.add(np.array([self.group.cost(c) for c in cols], dtype=float), a)
        self.cols += cols

    def _in_cuts(self, col: Column) -> dict[int, int]:
        """Cut -> the column's coefficient in it, for the cuts it has one in."""
        touched = {r for t in col.tiers for r in self._on.get(t, ())}
        return {r: coefficient(col.tiers, self.cuts[r]) for r in touched}

    def add_cuts(self, cuts: list[Cut]) -> None:
        """Append a row per subset-row cut, over every column so far."""
        first = len(self.cuts)
        for r, cut in enumerate(cuts, first):
            for t in cut:
                self._on.setdefault(t, []).append(r)
        self.cuts += cuts
        rows, idx, val = [], [], []
        for j, col in enumerate(self.cols, self.extra):
            for r, v in self._in_cuts(col).items():
                if r >= first:
                    rows.append(r - first)
                    idx.append(j)
                    val.append(float(v))
        a = csr_array((val, (rows, idx)), shape=(len(cuts), self.extra + len(self.cols)))
        self.lp.add_rows(np.full(len(cuts), 2.0), np.full(len(cuts), np.inf), a)

    def set_box(self, box: tuple[tuple[float, float], ...]) -> None:
        """Bound each price class's node total: (low, high) per class."""
        self.box = box
        self.lp.row_bounds(self.box_row, [lo for lo, _ in box], [hi for _, hi in box])

    def set_used(self, cands: frozenset[int]) -> None:
        """Make each of `cands` have exactly one pool (its convexity row = 1), the others at most one."""
        if cands != self.used:
            self.used = cands
            first = self.row[("cand", self.cands[0])] if self.cands else 0
            self.lp.row_bounds(first, [1.0 if c in cands else -math.inf for c in self.cands], [1.0] * len(self.cands))

    def allow_only(self, allowed: np.ndarray) -> None:
        """Price the pools where `allowed` is False out of the LP: each costs as much more as the artificial
        columns' node, and the pools `forbid` fixed are free again. A solution that still uses one of them is not
        the node's: the caller fixes those at 0 and solves again (`branch`)."""
        self.lp.allow_only(
            np.concatenate([np.ones(self.extra, dtype=bool), allowed]), _ARTIFICIAL * max(self.group.price.values())
        )

    def forbid(self, pools: np.ndarray) -> None:
        """Fix these pools (positions in `cols`) at 0 until the next `allow_only`."""
        self.lp.forbid([self.extra + int(j) for j in pools])

    def totals(self, x: np.ndarray) -> list[float]:
        """Nodes per counter in the LP solution `x`."""
        out = [0.0] * len(self.box)
        for j in np.flatnonzero(x > 1e-9):
            for k in self.counters.get(self.cols[j].cand, ()):
                out[k] += float(x[j]) * self.cols[j].nodes
        return out

    def solve(self) -> tuple[Duals, float, np.ndarray]:
        """The duals (clipped at 0), the value and the solution of the LP over the columns so far."""
        value, x, y = self.lp.solve()
        n, k, cut_row = len(self.tiers), len(self.cands), self.box_row + len(self.box)
        per_counter, offset = [], 0.0
        big = _ARTIFICIAL * max(self.group.price.values())
        for (lo, hi), v in zip(self.box, y[n + k : cut_row], strict=True):
            # >= 0 when the low bound binds; a dual toward an infinite bound gives no bound, so it is cut to 0
            v = min(max(float(v), -big), big)
            v = 0.0 if (v > 0 and lo <= 0) or (v < 0 and hi == math.inf) else v
            per_counter.append(-v)
            offset += v * (lo if v > 0 else hi) if v else 0.0
        return (
            Duals(
                {t: max(0.0, float(v)) for t, v in zip(self.tiers, y[:n], strict=True)},
                {
                    c: -float(v) if c in self.used else max(0.0, -float(v))
                    for c, v in zip(self.cands, y[n : n + k], strict=True)
                },
                {c: sum(per_counter[k] for k in ks) for c, ks in self.counters.items()},
                offset,
                tuple((cut, max(0.0, float(v))) for cut, v in zip(self.cuts, y[cut_row:], strict=True)),
            ),
            value,
            x[self.extra :],
        )


def _mix(a: Duals, b: Duals, weight: float) -> Duals:
    """Weight * a + (1 - weight) * b."""
    return Duals(
        {t: weight * v + (1 - weight) * b.tiers[t] for t, v in a.tiers.items()},
        {c: weight * v + (1 - weight) * b.cands[c] for c, v in a.cands.items()},
        {c: weight * v + (1 - weight) * b.per_node[c] for c, v in a.per_node.items()},
        weight * a.offset + (1 - weight) * b.offset,
        tuple((cut, weight * v + (1 - weight) * w) for (cut, v), (_, w) in zip(a.cuts, b.cuts, strict=True)),
    )


def _generate(
    group: Group,
    cols: list[Column],
    deadline: float,
    lp: _Master | None = None,
    rounds: float = math.inf,
    cutoff: float = math.inf,
    gap: float = _CG_GAP,
    known: set[Column] | None = None,
    per_cand: int = 6,
    floor: float = -math.inf,
) -> tuple[Duals, float, bool, np.ndarray]:
    """Column generation: the duals with the best Lagrangian bound found, that bound, whether it converged, and
    the last LP solution over `cols` (which grows by the columns generated). It also stops once the bound
    reaches `cutoff` (the cost of a known plan: nothing cheaper is left to find); it has converged when the bound
    is within the relative `gap` of the LP value. `known`, when given, is the set of `cols` (kept up to date here);
    each round adds up to `per_cand` columns per candidate.

    Any duals give a valid bound, so the loop may stop at the deadline; it prices at a mix of the best duals
    and the LP's (Wentges smoothing), which needs far fewer rounds than the LP's duals alone.

    `floor` is a bound the caller already knows for every plan (a branch's: its parent's, rounded up to a cost
    whole nodes add up to). Once the LP over `cols` is at or below it, no column pricing finds can lift the
    bound past it (the LP over every column is lower still): that solution is returned at once, with `floor`
    as the bound and as converged. In a box where every price class's node total is pinned, every plan costs
    the same, so each branch whose LP needs no artificial column or pool priced out stops at its first solve.
    """
    known = set(cols) if known is None else known
    center, bound = None, -math.inf
    lp = lp or _Master(group, cols)
    while True:
        duals, value, x = lp.solve()
        if lp.lp.optimal and value <= floor + 1e-9 * max(1.0, abs(floor)):
            return duals, floor, True, x
        new: list[Column] = []
        priced = True  # a round cut short at the deadline (`price_columns`) shows neither a bound nor convergence
        for at in [_mix(center, duals, _SMOOTHING), duals] if center else [duals]:
            new, lagrange = price_columns(group, at, per_cand, deadline)
            if lagrange == -math.inf:
                priced = False
                break
            if lagrange > bound:
                center, bound = at, lagrange
            new = [c for c in new if c not in known]
            if new:
                break
        # A value and solution HiGHS did not prove optimal say nothing about convergence (the bound still holds:
        # any duals give one); a search node then stays open rather than taking its solution as its optimum.
        converged = priced and lp.lp.optimal and (not new or value - bound <= gap * abs(value))
        rounds -= 1
        if not new or converged or time.perf_counter() > deadline or rounds <= 0 or bound >= cutoff - REL_GAP * cutoff:
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


def greedy_plan(group: Group) -> GroupPlan:
    """Each tier on the candidate that serves it alone most cheaply, with no solver and no bound: for a group
    reached after the time limit (1,000 groups had each taken a solver call of about 6 ms past it)."""
    columns = tuple(_greedy(group))
    return GroupPlan(columns, sum(group.cost(c) for c in columns), 0.0, False)


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


def _searchable(group: Group) -> bool:
    """Whether branch-and-price may search `group`: its node prices are few enough for the cost lattice."""
    return len(set(group.price.values())) <= LATTICE_PRICES


def solve_group(group: Group, time_limit: float) -> GroupPlan:
    """The cheapest pools for one group found within `time_limit` seconds, with a proven lower bound."""
    deadline = time.perf_counter() + time_limit
    # Branch-and-price's second lane runs in a worker process; for a group large enough to need it, the process
    # starts now, and its imports take the core the root's column generation leaves idle.
    ahead = None
    if len(group.units) >= _WORKER_TIERS and time_limit >= _WORKER_AFTER and _searchable(group) and remote.enabled():
        with contextlib.suppress(OSError):
            ahead = remote.Worker()
    try:
        return _solve_group(group, deadline, ahead)
    finally:
        if ahead is not None:  # ended by branch-and-price when it took it; else not needed
            ahead.kill()
            ahead.close()


class Root(NamedTuple):
    """Steps 1 and 2 of a group's plan: the pools generated, the root LP's duals, its bound and whether column
    generation converged, and the first plan."""

    generated: list[Column]
    duals: Duals
    bound: float
    converged: bool
    best: Cover


def root(group: Group, deadline: float) -> Root:
    """The column LP's bound (column generation, at most `_CG_SHARE` of the time) and the first plan: the greedy
    plan, the dives (one when branch-and-price may follow with time to work) and the LP's rounding, each improved
    by the local search."""
    time_limit = deadline - time.perf_counter()
    start = _greedy(group)
    generated = list({*start, *_full(group)})
    duals, bound, converged, x = _generate(group, generated, time.perf_counter() + time_limit * _CG_SHARE)
    best = Cover(tuple(start), sum(group.cost(c) for c in start), False)
    dive_end = time.perf_counter() + _DIVE_SHARE * (deadline - time.perf_counter())
    searched = _searchable(group) and deadline - time.perf_counter() >= _ONE_DIVE_FROM
    fixes = _DIVE_FIX_SEARCHED if searched else _DIVE_FIX
    # Past the time limit no dive starts: a dive prices at least once, and a pricing round at 1,000 seat tiers
    # takes seconds; the greedy plan and the LP's rounding still give a plan.
    dived = [_assignment_dive(group, generated, dive_end, fix) for fix in fixes if time.perf_counter() < dive_end]
    for where in (*dived, rounded(group, generated, x), {t: c.cand for c in start for t in c.tiers}):
        if len(where) == len(group.units):
            found = improve(group, where, deadline)
            cost = sum(group.cost(c) for c in found)
            best = Cover(tuple(found), cost, False) if cost < best.cost - 1e-9 else best
    return Root(generated, duals, bound, converged, best)


def _solve_group(group: Group, deadline: float, ahead: remote.Worker | None) -> GroupPlan:
    """`solve_group`, with a worker process for branch-and-price started ahead (or None)."""
    generated, duals, bound, converged, best = root(group, deadline)
    prices = set(group.price.values())
    if not _searchable(group):  # no cost lattice: the listings (or the compact model) alone
        best, proven, optimal = _listings(group, duals, bound, converged, best, deadline, None)
        proven = best.cost if optimal else proven
        return GroupPlan(best.columns, best.cost, min(proven, best.cost), _proven(best.cost, proven))
    # The listings' integer programs run on a second thread (HiGHS releases the GIL while it solves) beside
    # branch-and-price; each stops when the other's plan meets its bound or the other proves the optimum.
    race = Race(best.cost, next_cost(prices, bound))
    out: list[tuple[Cover, float, bool] | BaseException] = []

    def listings() -> None:
        try:
            out.append(_listings(group, duals, bound, converged, best, deadline, race))
        except BaseException as exc:  # handed to the main thread
            out.append(exc)
        finally:
            race.listing = False

    # On an interrupt, this thread waits for that one to stop at HiGHS's next callback (race.stop) before it
    # raises: a thread still inside HiGHS when the process exits aborts it (`highs.SolverThread`).
    worker = SolverThread(listings, "gpu-platform-listings")
    race.listing = True
    branched = None
    try:
        worker.start()
        # The listings alone first, for a moment: most groups end there, with the same plan on every run.
        if not worker.wait(timeout=min(_RACE_AFTER, max(deadline - time.perf_counter(), 0.0))):
            race.joined = time.perf_counter()
            branched = branch_and_price(
                group, generated, best.columns, best.cost, race.bound, deadline, REL_GAP, race, worker=ahead
            )
            ahead = None
            race.stop = True
        worker.wait()
    except BaseException:  # an interrupt: the other thread's search stops at its next callback
        race.stop = True
        worker.wait_out()
        raise
    worker.join()
    if isinstance(out[0], BaseException):
        raise out[0]
    listed, proven, optimal = out[0]
    if branched is None and not optimal and time.perf_counter() < deadline:  # the listings stopped short
        floor = next_cost(prices, proven)
        branched = branch_and_price(
            group, generated, listed.columns, listed.cost, floor, deadline, REL_GAP, worker=ahead
        )
    best = listed
    if branched is not None:
        proven = max(proven, branched.bound)  # it may rest on the listings' plan, which stays when no dearer
        best = Cover(branched.columns, branched.cost, False) if branched.cost < listed.cost else listed
    proven = next_cost(prices, proven)
    if optimal and best is listed:
        return GroupPlan(best.columns, best.cost, best.cost, True)
    return GroupPlan(best.columns, best.cost, min(proven, best.cost), _proven(best.cost, proven))


def _listings(
    group: Group, duals: Duals, bound: float, converged: bool, best: Cover, deadline: float, race: Race | None
) -> tuple[Cover, float, bool]:
    """Steps 3 and 4: list the MIG pools within a slack of the bound and solve the cover program over them,
    or the compact model when no listing holds few enough pools; for a large group branch-and-price searches
    (`race`, `_REPACK_TIERS`), the repack alone. (best plan, proven bound, proven optimal)."""
    proven = bound
    solved, too_many, slack = 0.0, math.inf, _FIRST_SLACK * bound if converged else 0.0
    searched, failed = False, 0  # whether a cover program over listed pools ran; listings that held too many

    def stopped() -> bool:
        return race is not None and race.stop

    if race is not None and len(group.units) >= _REPACK_TIERS:
        # A large group branch-and-price searches: its first plan repacked, and no listing. On the 64-tier scale
        # benchmark's large groups the listings took 2.3-3.4 s of a core and improved no first plan, while the
        # search's second lane waited for that core; the repack took 12 of 20 first plans lower, 3 of them to
        # the optimum. The 20 whole plans, two sweeps: 152 / 194 s against 198 s with the listings and no
        # repack, 170 / 219 s with both (benchmarks/RESULTS.md).
        if not _proven(best.cost, bound):
            best = _repacked(group, best, bound, deadline, race)
        optimal = _proven(best.cost, bound)
        race.stop = race.stop or optimal
        return best, best.cost if optimal else bound, optimal
    while not _proven(best.cost, bound) and time.perf_counter() < deadline and slack and not stopped():
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
            race,
        )
        best = covered if covered is not None and covered.cost < best.cost else best
        if covered is not None and covered.optimal and covered.cost <= bound + slack:
            if race is not None:
                race.stop = True
            return best, best.cost, True
        if covered is not None:  # no plan within the slack is missing, so the program's bound holds up to it
            proven = max(proven, min(covered.bound, bound + slack))
        if race is not None and race.branching:
            # Branch-and-price has joined: it proves from here, and its second lane takes this thread's core. A
            # further, larger program would hold the core for long: at the root of a 7,000-pool program HiGHS ran
            # 8 s without an interrupt callback, in the sub-MIPs of its heuristics (64-tier scale benchmark,
            # seed 4; a program in a race now runs none, `highs._SUB_MIPS`). Figures in benchmarks/RESULTS.md.
            break
        solved, slack = slack, _next_slack(slack, too_many, best.cost - bound + REL_GAP * best.cost, bound)
    # The compact model gets the time left, unless branch-and-price is there to take it (a race), with both its
    # lanes: at 128 tiers, where no listing is small enough, the scale benchmark's 60 s gaps stayed where they
    # were beside the compact model (0.26-0.44 %; benchmarks/RESULTS.md), and a core is no longer held by a
    # program that cannot be interrupted inside its sub-MIPs.
    if not searched and time.perf_counter() < deadline and not stopped() and race is None:
        covered = solve_cover(
            _compact(group, set(group.slots)),
            [],
            deadline - time.perf_counter(),
            REL_GAP,
            list(best.columns),
            bound,
            race,
        )
        best = covered if covered is not None and covered.cost < best.cost else best
        proven = max(proven, covered.bound if covered is not None else proven)
        if covered is not None and covered.optimal and race is not None:
            race.stop = True
    # A first plan already at the bound (a small group, often) is proven here: no search follows.
    return best, proven, _proven(best.cost, proven)


def _repacked(group: Group, best: Cover, bound: float, deadline: float, race: Race) -> Cover:
    """`best`, or a cheaper plan on the candidates its pools use: the compact model (every pool modelled directly)
    over those few candidates, which moves any tier between them and sizes their pools anew, started from
    `best` and stopped like the listings' programs (`race`). Its cost goes to the race at once: branch-and-price
    prunes with it (seed 4 of the 64-tier scale benchmark, one lane: 316 branches from its first plan, 125 from
    the optimum, which this repack finds in about a second)."""
    limit = min(_REPACK_SECONDS, deadline - time.perf_counter())
    if limit <= 0:
        return best
    covered = solve_cover(
        _compact(group, {col.cand for col in best.columns}), [], limit, REL_GAP, list(best.columns), bound, race
    )
    if covered is None or covered.cost >= best.cost - 1e-9 * best.cost:
        return best
    race.best = min(race.best, covered.cost)
    return Cover(covered.columns, covered.cost, False)


def _compact(group: Group, cands: set[int]) -> Group:
    """The group as the compact model takes it, on the candidates `cands`: a node count per candidate and a route
    per tier and candidate (`cover.solve_cover`, `direct`). A whole group keeps its slots; narrowed to some of
    its candidates it is a new group (`Group`), without the node minimums of a branch, which may name others."""
    if cands == set(group.slots):
        return replace(group, direct=cands)
    return replace(group, slots={c: group.slots[c] for c in cands}, direct=cands, node_min={}, wider=None)


def _proven(cost: float, bound: float) -> bool:
    """Whether a plan of `cost` is proven optimal by `bound`, a lower bound on every plan (to `REL_GAP`)."""
    return cost <= bound + REL_GAP * cost


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
