"""Pricing, exactly: the knapsack table and the filling it picks, the most negative reduced cost of each
candidate's pools and the Lagrangian bound at any duals, and the node boxes branch-and-price cuts by the best
plan's cost. Each is checked against enumeration."""

from __future__ import annotations

import itertools
import math
from dataclasses import replace

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gpu_platform.planner.branch import tightened
from gpu_platform.planner.columns import Duals, price_columns
from gpu_platform.planner.cuts import coefficient
from gpu_platform.planner.knapsack import best_values, pick
from helpers.planner import demand, groups, tiers

_TIER = tiers(gpus=12, instances=24)

_VALUE = st.integers(0, 2000).map(lambda c: c / 100)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(1, 12), _VALUE), max_size=7), st.integers(0, 45))
def test_the_knapsack_table_and_its_filling_are_the_best_at_every_capacity(raw, cap):
    items = [(i, w, v) for i, (w, v) in enumerate(raw)]
    table = best_values(items, cap)
    for c in range(cap + 1):
        want = max(
            sum(v for _, _, v in subset)
            for n in range(len(items) + 1)
            for subset in itertools.combinations(items, n)
            if sum(w for _, w, _ in subset) <= c
        )
        assert table.value(c) == pytest.approx(want, abs=1e-9)
        chosen = pick(items, table, c)
        assert len(set(chosen)) == len(chosen)
        assert sum(items[t][1] for t in chosen) <= c
        assert sum(items[t][2] for t in chosen) == pytest.approx(want, abs=1e-9)


def _least_reduced(group, cand, duals):
    """The least reduced cost over every pool of `cand`: each node count, each set of its tiers that fits."""
    tiers = sorted({t for ts in group.slots[cand].values() for t in ts})
    kind = {t: k for k, ts in group.slots[cand].items() for t in ts}
    best = math.inf
    most = max(  # worked out here, not by Group.max_nodes: enough nodes for every tier, or the group's cap
        math.ceil(sum(group.units[t] for t in ts) / group.per_node[(cand, k)]) for k, ts in group.slots[cand].items()
    )
    for n in range(1, min(most, group.node_cap.get(cand, most)) + 1):
        price = (group.price[cand] + duals.per_node.get(cand, 0.0)) * n + duals.cands.get(cand, 0.0)
        for size in range(len(tiers) + 1):
            for subset in itertools.combinations(tiers, size):
                load: dict[str, int] = {}
                for t in subset:
                    load[kind[t]] = load.get(kind[t], 0) + group.units[t]
                if all(u <= group.per_node[(cand, k)] * n for k, u in load.items()):
                    best = min(best, price - sum(duals.tiers[t] for t in subset))
    return best


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_TIER, min_size=2, max_size=5), st.integers(0, 10_000), st.booleans())
def test_pricing_finds_each_candidates_least_reduced_cost_and_the_lagrangian_bound(tiers, seed, capped):
    # Several calls on one group at different duals (pricing keeps per-group structure between calls, never
    # values), with node caps on some candidates (groups cut to a gap), and any number of columns per candidate.
    d = demand(*({"name": f"t{i}", **t} for i, t in enumerate(tiers)), instanceTypes=["p4d.24xlarge", "p4de.24xlarge"])
    rng = np.random.default_rng(seed)
    for found in groups(d):
        caps = {c: int(rng.integers(1, 4)) for c in found.slots if capped and rng.random() < 0.5}
        group = replace(found, node_cap=caps)
        for per_cand in (6, 2, 1):
            _check_pricing(group, rng, per_cand)


