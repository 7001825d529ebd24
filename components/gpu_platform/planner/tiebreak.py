"""Break cost ties towards each tier's preferred sharing mode, then towards fewer nodes, without ever raising
what the plan costs.

A MIG tier may run on whole GPUs (its fallback); when the cheapest plan puts one there, this pass moves it
into a MIG pool of the plan that has room for it at its planned nodes, and moves the MIG tiers left on an
exclusive pool into a new MIG pool of the same instance type when the two need no more nodes than before.
No step adds a node, so the plan's cost, and with it "optimal" and the lower bound, stay true.

Then each pool moves to the instance type that holds its tiers on the fewest nodes for no more money: GCP
prices its A2 and A3 machines per GPU, so eight `a2-highgpu-1g` cost what one `a2-highgpu-8g` does, and a
training tier is better on one machine (NVLink, one node to drain) than spread over eight.
"""

from __future__ import annotations

import math
import time

from .columns import Column, Group, merged

__all__ = ["fewer_nodes", "prefer_mig"]

# Costs this close (relative) count as equal: a price per node need not be exactly 2 or 8 times another in floating
# point (a2-highgpu-2g against two a2-highgpu-1g); far below the planner's relative gap (1e-6).
_SAME = 1e-9


def _serves(group: Group, cand: int, tier: int) -> bool:
    return any(tier in ts for ts in group.slots[cand].values())


def _move(group: Group, pools: dict[int, Column | None], tier: int, home: int) -> bool:
    """Move `tier` from whole GPUs at `home` into a MIG pool with room; True when it moved."""
    home_pool = pools[home]
    if home_pool is None:
        return False
    for cand, pool in pools.items():
        if pool is None or cand in group.direct or not _serves(group, cand, tier):
            continue
        grown = merged(group, cand, pool.tiers | {tier})
        if grown.nodes <= pool.nodes:
            pools[cand] = grown
            rest = home_pool.tiers - {tier}
            pools[home] = merged(group, home, rest) if rest else None
            return True
    return False


def _split(
    group: Group, pools: dict[int, Column | None], home: int, mig_tiers: set[int], itype_of: dict[int, str]
) -> None:
    """Move the MIG tiers of the exclusive pool `home` into a new MIG pool of the same instance type, when the
    two pools together need no more nodes than `home` alone."""
    pool = pools[home]
    if pool is None:
        return
    moving, rest = pool.tiers & mig_tiers, pool.tiers - mig_tiers
    kept = merged(group, home, rest) if rest else None
    for cand in sorted(set(group.slots) - group.direct - set(pools)):
        if itype_of[cand] == itype_of[home] and all(_serves(group, cand, t) for t in moving):
            shaped = merged(group, cand, moving)
            if shaped.nodes + (kept.nodes if kept else 0) <= pool.nodes:
                pools[cand] = shaped
                pools[home] = kept
                return


def prefer_mig(group: Group, pools: list[Column], mig_tiers: set[int], itype_of: dict[int, str]) -> list[Column]:
    """`pools` with MIG tiers on whole GPUs moved to MIG pools where that costs nothing."""
    by_cand: dict[int, Column | None] = {p.cand: p for p in pools}
    for home in [c for c in by_cand if c in group.direct]:
        home_pool = by_cand[home]
        for tier in sorted(home_pool.tiers & mig_tiers) if home_pool is not None else ():
            if by_cand.get(home) is not None:
                _move(group, by_cand, tier, home)
        if (left := by_cand.get(home)) is not None and left.tiers & mig_tiers:
            _split(group, by_cand, home, mig_tiers, itype_of)
    return [p for p in by_cand.values() if p is not None]


