"""Pools as columns: independent tier groups, exact pricing of a pool of n nodes, and column enumeration.

A column is one pool: a candidate, a node count and the tiers it serves (each tier's units of each kind fit
the nodes' capacity). Pricing a candidate against tier duals is one knapsack per unit kind, so it is exact:
column generation reaches the true bound of the column model, and `enumerate_columns` can list every column
an optimal plan may use (reduced cost within the gap), which makes the final set-cover program exact.
"""

from __future__ import annotations

import itertools
import math
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import TypeVar

import numpy as np

from ..spec import SharingMode
from .candidates import Candidate
from .knapsack import Filling, Item, Table, best_values, choice_pick, choice_values, maximal_fillings, pick

__all__ = [
    "Column",
    "Cut",
    "Duals",
    "Group",
    "cut_stages",
    "enumerate_columns",
    "merged",
    "price_columns",
    "priced_exactly",
    "split_groups",
    "within_gap",
    "within_plan",
    "without_dominated",
]

# kind -> (its knapsack items, their table): the pricing of one candidate's pools
_Tables = dict[str, tuple[list[Item], Table]]


@dataclass(frozen=True)
class Column:
    """One pool: `nodes` nodes of candidate `cand` serving `tiers`."""

    cand: int
    nodes: int
    tiers: frozenset[int]


Cut = tuple[int, int, int]
"""Three tiers of a subset-row cut: over the pools serving them, each counted ceil(k / 2) times for the k of
the three it serves, every plan has at least 2 (`cuts`)."""


@dataclass(frozen=True)
class Duals:
    """LP duals: per tier (its cover row), >= 0, and per candidate (at most one pool of it), >= 0, or of either
    sign for a candidate that must have one (`Group.node_min`); under a branch
    on node totals, the price each node of a candidate adds and the constant those rows add to the bound; per
    subset-row cut (in the LP's order), its dual (>= 0)."""

    tiers: dict[int, float]
    cands: dict[int, float]
    per_node: dict[int, float] = field(default_factory=dict)
    offset: float = 0.0
    cuts: tuple[tuple[Cut, float], ...] = ()


@dataclass
class Group:
    """Tiers that share candidate pools, apart from every other tier (so it is planned on its own). Not changed
    once in use: a narrower group is a new one (`dataclasses.replace`, which starts with empty caches but
    copies `wider`: a group with more slots, or other units, than the one it was made from must set it to
    None)."""

    units: dict[int, int]  # tier index -> units demanded
    slots: dict[int, dict[str, list[int]]] = field(default_factory=dict)  # cand -> unit kind -> tiers
    per_node: dict[tuple[int, str], int] = field(default_factory=dict)  # (cand, kind) -> units per node
    price: dict[int, float] = field(default_factory=dict)  # cand -> $/hour per node
    direct: set[int] = field(default_factory=set)  # one-kind candidates the final program models directly
    node_cap: dict[int, int] = field(default_factory=dict)  # cand -> most nodes a plan within the gap gives it
    # cand -> least nodes of its pool, which every plan has (a branch on the candidate's node count decided so)
    node_min: dict[int, int] = field(default_factory=dict)
    # worked out once (a group's slots are not changed once it is in use): max_nodes per candidate, and how
    # `price_columns` reads the group
    _max: dict[int, int] = field(default_factory=dict, init=False, repr=False, compare=False)
    _pricing: _Pricing | None = field(default=None, init=False, repr=False, compare=False)
    # the group this one narrows (only tiers taken out of slots): cut rules worked out on it hold here too
    wider: Group | None = field(default=None, repr=False, compare=False)
    _rules: dict[tuple[Cut, ...], dict[int, dict[str, frozenset[int]]]] = field(
        default_factory=dict, init=False, repr=False, compare=False
    )
    _stages: dict[tuple[tuple[int, ...], tuple[Cut, ...]], _Stage] = field(
        default_factory=dict, init=False, repr=False, compare=False
    )
    _shapes: dict[tuple[tuple[int, ...], tuple[Cut, ...]], list[_Stage]] = field(
        default_factory=dict, init=False, repr=False, compare=False
    )

    def cost(self, col: Column) -> float:
        """$/hour of a column."""
        return self.price[col.cand] * col.nodes

    def max_nodes(self, cand: int) -> int:
        """Nodes that hold every tier the candidate can serve (or fewer, when the gap caps them)."""
        if cand not in self._max:
            need = max(
                math.ceil(sum(self.units[t] for t in ts) / self.per_node[(cand, k)])
                for k, ts in self.slots[cand].items()
            )
            self._max[cand] = min(self.node_cap.get(cand, need), need)
        return self._max[cand]

    def items(self, cand: int, kind: str, duals: dict[int, float]) -> list[Item]:
        """The knapsack items of one unit kind of a candidate."""
        return [(t, self.units[t], duals[t]) for t in self.slots[cand][kind]]


