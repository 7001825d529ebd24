"""Exact MIG packing: hand-checkable demands, first-fit gaps, and a property test over random demands."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gpu_platform.catalog import layout_fits, profiles_for
from gpu_platform.planner.mig_packing import (
    PlanningError,
    enumerate_layouts,
    first_fit,
    lower_bound,
    maximal_layouts,
    pack,
)

A100_80 = "A100-SXM4-80GB"


def _covered(packing) -> dict[str, int]:
    got: dict[str, int] = {}
    for layout, gpus in packing.layouts:
        for profile, n in layout:
            got[profile] = got.get(profile, 0) + n * gpus
    return got


def test_memory_binds_not_compute():
    demand = {"3g.40gb": 14, "1g.10gb": 7}
    # compute: 14*3 + 7*1 = 49 slices -> 7 GPUs; memory: 14*4 + 7*1 = 63 slices -> 8 GPUs.
    assert lower_bound(A100_80, demand) == 8
    result = pack(A100_80, demand)
    assert result.gpus == 8 and result.optimal and result.gap == 0.0
    assert all(layout_fits(A100_80, dict(layout)) for layout, _ in result.layouts)
    assert all(_covered(result)[p] >= n for p, n in demand.items())


def test_first_fit_is_worse_than_optimal():
    # FFD puts 2x3g on GPU 1, 3g+2x2g on GPU 2, 3x2g+1g on GPU 3 and strands the last 1g on GPU 4;
    # the optimum is 2 x (3g + 2x2g) + (3g + 2g + 2x1g) = 3 GPUs, the slice bound.
    demand = {"2g.20gb": 5, "3g.40gb": 3, "1g.10gb": 2}
    assert len(first_fit(A100_80, demand)) == 4
    assert pack(A100_80, demand).gpus == 3 == lower_bound(A100_80, demand)


def test_first_fit_worse_with_me_profiles():
    demand = {"1g.10gb+me": 6, "3g.40gb": 4}
    # 1g+me is at most one per GPU, so 6 GPUs are needed; FFD opens 2 GPUs of 2x3g first and then 6 more.
    assert pack(A100_80, demand).gpus == 6
    assert len(first_fit(A100_80, demand)) == 8


def test_layout_enumeration_matches_placement_rules():
    classic = ("1g.5gb", "2g.10gb", "3g.20gb", "4g.20gb", "7g.40gb")
    layouts = enumerate_layouts("A100-SXM4-40GB", classic)
    assert len(layouts) == 37  # facts.md: 37 valid multisets of the classic A100-40GB profiles
    maximal = maximal_layouts("A100-SXM4-40GB", classic)
    assert len(maximal) == 12  # facts.md: 12 maximal combinations
    assert (("3g.20gb", 2),) in maximal and (("3g.20gb", 1), ("4g.20gb", 1)) in maximal


def test_unknown_profile_names_allowed_ones():
    with pytest.raises(PlanningError, match="3g.20gb.*allowed: 1g.10gb"):
        pack(A100_80, {"3g.20gb": 1})


def test_empty_demand_uses_no_gpus():
    assert pack(A100_80, {}).gpus == 0


_PROFILES = sorted(profiles_for(A100_80))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.dictionaries(st.sampled_from(_PROFILES), st.integers(1, 12), min_size=1, max_size=4))
def test_every_packing_is_valid_covers_and_beats_first_fit(demand):
    result = pack(A100_80, demand)
    assert all(layout_fits(A100_80, dict(layout)) for layout, _ in result.layouts)
    covered = _covered(result)
    assert all(covered.get(p, 0) >= n for p, n in demand.items())
    assert lower_bound(A100_80, demand) <= result.gpus <= len(first_fit(A100_80, demand))
    assert all(layout_fits(A100_80, g) for g in first_fit(A100_80, demand))


def test_no_time_still_returns_a_valid_packing_with_a_true_status():
    # A time limit of 0 leaves the search its floor of 0.05 s: it starts from first-fit decreasing, so the packing
    # is valid whatever the limit, and "optimal" or the gap match the bound it reports.
    demand = {"1g.10gb": 301, "1g.20gb": 97, "2g.20gb": 133, "3g.40gb": 58, "4g.40gb": 41, "1g.10gb+me": 23}
    result = pack(A100_80, demand, time_limit=0)
    assert all(layout_fits(A100_80, dict(layout)) for layout, _ in result.layouts)
    assert all(_covered(result)[p] >= n for p, n in demand.items())
    assert lower_bound(A100_80, demand) <= result.gpus <= len(first_fit(A100_80, demand))
    if result.optimal:
        assert result.gap == 0.0 and result.bound == result.gpus
    else:
        assert result.bound < result.gpus and result.gap == pytest.approx((result.gpus - result.bound) / result.gpus)
