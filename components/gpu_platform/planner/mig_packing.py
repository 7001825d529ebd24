"""Exact MIG packing: which per-GPU layouts, and how many GPUs of each, cover a demand of MIG instances.

Layouts come from the catalog's placement rules (`layout_fits`), so every layout is one NVIDIA allows. The
packing is an integer program over layouts (HiGHS through `highspy`, `planner/highs.py`), started from the
first-fit packing so a time limit always leaves a valid packing; `lower_bound` and `first_fit` give the figures
it is compared with.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
from scipy.sparse import csc_array

from ..catalog import COMPUTE_SLICES, MEMORY_SLICES, layout_fits, profiles_for
from ..errors import GpuPlatformError
from .highs import solve_mip

__all__ = [
    "Layout",
    "Packing",
    "PlanningError",
    "enumerate_layouts",
    "first_fit",
    "lower_bound",
    "maximal_layouts",
    "pack",
]

Layout = tuple[tuple[str, int], ...]
"""A per-GPU MIG layout as sorted (profile, count) pairs with count > 0."""


class PlanningError(GpuPlatformError):
    """A demand cannot be planned (unknown profile, no allowed instance type, solver failure)."""


@dataclass(frozen=True)
class Packing:
    """GPUs per layout that cover a MIG demand, with how sure the solver is."""

    gpu_model: str
    layouts: tuple[tuple[Layout, int], ...]  # (layout, GPUs using it)
    optimal: bool
    gap: float  # relative MIP gap; 0 when optimal
    bound: float  # the solver's lower bound on GPUs

    @property
    def gpus(self) -> int:
        """GPUs used."""
        return sum(n for _, n in self.layouts)


def _key(layout: Mapping[str, int]) -> Layout:
    return tuple(sorted((p, n) for p, n in layout.items() if n > 0))


def _check_profiles(gpu_model: str, names: Iterable[str]) -> None:
    known = profiles_for(gpu_model)
    for name in names:
        if name not in known:
            allowed = ", ".join(known) or "none (no MIG on this GPU)"
            raise PlanningError(f"{name!r} is not a MIG profile of {gpu_model}; allowed: {allowed}")


@lru_cache(maxsize=256)
def enumerate_layouts(gpu_model: str, profiles: tuple[str, ...] | None = None) -> tuple[Layout, ...]:
    """Every non-empty multiset of `profiles` (default: all of the model's) that fits one GPU."""
    names = tuple(profiles_for(gpu_model)) if profiles is None else tuple(sorted(set(profiles)))
    _check_profiles(gpu_model, names)
    found: list[Layout] = []

    def extend(i: int, current: dict[str, int]) -> None:
        if i == len(names):
            if current:
                found.append(_key(current))
            return
        extend(i + 1, current)
        count = 1
        # A subset of a valid layout is valid, so stop at the first count that does not fit.
        while layout_fits(gpu_model, {**current, names[i]: count}):
            extend(i + 1, {**current, names[i]: count})
            count += 1

    extend(0, {})
    return tuple(found)


@lru_cache(maxsize=256)
def maximal_layouts(gpu_model: str, profiles: tuple[str, ...]) -> tuple[Layout, ...]:
    """The layouts of `profiles` to which no further instance of `profiles` can be added."""
    names = sorted(set(profiles))
    out = []
    for layout in enumerate_layouts(gpu_model, tuple(names)):
        d = dict(layout)
        if not any(layout_fits(gpu_model, {**d, p: d.get(p, 0) + 1}) for p in names):
            out.append(layout)
    return tuple(out)


def lower_bound(gpu_model: str, counts: Mapping[str, int]) -> int:
    """max(ceil(compute slices / 7), ceil(memory slices / 8)) of the demanded instances."""
    _check_profiles(gpu_model, counts)
    profiles = profiles_for(gpu_model)
    compute = sum(profiles[p].compute * n for p, n in counts.items())
    memory = sum(profiles[p].size * n for p, n in counts.items())
    return max(math.ceil(compute / COMPUTE_SLICES), math.ceil(memory / MEMORY_SLICES))


def first_fit(gpu_model: str, counts: Mapping[str, int]) -> list[dict[str, int]]:
    """First-fit decreasing: largest instances first, each into the first GPU it still fits on."""
    _check_profiles(gpu_model, counts)
    profiles = profiles_for(gpu_model)
    order = sorted(counts, key=lambda p: (-profiles[p].size, -profiles[p].compute, p))
    gpus: list[dict[str, int]] = []
    for name in order:
        # GPUs (in opening order) that can still take one `name`; a GPU that cannot never can again.
        open_ = [g for g in gpus if layout_fits(gpu_model, {**g, name: g.get(name, 0) + 1})]
        for _ in range(counts[name]):
            if open_:
                layout = open_[0]
                layout[name] = layout.get(name, 0) + 1
                if not layout_fits(gpu_model, {**layout, name: layout[name] + 1}):
                    open_.pop(0)
            else:
                layout = {name: 1}
                gpus.append(layout)
                if layout_fits(gpu_model, {name: 2}):
                    open_.append(layout)
    return gpus


def _first_fit_start(gpu_model: str, demand: Mapping[str, int], layouts: tuple[Layout, ...]) -> np.ndarray:
    """First-fit decreasing as GPUs per maximal layout: each first-fit GPU counts on a maximal layout holding it."""
    start = np.zeros(len(layouts))
    for gpu in first_fit(gpu_model, demand):
        j = next(j for j, lay in enumerate(layouts) if all(dict(lay).get(p, 0) >= n for p, n in gpu.items()))
        start[j] += 1
    return start


def pack(gpu_model: str, counts: Mapping[str, int], time_limit: float = 10.0) -> Packing:
    """The fewest GPUs (each with one valid layout) that hold `counts` instances, solved exactly.

    The search starts from first-fit decreasing, so when `time_limit` stops it the packing is still valid (at
    worst first-fit's), reported with `optimal` False and the gap to the solver's bound.
    """
    demand = {p: n for p, n in counts.items() if n > 0}
    if not demand:
        return Packing(gpu_model, (), True, 0.0, 0.0)
    names = tuple(sorted(demand))
    layouts = maximal_layouts(gpu_model, names)
    a = csc_array(np.array([[dict(lay).get(p, 0) for lay in layouts] for p in names], dtype=float))
    b = np.array([demand[p] for p in names], dtype=float)
    floor = float(lower_bound(gpu_model, demand))
    res = solve_mip(
        np.ones(len(layouts)),
        a,
        b,
        np.full(len(names), np.inf),
        np.full(len(layouts), float(sum(demand.values()))),
        time_limit,
        0.0,
        _first_fit_start(gpu_model, demand, layouts),
        floor,
    )
    if res.x is None:  # unreachable: first-fit is a feasible start
        raise PlanningError(f"MIG packing on {gpu_model} found no solution within {time_limit}s ({res.status})")
    counts_out = np.round(res.x).astype(int)
    used = tuple((layouts[j], int(n)) for j, n in enumerate(counts_out) if n > 0)
    gpus = sum(n for _, n in used)
    # GPUs are whole: a bound above gpus - 1 proves the packing optimal.
    optimal = res.status == "optimal" or math.ceil(res.bound - 1e-6) >= gpus
    bound = float(gpus) if optimal else res.bound
    return Packing(gpu_model, used, optimal, 0.0 if optimal else (gpus - bound) / gpus, bound)