def split_groups(units: list[int], pairs: list[tuple[int, int, str]], cands: list[Candidate]) -> list[Group]:
    """Connected components of the tier-candidate graph, each a Group."""
    parent = list(range(len(units)))

    def root(t: int) -> int:
        while parent[t] != t:
            parent[t] = parent[parent[t]]
            t = parent[t]
        return t

    first: dict[int, int] = {}
    for t, c, _ in pairs:
        parent[root(t)] = root(first.setdefault(c, t))
    groups: dict[int, Group] = {}
    for t, c, k in pairs:
        g = groups.setdefault(root(t), Group({}))
        g.units[t] = units[t]
        g.slots.setdefault(c, {}).setdefault(k, []).append(t)
        g.per_node[(c, k)] = cands[c].itype.gpu_count * cands[c].units_per_gpu[k]
        g.price[c] = cands[c].itype.hourly_usd
        if cands[c].mode != SharingMode.MIG:
            g.direct.add(c)
    return list(groups.values())


def _covers(group: Group, big: int, small: int) -> bool:
    """A pool of one-kind `big` can take over every tier of one-kind `small` on no more nodes, for no more money."""
    (kb, tb), (ks, ts) = next(iter(group.slots[big].items())), next(iter(group.slots[small].items()))
    return (
        group.price[big] <= group.price[small]
        and set(ts) <= set(tb)
        and group.per_node[(big, kb)] >= group.per_node[(small, ks)]
    )


def without_dominated(group: Group) -> Group:
    """The group without MIG candidates of one profile that a direct candidate covers (a 7g.80gb-only layout
    holds no more than whole GPUs of the same type). Any plan using one costs no less merged into the other;
    the tie-break pass may bring it back."""
    single = [c for c in group.slots if len(group.slots[c]) == 1]
    drop = {
        m for m in single if m not in group.direct and any(_covers(group, e, m) for e in single if e in group.direct)
    }
    keep = {c: k for c, k in group.slots.items() if c not in drop}
    return Group(group.units, keep, group.per_node, {c: group.price[c] for c in keep}, group.direct)


def _node_price(group: Group, cand: int, duals: Duals) -> float:
    """What one more node of `cand` costs at these duals: its price, plus the dual of a branch's node total."""
    return group.price[cand] + duals.per_node.get(cand, 0.0)


def _route_reduced(group: Group, cand: int, tier: int, items: list[Item], duals: Duals) -> float:
    """The least reduced cost of a pool of one-kind `cand` that serves `tier`."""
    (kind,) = group.slots[cand]
    per_node, others = group.per_node[(cand, kind)], [it for it in items if it[0] != tier]
    table = best_values(others, per_node * group.max_nodes(cand))
    price = _node_price(group, cand, duals)
    return min(
        price * n + duals.cands.get(cand, 0.0) - duals.tiers[tier] - table.value(per_node * n - group.units[tier])
        for n in range(1, group.max_nodes(cand) + 1)
        if per_node * n >= group.units[tier]
    )


