"""The real pack (`policies/`) driven as the engine drives it: a process, its port, Configure/Analyze/AnalyzeStack."""

from __future__ import annotations

from pathlib import Path

import pytest
from pulumi.runtime.proto import analyzer_pb2

from gpu_platform.policy import POLICIES, PolicyConfig, pack_config
from gpu_platform.policy.analyzer import PackProcess
from gpu_platform.policy.resources import StackResource

ROOT = Path(__file__).resolve().parents[1]

MANDATORY, ADVISORY = analyzer_pb2.MANDATORY, analyzer_pb2.ADVISORY
CFG = PolicyConfig.model_validate(
    {"labelDomain": "gpu.example.com", "tiers": {"train": {"resources": ["nvidia.com/gpu"]}}}
)
UNKNOWN_STRING = "04da6b54-80e4-46f7-96ec-b56ff0331ba9"  # the engine's unknown-string sentinel


@pytest.fixture(scope="module")
def pack():
    with PackProcess(ROOT / "policies", timeout=60) as p:
        yield p
    assert p.proc.poll() is not None, "the pack process must be stopped"


def _pod(labels, name="p"):
    return StackResource(
        "kubernetes:core/v1:Pod",
        f"urn:pod:{name}",
        name,
        {
            "metadata": {"name": name, "namespace": "research", "labels": labels},
            "spec": {
                "priorityClassName": "gpu-train",
                "containers": [
                    {"name": "c", "resources": {"limits": {"nvidia.com/gpu": 1}, "requests": {"nvidia.com/gpu": "1"}}}
                ],
            },
        },
    )


UNCLASSIFIED_GROUP = StackResource(
    "aws:eks/nodeGroup:NodeGroup",
    "urn:ng",
    "ng",
    {"nodeGroupName": "rogue", "instanceTypes": ["p5.48xlarge"], "scalingConfig": {"maxSize": 4}},
)


def test_analyzer_info_lists_every_policy_mandatory_by_default(pack):
    info = pack.info()
    assert info.name == "gpu-platform"
    levels = {p.name: p.enforcementLevel for p in info.policies}
    assert levels == {p.name: MANDATORY for p in POLICIES} | {
        "gpu-budget": ADVISORY,
        "gpu-launch-template-imdsv2": ADVISORY,
        "gpu-node-pool-detectable": ADVISORY,
    }
    schema = next(p for p in info.policies if p.name == "gpu-workload-classified").configSchema
    assert "labelDomain" in schema.properties and "tiers" in schema.properties
    assert pack.plugin_info().version


def test_analyze_reports_unclassified_pod_and_passes_classified(pack):
    pack.configure(pack_config(CFG))
    bad = pack.analyze(_pod({}))
    [diag] = bad.diagnostics
    assert diag.policyName == "gpu-workload-classified" and diag.enforcementLevel == MANDATORY
    assert diag.message.endswith(
        "GPU workload Pod 'p' is unclassified: label gpu.example.com/gpu-tier is missing (one of: train)."
    )
    good = pack.analyze(_pod({"gpu.example.com/gpu-tier": "train"}))
    assert list(good.diagnostics) == []
    assert {n.policy_name for n in good.not_applicable} == {"gpu-node-pool-classified"}


def test_analyze_node_group_and_config_enforcement_override(pack):
    pack.configure(pack_config(CFG))
    [diag] = pack.analyze(UNCLASSIFIED_GROUP).diagnostics
    assert diag.policyName == "gpu-node-pool-classified" and diag.enforcementLevel == MANDATORY
    assert "GPU node pool 'rogue' (instance type p5.48xlarge) is unclassified" in diag.message
    advisory = PolicyConfig.model_validate(
        {**CFG.model_dump(), "enforcement": {"gpu-node-pool-classified": "advisory"}}
    )
    pack.configure(pack_config(advisory))
    [diag] = pack.analyze(UNCLASSIFIED_GROUP).diagnostics
    assert diag.enforcementLevel == ADVISORY
    disabled = PolicyConfig.model_validate(
        {**CFG.model_dump(), "enforcement": {"gpu-node-pool-classified": "disabled"}}
    )
    pack.configure(pack_config(disabled))
    assert list(pack.analyze(UNCLASSIFIED_GROUP).diagnostics) == []


