"""Plan generated demands of 16-128 tiers: time to the first plan within 1 % of the best known, and to proof.

Usage: .venv/bin/python benchmarks/bench_plan_scale.py [--tiers 16 32 64 128] [--seeds 1 2 3] [--repeat 3]
       [--time-limit 60] [--proof-only]

Demands come from `bench_plan.random_demand` (whole GPUs, seven A100-80GB MIG profiles, time-sliced and MPS
seats; four AWS instance types). "to proof" is the wall time of `plan(demand, time_limit)` when it reports
optimal. "to 1 %" re-plans with time limits 0.5, 1, 2, 5, 10, 20 and 30 s and takes the wall time of the first
run whose plan costs at most 1 % more than the best plan known (the proven optimum when there is one): the
planner's anytime quality, measured from outside. "gap at 30 s" is the gap the planner itself proves with a
30 s limit: (plan - lower bound) / plan, so the plan is at most that far above the optimum. Each figure is the
median of --repeat runs. --proof-only plans each demand --repeat times with the time limit and reports every
run's wall time and whether it was proven (no "to 1 %" ladder, no 30 s runs): a wide sweep of seeds in minutes.
"""

from __future__ import annotations

import argparse
import statistics
import time

from bench_plan import at_least, random_demand
from rich.console import Console
from rich.table import Table

from gpu_platform.planner import plan

_LADDER = (0.5, 1.0, 2.0, 5.0, 10.0, 20.0, 30.0)


def _timed(tiers: int, seed: int, limit: float):
    start = time.perf_counter()
    result = plan(random_demand(tiers, seed), limit)
    return time.perf_counter() - start, result


def _to_one_percent(tiers: int, seed: int, best: float) -> float | None:
    for limit in _LADDER:
        wall, result = _timed(tiers, seed, limit)
        if result.hourly <= best * 1.01:
            return wall
    return None


def _row(tiers: int, seed: int, limit: float, repeat: int) -> list[str]:
    runs = [_timed(tiers, seed, limit) for _ in range(repeat)]
    best = min(r.hourly for _, r in runs)
    proven = [wall for wall, r in runs if r.optimal]
    first = [_to_one_percent(tiers, seed, best) for _ in range(repeat)]
    gap = max(r.gap for _, r in runs)
    at_30 = max(_timed(tiers, seed, 30.0)[1].gap for _ in range(repeat))
    fmt = lambda xs: f"{statistics.median(xs):.2f}" if xs and None not in xs else "-"  # noqa: E731
    status = f"optimal {len(proven)}/{repeat}" if proven else f"gap {gap:.2%}"
    return [
        str(tiers),
        str(seed),
        fmt(first),
        fmt(proven) if len(proven) == repeat else "-",
        f"{at_30:.2%}",
        status,
        f"{best:,.2f}",
        f"{min(r.cost_bound for _, r in runs):,.2f}",
    ]


def _proof_row(tiers: int, seed: int, limit: float, repeat: int) -> list[str]:
    runs = [_timed(tiers, seed, limit) for _ in range(repeat)]
    walls = " / ".join(f"{wall:.1f}" for wall, _ in runs)
    proven = sum(r.optimal for _, r in runs)
    status = f"optimal {proven}/{repeat}" if proven else f"gap {max(r.gap for _, r in runs):.2%}"
    return [str(tiers), str(seed), walls, status, f"{min(r.hourly for _, r in runs):,.2f}"]


def main() -> None:
    """Run the benchmark and print its table."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--tiers", type=at_least(1), nargs="+", default=[16, 32, 64, 128])
    parser.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3])
    parser.add_argument("--repeat", type=at_least(1), default=3)
    parser.add_argument("--time-limit", type=float, default=60.0)
    parser.add_argument("--proof-only", action="store_true", help="whole plans only: wall time and status per run")
    args = parser.parse_args()
    if args.proof_only:
        title = f"whole plans ({args.repeat} runs each, time limit {args.time_limit:g} s)"
        columns, row = ("tiers", "seed", "s per run", "status", "$/hour"), _proof_row
    else:
        title = f"planner at scale (median of {args.repeat}, time limit {args.time_limit:g} s)"
        columns = ("tiers", "seed", "s to 1 %", "s to proof", "gap at 30 s", "status", "$/hour", "bound $/hour")
        row = _row
    table = Table(title=title, title_justify="left")
    for col in columns:
        table.add_column(col, justify="right" if col != "status" else "left")
    console = Console(width=140)
    for tiers in args.tiers:
        for seed in args.seeds:
            table.add_row(*row(tiers, seed, args.time_limit, args.repeat))
            console.print(f"done: {tiers} tiers, seed {seed}", style="dim")
    console.print(table)


if __name__ == "__main__":
    main()