def within_gap(group: Group, duals: Duals, slack: float) -> Group:
    """The group with each direct candidate's tiers and nodes cut to what a plan within `slack` can use."""
    slots, caps = dict(group.slots), {}
    for cand in group.direct:
        (kind,) = group.slots[cand]
        items = group.items(cand, kind, duals.tiers)
        slots[cand] = {
            kind: [t for t in group.slots[cand][kind] if _route_reduced(group, cand, t, items, duals) <= slack]
        }
        reduced = _reduced_all(group, cand, _tables(group, cand, duals.tiers), duals)
        caps[cand] = int(np.flatnonzero(reduced <= slack).max(initial=-1)) + 1
    return Group(group.units, slots, group.per_node, group.price, group.direct, caps)


def within_plan(group: Group, plan: tuple[Column, ...]) -> Group:
    """`group` with the routes and node counts of `plan`'s direct pools put back, so the plan is one of its
    solutions (a search can start from it); every plan of the group stays a real plan."""
    slots, caps = dict(group.slots), dict(group.node_cap)
    for col in plan:
        if col.cand in group.direct:
            ((kind, tiers),) = slots[col.cand].items()
            slots[col.cand] = {kind: sorted(set(tiers) | col.tiers)}
            caps[col.cand] = max(caps.get(col.cand, col.nodes), col.nodes)
    return Group(group.units, slots, group.per_node, group.price, group.direct, caps)


def _tables(group: Group, cand: int, duals: dict[int, float]) -> _Tables:
    """The knapsack table of each unit kind of `cand`."""
    cap = group.max_nodes(cand)
    out: _Tables = {}
    for kind in group.slots[cand]:
        items = group.items(cand, kind, duals)
        out[kind] = (items, best_values(items, group.per_node[(cand, kind)] * cap))
    return out


def _reduced_all(group: Group, cand: int, tables: _Tables, duals: Duals) -> np.ndarray:
    """Reduced cost of the best pool of `cand` with n nodes, at index n - 1, for n = 1..max_nodes."""
    nodes = np.arange(1, group.max_nodes(cand) + 1)
    out = _node_price(group, cand, duals) * nodes + duals.cands.get(cand, 0.0)
    for kind, (_, tab) in tables.items():
        out -= tab.best[np.minimum(group.per_node[(cand, kind)] * nodes, len(tab.best) - 1)]
    return out


@dataclass(frozen=True)
class _Pricing:
    """How pricing reads a group: each distinct list of tiers some candidate's unit kind holds (one knapsack
    table per pricing call serves every candidate with that list: the layouts that offer one MIG profile), and
    per candidate its node counts 1..max_nodes with, per kind, that list and the table entries its capacities
    read (a table is built for the most units a candidate reads from it, at most its items' total weight; its
    entry at w does not depend on larger capacities). The node counts of every candidate, one after another,
    are the rows of `_reduced`: one array operation prices them all."""

    lists: tuple[tuple[tuple[int, ...], int], ...]  # tiers, the most units a candidate's pool reads
    cands: tuple[tuple[int, np.ndarray, tuple[tuple[str, int, np.ndarray], ...]], ...]  # cand, nodes, kinds
    at: dict[tuple[int, str], int]  # (cand, kind) -> its list
    sizes: np.ndarray  # per candidate (in `cands` order): its rows (max_nodes)
    starts: np.ndarray  # per candidate: its first row
    nodes: np.ndarray  # per row: its node count
    part_sizes: np.ndarray  # per (candidate, kind), in `cands` order: its candidate's rows
    part_index: np.ndarray  # the table entry each (candidate, kind)'s rows read, one part after another
    part_row: np.ndarray  # the row of each entry of `part_index`


