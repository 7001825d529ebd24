"""Rendered node pool inputs against upstream: the botocore EKS model, and the Pulumi AWS/GCP input types."""

from __future__ import annotations

import json

import pytest

from gpu_platform.nodepools.eks import render_eks_node_group
from gpu_platform.spec import AmiType, CapacityType, PlatformSpec
from helpers import specs

pytestmark = pytest.mark.conformance


@pytest.fixture(scope="module")
def shapes(reference):
    return json.loads(reference("upstream", "botocore-eks-service-2.json").read_text())["shapes"]


def _limits(shape: dict) -> tuple[int, int]:
    return shape.get("min", 0), shape["max"]


def _variants(dev_data) -> list:
    """The dev spec with every AMI type and capacity type the spec allows."""
    out = []
    for ami in AmiType:
        for cap in CapacityType:
            data = json.loads(json.dumps(dev_data))
            extra = {"capacityReservationId": "cr-0abc"} if cap == CapacityType.CAPACITY_BLOCK else {}
            for pool in data["nodePools"]:
                pool["aws"] = {"amiType": ami.value, "capacityType": cap.value, **extra}
            out.append(PlatformSpec.model_validate(data))  # render conformance; sharing rules tested elsewhere
    return out


def test_spec_enums_are_botocore_enums(shapes):
    assert {a.value for a in AmiType} <= set(shapes["AMITypes"]["enum"])
    assert {c.value for c in CapacityType} == set(shapes["CapacityTypes"]["enum"])


def test_rendered_node_groups_conform(shapes, dev_data):
    members = shapes["CreateNodegroupRequest"]["members"]
    lk, lv = _limits(shapes["labelKey"]), _limits(shapes["labelValue"])
    tk, tv = _limits(shapes["taintKey"]), _limits(shapes["taintValue"])
    pct = _limits(shapes["PercentCapacity"])
    checked = 0
    for spec in _variants(dev_data):
        for pool in spec.node_pools:
            ng = render_eks_node_group(spec, pool)
            assert ng["amiType"] in shapes["AMITypes"]["enum"]
            assert ng["capacityType"] in shapes["CapacityTypes"]["enum"]
            for k, v in ng["labels"].items():
                assert lk[0] <= len(k) <= lk[1] and lv[0] <= len(v) <= lv[1], (k, v)
            for t in ng["taints"]:
                assert set(t) <= set(shapes["Taint"]["members"])
                assert t["effect"] in shapes["TaintEffect"]["enum"]
                assert tk[0] <= len(t["key"]) <= tk[1] and tv[0] <= len(t["value"]) <= tv[1]
            assert set(ng["scalingConfig"]) <= set(shapes["NodegroupScalingConfig"]["members"])
            assert set(ng["updateConfig"]) <= set(shapes["NodegroupUpdateConfig"]["members"])
            assert pct[0] <= ng["updateConfig"]["maxUnavailablePercentage"] <= pct[1]
            assert set(ng["nodeRepairConfig"]) <= set(shapes["NodeRepairConfig"]["members"])
            assert set(ng["launchTemplate"]) <= set(shapes["LaunchTemplateSpecification"]["members"])
            # Every node group field we set exists in CreateNodegroup (Pulumi names subnets/nodeRole differently).
            wire = {"subnetIds": "subnets", "nodeRoleArn": "nodeRole", "nodeGroupNamePrefix": "nodegroupName"}
            assert {wire.get(k, k) for k in ng} <= set(members), set(ng) - set(members)
            checked += 1
    assert checked == 4 * len(AmiType) * len(CapacityType)


# --- Rendered inputs against the Pulumi provider SDKs' input types (names and scalar types, recursively) -----------


def _check_input(typ, value, path: str) -> None:
    import collections.abc
    import typing

    from pulumi._types import input_type_types, is_input_type, unwrap_type

    typ = unwrap_type(typ)
    origin = typing.get_origin(typ)
    if origin in (list, collections.abc.Sequence):
        assert isinstance(value, list), f"{path}: {value!r} is not a list"
        (item,) = typing.get_args(typ)
        for n, v in enumerate(value):
            _check_input(item, v, f"{path}[{n}]")
    elif isinstance(typ, type) and is_input_type(typ):
        names = input_type_types(typ)
        assert isinstance(value, dict), f"{path}: {value!r} is not an object"
        for key, v in value.items():
            assert key in names, f"{path}.{key} is not an input of {typ.__name__}; allowed: {sorted(names)}"
            _check_input(names[key], v, f"{path}.{key}")
    elif typ in (str, int, bool):
        assert isinstance(value, typ), f"{path}: {value!r} is not {typ.__name__}"


def _gke_specs():
    from helpers.specs import gke_data

    return [PlatformSpec.model_validate(gke_data(stack)) for stack in ("gke-native", "gpu-operator")]


def test_rendered_eks_inputs_match_the_pulumi_aws_input_types(dev_data):
    import pulumi_aws as aws

    from gpu_platform.nodepools.efa import render_efa_security_group, render_placement_group
    from gpu_platform.nodepools.eks import autoscaler_tags, render_eks_launch_template

    efa = json.loads(json.dumps(dev_data))
    specs.pool(efa, "gpu-infer")["aws"] = {"efa": True}  # EFA and placement on a MIG pool too
    for spec in [*_variants(dev_data), PlatformSpec.model_validate(efa)]:
        for pool in spec.node_pools:
            _check_input(aws.eks.NodeGroupArgs, render_eks_node_group(spec, pool), f"{pool.name}-ng")
            lt = render_eks_launch_template(spec, pool, ["sg-0cluster", "sg-0efa"])
            _check_input(aws.ec2.LaunchTemplateArgs, lt, f"{pool.name}-lt")
            _check_input(aws.ec2.PlacementGroupArgs, render_placement_group(spec, pool), f"{pool.name}-pg")
            sg = {**render_efa_security_group(spec, pool), "vpcId": "vpc-0abc"}
            _check_input(aws.ec2.SecurityGroupArgs, sg, f"{pool.name}-efa-sg")
            for key, value in autoscaler_tags(spec, pool).items():
                tag = {"key": key, "value": value, "propagateAtLaunch": False}
                _check_input(aws.autoscaling.TagArgs, {"tag": tag}, f"{pool.name}-asg")


def test_rendered_gke_inputs_match_the_pulumi_gcp_input_types():
    import pulumi_gcp as gcp

    from gpu_platform.nodepools.gke import render_gke_node_pool

    for spec in _gke_specs():
        for pool in spec.node_pools:
            inputs = render_gke_node_pool(spec, pool)
            _check_input(gcp.container.NodePoolArgs, inputs, f"{pool.name}-np")
            assert inputs["nodeConfig"]["guestAccelerators"][0]["gpuDriverInstallationConfig"]["gpuDriverVersion"]


def test_input_type_check_catches_a_wrong_nested_name():
    import pulumi_gcp as gcp

    bad = {
        "nodeConfig": {
            "guestAccelerators": [{"type": "nvidia-tesla-a100", "count": 1, "gpuSharingConfig": {"strategy": "MPS"}}]
        }
    }
    with pytest.raises(AssertionError, match="gpuSharingConfig.strategy is not an input"):
        _check_input(gcp.container.NodePoolArgs, bad, "np")
