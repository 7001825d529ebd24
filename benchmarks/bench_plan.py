"""Plan examples/demand-1000.yaml and print wall time, GPUs used vs the slice lower bound vs first-fit.

Usage: .venv/bin/python benchmarks/bench_plan.py [DEMAND] [--repeat N]
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

from rich.console import Console
from rich.table import Table

from gpu_platform.planner import load_demand, plan

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    """Run the benchmark and print its tables."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("demand", nargs="?", default=str(ROOT / "examples" / "demand-1000.yaml"))
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--time-limit", type=float, default=10.0)
    args = parser.parse_args()
    times, result = [], None
    for _ in range(args.repeat):
        start = time.perf_counter()
        result = plan(load_demand(args.demand), args.time_limit)
        times.append(time.perf_counter() - start)
    console = Console(width=160)
    summary = Table(title=f"planner: {Path(args.demand).name} ({args.repeat} runs)", title_justify="left")
    for col in ("wall s (median)", "wall s (max)", "status", "pools", "GPUs planned", "GPU lower bound",
                "whole-GPU baseline GPUs", "$/hour", "baseline $/hour", "saving"):
        summary.add_column(col, justify="right")
    status = "optimal" if result.optimal else f"gap {result.gap:.2%}"
    summary.add_row(f"{statistics.median(times):.3f}", f"{max(times):.3f}", status, str(len(result.pools)),
                    str(result.gpus), str(result.lower_bound_gpus), str(result.baseline_gpus),
                    f"{result.hourly:,.2f}", f"{result.baseline_hourly:,.2f}", f"{result.saving_percent:.1f}%")
    console.print(summary)
    mig = Table(title="MIG packing (GPUs): exact vs slice lower bound vs first-fit decreasing", title_justify="left")
    for col in ("GPU model", "instances", "lower bound", "exact", "first-fit", "first-fit extra", "in MIG pools"):
        mig.add_column(col, justify="left" if col in ("GPU model",) else "right")
    for m in result.mig:
        pooled = sum(p.gpus for p in result.pools
                     if p.candidate.layout and p.candidate.itype.gpu_model == m.gpu_model)
        mig.add_row(m.gpu_model, str(sum(m.instances.values())), str(m.lower_bound), str(m.exact),
                    str(m.first_fit), f"{m.first_fit - m.exact:+d}", str(pooled))
    console.print(mig)
    console.print("'in MIG pools' is what the plan provisions: one layout per pool, one pool per tier, whole nodes.")


if __name__ == "__main__":
    main()
