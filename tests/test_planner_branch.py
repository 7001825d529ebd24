"""Branch-and-price and the cost lattice: exact on small demands (against an exhaustive search), bounds that are
bounds, and every plan valid."""

from __future__ import annotations

import heapq
import itertools
import math
from collections import Counter
from dataclasses import replace

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gpu_platform.planner import branch, master
from gpu_platform.planner.branch import _Incidence, _Node, _restricted, branch_and_price, next_cost
from gpu_platform.planner.columns import Column, Duals, merged, price_columns
from gpu_platform.planner.cover import Cover
from gpu_platform.planner.highs import Race
from helpers.planner import (
    assert_serves,
    assert_valid_columns,
    brute_force_hourly,
    demand,
    generated_demand,
    groups,
    merged_spec,
    tiers,
)

_TIER = tiers(gpus=20, instances=40)


def _least_sum_at_least(prices, x, box=None):
    """The least sum of whole nodes at `prices` that reaches x, each count within its (least, most) in `box`."""
    box = box or [(0, math.inf)] * len(prices)
    ranges = [range(int(lo), int(min(hi, math.ceil(x / p) + lo)) + 1) for p, (lo, hi) in zip(prices, box, strict=True)]
    best = math.inf
    for counts in itertools.product(*ranges):
        total = sum(n * p for n, p in zip(counts, prices, strict=True))
        if total >= x - 1e-9:
            best = min(best, total)
    return best


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.integers(50, 5000).map(lambda c: c / 100), min_size=1, max_size=3, unique=True),
    st.integers(0, 30000).map(lambda c: c / 100),
)
def test_next_cost_is_the_least_sum_of_node_prices_at_least_x(prices, x):
    got = next_cost(set(prices), x)
    want = _least_sum_at_least(prices, x)
    assert x <= got <= want + 1e-9  # never above a reachable cost: still a lower bound
    assert got == pytest.approx(want, rel=1e-5, abs=1e-6) or x == 0


def test_next_cost_leaves_x_alone_with_many_prices():
    assert next_cost({1.1, 2.3, 3.7, 5.9}, 100.05) == 100.05


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_TIER, min_size=2, max_size=4))
def test_branch_and_price_from_the_greedy_plan_is_exact(tiers):
    d = demand(*({"name": f"t{i}", **t} for i, t in enumerate(tiers)), instanceTypes=["p4d.24xlarge", "p4de.24xlarge"])
    total, bound_sum = 0.0, 0.0
    for group in groups(d):
        start = master._greedy(group)
        cols = list({*start, *master._full(group)})
        _, root, _, _ = master._generate(group, cols, math.inf)
        start_cost = sum(group.cost(c) for c in start)
        result = branch_and_price(group, cols, tuple(start), start_cost, root, math.inf, 1e-6)
        assert_valid_columns(group, result.columns)
        assert result.cost == pytest.approx(sum(group.cost(c) for c in result.columns))
        assert result.cost <= start_cost + 1e-9
        assert root - 1e-6 <= result.bound <= result.cost + 1e-6
        assert result.bound >= result.cost * (1 - 1e-6)  # no deadline: the search ends with a proof
        total, bound_sum = total + result.cost, bound_sum + result.bound
    assert total == pytest.approx(brute_force_hourly(d), rel=1e-6)


def test_branch_and_price_is_exact_when_its_lp_leans_on_pools_a_node_does_not_allow(monkeypatch):
    """A node prices the pools it does not allow out of its LP (a cost, not a bound at 0). With a penalty too
    small to keep them out, LP solutions use them all the time: each such node fixes them at 0 and solves again,
    so it never branches on, or takes a plan from, a solution outside the node."""
    import time

    fixed = []
    forbid = master._Master.forbid

    def cheap(self, allowed):
        self.lp.allow_only(np.concatenate([np.ones(self.extra, dtype=bool), allowed]), 0.01)

    def counted(self, pools):
        fixed.append(len(pools))
        forbid(self, pools)

    solved = []
    node = branch._Search.node

    def recorded(self, lane, bound, n):
        solved.append((n.fixed, n.forbidden, n.box, n.sizes, n.retries))
        node(self, lane, bound, n)

    for seed in (1, 2):
        group, cols, start, cost, root = _search_setup(48, seed)
        want = branch_and_price(group, cols, start, cost, root, time.perf_counter() + 60, 1e-6, lanes=1)
        with monkeypatch.context() as m:
            m.setattr(master._Master, "allow_only", cheap)
            m.setattr(master._Master, "forbid", counted)
            m.setattr(branch._Search, "node", recorded)
            result = branch_and_price(group, cols, start, cost, root, time.perf_counter() + 60, 1e-6, lanes=1)
        # no node is its own child: one is solved twice only when it takes cuts (then again with them)
        assert max(Counter(solved).values()) <= 2
        assert_valid_columns(group, result.columns)
        assert result.bound >= result.cost * (1 - 1e-6)  # proven
        assert result.cost == pytest.approx(want.cost, rel=1e-6)
    assert fixed  # the search met such solutions


@pytest.mark.parametrize("seed", [1, 2])
def test_branch_and_price_cut_short_keeps_a_valid_plan_and_a_true_bound(seed):
    import time

    # 32 generated tiers; the exact optimum comes from the planner with time to prove it.
    from gpu_platform.planner import plan

    d = generated_demand(32, seed)
    full = plan(d, 60)
    assert full.optimal
    group = max(groups(d), key=lambda g: len(g.units))
    start = master._greedy(group)
    cols = list({*start, *master._full(group)})
    _, root, _, _ = master._generate(group, cols, math.inf)
    start_cost = sum(group.cost(c) for c in start)
    result = branch_and_price(group, cols, tuple(start), start_cost, root, time.perf_counter() + 0.5, 1e-6)
    assert_valid_columns(group, result.columns)
    optimum = sum(p.hourly for p in full.pools if any(int(name[1:]) in group.units for name in p.tiers))
    assert root - 1e-6 <= result.bound <= optimum + 1e-6 <= result.cost + 2e-6


@settings(max_examples=80, deadline=None)
@given(
    st.lists(st.integers(50, 5000).map(lambda c: c / 100), min_size=1, max_size=3, unique=True),
    st.integers(0, 30000).map(lambda c: c / 100),
    st.lists(st.tuples(st.integers(0, 40), st.one_of(st.none(), st.integers(0, 40))), min_size=3, max_size=3),
)
def test_next_cost_within_a_box_is_the_least_sum_of_node_counts_in_the_box(prices, x, spans):
    box = [(float(lo), math.inf if extra is None else float(lo + extra)) for lo, extra in spans[: len(prices)]]
    got = next_cost(set(prices), x, dict(zip(sorted(prices), box, strict=True)))
    want = _least_sum_at_least(sorted(prices), x, box)
    if want == math.inf:
        assert got == math.inf  # no node counts in the box reach x: no plan there
    else:
        assert x <= got <= want + 1e-9
        assert got == pytest.approx(want, rel=1e-5, abs=1e-6) or x == 0


