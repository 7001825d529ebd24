"""Branch-and-price on tier-to-candidate assignments: a lower bound above the column LP's, and plans on the way.

A node of the search fixes some tiers to one candidate (no other candidate may serve them) and forbids some
(tier, candidate) pairs; both only remove tiers from candidates' slots, so pricing stays the exact knapsack
of `columns.price_columns` and column generation at a node gives a true lower bound on every plan the node
allows (any duals give one, so a node stopped early still has a bound), rounded up to a cost whole nodes can
add up to (`next_cost`). A node whose bound reaches the best plan known is pruned. When the LP serves every
tier wholly on one candidate, each candidate's columns all hold the tiers assigned to it, so the plan that
pools those tiers per candidate costs no more than the LP value: it is that node's optimum (to the relative
gap column generation converged to). Otherwise the tier served most evenly between candidates is branched
on: fixed to the candidate serving most of it, or forbidden there. Nodes are taken lowest bound first, and
the least bound still open is a lower bound on every plan of the group.
"""

from __future__ import annotations

import heapq
import math
import time
from collections import defaultdict
from dataclasses import dataclass, replace

import numpy as np

from .columns import Column, Group, merged
from .local import improve

__all__ = ["branch_and_price", "next_cost"]

_ROUNDS = 30  # pricing rounds, at most, per node
_RETRIES = 3  # an integral node whose column generation has not converged after this many tries stays open
_INTEGRAL = 1 - 1e-6  # a tier served at least this much on one candidate counts as assigned there
_LATTICE_PRICES = 3  # `next_cost` rounds up over at most this many distinct node prices
_LATTICE_STEPS = 250_000  # and at most this many node-count combinations


def next_cost(prices: set[float], x: float) -> float:
    """The least cost at least `x` (less a rounding margin) that whole nodes at `prices` can add up to; `x`
    itself when there are too many prices to try. Every plan costs such a sum, so this is a bound when `x` is."""
    ps = sorted(p for p in prices if p > 0)
    if not ps or x <= 0 or len(ps) > _LATTICE_PRICES:
        return x
    counts = [np.arange(math.ceil(x / p) + 1) * p for p in ps[1:]]
    if math.prod(len(c) for c in counts) > _LATTICE_STEPS:
        return x
    partial = np.zeros(1)
    for c in counts:
        partial = (partial[:, None] + c[None, :]).ravel()
    rest = np.maximum(x - partial, 0.0)
    best = float((partial + np.ceil(rest / ps[0] - 1e-9) * ps[0]).min())
    return max(x, best - 1e-9 * max(1.0, best))


@dataclass(frozen=True)
class BranchResult:
    """The best plan found (the one passed in when none beat it), its cost, and the proven lower bound."""

    columns: tuple[Column, ...]
    cost: float
    bound: float
    nodes: int


@dataclass(frozen=True)
class _Node:
    fixed: frozenset[tuple[int, int]] = frozenset()  # (tier, candidate): only that candidate serves the tier
    forbidden: frozenset[tuple[int, int]] = frozenset()  # (tier, candidate): that candidate does not serve it
    retries: int = 0  # times its column generation stopped short of converging with an integral LP


def _restricted(group: Group, node: _Node) -> Group:
    """`group` with the node's fixings and prohibitions taken out of the candidates' slots."""
    fixed = dict(node.fixed)
    slots = {
        c: {k: [t for t in ts if (t, c) not in node.forbidden and fixed.get(t, c) == c] for k, ts in kinds.items()}
        for c, kinds in group.slots.items()
    }
    return replace(group, slots=slots)


def _allowed(sub: Group, col: Column) -> bool:
    kinds = sub.slots.get(col.cand, {})
    return all(any(t in ts for ts in kinds.values()) for t in col.tiers)


def branch_and_price(
    group: Group,
    columns: list[Column],
    best: tuple[Column, ...],
    best_cost: float,
    root_bound: float,
    deadline: float,
    rel_gap: float,
) -> BranchResult:
    """Search the assignments of `group` until the best plan is proven within `rel_gap` or the deadline.

    `columns` are pools known to price well (the root's generated columns), `best` the best plan known and
    `root_bound` a lower bound already proven for the whole group.
    """
    from .master import _full, _generate  # the column generation loop (imported here: master imports this module)

    pool = list(dict.fromkeys(columns))
    prices = set(group.price.values())
    heap: list[tuple[float, int, _Node]] = [(root_bound, 0, _Node())]
    count, explored = 1, 0
    stuck: list[float] = []  # bounds of nodes left open for good (solver tolerances stop their pricing)

    while heap and time.perf_counter() < deadline:
        bound, _, node = heapq.heappop(heap)
        if bound >= best_cost - rel_gap * best_cost:
            continue
        explored += 1
        sub = _restricted(group, node)
        if any(not any(t in ts for kinds in sub.slots.values() for ts in kinds.values()) for t in group.units):
            continue  # a tier no candidate may serve: no plan here
        cols = [c for c in pool if c.tiers and _allowed(sub, c)]
        have = set(cols)
        cols += [c for c in _full(sub) if c.tiers and c not in have]
        _, node_bound, converged, x = _generate(sub, cols, deadline, None, _ROUNDS, best_cost, rel_gap)
        pool += cols[len(have) :]
        node_bound = next_cost(prices, max(node_bound, bound))
        if node_bound >= best_cost - rel_gap * best_cost:
            continue
        share: dict[int, dict[int, float]] = defaultdict(lambda: defaultdict(float))
        for col, v in zip(cols, x, strict=True):
            for t in col.tiers if v > 1e-9 else ():
                share[t][col.cand] += float(v)
        where = {t: max(sh.items(), key=lambda kv: kv[1])[0] for t, sh in share.items()}
        if len(where) == len(group.units):
            found = improve(sub, where, deadline)
            cost = sum(group.cost(c) for c in found)
            if cost < best_cost - 1e-9:
                best, best_cost = tuple(found), cost
        open_ = {t: sh for t, sh in share.items() if max(sh.values()) < _INTEGRAL}
        if not open_ and converged and len(where) == len(group.units):
            on: dict[int, list[int]] = defaultdict(list)
            for t, c in where.items():
                on[c].append(t)
            plan = [merged(group, c, ts) for c, ts in on.items()]
            cost = sum(group.cost(c) for c in plan)
            if cost < best_cost - 1e-9:
                best, best_cost = tuple(plan), cost
            continue  # this node's optimum is known
        if not open_:  # not converged: price again (the pool kept the new columns), a few times at most
            if node.retries >= _RETRIES:
                stuck.append(node_bound)
            else:
                heapq.heappush(heap, (node_bound, count, replace(node, retries=node.retries + 1)))
                count += 1
            continue
        tier = min(open_, key=lambda t: abs(max(open_[t].values()) - 0.5))
        cand = max(open_[tier].items(), key=lambda kv: kv[1])[0]
        for child in (
            replace(node, fixed=node.fixed | {(tier, cand)}),
            replace(node, forbidden=node.forbidden | {(tier, cand)}),
        ):
            heapq.heappush(heap, (node_bound, count, child))
            count += 1
    bound = min([b for b, _, _ in heap] + stuck + [best_cost])
    return BranchResult(best, best_cost, max(min(bound, best_cost), root_bound), explored)
