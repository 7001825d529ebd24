"""Subset-row cuts on tier triples: a bound above the column LP's, valid for every plan.

Half the three cover rows of tiers a, b, c (each served at least once) gives, for pools x >= 0, the sum over
pools of |pool's tiers in {a, b, c}| / 2 at least 3 / 2; rounding each pool's coefficient up keeps it valid,
and for whole pools the left side is a whole number, so it is at least 2 (Jepsen, Petersen, Spoorendonk and
Pisinger, "Subset-row inequalities applied to the vehicle-routing problem with time windows", Operations
Research 56(2), 2008). An LP that serves the three tiers with pools each holding two of them, each half used,
has 1.5 on the left: the cut takes that solution away. It is valid at every node of a search that only
restricts which candidates serve which tiers, so cuts are kept for the whole search.
"""

from __future__ import annotations

import itertools

import numpy as np

from .columns import Column, Cut, Group, priced_exactly

__all__ = ["coefficient", "priceable", "violated"]

_TRIPLES = 60_000  # triples looked at, at most, per separation (the fractional tiers' first ones)


def coefficient(tiers: frozenset[int], cut: Cut) -> int:
    """A pool's coefficient in the cut: ceil(k / 2) for the k tiers of the cut it serves."""
    k = (cut[0] in tiers) + (cut[1] in tiers) + (cut[2] in tiers)
    return (k + 1) // 2


def violated(cols: list[Column], x: np.ndarray, most: int, by: float) -> list[Cut]:
    """Up to `most` triples whose cut the LP solution `x` over `cols` violates by at least `by`, most violated
    first. Only tiers no single pool serves wholly can be in one (a tier served by a pool at 1 puts that pool
    on the left at 1, and the other two tiers' pools bring the rest)."""
    pos = np.flatnonzero(x > 1e-9)
    weight = x[pos]
    whole = {t for j, w in zip(pos, weight, strict=True) if w >= 1 - 1e-6 for t in cols[j].tiers}
    tiers = sorted({t for j in pos for t in cols[j].tiers} - whole)
    if len(tiers) < 3:
        return []
    at = {t: i for i, t in enumerate(tiers)}
    served = np.zeros((len(pos), len(tiers)), dtype=np.int8)
    for row, j in enumerate(pos):
        served[row, [at[t] for t in cols[j].tiers if t in at]] = 1
    triples = np.array(list(itertools.islice(itertools.combinations(range(len(tiers)), 3), _TRIPLES)))
    out: list[tuple[float, Cut]] = []
    for chunk in np.array_split(triples, max(1, len(triples) // 4_000)):
        k = served[:, chunk[:, 0]] + served[:, chunk[:, 1]] + served[:, chunk[:, 2]]
        lhs = weight @ ((k + 1) // 2)
        for i in np.flatnonzero(lhs < 2 - by):
            a, b, c = chunk[i]
            out.append((float(lhs[i]), (tiers[a], tiers[b], tiers[c])))
    out.sort()
    return [cut for _, cut in out[:most]]


def priceable(group: Group, kept: list[Cut], found: list[Cut], most: int) -> list[Cut]:
    """Up to `most` of `found`, in order, that pricing can honour exactly together with `kept`
    (`columns.priced_exactly`: on every candidate, the tiers of a cut it serves two or three of are of one unit
    kind, in stages of a few tiers). Cuts across unit kinds are left out: pricing them needs a search per
    candidate that costs far more than the nodes they save."""
    out: list[Cut] = []
    for cut in found:
        if len(out) == most:
            break
        if priced_exactly(group, [*kept, *out, cut]):
            out.append(cut)
    return out