def test_label_domain_from_config(pack):
    pack.configure(pack_config(CFG.model_copy(update={"label_domain": "acme.io"})))
    [diag] = pack.analyze(_pod({"gpu.example.com/gpu-tier": "train"})).diagnostics
    assert "label acme.io/gpu-tier is missing" in diag.message


def test_unknown_values_during_preview_are_advisory(pack):
    pack.configure(pack_config(CFG))
    r = _pod({"gpu.example.com/gpu-tier": UNKNOWN_STRING})
    [diag] = pack.analyze(r).diagnostics
    assert diag.enforcementLevel == ADVISORY and "can't be known during preview" in diag.message


def test_analyze_stack_hardening_and_budget(pack):
    pack.configure(pack_config(CFG.model_copy(update={"budget_hourly": 100.0})))
    resp = pack.analyze_stack([UNCLASSIFIED_GROUP])
    by_policy = {d.policyName: d for d in resp.diagnostics}
    assert set(by_policy) == {"gpu-node-pool-hardened", "gpu-budget"}
    assert by_policy["gpu-node-pool-hardened"].urn == "urn:ng"
    assert "no launch template" in by_policy["gpu-node-pool-hardened"].message
    assert by_policy["gpu-budget"].enforcementLevel == MANDATORY
    assert "cost $220.16/hour, over the budget of $100.00/hour" in by_policy["gpu-budget"].message
    reasons = {n.policy_name: n.reason for n in resp.not_applicable}
    assert reasons == {
        "gpu-sharing-config-exists": "no GPU Operator Helm release in this stack",
        "gpu-node-pool-resolved": "no node pool takes its GPUs from a launch template",
        "gpu-node-pool-detectable": "every node pool's GPU capacity is known",
    }


def test_analyze_stack_launch_template_by_dependency(pack):
    pack.configure(pack_config(CFG))
    lt = StackResource(
        "aws:ec2/launchTemplate:LaunchTemplate",
        "urn:lt",
        "lt",
        {"metadataOptions": {"httpTokens": "required"}, "blockDeviceMappings": [{"ebs": {"encrypted": "true"}}]},
    )
    group = StackResource(
        UNCLASSIFIED_GROUP.type,
        "urn:ng",
        "ng",
        {**UNCLASSIFIED_GROUP.props, "launchTemplate": {"id": UNKNOWN_STRING}},
        dependencies=["urn:lt"],
        property_dependencies={"launchTemplate": ["urn:lt"]},
    )
    resp = pack.analyze_stack([lt, group])
    assert [d.policyName for d in resp.diagnostics] == []  # budget advisory-off: no budget, not applicable


def test_policies_carry_severity_remediation_steps_and_a_url(pack):
    info = {p.name: p for p in pack.info().policies}
    for p in POLICIES:
        assert info[p.name].remediation_steps == p.remediation_steps and p.remediation_steps
        assert info[p.name].url == p.url and info[p.name].severity != 0
    assert info["gpu-node-pool-hardened"].severity > info["gpu-budget"].severity  # critical above medium


def test_remediate_turns_imdsv2_on_for_gpu_launch_templates(pack):
    cfg = PolicyConfig.model_validate({**CFG.model_dump(), "enforcement": {"gpu-launch-template-imdsv2": "remediate"}})
    pack.configure(pack_config(cfg))
    lt = StackResource(
        "aws:ec2/launchTemplate:LaunchTemplate",
        "urn:lt",
        "lt",
        {"instanceType": "p5.48xlarge", "metadataOptions": {"httpTokens": "optional"}},
    )
    [fix] = pack.remediate(lt).remediations
    assert fix.policyName == "gpu-launch-template-imdsv2"
    options = dict(fix.properties)["metadataOptions"]
    assert options["httpTokens"] == "required" and options["httpEndpoint"] == "enabled"
    cpu = StackResource(
        lt.type, "urn:lt2", "lt2", {"instanceType": "m5.large", "metadataOptions": {"httpTokens": "optional"}}
    )
    assert [r for r in pack.remediate(cpu).remediations if r.properties] == []
    pack.configure(pack_config(CFG))  # advisory: reported, not rewritten
    [diag] = [d for d in pack.analyze(lt).diagnostics if d.policyName == "gpu-launch-template-imdsv2"]
    assert "allows IMDSv1" in diag.message and diag.enforcementLevel == ADVISORY
