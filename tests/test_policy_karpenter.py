"""The policy pack on rendered Karpenter pools: classified NodePools pass, unclassified ones are flagged."""

from __future__ import annotations

import copy

from gpu_platform.load import parse_spec
from gpu_platform.policy import config_from_spec
from gpu_platform.policy.resources import from_artifacts
from gpu_platform.policy.runner import run_policies
from gpu_platform.synth import render_all

NODE_POOL = "kubernetes:karpenter.sh/v1:NodePool"


def _karpenter_stack(dev_data):
    """The dev stack with every pool Karpenter can serve on Karpenter (MIG pools stay managed node groups)."""
    for pool in dev_data["nodePools"]:
        if pool["sharing"]["mode"] != "mig":
            pool["aws"] = {"provisioner": "karpenter"}
    spec = parse_spec(dev_data)
    return spec, from_artifacts(render_all(spec))


def test_rendered_karpenter_pools_pass_every_policy(dev_data):
    spec, resources = _karpenter_stack(dev_data)
    assert len([r for r in resources if r.type == NODE_POOL]) == 3
    assert len([r for r in resources if r.type == "kubernetes:karpenter.k8s.aws/v1:EC2NodeClass"]) == 3
    assert [r.name for r in resources if r.type == "aws:eks/nodeGroup:NodeGroup"] == ["gpu-infer"]
    assert run_policies(resources, config_from_spec(spec)) == []


def test_rendered_karpenter_pool_without_its_labels_and_taints_is_flagged(dev_data):
    spec, resources = _karpenter_stack(dev_data)
    pool = next(r for r in resources if r.type == NODE_POOL and r.name == "gpu-train")
    pool.props = copy.deepcopy(pool.props)
    template = pool.props["spec"]["template"]
    template["metadata"]["labels"] = {"team": "research"}
    template["spec"]["taints"] = []
    [v] = run_policies(resources, config_from_spec(spec))
    assert v.policy == "gpu-node-pool-classified"
    assert v.message.startswith(
        "GPU node pool 'gpu-train' (requirements allow GPU instances "
        "(node.kubernetes.io/instance-type In ['p4de.24xlarge'])) is unclassified: missing "
        "label gpu.example.com/gpu-pool=<pool name>"
    )


def test_rendered_karpenter_pool_with_an_unencrypted_node_class_is_flagged(dev_data):
    spec, resources = _karpenter_stack(dev_data)
    node_class = next(r for r in resources if r.type.endswith(":EC2NodeClass") and r.name == "gpu-dev-ec2nodeclass")
    node_class.props = copy.deepcopy(node_class.props)
    node_class.props["spec"]["blockDeviceMappings"][0]["ebs"]["encrypted"] = False
    node_class.props["spec"]["metadataOptions"]["httpTokens"] = "optional"
    [v] = run_policies(resources, config_from_spec(spec))
    assert v.policy == "gpu-node-pool-hardened"
    assert "EC2NodeClass 'gpu-dev' does not require IMDSv2" in v.message
    assert "EC2NodeClass 'gpu-dev' has an unencrypted volume '/dev/xvda'" in v.message


def test_budget_counts_rendered_karpenter_pools(dev_data):
    dev_data["policy"] = {"budgetHourly": 100}
    spec, resources = _karpenter_stack(dev_data)
    [v] = run_policies(resources, config_from_spec(spec))
    assert v.policy == "gpu-budget" and "over the budget of $100.00/hour" in v.message
    assert "gpu-train $439.15 (16 x p4de.24xlarge)" in v.message


def test_the_real_pack_accepts_rendered_karpenter_pools_and_flags_a_stripped_one(dev_data):
    from conftest import ROOT
    from gpu_platform.policy import pack_config
    from gpu_platform.policy.analyzer import PackProcess

    spec, resources = _karpenter_stack(dev_data)
    pools = [r for r in resources if r.type == NODE_POOL]
    stripped = copy.deepcopy(pools[0])
    stripped.props["spec"]["template"]["metadata"]["labels"] = {}
    with PackProcess(ROOT / "policies", timeout=60) as pack:
        pack.configure(pack_config(config_from_spec(spec)))
        assert [d for r in pools for d in pack.analyze(r).diagnostics] == []
        [diag] = pack.analyze(stripped).diagnostics
    assert diag.policyName == "gpu-node-pool-classified"
    assert "GPU node pool 'gpu-train'" in diag.message and "is unclassified" in diag.message