def _pricing(group: Group) -> _Pricing:
    if group._pricing is None:
        lists: dict[tuple[int, ...], tuple[int, int]] = {}  # tiers -> (position, their total units)
        reach: list[int] = []  # per list: the most units a candidate reads from its table
        cands = []
        for cand, kinds in group.slots.items():
            nodes = np.arange(1, group.max_nodes(cand) + 1)
            parts = []
            for kind, tiers in kinds.items():
                key = tuple(tiers)
                if key not in lists:
                    lists[key] = (len(lists), sum(group.units[t] for t in tiers))
                    reach.append(0)
                at, total = lists[key]
                index = np.minimum(group.per_node[(cand, kind)] * nodes, total)
                reach[at] = max(reach[at], int(index[-1]) if len(index) else 0)
                parts.append((kind, at, index))
            cands.append((cand, nodes, tuple(parts)))
        sizes = np.array([len(nodes) for _, nodes, _ in cands], dtype=np.int64)
        first = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.int64)
        empty = np.zeros(0, dtype=np.int64)
        group._pricing = _Pricing(
            tuple((ts, reach[at]) for ts, (at, _) in lists.items()),
            tuple(cands),
            {(cand, kind): at for cand, _, parts in cands for kind, at, _ in parts},
            sizes,
            first,
            np.concatenate([nodes for _, nodes, _ in cands] + [empty]),
            np.array([len(nodes) for _, nodes, parts in cands for _ in parts], dtype=np.int64),
            np.concatenate([index for _, _, parts in cands for _, _, index in parts] + [empty]).astype(np.int64),
            np.concatenate(
                [f + np.arange(len(nodes)) for f, (_, nodes, parts) in zip(first, cands, strict=True) for _ in parts]
                + [empty]
            ).astype(np.int64),
        )
    return group._pricing


def _reduced(group: Group, plan: _Pricing, duals: Duals, bests: list[np.ndarray]) -> np.ndarray:
    """The reduced cost of the best pool of every row of `plan` (each candidate's node counts), with `bests[i]`
    the knapsack values of the i-th (candidate, kind) in `plan.cands` order (the same array for parts that share
    a table)."""
    per_node = np.array([_node_price(group, cand, duals) for cand, _, _ in plan.cands])
    fixed = np.array([duals.cands.get(cand, 0.0) for cand, _, _ in plan.cands])
    out: np.ndarray = np.repeat(per_node, plan.sizes) * plan.nodes + np.repeat(fixed, plan.sizes)
    if len(plan.part_index):
        at: dict[int, int] = {}  # id of a table -> where it starts in `joined`
        chunks, offsets, size = [], [], 0
        for best in bests:
            if id(best) not in at:
                at[id(best)] = size
                chunks.append(best)
                size += len(best)
            offsets.append(at[id(best)])
        joined = np.concatenate(chunks)
        taken = joined[np.repeat(np.array(offsets, dtype=np.int64), plan.part_sizes) + plan.part_index]
        out -= np.bincount(plan.part_row, weights=taken, minlength=len(out))
    for i, (cand, _, _) in enumerate(plan.cands):  # a pool below its candidate's least is no pool here
        least = group.node_min.get(cand, 0)
        if least > 1:
            out[plan.starts[i] : plan.starts[i] + min(least - 1, int(plan.sizes[i]))] = np.inf
    return out


def _paying(
    group: Group, plan: _Pricing, reduced: np.ndarray, per_cand: int
) -> tuple[list[tuple[int, list[int]]], float]:
    """Per candidate with a pool of negative reduced cost, its `per_cand` best node counts (those negative), and
    the sum over candidates of each one's least reduced cost, or 0 (what they add to the Lagrangian bound: an
    optimal plan has at most one pool per candidate, and exactly one of a candidate in `group.node_min`)."""
    forced = sum(1 for c, least in group.node_min.items() if least > 0 and c in group.slots)
    some = np.flatnonzero(plan.sizes)
    if not len(some):
        return [], (math.inf if forced else 0.0)
    least = np.minimum.reduceat(reduced, plan.starts[some])  # the candidates without rows add nothing
    found = []
    for i in np.flatnonzero(least < -1e-7):
        c = int(some[i])
        seg = reduced[plan.starts[c] : plan.starts[c] + plan.sizes[c]]
        found.append((plan.cands[c][0], [int(j) + 1 for j in np.argsort(seg)[:per_cand] if seg[j] < -1e-7]))
    if not forced:
        return found, float(np.minimum(least, 0.0).sum())
    must = np.array([group.node_min.get(plan.cands[int(c)][0], 0) > 0 for c in some], dtype=bool)
    if int(must.sum()) < forced:  # a candidate that must have a pool has no node count left: no plan
        return found, math.inf
    return found, float(np.where(must, least, np.minimum(least, 0.0)).sum())


