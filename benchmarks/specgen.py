"""Generate fleet specs of a given size (GPUs, teams) for benchmarks: all four sharing modes, quotas within capacity."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from typing import Any

SIZES = ((100, 10), (1_000, 100), (10_000, 1_000))  # (GPUs, teams) every benchmark measures

_MODES = (
    ({"mode": "exclusive"}, [None]),
    (
        {"mode": "mig", "migLayout": {"3g.40gb": 1, "2g.20gb": 1, "1g.10gb": 2}},
        ["nvidia.com/mig-3g.40gb", "nvidia.com/mig-2g.20gb", "nvidia.com/mig-1g.10gb"],
    ),
    ({"mode": "time-slicing", "replicas": 4}, [None]),
    ({"mode": "mps", "replicas": 8}, [None]),
)
_UNITS = (1, 1, 4, 8)  # units per GPU of each tier resource, in _MODES order


def make_spec(gpus: int, teams: int, gpus_per_pool: int = 200) -> dict[str, Any]:
    """A valid AWS spec with `gpus` A100-80GB GPUs (p4de.24xlarge) and `teams` teams."""
    nodes_total = gpus // 8
    n_pools = max(4, gpus // gpus_per_pool)
    pools, tiers = [], []
    capacity: dict[str, int] = {}
    for i in range(n_pools):
        nodes = nodes_total // n_pools + (1 if i < nodes_total % n_pools else 0)
        sharing, resources = _MODES[i % 4]
        name = f"pool-{i:04d}"
        pools.append(
            {"name": name, "instanceType": "p4de.24xlarge", "sharing": sharing, "minSize": 0, "maxSize": nodes}
        )
        for j, res in enumerate(resources):
            tier = f"tier-{i:04d}-{j}"
            t = {"name": tier, "pool": name, "priority": 1000 + i * 10 + j}
            if res:
                t["resource"] = res
            tiers.append(t)
            per_gpu = {"nvidia.com/mig-1g.10gb": 2}.get(res, 1) * _UNITS[i % 4]
            capacity[tier] = nodes * 8 * per_gpu
    team_list = []
    names = list(capacity)
    for k in range(teams):
        quotas = {}
        for tier in (names[k % len(names)], names[(k * 7 + 3) % len(names)]):
            share = capacity[tier] // max(1, (teams * 2) // len(names) + 1)
            quotas[tier] = max(0, share)
        team_list.append(
            {"name": f"team-{k:04d}", "namespaces": [f"ns-{k:04d}"], "cohort": f"cohort-{k % 10}", "quotas": quotas}
        )
    return {
        "cloud": "aws",
        "clusterName": "bench",
        "kubernetesVersion": "1.33",
        "labelDomain": "gpu.bench.io",
        "aws": {"region": "us-east-1", "subnetIds": ["subnet-1"], "nodeRoleArn": "arn:aws:iam::111122223333:role/n"},
        "nodePools": pools,
        "tiers": tiers,
        "teams": team_list,
        "scheduling": {"kueue": {"enabled": True}, "volcano": {"enabled": True}},
    }


def median_ms(fn: Callable[[], object], runs: int) -> float:
    """Median wall time of `runs` calls of `fn`, in milliseconds."""
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)