def fewer_nodes(
    group: Group, pools: list[Column], mode_of: dict[int, str], grow: float = 1.0, deadline: float = math.inf
) -> list[Column]:
    """`pools` on fewer nodes for no more money: a pool moved whole, or one of its tiers taken into a pool of its
    own, each to the candidate of the same sharing mode (`mode_of`: candidate -> its mode) that holds it on the
    fewest nodes, when the plan then has fewer nodes and costs no more, at its node counts and at its pools' most
    nodes (each pool's nodes times `grow`, rounded up: the headroom); no candidate holds two pools. The mode
    stays, so the tie-break towards each tier's preferred mode is not undone. After each step every pool is looked
    at again (a pool that moved may have freed the candidate another wants). Past `deadline` the pools are left as
    they are then (each step keeps the plan valid). Every step takes a node away, so the loop ends."""
    kind_of = {(c, t): k for c, kinds in group.slots.items() for k, ts in kinds.items() for t in ts}
    serves: dict[int, set[int]] = {c: {t for ts in kinds.values() for t in ts} for c, kinds in group.slots.items()}
    same = {
        c: [d for d in sorted(group.slots) if mode_of[d] == mode_of[c] and (d in group.direct) == (c in group.direct)]
        for c in group.slots
    }

    def most(cand: int, nodes: int) -> float:
        return group.price[cand] * math.ceil(nodes * grow - 1e-9)

    def within(value: float, limit: float) -> bool:
        return value <= limit + _SAME * abs(limit)  # relative: a price of $0.0001 has no absolute slack

    def sums_of(cand: int, tiers: frozenset[int]) -> dict[str, int]:
        sums: dict[str, int] = {}
        for t in tiers:
            sums[kind_of[(cand, t)]] = sums.get(kind_of[(cand, t)], 0) + group.units[t]
        return sums

    def nodes_of(cand: int, tiers: frozenset[int], less: int = -1) -> int:
        """Nodes of a pool of `cand` serving `tiers` (without the tier `less`), as `merged` counts them."""
        sums = sums_of(cand, tiers) if less < 0 else dict(whole)
        if less >= 0:
            sums[kind_of[(cand, less)]] -= group.units[less]
        return max((math.ceil(v / group.per_node[(cand, k)]) for k, v in sums.items() if v > 0), default=0)

    def best_for(tiers: frozenset[int], like: int, used: set[int], cost: float, ceiling: float) -> tuple[int, int]:
        """(candidate, nodes) of the fewest nodes, of `like`'s mode, that serves `tiers` for at most `cost` (and
        `ceiling` at its most nodes); (-1, 0) for none."""
        found = (-1, 0)
        for cand in same[like]:
            if cand in used or not tiers <= serves[cand]:
                continue
            n = nodes_of(cand, tiers)
            if (
                n <= group.max_nodes(cand)
                and within(group.price[cand] * n, cost)
                and within(most(cand, n), ceiling)
                and (found[0] < 0 or n < found[1])
            ):
                found = (cand, n)
        return found

    out = list(pools)
    used = {p.cand for p in out}
    whole: dict[str, int] = {}  # the units per kind of the pool looked at
    i = 0
    while i < len(out):
        if time.perf_counter() > deadline:
            break
        pool = out[i]
        cost, ceiling = group.cost(pool), most(pool.cand, pool.nodes)
        cand, n = best_for(pool.tiers, pool.cand, used, cost, ceiling)  # the pool moved whole
        if cand >= 0 and n < pool.nodes:
            used.discard(pool.cand)
            used.add(cand)
            out[i] = Column(cand, n, pool.tiers)
            i = 0  # a candidate freed: every pool looked at again
            continue
        whole = sums_of(pool.cand, pool.tiers)
        for t in sorted(pool.tiers) if len(pool.tiers) > 1 else ():  # one of its tiers into a pool of its own
            rest = pool.tiers - {t}
            kept = nodes_of(pool.cand, pool.tiers, less=t)
            cand, n = best_for(
                frozenset({t}),
                pool.cand,
                used,
                cost - group.price[pool.cand] * kept,
                ceiling - most(pool.cand, kept),
            )
            if cand >= 0 and kept + n < pool.nodes:
                used.add(cand)
                out[i : i + 1] = [Column(pool.cand, kept, rest), Column(cand, n, frozenset({t}))]
                i = 0
                break
        else:
            i += 1
    return out