def _check_pricing(group, rng, per_cand):
    """Pricing at random duals against enumeration: the bound, and each candidate's best columns."""
    top = max(group.price.values()) * 4
    duals = Duals(
        {t: float(rng.uniform(0, top)) for t in group.units},
        {c: float(rng.uniform(0, top / 4)) for c in group.slots},
        {c: float(rng.uniform(-5, 5)) for c in group.slots},
        float(rng.uniform(-10, 10)),
    )
    least = {c: _least_reduced(group, c, duals) for c in group.slots}
    columns, bound, exact = price_columns(group, duals, per_cand)
    assert exact
    assert all(sum(col.cand == c for col in columns) <= per_cand for c in group.slots)
    want = sum(duals.tiers.values()) - sum(duals.cands.values()) + duals.offset
    assert bound == pytest.approx(want + sum(min(0.0, v) for v in least.values()), abs=1e-6)
    for c, v in least.items():
        found = [col for col in columns if col.cand == c]
        assert bool(found) == (v < -1e-7)  # a column for every candidate that has an improving pool
        for col in found:
            price = (group.price[c] + duals.per_node.get(c, 0.0)) * col.nodes + duals.cands.get(c, 0.0)
            assert price - sum(duals.tiers[t] for t in col.tiers) < -1e-7
        if found:  # the first is the best
            col = found[0]
            price = (group.price[c] + duals.per_node.get(c, 0.0)) * col.nodes + duals.cands.get(c, 0.0)
            assert price - sum(duals.tiers[t] for t in col.tiers) == pytest.approx(v, abs=1e-6)


@settings(max_examples=80, deadline=None)
@given(
    st.lists(st.integers(50, 5000).map(lambda c: c / 100), min_size=1, max_size=3, unique=True),
    st.lists(st.tuples(st.integers(0, 6), st.integers(0, 8)), min_size=3, max_size=3),
    st.integers(0, 20000).map(lambda c: c / 100),
)
def test_a_box_cut_by_the_best_cost_keeps_every_cheaper_node_count_and_no_more(prices, spans, below):
    prices = sorted(prices)
    box = tuple((float(lo), float(lo + extra)) for (lo, extra), _ in zip(spans, prices, strict=False))
    cut = tightened(box, prices, below)
    assert all(lo == c_lo and c_hi <= hi for (lo, hi), (c_lo, c_hi) in zip(box, cut, strict=True))
    counts = list(itertools.product(*(range(int(lo), int(hi) + 1) for lo, hi in box)))
    cheaper = [n for n in counts if sum(k * p for k, p in zip(n, prices, strict=True)) < below - 1e-9]
    for n in cheaper:  # every count vector costing less than `below` stays in the cut box
        assert all(lo <= k <= hi for k, (lo, hi) in zip(n, cut, strict=True))
    for i, (lo, hi) in enumerate(cut):  # and each class's new most is reached by one that costs no more
        if lo <= hi:
            n = [c_lo for c_lo, _ in cut]
            n[i] = hi
            assert sum(k * p for k, p in zip(n, prices, strict=True)) <= below + 1e-6


def _least_with_cuts(group, cand, duals):
    """The least reduced cost over every pool of `cand`, each cut's dual counted ceil(k / 2) times for the k
    tiers of it the pool serves (by enumeration)."""
    tiers = sorted({t for ts in group.slots[cand].values() for t in ts})
    kind = {t: k for k, ts in group.slots[cand].items() for t in ts}
    most = max(
        math.ceil(sum(group.units[t] for t in ts) / group.per_node[(cand, k)]) for k, ts in group.slots[cand].items()
    )
    best = math.inf
    for n in range(1, most + 1):
        price = (group.price[cand] + duals.per_node.get(cand, 0.0)) * n + duals.cands.get(cand, 0.0)
        for size in range(len(tiers) + 1):
            for subset in itertools.combinations(tiers, size):
                load: dict[str, int] = {}
                for t in subset:
                    load[kind[t]] = load.get(kind[t], 0) + group.units[t]
                if all(u <= group.per_node[(cand, k)] * n for k, u in load.items()):
                    best = min(best, price - _worth(set(subset), duals))
    return best


def _worth(tiers, duals):
    return sum(duals.tiers[t] for t in tiers) + sum(d * coefficient(frozenset(tiers), c) for c, d in duals.cuts)


