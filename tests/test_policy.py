"""Direct calls of every policy: compliant passes, violating reports the exact message, missing props are safe,
config overrides work, other types are not applicable."""

from __future__ import annotations

import copy
import re
import subprocess
import sys

import pytest
from pulumi_policy import (
    PolicyResource,
    PolicyResourceOptions,
    ResourceValidationArgs,
    StackValidationArgs,
)
from pulumi_policy.policy import PolicyCustomTimeouts, _NotApplicableError

from gpu_platform.policy import (
    POLICIES,
    PolicyConfig,
    PolicyConfigError,
    config_from_spec,
    config_schema,
    pack_config,
    parse_config,
)
from gpu_platform.policy.budget import check_budget
from gpu_platform.policy.config import config_of
from gpu_platform.policy.nodepools import check_pool_classified, check_pools_hardened
from gpu_platform.policy.sharing import check_sharing_configs_exist
from gpu_platform.policy.workloads import check_workload_classified

NG, LT = "aws:eks/nodeGroup:NodeGroup", "aws:ec2/launchTemplate:LaunchTemplate"
CONFIG = {
    "labelDomain": "gpu.example.com",
    "tiers": {
        "train": {"resources": ["nvidia.com/gpu"], "priorityClass": "gpu-train"},
        "inference": {"resources": ["nvidia.com/mig-3g.40gb"]},
    },
}


def _opts():
    return PolicyResourceOptions(False, [], None, [], PolicyCustomTimeouts(0, 0, 0), [], None)


def call(fn, rtype, props, config=CONFIG, name="r"):
    """Run a resource policy; return the messages, or 'n/a' when it declared itself not applicable."""
    found = []
    try:
        fn(
            ResourceValidationArgs(rtype, props, f"urn:{name}", name, _opts(), None, config),
            lambda m, u=None: found.append(m),
        )
    except _NotApplicableError:
        return "n/a"
    return found


def call_stack(fn, resources, config=CONFIG):
    """Run a stack policy over (type, props[, deps]) tuples; return (urn, message) pairs or 'n/a'."""
    rs = []
    for i, (rtype, props, *deps) in enumerate(resources):
        rs.append(PolicyResource(rtype, props, f"urn:{i}", f"r{i}", _opts(), None, None, [], {}))
        for d in deps[0] if deps else []:
            rs[-1].property_dependencies.setdefault("launchTemplate", []).append(rs[d])
    found = []
    try:
        fn(StackValidationArgs(rs, config), lambda m, u=None: found.append((u, m)))
    except _NotApplicableError:
        return "n/a"
    return found


def group(**over):
    g = {
        "nodeGroupName": "gpu-train",
        "instanceTypes": ["p4d.24xlarge"],
        "amiType": "AL2023_x86_64_NVIDIA",
        "labels": {"gpu.example.com/gpu-pool": "gpu-train", "nvidia.com/device-plugin.config": "gpu-train"},
        "taints": [
            {"key": "gpu.example.com/gpu-pool", "value": "gpu-train", "effect": "NO_SCHEDULE"},
            {"key": "nvidia.com/gpu", "value": "present", "effect": "NO_SCHEDULE"},
        ],
        "scalingConfig": {"minSize": 0, "maxSize": 2},
        "launchTemplate": {"id": "lt-1", "version": "1"},
    }
    g.update(over)
    return g


def template(**over):
    t = {
        "name": "gpu-train-lt",
        "metadataOptions": {"httpTokens": "required"},
        "blockDeviceMappings": [{"deviceName": "/dev/xvda", "ebs": {"encrypted": "true", "volumeSize": 500}}],
    }
    t.update(over)
    return t


# --- gpu-node-pool-classified ---------------------------------------------------------------------------------


def test_classified_node_group_passes():
    assert call(check_pool_classified, NG, group()) == []


