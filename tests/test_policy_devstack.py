"""The dev stack's synthesized resources pass the pack with zero violations (offline runner and the real pack)."""

from __future__ import annotations

import copy
from pathlib import Path

from gpu_platform.load import parse_spec
from gpu_platform.policy import config_from_spec, pack_config
from gpu_platform.policy.analyzer import PackProcess
from gpu_platform.policy.resources import from_artifacts
from gpu_platform.policy.runner import run_policies
from gpu_platform.synth import render_all

ROOT = Path(__file__).resolve().parents[1]


def test_dev_stack_passes_offline(dev_spec):
    resources = from_artifacts(render_all(dev_spec))
    kinds = {r.type for r in resources}
    assert {
        "aws:eks/nodeGroup:NodeGroup",
        "aws:ec2/launchTemplate:LaunchTemplate",
        "kubernetes:helm.sh/v3:Release",
        "kubernetes:core/v1:ConfigMap",
    } <= kinds
    assert run_policies(resources, config_from_spec(dev_spec)) == []


def test_dev_stack_breakage_is_caught(dev_spec):
    resources = from_artifacts(render_all(dev_spec))
    group = next(r for r in resources if r.name == "gpu-infer")
    group.props = copy.deepcopy(group.props)
    group.props["labels"]["nvidia.com/mig.config"] = "no-such-layout"
    [v] = run_policies(resources, config_from_spec(dev_spec))
    assert v.policy == "gpu-sharing-config-exists" and "no-such-layout is not a mig-configs entry" in v.message


def test_dev_stack_passes_the_real_pack(dev_spec):
    resources = from_artifacts(render_all(dev_spec))
    with PackProcess(ROOT / "policies", timeout=60) as pack:
        pack.configure(pack_config(config_from_spec(dev_spec)))
        diagnostics = [d for r in resources for d in pack.analyze(r).diagnostics]
        stack = pack.analyze_stack(resources)
    assert diagnostics == [] and list(stack.diagnostics) == []
    assert (
        "no budgetHourly set; GPU node pools at max size cost $"
        in {n.policy_name: n.reason for n in stack.not_applicable}["gpu-budget"]
    )


def test_dev_stack_over_budget(dev_data):
    dev_data["policy"] = {"budgetHourly": 100}
    spec = parse_spec(dev_data)
    [v] = run_policies(from_artifacts(render_all(spec)), config_from_spec(spec))
    assert v.policy == "gpu-budget" and v.enforcement == "mandatory" and "over the budget of $100.00/hour" in v.message
