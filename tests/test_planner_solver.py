"""The planner's solver pieces: HiGHS with a starting plan and an outside bound, the column LP grown in place,
the dive and local search that give the first plan. Each is checked against an independent computation."""

from __future__ import annotations

import itertools
import math
import random
import time
from collections.abc import Callable
from dataclasses import replace
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from scipy.optimize import linprog
from scipy.sparse import csc_array

from gpu_platform.planner import master
from gpu_platform.planner.branch import LATTICE_PRICES, branch_and_price
from gpu_platform.planner.candidates import build_candidates
from gpu_platform.planner.columns import merged, split_groups, without_dominated
from gpu_platform.planner.cover import Cover
from gpu_platform.planner.demand import catalog_of
from gpu_platform.planner.highs import ColumnLP, Race, solve_mip
from gpu_platform.planner.local import _changes, _State, improve
from gpu_platform.planner.solve import _one_pool_per_tier, _pairs
from helpers.planner import assert_valid_columns, demand, generated_demand, groups


def _brute_min(cost, a, lo, hi, col_hi):
    best = math.inf
    for x in itertools.product(*(range(int(u) + 1) for u in col_hi)):
        row = a @ np.array(x)
        if np.all(row >= lo - 1e-9) and np.all(row <= hi + 1e-9):
            best = min(best, float(cost @ np.array(x)))
    return best


@settings(max_examples=25, deadline=None)
@given(st.lists(st.tuples(st.integers(1, 9), st.integers(1, 5)), min_size=2, max_size=6), st.integers(5, 20))
def test_solve_mip_is_exact_and_its_bound_is_a_bound(items, need):
    # Cover `need` units with items (cost, size), each used at most twice.
    cost = np.array([c for c, _ in items], dtype=float)
    a = csc_array(np.array([[s for _, s in items]], dtype=float))
    lo, hi, col_hi = np.array([float(need)]), np.array([np.inf]), np.full(len(items), 2.0)
    best = _brute_min(cost, a, lo, hi, col_hi)
    res = solve_mip(cost, a, lo, hi, col_hi, 10, 1e-9)
    if best == math.inf:
        assert res.status == "infeasible"
        return
    assert res.status == "optimal" and res.cost == pytest.approx(best) and res.bound <= best + 1e-6
    # Started from the all-max plan: same optimum.
    start = solve_mip(cost, a, lo, hi, col_hi, 10, 1e-9, start=col_hi.copy())
    assert start.cost == pytest.approx(best)


def test_solve_mip_stops_when_the_incumbent_meets_an_outside_bound():
    # Two items of cost 3 and 5 for sizes 2 and 3, need 6: optimum 9 (three of the first). Told that nothing
    # costs less than 9, the search may stop at once with the starting plan 3 x item 0 and call it optimal.
    cost, a = np.array([3.0, 5.0]), csc_array(np.array([[2.0, 3.0]]))
    res = solve_mip(
        cost,
        a,
        np.array([6.0]),
        np.array([np.inf]),
        np.array([5.0, 5.0]),
        10,
        1e-9,
        start=np.array([3.0, 0.0]),
        floor=9.0,
    )
    assert res.status == "optimal" and res.cost == pytest.approx(9.0) and res.bound == pytest.approx(9.0)
    # A floor below the optimum is only a floor: the bound reported stays at most the cost.
    low = solve_mip(cost, a, np.array([6.0]), np.array([np.inf]), np.array([5.0, 5.0]), 10, 1e-9, floor=1.0)
    assert low.cost == pytest.approx(9.0) and 1.0 <= low.bound <= 9.0 + 1e-9


def _knapsack_cover(n=40, seed=3):
    rng = np.random.default_rng(seed)
    weights = rng.integers(10, 60, (6, n)).astype(float)
    return (
        rng.integers(50, 100, n).astype(float),
        csc_array(weights),
        weights.sum(axis=1) / 2.3,
        np.full(6, np.inf),
        np.ones(n),
    )