def test_unclassified_node_group_reports_exact_message():
    msgs = call(check_pool_classified, NG, group(labels={}, taints=[]))
    assert msgs == [
        "GPU node pool 'gpu-train' (instance type p4d.24xlarge) is unclassified: missing label "
        "gpu.example.com/gpu-pool=<pool name>, label nvidia.com/device-plugin.config=<device-plugin config of the "
        "pool>, taint nvidia.com/gpu=present:NoSchedule, taint gpu.example.com/gpu-pool=<pool name>:NoSchedule. "
        "Declare the pool in the platform spec (gpu_platform renders these), or add the missing labels and taints "
        "so only classified pods land on it."
    ]


def test_pool_taint_must_match_label():
    bad = group(
        taints=[
            {"key": "gpu.example.com/gpu-pool", "value": "other", "effect": "NO_SCHEDULE"},
            {"key": "nvidia.com/gpu", "value": "present", "effect": "NO_SCHEDULE"},
        ]
    )
    [msg] = call(check_pool_classified, NG, bad)
    assert "(the taint says 'other', the label 'gpu-train')" in msg


def test_nvidia_ami_alone_makes_a_gpu_pool():
    [msg] = call(check_pool_classified, NG, {"amiType": "BOTTLEROCKET_x86_64_NVIDIA", "instanceTypes": ["m5.large"]})
    assert "(AMI type BOTTLEROCKET_x86_64_NVIDIA)" in msg


def test_missing_properties_are_safe():
    assert call(check_pool_classified, NG, {}) == "n/a"  # no instance type, no AMI: not a GPU pool
    assert call(check_pool_classified, "gcp:container/nodePool:NodePool", {"nodeConfig": None}) == "n/a"
    [msg] = call(check_pool_classified, NG, {"instanceTypes": ["g5.xlarge"], "labels": None, "taints": None})
    assert "missing label gpu.example.com/gpu-pool" in msg


def test_cpu_node_group_and_other_types_not_applicable():
    assert call(check_pool_classified, NG, group(instanceTypes=["m5.large"], amiType="AL2023_x86_64_STANDARD")) == "n/a"
    assert call(check_pool_classified, "aws:s3/bucket:Bucket", {"bucket": "x"}) == "n/a"


def test_label_domain_override():
    cfg = {**CONFIG, "labelDomain": "acme.io"}
    [msg] = call(check_pool_classified, NG, group(), config=cfg)
    assert "missing label acme.io/gpu-pool=<pool name>" in msg


def test_gke_pool_with_accelerators():
    pool = {
        "name": "a100",
        "nodeConfig": {
            "machineType": "n1-standard-8",
            "guestAccelerators": [{"type": "nvidia-tesla-t4", "count": 1}],
            "labels": {"gpu.example.com/gpu-pool": "a100", "nvidia.com/device-plugin.config": "a100"},
            "taints": [{"key": "gpu.example.com/gpu-pool", "value": "a100", "effect": "NO_SCHEDULE"}],
        },
    }
    [msg] = call(check_pool_classified, "gcp:container/nodePool:NodePool", pool)
    assert msg.startswith(
        "GPU node pool 'a100' (1 x nvidia-tesla-t4 guest accelerators) is unclassified: missing "
        "taint nvidia.com/gpu=present:NoSchedule."
    )


def test_karpenter_node_pool_allowing_gpus():
    kp = {
        "metadata": {"name": "gpu"},
        "spec": {
            "template": {
                "metadata": {},
                "spec": {
                    "requirements": [
                        {"key": "karpenter.k8s.aws/instance-family", "operator": "In", "values": ["p5", "m5"]}
                    ]
                },
            }
        },
    }
    [msg] = call(check_pool_classified, "kubernetes:karpenter.sh/v1:NodePool", kp)
    assert "GPU node pool 'gpu' (requirements allow GPU instances (karpenter.k8s.aws/instance-family In " in msg
    cpu = copy.deepcopy(kp)
    cpu["spec"]["template"]["spec"]["requirements"][0]["values"] = ["m5"]
    assert call(check_pool_classified, "kubernetes:karpenter.sh/v1:NodePool", cpu) == "n/a"


# --- gpu-node-pool-hardened -----------------------------------------------------------------------------------


def test_hardened_group_with_template_passes():
    assert call_stack(check_pools_hardened, [(LT, template()), (NG, group(), [0])]) == []


