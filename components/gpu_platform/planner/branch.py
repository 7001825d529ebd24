"""Branch-and-price on tier-to-candidate assignments: a lower bound above the column LP's, and plans on the way.

A node of the search fixes some tiers to one candidate (no other candidate may serve them), forbids some (tier,
candidate) pairs and bounds the size of some candidates' pools; these only remove tiers from candidates' slots and
node counts from their pricing, so pricing stays the exact knapsack of `columns.price_columns` (a candidate that
must have a pool adds its least reduced cost to the bound even when positive) and column generation at a node gives
a true lower bound on every plan the node allows (any duals give one, so a node stopped early still has a bound),
rounded up to a cost whole nodes can add up to (`next_cost`). A node whose bound reaches the best plan known is
pruned. When the LP serves every tier wholly on one candidate, each candidate's columns all hold the tiers assigned
to it, so the plan that pools those tiers per candidate costs no more than the LP value: it is that node's optimum
(to the relative gap column generation converged to). Otherwise the search branches on a price class's node total
where the LP's is fractional, then on a candidate's pool size where the LP mixes sizes or takes a fraction of a
pool (at most f nodes or no pool, or a pool of at least f + 1: pricing then looks at no other sizes, and the LP
takes exactly one pool of a candidate that must have one), and when neither is split, on the largest tier the LP
splits: fixed to the candidate serving most of it, or forbidden there. Subset-row cuts (`cuts`) go in at the first
node that splits tiers and at the first such node of each box of pinned node totals; they hold for every plan, and
only cuts the knapsacks price exactly are taken, so pricing stays exact. Nodes are taken lowest bound first (among
equal bounds, the children of the LP nearest to integral), and the least bound still open (in the queue or being
solved) is a lower bound on every plan of the group. Lanes (threads) take nodes from one queue, each with its own
LP (HiGHS releases the GIL while it solves): they share the best plan, the pools their nodes' LPs use and the cuts.
"""

from __future__ import annotations

import functools
import heapq
import itertools
import math
import threading
import time
import warnings
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any, NamedTuple

import numpy as np

from . import remote
from .columns import Column, Cut, Group, merged
from .cuts import priceable, violated
from .highs import Race, SolverThread
from .local import improve

__all__ = ["LATTICE_PRICES", "BranchResult", "branch_and_price", "next_cost", "serve", "tightened"]

_ROUNDS = 30  # pricing rounds, at most, per node
_RETRIES = 3  # an integral node whose column generation has not converged after this many tries stays open
_INTEGRAL = 1 - 1e-6  # a tier served at least this much on one candidate counts as assigned there
_LP_COLUMNS = 2_000  # columns in the search's LP before it is rebuilt with the ones nodes used
# Columns per candidate and pricing round at a node: each one added is one more the LP's simplex may pivot in.
# On the 64-tier scale benchmark's large groups the search proved in 16.3 s / 13.0 s with two, 24.0 s / 24.2 s
# with six (one: 17.0 s / 12.9 s); the root's column generation and the dives keep six (their first plans at
# 128 tiers are better with six).
_PER_CAND = 2
# Subset-row cuts (`cuts`) at the search's first node that splits tiers and at the first such node of each box
# where every price class's node total is pinned (where the search spends most of its nodes), only cuts the
# knapsacks price exactly (`columns.priced_exactly`). Figures in benchmarks/RESULTS.md.
_CUTS_PER_NODE = 20  # the most violated cuts added at one node
_CUTS_MOST = 200  # cuts in the search's LP, at most
_CUT_BY = 0.05  # a cut is added when the LP solution violates it by at least this
# Lanes: threads taking nodes from the queue. On the 64-tier scale benchmark's group of seed 4, searched alone
# from its optimum on 2 cores, two lanes took 9.9-11.2 s against 13.4-14.2 s for one (Python's lock holds the
# pricing and local search to one core at a time; the LP solves overlap). A second lane waits while the
# listings' thread (`master.solve_group`) is at work: they would share one core.
_LANES = 2
# Lane 1 runs in a worker process (`remote`) unless GPU_PLATFORM_PLANNER_PROCESSES=0: it takes a node from the
# queue, solves it and its subtree's nodes while they are at the queue's least bound, for up to `_BATCH` seconds,
# and hands back what is left open. Its LP keeps up to `_BASES_KEPT` bases for the nodes it handed back.
_BATCH = 0.25
_LATE = 1.0  # seconds past the deadline (or past a batch's time once the search has stopped) a worker is waited for
# Seconds left, at least, for the search to start a worker process itself: its imports take about 1 s (1.0-1.3 s
# on 2 cores), and with a 2 s time limit one started 0.7 s before the deadline held `plan` 0.6 s past it.
_SPAWN_LEFT = 1.5
_BASES_KEPT = 4_096
# A node whose LP solution uses pools the node does not allow (priced out, not fixed at 0: `master._Master.allow_only`)
# fixes those at 0 and solves again, up to this many times; then every pool it does not allow.
_STRAY_TRIES = 2
_REMOTE_LANE = 101  # the worker's lane number: its bases mean nothing to the calling process's lanes
_SEARCH_SHARE = 0.15  # of the search's time, at most, for local search on the nodes' LP roundings
LATTICE_PRICES = 3  # `next_cost` rounds up over at most this many distinct node prices
_LATTICE_STEPS = 250_000  # and at most this many node-count combinations