def test_the_race_gets_each_incumbent_and_its_bound_stops_the_search():
    cost, a, lo, hi, col_hi = _knapsack_cover()
    alone = solve_mip(cost, a, lo, hi, col_hi, 30, 1e-9)
    assert alone.status == "optimal"
    # Another search proved the optimum: this one stops as soon as its incumbent meets it, and says optimal.
    race = Race(best=math.inf, bound=alone.cost)
    told = solve_mip(cost, a, lo, hi, col_hi, 30, 1e-9, race=race)
    assert told.status == "optimal" and told.cost == pytest.approx(alone.cost)
    assert race.best == pytest.approx(told.cost)  # every incumbent was published; the last is the plan
    # A bound below the optimum stops nothing early and is never reported above the plan.
    low = Race(best=math.inf, bound=alone.cost - 50)
    res = solve_mip(cost, a, lo, hi, col_hi, 30, 1e-9, race=low)
    assert res.cost == pytest.approx(alone.cost) and alone.cost - 50 <= res.bound <= res.cost + 1e-9
    # Told to stop, it stops at its first callback, keeping its starting plan.
    stopped = Race(best=math.inf, bound=-math.inf, stop=True)
    res = solve_mip(cost, a, lo, hi, col_hi, 30, 1e-9, start=col_hi.copy(), race=stopped)
    assert res.status == "limit" and res.cost == pytest.approx(cost.sum())


def test_an_integer_program_in_a_race_runs_no_sub_mip_heuristic(monkeypatch):
    """HiGHS calls no interrupt callback inside a sub-MIP, so a program racing branch-and-price runs none: a stop
    or a stall then reaches it at its next callback, not after the sub-MIPs (6.5 s on a 64-tier demand). A program
    outside a race keeps HiGHS's defaults, and both find the same optimum."""
    import highspy

    from gpu_platform.planner import highs

    given: dict[str, object] = {}

    class Recording(highspy.Highs):
        def setOptionValue(self, name, value):
            given[name] = value
            return super().setOptionValue(name, value)

    monkeypatch.setattr(highspy, "Highs", Recording)
    cost, a, lo, hi, col_hi = _knapsack_cover()
    alone = solve_mip(cost, a, lo, hi, col_hi, 30, 1e-9)
    assert given and not set(highs._SUB_MIPS) & given.keys()
    given.clear()
    raced = solve_mip(cost, a, lo, hi, col_hi, 30, 1e-9, race=Race(best=math.inf, bound=-math.inf))
    assert {name: given.get(name) for name in highs._SUB_MIPS} == dict.fromkeys(highs._SUB_MIPS, False)
    assert raced.status == alone.status == "optimal" and raced.cost == pytest.approx(alone.cost)


def _random_cover(seed, rows, cols):
    """A random covering LP's matrix and costs (and the generator, for more draws); every row is coverable from
    the first `rows` columns."""
    rng = np.random.default_rng(seed)
    dense = (rng.random((rows, cols)) < 0.5).astype(float)
    dense[:, :rows] += np.eye(rows)
    return rng, dense, rng.integers(1, 20, cols).astype(float)


@settings(max_examples=20, deadline=None)
@given(st.integers(0, 10_000))
@example(367)
def test_column_lp_grown_in_place_matches_a_fresh_solve(seed):
    rows, cols = 5, 12
    rng, dense, cost = _random_cover(seed, rows, cols)
    dense[0, rows] = 1.0  # row 0 stays coverable once column 0 is forbidden below (seed 367 had no other)
    lp = ColumnLP(np.ones(rows), np.full(rows, np.inf))
    for lo, hi in ((0, rows), (rows, 8), (8, cols)):
        lp.add(cost[lo:hi], csc_array(dense[:, lo:hi]))
        value, x, duals = lp.solve()
        fresh = linprog(cost[:hi], A_ub=-dense[:, :hi], b_ub=-np.ones(rows), bounds=(0, None), method="highs")
        assert value == pytest.approx(fresh.fun, abs=1e-7)
        assert np.all(dense[:, :hi] @ x[:hi] >= 1 - 1e-7)
        assert duals @ np.ones(rows) == pytest.approx(fresh.fun, abs=1e-6)  # LP duality
    lp.forbid([0])
    value, x, _ = lp.solve()
    fresh = linprog(cost, A_ub=-dense, b_ub=-np.ones(rows), bounds=[(0, 0)] + [(0, None)] * (cols - 1), method="highs")
    assert x[0] == 0 and value == pytest.approx(fresh.fun, abs=1e-7)


def test_column_lp_says_when_its_solution_is_not_optimal_and_column_generation_does_not_converge_on_it(
    monkeypatch,
):
    lp = ColumnLP(np.ones(2), np.full(2, np.inf))
    lp.add(np.array([1.0]), csc_array(np.array([[1.0], [0.0]])))  # row 1 is covered by no column: infeasible
    lp.solve()
    assert lp.optimal is False
    lp.add(np.array([1.0]), csc_array(np.array([[0.0], [1.0]])))
    assert lp.solve()[0] == pytest.approx(2.0) and lp.optimal is True
    # with no column left to price, column generation has converged only when its LP was solved to optimality
    group = groups(demand({"name": "a", "gpus": 8}, {"name": "b", "gpus": 4}))[-1]
    monkeypatch.setattr(master, "price_columns", lambda *args, **kwargs: ([], 0.0))
    cols = master._full(group)
    assert master._generate(group, list(cols), math.inf)[2] is True
    one = [merged(group, cols[0].cand, [min(group.units)])]  # serves one tier of two: the LP is infeasible
    assert master._generate(group, list(one), math.inf, master._Master(group, one))[2] is False


