"""Branch-and-price alone on the largest group of generated demands, in one lane: the branches it takes and its
time, from the group's first plan or from its proven optimum, and with --boxes where its branches go.

Usage: .venv/bin/python benchmarks/bench_plan_search.py [--tiers 64] [--seeds 3 4 7 14 16 17 19]
       [--start first|optimum] [--time-limit 60] [--boxes 3]

A whole plan races the listings against two lanes of this search on two cores, and when each finds what varies
from run to run: the same code proved seed 4's 64-tier demand in 9-16 s over three runs. Alone in one lane the
search takes the same branches on every run (node counts repeat exactly, times within a few per cent), so a
change to it can be judged seed by seed and by the sum. --start first begins from the group's first plan (steps
1-2 of docs/planner.md: the search then has to find the optimum as well as prove it), --start optimum from the
optimum a whole `solve_group` proved (the proof alone). "nodes" are the branches solved; with --boxes N, each
seed's N boxes of pinned node totals (cheapest class first) that took the most branches, with their time (it
wraps the search's node step to count them).

The branches repeat when the first stage (the root's column generation, dives and local search) ends before its
time is up, as it does on 64 tiers at the default limit; a limit so short that it stops that stage gives other
first plans on other runs. Each stage gets the whole --time-limit (with --start optimum the whole `solve_group`
first), so a row can take two or three times the limit.
"""

from __future__ import annotations

import argparse
import time
from collections import Counter, defaultdict
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from bench_plan import at_least
from bench_plan_box import largest_group
from rich.console import Console
from rich.table import Table

from gpu_platform.planner import branch, master
from gpu_platform.planner.branch import branch_and_price, next_cost
from gpu_platform.planner.columns import Group


@contextmanager
def _counting_boxes(nodes: Counter[tuple], seconds: defaultdict[tuple, float]) -> Iterator[None]:
    """Count the branches solved per box, and their time, while the block runs."""
    step = branch._Search.node

    def counted(search: branch._Search, lane: Any, bound: float, node: branch._Node) -> None:
        clock = time.perf_counter()
        step(search, lane, bound, node)
        nodes[node.box] += 1
        seconds[node.box] += time.perf_counter() - clock

    branch._Search.node = counted  # type: ignore[method-assign]
    try:
        yield
    finally:
        branch._Search.node = step  # type: ignore[method-assign]


def _search(group: Group, start: str, limit: float) -> tuple[float, branch.BranchResult, float]:
    """(the starting plan's cost, the search's result, its wall time)."""
    if start == "optimum":
        solved = master.solve_group(group, limit)
        if not solved.optimal:
            raise SystemExit(f"no proven optimum within {limit} s: raise --time-limit or use --start first")
    root = master.root(group, time.perf_counter() + limit)
    plan, cost = (solved.columns, solved.cost) if start == "optimum" else (root.best.columns, root.best.cost)
    floor = next_cost(set(group.price.values()), root.bound)
    clock = time.perf_counter()
    result = branch_and_price(
        group, root.generated, plan, cost, floor, time.perf_counter() + limit, master.REL_GAP, lanes=1
    )
    return cost, result, time.perf_counter() - clock


def main() -> None:
    """Run the searches and print their tables."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tiers", type=at_least(1), default=64)
    parser.add_argument("--seeds", type=int, nargs="+", default=[3, 4, 7, 14, 16, 17, 19])
    parser.add_argument("--start", choices=["first", "optimum"], default="first")
    parser.add_argument("--time-limit", type=float, default=60.0)
    parser.add_argument("--boxes", type=at_least(0), default=0, metavar="N")
    args = parser.parse_args()
    if not 0.1 <= args.time_limit <= 3600:
        parser.error(f"--time-limit {args.time_limit}: between 0.1 and 3600 seconds")
    console = Console(width=160)
    table = Table(title=f"branch-and-price alone, one lane, from the {args.start} plan", title_justify="left")
    for col in ("tiers", "seed", "group tiers", "start $/h", "best $/h", "status", "nodes", "s", "ms/node"):
        table.add_column(col, justify="right")
    boxes = Table(title="boxes of pinned node totals that took the most branches", title_justify="left")
    for col in ("seed", "box", "nodes", "s"):
        boxes.add_column(col, justify="right")
    total_nodes, total_s = 0, 0.0
    for seed in args.seeds:
        group = largest_group(args.tiers, seed)
        nodes: Counter[tuple] = Counter()
        seconds: defaultdict[tuple, float] = defaultdict(float)
        with _counting_boxes(nodes, seconds):
            start, result, wall = _search(group, args.start, args.time_limit)
        proven = result.bound >= result.cost * (1 - master.REL_GAP)
        status = "optimal" if proven else f"gap {(result.cost - result.bound) / result.cost:.2%}"
        total_nodes, total_s = total_nodes + result.nodes, total_s + wall
        table.add_row(
            str(args.tiers),
            str(seed),
            str(len(group.units)),
            f"{start:,.2f}",
            f"{result.cost:,.2f}",
            status,
            str(result.nodes),
            f"{wall:.1f}",
            f"{1000 * wall / result.nodes:.0f}" if result.nodes else "-",
        )
        pinned = [(n, box) for box, n in nodes.items() if box and all(lo == hi for lo, hi in box)]
        for n, box in sorted(pinned, reverse=True)[: args.boxes]:
            shown = ", ".join(f"{int(lo)}" for lo, _ in box)
            boxes.add_row(str(seed), f"({shown})", str(n), f"{seconds[box]:.1f}")
    table.add_row("all", "", "", "", "", "", str(total_nodes), f"{total_s:.1f}", "")
    console.print(table)
    if boxes.row_count:
        console.print(boxes)


if __name__ == "__main__":
    main()