def tightened(
    box: tuple[tuple[float, float], ...], prices: list[float], below: float
) -> tuple[tuple[float, float], ...]:
    """`box` (least, most nodes per price class, at `prices`) with each class's most cut to what a plan costing
    less than `below` can have while every other class has at least its least. The LP of a node whose classes
    are all pinned this way can no longer lean on a fraction of a node more than a cheaper plan could have."""
    least = sum(lo * p for (lo, _), p in zip(box, prices, strict=True))
    return tuple(
        (lo, min(hi, float(math.floor((below - least + lo * p) / p + 1e-9))) if p > 0 else hi)  # a free node: no cap
        for (lo, hi), p in zip(box, prices, strict=True)
    )


def next_cost(prices: set[float], x: float, box: dict[float, tuple[float, float]] | None = None) -> float:
    """The least cost at least `x` (less a rounding margin) that whole nodes at `prices` can add up to; `x`
    itself when there are too many prices to try. Every plan costs such a sum, so this is a bound when `x` is.
    With `box` (price -> (least, most) nodes at that price), only node counts within it count: inf when no
    count in the box reaches `x`."""
    box = box or {}
    if any(lo > hi for lo, hi in box.values()):
        return math.inf  # an empty box: no plan
    ps = sorted(p for p in prices if p > 0)
    if not ps or x <= 0 or len(ps) > LATTICE_PRICES:
        return x
    lo = [max(0, math.ceil(box.get(p, (0.0, math.inf))[0] - 1e-9)) for p in ps]
    hi = [box.get(p, (0.0, math.inf))[1] for p in ps]
    counts = [np.arange(lo[i], max(lo[i], min(hi[i], math.ceil(x / p))) + 1) * p for i, p in enumerate(ps) if i]
    if math.prod(len(c) for c in counts) > _LATTICE_STEPS:
        return x
    partial = np.zeros(1)
    for c in counts:
        partial = (partial[:, None] + c[None, :]).ravel()
    cheapest = np.maximum(np.ceil(np.maximum(x - partial, 0.0) / ps[0] - 1e-9), lo[0])
    total = np.where(cheapest <= hi[0], partial + cheapest * ps[0], np.inf)
    best = float(total.min())
    return max(x, best - 1e-9 * max(1.0, best)) if best < math.inf else math.inf


@dataclass(frozen=True)
class BranchResult:
    """The best plan found (the one passed in when none beat it), its cost, and the proven lower bound."""

    columns: tuple[Column, ...]
    cost: float
    bound: float
    nodes: int


@dataclass(frozen=True)
class _Node:
    fixed: frozenset[tuple[int, int]] = frozenset()  # (tier, candidate): only that candidate serves the tier
    forbidden: frozenset[tuple[int, int]] = frozenset()  # (tier, candidate): that candidate does not serve it
    retries: int = 0  # times its column generation stopped short of converging with an integral LP
    box: tuple[tuple[float, float], ...] = ()  # (least, most) nodes per price class, cheapest class first
    # (candidate, least, most) nodes of its pool, by candidate: least >= 1 means the candidate has a pool
    sizes: tuple[tuple[int, int, int], ...] = ()
    # How far its parent's LP solution was from serving every tier on one candidate (over the tiers, 1 less the
    # largest share of the tier one candidate serves): among nodes of equal bound, the least is taken first.
    frac: float = field(default=0.0, compare=False)
    # the parent's optimal LP basis and the LP it belongs to: (lane, times that lane's LP was rebuilt)
    start: tuple[tuple[int, int], Any] | None = field(default=None, compare=False, repr=False)


def _restricted(group: Group, node: _Node, classes: dict[int, list[int]] | None = None) -> Group:
    """`group` with the node's fixings and prohibitions taken out of the candidates' slots, and with `classes`
    (candidate -> its price classes' positions in the node's box), each candidate's nodes capped at its class's
    most: no pool of more nodes fits a plan of the box, so pricing need not look past them."""
    fixed = dict(node.fixed)
    sized = {c: (lo, hi) for c, lo, hi in node.sizes}
    slots = {
        c: {
            k: [t for t in ts if (t, c) not in node.forbidden and fixed.get(t, c) == c and sized.get(c, (0, 1))[1]]
            for k, ts in kinds.items()
        }
        for c, kinds in group.slots.items()
    }
    caps = dict(group.node_cap)
    for c, ks in (classes or {}).items():
        most = min((node.box[k][1] for k in ks), default=math.inf)
        if most < math.inf:
            caps[c] = min(caps.get(c, int(most)), int(most))
    for c, (_, hi) in sized.items():
        caps[c] = min(caps.get(c, hi), hi)
    least = {c: lo for c, (lo, _) in sized.items() if lo > 0}
    return replace(group, slots=slots, node_cap=caps, node_min=least, wider=group.wider or group)


def _branch_on(group: Group, open_: dict[int, dict[int, float]]) -> tuple[int, int]:
    """The largest tier the LP splits between candidates (the most evenly split among equals), and the
    candidate serving most of it. Large tiers decide how full the pools are: branching on them first proved
    the 64-tier groups of the scale benchmark with 2-3x fewer nodes than the most evenly split tier."""
    tier = max(open_, key=lambda t: (group.units[t], -abs(max(open_[t].values()) - 0.5), -t))
    return tier, max(open_[tier].items(), key=lambda kv: (kv[1], -kv[0]))[0]


_NO_MOST = 1 << 30  # a candidate's most nodes before a branch on its pool's size