def _big_group(tiers: int, seed: int):
    d = generated_demand(tiers, seed)
    catalog = catalog_of(d)
    cands = build_candidates(d, catalog)
    groups = split_groups([t.units for t in d.tiers], _pairs(d, cands, catalog), cands)
    return without_dominated(max(groups, key=lambda g: len(g.units)))


@pytest.mark.parametrize("seed", [1, 3])
def test_dive_and_local_search_give_a_valid_plan_above_the_bound(seed):
    group = _big_group(24, seed)
    start = master._greedy(group)
    cols = list({*start, *master._full(group)})
    _, bound, converged, _ = master._generate(group, cols, math.inf)
    assert converged
    greedy_where = {t: c.cand for c in start for t in c.tiers}
    greedy = improve(group, greedy_where, math.inf)
    assert_valid_columns(group, greedy)
    assert sum(group.cost(c) for c in greedy) <= sum(group.cost(c) for c in start) + 1e-9  # never worse
    for fix in (0.7, 0.95):
        where = master._assignment_dive(group, cols, math.inf, fix)
        assert set(where) == set(group.units)
        plan = improve(group, where, math.inf)
        assert_valid_columns(group, plan)
        assert sum(group.cost(c) for c in plan) >= bound - 1e-6  # the bound is a bound


def _calls(monkeypatch, name: str, seen: Callable[..., Any]) -> list[Any]:
    """The calls of `master.<name>` from here to the test's end, each recorded as `seen(*its arguments)`."""
    calls: list[Any] = []
    real = getattr(master, name)

    def counted(*args: Any) -> Any:
        calls.append(seen(*args))
        return real(*args)

    monkeypatch.setattr(master, name, counted)
    return calls


def test_the_root_dives_once_for_a_group_branch_and_price_may_search_in_time_and_twice_otherwise(monkeypatch):
    fixes = _calls(monkeypatch, "_assignment_dive", lambda group, cols, deadline, fix: fix)
    group = _big_group(24, 1)
    assert len(set(group.price.values())) <= LATTICE_PRICES
    first = master.root(group, time.perf_counter() + 60)
    assert fixes == [0.7]
    assert_valid_columns(group, list(first.best.columns))
    # With too little time left for the search to make up for it, both dives.
    fixes.clear()
    master.root(group, time.perf_counter() + master._ONE_DIVE_FROM / 2)
    assert fixes == [0.7, 0.95]
    # The same group with more node prices than the cost lattice takes: no branch-and-price, both dives.
    dearer = {c: p * (1 + 0.001 * (i % (LATTICE_PRICES + 1))) for i, (c, p) in enumerate(group.price.items())}
    many = replace(group, price=dearer)
    assert len(set(many.price.values())) > LATTICE_PRICES
    fixes.clear()
    master.root(many, time.perf_counter() + 60)
    assert fixes == [0.7, 0.95]


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(
        st.tuples(st.sampled_from(["1g.10gb", "2g.20gb", "3g.40gb", "4g.40gb"]), st.integers(1, 60)),
        min_size=2,
        max_size=6,
    )
)
def test_local_search_never_raises_cost(tiers):
    d = demand(*({"name": f"t{i}", "mig": {"profile": p, "instances": n}} for i, (p, n) in enumerate(tiers)))
    catalog = catalog_of(d)
    cands = build_candidates(d, catalog)
    for group in split_groups([t.units for t in d.tiers], _pairs(d, cands, catalog), cands):
        # Start from every tier on its most expensive candidate.
        where = {
            t: max(
                (c for c, kinds in group.slots.items() if any(t in ts for ts in kinds.values())),
                key=lambda c: group.price[c],
            )
            for t in group.units
        }
        before = sum(
            master.merged(group, c, [t for t in where if where[t] == c]).nodes * group.price[c]
            for c in set(where.values())
        )
        after = improve(group, where, math.inf)
        assert_valid_columns(group, after)
        assert sum(group.cost(c) for c in after) <= before + 1e-9