def _routings(group):
    """(cost, nodes of each candidate's pool) of every routing of the group's tiers to its candidates."""
    options = {t: [c for c, kinds in group.slots.items() if any(t in ts for ts in kinds.values())] for t in group.units}
    tiers_ = sorted(options)
    for routing in itertools.product(*(options[t] for t in tiers_)):
        on = {}
        for t, c in zip(tiers_, routing, strict=True):
            on.setdefault(c, []).append(t)
        used = {c: merged(group, c, ts).nodes for c, ts in on.items()}
        yield sum(group.price[c] * n for c, n in used.items()), used


def _every_plan(group):
    """(cost, nodes per price, nodes each price's candidates could still add) of every routing of the group's
    tiers to its candidates. Idle nodes make a plan dearer, but it is still a plan: a branch's bound holds
    for plans padded with them too."""
    for cost, used in _routings(group):
        nodes, spare = {}, {}
        for c in group.slots:
            p = group.price[c]
            nodes[p] = nodes.get(p, 0) + used.get(c, 0)
            spare[p] = spare.get(p, 0) + group.max_nodes(c) - used.get(c, 0)
        yield cost, nodes, spare


def _cheapest_in_box(plans, box):
    """The least cost of a plan, padded with idle nodes where the box asks for more, within the box."""
    best = math.inf
    for cost, nodes, spare in plans:
        if all(nodes[p] <= hi and lo - nodes[p] <= spare[p] for p, (lo, hi) in box.items()):
            best = min(best, cost + sum(max(0, lo - nodes[p]) * p for p, (lo, _) in box.items()))
    return best


def _box_case(group, cls, shift, span):
    """A box around the cheapest plan's node total of one price class (shifted by `shift`), and the cheapest plan
    in it (brute force): `span(edge)` gives that class's (least, most). Returns the prices, the class's price,
    the box (price -> (least, most)), the edge and that cheapest plan's cost."""
    prices = sorted(set(group.price.values()))
    plans = list(_every_plan(group))
    price = prices[cls % len(prices)]
    edge = max(min(plans, key=lambda p: p[0])[1][price] + shift, 0)
    box = {p: (0, math.inf) for p in prices}
    box[price] = span(edge)
    return prices, price, box, edge, _cheapest_in_box(plans, box)


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_TIER, min_size=2, max_size=4))
def test_column_generation_stops_once_its_lp_is_at_a_bound_already_known(tiers):
    # A branch's bound is known before its LP is solved (its parent's, rounded up to a cost whole nodes reach):
    # when the LP over the pools it has is already at or below it, no pool pricing finds can raise the bound
    # past it, so the branch takes that LP solution as its optimum's and prices nothing. Here the known bound is
    # the group's optimum, and the LP holds the optimum's pools.
    d = demand(*({"name": f"t{i}", **t} for i, t in enumerate(tiers)), instanceTypes=["p4d.24xlarge", "p4de.24xlarge"])
    for group in groups(d):
        best = master.solve_group(group, 60)
        assert best.optimal
        cols = list({*best.columns, *master._full(group)})
        lp = master._Master(group, list(cols))
        value = lp.solve()[1]
        assert value <= best.cost + 1e-6
        known = list(cols)
        _, bound, converged, x = master._generate(group, known, math.inf, lp, floor=best.cost)
        assert (bound, converged, len(known)) == (best.cost, True, len(cols))  # one solve, no pool priced
        assert all(sum(x[j] for j, c in enumerate(known) if t in c.tiers) >= 1 - 1e-6 for t in group.units)
        # Below the LP's value, pricing goes on (down to that bound at most), and the bound stays a bound.
        lower = master._Master(group, list(cols))
        _, bound, converged, _ = master._generate(group, list(cols), math.inf, lower, gap=1e-9, floor=value - 1.0)
        assert converged and value - 1.0 - 1e-9 <= bound <= best.cost + 1e-6


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_TIER, min_size=2, max_size=4), st.integers(0, 3), st.integers(-2, 2), st.booleans())
def test_the_bound_under_node_totals_holds_for_every_plan_within_them(tiers, cls, shift, upper):
    # The LP with a price class's node total bounded (a branch of branch-and-price) prices with the row's dual;
    # its Lagrangian bound is checked against every plan whose totals lie in the box, found by brute force.
    d = demand(*({"name": f"t{i}", **t} for i, t in enumerate(tiers)), instanceTypes=["p4d.24xlarge", "p4de.24xlarge"])
    for group in groups(d):
        prices, _, box, _, want = _box_case(group, cls, shift, lambda e: (0, e) if upper else (e, math.inf))
        cols = list({*master._greedy(group), *master._full(group)})
        lp = master._Master(group, cols, {c: [prices.index(p)] for c, p in group.price.items()})
        lp.set_box(tuple((float(lo), float(hi)) for lo, hi in box.values()))
        _, bound, converged, _ = master._generate(group, cols, math.inf, lp, gap=1e-9)
        assert converged
        assert bound <= want + 1e-6
        assert next_cost(set(prices), bound, box) <= want + 1e-6


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_TIER, min_size=2, max_size=4), st.integers(0, 3), st.integers(-2, 2), st.booleans())
def test_a_box_caps_its_pools_at_their_class_total_and_its_bound_holds_for_every_plan_in_it(tiers, cls, shift, pinned):
    # A branch where a price class has at most (or exactly) `edge` nodes: no pool of that class may have more, so
    # pricing stops there and the LP takes no such pool; the bound still holds for every plan in the box (brute
    # force), padded ones included.
    d = demand(*({"name": f"t{i}", **t} for i, t in enumerate(tiers)), instanceTypes=["p4d.24xlarge", "p4de.24xlarge"])
    for group in groups(d):
        prices, price, box, edge, want = _box_case(group, cls, shift, lambda e: (e, e) if pinned else (0, e))
        classes = {c: [prices.index(p)] for c, p in group.price.items()}
        sub = _restricted(group, _Node(box=tuple((float(lo), float(hi)) for lo, hi in box.values())), classes)
        capped = [c for c in group.slots if group.price[c] == price]
        assert all(sub.max_nodes(c) <= edge for c in capped)
        cols = list({*master._greedy(group), *master._full(group)})
        lp = master._Master(group, cols, classes)
        lp.set_box(tuple((float(lo), float(hi)) for lo, hi in box.values()))
        incidence = _Incidence(group)
        incidence.add(cols)
        allowed = incidence.allowed(sub)
        assert allowed.tolist() == [col.nodes <= edge or col.cand not in capped for col in cols]
        lp.allow_only(allowed)
        before = len(cols)
        _, bound, _, x = master._generate(sub, cols, math.inf, lp, gap=1e-9)
        assert all(col.nodes <= edge for col in cols[before:] if col.cand in capped)
        assert bound <= want + 1e-6
        assert next_cost(set(prices), bound, box) <= want + 1e-6


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_TIER, min_size=2, max_size=4), st.integers(0, 7), st.integers(-2, 1), st.booleans())
def test_a_branch_on_a_pool_size_bounds_every_plan_on_its_side_and_its_lp_keeps_to_it(tiers_, pick, shift, larger):
    # A candidate's pool of at most f nodes (or none), or a pool of at least f + 1: pricing offers no pool of
    # another size, the LP takes exactly one pool of a candidate that must have one, and the Lagrangian bound
    # (which then counts that candidate's least reduced cost even when positive) holds for every plan on that
    # side, found by brute force (with the pool padded up to f + 1 nodes where it is smaller), and is the LP's.
    d = demand(*({"name": f"t{i}", **t} for i, t in enumerate(tiers_)), instanceTypes=["p4d.24xlarge", "p4de.24xlarge"])
    for group in groups(d):
        plans = list(_routings(group))
        best = min(plans, key=lambda p: p[0])[1]
        cands = sorted(group.slots)
        cand = cands[pick % len(cands)]
        f = max(best.get(cand, 0) + shift, 0)
        lo, hi = (f + 1, branch._NO_MOST) if larger else (0, f)
        if larger:
            room = group.max_nodes(cand)
            want = min(
                (cost + max(0, lo - used.get(cand, 0)) * group.price[cand] for cost, used in plans if lo <= room),
                default=math.inf,
            )
        else:
            want = min((cost for cost, used in plans if used.get(cand, 0) <= hi), default=math.inf)
        sub = _restricted(group, _Node(sizes=((cand, lo, hi),)))
        assert sub.node_min == ({cand: lo} if larger else {})
        if larger and lo > sub.max_nodes(cand):
            continue  # a pool larger than its tiers need: the search prunes such a node
        # each tier alone on each candidate that may serve it, at a size the branch allows: a first LP
        singles = {
            Column(c, max(merged(group, c, [t]).nodes, sub.node_min.get(c, 0)), frozenset({t}))
            for c, kinds in sub.slots.items()
            for ts in kinds.values()
            for t in ts
        }
        singles = {col for col in singles if col.nodes <= sub.max_nodes(col.cand)}
        if {t for col in singles for t in col.tiers} != set(group.units):
            assert want == math.inf  # a tier no pool of an allowed size holds
            continue
        cols = list({*master._greedy(group), *master._full(group), *singles})
        cols += [Column(cand, lo, frozenset())] if larger else []
        incidence = _Incidence(group)
        incidence.add(cols)
        allowed = incidence.allowed(sub)
        assert all(lo <= col.nodes <= hi for col, ok in zip(cols, allowed, strict=True) if ok and col.cand == cand)
        # As in the search, the pools the branch does not allow stay in the LP, priced out: it always has a
        # solution (the allowed pools alone may not cover the tiers before pricing adds one that does).
        lp = master._Master(group, cols)
        lp.allow_only(allowed)
        lp.set_used(frozenset(sub.node_min))
        before = len(cols)
        _, bound, converged, x = master._generate(sub, cols, math.inf, lp, gap=1e-9)
        assert lp.lp.optimal
        if np.any(x[:before][~allowed] > 1e-9):  # only a priced-out pool serves some tier: no plan on this side
            assert want == math.inf
            continue
        assert converged
        assert all(lo <= col.nodes <= hi for col in cols[before:] if col.cand == cand)
        assert bound <= want + 1e-6
        value = sum(group.cost(col) * v for col, v in zip(cols, x, strict=True))
        assert bound == pytest.approx(value, rel=1e-6, abs=1e-6)  # pricing found every pool that pays
        taken = sum(v for col, v in zip(cols, x, strict=True) if col.cand == cand)
        assert taken == pytest.approx(1.0) if larger else taken <= 1 + 1e-9


