"""Rendered EKS node group inputs against the botocore EKS model (enums, label and taint limits)."""

from __future__ import annotations

import json

import pytest

from gpu_platform.spec import PlatformSpec
from gpu_platform.nodepools.eks import render_eks_node_group
from gpu_platform.spec import AmiType, CapacityType

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
            wire = {"subnetIds": "subnets", "nodeRoleArn": "nodeRole", "nodeGroupName": "nodegroupName"}
            assert {wire.get(k, k) for k in ng} <= set(members), set(ng) - set(members)
            checked += 1
    assert checked == 4 * len(AmiType) * len(CapacityType)