def price_columns(
    group: Group, duals: Duals, per_cand: int = 6, deadline: float = math.inf
) -> tuple[list[Column], float]:
    """The most negative reduced-cost columns of each candidate (`per_cand` node counts), and the Lagrangian
    bound of these duals. One knapsack table per unit kind prices every node count exactly; with subset-row
    cuts, see `_price_with_cuts`. Past `deadline` between two tables: no columns and no bound (-inf); at 1,000
    seat tiers one round takes 47 tables of about 30 ms each."""
    if any(dual > _DUAL_EPS for _, dual in duals.cuts):
        return _price_with_cuts(group, duals, per_cand)
    plan = _pricing(group)
    tables = []
    for tiers, reach in plan.lists:
        if time.perf_counter() > deadline:
            return [], -math.inf
        items = [(t, group.units[t], duals.tiers[t]) for t in tiers]
        tables.append((items, best_values(items, reach)))
    reduced = _reduced(group, plan, duals, [tables[at][1].best for _, _, parts in plan.cands for _, at, _ in parts])
    paying, low = _paying(group, plan, reduced, per_cand)
    found = []
    for cand, counts in paying:
        chosen = {kind: tables[plan.at[(cand, kind)]] for kind in group.slots[cand]}
        found += [_best_column(group, cand, n, chosen) for n in counts]
    return found, sum(duals.tiers.values()) - sum(duals.cands.values()) + duals.offset + low


_DUAL_EPS = 1e-9  # a cut whose dual is at most this adds nothing to a pool's reduced cost
_STAGE_TIERS = 6  # tiers, at most, whose cuts one knapsack stage prices (all their subsets)
_STAGES_KEPT = 4_096  # stages kept per group, at most (the cache starts again past it)
_K = TypeVar("_K")
_V = TypeVar("_V")


@dataclass
class _Cache:
    """What one pricing call with cuts works out once: per tier, the cuts holding it (position, dual); per
    (position of a list of tiers in `_pricing`, the cuts of its stages by position), its knapsack stages and
    table."""

    on: dict[int, list[tuple[int, float]]]
    positive: frozenset[int]  # the cuts (by position) whose dual adds to a pool's reduced cost
    tables: dict[tuple[int, frozenset[int]], tuple[list[list[Item]], Table]] = field(default_factory=dict)


def _price_with_cuts(group: Group, duals: Duals, per_cand: int) -> tuple[list[Column], float]:
    """`price_columns` with subset-row cuts: a pool serving k tiers of a cut adds its dual ceil(k / 2) times.

    Every cut is one `cut_stages` prices inside the knapsack: per candidate, a cut holding one of the tiers it
    serves adds its dual to that tier's value; the tiers of cuts holding two or three (all of one unit kind)
    form a stage that takes any subset of them, valued with the cuts' duals. So pricing stays exact, and the
    Lagrangian bound is the LP's once nothing pays."""
    cuts = list(duals.cuts)
    found: list[Column] = []
    bound = sum(duals.tiers.values()) + 2 * sum(d for _, d in cuts) - sum(duals.cands.values()) + duals.offset
    on: dict[int, list[tuple[int, float]]] = {}
    for r, (cut, dual) in enumerate(cuts):
        for t in cut:
            on.setdefault(t, []).append((r, dual))
    cache = _Cache(on, frozenset(r for r, (_, dual) in enumerate(cuts) if dual > _DUAL_EPS))
    stages = _cut_stages_of(group, duals.cuts)
    plan = _pricing(group)
    bests = [
        _cut_table(group, at, group.slots[cand][kind], duals, cuts, stages[cand][kind], cache)[1].best
        for cand, _, parts in plan.cands
        for kind, at, _ in parts
    ]
    paying, low = _paying(group, plan, _reduced(group, plan, duals, bests), per_cand)
    for cand, counts in paying:
        found += [_cut_column(group, cand, n, duals, cuts, stages[cand], cache) for n in counts]
    return found, bound + low


