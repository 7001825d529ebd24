"""0/1 knapsacks over tiers: what a pool of n nodes can hold best, and every near-best maximal filling.

An item is (tier index, weight in units, value in $/hour). `best_values` is the dynamic program that prices a
pool exactly; `maximal_fillings` lists every filling that no further item fits into and whose value is within
a budget of the best, which is what makes the planner's column enumeration complete.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

__all__ = ["Filling", "Item", "Table", "best_values", "choice_pick", "choice_values", "maximal_fillings", "pick"]

Item = tuple[int, int, float]
"""(tier index, weight in units, value)."""
Filling = tuple[float, frozenset[int]]
"""(value, tiers) of one filling."""

_EPS = 1e-9


class Table:
    """`rows[i][w]`: the most value the first i items fit into capacity w (`best` is the last row); item i is
    in the best filling at capacity w exactly when it raised the value there (`rows[i + 1][w] > rows[i][w]`)."""

    def __init__(self, rows: np.ndarray) -> None:
        self.rows, self.best = rows, rows[-1]

    def value(self, cap: int) -> float:
        """The best value at capacity `cap` (past the total weight every item fits)."""
        return float(self.best[min(cap, len(self.best) - 1)])


def best_values(items: Sequence[Item], cap: int) -> Table:
    """The knapsack table for capacities 0..cap (cap is clipped to the total weight)."""
    cap = min(cap, sum(w for _, w, _ in items))
    rows = np.zeros((len(items) + 1, cap + 1))
    for i, (_, w, v) in enumerate(items):
        prev, row = rows[i], rows[i + 1]
        if w <= cap and v > _EPS:  # row = max(prev, prev shifted by w plus v): three array operations per item
            row[:w] = prev[:w]
            np.add(prev[: cap + 1 - w], v, out=row[w:])
            np.maximum(row[w:], prev[w:], out=row[w:])
        else:
            row[:] = prev
    return Table(rows)


def pick(items: Sequence[Item], table: Table, cap: int) -> list[int]:
    """The tiers of the best filling at capacity `cap`."""
    cap = min(cap, len(table.best) - 1)
    chosen = []
    for i in range(len(items) - 1, -1, -1):
        if table.rows[i + 1][cap] > table.rows[i][cap]:
            chosen.append(items[i][0])
            cap -= items[i][1]
    return chosen


def choice_values(stages: Sequence[Sequence[Item]], cap: int) -> Table:
    """The table of a knapsack that takes at most one item of each stage (a stage of one item is a plain item;
    the stages are disjoint): `rows[i][w]` is the most value the first i stages fit into capacity w."""
    cap = min(cap, sum(max((w for _, w, _ in st), default=0) for st in stages))
    rows = np.zeros((len(stages) + 1, cap + 1))
    for i, stage in enumerate(stages):
        prev, row = rows[i], rows[i + 1]
        row[:] = prev
        for _, w, v in stage:
            if w <= cap and v > _EPS:
                np.maximum(row[w:], prev[: cap + 1 - w] + v, out=row[w:])
    return Table(rows)


def choice_pick(stages: Sequence[Sequence[Item]], table: Table, cap: int) -> list[int]:
    """The items (ids) of the best filling of `choice_values` at capacity `cap`, one per stage it takes from."""
    cap = min(cap, len(table.best) - 1)
    chosen = []
    for i in range(len(stages) - 1, -1, -1):
        here, prev = table.rows[i + 1][cap], table.rows[i]
        if here > prev[cap]:
            tier, w, _ = min(
                (it for it in stages[i] if it[1] <= cap and it[2] > _EPS),
                key=lambda it: abs(prev[cap - it[1]] + it[2] - here),
            )
            chosen.append(tier)
            cap -= w
    return chosen


def _fractional(order: Sequence[Item], i: int, room: int) -> float:
    """The LP bound on the value items i.. add within `room` (items are in value-density order)."""
    extra = 0.0
    for _, w, v in order[i:]:
        if w <= room:
            extra, room = extra + v, room - w
        else:
            return extra + v * room / w
    return extra


def maximal_fillings(items: Sequence[Item], cap: int, floor: float, limit: int) -> list[Filling] | None:
    """Every maximal filling (no left-out item fits) of value >= floor, as (value, tiers); None past `limit`."""
    order = sorted(items, key=lambda it: -it[2] / max(it[1], 1))
    weight_left = np.concatenate([np.cumsum([w for _, w, _ in order][::-1])[::-1], [0]])
    found: list[Filling] = []

    def walk(i: int, room: int, value: float, chosen: tuple[int, ...], smallest_out: int) -> None:
        # Prune: too little value left to reach the floor, or a left-out item that will always still fit.
        if len(found) > limit or room - weight_left[i] >= smallest_out:
            return
        if value + _fractional(order, i, room) < floor - _EPS:
            return
        if i == len(order):
            found.append((value, frozenset(chosen)))
            return
        tier, w, v = order[i]
        if w <= room:
            walk(i + 1, room - w, value + v, (*chosen, tier), smallest_out)
        walk(i + 1, room, value, chosen, min(smallest_out, w))

    walk(0, cap, 0.0, (), cap + 1)
    return found if len(found) <= limit else None
