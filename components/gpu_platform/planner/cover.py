"""The final integer program of a group: listed MIG pools as columns, the other pools modelled directly.

Variables: one binary per listed column; per direct candidate (exclusive, time-slicing, MPS) its node count
and one binary per tier it may serve. Rows: every tier covered; per direct candidate, the units routed there
fit its nodes, and a tier alone needs ceil(units / per node) of them (a cut that tightens the relaxation).
Solved with HiGHS through `highspy`, starting from the best plan known.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
from scipy.sparse import csr_array, lil_array

from .columns import Column, Group
from .highs import Race, solve_mip

__all__ = ["Cover", "solve_cover"]


class _Rows(NamedTuple):
    """The program's rows: lb <= A x <= ub (scipy.optimize's LinearConstraint without importing scipy.optimize,
    0.4 s of the command's start)."""

    A: csr_array
    lb: np.ndarray
    ub: np.ndarray


@dataclass(frozen=True)
class Cover:
    """A solved cover: the pools (direct ones as columns too), their cost and whether it is proven optimal."""

    columns: tuple[Column, ...]
    cost: float
    optimal: bool
    bound: float = 0.0  # no plan these columns and direct pools make costs less


class _Program:
    """Index bookkeeping for the program's variables and rows."""

    def __init__(self, group: Group, cols: list[Column]) -> None:
        self.group, self.cols = group, [c for c in cols if c.cand not in group.direct]
        self.routes = [(t, c, k) for c in sorted(group.direct) for k, ts in group.slots[c].items() for t in ts]
        self.node_var = {c: len(self.cols) + i for i, c in enumerate(sorted(group.direct))}
        self.first_route = len(self.cols) + len(self.node_var)
        self.tiers = sorted(group.units)
        self.size = self.first_route + len(self.routes)

    def costs(self) -> np.ndarray:
        out = np.zeros(self.size)
        out[: len(self.cols)] = [self.group.cost(c) for c in self.cols]
        for c, v in self.node_var.items():
            out[v] = self.group.price[c]
        return out

    def upper(self) -> np.ndarray:
        out = np.ones(self.size)
        for c, v in self.node_var.items():
            out[v] = self.group.max_nodes(c)
        return out

    def rows(self) -> _Rows:
        g, row_of = self.group, {t: i for i, t in enumerate(self.tiers)}
        caps = sorted({(c, k) for _, c, k in self.routes})
        cap_row = {ck: len(self.tiers) + i for i, ck in enumerate(caps)}
        conv = {c: len(self.tiers) + len(caps) + i for i, c in enumerate(sorted({c.cand for c in self.cols}))}
        cut0 = len(self.tiers) + len(caps) + len(conv)
        a = lil_array((cut0 + len(self.routes), self.size))
        for j, col in enumerate(self.cols):
            a[conv[col.cand], j] = 1  # at most one pool per candidate (two would merge into one)
            for t in col.tiers:
                a[row_of[t], j] = 1
        for i, (t, c, k) in enumerate(self.routes):
            per_node, v = g.per_node[(c, k)], self.first_route + i
            a[row_of[t], v] = 1
            a[cap_row[(c, k)], v] = g.units[t]
            a[cap_row[(c, k)], self.node_var[c]] = -per_node
            a[cut0 + i, v] = math.ceil(g.units[t] / per_node)
            a[cut0 + i, self.node_var[c]] = -1
        lb = np.concatenate([np.ones(len(self.tiers)), np.full(len(caps) + len(conv) + len(self.routes), -np.inf)])
        ub = np.concatenate(
            [np.full(len(self.tiers), np.inf), np.zeros(len(caps)), np.ones(len(conv)), np.zeros(len(self.routes))]
        )
        return _Rows(a.tocsr(), lb, ub)

    def solution(self, plan: list[Column]) -> np.ndarray | None:
        """`plan` as values of this program's variables; None when a pool of it is not in the program."""
        x, index = np.zeros(self.size), {c: j for j, c in enumerate(self.cols)}
        route = {(t, c): self.first_route + i for i, (t, c, _) in enumerate(self.routes)}
        for col in plan:
            if col.cand in self.node_var:
                if col.nodes > self.group.max_nodes(col.cand) or any((t, col.cand) not in route for t in col.tiers):
                    return None
                x[self.node_var[col.cand]] = col.nodes
                x[[route[(t, col.cand)] for t in col.tiers]] = 1
            elif col in index:
                x[index[col]] = 1
            else:
                return None
        return x

    def columns(self, x: np.ndarray) -> list[Column]:
        out = [c for c, v in zip(self.cols, x, strict=False) if v > 0.5]  # x goes on with node and route variables
        routed = [(t, c) for i, (t, c, _) in enumerate(self.routes) if x[self.first_route + i] > 0.5]
        for c, v in self.node_var.items():
            tiers = frozenset(t for t, cc in routed if cc == c)
            if tiers:
                out.append(Column(c, int(round(x[v])), tiers))
        return out


def solve_cover(
    group: Group,
    cols: list[Column],
    time_limit: float,
    rel_gap: float,
    start: list[Column] | None = None,
    floor: float = -math.inf,
    race: Race | None = None,
) -> Cover | None:
    """The cheapest plan of `group` whose MIG pools are among `cols` (cost inf when there is none); None when
    the time limit stops the search before it finds one. `start` is a plan to begin from (its MIG pools must
    be among `cols`), `floor` a lower bound proven outside this program; `race` shares plans and bounds with a
    search on another thread (`highs.Race`)."""
    prog = _Program(group, cols)
    rows = prog.rows()
    res = solve_mip(
        prog.costs(),
        rows.A,
        rows.lb,
        rows.ub,
        prog.upper(),
        time_limit,
        rel_gap,
        prog.solution(start) if start else None,
        floor,
        race=race,
    )
    if res.status == "infeasible":  # no plan is made of these columns and direct pools
        return Cover((), math.inf, True, math.inf)
    if res.x is None:
        return None
    chosen = prog.columns(np.round(res.x))
    cost = sum(group.cost(c) for c in chosen)
    return Cover(tuple(chosen), cost, res.status == "optimal", res.bound)
