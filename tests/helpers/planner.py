"""Planner test helpers: a demand builder, the plan merged into a spec, and an independent brute-force optimum."""

from __future__ import annotations

import itertools
import math
import sys
from pathlib import Path
from typing import Any

from hypothesis import strategies as st

from gpu_platform.capacity import pool_capacity
from gpu_platform.catalog import layout_fits
from gpu_platform.load import parse_spec
from gpu_platform.planner import parse_demand, spec_fragment
from gpu_platform.planner.candidates import allowed_types, build_candidates, unit_capacity
from gpu_platform.planner.columns import split_groups, without_dominated
from gpu_platform.planner.demand import catalog_of
from gpu_platform.planner.solve import _pairs

BASE = {"clusterName": "planned", "labelDomain": "gpu.example.com"}
CLOUD = {
    "aws": {
        "region": "us-east-1",
        "subnetIds": ["subnet-a"],
        "nodeRoleArn": "arn:aws:iam::111122223333:role/gpu-nodes",
    },
    "gcp": {"project": "ml-project", "location": "us-central1", "zones": ["us-central1-a"]},
}
TYPES = ["p4d.24xlarge", "p4de.24xlarge", "p5.48xlarge"]


def generated_demand(tiers: int, seed: int):
    """`benchmarks/bench_plan.random_demand(tiers, seed)`: the scale benchmark's generated demands."""
    return _bench_plan().random_demand(tiers, seed)


def generated_demand_file(tiers: int, seed: int) -> dict[str, Any]:
    """The demand file of `generated_demand(tiers, seed)`."""
    out: dict[str, Any] = _bench_plan().random_demand_file(tiers, seed)
    return out


def _bench_plan() -> Any:
    bench = str(Path(__file__).resolve().parents[2] / "benchmarks")
    if bench not in sys.path:
        sys.path.insert(0, bench)
    import bench_plan

    return bench_plan


def demand(*tiers: dict[str, Any], **top: Any):
    """A parsed AWS demand over `tiers` (instance types default to TYPES)."""
    return parse_demand({"cloud": "aws", "instanceTypes": TYPES, **top, "tiers": list(tiers)})


def merged_spec(result, cloud: str = "aws"):
    """The plan's fragment merged into a minimal spec, validated."""
    return parse_spec({"cloud": cloud, **BASE, cloud: CLOUD[cloud], **spec_fragment(result)})


def assert_serves(result, spec) -> None:
    """Every tier's demand fits the capacity its pool has at minSize, and every MIG layout is valid."""
    for tier in result.demand.tiers:
        spec_tier = spec.tiers_by_name[tier.name]
        pool = spec.pools_by_name[spec_tier.pool]
        cap = pool_capacity(spec, pool)
        resource = spec.resource_of(spec_tier)
        served = sum(
            t.units
            for t in result.demand.tiers
            if result.tier_pool[t.name] == pool.name and spec.resource_of(spec.tiers_by_name[t.name]) == resource
        )
        assert cap.units(resource, pool.min_size) >= served >= tier.units
        if pool.sharing.mig_layout:
            assert layout_fits(cap.gpu_model, pool.sharing.mig_layout)


def brute_force_hourly(d) -> float:
    """The cheapest plan found by trying every routing of every tier to every candidate pool (small demands)."""
    catalog = catalog_of(d)
    cands = build_candidates(d, catalog)
    options = []
    for tier in d.tiers:
        allowed = {t.name for t in allowed_types(d, tier, catalog)}
        options.append(
            [
                (c, cap)
                for c, cand in enumerate(cands)
                if cand.itype.name in allowed
                for cap in [unit_capacity(tier, cand, catalog)]
                if cap
            ]
        )
    best = math.inf
    for routing in itertools.product(*options):
        load: dict[tuple[int, str], int] = {}
        for tier, (c, (kind, _)) in zip(d.tiers, routing, strict=True):
            load[(c, kind)] = load.get((c, kind), 0) + tier.units
        nodes: dict[int, int] = {}
        for (c, kind), units in load.items():
            per_node = cands[c].itype.gpu_count * cands[c].units_per_gpu[kind]
            nodes[c] = max(nodes.get(c, 0), math.ceil(units / per_node))
        best = min(best, sum(n * cands[c].itype.hourly_usd for c, n in nodes.items()))
    return best


def assert_valid_columns(group: Any, cols: Any) -> None:
    """Every tier of `group` in exactly one pool, one pool per candidate, each pool's load within its nodes."""
    served = [t for c in cols for t in c.tiers]
    assert sorted(served) == sorted(group.units)  # every tier in exactly one pool
    assert len({c.cand for c in cols}) == len(cols)  # one pool per candidate
    for col in cols:
        for kind, tiers in group.slots[col.cand].items():
            load = sum(group.units[t] for t in col.tiers if t in tiers)
            assert load <= group.per_node[(col.cand, kind)] * col.nodes
        assert all(any(t in ts for ts in group.slots[col.cand].values()) for t in col.tiers)


def tiers(gpus: int, instances: int, profiles: tuple[str, ...] = ("1g.10gb", "2g.20gb", "3g.40gb", "4g.40gb")):
    """A Hypothesis strategy for one demand tier: up to `gpus` whole GPUs, or up to `instances` MIG instances of
    one of `profiles`."""
    return st.one_of(
        st.builds(lambda n: {"gpus": n}, st.integers(1, gpus)),
        st.builds(
            lambda p, n: {"mig": {"profile": p, "instances": n}}, st.sampled_from(profiles), st.integers(1, instances)
        ),
    )


def groups(d):
    """The planner's tier groups of demand `d`, as `solve_group` gets them."""
    catalog = catalog_of(d)
    cands = build_candidates(d, catalog)
    return [without_dominated(g) for g in split_groups([t.units for t in d.tiers], _pairs(d, cands, catalog), cands)]
