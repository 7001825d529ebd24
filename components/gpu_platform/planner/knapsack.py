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
    """A knapsack's best values: `best[w]`, the most value its items fit into capacity w. For backtracking, either
    `rows[i][w]`, the most value the first i items (or stages) fit into w (`choice_values`), or `taken[i][w]`,
    whether item i is in the best filling of the first i + 1 items at w, that is, it raised the value there
    (`best_values`: one bit per cell, packed, not 64; on 1,000 seat tiers, a table of 1,001 x 250,001 values took
    2 GB)."""

    def __init__(self, best: np.ndarray, rows: np.ndarray | None = None, taken: np.ndarray | None = None) -> None:
        self.best, self.rows, self.taken = best, rows, taken

    def value(self, cap: int) -> float:
        """The best value at capacity `cap` (past the total weight every item fits)."""
        return float(self.best[min(cap, len(self.best) - 1)])


def best_values(items: Sequence[Item], cap: int) -> Table:
    """The knapsack table for capacities 0..cap (cap is clipped to the total weight)."""
    cap = min(cap, sum(w for _, w, _ in items))
    taken = np.zeros((len(items), (cap + 8) // 8), dtype=np.uint8)  # a bit per capacity (`np.packbits`)
    raised = np.zeros(cap + 1, dtype=bool)
    prev, row = np.zeros(cap + 1), np.empty(cap + 1)
    for i, (_, w, v) in enumerate(items):
        if w <= cap and v > _EPS:  # row = max(prev, prev shifted by w plus v): five array operations per item
            row[:w] = prev[:w]
            np.add(prev[: cap + 1 - w], v, out=row[w:])
            np.maximum(row[w:], prev[w:], out=row[w:])
            np.greater(row, prev, out=raised)
            taken[i] = np.packbits(raised)
            prev, row = row, prev
    return Table(prev, taken=taken)


def pick(items: Sequence[Item], table: Table, cap: int) -> list[int]:
    """The tiers of the best filling at capacity `cap` (a table of `best_values`)."""
    assert table.taken is not None
    cap = min(cap, len(table.best) - 1)
    chosen = []
    for i in range(len(items) - 1, -1, -1):
        if table.taken[i, cap >> 3] >> (7 - (cap & 7)) & 1:
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
    return Table(rows[-1], rows=rows)


def choice_pick(stages: Sequence[Sequence[Item]], table: Table, cap: int) -> list[int]:
    """The items (ids) of the best filling of `choice_values` at capacity `cap`, one per stage it takes from."""
    assert table.rows is not None
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
