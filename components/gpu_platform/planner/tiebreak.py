"""Break cost ties towards each tier's preferred sharing mode, without ever changing what the plan costs.

A MIG tier may run on whole GPUs (its fallback); when the cheapest plan puts one there, this pass moves it
into a MIG pool of the plan that has room for it at its planned nodes, and turns an exclusive pool that only
serves such tiers into a MIG pool of the same instance type and no more nodes. Every step keeps or lowers
each pool's nodes, so the plan's cost, and with it "optimal" and the lower bound, stay true.
"""

from __future__ import annotations

from .columns import Column, Group, merged

__all__ = ["prefer_mig"]


def _serves(group: Group, cand: int, tier: int) -> bool:
    return any(tier in ts for ts in group.slots[cand].values())


def _move(group: Group, pools: dict[int, Column], tier: int, home: int) -> bool:
    """Move `tier` from whole GPUs at `home` into a MIG pool with room; True when it moved."""
    for cand, pool in pools.items():
        if cand in group.direct or not _serves(group, cand, tier):
            continue
        grown = merged(group, cand, pool.tiers | {tier})
        if grown.nodes <= pool.nodes:
            pools[cand] = grown
            rest = pools[home].tiers - {tier}
            pools[home] = merged(group, home, rest) if rest else None
            return True
    return False


def _convert(group: Group, pools: dict[int, Column], home: int, itype_of: dict[int, str]) -> None:
    """Turn the exclusive pool `home`, serving only MIG tiers, into a MIG pool of the same type and nodes."""
    pool = pools[home]
    for cand in sorted(set(group.slots) - group.direct - set(pools)):
        if itype_of[cand] == itype_of[home] and all(_serves(group, cand, t) for t in pool.tiers):
            shaped = merged(group, cand, pool.tiers)
            if shaped.nodes <= pool.nodes:
                del pools[home]
                pools[cand] = shaped
                return


def prefer_mig(group: Group, pools: list[Column], mig_tiers: set[int], itype_of: dict[int, str]) -> list[Column]:
    """`pools` with MIG tiers on whole GPUs moved to MIG pools where that costs nothing."""
    by_cand = {p.cand: p for p in pools}
    for home in [c for c in by_cand if c in group.direct]:
        for tier in sorted(by_cand[home].tiers & mig_tiers):
            if by_cand.get(home) is not None:
                _move(group, by_cand, tier, home)
        if by_cand.get(home) is None:
            del by_cand[home]
        elif by_cand[home].tiers <= mig_tiers:
            _convert(group, by_cand, home, itype_of)
    return list(by_cand.values())