def test_unhardened_template_exact_message():
    bad = template(
        metadataOptions={"httpTokens": "optional"}, blockDeviceMappings=[{"ebs": {"encrypted": "false"}}], keyName="ops"
    )
    [(urn, msg)] = call_stack(check_pools_hardened, [(LT, bad), (NG, group(remoteAccess={"ec2SshKey": "ops"}), [0])])
    assert urn == "urn:1"
    assert msg == (
        "GPU node pool 'gpu-train' is not hardened: remote SSH access is enabled (remove remoteAccess; use SSM "
        "Session Manager); launch template 'gpu-train-lt' does not require IMDSv2 (metadataOptions.httpTokens is "
        "'optional'; set 'required'); launch template 'gpu-train-lt' root volume is not encrypted (set "
        "blockDeviceMappings[].ebs.encrypted to true); launch template 'gpu-train-lt' installs SSH key 'ops' "
        "(remove keyName)."
    )


def test_group_without_template_and_template_by_name():
    [(_, msg)] = call_stack(check_pools_hardened, [(NG, group(launchTemplate=None))])
    assert "no launch template: IMDSv2 and root volume encryption are not enforced" in msg
    by_name = group(launchTemplate={"name": "gpu-train-lt", "version": "1"})
    assert call_stack(check_pools_hardened, [(LT, template()), (NG, by_name)]) == []
    [(_, msg)] = call_stack(check_pools_hardened, [(NG, by_name)])
    assert "launch template is not in this stack" in msg


def test_hardening_missing_props_and_not_applicable():
    [(_, msg)] = call_stack(check_pools_hardened, [(LT, {}), (NG, group(), [0])])
    assert "metadataOptions.httpTokens is None" in msg and "not encrypted" in msg
    assert call_stack(check_pools_hardened, [(NG, group(instanceTypes=["m5.large"], amiType=None))]) == "n/a"


# --- gpu-sharing-config-exists --------------------------------------------------------------------------------

CM = "kubernetes:core/v1:ConfigMap"
REL = "kubernetes:helm.sh/v3:Release"


def operator(dp="dp", mig="mig"):
    return {
        "name": "gpu-operator",
        "chart": "gpu-operator",
        "namespace": "gpu-operator",
        "values": {
            "devicePlugin": {"config": {"name": dp, "create": False}},
            "migManager": {"config": {"name": mig, "create": False}},
        },
    }


def configmap(name, data):
    return {"metadata": {"name": name, "namespace": "gpu-operator"}, "data": data}


MIG_CM = configmap("mig", {"config.yaml": "version: v1\nmig-configs:\n  gpu-infer-3g40: []\n"})


def test_sharing_configs_exist_passes():
    infer = group(labels={**group()["labels"], "nvidia.com/mig.config": "gpu-infer-3g40"})
    res = [(REL, operator()), (CM, configmap("dp", {"gpu-train": "version: v1"})), (CM, MIG_CM), (NG, infer)]
    assert call_stack(check_sharing_configs_exist, res) == []


def test_sharing_label_not_in_configs_exact_message():
    infer = group(labels={**group()["labels"], "nvidia.com/mig.config": "gpu-infer-7g"})
    res = [(REL, operator()), (CM, configmap("dp", {"default": "x"})), (CM, MIG_CM), (NG, infer)]
    [(urn, msg)] = call_stack(check_sharing_configs_exist, res)
    assert urn == "urn:3"
    assert msg == (
        "GPU node pool 'gpu-train' selects sharing configs that do not exist: "
        "nvidia.com/device-plugin.config=gpu-train is not an entry of ConfigMap 'dp' (has: default); "
        "nvidia.com/mig.config=gpu-infer-7g is not a mig-configs entry of ConfigMap 'mig' "
        "(has: gpu-infer-3g40)."
    )


def test_sharing_inline_data_and_missing_configmap():
    inline = operator()
    inline["values"]["devicePlugin"]["config"] = {"name": "dp", "create": True, "data": {"gpu-train": "x"}}
    assert call_stack(check_sharing_configs_exist, [(REL, inline), (NG, group())]) == []
    [(_, msg)] = call_stack(check_sharing_configs_exist, [(REL, operator()), (NG, group())])
    assert "has no device-plugin config (ConfigMap 'dp' not found" in msg


