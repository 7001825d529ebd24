"""Pure render of a Karpenter-provisioned EKS pool (`aws.provisioner: karpenter`): a `karpenter.sh/v1` NodePool and a
`karpenter.k8s.aws/v1` EC2NodeClass, validated in the tests against the v1.14.1 CRDs (aws/karpenter-provider-aws
tag v1.14.1, `pkg/apis/crds/`).

What the Karpenter controller does with them (same tag, `website/content/en/preview/concepts/`):
- NodePool: nodes carry `template.metadata.labels` and `template.spec.taints` (the contract's, as on a node group);
  `requirements` pin the instance type, the capacity type (`capacity_types`) and, with `aws.zone`, the zone;
  `limits` stop provisioning once the pool's nodes reach them. Karpenter counts an initialized node by its Node
  `status.capacity` (kubernetes-sigs/karpenter @ 6e7eab7a, the core v1.14.1 uses,
  `pkg/controllers/state/statenode.go` Capacity), i.e. what the device plugin advertises:
  so the `nvidia.com/gpu` limit is the pool's advertised units at `maxSize` (GPUs x replicas on time-sliced and
  MPS pools), plus the `nodes` limit (= `maxSize`) every pool has. Karpenter decides before launch from what it
  knows an instance type has (the physical `nvidia.com/gpu` count), so validation rejects MIG pools (their
  `nvidia.com/mig-*` resources are unknown to it, kubernetes-sigs/karpenter#751) and warns that time-sliced and
  MPS pools launch more nodes than their pods need.
- Disruption: `WhenEmpty` never consolidates a node that runs a pod (no "Underutilized" moves); `expireAfter:
  Never` because expiry is forceful in v1; exclusive (training) pools also get a zero budget for `Drifted`, so an
  AMI or node class change replaces their nodes only once they are empty.
- EC2NodeClass: `amiSelectorTerms` alias `al2023@<version>` resolves the NVIDIA variant for GPU instance types
  (`pkg/providers/amifamily/al2023.go`); IMDSv2 and encrypted volumes as on the launch template; `role` is the node
  role's name (Karpenter makes the instance profile); security groups by tag: the EKS cluster security group
  (tagged `aws:eks:cluster-name`, awsdocs/amazon-eks-user-guide `networking/sec-group-reqs.adoc`) and on EFA pools
  the pool's EFA group. EFA pools get static `networkInterfaces` (ENA on card 0, one `efa-only` per card; Karpenter
  counts `efa-only` interfaces as `vpc.amazonaws.com/efa`, `pkg/providers/instancetype/types.go` func `efas`) and
  `placementGroupSelector` naming the pool's cluster placement group.
"""

from __future__ import annotations

from typing import Any

from ..capacity import pool_capacity
from ..contract import (
    CAPACITY_TYPE_LABEL,
    CLUSTER_TAG,
    GPU_RESOURCE,
    INSTANCE_TYPE_LABEL,
    MANAGED_BY_LABEL,
    PLATFORM_NAME,
    pool_tags,
    pool_taints,
)
from ..deferred import derived
from ..spec import AmiType, CapacityType, NodePool, PlatformSpec, SharingMode
from .efa import EFA_SG_TAG, efa_count, placement_group_name, uses_efa, uses_placement_group
from .eks import eks_node_labels, pool_subnets

__all__ = ["EC2_NODE_CLASS_TYPE", "KARPENTER_NODE_POOL_TYPE", "render_ec2_node_class", "render_karpenter_node_pool"]

KARPENTER_NODE_POOL_TYPE = "kubernetes:karpenter.sh/v1:NodePool"
EC2_NODE_CLASS_TYPE = "kubernetes:karpenter.k8s.aws/v1:EC2NodeClass"
_CAPACITY = {CapacityType.ON_DEMAND: "on-demand", CapacityType.SPOT: "spot", CapacityType.CAPACITY_BLOCK: "reserved"}
_AMI_ALIAS = {AmiType.AL2023_NVIDIA: "al2023", AmiType.BOTTLEROCKET_NVIDIA: "bottlerocket"}
_IMAGE_DEVICE = {AmiType.AL2023_NVIDIA: "/dev/xvda", AmiType.BOTTLEROCKET_NVIDIA: "/dev/xvdb"}
_LABELS = {MANAGED_BY_LABEL: PLATFORM_NAME}


def _role_name(arn: str) -> str:
    return arn.rsplit("/", 1)[-1]


def node_role_name(arn: str | None) -> str:
    """The role name in an IAM role ARN (EC2NodeClass `role` takes the name, not the ARN); of an ARN given as a
    Pulumi Input, a token for the name once it resolves."""
    return derived(arn, "roleName", _role_name)


def _metadata(spec: PlatformSpec, pool: NodePool) -> dict[str, Any]:
    return {"name": pool.name, "labels": {**_LABELS, CLUSTER_TAG: spec.cluster_name}}


def capacity_types(pool: NodePool) -> list[str]:
    """`karpenter.sh/capacity-type` values: Karpenter models capacity reservations (On-Demand reservations and
    Capacity Blocks) as `reserved`, never as `on-demand` (v1.14.1 `docs/concepts/nodepools.md` "Capacity Type",
    `docs/tasks/odcrs.md`). An On-Demand pool on a reservation allows `reserved` first and falls back to
    `on-demand` when the reservation is full (the fallback that task documents); a Capacity Block is `reserved`
    only."""
    a = pool.aws
    if a.capacity_type == CapacityType.ON_DEMAND and a.capacity_reservation_id:
        return ["reserved", "on-demand"]
    return [_CAPACITY[a.capacity_type]]