def _cut_group(tiers, seed):
    """Groups of three or more tiers of a random demand, each with four random cuts (duals all > 0)."""
    d = demand(*({"name": f"t{i}", **t} for i, t in enumerate(tiers)), instanceTypes=["p4d.24xlarge", "p4de.24xlarge"])
    rng = np.random.default_rng(seed)
    for group in groups(d):
        if len(group.units) >= 3:
            top = max(group.price.values()) * 4
            triples = list(itertools.combinations(sorted(group.units), 3))
            picked = [triples[i] for i in rng.choice(len(triples), min(len(triples), 4), replace=False)]
            pi = {t: float(rng.uniform(0, top)) for t in group.units}
            yield group, rng, pi, tuple((c, float(rng.uniform(top / 8, top / 2))) for c in picked)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_TIER, min_size=3, max_size=6), st.integers(0, 10_000), st.sampled_from([1, 3, 6]))
def test_the_search_behind_pricing_with_cuts_finds_a_paying_pool_or_proves_there_is_none(tiers, seed, stage_tiers):
    # Each candidate's own dual is set so that the knapsack's bound (cuts outside its stages priced k times)
    # is a little below 0: the best filling then often serves two tiers of a cut and the search must branch.
    # A stage of 1 tier prices every cut loosely; of 3 or 6, some or all inside the knapsack.
    from gpu_platform.planner import columns

    old, columns._STAGE_TIERS = columns._STAGE_TIERS, stage_tiers
    try:
        for group, _, pi, cuts in _cut_group(tiers, seed):
            for cand in group.slots:
                exact, loose = columns._exact_cuts(group, cand, list(cuts))
                nodes = np.arange(1, group.max_nodes(cand) + 1)
                free = Duals(pi, {}, cuts=cuts)
                floor = float(columns._cut_reduced(group, cand, nodes, free, list(cuts), exact, frozenset(), {}).min())
                for share in (0.1, 0.5, 0.9):
                    duals = Duals(pi, {cand: max(0.0, -floor - share * max(v for _, v in cuts))}, cuts=cuts)
                    least = _least_with_cuts(group, cand, duals)
                    found, low, done = columns._penalized(group, cand, duals, list(cuts), exact, loose, {})
                    assert done and low <= least + 1e-6  # a valid bound on the least reduced cost
                    if found:
                        (col,) = found
                        price = group.price[cand] * col.nodes + duals.cands.get(cand, 0.0)
                        assert price - _worth(col.tiers, duals) < -1e-7
                    else:
                        assert least >= -1e-7
    finally:
        columns._STAGE_TIERS = old


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_TIER, min_size=3, max_size=6), st.integers(0, 10_000))
def test_pricing_with_subset_row_cuts_returns_paying_pools_and_a_bound_that_holds(tiers, seed):
    for group, rng, pi, cuts in _cut_group(tiers, seed):
        top = max(group.price.values()) * 4
        duals = Duals(pi, {c: float(rng.uniform(0, top)) for c in group.slots}, cuts=cuts)
        least = {c: _least_with_cuts(group, c, duals) for c in group.slots}
        found, bound, exact = price_columns(group, duals, 3)
        assert exact or found  # with a column to add, pricing need not have searched every candidate
        for col in found:  # every column returned pays at the true prices
            price = group.price[col.cand] * col.nodes + duals.cands.get(col.cand, 0.0)
            assert price - _worth(col.tiers, duals) < -1e-7
        want = sum(duals.tiers.values()) + 2 * sum(v for _, v in duals.cuts) - sum(duals.cands.values())
        true_bound = want + sum(min(0.0, v) for v in least.values())
        assert bound <= true_bound + 1e-6  # a valid bound
        assert bool(found) == any(v < -1e-7 for v in least.values())
        if not found:  # nothing pays: the bound is the exact one
            assert bound == pytest.approx(true_bound, abs=1e-6)