def cut_stages(group: Group, cand: int, cuts: Sequence[Cut]) -> dict[str, frozenset[int]] | None:
    """Per unit kind of `cand`, the cuts (by position) that hold two or more tiers it serves, all of that kind,
    which its knapsack prices in stages (tiers joined through such cuts, at most `_STAGE_TIERS`, share one);
    None when a cut holds tiers of two kinds, or a stage would grow past that (a pool may then serve two tiers
    of a cut from two tables, which one knapsack per kind cannot price)."""
    kind_of = {t: k for k, ts in group.slots[cand].items() for t in ts}
    out: dict[str, set[int]] = {k: set() for k in group.slots[cand]}
    for r, cut in enumerate(cuts):
        held = [t for t in cut if t in kind_of]
        if len(held) >= 2:  # one tier held: its dual goes to that tier's value
            if len({kind_of[t] for t in held}) > 1:
                return None
            out[kind_of[held[0]]].add(r)
    if any(len(part) > _STAGE_TIERS for part in _joined(kind_of.keys(), cuts).values()):
        return None
    return {k: frozenset(v) for k, v in out.items()}


def _joined(tiers: Iterable[int], cuts: Iterable[Cut]) -> dict[int, frozenset[int]]:
    """Tier -> the tiers joined with it through cuts holding two or more of `tiers` (the tiers no such cut
    holds are left out)."""
    inside = set(tiers)
    parts: dict[int, frozenset[int]] = {}
    for cut in cuts:
        held = [t for t in cut if t in inside]
        if len(held) >= 2:
            joined = frozenset().union(*(parts.get(t, frozenset({t})) for t in held))
            parts.update(dict.fromkeys(joined, joined))
    return parts


def priced_exactly(group: Group, cuts: Sequence[Cut]) -> bool:
    """Whether every candidate's knapsacks price these cuts (`cut_stages`)."""
    return all(cut_stages(group, cand, cuts) is not None for cand in group.slots)


def _cut_stages_of(group: Group, cuts: tuple[tuple[Cut, float], ...]) -> dict[int, dict[str, frozenset[int]]]:
    """`cut_stages` of every candidate, worked out once per list of cuts on the widest group this one narrows
    (taking tiers out of slots leaves each stage within one kind and no larger)."""
    base = group.wider or group
    key = tuple(cut for cut, _ in cuts)
    rules = base._rules.get(key)  # read once: branch-and-price's lanes share these caches
    if rules is None:
        rules = {}
        for cand in base.slots:
            how = cut_stages(base, cand, key)
            if how is None:
                raise ValueError("a subset-row cut the knapsacks cannot price (see `priced_exactly`)")
            rules[cand] = how
        base._rules[key] = rules
    return rules


