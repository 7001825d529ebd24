"""Queue checks registered in `validation.DOMAIN_CHECKS`: quotas against pool capacity, queue names.

Capacity of a tier = nodes x GPUs per node x units per GPU (1 exclusive, replicas for time-slicing and MPS,
the profile count for MIG), taken at the pool's max size. Kueue can admit at most the sum of the nominal
quotas on a (pool, resource) -- borrowing only moves unused quota between teams of a cohort -- so:
- one team's nominal quota above what the pool can ever provide is an error;
- quotas that together exceed the pool at max size are a warning (admitted pods could stay Pending);
- a tier no team has quota for bypasses Kueue's quota, and an unusable borrowing limit is a note.
"""

from __future__ import annotations

from collections.abc import Iterator

from ..capacity import pool_capacity, units_per_gpu
from ..errors import Finding, Severity
from ..spec import NodePool, PlatformSpec, Tier
from .kueue import tier_quotas
from .releases import KUEUE_FRAMEWORKS

__all__ = ["check_queues", "tier_capacity"]

_VOLCANO_RESERVED = ("default", "root")
_QUEUEING_STRATEGIES = ("BestEffortFIFO", "StrictFIFO")


def tier_capacity(spec: PlatformSpec, tier: Tier) -> tuple[int, int]:
    """Units of the tier's resource its pool offers at (min, max) size."""
    pool = spec.pools_by_name[tier.pool]
    cap = pool_capacity(spec, pool)
    resource = spec.resource_of(tier)
    return cap.units(resource, pool.min_size), cap.units(resource, pool.max_size)


def _formula(spec: PlatformSpec, pool: NodePool, resource: str) -> str:
    cap = pool_capacity(spec, pool)
    per_gpu = units_per_gpu(spec, pool).get(resource, 0)
    return f"{pool.max_size} nodes x {cap.gpus_per_node} GPUs x {per_gpu} per GPU"


def _groups(spec: PlatformSpec) -> dict[tuple[str, str], list[int]]:
    """(pool, resource) -> indexes of the tiers routing there (tiers sharing one share its capacity)."""
    out: dict[tuple[str, str], list[int]] = {}
    for j, tier in enumerate(spec.tiers):
        out.setdefault((tier.pool, spec.resource_of(tier)), []).append(j)
    return out


def check_queue_capacity(spec: PlatformSpec) -> Iterator[Finding]:
    """Per tier: each team's quota and the sum of quotas against the pool's capacity at max size."""
    for (pool_name, resource), idx in _groups(spec).items():
        pool = spec.pools_by_name[pool_name]
        names = [spec.tiers[j].name for j in idx]
        _, cap_max = tier_capacity(spec, spec.tiers[idx[0]])
        shares: list[str] = []
        total = 0
        for i, team in enumerate(spec.teams):
            for tier in names:
                n = team.quotas.get(tier)
                if n is None:
                    continue
                total += n
                shares.append(f"{team.name} {n}")
                if n > cap_max:
                    yield Finding(
                        f"teams[{i}].quotas.{tier}",
                        f"{n} {resource} exceeds what pool {pool_name!r} can ever provide: {cap_max} at max "
                        f"size ({_formula(spec, pool, resource)}); allowed: 0..{cap_max}; lower the quota "
                        f"or raise the pool's maxSize",
                    )
        label = "/".join(names)
        if total > cap_max:
            yield Finding(
                f"tiers[{idx[0]}]",
                f"quotas of tier {label} sum to {total} {resource} ({', '.join(shares)}) but pool "
                f"{pool_name!r} has {cap_max} at max size ({_formula(spec, pool, resource)}): Kueue may "
                f"admit {total - cap_max} more than can run (cohort borrowing only moves unused quota, "
                "never adds any); lower quotas or raise maxSize",
                Severity.WARNING,
            )
        if not shares and spec.scheduling.kueue.enabled:
            yield Finding(
                f"tiers[{idx[0]}]",
                f"no team has quota for tier {label}: its jobs are not quota-managed by Kueue "
                f"(no ClusterQueue covers {resource} on {pool_name!r}); add quotas.{names[0]} to a team",
                Severity.INFO,
            )


def _cohort_root(spec: PlatformSpec, cohort: str) -> str:
    parents = {c.name: c.parent for c in spec.scheduling.cohorts}
    seen = {cohort}
    while (parent := parents.get(cohort)) and parent not in seen:
        cohort = parent
        seen.add(cohort)
    return cohort


def check_borrowing(spec: PlatformSpec) -> Iterator[Finding]:
    """A borrowing limit above what the rest of the cohort tree can lend is a note (it can never be used)."""
    roots = {t.cohort: _cohort_root(spec, t.cohort) for t in spec.teams if t.cohort}
    for i, team in enumerate(spec.teams):
        if not team.cohort or not team.borrowing_limit:
            continue
        root = roots[team.cohort]
        peers = [t for t in spec.teams if t is not team and t.cohort and roots[t.cohort] == root]
        for tier, limit in team.borrowing_limit.items():
            t = spec.tiers_by_name[tier]
            key = (t.pool, spec.resource_of(t))
            lent = [tier_quotas(spec, p).get(key) for p in peers]
            lendable = sum(q.nominal if q.lending is None else q.lending for q in lent if q)
            if limit > lendable:
                yield Finding(
                    f"teams[{i}].borrowingLimit.{tier}",
                    f"{limit} is more than the other teams of cohort {root!r} can lend for tier {tier!r} "
                    f"({lendable}); at most {lendable} can ever be borrowed",
                    Severity.INFO,
                )


def check_queue_names(spec: PlatformSpec) -> Iterator[Finding]:
    """With Volcano on, no team is named after a built-in queue. (A tier name's length, which its priority class
    `gpu-<tier>` in the `kueue.x-k8s.io/priority-class` label bounds, is checked by its type, `names.TierName`.)"""
    if not spec.scheduling.volcano.enabled:
        return
    for i, team in enumerate(spec.teams):
        if team.name in _VOLCANO_RESERVED:
            yield Finding(f"teams[{i}].name", f"{team.name!r} is a built-in Volcano queue; allowed: any other name")


def check_kueue_settings(spec: PlatformSpec) -> Iterator[Finding]:
    """Kueue's queueing strategy and integrations are names Kueue 0.19 knows (else CQs or the manager fail)."""
    kueue = spec.scheduling.kueue
    if not kueue.enabled:
        return
    if kueue.queueing_strategy not in _QUEUEING_STRATEGIES:
        yield Finding(
            "scheduling.kueue.queueingStrategy",
            f"{kueue.queueing_strategy!r} is not a Kueue queueing strategy; allowed: {', '.join(_QUEUEING_STRATEGIES)}",
        )
    for i, name in enumerate(kueue.integrations):
        if name not in KUEUE_FRAMEWORKS:
            yield Finding(
                f"scheduling.kueue.integrations[{i}]",
                f"{name!r} is not a Kueue 0.19.2 integration (the manager would not start); "
                f"allowed: {', '.join(KUEUE_FRAMEWORKS)}",
            )


def check_queues(spec: PlatformSpec) -> Iterator[Finding]:
    """Every queues-domain finding (the function registered in DOMAIN_CHECKS)."""
    yield from check_kueue_settings(spec)
    yield from check_queue_capacity(spec)
    yield from check_borrowing(spec)
    yield from check_queue_names(spec)
