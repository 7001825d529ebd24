"""Queues checks: capacity arithmetic on every sharing mode, quota errors and over-commitment warnings."""

from __future__ import annotations

import pytest

from gpu_platform.errors import Severity, SpecError
from gpu_platform.load import parse_spec
from gpu_platform.queues.checks import check_queues, tier_capacity
from gpu_platform.validation import DOMAIN_CHECKS, check_spec
from helpers.specs import pool, team, tier, tier_path


def _cap(spec, tier):
    return tier_capacity(spec, spec.tiers_by_name[tier])


# dev stack: p4de/p4d = 8 x A100 per node
@pytest.mark.parametrize(
    "tier,expected",
    [
        ("train", (0 * 8 * 1, 16 * 8 * 1)),  # exclusive: nodes x GPUs x 1
        ("inference", (1 * 8 * 1, 8 * 8 * 1)),  # MIG 3g.40gb: 1 per GPU, minSize 1
        ("finetune", (1 * 8 * 1, 8 * 8 * 1)),  # MIG 2g.20gb: 1 per GPU
        ("dev", (0, 4 * 8 * 4)),  # time-slicing: replicas 4
        ("ci", (0, 2 * 8 * 8)),  # MPS: replicas 8
    ],
)
def test_capacity_per_sharing_mode(dev_spec, tier, expected):
    assert _cap(dev_spec, tier) == expected


def test_capacity_mig_profile_count_and_time_sliced_slices(dev_data):
    tier(dev_data, "finetune")["resource"] = "nvidia.com/mig-1g.10gb"  # 2 per GPU in the dev layout
    assert _cap(parse_spec(dev_data), "finetune") == (1 * 8 * 2, 8 * 8 * 2)
    pool(dev_data, "gpu-infer")["sharing"]["replicas"] = 3  # time-sliced MIG slices
    assert _cap(parse_spec(dev_data), "finetune") == (1 * 8 * 2 * 3, 8 * 8 * 2 * 3)
    assert _cap(parse_spec(dev_data), "inference") == (8 * 3, 64 * 3)


def test_dev_stack_has_no_queue_errors_or_warnings(dev_spec):
    findings = list(check_queues(dev_spec))
    assert [f for f in findings if f.severity is not Severity.INFO] == []
    assert {f.path for f in findings} == {"tiers[4]", "teams[0].borrowingLimit.train"}


def test_single_team_quota_above_pool_capacity_is_an_error(dev_data):
    team(dev_data, "research")["quotas"]["train"] = 129  # gpu-train: 16 nodes x 8 GPUs = 128
    with pytest.raises(SpecError) as exc:
        from gpu_platform.validation import ensure_valid

        ensure_valid(parse_spec_unchecked(dev_data))
    [err] = [f for f in exc.value.findings if f.path == "teams[0].quotas.train"]
    assert "129 nvidia.com/gpu exceeds what pool 'gpu-train' can ever provide: 128" in err.message
    assert "16 nodes x 8 GPUs x 1 per GPU" in err.message and "allowed: 0..128" in err.message


def test_quota_at_exactly_capacity_is_fine(dev_data):
    team(dev_data, "research")["quotas"]["train"] = 128
    assert [f for f in check_queues(parse_spec(dev_data)) if f.severity is not Severity.INFO] == []


def test_overcommitted_quotas_are_a_warning_with_numbers(dev_data):
    team(dev_data, "production")["quotas"]["train"] = 120  # research 16 + production 120 = 136 > 128
    spec = parse_spec(dev_data)  # warnings do not fail validation
    [w] = [
        f
        for f in check_spec(spec)
        if f.severity is Severity.WARNING and not f.path.startswith(("autoscaling", "nodePools"))
    ]
    assert w.path == tier_path(dev_data, "train")
    assert "sum to 136 nvidia.com/gpu (research 16, production 120)" in w.message
    assert "has 128 at max size (16 nodes x 8 GPUs x 1 per GPU)" in w.message
    assert "admit 8 more than can run" in w.message


def test_tiers_sharing_a_pool_resource_share_its_capacity(dev_data):
    dev_data["tiers"].append({"name": "train-low", "pool": "gpu-train", "priority": 500})
    team(dev_data, "production")["quotas"]["train-low"] = 120
    [w] = [f for f in check_queues(parse_spec(dev_data)) if f.severity is Severity.WARNING]
    assert "tier train/train-low sum to 136" in w.message


def test_mig_overcommit_counts_slices(dev_data):
    team(dev_data, "production")["quotas"]["inference"] = 60
    team(dev_data, "research")["quotas"]["inference"] = 5  # 65 > 8 nodes x 8 GPUs x 1 slice
    [w] = [f for f in check_queues(parse_spec(dev_data)) if f.severity is Severity.WARNING]
    assert (
        w.path == tier_path(dev_data, "inference")
        and "65 nvidia.com/mig-3g.40gb" in w.message
        and "has 64" in w.message
    )