def test_sharing_not_applicable_and_missing_props():
    assert call_stack(check_sharing_configs_exist, [(NG, group())]) == "n/a"  # no operator release
    assert call_stack(check_sharing_configs_exist, [(REL, operator())]) == "n/a"  # no GPU pools
    assert call_stack(check_sharing_configs_exist, [(REL, {"chart": "gpu-operator"}), (NG, group(labels={}))]) == []


# --- gpu-workload-classified ----------------------------------------------------------------------------------

POD = "kubernetes:core/v1:Pod"


def pod(tier="train", res="nvidia.com/gpu", req="1", lim="1", pc="gpu-train", ns="research"):
    labels = {"gpu.example.com/gpu-tier": tier} if tier else {}
    resources = {"limits": {res: lim}} if lim else {}
    if req:
        resources["requests"] = {res: req}
    spec = {"containers": [{"name": "main", "image": "x", "resources": resources}]}
    if pc:
        spec["priorityClassName"] = pc
    return {"metadata": {"name": "p", "namespace": ns, "labels": labels}, "spec": spec}


def test_classified_pod_passes():
    assert call(check_workload_classified, POD, pod()) == []


def test_unclassified_pod_exact_message():
    [msg] = call(check_workload_classified, POD, pod(tier=None, req="2", lim="1", pc=None))
    assert msg == (
        "GPU workload Pod 'p' is unclassified: label gpu.example.com/gpu-tier is missing (one of: train, "
        "inference); container 'main' requests 2 nvidia.com/gpu but limits 1 (they must be equal); "
        "priorityClassName is missing."
    )


def test_wrong_resource_unknown_tier_wrong_priority():
    [msg] = call(check_workload_classified, POD, pod(tier="inference", pc="other"))
    assert "requests nvidia.com/gpu, which tier 'inference' does not allow (allowed: nvidia.com/mig-3g.40gb)" in msg
    [msg] = call(check_workload_classified, POD, pod(tier="gold"))
    assert "tier 'gold' is unknown (known: train, inference)" in msg
    [msg] = call(check_workload_classified, POD, pod(pc="gpu-dev"))
    assert "priorityClassName is 'gpu-dev', tier 'train' uses 'gpu-train'" in msg
    [msg] = call(check_workload_classified, POD, pod(lim=None))
    assert "requests nvidia.com/gpu without a limit" in msg


@pytest.mark.parametrize(
    "rtype,wrap",
    [
        ("kubernetes:apps/v1:Deployment", lambda p: {"metadata": {"name": "d"}, "spec": {"template": p}}),
        ("kubernetes:apps/v1:StatefulSet", lambda p: {"metadata": {"name": "d"}, "spec": {"template": p}}),
        ("kubernetes:apps/v1:DaemonSet", lambda p: {"metadata": {"name": "d"}, "spec": {"template": p}}),
        ("kubernetes:apps/v1:ReplicaSet", lambda p: {"metadata": {"name": "d"}, "spec": {"template": p}}),
        ("kubernetes:batch/v1:Job", lambda p: {"metadata": {"name": "d"}, "spec": {"template": p}}),
        (
            "kubernetes:batch/v1:CronJob",
            lambda p: {"metadata": {"name": "d"}, "spec": {"jobTemplate": {"spec": {"template": p}}}},
        ),
    ],
)
def test_every_workload_kind(rtype, wrap):
    assert call(check_workload_classified, rtype, wrap(pod())) == []
    [msg] = call(check_workload_classified, rtype, wrap(pod(tier=None)))
    assert msg.startswith(
        f"GPU workload {rtype.rsplit(':', 1)[-1]} 'd' is unclassified: label gpu.example.com/gpu-tier"
    )


