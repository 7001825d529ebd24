"""A quick plan to start the exact search from: round the column LP, then improve by moving tiers.

Each tier goes to the candidate the LP gives most of it to; then, until nothing helps, a tier moves to
another candidate, two tiers in different pools swap, or a whole pool moves to another candidate, whenever
that lowers the cost. The result is a valid plan with no claim to optimality: the integer program that
follows starts from it (so its first incumbent is good) and does the proving.
"""

from __future__ import annotations

import math
import time
from collections import defaultdict
from typing import TYPE_CHECKING

from .columns import Column, Group, merged

if TYPE_CHECKING:
    import numpy as np

__all__ = ["improve", "rounded"]


def rounded(group: Group, cols: list[Column], x: np.ndarray) -> dict[int, int]:
    """Tier -> candidate: where the LP solution `x` over `cols` serves most of each tier."""
    share: dict[int, dict[int, float]] = defaultdict(lambda: defaultdict(float))
    for col, v in zip(cols, x, strict=True):
        if v > 1e-9:
            for t in col.tiers:
                share[t][col.cand] += float(v)
    out = {}
    for t in group.units:
        if share[t]:
            out[t] = max(share[t].items(), key=lambda kv: (kv[1], -kv[0]))[0]
    return out


class _State:
    """Units per (candidate, kind) and the node count and cost they make."""

    def __init__(self, group: Group, where: dict[int, int]) -> None:
        self.group, self.where = group, dict(where)
        self.kind = {(t, c): k for c, kinds in group.slots.items() for k, ts in kinds.items() for t in ts}
        self.load: dict[int, dict[str, int]] = defaultdict(lambda: defaultdict(int))
        for t, c in self.where.items():
            self.load[c][self.kind[(t, c)]] += group.units[t]
        self.nodes = {c: self.nodes_of(c, load) for c, load in self.load.items()}  # per candidate, kept up to date

    def nodes_of(self, cand: int, load: dict[str, int]) -> int:
        return max((math.ceil(u / self.group.per_node[(cand, k)]) for k, u in load.items() if u), default=0)

    def cost_of(self, cand: int, load: dict[str, int]) -> float:
        return self.group.price[cand] * self.nodes_of(cand, load)

    def delta(self, changes: dict[int, dict[str, int]]) -> float:
        """Cost change of adding `changes[c][k]` units (negative: removing) to each candidate's load."""
        out = 0.0
        for c, by_kind in changes.items():
            now = self.load[c]
            after = dict(now)
            for k, u in by_kind.items():
                after[k] = after.get(k, 0) + u
            out += self.cost_of(c, after) - self.group.price[c] * self.nodes.get(c, 0)
        return out

    def move_delta(self, t: int, to: int, removed: float) -> float:
        """`delta` of moving tier `t` to `to`, given what taking it off its candidate changes (`removed`): from
        the node counts kept per candidate, a few operations instead of a candidate's whole load per move."""
        kind, now = self.kind[(t, to)], self.nodes.get(to, 0)
        need = math.ceil((self.load[to].get(kind, 0) + self.group.units[t]) / self.group.per_node[(to, kind)])
        price = self.group.price[to]
        return removed + (price * max(now, need) - price * now)

    def apply(self, moves: dict[int, int]) -> None:
        for t, c in moves.items():
            old = self.where[t]
            self.load[old][self.kind[(t, old)]] -= self.group.units[t]
            self.load[c][self.kind[(t, c)]] += self.group.units[t]
            self.where[t] = c
            self.nodes[old], self.nodes[c] = self.nodes_of(old, self.load[old]), self.nodes_of(c, self.load[c])


def _changes(state: _State, moves: dict[int, int]) -> dict[int, dict[str, int]]:
    out: dict[int, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    for t, c in moves.items():
        old, u = state.where[t], state.group.units[t]
        out[old][state.kind[(t, old)]] -= u
        out[c][state.kind[(t, c)]] += u
    return out


def _move_pass(state: _State, serves: dict[int, list[int]]) -> bool:
    """Each tier to the candidate that lowers the cost most; True when one moved."""
    moved = False
    for t in sorted(state.group.units):
        best, to, old = -1e-7, None, state.where[t]
        after = dict(state.load[old])
        after[state.kind[(t, old)]] -= state.group.units[t]
        removed = state.cost_of(old, after) - state.group.price[old] * state.nodes[old]
        for c in serves[t]:
            if c != old and (d := state.move_delta(t, c, removed)) < best:
                best, to = d, c
        if to is not None:
            state.apply({t: to})
            moved = True
    return moved


def _swap_pass(state: _State, deadline: float) -> bool:
    """Two tiers on different candidates swap when that lowers the cost; True when one did."""
    moved, tiers = False, sorted(state.group.units)
    for i, a in enumerate(tiers):
        if time.perf_counter() > deadline:
            break
        for b in tiers[i + 1 :]:
            ca, cb = state.where[a], state.where[b]
            if (
                ca != cb
                and (b, ca) in state.kind
                and (a, cb) in state.kind
                and state.delta(_changes(state, {a: cb, b: ca})) < -1e-7
            ):
                state.apply({a: cb, b: ca})
                moved = True
    return moved


def _pool_pass(state: _State, serves: dict[int, list[int]]) -> bool:
    """A whole pool to the candidate that serves all its tiers for less; True when one moved."""
    pools: dict[int, list[int]] = defaultdict(list)
    for t, c in state.where.items():
        pools[c].append(t)
    moved = False
    for c, ts in pools.items():
        best, to = -1e-7, None
        for other in set.intersection(*(set(serves[t]) for t in ts)) - {c}:
            if (d := state.delta(_changes(state, dict.fromkeys(ts, other)))) < best:
                best, to = d, other
        if to is not None:
            state.apply(dict.fromkeys(ts, to))
            moved = True
    return moved


def improve(group: Group, where: dict[int, int], deadline: float) -> list[Column]:
    """The plan `where` (tier -> candidate) after moves, swaps and pool moves that lower its cost."""
    state = _State(group, where)
    serves: dict[int, list[int]] = defaultdict(list)
    for t, c in state.kind:
        serves[t].append(c)
    while time.perf_counter() < deadline:
        moved = _move_pass(state, serves)
        moved = _swap_pass(state, deadline) or moved
        if not (_pool_pass(state, serves) or moved):
            break
    on: dict[int, list[int]] = defaultdict(list)
    for t, c in state.where.items():
        on[c].append(t)
    return [merged(group, c, ts) for c, ts in on.items()]
