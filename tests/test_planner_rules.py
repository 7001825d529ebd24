"""The planner's stated rules: honest "optimal" and bounds, perGpu as a maximum, whole-GPU MIG fallback, ties."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from gpu_platform.catalog import GPU_MODELS, INSTANCE_TYPES
from gpu_platform.errors import SpecError
from gpu_platform.planner import PlanningError, parse_demand, plan
from gpu_platform.planner.candidates import allowed_types
from gpu_platform.planner.demand import catalog_of, training_models
from helpers.planner import assert_serves, brute_force_hourly, demand, merged_spec, tiers


def _price(name: str) -> float:
    return INSTANCE_TYPES[name].hourly_usd


def _one_profile_demand(sizes_and_types):
    tiers = [
        {"name": f"t{i}", "mig": {"profile": "1g.10gb", "instances": n}, "instanceTypes": [itype, "p4de.24xlarge"]}
        for i, (n, itype) in enumerate(sizes_and_types)
    ]
    return parse_demand({"cloud": "aws", "tiers": tiers})


def refused(data: dict) -> dict[str, str]:
    """Each finding of the demand `data`, which must be refused: path -> message."""
    with pytest.raises(SpecError) as info:
        parse_demand(data)
    return {f.path: f.message for f in info.value.findings}


def test_optimal_and_the_bound_are_true_statements_about_cost():
    # Three 1g.10gb tiers: 46 instances on T4s, 1 on an A10G, 1 on an L40S, each also allowed on p4de. One p4de
    # node (8 GPUs x 7 slices) holds all 48, but 48 whole GPUs of the cheaper single-GPU types cost less.
    result = plan(_one_profile_demand([(46, "g4dn.xlarge"), (1, "g5.xlarge"), (1, "g6e.2xlarge")]))
    whole_gpus = 46 * _price("g4dn.xlarge") + _price("g5.xlarge") + _price("g6e.2xlarge")
    one_p4de = _price("p4de.24xlarge")
    assert result.optimal
    assert result.hourly <= min(whole_gpus, one_p4de) + 1e-9
    assert result.cost_bound <= min(whole_gpus, one_p4de, result.hourly) + 1e-9
    assert result.hourly == pytest.approx(brute_force_hourly(result.demand), abs=1e-9)
    assert_serves(result, merged_spec(result))


_SMALL_TIER = tiers(gpus=12, instances=20, profiles=("1g.10gb", "2g.20gb", "3g.40gb", "7g.80gb"))


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(_SMALL_TIER, min_size=1, max_size=3),
    st.sampled_from([["p4d.24xlarge", "p4de.24xlarge"], ["g4dn.xlarge", "p4de.24xlarge"]]),
)
def test_plan_matches_an_exhaustive_search(tiers, types):
    d = demand(*({"name": f"t{i}", **t} for i, t in enumerate(tiers)), instanceTypes=types)
    result = plan(d, time_limit=5)
    cheapest = brute_force_hourly(d)
    assert result.optimal
    assert result.hourly == pytest.approx(cheapest, rel=1e-6)
    assert result.cost_bound <= cheapest + 1e-6


def _seats(name, count, per_gpu, **extra):
    return {"name": name, "seats": {"count": count, "perGpu": per_gpu, **extra}}


def test_per_gpu_is_a_maximum_so_denser_tiers_share_a_sparser_pool():
    # 3 seats at <= 4 per GPU and 3 at <= 2 per GPU: one time-sliced pool with 2 replicas, 3 GPUs, one node.
    result = plan(demand(_seats("dense", 3, 4), _seats("sparse", 3, 2), instanceTypes=["p4d.24xlarge"]))
    assert len(result.pools) == 1 and result.pools[0].nodes == 1
    assert result.pools[0].candidate.replicas == 2
    assert_serves(result, merged_spec(result))


def test_exact_density_keeps_a_tier_on_pools_of_its_own_replicas():
    result = plan(
        demand(_seats("dense", 3, 4, exactDensity=True), _seats("sparse", 3, 2), instanceTypes=["p4d.24xlarge"])
    )
    assert sorted(result.pool_of(t).candidate.replicas for t in ("dense", "sparse")) == [2, 4]
    assert result.hourly == pytest.approx(2 * _price("p4d.24xlarge"))


def test_exact_density_must_be_a_boolean():
    with pytest.raises(SpecError) as info:
        parse_demand({"cloud": "aws", "tiers": [_seats("a", 3, 4, exactDensity="sometimes")]})
    [finding] = info.value.findings
    assert finding.path == "tiers[0].seats.exactDensity"
    assert "'sometimes'" in finding.message and "boolean" in finding.message


def test_mig_tier_takes_whole_gpus_with_enough_memory():
    # A T4 (16 GB) holds a 1g.10gb instance on a whole GPU; an A10G (24 GB) cannot hold a 3g.40gb one.
    result = plan(
        parse_demand(
            {
                "cloud": "aws",
                "tiers": [
                    {"name": "small", "mig": {"profile": "1g.10gb", "instances": 3}, "instanceTypes": ["g4dn.xlarge"]}
                ],
            }
        )
    )
    pool = result.pools[0]
    assert (pool.candidate.mode.value, pool.candidate.itype.name, pool.nodes) == ("exclusive", "g4dn.xlarge", 3)
    assert_serves(result, merged_spec(result))
    with pytest.raises(PlanningError, match=r"tiers\[0\] \(big\): no allowed instance type"):
        plan(
            parse_demand(
                {
                    "cloud": "aws",
                    "tiers": [
                        {"name": "big", "mig": {"profile": "3g.40gb", "instances": 1}, "instanceTypes": ["g5.xlarge"]}
                    ],
                }
            )
        )


def test_equal_cost_ties_go_to_the_preferred_sharing_mode():
    # 7g.80gb on a p4de: a whole GPU and a one-slice MIG layout hold one instance per GPU at the same price.
    result = plan(
        demand({"name": "big", "mig": {"profile": "7g.80gb", "instances": 8}}, instanceTypes=["p4de.24xlarge"])
    )
    pool = result.pools[0]
    assert pool.candidate.mode.value == "mig" and dict(pool.candidate.layout) == {"7g.80gb": 1}
    assert result.optimal and result.hourly == pytest.approx(_price("p4de.24xlarge"))


def _pools_of(data):
    result = plan(parse_demand({"cloud": "gcp", **data}))
    return result, sorted((p.candidate.itype.name, p.nodes, p.max_nodes, p.tiers) for p in result.pools)


def test_equal_cost_ties_go_to_fewer_nodes():
    # GCP prices A2 machines per GPU: eight a2-highgpu-1g cost what one a2-highgpu-8g does. One machine holds the
    # tier (NVLink, one node to drain); twelve GPUs stay on 1g machines, as two 8g would cost more.
    one_and_eight = ["a2-highgpu-1g", "a2-highgpu-8g"]
    for gpus, want in [(8, [("a2-highgpu-8g", 1)]), (16, [("a2-highgpu-8g", 2)]), (12, [("a2-highgpu-1g", 12)])]:
        result, pools = _pools_of({"instanceTypes": one_and_eight, "tiers": [{"name": "train", "gpus": gpus}]})
        assert [(name, nodes) for name, nodes, _, _ in pools] == want
        assert result.optimal and result.hourly == pytest.approx(gpus * _price("a2-highgpu-1g"), rel=1e-9)
    # A tier sharing a pool is taken out into one of its own when that needs fewer nodes for the same money.
    result, pools = _pools_of(
        {"tiers": [{"name": "a", "gpus": 28}, {"name": "b", "gpus": 2}, {"name": "c", "gpus": 21}]}
    )
    assert pools == [
        ("a2-highgpu-1g", 21, 21, ("c",)),
        ("a2-highgpu-2g", 1, 1, ("b",)),
        ("a2-highgpu-4g", 7, 7, ("a",)),
    ]
    assert result.optimal and result.hourly == pytest.approx(51 * _price("a2-highgpu-1g"), rel=1e-9)
    mig = [
        {"name": "s", "mig": {"profile": "1g.5gb", "instances": 56}},
        {"name": "t", "mig": {"profile": "1g.5gb", "instances": 7}},
    ]
    _, pools = _pools_of({"instanceTypes": one_and_eight, "tiers": mig})
    assert pools == [("a2-highgpu-1g", 1, 1, ("t",)), ("a2-highgpu-8g", 1, 1, ("s",))]
    # A pool that moves frees its candidate for a pool looked at before it: b leaves 2g for 4g, then a takes 2g.
    two = [
        {"name": "a", "gpus": 2, "instanceTypes": ["a2-highgpu-1g", "a2-highgpu-2g"]},
        {"name": "b", "gpus": 4, "instanceTypes": ["a2-highgpu-2g", "a2-highgpu-4g"]},
    ]
    _, pools = _pools_of({"tiers": two})
    assert pools == [("a2-highgpu-2g", 1, 1, ("a",)), ("a2-highgpu-4g", 1, 1, ("b",))]
    # Costs count as equal within a relative 1e-9 only: at prices of $0.0001 an absolute slack would let the plan
    # cost more than the cheapest and still be called optimal.
    tiny = {"instanceTypes": one_and_eight, "priceOverrides": {"a2-highgpu-1g": 0.0001, "a2-highgpu-8g": 0.0008000009}}
    result, pools = _pools_of({**tiny, "tiers": [{"name": "t", "gpus": 8}]})
    assert pools == [("a2-highgpu-1g", 8, 8, ("t",))] and result.hourly == pytest.approx(0.0008, rel=1e-12)
    # With headroom the pools' most nodes cost no more either: 8 GPUs with 10 % headroom stay on 1g machines (at
    # most 9 of them), as one 8g machine would grow to two (16 GPUs).
    _, pools = _pools_of(
        {"instanceTypes": one_and_eight, "headroomPercent": 10, "tiers": [{"name": "train", "gpus": 8}]}
    )
    assert pools == [("a2-highgpu-1g", 8, 9, ("train",))]


TRAINING_GPU_MODELS = {"A100-SXM4-40GB", "A100-SXM4-80GB", "H100-80GB", "H200-141GB"}


def test_a_gpus_tier_defaults_to_training_class_gpus():
    assert {n for n, g in GPU_MODELS.items() if g.training_class} == TRAINING_GPU_MODELS
    assert training_models(catalog_of(parse_demand({"cloud": "aws", "tiers": [{"name": "a", "gpus": 1}]}))) == (
        TRAINING_GPU_MODELS
    )
    # Without a GPU floor the cheapest GPU hour on AWS is a T4 (g4dn.xlarge); pre-training must not land there.
    result = plan(parse_demand({"cloud": "aws", "tiers": [{"name": "pretrain", "gpus": 16}]}))
    pool = result.pool_of("pretrain")
    assert pool.candidate.itype.gpu_model in TRAINING_GPU_MODELS
    assert (
        pool.candidate.itype.name
        == min(
            (t for t in INSTANCE_TYPES.values() if t.cloud == "aws" and t.gpu_model in TRAINING_GPU_MODELS),
            key=lambda t: t.hourly_per_gpu,
        ).name
    )
    # Asking for any GPU, a model or a memory floor overrides the default.
    anywhere = plan(parse_demand({"cloud": "aws", "tiers": [{"name": "pretrain", "gpus": 16, "gpuModel": "any"}]}))
    assert anywhere.pool_of("pretrain").candidate.itype.gpu_model not in TRAINING_GPU_MODELS
    assert anywhere.hourly < result.hourly
    t4 = plan(parse_demand({"cloud": "aws", "tiers": [{"name": "inf", "gpus": 4, "gpuModel": "t4"}]}))
    assert t4.pool_of("inf").candidate.itype.gpu_model == "T4"


@pytest.mark.parametrize(
    ("tier", "models"),
    [
        ({"gpuModel": "H100"}, {"H100-80GB"}),
        ({"gpuModel": ["H200", "A100-SXM4-80GB"]}, {"H200-141GB", "A100-SXM4-80GB"}),
        ({"minGpuMemoryGiB": 100}, {"H200-141GB"}),
        ({"minGpuMemoryGiB": 48, "gpuModel": "any"}, {"L40S", "A100-SXM4-80GB", "H100-80GB", "H200-141GB"}),
        ({"gpuModel": "A100", "minGpuMemoryGiB": 41}, {"A100-SXM4-80GB"}),
    ],
)
def test_gpu_model_and_memory_floor_limit_every_pool_of_the_tier(tier, models):
    d = parse_demand(
        {
            "cloud": "aws",
            "tiers": [
                {"name": "train", "gpus": 8, **tier},
                {"name": "infer", "mig": {"profile": "1g.10gb", "instances": 9}, **tier},
                {"name": "nb", "seats": {"count": 5, "perGpu": 4}, **tier},
            ],
        }
    )
    result = plan(d)
    used = {result.pool_of(t.name).candidate.itype.gpu_model for t in d.tiers}
    assert used <= models
    catalog = catalog_of(d)
    assert {t.gpu_model for tier_ in d.tiers for t in allowed_types(d, tier_, catalog)} == models


@pytest.mark.parametrize(
    ("tier", "path", "words"),
    [
        ({"gpus": 1, "gpuModel": "H10"}, "tiers[0].gpuModel", "did you mean 'H100'?"),
        ({"gpus": 1, "gpuModel": ["T4", "a100-80"]}, "tiers[0].gpuModel[1]", "did you mean 'A100-SXM4-80GB'?"),
        ({"gpus": 1, "instanceTypes": ["g5.xlarge"]}, "tiers[0].gpus", "training-class"),
        ({"gpus": 1, "minGpuMemoryGiB": 200}, "tiers[0].minGpuMemoryGiB", "at least 200 GiB"),
        ({"gpus": 1, "minGpuMemoryGiB": 0}, "tiers[0].minGpuMemoryGiB", "greater than or equal to 1"),
        (
            {"seats": {"count": 2, "perGpu": 2}, "gpuModel": "T4", "instanceTypes": ["p5.48xlarge"]},
            "tiers[0].gpuModel",
            "H100-80GB (80 GB)",
        ),
    ],
)
def test_gpu_floor_errors_name_field_value_and_what_is_allowed(tier, path, words):
    with pytest.raises(SpecError) as info:
        parse_demand({"cloud": "aws", "tiers": [{"name": "a", **tier}]})
    assert any(f.path == path and words in f.message for f in info.value.findings), info.value.findings


def test_every_gpu_floor_error_is_reported_at_once():
    with pytest.raises(SpecError) as info:
        parse_demand(
            {
                "cloud": "aws",
                "tiers": [
                    {"name": "a", "gpus": 1, "gpuModel": "H10"},
                    {"name": "b", "gpus": 1, "instanceTypes": ["g4dn.xlarge"]},
                    {"name": "c", "gpus": 1, "minGpuMemoryGiB": 500},
                ],
            }
        )
    assert {f.path for f in info.value.findings} == {"tiers[0].gpuModel", "tiers[1].gpus", "tiers[2].minGpuMemoryGiB"}


_FLOOR_TIER = st.one_of(
    tiers(gpus=12, instances=20, profiles=("1g.10gb", "2g.20gb", "3g.40gb", "7g.80gb")),
    st.builds(lambda n, r: {"seats": {"count": n, "perGpu": r}}, st.integers(1, 40), st.sampled_from([2, 4, 8])),
)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(_FLOOR_TIER, min_size=1, max_size=3),
    st.sampled_from([["p4d.24xlarge", "p4de.24xlarge"], ["g4dn.xlarge", "p4de.24xlarge"], ["g5.xlarge"]]),
)
def test_the_unit_floor_is_never_above_the_cheapest_plan(tiers, types):
    # Each tier's units at the least per-unit price of a pool type that serves it (per GPU, per seat, or per
    # compute slice of a MIG layout): no plan, checked here by an exhaustive search, may cost less.
    from gpu_platform.planner.candidates import build_candidates
    from gpu_platform.planner.columns import split_groups
    from gpu_platform.planner.solve import _pairs, unit_floor

    d = demand(*({"name": f"t{i}", "gpuModel": "any", **t} for i, t in enumerate(tiers)), instanceTypes=types)
    catalog = catalog_of(d)
    cands = build_candidates(d, catalog)
    try:
        pairs = _pairs(d, cands, catalog)
    except PlanningError:
        return  # a tier no allowed type serves: no plan to compare with
    floor = sum(unit_floor(g, cands) for g in split_groups([t.units for t in d.tiers], pairs, cands))
    assert 0 < floor <= brute_force_hourly(d) + 1e-6


def test_a_solver_bound_cut_short_is_raised_to_the_unit_floor(monkeypatch):
    # 40 one-GPU tiers allowed on p4d only: 5 nodes hold them, and 40 GPUs at p4d's price per GPU prove it, even
    # when the solver's own bound stops far below (as column generation does on 1,000 such tiers).
    from gpu_platform.planner.master import GroupPlan, solve_group

    def weak(group, time_limit):
        got = solve_group(group, time_limit)
        return GroupPlan(got.columns, got.cost, 0.0, False)

    monkeypatch.setattr("gpu_platform.planner.solve.solve_group", weak)
    d = demand(*({"name": f"t{i}", "gpus": 1} for i in range(40)), instanceTypes=["p4d.24xlarge"])
    result = plan(d)
    assert result.hourly == pytest.approx(5 * _price("p4d.24xlarge"))
    assert result.optimal and result.gap == 0.0
    assert result.cost_bound == pytest.approx(result.hourly)


def test_an_unknown_mig_profile_is_an_error_naming_field_value_and_profiles():
    found = refused(
        {
            "cloud": "aws",
            "tiers": [
                {"name": "a", "mig": {"profile": "9g.99gb", "instances": 3}},
                {"name": "b", "mig": {"profile": "3g.40gb", "instances": 1}},
                {"name": "c", "mig": {"profile": "banana", "instances": 1}},
            ],
        }
    )
    assert set(found) == {"tiers[0].mig.profile", "tiers[2].mig.profile"}
    assert "'9g.99gb'" in found["tiers[0].mig.profile"] and "'banana'" in found["tiers[2].mig.profile"]
    assert all("1g.10gb" in m and "7g.141gb" in m for m in found.values())


def test_counts_are_integers_and_numbers_are_not_booleans():
    # YAML's true read as 1 and "4" as 4 would plan a demand nobody wrote: each is an error, all at once.
    with pytest.raises(SpecError) as info:
        parse_demand(
            {
                "cloud": "aws",
                "discountPercent": True,
                "priceOverrides": {"p4d.24xlarge": False},
                "tiers": [
                    {"name": "a", "gpus": True, "priority": True},
                    {"name": "b", "seats": {"count": True, "perGpu": "8"}},
                    {"name": "c", "mig": {"profile": "1g.10gb", "instances": 2.0}},
                    {"name": "d", "gpus": 2, "minGpuMemoryGiB": "40"},
                ],
            }
        )
    assert {f.path for f in info.value.findings} == {
        "discountPercent",
        "priceOverrides.p4d.24xlarge",
        "tiers[0].gpus",
        "tiers[0].priority",
        "tiers[1].seats.count",
        "tiers[1].seats.perGpu",
        "tiers[2].mig.instances",
        "tiers[3].minGpuMemoryGiB",
    }
    # a price YAML leaves as a string (1e3 has no dot) is still read as the number it is
    d = demand({"name": "a", "gpus": 8}, priceOverrides={"p4d.24xlarge": "1e3"}, discountPercent=10)
    assert catalog_of(d).instance("p4d.24xlarge").hourly_usd == pytest.approx(1000.0)
    assert catalog_of(d).instance("p4de.24xlarge").hourly_usd == pytest.approx(0.9 * _price("p4de.24xlarge"))


@pytest.mark.parametrize("price", [1e-300, 5e-5])
def test_a_node_price_is_zero_or_one_the_solver_can_tell_from_zero(price):
    with pytest.raises(SpecError) as info:
        demand({"name": "a", "gpus": 4}, priceOverrides={"p4d.24xlarge": price})
    [finding] = info.value.findings
    assert finding.path == "priceOverrides.p4d.24xlarge"
    assert str(price) in finding.message and "0.0001" in finding.message
    free = plan(demand({"name": "a", "gpus": 4}, instanceTypes=["p4d.24xlarge"], priceOverrides={"p4d.24xlarge": 0}))
    assert free.optimal and free.hourly == 0.0


def test_type_errors_do_not_hide_the_other_errors_of_the_file():
    # A count written as true or "4" is refused by its type; the rules that need the whole file (instance types,
    # GPU models, names) still run on it, with stand-ins for those values, so every error comes at once.
    found = refused(
        {
            "cloud": "aws",
            "priceOverrides": {"nope.large": 3, "g5.xlarge": -0.0},
            "tiers": [
                {"name": "Bad_Name", "gpus": True, "instanceTypes": ["nope.large"], "gpuModel": "Z100"},
                {"name": "b", "seats": {"count": "1.0e3", "perGpu": 8}, "priority": True},
            ],
        }
    )
    assert set(found) == {
        "tiers[0].gpus",
        "tiers[1].seats.count",
        "tiers[1].priority",
        "priceOverrides.nope.large",
        "tiers[0].instanceTypes[0]",
        "tiers[0].gpuModel",
        "tiers[0].name",
    }
    assert found["tiers[0].gpus"].startswith("true: not a whole number")
    assert "YAML reads 1.0e3 as text" in found["tiers[1].seats.count"]


def test_range_errors_do_not_hide_the_other_errors_of_the_file():
    found = refused(
        {
            "cloud": "aws",
            "headroomPercent": 5000,
            "tiers": [
                {"name": "nb", "seats": {"count": 10, "perGpu": 0}, "gpuModel": "Z100"},
                {"name": "t", "gpus": 0, "instanceTypes": ["nope.large"]},
            ],
        }
    )
    assert set(found) == {
        "headroomPercent",
        "tiers[0].seats.perGpu",
        "tiers[0].gpuModel",
        "tiers[1].gpus",
        "tiers[1].instanceTypes[0]",
    }
    assert "'Z100' is not a GPU model in the catalog" in found["tiers[0].gpuModel"]


@pytest.mark.parametrize(
    ("bad", "path"),
    [
        ({"name": "a", "gpus": 1, "replica": 2}, "tiers[0].replica"),  # an unknown key
        ({"name": "a", "mig": {"profile": "9g.99gb", "instances": 3}}, "tiers[0].mig.profile"),
        ({"name": "a", "gpus": 1, "seats": {"count": 3, "perGpu": 4}}, "tiers[0]"),  # two kinds
        ({"name": "a", "gpus": 1, "isolation": "hw"}, "tiers[0].isolation"),
        ({"name": "a", "gpus": 1, "gpuModel": [80]}, "tiers[0].gpuModel"),
        ({"name": "a", "gpus": 1, 7: 2}, "tiers[0]"),  # a key YAML reads as a number
    ],
)
def test_no_structural_error_hides_the_rules_of_the_rest_of_the_file(bad, path):
    # An unknown key, an unknown profile or a tier of two kinds used to end the check there: the duplicate name and
    # the unknown instance type below went unreported until the first error was fixed.
    found = refused({"cloud": "aws", "tiers": [bad, {"name": "a", "gpus": 2, "instanceTypes": ["nope.large"]}]})
    assert set(found) == {path, "tiers[1].name", "tiers[1].instanceTypes[0]"}
    assert found["tiers[1].name"] == "duplicate tier name 'a'"


def test_a_repaired_value_raises_no_error_of_its_own():
    # A tier with no name gets a stand-in that is no DNS label and never a duplicate; a tier whose instanceTypes is
    # refused is checked against no other types (the file's g4dn would refuse its training-class GPUs).
    found = refused(
        {
            "cloud": "aws",
            "instanceTypes": ["g4dn.xlarge"],
            "tiers": [
                {"gpus": 1, "gpuModel": "any"},
                {"name": "b", "gpus": 8, "instanceTypes": "p4d.24xlarge"},
                {"name": "c", "gpus": 8},
            ],
        }
    )
    assert set(found) == {"tiers[0].name", "tiers[1].instanceTypes", "tiers[2].gpus"}
    assert found["tiers[0].name"] == "missing; this field is required"
    assert "training-class" in found["tiers[2].gpus"]


def test_a_rule_that_field_errors_keep_from_running_is_still_checked():
    # pydantic runs a tier's one-kind rule only on valid fields: a bad profile or count used to hide "two kinds".
    found = refused(
        {
            "cloud": "aws",
            "tiers": [
                {"name": "a", "mig": {"profile": "9g", "instances": 2}, "seats": {"count": 2, "perGpu": 2}},
                {"name": "b", "gpus": True, "seats": {"count": 2, "perGpu": 2}},
                {"name": "c", "mig": 5},  # one kind, of the wrong type: not also "got none"
                {"name": "a", "gpus": 1},
            ],
        }
    )
    assert set(found) == {
        "tiers[0].mig.profile",
        "tiers[0]",
        "tiers[1].gpus",
        "tiers[1]",
        "tiers[2].mig",
        "tiers[3].name",
    }
    assert found["tiers[0]"] == "set exactly one of gpus, mig, seats (got mig, seats)"
    assert found["tiers[1]"] == "set exactly one of gpus, mig, seats (got gpus, seats)"


def test_no_discount_or_floor_error_comes_from_a_refused_type_list():
    # Without its refused instanceTypes the tier would fall back to every aws type: g4dn's list price at 99.99 % off,
    # and no A100 or H100 floor problem, are not what the file says.
    found = refused(
        {
            "cloud": "aws",
            "discountPercent": 99.99,
            "tiers": [{"name": "a", "gpus": 8, "instanceTypes": "p4d.24xlarge"}, {"name": "a", "gpus": 1}],
        }
    )
    assert set(found) == {"tiers[0].instanceTypes", "tiers[1].name"}


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        (5, "5: not a GPU model name"),
        (["H100", True], "true at [1]: not a GPU model name"),
        ([1.5, "A100", None], "1.5 at [0], null at [2]: not GPU model names"),
        ([], "[]: an empty list names no GPU"),
    ],
)
def test_a_gpu_model_that_is_no_name_gets_one_message(value, shown):
    with pytest.raises(SpecError) as info:
        demand({"name": "a", "gpus": 1, "gpuModel": value})
    [finding] = info.value.findings
    assert finding.path == "tiers[0].gpuModel"
    assert finding.message.startswith(shown) and "allowed: a model (H100-80GB), a family (H100), any" in finding.message


def test_a_discount_may_not_take_a_price_below_what_the_solver_tells_from_zero():
    # g4dn.xlarge lists at 0.526 $/hour: 99.99 % off leaves 0.0000526, which a price override may not be either.
    anywhere = {"cloud": "aws", "tiers": [{"name": "a", "gpus": 1, "gpuModel": "any"}]}
    [(path, message)] = refused({**anywhere, "discountPercent": 99.99}).items()
    assert path == "discountPercent"
    assert message.startswith("99.99: takes g4dn.xlarge to 5.26e-05 $/hour, below the 0.0001")
    assert message.endswith("allowed: at most 99.9809 for the types this demand's tiers may use")
    kept = parse_demand({**anywhere, "discountPercent": 99.9809})
    assert min(t.hourly_usd for t in catalog_of(kept).instance_types.values()) >= 0.0001
    # the types the demand allows, or those priced by an override, are what counts
    demand({"name": "a", "gpus": 8}, instanceTypes=["p4d.24xlarge"], discountPercent=99.99)
    demand(
        {"name": "a", "gpus": 1, "gpuModel": "any"},
        instanceTypes=["g4dn.xlarge"],
        priceOverrides={"g4dn.xlarge": 0.5},
        discountPercent=99.99,
    )


_SECOND = [{"name": "a", "gpus": 1}, {"name": "a", "gpus": 1, "instanceTypes": ["zzz"]}]
_SECOND_FOUND = {"tiers[2].name", "tiers[2].instanceTypes[0]"}


@pytest.mark.parametrize(
    ("data", "found"),
    [
        (  # the one-kind rule behind a field error, and the rules of the file
            {"tiers": [{"name": "b", "gpus": 1, "mig": {"profile": "bogus", "instances": 1}}, *_SECOND]},
            {"tiers[0].mig.profile", "tiers[0]", *_SECOND_FOUND},
        ),
        (  # a bad item of a list, at the file's level and a tier's
            {
                "instanceTypes": ["p4d.24xlarge", 5],
                "tiers": [{"name": "b", "gpus": 1, "instanceTypes": [None]}, *_SECOND],
            },
            {"instanceTypes[1]", "tiers[0].instanceTypes[0]", *_SECOND_FOUND},
        ),
        (  # tiers that are no mapping, and mig or seats that are none
            {"tiers": ["x", {"name": "c", "mig": "3g.40gb"}, *_SECOND]},
            {"tiers[0]", "tiers[1].mig", "tiers[3].name", "tiers[3].instanceTypes[0]"},
        ),
        (
            {"cloud": None, "tiers": [{"name": "b", "gpus": 1, "bogus": 2}, *_SECOND]},
            {"tiers[0].bogus", "cloud", *_SECOND_FOUND},
        ),
        ({"cloud": "azure", "tiers": [{"name": "b", "gpus": 1}, *_SECOND]}, {"cloud", *_SECOND_FOUND}),
        ({"instanceTypes": ["nope"], "tiers": []}, {"tiers", "instanceTypes[0]"}),
        ({"instanceTypes": ["nope"], "tiers": {"a": 1}}, {"tiers", "instanceTypes[0]"}),
        (  # past 1,000 tiers, the first 1,000 are checked
            {"tiers": [{"name": f"t{i % 1000}", "gpus": 1} for i in range(1001)] + [{"name": "t0", "gpus": 1}]},
            {"tiers"},
        ),
        (
            {"tiers": [{"name": "t0", "gpus": 1}] + [{"name": f"t{i}", "gpus": 1} for i in range(1001)]},
            {"tiers", "tiers[1].name"},
        ),
    ],
)
def test_no_error_hides_another(data, found):
    assert set(refused({"cloud": "aws", **data})) == found


def test_a_refused_price_of_an_unknown_type_gets_both_errors():
    with pytest.raises(SpecError) as info:
        parse_demand({"cloud": "aws", "priceOverrides": {"p9.huge": -1}, "tiers": [{"name": "a", "gpus": 1}]})
    messages = [f.message for f in info.value.findings if f.path == "priceOverrides.p9.huge"]
    assert len(messages) == 2 and "'p9.huge' is not a known instance type" in messages


def test_a_count_refused_beside_a_floor_error_reports_both():
    with pytest.raises(SpecError) as info:
        parse_demand({"cloud": "aws", "instanceTypes": ["g4dn.xlarge"], "tiers": [{"name": "a", "gpus": 0}]})
    messages = [f.message for f in info.value.findings]
    assert len(messages) == 2 and any("training-class" in m for m in messages)


def test_the_names_of_a_gpu_model_list_are_checked_beside_its_items_that_are_none():
    found = refused({"cloud": "aws", "tiers": [{"name": "a", "gpus": 1, "gpuModel": ["H100", 5, "Z999"]}]})
    assert set(found) == {"tiers[0].gpuModel", "tiers[0].gpuModel[2]"}
    assert found["tiers[0].gpuModel[2]"].startswith("'Z999' is not a GPU model in the catalog")


def test_a_value_of_the_wrong_shape_is_told_what_shape_is_allowed():
    found = refused({"cloud": "aws", "tiers": [{"name": "a", "mig": "3g.40gb"}, {"name": ["b"], "gpus": 1}]})
    assert found["tiers[0].mig"] == "'3g.40gb': not a mapping; allowed: a mapping with keys profile, instances"
    assert found["tiers[1].name"].startswith("a list: ")
    too_many = refused({"cloud": "aws", "tiers": [{"name": f"t{i}", "gpus": 1} for i in range(1001)]})
    assert too_many == {"tiers": "1001 items; allowed: at most 1000 items"}
    assert refused({"cloud": "aws", "tiers": []}) == {"tiers": "0 items; allowed: at least 1 item"}


@pytest.mark.parametrize(
    ("data", "found"),
    [
        # an error inside the first 1,000 of too many tiers
        (
            {
                "tiers": [
                    {"name": "a", "gpus": 0},
                    {"name": "a", "gpus": 1},
                    *({"name": f"t{i}", "gpus": 1} for i in range(999)),
                ]
            },
            {"tiers", "tiers[0].gpus", "tiers[1].name"},
        ),
        # two bad items of one list, and the valid names beside them
        (
            {"instanceTypes": [1, "p9.huge", 2], "tiers": [{"name": "a", "gpus": 1}, {"name": "a", "gpus": 1}]},
            {"instanceTypes[0]", "instanceTypes[1]", "instanceTypes[2]", "tiers[1].name"},
        ),
        # a refused price of an unknown type: both said
        ({"priceOverrides": {"p9.huge": -1}, "tiers": [{"name": "a", "gpus": 1}]}, {"priceOverrides.p9.huge"}),
        # a tier of two kinds keeps its other errors
        (
            {"tiers": [{"name": "Bad_Name", "gpus": 1, "seats": {"count": 2, "perGpu": 2}, "gpuModel": "X999"}]},
            {"tiers[0]", "tiers[0].name", "tiers[0].gpuModel"},
        ),
        # a count or priority repaired changes nothing the floor or the discount reads
        ({"discountPercent": 99.99999, "tiers": [{"name": "a", "gpus": 0}]}, {"tiers[0].gpus", "discountPercent"}),
        (
            {"tiers": [{"name": "a", "gpus": 1, "instanceTypes": ["g5.xlarge"], "priority": "5"}]},
            {"tiers[0].priority", "tiers[0].gpus"},
        ),
        # an unknown key named like a field elsewhere (count, name) is left out, not given a stand-in
        (
            {"instanceTypes": ["nope"], "tiers": [{"name": "a", "mig": {"profile": "3g.40gb", "count": 8}}]},
            {"tiers[0].mig.instances", "tiers[0].mig.count", "instanceTypes[0]"},
        ),
        (
            {"instanceTypes": ["nope"], "tiers": [{"name": "a", "seats": {"count": 4, "perGpu": 2, "name": "x"}}]},
            {"tiers[0].seats.name", "instanceTypes[0]"},
        ),
        # a kind given as null is no kind
        ({"tiers": [{"name": "a", "gpus": 1}, {"name": "a", "gpus": None}]}, {"tiers[1]", "tiers[1].name"}),
        # a count's stand-in keeps the tier's floor error, at the same path
        ({"instanceTypes": ["g4dn.xlarge"], "tiers": [{"name": "a", "gpus": 0}]}, {"tiers[0].gpus"}),
        # a price override's key with dots is one key
        (
            {"priceOverrides": {"foo": -1, "foo.bar": 5}, "tiers": [{"name": "a", "gpus": 1}]},
            {"priceOverrides.foo", "priceOverrides.foo.bar"},
        ),
        # a field given by its Python name is the same field
        (
            {"instance_types": ["p5.48xlarge", 1], "discountPercent": 99.99, "tiers": [_seats("a", 2, 2)]},
            {"instance_types[1]"},
        ),
        # a stand-in name is never a duplicate of the file's names, even of an invalid one
        ({"tiers": [{"gpus": 1}, {"name": "-0-", "gpus": 1}]}, {"tiers[0].name", "tiers[1].name"}),
        ({"tiers": [{"name": ["x"], "gpus": 1}, {"name": "-0-", "gpus": 1}]}, {"tiers[0].name", "tiers[1].name"}),
        # the discount is judged on the types the file allows, not on those a refused list leaves
        ({"discountPercent": 99.99, "instanceTypes": "g5.xlarge", "tiers": [_seats("a", 2, 2)]}, {"instanceTypes"}),
        (
            {"discountPercent": 99.99, "priceOverrides": {"g4dn.xlarge": "abc"}, "tiers": [_seats("a", 2, 2)]},
            {"priceOverrides.g4dn.xlarge"},
        ),
        # a tier with types of its own keeps its floor error when the file's list is refused
        (
            {"instanceTypes": "p4d.24xlarge", "tiers": [{"name": "a", "gpus": 1, "instanceTypes": ["g4dn.xlarge"]}]},
            {"instanceTypes", "tiers[0].gpus"},
        ),
    ],
)
def test_a_repair_adds_no_error_and_hides_none(data, found):
    found_now = refused({"cloud": "aws", **data})
    assert set(found_now) == found
    assert not any("duplicate tier name '-" in m for m in found_now.values())  # no stand-in name duplicated


def test_the_discount_counts_the_types_a_tier_may_use_and_prints_a_price_below_the_floor():
    seats = {"cloud": "aws", "tiers": [_seats("a", 2, 2)]}
    [message] = refused({**seats, "discountPercent": 99.9809886}).values()
    assert "takes g4dn.xlarge to 9.999996e-05 $/hour, below the 0.0001" in message
    # g4dn.xlarge is the file's type, but every tier names its own; an H100 tier cannot use it
    parse_demand(
        {
            "cloud": "aws",
            "discountPercent": 99.99,
            "instanceTypes": ["g4dn.xlarge"],
            "tiers": [{"name": "a", "gpus": 1, "instanceTypes": ["p5.48xlarge"]}],
        }
    )
    parse_demand({"cloud": "aws", "discountPercent": 99.99, "tiers": [{"name": "a", "gpus": 1, "gpuModel": "H100"}]})


_JUNK = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-3, 10**30),
    st.floats(allow_nan=True),
    st.text(max_size=8),
    st.sampled_from(["9g.99gb", "p4d.24xlarge", "-0-", "H100", "aws"]),
    st.lists(st.integers() | st.text(max_size=3), max_size=2),
    st.dictionaries(st.text(max_size=3) | st.integers(0, 3), st.integers(), max_size=2),
)
_FIELDS = ["cloud", "instanceTypes", "priceOverrides", "discountPercent", "tiers", "bogus"]
_TIER_FIELDS = ["name", "gpus", "mig", "seats", "isolation", "instanceTypes", "gpuModel", "minGpuMemoryGiB", "bogus", 7]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    top=st.dictionaries(st.sampled_from(_FIELDS), _JUNK, max_size=2),
    tier=st.dictionaries(st.sampled_from(_TIER_FIELDS), _JUNK, max_size=3),
    at=st.integers(0, 2),
)
def test_any_damage_to_a_demand_is_reported_never_raised(top, tier, at):
    data = {
        "cloud": "aws",
        "discountPercent": 10,
        "tiers": [
            {"name": "a", "gpus": 8, "instanceTypes": ["p4d.24xlarge"]},
            {"name": "b", "mig": {"profile": "1g.10gb", "instances": 9}},
            _seats("c", 4, 2),
        ],
    }
    data.update(top)
    if isinstance(data["tiers"], list) and at < len(data["tiers"]):
        data["tiers"][at] = {**data["tiers"][at], **tier} if isinstance(data["tiers"][at], dict) else tier
    try:
        parse_demand(data)
    except SpecError as e:
        paths = [f.path for f in e.findings]
        assert paths and all(isinstance(p, str) for p in paths)


def test_a_price_of_minus_zero_is_zero():
    d = demand({"name": "a", "gpus": 8}, instanceTypes=["p4d.24xlarge"], priceOverrides={"p4d.24xlarge": -0.0})
    assert str(d.price_overrides["p4d.24xlarge"]) == "0.0"


_ANY_TIER = st.tuples(
    st.one_of(
        tiers(gpus=8, instances=20, profiles=("1g.10gb", "2g.20gb", "3g.40gb", "1g.5gb", "7g.80gb")),
        st.builds(
            lambda n, r, exact, iso: {
                "seats": {"count": n, "perGpu": r, **({"exactDensity": True} if exact else {})},
                **({"isolation": iso} if iso else {}),
            },
            st.integers(1, 40),
            st.sampled_from([2, 3, 4, 8, 48]),
            st.booleans(),
            st.sampled_from([None, "process", "none"]),
        ),
    ),
    st.sampled_from([None, "exclusive"]),
    st.sampled_from([None, ["p4d.24xlarge"], ["g5.xlarge", "g5.2xlarge", "p4de.24xlarge"], ["g6e.2xlarge"]]),
)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_ANY_TIER, min_size=1, max_size=6))
@example(  # the same perGpu, at most and exactly: pools of 2 replicas serve the first only
    [
        ({"seats": {"count": 8, "perGpu": 4}}, None, None),
        ({"seats": {"count": 8, "perGpu": 4, "exactDensity": True}}, None, None),
        ({"seats": {"count": 8, "perGpu": 2}}, None, None),
    ]
)
def test_what_each_candidate_serves_is_what_asking_it_tier_by_tier_gives(drawn):
    # `served` asks one tier of each kind per GPU model and fills in the rest; asked one by one, every tier
    # and candidate (the allowed types of each tier applied) must give the same answer.
    from gpu_platform.planner.candidates import Candidate, _shapes_for, served, unit_capacity

    rows = []
    for i, (t, iso, types) in enumerate(drawn):
        row = {"name": f"t{i}", "gpuModel": "any", **t, **({"instanceTypes": types} if types else {})}
        if iso and "mig" in t:
            row["isolation"] = iso
        rows.append(row)
    try:
        d = demand(*rows, instanceTypes=["p4d.24xlarge", "p4de.24xlarge", "g5.xlarge", "g5.2xlarge", "g6e.2xlarge"])
    except SpecError:
        return  # a tier its types cannot serve (a MIG profile of another GPU): the demand file is refused
    catalog = catalog_of(d)
    shapes: list[Candidate] = [
        c
        for name in ("p4d.24xlarge", "p4de.24xlarge", "g5.xlarge", "g5.2xlarge", "g6e.2xlarge")
        for c in _shapes_for(d, catalog.instance(name), catalog)
    ]
    got = served(d, shapes, catalog)
    for cand, row in zip(shapes, got, strict=True):
        for tier, answer in zip(d.tiers, row, strict=True):
            allowed = cand.itype.name in {x.name for x in allowed_types(d, tier, catalog)}
            assert answer == (unit_capacity(tier, cand, catalog) if allowed else None), (tier, cand)


def test_groups_reached_after_the_time_limit_get_the_greedy_plan_and_the_unit_floor(monkeypatch):
    # Six tiers on six instance types: six groups. The first group's solver call runs past the limit; the other
    # five get no solver call (1,000 groups had each taken one, 6 s past a 0.1 s limit) and the greedy plan,
    # still a valid plan, with their unit floors as bound.
    import time

    from gpu_platform.planner import solve as solve_module

    calls = []
    real = solve_module.solve_group

    def slow(group, time_limit):
        calls.append(len(group.units))
        got = real(group, time_limit)
        time.sleep(0.3)
        return got

    monkeypatch.setattr(solve_module, "solve_group", slow)
    types = ["g4dn.xlarge", "g5.xlarge", "g6e.2xlarge", "p4d.24xlarge", "p4de.24xlarge", "p5.48xlarge"]
    rows = [
        {"name": f"t{i}", "gpuModel": "any", "seats": {"count": 7 + i, "perGpu": 3}, "instanceTypes": [name]}
        for i, name in enumerate(types)
    ]
    d = demand(*rows)
    result = plan(d, time_limit=0.1)
    assert calls == [1]
    assert_serves(result, merged_spec(result))
    assert result.cost_bound <= result.hourly and result.gap == pytest.approx(1 - result.cost_bound / result.hourly)
    full = plan(d, time_limit=10)  # each group solved: the greedy plans were these one-tier groups' optimum
    assert full.optimal and full.hourly == pytest.approx(result.hourly)


def test_a_demand_tier_name_follows_the_spec_rule_for_tier_names():
    # the plan's tiers become the spec's: a name the spec refuses (over 59 characters) is refused here first
    with pytest.raises(SpecError) as info:
        parse_demand({"cloud": "aws", "tiers": [{"name": "t" * 60, "gpus": 8}]})
    [finding] = info.value.findings
    assert finding.path == "tiers[0].name" and "at most 59 characters" in finding.message
    assert parse_demand({"cloud": "aws", "tiers": [{"name": "t" * 59, "gpus": 8}]}).tiers[0].name == "t" * 59