def test_workload_not_applicable_and_safe():
    assert call(check_workload_classified, "kubernetes:core/v1:Service", {"spec": {}}) == "n/a"
    assert call(check_workload_classified, POD, {"spec": {"containers": [{"name": "cpu"}]}}) == "n/a"
    assert call(check_workload_classified, POD, {}) == "n/a"
    assert call(check_workload_classified, "kubernetes:apps/v1:Deployment", {"spec": None}) == "n/a"
    assert call(check_workload_classified, POD, pod(tier=None, ns="kube-system")) == "n/a"  # exempt


def test_workload_config_overrides():
    no_tiers = {"labelDomain": "gpu.example.com"}  # any tier value is accepted when no tiers are configured
    assert call(check_workload_classified, POD, pod(tier="anything", pc="x"), config=no_tiers) == []
    exempt = {**CONFIG, "exemptNamespaces": ["research"]}
    assert call(check_workload_classified, POD, pod(tier=None), config=exempt) == "n/a"


# --- gpu-budget -----------------------------------------------------------------------------------------------


def test_budget_within_and_over():
    res = [(NG, group(scalingConfig={"maxSize": 2}))]  # 2 x p4d.24xlarge = 2 x 21.957642
    assert call_stack(check_budget, res, {**CONFIG, "budgetHourly": 50}) == []
    [(_, msg)] = call_stack(check_budget, res, {**CONFIG, "budgetHourly": 40})
    assert msg == (
        "GPU node pools at max size cost $43.92/hour, over the budget of $40.00/hour: gpu-train $43.92 "
        "(2 x p4d.24xlarge). Lower maxSize or raise budgetHourly."
    )


def test_budget_price_override_and_gke_zones():
    res = [(NG, group())]
    [(_, msg)] = call_stack(check_budget, res, {**CONFIG, "budgetHourly": 10, "prices": {"p4d.24xlarge": 6}})
    assert "$12.00/hour" in msg
    gke = {
        "name": "a",
        "nodeLocations": ["z1", "z2"],
        "autoscaling": {"maxNodeCount": 3},
        "nodeConfig": {"machineType": "a2-highgpu-1g"},
    }
    [(_, msg)] = call_stack(check_budget, [("gcp:container/nodePool:NodePool", gke)], {**CONFIG, "budgetHourly": 1})
    assert "a $22.04 (6 x a2-highgpu-1g)" in msg


def test_budget_unset_is_not_applicable_with_estimate():
    with pytest.raises(_NotApplicableError) as e:
        check_budget(
            StackValidationArgs([PolicyResource(NG, group(), "u", "n", _opts(), None, None, [], {})], CONFIG),
            lambda *a: None,
        )
    assert e.value.reason == (
        "no budgetHourly set; GPU node pools at max size cost $43.92/hour: gpu-train $43.92 (2 x p4d.24xlarge)"
    )
    assert call_stack(check_budget, [("aws:s3/bucket:Bucket", {})], {**CONFIG, "budgetHourly": 1}) == "n/a"


def test_budget_missing_props_and_unknown_price():
    [(_, msg)] = call_stack(
        check_budget,
        [(NG, {"instanceTypes": ["p9.huge"], "amiType": "AL2023_x86_64_NVIDIA", "scalingConfig": None})],
        {**CONFIG, "budgetHourly": 0},
    )
    assert msg == (
        "GPU node pools cannot be checked against the budget of $0.00/hour: not costed, no price "
        "known: r0 (p9.huge) (set prices)."
    )


# --- config ---------------------------------------------------------------------------------------------------


def test_bad_config_names_the_field():
    with pytest.raises(PolicyConfigError, match=r"policy config budgetHourly: .*greater than or equal to 0"):
        call(check_workload_classified, POD, pod(), config={"budgetHourly": -1})


@pytest.mark.parametrize(
    ("config", "where"),
    [
        ({"budgetHourly": 100, "prices": {"p5.48xlarge": -1000}}, "prices.p5.48xlarge"),
        ({"budgetHourly": 1e308}, "budgetHourly"),
        ({"budgetHourly": True}, "budgetHourly"),
        ({"prices": {"p4d.24xlarge": False}}, "prices.p4d.24xlarge"),
    ],
)
def test_budget_config_refuses_negative_prices_and_absurd_budgets(config, where):
    # A negative price would cancel other pools' cost in the budget's sum and pass a stack over its budget.
    with pytest.raises(PolicyConfigError, match=rf"policy config {re.escape(where)}: "):
        call(check_workload_classified, POD, pod(), config=config)