def _size_branch(cols: list[Column], x: np.ndarray, node: _Node) -> tuple[_Node, _Node] | None:
    """Two children on one candidate's pool size, where the LP solution `x` mixes pools of it of different sizes
    or takes a fraction of one: its pool has at most f nodes (or there is none), or it has a pool of at least
    f + 1. None when no candidate's pool is split.

    The candidate and f are those that split the LP's share of the candidate (its pools' weights, and 1 less
    their sum for no pool) most evenly, weighted by the square root of the nodes it takes (larger pools decide
    more); among equal splits, the smallest f (for a fraction of one pool: no pool, or a pool). On the search
    benchmark (`benchmarks/bench_plan_search.py`, nine generated 64-tier groups from their first plans, one lane)
    the search took 2,053 branches so, 2,108 with the largest f among equal splits, 2,980 with the split alone
    (no weight), 2,680 weighted by the nodes themselves, and 5,815 with f at the floor of the candidate's
    fractional node count; with branches on tiers only, 6,398 (figures in benchmarks/RESULTS.md)."""
    used: dict[int, list[tuple[int, float]]] = defaultdict(list)
    for j in np.flatnonzero(x > 1e-9):
        used[cols[j].cand].append((cols[j].nodes, float(x[j])))
    sized = {c: (lo, hi) for c, lo, hi in node.sizes}
    best: tuple[float, int, int] | None = None
    for c, pools in used.items():
        lo, hi = sized.get(c, (0, _NO_MOST))
        unused = max(0.0, 1.0 - sum(v for _, v in pools))
        weight = math.sqrt(sum(n * v for n, v in pools))
        for f in sorted({n for n, _ in pools} | {min(n for n, _ in pools) - 1} | {lo}):
            if lo <= f < hi:
                below = unused + sum(v for n, v in pools if n <= f)
                score = min(below, sum(v for n, v in pools if n > f)) * weight
                if score > 1e-6 and (best is None or (score, -f, -c) > (best[0], -best[1], -best[2])):
                    best = (score, f, c)
    if best is None:
        return None
    _, f, c = best
    lo, hi = sized.get(c, (0, _NO_MOST))
    rest = tuple(s for s in node.sizes if s[0] != c)
    return (
        replace(node, sizes=tuple(sorted((*rest, (c, lo, f))))),
        replace(node, sizes=tuple(sorted((*rest, (c, f + 1, hi))))),
    )


class _Incidence:
    """Which tiers each column of the search's LP serves, as a boolean matrix (grown by doubling), to find the
    columns a node allows in a few array operations."""

    def __init__(self, group: Group) -> None:
        self.pos = {t: i for i, t in enumerate(sorted(group.units))}
        self.cix = {c: i for i, c in enumerate(sorted(group.slots))}
        self.rows = np.zeros((256, len(self.pos)), dtype=bool)
        self.cand = np.zeros(256, dtype=np.int64)
        self.nodes = np.zeros(256, dtype=np.int64)
        self.size = 0

    def add(self, cols: list[Column]) -> None:
        """Append columns, in the LP's order."""
        need = self.size + len(cols)
        if need > len(self.rows):
            grow = max(need, 2 * len(self.rows))
            self.rows = np.concatenate([self.rows, np.zeros((grow - len(self.rows), len(self.pos)), dtype=bool)])
            self.cand = np.concatenate([self.cand, np.zeros(grow - len(self.cand), dtype=np.int64)])
            self.nodes = np.concatenate([self.nodes, np.zeros(grow - len(self.nodes), dtype=np.int64)])
        for i, col in enumerate(cols, self.size):
            self.rows[i, [self.pos[t] for t in col.tiers]] = True
            self.cand[i] = self.cix[col.cand]
            self.nodes[i] = col.nodes
        self.size = need

    def allowed(self, sub: Group) -> np.ndarray:
        """Per column, whether its candidate may serve all its tiers in `sub`, on no more nodes than `sub`
        caps it at."""
        may = np.zeros((len(self.cix), len(self.pos)), dtype=bool)
        most = np.full(len(self.cix), np.iinfo(np.int64).max)
        least = np.zeros(len(self.cix), dtype=np.int64)
        for c, kinds in sub.slots.items():
            may[self.cix[c], [self.pos[t] for ts in kinds.values() for t in ts]] = True
            most[self.cix[c]] = sub.node_cap.get(c, most[self.cix[c]])
            least[self.cix[c]] = sub.node_min.get(c, 0)
        n = self.size
        nodes, cand = self.nodes[:n], self.cand[:n]
        out: np.ndarray = ~np.any(self.rows[:n] & ~may[cand], axis=1) & (nodes <= most[cand]) & (nodes >= least[cand])
        return out


def branch_and_price(
    group: Group,
    columns: list[Column],
    best: tuple[Column, ...],
    best_cost: float,
    root_bound: float,
    deadline: float,
    rel_gap: float,
    race: Race | None = None,
    lanes: int | None = None,
    worker: remote.Worker | None = None,
) -> BranchResult:
    """Search the assignments of `group` until the best plan is proven within `rel_gap` or the deadline.

    `columns` are pools known to price well (the root's generated columns), `best` the best plan known and
    `root_bound` a lower bound already proven for the whole group. With `race`, this search and one on another
    thread (`cover.solve_cover`) share their best plan's cost (which prunes here, so the bound returned may rest
    on the other's plan) and their proven bounds. `lanes` threads (default `_LANES`) take nodes from one
    queue, each with its own LP (HiGHS releases the GIL while it solves); they share plans, cuts and the pools
    their LPs use. Lane 1 runs in a worker process (`remote`): `worker`, one started ahead and not yet set up,
    or one started when the search goes past its root. The search ends every worker it was given or started.
    """
    search = _Search(_Given(group, columns, best, best_cost, root_bound, deadline, rel_gap, race))
    search.ahead = worker
    lanes = max(1, _LANES if lanes is None else lanes)
    errors: list[BaseException] = []

    def lane(wid: int) -> None:
        try:
            search.work(wid)
        except BaseException as exc:  # handed to the calling thread
            errors.append(exc)
            search.abort()

    threads = [SolverThread(functools.partial(lane, w), f"gpu-platform-bnp-{w}") for w in range(1, lanes)]
    try:
        for t in threads:
            t.start()
        search.work(0)
        for t in threads:
            t.wait()
    except BaseException:  # an interrupt (or an error) here: every lane stops at its next node, and is waited for
        _let_go(search.cond)
        search.abort()
        for t in threads:
            t.wait_out()
        raise
    finally:
        if worker is not None and worker not in search.workers:  # not taken: no second lane, or an early end
            worker.kill()
            worker.close()
    for t in threads:
        t.join()
    if errors:
        raise errors[0]
    return search.result()