@pytest.mark.parametrize("seed", [2, 5])
def test_a_single_move_costs_the_same_priced_quickly_or_in_full(seed):
    """The local search prices a one-tier move from the node counts it keeps per candidate; that price is the
    full cost change of the move, and the kept counts stay those of the loads after every move."""
    group = _big_group(32, seed)
    state = _State(group, {t: c.cand for c in master._greedy(group) for t in c.tiers})
    serves = {t: [c for c, kinds in group.slots.items() if any(t in ts for ts in kinds.values())] for t in group.units}
    rng = np.random.default_rng(seed)
    checked = 0
    for _ in range(200):
        t = int(rng.choice(sorted(group.units)))
        old = state.where[t]
        after = dict(state.load[old])
        after[state.kind[(t, old)]] -= group.units[t]
        removed = state.cost_of(old, after) - state.cost_of(old, state.load[old])
        for c in serves[t]:
            if c != old:
                assert state.move_delta(t, c, removed) == pytest.approx(state.delta(_changes(state, {t: c})), abs=1e-9)
                checked += 1
        state.apply({t: int(rng.choice(serves[t]))})
        assert all(state.nodes.get(c, 0) == state.nodes_of(c, load) for c, load in state.load.items())
    assert checked > 200


@settings(max_examples=20, deadline=None)
@given(st.integers(0, 10_000))
def test_column_lp_restricted_and_restarted_from_an_old_basis_matches_a_fresh_solve(seed):
    # Branch-and-price starts each node from its parent's basis (taken before later columns were added), sets
    # the node's row bounds, and prices a different set of columns out of the LP (only the columns whose cost
    # changes are passed on), in that order: with a penalty larger than any saving, the LP's optimum is the
    # fresh solve's with those columns fixed at 0.
    rows, cols = 5, 14
    rng, dense, cost = _random_cover(seed, rows, cols)
    lp = ColumnLP(np.ones(rows), np.full(rows, np.inf))
    lp.add(cost[:10], csc_array(dense[:, :10]))
    lp.solve()
    old = lp.basis()
    lp.add(cost[10:], csc_array(dense[:, 10:]))
    for _ in range(6):
        allowed = rng.random(cols) < 0.7
        allowed[:rows] = True  # stays feasible
        need = rng.integers(0, 3, rows).astype(float)
        if rng.random() < 0.5:
            lp.restore(lp.basis() if rng.random() < 0.5 else old)
        lp.row_bounds(0, list(need), [math.inf] * rows)
        lp.allow_only(allowed, 1e3 * float(cost.sum()))
        value, x, _ = lp.solve()
        bounds = [(0, None) if ok else (0, 0) for ok in allowed]
        fresh = linprog(cost, A_ub=-dense, b_ub=-need, bounds=bounds, method="highs")
        assert value == pytest.approx(fresh.fun, abs=1e-7)
        assert np.all(x[~allowed] <= 1e-9)


