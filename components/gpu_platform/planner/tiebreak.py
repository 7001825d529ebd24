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

from .columns import Column, Group, merged

__all__ = ["fewer_nodes", "prefer_mig"]


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


def fewer_nodes(group: Group, pools: list[Column], mode_of: dict[int, str]) -> list[Column]:
    """`pools` with each moved to the candidate of the same sharing mode (`mode_of`: candidate -> its mode) that
    serves its tiers on the fewest nodes at no more cost, when that is fewer nodes than it has; no candidate holds
    two pools. The mode stays, so the tie-break towards each tier's preferred mode is not undone."""
    out, used = list(pools), {p.cand for p in pools}
    for i, pool in enumerate(out):
        cost, best = group.cost(pool), pool
        for cand in sorted(group.slots):
            if (
                cand in used
                or mode_of[cand] != mode_of[pool.cand]
                or (cand in group.direct) != (pool.cand in group.direct)
            ):
                continue
            if not all(_serves(group, cand, t) for t in pool.tiers):
                continue
            moved = merged(group, cand, pool.tiers)
            if moved.nodes < best.nodes and moved.nodes <= group.max_nodes(cand) and group.cost(moved) <= cost:
                best = moved
        if best is not pool:
            used.discard(pool.cand)
            used.add(best.cand)
            out[i] = best
    return out