def _let_go(cond: threading.Condition) -> None:
    """Release `cond` as many times as this thread holds it. An interrupt raised between taking a lock and the
    `with` block that took it (or as the block exits, before it lets go) leaves the lock held: the lanes this
    thread then waits for would wait for it for ever, and a second Ctrl-C is ignored."""
    owned = getattr(cond, "_is_owned", None)
    while owned is not None and owned():
        cond.release()


class _Given(NamedTuple):
    """What `branch_and_price` was given, for its search."""

    group: Group
    columns: list[Column]
    best: tuple[Column, ...]
    best_cost: float
    root_bound: float
    deadline: float
    rel_gap: float
    race: Race | None


class _Lane:
    """One worker's LP over the pools it has (the search's LP is rebuilt now and then)."""

    def __init__(self, search: _Search, wid: int, cols: list[Column]) -> None:
        self.wid, self.search = wid, search
        self.built = -1
        self._build(list(cols), search.cuts)
        self.seen = 0  # pools of the shared list this LP has been offered (a lane that starts late takes them all)
        # In a worker process, a node's start holds a number standing for the basis, kept here (the node may go
        # to the calling process and come back).
        self.bases: dict[int, Any] | None = None
        self.tokens = itertools.count()

    def keep(self, basis: Any) -> Any:
        """What a child node carries to start from `basis`."""
        if self.bases is None:
            return basis
        token = next(self.tokens)
        if len(self.bases) >= _BASES_KEPT:
            del self.bases[next(iter(self.bases))]  # the oldest (dicts keep their order)
        self.bases[token] = basis
        return token

    def start_of(self, node: _Node) -> Any:
        """The basis `node` starts from on this lane's LP, or None."""
        if node.start is None or node.start[0] != (self.wid, self.built):
            return None
        return node.start[1] if self.bases is None else self.bases.get(node.start[1])

    def _build(self, cols: list[Column], cuts: list[Cut]) -> None:
        """A new LP over `cols` with `cuts` (the first, or a rebuild with fewer pools)."""
        from .master import _Master

        self.cols = cols
        self.lp = _Master(self.search.group, cols, self.search.counters, cuts)
        self.incidence = _Incidence(self.search.group)
        self.incidence.add(cols)
        self.have = set(cols)
        self.used: set[int] = set()  # columns some node's LP solution used since the LP was last built
        self.limit = max(_LP_COLUMNS, 2 * len(cols))
        self.built += 1

    def sync_cuts(self) -> None:
        """Take in the cuts other lanes added."""
        if len(self.lp.cuts) < len(self.search.cuts):
            self.lp.add_cuts(self.search.cuts[len(self.lp.cuts) :])

    def sync(self) -> None:
        """Rebuild the LP when it holds too many pools, and take in the pools and cuts other lanes found."""
        s = self.search
        self.sync_cuts()
        if len(self.cols) > self.limit:  # rebuild the LP with the pools nodes used; pricing brings others back
            self._build([self.cols[j] for j in sorted(self.used)], self.lp.cuts)
        end = len(s.pool)
        self.add([c for c in s.pool[self.seen : end] if c not in self.have])
        self.seen = end

    def add(self, cols: list[Column]) -> None:
        self.have.update(cols)
        self.cols += cols
        self.lp.add(cols)
        self.incidence.add(cols)


class _Batch(NamedTuple):
    """A node for a worker process (`remote`), and what the search learnt since the last one."""

    bound: float
    node: _Node
    cutoff: float  # the best plan's cost
    floor: float  # the least bound open elsewhere: the worker goes on with its subtree's nodes up to it
    pools: list[Column]
    cuts: list[Cut]
    cut_at: frozenset[tuple[tuple[float, float], ...] | None]
    seconds: float  # to the search's deadline


class _Done(NamedTuple):
    """A worker's reply: its subtree's open nodes, a better plan, the pools it found, where it would add cuts
    (the calling process picks them), and the bounds of nodes it left open for good."""

    open: list[tuple[float, _Node]]
    best: tuple[tuple[Column, ...], float] | None
    pools: list[Column]
    cuts: list[tuple[tuple[tuple[float, float], ...] | None, list[Cut]]]  # (where, the cuts it violates)
    stuck: list[float]
    explored: int


def serve(setup: Any) -> Callable[[_Batch], _Done]:
    """In a worker process (`remote.main`): a replica of the search, and the function that answers batches."""
    (group, columns, best, best_cost, root_bound, seconds), rel_gap = setup
    search = _Search(_Given(group, columns, best, best_cost, root_bound, time.perf_counter() + seconds, rel_gap, None))
    lane = _Lane(search, _REMOTE_LANE, search.start)
    lane.bases = {}
    return functools.partial(search.batch, lane)