def test_bad_config_names_every_field_at_once():
    config = {"budgetHourly": -1, "prices": {"p5.48xlarge": -5, "p4d.24xlarge": "cheap"}, "labelDomain": 7}
    with pytest.raises(PolicyConfigError) as raised:
        parse_config(config)
    lines = str(raised.value).splitlines()
    assert len(lines) == 4
    for where, got in [
        ("budgetHourly", "-1"),
        ("prices.p5.48xlarge", "-5"),
        ("prices.p4d.24xlarge", "'cheap'"),
        ("labelDomain", "7"),
    ]:
        assert any(line.startswith(f"policy config {where}: ") and line.endswith(f"(got {got})") for line in lines)


@pytest.mark.parametrize(
    ("config", "where", "says"),
    [
        ({"enforcement": {"gpu-nonexistent": "advisory"}}, "enforcement", "'gpu-nonexistent' is not a policy of"),
        ({"enforcement": {"gpu-budget": "remediate"}}, "enforcement", "'remediate' is not an enforcement level of"),
        ({"tiers": {"t": {"resources": ["/gpu"]}}}, "tiers.t.resources.0", "label key '/gpu' is not valid"),
        ({"tiers": {"t": {"resources": ["nvidia.com/gpu"], "priorityClass": ""}}}, "tiers.t.priorityClass", "DNS"),
        ({"pools": {"p": "a b"}}, "pools.p", "should match pattern"),
        ({"exemptNamespaces": ["UPPER"]}, "exemptNamespaces.0", "'UPPER' is not a valid name; allowed: a lower"),
        ({"tiers": {"t": {"resources": ["a b"]}}}, "tiers.t.resources.0", "label key 'a b' is not valid; allowed"),
        ({"tiers": {"Train": {"resources": ["nvidia.com/gpu"]}}}, "tiers.Train.[key]", "'Train' is not a valid name"),
        ({"pools": {"train": ""}}, "pools.train", "at least 1 character (got '')"),
        ({"prices": {"": 1}}, "prices.''.[key]", "at least 1 character (got '')"),
    ],
)
def test_config_refuses_names_the_pack_cannot_use(config, where, says):
    # Each would have been accepted and then matched nothing (a namespace, a tier or a resource that cannot
    # exist), or set the level of a policy the pack does not have. Our own checks name the value once.
    with pytest.raises(PolicyConfigError) as raised:
        parse_config(config)
    (line,) = str(raised.value).splitlines()
    assert line.startswith(f"policy config {where}: ") and says in line, line
    assert "Value error" not in line and line.count("(got") <= 1, line  # pydantic's prefix dropped, value once


def test_config_errors_come_together_and_values_json_cannot_carry_are_refused():
    with pytest.raises(PolicyConfigError) as raised:
        parse_config({"enforcementLevel": "strict", "budgetHourly": -5, "labelDomain": "BAD"})
    assert [line.split(":")[0] for line in str(raised.value).splitlines()] == [
        "policy config enforcementLevel",
        "policy config labelDomain",
        "policy config budgetHourly",
    ]
    for value in [{"a", "b"}, b"x", 10**5000]:
        with pytest.raises(PolicyConfigError, match="a value JSON cannot carry"):
            parse_config({"prices": {"p4d.24xlarge": value}})
    # keys that are not text (str() would merge 1 with "1"), and numbers too large to print
    for config, says in [
        ({"prices": {1: 2.0, "1": 3.0}}, "key 1 is not a string"),
        ({"prices": {10**5000: 1}}, "key an integer too large to show is not a string"),
        ({"enforcementLevel": 10**5000, "budgetHourly": -1}, "enforcementLevel: an integer too large to show"),
    ]:
        with pytest.raises(PolicyConfigError, match=says):
            parse_config(config)
    # the level's line and 25 property errors: 20 lines and a count of the other 6
    with pytest.raises(PolicyConfigError) as raised:
        parse_config({"enforcementLevel": "strict", "exemptNamespaces": [f"BAD{i}" for i in range(25)]})
    lines = str(raised.value).splitlines()
    assert len(lines) == 21 and lines[-1] == "... and 6 more errors in the policy config"
    assert len(raised.value.lines) == 26