def test_a_candidate_that_must_have_a_pool_adds_its_least_pool_to_the_bound_even_when_it_pays_nothing():
    d = demand({"name": "a", "gpus": 8}, {"name": "b", "gpus": 12}, instanceTypes=["p4d.24xlarge", "p4de.24xlarge"])
    (group,) = groups(d)
    cand = max(group.slots, key=group.price.__getitem__)
    zero = Duals(dict.fromkeys(group.units, 0.0), dict.fromkeys(group.slots, 0.0))
    assert price_columns(group, zero)[1] == 0.0  # no pool pays at zero duals: nothing added
    forced = replace(group, node_min={cand: 2})
    cols, bound = price_columns(forced, zero)
    assert bound == pytest.approx(2 * group.price[cand])  # its cheapest allowed pool: two nodes, serving nothing
    assert not cols
    paid = Duals({t: 1e4 for t in group.units}, dict.fromkeys(group.slots, 0.0))
    cols, _ = price_columns(forced, paid)
    assert cols and all(col.nodes >= 2 for col in cols if col.cand == cand)
    too_large = replace(group, node_min={cand: group.max_nodes(cand) + 1})
    assert price_columns(too_large, paid)[1] == math.inf  # no pool of that size: no plan


def test_a_branch_on_pool_sizes_splits_where_the_lp_mixes_sizes_or_takes_a_fraction_of_a_pool():
    a3, a5, b2 = Column(0, 3, frozenset({0})), Column(0, 5, frozenset({0, 1})), Column(1, 2, frozenset({1}))
    low, high = branch._size_branch([a3, a5, b2], np.array([0.5, 0.5, 1.0]), _Node())
    assert (low.sizes, high.sizes) == (((0, 0, 3),), ((0, 4, branch._NO_MOST),))
    # a fraction of one pool: no pool, or a pool
    low, high = branch._size_branch([a3, b2], np.array([0.4, 1.0]), _Node())
    assert (low.sizes, high.sizes) == (((0, 0, 0),), ((0, 1, branch._NO_MOST),))
    # within what the node already decided, and keeping what it decided for other candidates
    node = _Node(sizes=((0, 4, 10), (1, 1, 2)))
    a7 = Column(0, 7, frozenset({0}))
    low, high = branch._size_branch([a5, a7, b2], np.array([0.5, 0.5, 1.0]), node)
    assert (low.sizes, high.sizes) == (((0, 4, 5), (1, 1, 2)), ((0, 6, 10), (1, 1, 2)))
    assert branch._size_branch([a3, b2], np.array([1.0, 1.0]), _Node()) is None  # whole pools: no branch
    # the same split of a larger pool wins
    c9, c1 = Column(2, 9, frozenset({2})), Column(3, 1, frozenset({3}))
    _, high = branch._size_branch([c9, c1], np.array([0.5, 0.5]), _Node())
    assert high.sizes == ((2, 1, branch._NO_MOST),)
    # a candidate that must have a pool (its LP share is 1): between its pools' sizes, within its least and most
    low, high = branch._size_branch([a5, a7, b2], np.array([0.6, 0.4, 1.0]), _Node(sizes=((0, 2, 9),)))
    assert (low.sizes, high.sizes) == (((0, 2, 5),), ((0, 6, 9),))


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_TIER, min_size=2, max_size=4))
def test_a_plan_found_on_the_other_thread_prunes_and_proves(tiers):
    # Told through the race that a plan at the optimum exists, branch-and-price from the greedy plan proves it
    # (the bound it returns may rest on that plan) and never returns a bound above it.
    d = demand(*({"name": f"t{i}", **t} for i, t in enumerate(tiers)), instanceTypes=["p4d.24xlarge", "p4de.24xlarge"])
    for group in groups(d):
        optimum = min(cost for cost, _, _ in _every_plan(group))
        start = master._greedy(group)
        cols = list({*start, *master._full(group)})
        _, root, _, _ = master._generate(group, cols, math.inf)
        race = Race(optimum, root)
        start_cost = sum(group.cost(c) for c in start)
        result = branch_and_price(group, cols, tuple(start), start_cost, root, math.inf, 1e-6, race)
        assert result.bound == pytest.approx(optimum, rel=1e-6)
        assert race.bound <= optimum * (1 + 1e-6)
        assert_valid_columns(group, result.columns)