def _requirements(spec: PlatformSpec, pool: NodePool) -> list[dict[str, Any]]:
    out = [
        {"key": INSTANCE_TYPE_LABEL, "operator": "In", "values": [pool.instance_type]},
        {"key": CAPACITY_TYPE_LABEL, "operator": "In", "values": capacity_types(pool)},
    ]
    if pool.aws.zone:
        # One zone for a cluster placement group (aws/karpenter-provider-aws v1.14.1
        # `designs/placement-groups-support.md`, the ML training example).
        out.append({"key": "topology.kubernetes.io/zone", "operator": "In", "values": [pool.aws.zone]})
    return out


def _limits(spec: PlatformSpec, pool: NodePool) -> dict[str, str]:
    limits = {"nodes": str(pool.max_size)}
    per_node = pool_capacity(spec, pool).units_per_node.get(GPU_RESOURCE, 0)
    if per_node:
        limits[GPU_RESOURCE] = str(per_node * pool.max_size)
    return limits


def _disruption(pool: NodePool) -> dict[str, Any]:
    budgets: list[dict[str, Any]] = [{"nodes": "10%"}]
    if pool.sharing.mode == SharingMode.EXCLUSIVE:
        budgets.insert(0, {"nodes": "0", "reasons": ["Drifted"]})
    return {
        "consolidationPolicy": "WhenEmpty",
        "consolidateAfter": pool.aws.karpenter.consolidate_after,
        "budgets": budgets,
    }


def render_karpenter_node_pool(spec: PlatformSpec, pool: NodePool) -> dict[str, Any]:
    """The pool's `karpenter.sh/v1` NodePool."""
    return {
        "apiVersion": "karpenter.sh/v1",
        "kind": "NodePool",
        "metadata": _metadata(spec, pool),
        "spec": {
            "template": {
                "metadata": {"labels": eks_node_labels(spec, pool)},
                "spec": {
                    "nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": pool.name},
                    "requirements": _requirements(spec, pool),
                    "taints": pool_taints(spec, pool),
                    "expireAfter": pool.aws.karpenter.expire_after,
                },
            },
            "disruption": _disruption(pool),
            "limits": _limits(spec, pool),
        },
    }


def _ebs(pool: NodePool, sized: bool) -> dict[str, Any]:
    a = pool.aws
    ebs: dict[str, Any] = {"volumeType": "gp3", "encrypted": True, "deleteOnTermination": True}
    if sized:
        ebs |= {
            "volumeSize": f"{a.root_volume_gib}Gi",
            "iops": a.root_volume_iops,
            "throughput": a.root_volume_throughput,
        }
    if a.kms_key_id:
        ebs["kmsKeyID"] = a.kms_key_id
    return ebs


def _block_devices(pool: NodePool) -> list[dict[str, Any]]:
    """The image volume (sized) and, on Bottlerocket, its OS volume too; both encrypted."""
    image = _IMAGE_DEVICE[pool.aws.ami_type]
    mappings = [{"deviceName": image, "ebs": _ebs(pool, sized=True), "rootVolume": image == "/dev/xvda"}]
    if image != "/dev/xvda":
        mappings.insert(
            0, {"deviceName": "/dev/xvda", "ebs": {**_ebs(pool, sized=False), "volumeSize": "4Gi"}, "rootVolume": True}
        )
    return mappings


def _efa_interfaces(spec: PlatformSpec, pool: NodePool) -> list[dict[str, Any]]:
    primary = {"networkCardIndex": 0, "deviceIndex": 0, "interfaceType": "interface"}
    efa = [
        {"networkCardIndex": card, "deviceIndex": 1 if card == 0 else 0, "interfaceType": "efa-only"}
        for card in range(efa_count(spec, pool))
    ]
    return [primary, *efa]


def _security_groups(spec: PlatformSpec, pool: NodePool) -> list[dict[str, Any]]:
    terms: list[dict[str, Any]] = [{"tags": {"aws:eks:cluster-name": spec.cluster_name}}]
    if uses_efa(spec, pool):
        terms.append({"tags": {EFA_SG_TAG: f"{spec.cluster_name}/{pool.name}"}})
    return terms


def _ec2_spec(spec: PlatformSpec, pool: NodePool) -> dict[str, Any]:
    a = pool.aws
    out: dict[str, Any] = {
        "role": node_role_name(spec.aws.node_role_arn if spec.aws else None),
        "amiSelectorTerms": [{"alias": f"{_AMI_ALIAS[a.ami_type]}@{a.karpenter.ami_version}"}],
        "subnetSelectorTerms": [{"id": s} for s in pool_subnets(spec, pool)],
        "securityGroupSelectorTerms": _security_groups(spec, pool),
        "metadataOptions": {
            "httpEndpoint": "enabled",
            "httpProtocolIPv6": "disabled",
            "httpPutResponseHopLimit": a.imds_hop_limit,
            "httpTokens": "required",
        },
        "blockDeviceMappings": _block_devices(pool),
        "tags": pool_tags(spec, pool),
    }
    if a.capacity_reservation_id:
        out["capacityReservationSelectorTerms"] = [{"id": a.capacity_reservation_id}]
    if uses_efa(spec, pool):
        out["networkInterfaces"] = _efa_interfaces(spec, pool)
    if uses_placement_group(spec, pool):
        out["placementGroupSelector"] = {"name": placement_group_name(spec, pool)}
    return out


def render_ec2_node_class(spec: PlatformSpec, pool: NodePool) -> dict[str, Any]:
    """The pool's `karpenter.k8s.aws/v1` EC2NodeClass."""
    return {
        "apiVersion": "karpenter.k8s.aws/v1",
        "kind": "EC2NodeClass",
        "metadata": _metadata(spec, pool),
        "spec": _ec2_spec(spec, pool),
    }