def test_tier_without_quota_is_a_note_only_with_kueue(dev_data):
    [note] = [f for f in check_queues(parse_spec(dev_data)) if f.path == tier_path(dev_data, "ci")]
    assert note.severity is Severity.INFO and "tier ci" in note.message
    dev_data["scheduling"] = {"kueue": {"enabled": False}}
    assert not [f for f in check_queues(parse_spec(dev_data)) if f.path == tier_path(dev_data, "ci")]


def test_borrowing_limit_beyond_what_the_cohort_lends(dev_data):
    team(dev_data, "production").update(cohort="ml", quotas={"train": 10, "inference": 12}, lendingLimit={"train": 3})
    [note] = [f for f in check_queues(parse_spec(dev_data)) if "borrowingLimit" in f.path]
    assert note.path == "teams[0].borrowingLimit.train" and "(3)" in note.message
    team(dev_data, "research")["borrowingLimit"] = {"train": 3}
    assert not [f for f in check_queues(parse_spec(dev_data)) if "borrowingLimit" in f.path]


def test_nested_cohorts_lend_across_the_tree(dev_data):
    team(dev_data, "production").update(cohort="serving", quotas={"train": 10})
    dev_data["scheduling"]["cohorts"] = [
        {"name": "org"},
        {"name": "ml", "parent": "org"},
        {"name": "serving", "parent": "org"},
    ]
    assert not [f for f in check_queues(parse_spec(dev_data)) if "borrowingLimit" in f.path]


def test_volcano_reserved_queue_names(dev_data):
    team(dev_data, "production")["name"] = "default"
    assert not [f for f in check_queues(parse_spec(dev_data)) if f.path == "teams[1].name"]
    dev_data["scheduling"]["volcano"] = {"enabled": True}
    [err] = [f for f in check_queues(parse_spec_unchecked(dev_data)) if f.path == "teams[1].name"]
    assert err.severity is Severity.ERROR and "built-in Volcano queue" in err.message


def test_unknown_kueue_integration_and_strategy_are_errors(dev_data):
    dev_data["scheduling"]["kueue"].update(
        integrations=["batch/job", "pod", "kubeflow.org/pytorchjobs"], queueingStrategy="FIFO"
    )
    findings = {f.path: f for f in check_queues(parse_spec_unchecked(dev_data))}
    bad = findings["scheduling.kueue.integrations[2]"]
    assert bad.severity is Severity.ERROR and "'kubeflow.org/pytorchjobs'" in bad.message
    assert "kubeflow.org/pytorchjob," in bad.message  # the allowed names are listed
    assert "scheduling.kueue.integrations[1]" not in findings  # pod is a Kueue integration
    strategy = findings["scheduling.kueue.queueingStrategy"]
    assert "'FIFO'" in strategy.message and "BestEffortFIFO, StrictFIFO" in strategy.message
    dev_data["scheduling"]["kueue"]["enabled"] = False
    assert not [f for f in check_queues(parse_spec_unchecked(dev_data)) if f.path.startswith("scheduling.kueue")]


def test_default_integrations_are_known_to_kueue(dev_spec):
    assert not [f for f in check_queues(dev_spec) if f.path.startswith("scheduling.kueue")]


def test_check_is_registered():
    assert check_queues in DOMAIN_CHECKS


def parse_spec_unchecked(data):
    """The structurally valid model, without the cross-field rules (to feed invalid specs to checks)."""
    from gpu_platform.spec import PlatformSpec

    return PlatformSpec.model_validate(data)


@pytest.mark.parametrize("length,ok", [(59, True), (60, False), (63, False)])
def test_tier_name_leaves_room_for_its_priority_class_label_value(dev_data, length, ok):
    from gpu_platform.spec import Tier

    name = "d" * length
    tier(dev_data, "dev")["name"] = name
    for t in dev_data["teams"]:
        if "dev" in t.get("quotas", {}):
            t["quotas"][name] = t["quotas"].pop("dev")
    if ok:
        parse_spec(dev_data)
        Tier(name=name, pool="gpu-dev")
        return
    with pytest.raises(SpecError) as info:
        parse_spec(dev_data)
    [err] = info.value.findings
    assert err.path == tier_path(dev_data, name) + ".name"
    assert "kueue.x-k8s.io/priority-class" in err.message and "at most 59 characters" in err.message
    with pytest.raises(ValueError, match="at most 59 characters"):  # also when the model is built in Python
        Tier(name=name, pool="gpu-dev")