def test_next_cost_of_an_empty_box_is_infinite_whichever_price_it_is_on():
    assert next_cost({1.0, 2.0}, 5.0, {2.0: (3.0, 2.0)}) == math.inf
    assert next_cost({1.0, 2.0}, 5.0, {1.0: (3.0, 2.0)}) == math.inf
    assert next_cost({1.0, 2.0}, 0.0, {2.0: (1.0, 0.0)}) == math.inf


def test_a_plan_cut_short_at_once_never_reports_a_negative_bound():
    from gpu_platform.planner import plan

    result = plan(generated_demand(64, 3), 0.1)  # stops before column generation gets far
    assert 0 <= result.cost_bound <= result.hourly
    assert 0 <= result.gap <= 1


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_TIER, min_size=2, max_size=6), st.randoms(use_true_random=False))
def test_the_columns_a_node_allows_are_those_whose_candidate_may_serve_every_tier(tiers_, rnd):
    group = groups(demand(*({"name": f"t{i}", **t} for i, t in enumerate(tiers_))))[-1]
    pairs = [(t, c) for c, kinds in group.slots.items() for ts in kinds.values() for t in ts]
    # columns of random tier subsets, more than the matrix starts with, added in several batches
    cols = [
        Column(c, rnd.randint(1, 4), frozenset(rnd.sample(sorted(group.units), rnd.randint(1, len(group.units)))))
        for c in (rnd.choice(sorted(group.slots)) for _ in range(300))
    ]
    incidence = _Incidence(group)
    for start in range(0, len(cols), 97):
        incidence.add(cols[start : start + 97])
    for _ in range(5):
        node = _Node(
            fixed=frozenset(rnd.sample(pairs, rnd.randint(0, 2))),
            forbidden=frozenset(rnd.sample(pairs, rnd.randint(0, min(3, len(pairs))))),
        )
        sub = _restricted(group, node)
        may = {c: {t for ts in kinds.values() for t in ts} for c, kinds in sub.slots.items()}
        expected = [col.tiers <= may[col.cand] for col in cols]
        assert incidence.allowed(sub).tolist() == expected
        # under a box of node totals, also on no more nodes than the candidate's price class may have
        prices = sorted(set(group.price.values()))
        most = [float(rnd.randint(1, 4)) for _ in prices]
        boxed = _restricted(
            group,
            replace(node, box=tuple((0.0, m) for m in most)),
            {c: [prices.index(p)] for c, p in group.price.items()},
        )
        expected = [
            ok and col.nodes <= most[prices.index(group.price[col.cand])]
            for ok, col in zip(expected, cols, strict=True)
        ]
        assert incidence.allowed(boxed).tolist() == expected


@pytest.mark.parametrize(("tiers_", "seed"), [(32, 1), (32, 4), (40, 4)])
def test_branch_and_price_proves_the_same_optimum_with_branches_on_pool_sizes_or_on_tiers_only(
    tiers_, seed, monkeypatch
):
    """Two branching rules, one proof: a bound that were wrong under a branch on a pool's size would prune the
    optimum (a dearer plan) or prove too soon (a lower bound above another rule's optimum)."""
    import time

    group = max(groups(generated_demand(tiers_, seed)), key=lambda g: len(g.units))
    start = master._greedy(group)
    cols = list({*start, *master._full(group)})
    _, root, _, _ = master._generate(group, cols, math.inf)
    sized = []
    size_branch = branch._size_branch

    def counted(*args):
        children = size_branch(*args)
        sized.append(children is not None)
        return children

    results = []
    for rule in (counted, lambda *args: None):
        monkeypatch.setattr(branch, "_size_branch", rule)
        found = branch_and_price(
            group, list(cols), tuple(start), sum(group.cost(c) for c in start), root, time.perf_counter() + 60, 1e-6
        )
        assert_valid_columns(group, found.columns)
        assert found.bound >= found.cost * (1 - 1e-6)
        results.append(found)
    assert any(sized)  # the search branched on pool sizes
    assert results[0].cost == pytest.approx(results[1].cost, rel=1e-6)


