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
from gpu_platform.planner.cuts import coefficient, priceable
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


def _worth(tiers, duals):
    """What a pool serving `tiers` is worth at these duals: its tiers' duals, and each cut's dual ceil(k / 2)
    times for the k tiers of it the pool serves."""
    return sum(duals.tiers[t] for t in tiers) + sum(d * coefficient(frozenset(tiers), c) for c, d in duals.cuts)


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
                    best = min(best, price - _worth(set(subset), duals))
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
    columns, bound = price_columns(group, duals, per_cand)
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


def _cut_group(tiers, seed):
    """Groups of three or more tiers of a random demand, each with up to four random cuts that pricing honours
    exactly (duals all > 0), and how many of the triples tried it left out."""
    d = demand(*({"name": f"t{i}", **t} for i, t in enumerate(tiers)), instanceTypes=["p4d.24xlarge", "p4de.24xlarge"])
    rng = np.random.default_rng(seed)
    for group in groups(d):
        if len(group.units) >= 3:
            top = max(group.price.values()) * 4
            triples = list(itertools.combinations(sorted(group.units), 3))
            tried = [triples[i] for i in rng.permutation(len(triples))]
            picked = priceable(group, [], tried, 4)
            pi = {t: float(rng.uniform(0, top)) for t in group.units}
            yield group, rng, pi, tuple((c, float(rng.uniform(top / 8, top / 2))) for c in picked)


def test_a_cut_pricing_cannot_honour_is_left_out_and_refused():
    """A cut holding tiers of two unit kinds on one candidate (a whole-GPU tier and a MIG tier on a MIG layout
    that offers both) is not priced by per-kind knapsacks: separation leaves it out, and pricing refuses it."""
    from gpu_platform.planner import columns

    d = demand(
        {"name": "a", "mig": {"profile": "1g.10gb", "instances": 14}},
        {"name": "b", "mig": {"profile": "3g.40gb", "instances": 4}},
        {"name": "c", "mig": {"profile": "1g.10gb", "instances": 7}},
        instanceTypes=["p4de.24xlarge"],
    )
    group = max(groups(d), key=lambda g: len(g.units))
    a, b, c = sorted(group.units)
    mixed = [
        cand
        for cand, kinds in group.slots.items()
        if any(a in ts for ts in kinds.values()) and any(b in ts for ts in kinds.values()) and len(kinds) > 1
    ]
    assert mixed  # a layout serving a and b from two kinds
    assert columns.cut_stages(group, mixed[0], [(a, b, c)]) is None
    assert priceable(group, [], [(a, b, c)], 5) == []
    with pytest.raises(ValueError, match="cannot price"):
        price_columns(group, Duals(dict.fromkeys(group.units, 1.0), {}, cuts=(((a, b, c), 1.0),)))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_TIER, min_size=3, max_size=6), st.integers(0, 10_000), st.sampled_from([1, 3, 6]))
def test_pricing_with_subset_row_cuts_is_exact(tiers, seed, stage_tiers):
    # Against enumeration: every pool returned pays at the true prices (each cut's dual ceil(k / 2) times), a
    # candidate has one exactly when its least reduced cost is negative, and the Lagrangian bound is the exact
    # one. Stages of 1, 3 or 6 tiers: with 1 only cuts holding at most one tier of each candidate are priced.
    from gpu_platform.planner import columns

    old, columns._STAGE_TIERS = columns._STAGE_TIERS, stage_tiers
    try:
        for group, rng, pi, cuts in _cut_group(tiers, seed):
            top = max(group.price.values()) * 4
            duals = Duals(pi, {c: float(rng.uniform(0, top)) for c in group.slots}, cuts=cuts)
            least = {c: _least_reduced(group, c, duals) for c in group.slots}
            found, bound = price_columns(group, duals, 3)
            for col in found:
                price = group.price[col.cand] * col.nodes + duals.cands.get(col.cand, 0.0)
                assert price - _worth(col.tiers, duals) < -1e-7
            assert {col.cand for col in found} == {c for c, v in least.items() if v < -1e-7}
            want = sum(duals.tiers.values()) + 2 * sum(v for _, v in duals.cuts) - sum(duals.cands.values())
            assert bound == pytest.approx(want + sum(min(0.0, v) for v in least.values()), abs=1e-6)
    finally:
        columns._STAGE_TIERS = old


def test_pricing_past_its_deadline_gives_no_columns_and_no_bound():
    # One pricing round over 1,000 seat tiers took seconds; past the deadline it stops between two knapsack
    # tables. A round cut short prices no candidate in full, so it offers no bound at all (any number would be
    # a guess) and no convergence: column generation keeps the bound it had, and its LP solution still stands.
    from gpu_platform.planner.master import _full, _generate

    d = demand(*({"name": f"t{i}", "gpus": 1 + i % 5} for i in range(6)), instanceTypes=["p4d.24xlarge"])
    (group,) = groups(d)
    duals = Duals(dict.fromkeys(group.units, 100.0), dict.fromkeys(group.slots, 0.0), {}, 0.0)
    columns, bound = price_columns(group, duals, 6)
    assert columns and bound > -math.inf  # in time: a full round
    assert price_columns(group, duals, 6, deadline=0.0) == ([], -math.inf)
    cols = _full(group)  # one pool per candidate serving every tier it can: the first LP is feasible
    _, late, converged, x = _generate(group, cols, deadline=0.0)
    assert late == -math.inf and not converged and len(x) == len(cols)
    _, bound, converged, _ = _generate(group, _full(group), deadline=math.inf)
    assert converged and bound > 0
