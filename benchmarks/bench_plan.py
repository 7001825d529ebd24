"""Plan examples/demand-1000.yaml and print wall time, GPUs used vs the slice lower bound vs first-fit.

Usage: .venv/bin/python benchmarks/bench_plan.py [DEMAND] [--repeat N] [--random-tiers N --seed S]
(--random-tiers plans a generated demand of N mixed tiers over seven A100-80GB MIG profiles instead.)
"""

from __future__ import annotations

import argparse
import random
import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from gpu_platform.planner import load_demand, parse_demand, plan

ROOT = Path(__file__).resolve().parents[1]


def random_demand(tiers: int, seed: int):
    """A generated demand: whole GPUs, MIG instances of seven profiles, and shared seats."""
    return parse_demand(random_demand_file(tiers, seed))


def random_demand_file(tiers: int, seed: int) -> dict[str, Any]:
    """`random_demand` as the demand file that holds it."""
    rng = random.Random(seed)
    profiles = ["1g.10gb", "1g.10gb+me", "1g.20gb", "2g.20gb", "3g.40gb", "4g.40gb", "7g.80gb"]
    out = []
    for i in range(tiers):
        kind = rng.choice(["gpus", "mig", "mig", "mig", "seats"])
        if kind == "gpus":
            out.append({"name": f"t{i}", "gpus": rng.randint(8, 80)})
        elif kind == "mig":
            out.append({"name": f"t{i}", "mig": {"profile": rng.choice(profiles), "instances": rng.randint(5, 200)}})
        else:
            out.append(
                {
                    "name": f"t{i}",
                    "seats": {"count": rng.randint(10, 300), "perGpu": rng.choice([2, 4, 8])},
                    "isolation": rng.choice(["none", "process"]),
                }
            )
    types = ["p4d.24xlarge", "p4de.24xlarge", "p5.48xlarge", "p5en.48xlarge"]
    return {"cloud": "aws", "instanceTypes": types, "tiers": out}


def at_least(low: int) -> Callable[[str], int]:
    """An argparse type: a whole number of at least `low`."""

    def count(text: str) -> int:
        value = int(text)
        if value < low:
            raise argparse.ArgumentTypeError(f"{value} is not at least {low}")
        return value

    return count


def main() -> None:
    """Run the benchmark and print its tables."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("demand", nargs="?", default=str(ROOT / "examples" / "demand-1000.yaml"))
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--time-limit", type=float, default=10.0)
    parser.add_argument("--random-tiers", type=int, default=0)
    parser.add_argument("--seed", type=int, default=3)
    args = parser.parse_args()
    if args.random_tiers:
        args.demand = f"random-{args.random_tiers}-tiers-seed-{args.seed}"
    times, result = [], None
    for _ in range(args.repeat):
        start = time.perf_counter()
        demand = random_demand(args.random_tiers, args.seed) if args.random_tiers else load_demand(args.demand)
        result = plan(demand, args.time_limit)
        times.append(time.perf_counter() - start)
    console = Console(width=160)
    summary = Table(title=f"planner: {Path(args.demand).name} ({args.repeat} runs)", title_justify="left")
    for col in (
        "wall s (median)",
        "wall s (max)",
        "status",
        "pools",
        "GPUs planned",
        "GPU lower bound",
        "whole-GPU baseline GPUs",
        "$/hour",
        "baseline $/hour",
        "saving",
    ):
        summary.add_column(col, justify="right")
    status = "optimal" if result.optimal else f"gap {result.gap:.2%}"
    summary.add_row(
        f"{statistics.median(times):.3f}",
        f"{max(times):.3f}",
        status,
        str(len(result.pools)),
        str(result.gpus),
        str(result.lower_bound_gpus),
        str(result.baseline_gpus),
        f"{result.hourly:,.2f}",
        f"{result.baseline_hourly:,.2f}",
        f"{result.saving_percent:.1f}%",
    )
    console.print(summary)
    mig = Table(title="MIG packing (GPUs): exact vs slice lower bound vs first-fit decreasing", title_justify="left")
    for col in ("GPU model", "instances", "lower bound", "exact", "first-fit", "first-fit extra", "in MIG pools"):
        mig.add_column(col, justify="left" if col in ("GPU model",) else "right")
    for m in result.mig:
        pooled = sum(p.gpus for p in result.pools if p.candidate.layout and p.candidate.itype.gpu_model == m.gpu_model)
        mig.add_row(
            m.gpu_model,
            str(sum(m.instances.values())),
            str(m.lower_bound),
            str(m.exact),
            str(m.first_fit),
            f"{m.first_fit - m.exact:+d}",
            str(pooled),
        )
    console.print(mig)
    console.print("'in MIG pools' is what the plan provisions: one layout per pool, one pool per tier, whole nodes.")


if __name__ == "__main__":
    main()