class _Search:
    """The queue, the best plan and what lanes share."""

    def __init__(self, given: _Given) -> None:
        group, columns, best = given.group, given.columns, given.best
        self.group, self.best, self.best_cost, self.root_bound = group, best, given.best_cost, given.root_bound
        self.deadline, self.rel_gap, self.race = given.deadline, given.rel_gap, given.race
        self.prices = set(group.price.values())
        self.ordered = sorted(self.prices)
        boxed = len(self.ordered) <= LATTICE_PRICES
        self.first = len(self.ordered) if boxed else 0
        # Counters: the node total of each price class, when the cost lattice applies.
        self.counters = {c: [self.ordered.index(p)] for c, p in group.price.items()} if boxed else None
        # The search's LP starts from the best plan's pools, or the root's when they are few: a large LP makes every
        # simplex iteration dearer, and pricing brings back any pool that pays (64-tier scale benchmark, large
        # groups from their best plans: 17.0 s / 12.7 s, against 21.6 s / 21.1 s starting from the root's ~2,500).
        self.start = list(dict.fromkeys(columns if len(columns) <= _LP_COLUMNS else best))
        self.pool: list[Column] = []  # pools lanes generated and used, for the other lanes
        self.cuts: list[Cut] = []  # cuts in every lane's LP (a lane takes the new ones before its next node)
        self.cond = threading.Condition()
        self.heap: list[tuple[float, int, _Node]] = [(given.root_bound, 0, _Node(box=((0.0, math.inf),) * self.first))]
        self.count, self.explored = 1, 0  # ties (`pop`) go newest first: a child starts from its parent's basis
        self.busy: dict[int, float] = {}  # lane -> the bound of the node it works on
        self.stuck: list[float] = []  # bounds of nodes left open for good (solver tolerances stop their pricing)
        self.tried: set[frozenset[tuple[int, int]]] = set()  # LP roundings the local search already improved
        self.began, self.searching = time.perf_counter(), 0.0  # local search gets at most _SEARCH_SHARE of the time
        self.cut_at: set[tuple[tuple[float, float], ...] | None] = set()  # the root (None) and pinned boxes with cuts
        self.stopped = False
        self.proposed: list[tuple[tuple[tuple[float, float], ...] | None, list[Cut]]] | None = None  # worker's
        self.workers: list[remote.Worker] = []  # lane 1's worker process (`remote`), once set up
        self.ahead: remote.Worker | None = None  # one started ahead by the caller

    def abort(self) -> None:
        with self.cond:
            self.stopped = True
            for worker in self.workers:  # a lane waiting for its worker's reply gets EOFError
                worker.kill()
            self.cond.notify_all()

    def cutoff(self) -> float:
        return min(self.best_cost, self.race.best) if self.race else self.best_cost

    def offer(self, plan: tuple[Column, ...], cost: float) -> None:
        with self.cond:
            if cost < self.best_cost - 1e-9:
                self.best, self.best_cost = plan, cost

    def push(self, bound: float, node: _Node) -> None:
        heapq.heappush(self.heap, (bound, -self.count, node))
        self.count += 1

    def pop(self, lane: int) -> tuple[float, int, _Node]:
        """The queue's next node for `lane`: among the nodes of least bound, those whose parent's LP solution was
        nearest to integral (`_Node.frac`), and of those the newest whose basis is on that lane's LP, else the
        newest (a node started from elsewhere takes more simplex iterations).

        Below the optimum's cost every node of least bound is solved anyway, in whatever order; at the optimum's
        level of the cost lattice, where every node has the same bound, the search stops as soon as one of them
        gives a plan of that cost, and a branch of a nearly integral LP gets there sooner. Seed 3 of the 64-tier
        scale benchmark, whose optimum is at the level its bound reaches after a third of its branches, took 5.0 /
        15.1 / 14.9 s newest first (two lanes: as many branches at that level as below it, or many more, from run
        to run) and 5.4 / 6.3 / 5.6 s so; its group alone 4.5-5.1 s in six runs, against 5.2-29.3 s (on a quiet
        machine; a sweep beside another job still had one run of 25.0 s). With the count of split tiers instead of
        their fractions, one run of six took 22.2 s. Later runs of its search in two lanes took 120-949 branches
        (3.8-38 s): at that level the LPs are degenerate, and which branch each lane takes there first decides
        which pool sizes the search branches on; in one lane it takes the same 129 (benchmarks/RESULTS.md)."""
        least = self.heap[0][0] + 1e-9 * max(1.0, abs(self.heap[0][0]))  # one level of the cost lattice
        ties = [i for i, (b, _, _) in enumerate(self.heap) if b <= least]
        nearest = min(self.heap[i][2].frac for i in ties) + 1e-9
        ties = [i for i in ties if self.heap[i][2].frac <= nearest]
        mine = [i for i in ties if (n := self.heap[i][2]).start is not None and n.start[0][0] == lane]
        i = min(mine or ties, key=lambda i: self.heap[i][1])
        self.heap[i], self.heap[-1] = self.heap[-1], self.heap[i]
        out = self.heap.pop()
        heapq.heapify(self.heap)
        return out

    def take(self, wid: int) -> tuple[float, _Node] | None:
        """The next node for lane `wid` (None: the search is over), the lock held by the caller."""
        while True:
            while not self.heap and self.busy and not self.stopped and time.perf_counter() < self.deadline:
                self.cond.wait(0.05)
            if not self.heap or self.stopped or time.perf_counter() >= self.deadline or (self.race and self.race.stop):
                self.stopped = True  # done, out of time or stopped: every lane ends
                return None
            cutoff = self.cutoff()
            margin = cutoff - self.rel_gap * cutoff
            if self.race:  # share the best plan; the least bound still open (or that plan's cost) is proven
                self.race.best = cutoff
                self.race.bound = max(self.race.bound, min([self.heap[0][0], *self.busy.values(), *self.stuck, cutoff]))
                if self.race.bound >= margin:
                    self.stopped = True
                    return None
            bound, _, node = self.pop(_REMOTE_LANE if wid == 1 and self.workers else wid)
            admitted = self.admit(bound, node, margin)
            if admitted is not None:
                self.busy[wid] = bound
                return bound, admitted

    def admit(self, bound: float, node: _Node, margin: float) -> _Node | None:
        """`node` to solve, each price class's node total cut to what a plan costing less than `margin` can have;
        None when no such plan is left there. Counted as explored."""
        if bound >= margin:
            return None
        if self.first:
            node = replace(node, box=tightened(node.box, self.ordered, margin))
            if any(lo > hi for lo, hi in node.box):
                return None
        self.explored += 1
        return node

    def work(self, wid: int) -> None:
        if wid:  # a second lane waits while the listings' thread is at work: the two would share one core
            worker = self.spawn() if wid == 1 and self.ongoing() else None
            with self.cond:
                while self.race and self.race.listing and not self.stopped and time.perf_counter() < self.deadline:
                    self.cond.wait(0.05)
            if worker is not None and self.work_remote(wid, worker):
                return
        lane = _Lane(self, wid, self.start)
        while True:
            with self.cond:
                taken = self.take(wid)
                if taken is None:
                    self.cond.notify_all()
                    return
            try:
                self.node(lane, *taken)
            finally:
                with self.cond:
                    del self.busy[wid]
                    self.cond.notify_all()

    def ongoing(self) -> bool:
        """Wait until the search is past its root: whether it goes on (a worker process is worth starting)."""
        with self.cond:
            while not self.stopped and self.explored < 2 and (self.heap or self.busy):
                if time.perf_counter() >= self.deadline:
                    return False
                self.cond.wait(0.05)
            return not self.stopped and bool(self.heap or self.busy)

    def spawn(self) -> remote.Worker | None:
        """A worker process for lane 1 (`remote`), set up with what this search was given; None when it cannot
        be started (lane 1 is then a thread)."""
        left = self.deadline - time.perf_counter()
        if self.ahead is None and (not remote.enabled() or left < _SPAWN_LEFT):
            return None
        setup = (self.group, self.start, self.best, self.best_cost, self.root_bound, left)
        try:
            worker = self.ahead or remote.Worker()
        except OSError:
            return None
        with self.cond:  # from here an abort kills it, also while the setup waits for it to read
            self.workers.append(worker)
            if self.stopped:
                worker.kill()
        try:  # it reads its setup once imported: not worth waiting for once the search is over
            worker.setup((setup, self.rel_gap), lambda: self.stopped or time.perf_counter() > self.deadline)
        except (EOFError, OSError):
            worker.kill()
            worker.close()
            return None
        return worker

    def work_remote(self, wid: int, worker: remote.Worker) -> bool:
        """Lane `wid` in a worker process: each node taken goes there with what the search has learnt since,
        and comes back with its subtree's open nodes. Whether the lane is done (False: the worker ended early,
        and this thread takes over as a thread lane)."""
        sent_pools, sent_cuts = 0, 0
        try:
            try:
                while not worker.ready(0.05):  # its imports take a moment: lane 0 goes on meanwhile
                    with self.cond:
                        if self.stopped or time.perf_counter() >= self.deadline:
                            return True
            except (EOFError, OSError):  # it could not start
                return self.stopped
            while True:
                with self.cond:
                    taken = self.take(wid)
                    if taken is None:
                        self.cond.notify_all()
                        return True
                    bound, node = taken
                    if node.start is not None and node.start[0][0] != _REMOTE_LANE:
                        node = replace(node, start=None)  # a basis of this process's LP: nothing to the worker
                    floor = min(
                        [b for b, _, _ in self.heap[:1]] + [b for w, b in self.busy.items() if w != wid],
                        default=math.inf,
                    )
                    request = _Batch(
                        bound,
                        node,
                        self.cutoff(),
                        max(floor, bound),
                        self.pool[sent_pools:],
                        self.cuts[sent_cuts:],
                        frozenset(self.cut_at),
                        self.deadline - time.perf_counter(),
                    )
                    sent_pools, sent_cuts = len(self.pool), len(self.cuts)
                try:
                    reply = worker.ask(request, functools.partial(self.too_late, time.perf_counter()))
                except (EOFError, OSError, RuntimeError) as exc:  # it ended (killed, stopped here, too late) or failed
                    if isinstance(exc, RuntimeError):  # a resource it ran out of, say: this process goes on without it
                        warnings.warn(f"{exc}\nIts lane goes on in this process.", RuntimeWarning, stacklevel=1)
                        worker.kill()
                    with self.cond:
                        del self.busy[wid]
                        self.push(bound, node)  # still open: the search's bound counts it
                        self.cond.notify_all()
                    return self.stopped
                with self.cond:
                    self.merge(reply)
                    del self.busy[wid]
                    self.cond.notify_all()
        finally:
            worker.close()

    def too_late(self, asked: float) -> bool:
        """Whether to stop waiting for a worker asked at `asked`: past the deadline, or the search stopped and a
        batch's time gone (by `_LATE` seconds)."""
        now = time.perf_counter()
        return now > self.deadline + _LATE or (self.stopped and now > asked + _BATCH + _LATE)

    def pick_cuts(self, violating: list[Cut]) -> bool:
        """Add the cuts of `violating` (most violated first) that the knapsacks price exactly beside the search's
        cuts, `_CUTS_PER_NODE` at most (the lock held). Whether any was added. One list for every lane: cuts
        picked apart could join into a stage past `columns._STAGE_TIERS` tiers, which pricing refuses."""
        fresh = [c for c in violating if c not in self.cuts]
        new_cuts = priceable(self.group, self.cuts, fresh, min(_CUTS_PER_NODE, _CUTS_MOST - len(self.cuts)))
        self.cuts += new_cuts
        return bool(new_cuts)

    def merge(self, reply: _Done) -> None:
        """Take in a worker's batch (the lock held)."""
        for bound, node in reply.open:
            self.push(bound, node)
        if reply.best is not None:
            self.offer(*reply.best)
        self.pool.extend(reply.pools)
        for place, violating in reply.cuts:
            if place not in self.cut_at and len(self.cuts) < _CUTS_MOST:
                self.cut_at.add(place)
                self.pick_cuts(violating)
        self.stuck += reply.stuck
        self.explored += reply.explored - 1  # take() counted the batch's first node

    def batch(self, lane: _Lane, request: _Batch) -> _Done:
        """In a worker process: solve the request's node and the nodes of its subtree while their bound is at
        most the request's floor (the least bound open elsewhere), for at most `_BATCH` seconds, newest first."""
        self.best_cost = min(self.best_cost, request.cutoff)
        first_cost = self.best_cost
        self.pool.extend(request.pools)
        start = len(self.pool)
        self.cuts += request.cuts  # the calling process's list, in its order
        self.cut_at |= request.cut_at
        self.proposed = []
        self.deadline = time.perf_counter() + request.seconds
        self.heap, self.stuck, self.explored = [], [], 0
        self.push(request.bound, request.node)
        until = min(self.deadline, time.perf_counter() + _BATCH)
        while self.heap and self.heap[0][0] <= request.floor + 1e-9 and time.perf_counter() < until:
            if self.proposed:  # the node waits for the cuts the calling process picks
                break
            bound, _, node = heapq.heappop(self.heap)
            admitted = self.admit(bound, node, self.cutoff() - self.rel_gap * self.cutoff())
            if admitted is not None:
                self.node(lane, bound, admitted)
        margin = self.cutoff() - self.rel_gap * self.cutoff()
        return _Done(
            [(b, n) for b, _, n in sorted(self.heap) if b < margin],
            (self.best, self.best_cost) if self.best_cost < first_cost - 1e-9 else None,
            self.pool[start:],
            self.proposed,
            list(self.stuck),
            max(self.explored, 1),
        )

    def node(self, lane: _Lane, bound: float, node: _Node) -> None:
        """Solve one node: prune it, take its plan, add cuts, or branch."""
        from .master import _full, _generate

        group, rel_gap = self.group, self.rel_gap
        sub = _restricted(group, node, self.counters)
        if any(not any(t in ts for kinds in sub.slots.values() for ts in kinds.values()) for t in group.units):
            return  # a tier no candidate may serve: no plan here
        if any(lo > sub.max_nodes(c) for c, lo in sub.node_min.items()):
            # A pool that must be larger than its class allows, or than its tiers need: no plan here, or none
            # that the same plan with a smaller pool does not beat.
            return
        lane.sync()
        lane.add([c for c in _full(sub) if c.tiers and c not in lane.have])
        # A candidate that must have a pool gets one of its least nodes serving nothing: the LP stays feasible.
        lane.add([e for c, lo in sub.node_min.items() if (e := Column(c, lo, frozenset())) not in lane.have])
        lp = lane.lp
        basis = lane.start_of(node)
        if basis is not None:
            lp.lp.restore(basis)
        lp.set_box(node.box)
        lp.set_used(frozenset(sub.node_min))
        allowed = lane.incidence.allowed(sub)
        lp.allow_only(allowed)
        before = len(lane.cols)
        cutoff = self.cutoff()
        # Pools the node does not allow, priced out of the LP, that its solution still uses (they save more than the
        # penalty): fixed at 0 and the node solved again, so its solution is one of the node's LP (`_STRAY_TRIES`).
        # In seeds 4 / 8 of the 64-tier scale benchmark's large groups, 12 / 31 of 140 / 171 nodes.
        first, ordered = self.first, self.ordered
        floor = next_cost(self.prices, bound, dict(zip(ordered[:first], node.box[:first], strict=True)))
        # Column generation stops once the LP is at this node's known bound (`master._generate`): seed 16 of the
        # 64-tier scale benchmark (one lane, from its optimum) had 173 of 486 branches stop at their first solve,
        # all in pinned boxes: 28.0 / 26.2 s against 32.9 / 28.1 s (figures in benchmarks/RESULTS.md).
        node_bound, stray = -math.inf, np.zeros(0, dtype=np.int64)
        for tries in range(_STRAY_TRIES + 2):
            if tries:
                lp.forbid(stray if tries <= _STRAY_TRIES else np.flatnonzero(~allowed))
            _, again, converged, x = _generate(
                sub, lane.cols, self.deadline, lp, _ROUNDS, cutoff, rel_gap, lane.have, _PER_CAND, floor
            )
            node_bound = max(node_bound, again)
            stray = np.flatnonzero((x[: len(allowed)] > 1e-9) & ~allowed)
            if not len(stray) or node_bound >= cutoff - rel_gap * cutoff or time.perf_counter() >= self.deadline:
                break
        converged = converged and not len(stray)
        cols = lane.cols
        x = np.where(np.concatenate([allowed, np.ones(len(cols) - before, dtype=bool)]), x, 0.0)
        lane.used.update(int(j) for j in np.flatnonzero(x > 1e-9))
        lane.incidence.add(cols[before:])
        # Only the new pools this node's LP solution uses go to the other lanes: every pool a lane takes in makes
        # its LP larger, and a lane rebuilds its LP past `_LP_COLUMNS`, dropping pools pricing then finds again.
        # Sharing every new pool, seed 8's large group (64-tier scale benchmark, from its best plan, two lanes)
        # took 3,780 LP solves and 12 rebuilds per lane for 963 nodes (2,102 solves and 5 rebuilds for 881 nodes in
        # one lane); sharing the used ones, 2,653 solves and 4-5 rebuilds.
        self.pool.extend(cols[j] for j in np.flatnonzero(x > 1e-9) if j >= before)
        node_bound = next_cost(
            self.prices, max(node_bound, bound), dict(zip(ordered[:first], node.box[:first], strict=True))
        )
        cutoff = self.cutoff()
        if node_bound >= cutoff - rel_gap * cutoff:
            return
        share: dict[int, dict[int, float]] = defaultdict(lambda: defaultdict(float))
        for j in np.flatnonzero(x > 1e-9):
            for t in cols[j].tiers:
                share[t][cols[j].cand] += float(x[j])
        where = {t: max(sh.items(), key=lambda kv: kv[1])[0] for t, sh in share.items()}
        if len(where) == len(group.units):
            with self.cond:
                seen = frozenset(where.items())
                go = self.searching <= _SEARCH_SHARE * (time.perf_counter() - self.began) and seen not in self.tried
                if go:
                    self.tried.add(seen)
            if go:
                clock = time.perf_counter()
                found = improve(sub, where, self.deadline)
                with self.cond:
                    self.searching += time.perf_counter() - clock
                self.offer(tuple(found), sum(group.cost(c) for c in found))
        open_ = {t: sh for t, sh in share.items() if max(sh.values()) < _INTEGRAL}
        if not open_ and converged and len(where) == len(group.units):
            on: dict[int, list[int]] = defaultdict(list)
            for t, c in where.items():
                on[c].append(t)
            plan = tuple(merged(group, c, ts) for c, ts in on.items())
            self.offer(plan, sum(group.cost(c) for c in plan))
            return  # this node's optimum is known
        node = replace(  # children start from its basis, and are taken first among equals when it is nearly integral
            node,
            start=((lane.wid, lane.built), lane.keep(lp.lp.basis())),
            frac=sum(1.0 - max(sh.values()) for sh in open_.values()),
        )
        # Cuts at the first converged node that splits tiers, and at the first one of each pinned box, before it
        # branches; the node is solved again with them. They hold at every node: kept for the whole search.
        place = node.box if first and all(lo == hi for lo, hi in node.box) else None
        if open_ and converged:
            with self.cond:
                if place not in self.cut_at and len(self.cuts) < _CUTS_MOST:
                    self.cut_at.add(place)
                    violating = violated(cols, x, 10 * _CUTS_PER_NODE, _CUT_BY)
                    if self.proposed is not None:  # in a worker: the calling process picks the cuts (`merge`)
                        self.proposed.append((place, violating))
                        self.push(node_bound, node)
                        return
                    lane.sync_cuts()
                    if self.pick_cuts(violating):
                        lane.sync_cuts()
                        self.push(node_bound, node)
                        return
        if not open_:  # not converged: price again (the pool kept the new columns), a few times at most
            self.retry(node_bound, node)
            return
        totals = lp.totals(x)
        split = [  # a total outside the node's box (artificial columns still in use) is not branched on
            (abs(r - math.floor(r) - 0.5), k, r)
            for k, r in enumerate(totals)
            if 1e-6 < r - math.floor(r) < 1 - 1e-6
            and node.box[k][0] <= math.floor(r)
            and math.ceil(r) <= node.box[k][1]
        ]
        if split:  # a price class's node total is fractional: at most its floor, or at least its ceiling
            _, k, r = min(split)
            (lo, hi), box = node.box[k], list(node.box)
            with self.cond:
                cutoff = self.cutoff()
                for child_box in ((lo, float(math.floor(r))), (float(math.ceil(r)), hi)):
                    box[k] = child_box
                    least = next_cost(self.prices, node_bound, dict(zip(ordered, box, strict=True)))
                    if least < cutoff - rel_gap * cutoff:  # else no node count in the child's box pays
                        self.push(least, replace(node, box=tuple(box), retries=0))
            return
        # Then on a candidate's pool size, and only when no candidate's is split, on a tier. Of two children of
        # equal bound the newer is taken first: the one that gives the candidate a pool.
        sizing = _size_branch(cols, x, node)
        if sizing is not None:
            with self.cond:
                for child in sizing:
                    self.push(node_bound, child)
            return
        tier, cand = _branch_on(group, open_)
        if (tier, cand) in node.fixed:  # a solution that is not the node's (the solver stopped short): not a branch
            self.retry(node_bound, node)
            return
        with self.cond:
            for child in (
                replace(node, fixed=node.fixed | {(tier, cand)}),
                replace(node, forbidden=node.forbidden | {(tier, cand)}),
            ):
                self.push(node_bound, child)

    def retry(self, bound: float, node: _Node) -> None:
        """Queue `node` again to price it once more, or, after `_RETRIES` tries, leave it open for good."""
        with self.cond:
            if node.retries >= _RETRIES:
                self.stuck.append(bound)
            else:
                self.push(bound, replace(node, retries=node.retries + 1))

    def result(self) -> BranchResult:
        cutoff = self.cutoff()
        bound = min([b for b, _, _ in self.heap] + self.stuck + [cutoff])
        return BranchResult(self.best, self.best_cost, max(min(bound, self.best_cost), self.root_bound), self.explored)
