"""One box of a generated group, where every price class's node total is pinned: how far its column LP is from
refuting it, what one branching decision moves, and what subset-row cuts on tier triples would add.

Usage: .venv/bin/python benchmarks/bench_plan_box.py [--tiers 64] [--seed 3] [--box 63 246] [--probes 40]
       [--pool-seconds 8]

The group is the largest of `bench_plan.random_demand(tiers, seed)`; `--box` gives its node totals per price
class, cheapest class first (seed 3's hardest box by default, where branch-and-price spends half its nodes).
With the totals as upper bounds only, the LP (column generation to convergence) gives the least cost a
fractional plan of the box has; a plan of the box costs the box's cost, so a proof must raise the LP by the
difference (the slack). Then: the LP after fixing, or forbidding, each of the `--probes` largest (tier,
candidate) splits of its solution; after keeping each candidate it uses out; and, over a fixed pool of the
pools a `--pool-seconds` branch-and-price run generates, the LP with rounds of violated subset-row cuts
(sum over pools of ceil(|pool & T| / 2) >= 2 for a triple T of tiers). The last is not a bound (the pool is
fixed, nothing is priced against the cuts): it shows how much of the slack such cuts could take.
"""

from __future__ import annotations

import argparse
import itertools
import math
import time
from collections import defaultdict

import numpy as np
from bench_plan import random_demand
from rich.console import Console
from rich.table import Table
from scipy.optimize import linprog

from gpu_platform.planner import master
from gpu_platform.planner.branch import _Node, _restricted, branch_and_price, next_cost
from gpu_platform.planner.candidates import build_candidates
from gpu_platform.planner.columns import Column, Group, split_groups, without_dominated
from gpu_platform.planner.demand import catalog_of
from gpu_platform.planner.master import _full, _generate, _greedy, _Master
from gpu_platform.planner.solve import _pairs


def largest_group(tiers: int, seed: int) -> Group:
    d = random_demand(tiers, seed)
    catalog = catalog_of(d)
    cands = build_candidates(d, catalog)
    groups = split_groups([t.units for t in d.tiers], _pairs(d, cands, catalog), cands)
    return without_dominated(max(groups, key=lambda g: len(g.units)))


def _box_lp(group: Group, box: tuple[int, ...], node: _Node) -> tuple[float, dict[int, dict[int, float]]]:
    """The converged LP value of the box (totals as upper bounds) at `node`, and each tier's share per candidate."""
    sub = _restricted(group, node)
    if any(not any(t in ts for kinds in sub.slots.values() for ts in kinds.values()) for t in group.units):
        return math.inf, {}  # a tier no candidate may serve: no plan
    ordered = sorted(set(group.price.values()))
    cols = list({*_greedy(sub), *(c for c in _full(sub) if c.tiers)})
    lp = _Master(group, cols, {c: [ordered.index(p)] for c, p in group.price.items()})
    lp.set_box(tuple((0.0, float(hi)) for hi in box))
    _, value, _, x = _generate(sub, cols, time.perf_counter() + 60, lp, math.inf, math.inf, 1e-6, set(cols))
    share: dict[int, dict[int, float]] = defaultdict(lambda: defaultdict(float))
    for j in np.flatnonzero(x > 1e-9):
        for t in lp.cols[j].tiers:
            share[t][lp.cols[j].cand] += float(x[j])
    return value, share


def _pool(group: Group, seconds: float) -> list[Column]:
    """The pools a branch-and-price run from the greedy plan generates in `seconds`."""
    seen: list[_Master] = []

    class Kept(_Master):
        def __init__(self, *args, **kwargs) -> None:
            super().__init__(*args, **kwargs)
            seen.append(self)

    start = _greedy(group)
    cols = list({*start, *_full(group)})
    _, root, _, _ = _generate(group, cols, time.perf_counter() + 30)
    master._Master = Kept  # branch-and-price builds its LPs from this name
    try:
        branch_and_price(
            group,
            cols,
            tuple(start),
            sum(group.cost(c) for c in start),
            next_cost(set(group.price.values()), root),
            time.perf_counter() + seconds,
            1e-6,
        )
    finally:
        master._Master = _Master
    return list(dict.fromkeys([c for m in seen for c in m.cols] + cols))