def test_branch_and_price_stays_exact_when_its_lp_is_rebuilt_again_and_again(monkeypatch):
    """A tiny column limit makes the search rebuild its LP (and the matrix of which tiers each column serves)
    over and over; a column mismatched with its row there would fix the wrong pools at 0 and give a false bound."""
    import time

    from gpu_platform.planner import branch, plan

    d = generated_demand(32, 3)
    full = plan(d, 60)
    assert full.optimal
    group = max(groups(d), key=lambda g: len(g.units))
    optimum = sum(p.hourly for p in full.pools if any(int(name[1:]) in group.units for name in p.tiers))
    built = []

    class Counted(branch._Incidence):
        def __init__(self, g):
            built.append(1)
            super().__init__(g)

    monkeypatch.setattr(branch, "_LP_COLUMNS", 10)
    monkeypatch.setattr(branch, "_Incidence", Counted)
    start = master._greedy(group)
    cols = list({*start, *master._full(group)})
    _, root, _, _ = master._generate(group, cols, math.inf)
    start_cost = sum(group.cost(c) for c in start)
    result = branch_and_price(group, cols, tuple(start), start_cost, root, time.perf_counter() + 120, 1e-6)
    assert len(built) > 5  # the LP was rebuilt
    assert_valid_columns(group, result.columns)
    assert result.cost == pytest.approx(optimum, rel=1e-6)
    assert result.bound >= result.cost * (1 - 1e-6)


def test_branch_and_price_with_subset_row_cuts_proves_the_optimum(monkeypatch):
    """Cuts added at the search's first split node and in pinned boxes, their rows priced exactly at every
    node: the optimum `plan()` proves, and a bound that meets it."""
    import time

    from gpu_platform.planner import plan

    d = generated_demand(32, 3)
    full = plan(d, 60)
    assert full.optimal
    group = max(groups(d), key=lambda g: len(g.units))
    optimum = sum(p.hourly for p in full.pools if any(int(name[1:]) in group.units for name in p.tiers))
    added = []  # cuts per call
    add_cuts = master._Master.add_cuts

    def counted(self, cuts):
        added.append(list(cuts))
        add_cuts(self, cuts)

    monkeypatch.setattr(master._Master, "add_cuts", counted)
    start = master._greedy(group)
    cols = list({*start, *master._full(group)})
    _, root, _, _ = master._generate(group, cols, math.inf)
    start_cost = sum(group.cost(c) for c in start)
    result = branch_and_price(group, cols, tuple(start), start_cost, root, time.perf_counter() + 120, 1e-6)
    assert len([c for cuts in added for c in cuts]) >= 2 and len(added) >= 2  # the root's and a box's
    assert_valid_columns(group, result.columns)
    assert result.cost == pytest.approx(optimum, rel=1e-6)
    assert result.bound >= result.cost * (1 - 1e-6)


def _lanes_solving(monkeypatch, failing=None):
    """The lane that solves each node, in order (lane `failing` raises instead). Every lane is a thread of this
    process (GPU_PLATFORM_PLANNER_PROCESSES=0), where the counting sees it."""
    from gpu_platform.planner import branch

    monkeypatch.setenv("GPU_PLATFORM_PLANNER_PROCESSES", "0")
    solved_by = []
    node = branch._Search.node

    def counted(self, lane, bound, n):
        if lane.wid == failing:
            raise RuntimeError(f"lane {failing} failed")
        solved_by.append(lane.wid)
        node(self, lane, bound, n)

    monkeypatch.setattr(branch._Search, "node", counted)
    return solved_by


@pytest.mark.parametrize("lanes", [1, 3])
def test_branch_and_price_proves_the_same_optimum_with_one_lane_or_several(lanes, monkeypatch):
    """Lanes take nodes from one queue, each with its own LP, and share plans, pools and cuts: the optimum and
    its proof are the same however many there are (the search's path is not)."""
    import time

    from gpu_platform.planner import plan

    d = generated_demand(32, 4)
    full = plan(d, 60)
    assert full.optimal
    group = max(groups(d), key=lambda g: len(g.units))
    optimum = sum(p.hourly for p in full.pools if any(int(name[1:]) in group.units for name in p.tiers))
    start = master._greedy(group)
    cols = list({*start, *master._full(group)})
    _, root, _, _ = master._generate(group, cols, math.inf)
    start_cost = sum(group.cost(c) for c in start)
    solved_by = _lanes_solving(monkeypatch)
    result = branch_and_price(group, cols, tuple(start), start_cost, root, time.perf_counter() + 120, 1e-6, lanes=lanes)
    assert_valid_columns(group, result.columns)
    assert result.cost == pytest.approx(optimum, rel=1e-6)
    assert result.bound >= result.cost * (1 - 1e-6)
    assert set(solved_by) == set(range(lanes))  # every lane solved nodes


def test_an_error_in_one_lane_stops_every_lane_and_reaches_the_caller(monkeypatch):
    import threading
    import time

    group = max(groups(generated_demand(32, 4)), key=lambda g: len(g.units))
    _lanes_solving(monkeypatch, failing=1)
    start = master._greedy(group)
    cols = list({*start, *master._full(group)})
    _, root, _, _ = master._generate(group, cols, math.inf)
    with pytest.raises(RuntimeError, match="lane 1 failed"):
        cost = sum(group.cost(c) for c in start)
        branch_and_price(group, cols, tuple(start), cost, root, time.perf_counter() + 120, 1e-6, lanes=2)
    assert not [t for t in threading.enumerate() if t.name.startswith("gpu-platform-bnp")]


def test_a_second_lane_waits_while_the_listings_thread_is_at_work(monkeypatch):
    """The listings' integer program and a second lane would share one core: while the race says the listings
    are at work, every node goes to the first lane, and the search still ends with its proof."""
    import time

    group = max(groups(generated_demand(32, 4)), key=lambda g: len(g.units))
    lanes = _lanes_solving(monkeypatch)
    start = master._greedy(group)
    cols = list({*start, *master._full(group)})
    _, root, _, _ = master._generate(group, cols, math.inf)
    cost = sum(group.cost(c) for c in start)
    race = Race(cost, root, listing=True)
    result = branch_and_price(group, cols, tuple(start), cost, root, time.perf_counter() + 120, 1e-6, race, lanes=2)
    assert result.bound >= result.cost * (1 - 1e-6)
    assert len(lanes) > 1 and set(lanes) == {0}


def _workers(monkeypatch):
    """The worker processes branch-and-price starts, and the nodes each batch they answered held."""
    from gpu_platform.planner import branch, remote

    monkeypatch.setenv("GPU_PLATFORM_PLANNER_PROCESSES", "1")
    started, batches = [], []
    init, merge = remote.Worker.__init__, branch._Search.merge

    def counted_init(self):
        init(self)
        started.append(self)

    def counted_merge(self, reply):
        batches.append(reply.explored)
        merge(self, reply)

    monkeypatch.setattr(remote.Worker, "__init__", counted_init)
    monkeypatch.setattr(branch._Search, "merge", counted_merge)
    return started, batches