def _cut_table(
    group: Group,
    at: int,
    tiers: list[int],
    duals: Duals,
    cuts: list[tuple[Cut, float]],
    staged: frozenset[int],
    cache: _Cache,
) -> tuple[list[list[Item]], Table]:
    """The knapsack stages and table of `tiers`: each tier worth its dual plus those of its cuts not in
    `staged`; the tiers of the `staged` cuts in stages of any subset, worth their tiers' values plus each such
    cut's dual ceil(k / 2) times. Built up to the most units a candidate with these tiers reads (one table
    serves every node count, and every candidate with these tiers and stages)."""
    staged = staged & cache.positive  # a cut whose dual is 0 adds nothing
    key = (at, staged)
    if key in cache.tables:
        return cache.tables[key]
    value = {t: duals.tiers[t] + sum(d for r, d in cache.on.get(t, ()) if r not in staged) for t in tiers}
    dual_of = {cuts[r][0]: cuts[r][1] for r in staged}
    stages = []
    for st in _stage_shapes(group, tiers, [cuts[r][0] for r in staged]):
        if len(st.tiers) == 1 and not st.cuts:
            stages.append([(st.tiers[0], st.weights[0], value[st.tiers[0]])])
            continue
        worth = st.members @ np.array([value[t] for t in st.tiers])
        if st.cuts:
            worth += st.counts @ np.array([dual_of[c] for c in st.cuts])
        stages.append(list(zip(st.ids, st.weights, worth.tolist(), strict=True)))
    cache.tables[key] = (stages, choice_values(stages, _pricing(group).lists[at][1]))
    return cache.tables[key]


@dataclass(frozen=True)
class _Stage:
    """One stage of a cut table, apart from the duals: its tiers, every non-empty subset of them as an option
    (id, units), which tiers each option holds, and ceil(k / 2) for each of the stage's cuts."""

    tiers: tuple[int, ...]
    ids: tuple[int, ...]
    weights: tuple[int, ...]
    members: np.ndarray  # options x tiers
    cuts: tuple[Cut, ...]
    counts: np.ndarray  # options x cuts


def _stage_shapes(group: Group, tiers: Sequence[int], staged: list[Cut]) -> list[_Stage]:
    """The stages of `tiers`: tiers joined through the `staged` cuts share one, every other tier is its own.
    Kept on the widest group this one narrows, like `_stage`."""
    base = group.wider or group
    return _kept(base._shapes, (tuple(tiers), tuple(staged)), lambda: _shapes(group, tiers, staged))


def _kept(cache: dict[_K, _V], key: _K, make: Callable[[], _V]) -> _V:
    """`cache[key]`, made when missing; the cache starts again past `_STAGES_KEPT`. Read once: branch-and-price's
    lanes share these caches, and another may clear one meanwhile."""
    got = cache.get(key)
    if got is None:
        if len(cache) >= _STAGES_KEPT:
            cache.clear()
        got = cache[key] = make()
    return got


def _shapes(group: Group, tiers: Sequence[int], staged: list[Cut]) -> list[_Stage]:
    parts = _joined(tiers, staged)
    holding: dict[int, list[int]] = {}  # tier -> the staged cuts (by position) holding it
    for r, cut in enumerate(staged):
        for u in cut:
            holding.setdefault(u, []).append(r)
    out: list[_Stage] = []
    done: set[int] = set()
    for t in tiers:
        if t in done:
            continue
        part = tuple(sorted(parts.get(t, (t,))))
        done.update(part)
        # with one tier left: k = 1, counted once
        mine = tuple(staged[r] for r in sorted({r for u in part for r in holding.get(u, ())}))
        out.append(_stage(group, part, mine))
    return out


def _stage(group: Group, part: tuple[int, ...], mine: tuple[Cut, ...]) -> _Stage:
    """The stage of the tiers `part` with the cuts `mine`: every non-empty subset of them is an option. Kept
    on the widest group this one narrows (which has the same units)."""
    base = group.wider or group

    def make() -> _Stage:
        subs = [sub for size in range(1, len(part) + 1) for sub in itertools.combinations(part, size)]
        members = np.array([[u in sub for u in part] for sub in subs], dtype=float)
        held = np.array([[u in c for c in mine] for u in part], dtype=float).reshape(len(part), len(mine))
        return _Stage(
            part,
            tuple(_subset_id(sub) for sub in subs),
            tuple(sum(group.units[u] for u in sub) for sub in subs),
            members,
            mine,
            np.ceil(members @ held / 2),
        )

    return _kept(base._stages, (part, mine), make)