def test_config_errors_are_bounded_in_number_and_length():
    # A hostile config: thousands of bad prices and a value of 100,000 characters give a short message.
    config = {
        "labelDomain": "x" * 100_000,
        "prices": {"k" * 100_000: -1, "two\nlines": -1, **{f"t{i}": -1 for i in range(5_000)}},
    }
    with pytest.raises(PolicyConfigError) as raised:
        parse_config(config)
    lines = str(raised.value).splitlines()
    # labelDomain, the two odd keys (each refused as a key, and its price) and 5,000 more prices: 5,005 errors
    assert len(lines) == 21 and lines[-1] == "... and 4985 more errors in the policy config"
    assert max(len(line) for line in lines) < 400
    assert lines[0].startswith("policy config labelDomain: ")
    assert any(line.startswith("policy config prices.'two\\nlines': ") for line in lines)


@pytest.mark.parametrize("given", [None, "labelDomain", 3, ["labelDomain"]])
def test_parse_config_refuses_what_is_not_a_mapping(given):
    with pytest.raises(PolicyConfigError, match="allowed: a mapping of the pack's properties"):
        parse_config(given)


def test_parse_config_reads_a_plain_mapping():
    cfg = parse_config({**CONFIG, "budgetHourly": 12.5, "enforcementLevel": "advisory"})
    assert cfg.tier_key == "gpu.example.com/gpu-tier"
    assert cfg.tiers["train"].priority_class == "gpu-train"
    assert cfg.tiers["inference"].resources == ["nvidia.com/mig-3g.40gb"]
    assert cfg.budget_hourly == 12.5
    assert cfg.enforcement == {}  # the pack-wide enforcementLevel is the engine's, not a policy's config


def test_parse_config_names_field_and_value():
    with pytest.raises(PolicyConfigError, match=r"policy config tiers\.train\.resources: .*\(got \[\]\)"):
        parse_config({"tiers": {"train": {"resources": []}}})


def test_policy_calls_and_parse_config_agree():
    """A policy reads the config the engine hands it exactly as parse_config reads the same mapping."""
    config = {**CONFIG, "labelDomain": "gpu.acme.io"}
    args = ResourceValidationArgs(POD, pod(), "urn:p", "p", _opts(), None, config)
    assert config_of(args) == parse_config(config)
    [message] = call(check_workload_classified, POD, pod(), config=config)
    assert f"label {parse_config(config).tier_key} is missing" in message


def test_parse_config_imports_no_policy_sdk():
    program = (
        "import sys; from gpu_platform.policy.config import parse_config; "
        "parse_config({'labelDomain': 'gpu.acme.io'}); print('pulumi_policy' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"


def test_schema_is_derived_from_the_model():
    schema = config_schema()
    assert set(schema["properties"]) == {f.alias for f in PolicyConfig.model_fields.values()}
    assert "$ref" not in str(schema)
    assert schema["properties"]["tiers"]["additionalProperties"]["properties"]["resources"]["type"] == "array"


def test_config_from_dev_spec(dev_spec):
    cfg = config_from_spec(dev_spec)
    assert cfg.label_domain == "gpu.example.com"
    assert cfg.tiers["inference"].resources == ["nvidia.com/mig-3g.40gb"]
    assert cfg.tiers["train"].priority_class == "gpu-train"
    assert cfg.prices["p4de.24xlarge"] == pytest.approx(27.44705)
    levels = {k: v["enforcementLevel"] for k, v in pack_config(cfg).items()}
    assert levels == {p.name: "mandatory" for p in POLICIES} | {
        "gpu-budget": "advisory",
        "gpu-launch-template-imdsv2": "advisory",
        "gpu-node-pool-detectable": "advisory",
    }