def _subset_row_rounds(group: Group, pool: list[Column], box: tuple[int, ...], rounds: int) -> list[tuple]:
    """(round, cuts, LP value, pools used, cuts it violates) for the box's LP over `pool`, adding the 30 most
    violated cuts each round."""
    tiers, cands = sorted(group.units), sorted(group.slots)
    ordered = sorted(set(group.price.values()))
    cover = np.array([[t in c.tiers for c in pool] for t in tiers], dtype=float)
    one = np.array([[c.cand == k for c in pool] for k in cands], dtype=float)
    nodes = np.array([[c.nodes * (group.price[c.cand] == p) for c in pool] for p in ordered], dtype=float)
    cost = np.array([group.cost(c) for c in pool])
    cuts: list[np.ndarray] = []
    out = []
    for i in range(rounds):
        a_ub = np.vstack([-cover, one, nodes, *[-c[None, :] for c in cuts]])
        b_ub = np.concatenate([-np.ones(len(tiers)), np.ones(len(cands)), box, -2 * np.ones(len(cuts))])
        res = linprog(cost, A_ub=a_ub, b_ub=b_ub, bounds=(0, None), method="highs")
        if res.status != 0:
            out.append((i, len(cuts), "infeasible", "-", "-"))
            break
        used = np.flatnonzero(res.x > 1e-9)
        part, weight = cover[:, used], res.x[used]
        violated = sorted(
            (lhs, t)
            for t in itertools.combinations(range(len(tiers)), 3)
            if (lhs := float((np.ceil(part[list(t)].sum(0) / 2) * weight).sum())) < 2 - 1e-4
        )
        out.append((i, len(cuts), f"{res.fun:,.2f}", str(len(used)), str(len(violated))))
        new = [t for _, t in violated[:30]]
        if not new:
            break
        cuts += [np.ceil(cover[list(t)].sum(0) / 2) for t in new]
    return out


def _added(value: float, base: float) -> str:
    """What a probe adds to the box's LP; "no plan" past any real cost (the LP then leans on its artificial
    columns, priced at a thousand times the dearest node)."""
    return f"{value - base:,.2f}" if value < 1e6 else "no plan"


def main() -> None:
    """Run the probes and print their tables."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tiers", type=int, default=64)
    parser.add_argument("--seed", type=int, default=3)
    parser.add_argument("--box", type=int, nargs="+", default=[63, 246])
    parser.add_argument("--probes", type=int, default=40)
    parser.add_argument("--pool-seconds", type=float, default=8.0)
    parser.add_argument("--cut-rounds", type=int, default=25)
    args = parser.parse_args()
    console = Console()
    group = largest_group(args.tiers, args.seed)
    ordered = sorted(set(group.price.values()))
    box = tuple(args.box)
    if len(box) != len(ordered):
        parser.error(f"--box needs {len(ordered)} node totals (prices {', '.join(map(str, ordered))} $/hour)")
    box_cost = sum(n * p for n, p in zip(box, ordered, strict=True))
    base, share = _box_lp(group, box, _Node())
    console.print(
        f"{len(group.units)} tiers, {len(group.slots)} candidates; box {box} costs {box_cost:,.2f} $/hour; "
        f"its LP {base:,.2f}; slack {box_cost - base:,.2f}"
    )

    splits = sorted(
        ((group.units[t], t, c, v) for t, sh in share.items() for c, v in sh.items() if 1e-6 < v < 1 - 1e-6),
        reverse=True,
    )[: args.probes]
    table = Table(title="one decision on a split (tier, candidate): what it adds to the box's LP, $/hour")
    for col in ("tier", "units", "candidate", "LP share", "fixed there", "kept off"):
        table.add_column(col, justify="right")
    for units, t, c, v in splits:
        fixed, _ = _box_lp(group, box, _Node(fixed=frozenset({(t, c)})))
        off, _ = _box_lp(group, box, _Node(forbidden=frozenset({(t, c)})))
        table.add_row(str(t), str(units), str(c), f"{v:.3f}", _added(fixed, base), _added(off, base))
    console.print(table)

    use: dict[int, float] = defaultdict(float)
    for sh in share.values():
        for c, v in sh.items():
            use[c] = max(use[c], v)
    table = Table(title="one candidate kept out of the plan: what it adds to the box's LP, $/hour")
    for col in ("candidate", "largest tier share", "added"):
        table.add_column(col, justify="right")
    for c in sorted(use, key=use.__getitem__):
        pairs = frozenset((t, c) for ts in group.slots[c].values() for t in ts)
        value, _ = _box_lp(group, box, _Node(forbidden=pairs))
        table.add_row(str(c), f"{use[c]:.3f}", _added(value, base))
    console.print("(no plan: a tier only that candidate serves, or the box's totals too small without it)")
    console.print(table)

    pool = _pool(group, args.pool_seconds)
    table = Table(title=f"subset-row cuts on the box's LP over a fixed pool of {len(pool):,} pools")
    for col in ("round", "cuts", "LP $/hour", "pools used", "cuts violated"):
        table.add_column(col, justify="right")
    for row in _subset_row_rounds(group, pool, box, args.cut_rounds):
        table.add_row(*map(str, row))
    console.print(table)


if __name__ == "__main__":
    main()