def _from_greedy(group):
    """What a search of `group` starts from: the root's pools, the greedy plan, its cost, and the root's bound."""
    start = master._greedy(group)
    cols = list({*start, *master._full(group)})
    _, root, _, _ = master._generate(group, cols, math.inf)
    return cols, tuple(start), sum(group.cost(c) for c in start), root


def _search_setup(tiers=72, seed=1):
    """The large group of a generated demand, the root's pools and bound, the greedy plan and its cost (by
    default one whose search outlasts a worker process's start: about 350 nodes, 5 s in one lane)."""
    group = max(groups(generated_demand(tiers, seed)), key=lambda g: len(g.units))
    return group, *_from_greedy(group)


def test_a_second_lane_in_a_worker_process_proves_the_same_optimum(monkeypatch):
    """Lane 1 in a process of its own (`remote`): it solves nodes there, in batches, and the search proves the
    optimum that the thread lanes prove; the process has ended when the search returns."""
    import time

    started, batches = _workers(monkeypatch)
    group, cols, start, cost, root = _search_setup()
    threads = branch_and_price(group, cols, start, cost, root, time.perf_counter() + 120, 1e-6, lanes=1)
    result = branch_and_price(group, cols, start, cost, root, time.perf_counter() + 120, 1e-6, lanes=2)
    assert_valid_columns(group, result.columns)
    assert result.cost == pytest.approx(threads.cost, rel=1e-6)
    assert result.bound >= result.cost * (1 - 1e-6)
    assert len(started) == 1 and sum(batches) > 0  # the worker solved nodes
    assert started[0].proc.poll() is not None


def test_a_search_with_little_time_left_starts_no_worker_process(monkeypatch):
    """A worker process's imports take about a second: a search that has less than `_SPAWN_LEFT` seconds left
    once past its root runs its second lane as a thread, and one that has more starts the process."""
    import time

    started, _ = _workers(monkeypatch)
    group, cols, start, cost, root = _search_setup()
    short = branch._SPAWN_LEFT - 0.3
    result = branch_and_price(group, cols, start, cost, root, time.perf_counter() + short, 1e-6, lanes=2)
    assert not started
    assert_valid_columns(group, result.columns)
    branch_and_price(group, cols, start, cost, root, time.perf_counter() + branch._SPAWN_LEFT + 2, 1e-6, lanes=2)
    assert len(started) == 1 and started[0].proc.returncode == -9  # killed once the search was done with it


def test_a_worker_process_killed_from_outside_leaves_its_lane_to_a_thread(monkeypatch):
    """The worker ends mid-search (killed, as by the OOM killer): the node it held goes back to the queue, lane
    1 goes on as a thread, and the search still proves the optimum."""
    import time

    from gpu_platform.planner import remote

    started, batches = _workers(monkeypatch)
    ask = remote.Worker.ask

    def killing(self, request, give_up):
        if len(batches) == 2:
            self.proc.kill()
            self.proc.wait()
        return ask(self, request, give_up)

    monkeypatch.setattr(remote.Worker, "ask", killing)
    group, cols, start, cost, root = _search_setup()
    best = branch_and_price(group, cols, start, cost, root, time.perf_counter() + 120, 1e-6, lanes=1)
    result = branch_and_price(group, cols, start, cost, root, time.perf_counter() + 120, 1e-6, lanes=2)
    assert len(batches) == 2 and started[0].proc.returncode == -9  # killed after its second batch
    assert result.cost == pytest.approx(best.cost, rel=1e-6)
    assert result.bound >= result.cost * (1 - 1e-6)


def test_a_worker_process_that_stops_answering_is_given_up_after_the_deadline(monkeypatch):
    """The worker is stopped from outside (SIGSTOP) mid-search: the search does not wait for it past its deadline
    and a second; it kills it, and returns its best plan with a bound that holds (the node the worker held counts
    as open)."""
    import signal
    import time

    from gpu_platform.planner import remote

    started, batches = _workers(monkeypatch)
    ask = remote.Worker.ask

    def stopping(self, request, give_up):
        if len(batches) == 2:
            self.proc.send_signal(signal.SIGSTOP)
        return ask(self, request, give_up)

    monkeypatch.setattr(remote.Worker, "ask", stopping)
    group, cols, start, cost, root = _search_setup()
    began = time.perf_counter()
    result = branch_and_price(group, cols, start, cost, root, began + 3, 1e-6, lanes=2)
    assert time.perf_counter() - began < 3 + 1 + 1  # the deadline, `_LATE`, and a node's time
    assert len(batches) == 2 and started[0].proc.returncode == -9
    assert_valid_columns(group, result.columns)
    assert result.bound <= result.cost + 1e-6


def test_an_error_in_the_worker_process_is_warned_and_its_lane_goes_on_in_this_process(monkeypatch):
    """The worker raises (it ran out of memory, say): a RuntimeWarning carries its traceback, the process is
    ended, the node it held goes back to the queue, and the search proves the optimum without it."""
    import threading
    import time

    from gpu_platform.planner import remote

    started, _ = _workers(monkeypatch)
    ask = remote.Worker.ask
    monkeypatch.setattr(remote.Worker, "ask", lambda self, request, give_up: ask(self, "not a batch", give_up))
    group, cols, start, cost, root = _search_setup()
    best = branch_and_price(group, cols, start, cost, root, time.perf_counter() + 120, 1e-6, lanes=1)
    with pytest.warns(RuntimeWarning, match="worker process failed:(.|\\n)*AttributeError"):
        result = branch_and_price(group, cols, start, cost, root, time.perf_counter() + 120, 1e-6, lanes=2)
    assert result.cost == pytest.approx(best.cost, rel=1e-6) and result.bound >= result.cost * (1 - 1e-6)
    assert len(started) == 1 and started[0].proc.poll() is not None
    assert not [t for t in threading.enumerate() if t.name.startswith("gpu-platform-bnp")]


def test_a_worker_that_never_reads_its_setup_is_given_up_after_the_deadline():
    """A worker stopped before it reads its setup (larger than a pipe holds): the search does not wait for it past
    its deadline and a second, and its second lane runs in this process."""
    import signal
    import time

    from gpu_platform.planner import remote

    worker = remote.Worker()
    worker.proc.send_signal(signal.SIGSTOP)
    group, cols, start, cost, root = _search_setup()
    began = time.perf_counter()
    result = branch_and_price(group, cols, start, cost, root, began + 3, 1e-6, lanes=2, worker=worker)
    assert time.perf_counter() - began < 3 + 1 + 1
    assert worker.proc.returncode == -9 and not worker.set_up
    assert_valid_columns(group, result.columns)