def _subset_id(tiers: tuple[int, ...]) -> int:
    """A stage option's id: the tiers it holds, as a negative number (tier indices are < 2**20)."""
    return -1 - sum(t << (20 * i) for i, t in enumerate(tiers)) if len(tiers) > 1 else tiers[0]


def _subset_tiers(option: int) -> list[int]:
    """The tiers of a stage option's id (`_subset_id`)."""
    if option >= 0:
        return [option]
    code, out = -1 - option, []
    while code:
        out.append(code & (2**20 - 1))
        code >>= 20
    return out


def _cut_column(
    group: Group,
    cand: int,
    n: int,
    duals: Duals,
    cuts: list[tuple[Cut, float]],
    staged: dict[str, frozenset[int]],
    cache: _Cache,
) -> Column:
    """The best pool of `n` nodes of `cand` that `_price_with_cuts` prices."""
    tiers: list[int] = []
    plan = _pricing(group)
    for kind, ts in group.slots[cand].items():
        stages, table = _cut_table(group, plan.at[(cand, kind)], ts, duals, cuts, staged[kind], cache)
        tiers += [u for o in choice_pick(stages, table, group.per_node[(cand, kind)] * n) for u in _subset_tiers(o)]
    return Column(cand, n, frozenset(tiers))


def _best_column(group: Group, cand: int, nodes: int, tables: _Tables) -> Column:
    tiers = [t for k, (items, tab) in tables.items() for t in pick(items, tab, group.per_node[(cand, k)] * nodes)]
    return Column(cand, nodes, frozenset(tiers))


def merged(group: Group, cand: int, tiers: Iterable[int]) -> Column:
    """One pool of `cand` serving `tiers`, with the fewest nodes that hold them."""
    tiers = frozenset(tiers)
    nodes = max(
        math.ceil(sum(group.units[t] for t in ts if t in tiers) / group.per_node[(cand, k)])
        for k, ts in group.slots[cand].items()
    )
    return Column(cand, nodes, tiers)


def _kind_fillings(
    group: Group, cand: int, nodes: int, tables: _Tables, budget: float, limit: int
) -> list[list[Filling]] | None:
    out: list[list[Filling]] = []
    for kind, (items, tab) in tables.items():
        cap = group.per_node[(cand, kind)] * nodes
        best = tab.value(cap)
        fills = maximal_fillings(items, cap, best - budget, limit)
        if fills is None:
            return None
        out.append([(best - v, s) for v, s in fills])
    return out


def _combine(per_kind: list[list[Filling]], budget: float) -> list[frozenset[int]]:
    combos: list[tuple[float, frozenset[int]]] = [(0.0, frozenset())]
    for fills in per_kind:
        combos = [(lost + more, tiers | s) for lost, tiers in combos for more, s in fills if lost + more <= budget]
    return [tiers for _, tiers in combos if tiers]


def enumerate_columns(group: Group, duals: Duals, slack: float, limit: int) -> list[Column] | None:
    """Every maximal MIG pool whose reduced cost is at most `slack`; None when there are more than `limit`.

    Pools of the other (one-kind) candidates are not listed: the final program models them directly.
    """
    out: list[Column] = []
    for cand in set(group.slots) - group.direct:
        tables = _tables(group, cand, duals.tiers)
        reduced = _reduced_all(group, cand, tables, duals)
        for found in np.flatnonzero(reduced <= slack) + 1:
            n, budget = int(found), slack - float(reduced[found - 1])
            per_kind = _kind_fillings(group, cand, n, tables, budget, limit)
            if per_kind is None:
                return None
            # A filling that fits fewer nodes is beaten by a listed pool of fewer nodes holding it.
            out += [col for tiers in _combine(per_kind, budget) if (col := merged(group, cand, tiers)).nodes == n]
            if len(out) > limit:
                return None
    return out