def test_the_listings_stall_clock_is_not_reset_by_their_plan_in_other_rounding(monkeypatch):
    """Once branch-and-price has joined, the listings' program is interrupted when its best plan has not improved
    for `_PATIENCE` seconds. HiGHS reports the same plan again with its cost rounded differently (8,168.242204,
    then 8,168.242203999994 on a 64-tier demand): that is no improvement, and must not restart the clock."""
    import time

    from gpu_platform.planner import highs

    now = [100.0]
    monkeypatch.setattr(time, "perf_counter", lambda: now[0])

    class Hooks:
        def __init__(self):
            self.calls = []

        def __iadd__(self, fn):
            self.calls.append(fn)
            return self

    class FakeHighs:
        cbMipInterrupt = Hooks()
        cbSimplexInterrupt = Hooks()

    class Event:
        def __init__(self, value):
            self.data_out = type("Out", (), {"mip_primal_bound": value})()
            self.stopped = False

        def interrupt(self):
            self.stopped = True

    race = highs.Race(math.inf, 0.0)
    h = FakeHighs()
    highs._stop_at(h, -math.inf, 1e-6, race)
    (check,) = h.cbMipInterrupt.calls
    race.joined = now[0]
    check(Event(8168.242204))  # the plan, at the join
    now[0] += highs._PATIENCE * 0.75
    check(Event(8168.242203999994))  # the same plan, other rounding
    now[0] += highs._PATIENCE * 0.5
    late = Event(8168.242203999994)
    check(late)
    assert late.stopped  # stalled since the join
    now[0] += 0.1
    better = Event(8140.795154)
    check(better)
    assert not better.stopped  # a better plan restarts the clock


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(
        st.tuples(st.sampled_from(["1g.10gb", "2g.20gb", "3g.40gb"]), st.integers(1, 120)),
        min_size=2,
        max_size=5,
    ),
    st.randoms(use_true_random=False),
)
# tier 1 on the exclusive pool and on a MIG pool: both pools are needed for the others
@example([("1g.10gb", 1), ("3g.40gb", 1), ("3g.40gb", 8)], random.Random(1))
def test_a_plan_repacked_on_its_own_candidates_is_their_cheapest(tiers, rng):
    d = demand(
        *({"name": f"t{i}", "mig": {"profile": p, "instances": n}} for i, (p, n) in enumerate(tiers)),
        instanceTypes=["p4de.24xlarge"],
    )
    (group,) = groups(d)
    # A first plan that routes each tier to a candidate drawn at random, at most three candidates in all.
    chosen = rng.sample(sorted(group.slots), min(3, len(group.slots)))
    serving = {t: [c for c in chosen if any(t in ts for ts in group.slots[c].values())] for t in group.units}
    serving = {
        t: cs or [next(c for c in group.slots if any(t in ts for ts in group.slots[c].values()))]
        for t, cs in serving.items()
    }
    where = {t: rng.choice(cs) for t, cs in serving.items()}
    first = [merged(group, c, [t for t, cc in where.items() if cc == c]) for c in set(where.values())]
    cost = sum(group.cost(c) for c in first)
    cands = sorted({c.cand for c in first})
    # The cheapest plan on the first plan's candidates, by trying every route of every tier.
    options = [[c for c in cands if any(t in ts for ts in group.slots[c].values())] for t in sorted(group.units)]
    cheapest = min(
        sum(
            group.cost(merged(group, c, [t for t, cc in zip(sorted(group.units), pick, strict=True) if cc == c]))
            for c in set(pick)
        )
        for pick in itertools.product(*options)
    )
    race = Race(best=cost, bound=-math.inf)
    out = master._repacked(group, Cover(tuple(first), cost, False), -math.inf, time.perf_counter() + 30, race)
    # The cover rows are >= 1, so a tier may ride in two pools whose nodes are paid anyway; the plan keeps it in
    # one of them (`solve._one_pool_per_tier`), at no more nodes.
    kept = _one_pool_per_tier(group, out.columns)
    assert_valid_columns(group, kept)
    assert sum(group.cost(c) for c in kept) <= out.cost + 1e-9
    assert {c.cand for c in out.columns} <= set(cands)
    assert math.isclose(out.cost, sum(group.cost(c) for c in out.columns))
    assert math.isclose(out.cost, cheapest, rel_tol=1e-9)
    assert race.best <= out.cost + 1e-9  # branch-and-price prunes with it
    if out.cost < cost - 1e-9:
        assert not out.optimal  # a plan, not a proof: the group's other candidates were left out
    else:
        assert out.columns == tuple(first)


def test_the_listings_repack_the_first_plan_of_a_large_group_only(monkeypatch):
    calls = _calls(monkeypatch, "_repacked", lambda group, *_: len(group.units))
    listed = _calls(monkeypatch, "enumerate_columns", lambda group, duals, slack, limit: slack)
    large = _big_group(64, 4)
    assert len(large.units) >= master._REPACK_TIERS
    first = master.root(large, time.perf_counter() + 60)
    master.solve_group(large, 4)
    assert calls == [len(large.units)]
    assert listed == []  # no listing beside the search: the repack alone
    # Seed 4's first plan is 5,577.24 $/h; re-planned on its own candidates it is the group's optimum.
    race = Race(best=first.best.cost, bound=first.bound)
    out = master._repacked(large, first.best, first.bound, time.perf_counter() + 30, race)
    assert out.cost < first.best.cost - 1
    calls.clear()
    small = _big_group(24, 1)
    assert len(small.units) < master._REPACK_TIERS
    master.solve_group(small, 4)
    assert calls == []


def test_a_group_whose_first_plan_meets_its_bound_is_proven_without_a_search(monkeypatch):
    """One tier of whole GPUs: the first plan costs the root's bound, so the listings prove it and branch-and-price
    is never called (it would end at its root)."""
    searched = []
    monkeypatch.setattr(
        "gpu_platform.planner.master.branch_and_price", lambda *a, **k: searched.append(1) or branch_and_price(*a, **k)
    )
    (group,) = groups(demand({"name": "train", "gpus": 16}, instanceTypes=["p4d.24xlarge"]))
    solved = master.solve_group(group, 10)
    assert solved.optimal and solved.cost == pytest.approx(solved.bound)
    assert solved.cost == pytest.approx(2 * group.price[next(iter(group.price))])
    assert not searched