@pytest.mark.parametrize(("value", "on"), [("", True), ("1", True), ("0", False), ("off", False), (" False ", False)])
def test_the_worker_process_is_turned_off_by_the_environment(monkeypatch, value, on):
    from gpu_platform.planner import remote

    monkeypatch.setenv("GPU_PLATFORM_PLANNER_PROCESSES", value)
    assert remote.enabled() is on


def test_a_worker_whose_parent_is_gone_ends_before_the_planners_imports():
    """The worker's first lines ask the kernel to kill it with its parent and check that parent, before the
    planner's imports (about a second): started for a parent already gone, it ends at once. Given the right
    parent (this process), the same lines go on to the imports, which an empty `sys.path` fails."""
    import os
    import subprocess
    import sys

    from gpu_platform.planner import remote

    def boot(parent: int) -> subprocess.CompletedProcess[bytes]:
        args = [sys.executable, "-I", "-c", remote._BOOT, "0", "1", "[]", str(parent)]
        return subprocess.run(args, capture_output=True, timeout=60, check=False)

    gone = boot(os.getppid() if os.getppid() > 1 else 2**22 + 1)  # not the worker's parent
    assert gone.returncode == 0 and not gone.stderr
    here = boot(os.getpid())
    assert here.returncode == 1 and b"No module named 'gpu_platform'" in here.stderr


def test_a_message_pipe_holding_anything_else_reads_as_an_ended_worker():
    import io

    from gpu_platform.planner import remote

    with pytest.raises(EOFError, match="something else"):
        remote._receive(io.BytesIO(b"hello, world\n" * 4))
    assert remote._receive(io.BytesIO(remote._frame(("ready", 1)))) == ("ready", 1)


_ORPHAN = """
import os, sys, time
from gpu_platform.planner import remote
worker = remote.Worker()
print(worker.proc.pid, flush=True)
if os.fork() == 0:  # a child that keeps the worker's request pipe open, as a forked helper would
    for fd in (1, 2):  # (and not the test's output pipes)
        os.dup2(os.open(os.devnull, os.O_WRONLY), fd)
    time.sleep(30)
    os._exit(0)
time.sleep(1)
os._exit(0)  # the parent dies without closing anything
"""


def test_the_worker_process_ends_with_its_parent_even_when_a_forked_child_holds_its_pipe():
    import subprocess
    import sys
    import time

    began = time.monotonic()
    run = subprocess.run([sys.executable, "-c", _ORPHAN], capture_output=True, timeout=60, text=True)
    assert time.monotonic() - began < 20  # the forked child is still asleep
    pid = int(run.stdout.split()[0])
    began = time.monotonic()
    while _alive(pid) and time.monotonic() - began < 10:
        time.sleep(0.05)
    assert not _alive(pid)


def _alive(pid: int) -> bool:
    """Whether process `pid` runs (a zombie does not)."""
    from pathlib import Path

    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def test_solve_group_starts_the_worker_ahead_for_large_groups_and_always_ends_it(monkeypatch):
    """A group of at least `_WORKER_TIERS` tiers gets its worker process before the root's column generation
    (whose core it would otherwise wait for), and the process has ended when `solve_group` returns; a smaller
    group gets one only once its search goes past the root (`_Search.ongoing`)."""
    import time

    started, batches = _workers(monkeypatch)
    generating = master._generate
    started_at_root = []

    def root(*args, **kwargs):
        started_at_root.append(len(started))
        return generating(*args, **kwargs)

    monkeypatch.setattr(master, "_generate", root)
    monkeypatch.setattr(master, "_WORKER_TIERS", 30)
    small, large = (max(groups(generated_demand(n, s)), key=lambda g: len(g.units)) for n, s in ((32, 4), (48, 1)))
    assert len(small.units) < 30 <= len(large.units)
    assert master.solve_group(small, 60).optimal and started_at_root[0] == 0  # (`_generate` runs at every node)
    ahead = len(started)
    started_at_root.clear()
    began = time.perf_counter()
    solved = master.solve_group(large, 60)
    assert solved.optimal and time.perf_counter() - began < 30
    assert started_at_root[0] == ahead + 1 and len(started) == ahead + 1  # before the root, and only that one
    assert all(w.proc.poll() is not None for w in started)


def _listing_setup(monkeypatch):
    """The large group of 32 generated tiers, its root duals and bound, the greedy plan as a Cover, and the number
    of listed pools of each cover program the listings solve, in order."""
    group = max(groups(generated_demand(32, 4)), key=lambda g: len(g.units))
    cols = list({*master._greedy(group), *master._full(group)})
    duals, bound, converged, _ = master._generate(group, cols, math.inf)
    start = master._greedy(group)
    best = Cover(tuple(start), sum(group.cost(c) for c in start), False)
    programs = []
    solve_cover = master.solve_cover

    def counted(group, columns, *args, **kwargs):
        programs.append(len(columns))
        return solve_cover(group, columns, *args, **kwargs)

    monkeypatch.setattr(master, "solve_cover", counted)
    return group, duals, bound, converged, best, programs


def test_the_listings_end_after_their_first_program_once_branch_and_price_has_joined(monkeypatch):
    import time

    group, duals, bound, converged, best, programs = _listing_setup(monkeypatch)
    runs = {}
    for branching in (False, True):
        programs.clear()
        race = Race(best.cost, bound, joined=time.perf_counter() if branching else 0.0)
        listed, proven, _ = master._listings(group, duals, bound, converged, best, math.inf, race)
        runs[branching] = len(programs)
        assert listed.cost <= best.cost and proven <= listed.cost + 1e-6
    assert runs == {False: runs[False], True: 1} and runs[False] > 1  # alone, this group's listings need several


def test_when_no_listing_is_small_enough_the_compact_model_runs_only_without_branch_and_price(monkeypatch):
    import time

    group, duals, bound, converged, best, programs = _listing_setup(monkeypatch)
    monkeypatch.setattr(master, "_ENUM_LIMIT", 1)  # every listing holds too many pools
    race = Race(best.cost, bound)
    assert master._listings(group, duals, bound, converged, best, math.inf, race)[0] is best
    assert programs == []  # branch-and-price takes the time, and both cores
    listed, _, _ = master._listings(group, duals, bound, converged, best, time.perf_counter() + 5, None)
    assert programs == [0] and listed.cost <= best.cost  # the compact model: no listed pools


@pytest.mark.parametrize("processes", ["0", "1"])
def test_an_interrupt_that_leaves_the_search_lock_held_still_stops_every_lane(processes, monkeypatch):
    """Python can raise a Ctrl-C between taking a lock and the `with` block that took it, or as that block exits
    before letting go: the lock stays held by the interrupted thread. The search lets it go before it waits for
    its lanes, which need it (else `plan` waited for ever, and ignored a second Ctrl-C)."""
    import threading
    import time

    monkeypatch.setenv("GPU_PLATFORM_PLANNER_PROCESSES", processes)
    caller, exits = [], []

    class Leaky(threading.Condition):
        def __exit__(self, *exc):
            if threading.current_thread() is caller[0]:
                exits.append(1)
                if len(exits) == 400:  # well into the search, with the second lane at work
                    raise KeyboardInterrupt  # before the lock is let go, as at the block's exit
            return super().__exit__(*exc)

    init = branch._Search.__init__

    def leaky(self, *args, **kwargs):
        init(self, *args, **kwargs)
        self.cond = Leaky()

    monkeypatch.setattr(branch._Search, "__init__", leaky)
    group, cols, start, cost, root = _search_setup()
    ended = []

    def run():
        try:
            branch_and_price(group, cols, start, cost, root, time.perf_counter() + 60, 1e-6)
            ended.append("finished")
        except KeyboardInterrupt:
            ended.append("interrupted")

    thread = threading.Thread(target=run, daemon=True)
    caller.append(thread)
    thread.start()
    thread.join(45)
    assert len(exits) >= 400  # the interrupt came
    assert ended == ["interrupted"]  # and the search stopped, rather than waiting for its lanes for ever


def test_a_free_instance_type_gets_no_cap_from_the_cost_lattice_and_plans():
    """A price override of 0 is allowed: a free node adds nothing to a plan's cost, so its class's node total
    is not cut by what a cheaper plan could afford (that cut divided by the price)."""
    box = ((0.0, math.inf), (2.0, 40.0))
    assert branch.tightened(box, [0.0, 27.44705], 100.0) == ((0.0, math.inf), (2.0, 3.0))
    from gpu_platform.planner import plan

    d = demand(
        {"name": "t0", "mig": {"profile": "1g.20gb", "instances": 54}},
        {"name": "t1", "gpus": 4},
        {"name": "t2", "mig": {"profile": "3g.40gb", "instances": 10}},
        {"name": "t3", "gpus": 32},
        {"name": "t4", "mig": {"profile": "4g.40gb", "instances": 47}},
        instanceTypes=["p4d.24xlarge", "p4de.24xlarge", "p5.48xlarge"],
        priceOverrides={"p4d.24xlarge": 0},
    )
    result = plan(d, 10)
    assert result.optimal
    assert result.hourly == 0.0  # everything fits on the free type
    assert_serves(result, merged_spec(result))


def test_pop_takes_the_children_of_the_lp_nearest_to_integral_among_equal_bounds():
    """Of the nodes of least bound, `pop` takes those whose parent's LP was nearest to integral, and of those the
    newest whose basis is on the asking lane (else the newest); a lower bound comes first, whatever its LP."""
    from types import SimpleNamespace

    def entry(bound, count, frac, lane=None):
        return (bound, -count, _Node(frac=frac, start=None if lane is None else ((lane, 0), count)))

    def queue():
        heap = [entry(100.0, 1, 0.5), entry(100.0, 2, 0.2, lane=0), entry(100.0, 3, 0.2), entry(100.0, 4, 0.9)]
        heapq.heapify(heap)
        return SimpleNamespace(heap=heap)

    def pops(search, lane):
        return [-branch._Search.pop(search, lane)[1] for _ in range(len(search.heap))]

    assert pops(queue(), 0) == [2, 3, 1, 4]  # its own basis first among the nearest, then the newest
    assert pops(queue(), 1) == [3, 2, 1, 4]
    lower = queue()
    heapq.heappush(lower.heap, entry(99.0, 5, 7.5))
    heapq.heappush(lower.heap, entry(100.0 + 1e-8, 6, 0.0))  # the same lattice level as 100 (a rounding apart)
    assert pops(lower, 1) == [5, 6, 3, 2, 1, 4]


def test_children_carry_how_far_from_integral_their_parents_lp_was(monkeypatch):
    """Every child of a node whose LP splits tiers carries the sum of those tiers' fractions (`_Node.frac`), which
    `pop` orders equal bounds by; a node whose LP serves every tier on one candidate passes on 0."""
    import time

    group = max(groups(generated_demand(32, 4)), key=lambda g: len(g.units))  # some 120 branches, most on sizes
    pushed = []
    push = branch._Search.push

    def recorded(self, bound, node):
        pushed.append(node)
        push(self, bound, node)

    monkeypatch.setattr(branch._Search, "push", recorded)
    cols, start, start_cost, root = _from_greedy(group)
    branch_and_price(group, cols, start, start_cost, root, time.perf_counter() + 60, 1e-6, lanes=1)
    children = [n for n in pushed if n.start is not None and not n.retries and (n.fixed or n.forbidden or n.sizes)]
    assert len(children) >= 10 and all(n.frac > 0 for n in children)


def test_branch_and_price_searches_a_group_of_more_prices_than_the_lattice_takes():
    """With more distinct node prices than `LATTICE_PRICES`, no box of node totals applies (`plan` hands such
    groups to the listings alone), and the search called directly still proves the brute-force optimum."""
    import time

    d = demand(
        {"name": "t0", "gpus": 24, "gpuModel": "any"},
        {"name": "t1", "mig": {"profile": "2g.10gb", "instances": 22}},
        {"name": "t2", "mig": {"profile": "2g.10gb", "instances": 19}, "instanceTypes": ["p5.48xlarge"]},
        {"name": "t3", "gpus": 10, "instanceTypes": ["p4de.24xlarge", "p4d.24xlarge"]},
        {"name": "t4", "mig": {"profile": "7g.80gb", "instances": 30}},
        {"name": "t5", "seats": {"count": 55, "perGpu": 2}},
        instanceTypes=["g4dn.12xlarge", "g5.48xlarge", "p5e.48xlarge", "p4de.24xlarge"],
    )
    wide = [g for g in groups(d) if len(set(g.price.values())) > branch.LATTICE_PRICES]
    assert wide
    total = 0.0
    for group in groups(d):
        cols, start, start_cost, root = _from_greedy(group)
        result = branch_and_price(group, cols, start, start_cost, root, time.perf_counter() + 60, 1e-6, lanes=1)
        assert_valid_columns(group, result.columns)
        assert result.bound >= result.cost * (1 - 1e-6)
        total += result.cost
    assert total == pytest.approx(brute_force_hourly(d), rel=1e-6)
