"""Pure render of EFA and placement for EKS pools: who gets them, the launch template network interfaces, the
EFA security group, the cluster placement group and the EFA device plugin release.

Who reads what:
- EC2 reads the launch template `networkInterfaces` (one EFA per network card) and `placement.groupName`. The layout
  follows EC2's recommendation for multi-card EFA types: card 0 at device index 0 as `efa` (EFA with ENA, the
  node's IP), every other card at device index 1 as `efa-only` (no subnet IP, so a p5's 32 interfaces take one
  address, not 32).
  EKS forbids a subnet in launch template interfaces and, once security groups are set there, stops adding the
  cluster security group, so each interface names it (awsdocs/amazon-eks-user-guide `nodes/launch-templates.adoc`).
- EFA traffic needs a security group allowing all traffic to and from itself, inbound and outbound (AWS EFA user
  guide; AWS PCS `working-with_networking_efa_create-sg`).
- The EFA device plugin (aws/eks-charts `stable/aws-efa-k8s-device-plugin` v0.5.30) advertises
  `vpc.amazonaws.com/efa`; its DaemonSet only tolerates `CriticalAddonsOnly` plus `tolerations`, so it gets the pools'
  taints, and runs only on EFA-capable instance types (`supportedInstanceLabels`) and on nodes matching `nodeSelector`.
"""

from __future__ import annotations

from typing import Any

from ..artifacts import deep_merge, helm_release
from ..catalog import EFA_INTERFACES
from ..contract import CLUSTER_TAG, pool_tags, pool_taints
from ..spec import Cloud, NodePool, PlatformSpec, Provisioner, SharingMode

__all__ = [
    "CLUSTER_SG_REF",
    "EFA_SG_REF",
    "EFA_SG_TAG",
    "PLACEMENT_GROUP_TYPE",
    "SECURITY_GROUP_TYPE",
    "efa_count",
    "efa_label_key",
    "placement_group_name",
    "pool_subnets",
    "render_efa_device_plugin_release",
    "render_efa_network_interfaces",
    "render_efa_security_group",
    "render_placement_group",
    "uses_efa",
    "uses_placement_group",
    "EFA_INTERFACES",
]

PLACEMENT_GROUP_TYPE = "aws:ec2/placementGroup:PlacementGroup"
SECURITY_GROUP_TYPE = "aws:ec2/securityGroup:SecurityGroup"
EFA_CHART = "aws-efa-k8s-device-plugin"
EFA_RELEASE = "aws-efa-k8s-device-plugin"
EFA_SG_TAG = "gpu-platform/efa"
# Placeholders written by `synth`; the component replaces them with the real security group ids.
CLUSTER_SG_REF = "${cluster.vpcConfig.clusterSecurityGroupId}"
EFA_SG_REF = "${efaSecurityGroup.id}"
VPC_REF = "${cluster.vpcConfig.vpcId}"
_ALL_TRAFFIC = {"protocol": "-1", "fromPort": 0, "toPort": 0, "self": True}


def pool_subnets(spec: PlatformSpec, pool: NodePool) -> list[str]:
    """The pool's subnets: its own override, else the account-wide `aws.subnetIds`."""
    if pool.aws.subnet_ids is not None:
        return list(pool.aws.subnet_ids)
    return list(spec.aws.subnet_ids) if spec.aws else []


def efa_count(spec: PlatformSpec, pool: NodePool) -> int:
    """EFA interfaces the pool's instance type supports: `catalog.instanceTypes[].efaInterfaces` for a type the
    spec describes, else the built-in table (0 when it has none or is not in the table)."""
    custom = next((t for t in spec.catalog.instance_types if t.name == pool.instance_type), None)
    if custom is not None and custom.efa_interfaces is not None:
        return custom.efa_interfaces
    return EFA_INTERFACES.get(pool.instance_type, 0)


def uses_efa(spec: PlatformSpec, pool: NodePool) -> bool:
    """EFA on: explicitly, or by default for exclusive (multi-node training) pools on EFA-capable types."""
    if spec.cloud != Cloud.AWS or efa_count(spec, pool) == 0:
        return False
    if pool.aws.efa is not None:
        return pool.aws.efa
    return pool.sharing.mode == SharingMode.EXCLUSIVE


def uses_placement_group(spec: PlatformSpec, pool: NodePool) -> bool:
    """Cluster placement group on: explicitly, or by default wherever EFA is on and the nodes can only land in one
    zone. A placement group lives in one availability zone: a managed node group over several subnets (zones
    unknown offline) would fail its launches outside it, so there the default is off; Karpenter lets EC2 pick the
    zone for an empty group and then keeps to it (aws/karpenter-provider-aws v1.14.1
    `designs/placement-groups-support.md`), so its pools keep the default. Pools on a capacity reservation or
    Capacity Block keep it off too: a Capacity Block's instances are already placed together in an EC2
    UltraCluster (AWS PCS user guide, "Using Amazon EC2 Capacity Blocks for ML"), and a reservation serves a
    placement group only when it was created in that group."""
    if spec.cloud != Cloud.AWS:
        return False
    if pool.aws.placement_group is not None:
        return pool.aws.placement_group
    one_zone = pool.aws.provisioner == Provisioner.KARPENTER or len(pool_subnets(spec, pool)) == 1
    return uses_efa(spec, pool) and one_zone and not pool.aws.capacity_reservation_id


def efa_pools(spec: PlatformSpec) -> list[NodePool]:
    """The pools with EFA interfaces."""
    return [p for p in spec.node_pools if uses_efa(spec, p)]


def efa_label_key(spec: PlatformSpec) -> str:
    """Node label marking nodes with EFA interfaces (the device plugin's node selector)."""
    return f"{spec.label_domain}/efa"


def placement_group_name(spec: PlatformSpec, pool: NodePool) -> str:
    """Name of the pool's placement group (EC2 names are per account and region)."""
    return f"{spec.cluster_name}-{pool.name}"


def render_placement_group(spec: PlatformSpec, pool: NodePool) -> dict[str, Any]:
    """`aws.ec2.PlacementGroup` inputs: strategy cluster (one AZ, one network spine)."""
    return {
        "name": placement_group_name(spec, pool),
        "strategy": "cluster",
        "tags": pool_tags(spec, pool),
    }


def render_efa_security_group(spec: PlatformSpec, pool: NodePool) -> dict[str, Any]:
    """`aws.ec2.SecurityGroup` inputs: all traffic to and from itself, inbound and outbound (EFA's rule)."""
    return {
        "description": f"EFA traffic between the nodes of {spec.cluster_name}/{pool.name}",
        "vpcId": VPC_REF,
        "ingress": [{**_ALL_TRAFFIC, "description": "EFA from the pool's nodes"}],
        "egress": [{**_ALL_TRAFFIC, "description": "EFA to the pool's nodes"}],
        "tags": {EFA_SG_TAG: f"{spec.cluster_name}/{pool.name}", CLUSTER_TAG: spec.cluster_name},
    }


def render_efa_network_interfaces(
    spec: PlatformSpec, pool: NodePool, security_groups: list[Any]
) -> list[dict[str, Any]]:
    """Launch template `networkInterfaces`: one EFA interface per network card, no subnet (EKS picks it). The
    primary interface (card 0, device 0) is `efa` (EFA with ENA: it carries the node's IP); every other card gets
    an `efa-only` interface at device index 1, which takes no IP address from the subnet (EC2 user guide
    "Maximize network bandwidth on Amazon EC2 instances with multiple network cards": an EFA-only interface
    cannot be the primary one)."""
    return [
        {
            "networkCardIndex": card,
            "deviceIndex": 0 if card == 0 else 1,
            "interfaceType": "efa" if card == 0 else "efa-only",
            "securityGroups": list(security_groups),
            "deleteOnTermination": "true",
        }
        for card in range(efa_count(spec, pool))
    ]


def _tolerations(spec: PlatformSpec) -> list[dict[str, str]]:
    seen: dict[tuple[str, str], dict[str, str]] = {}
    for pool in efa_pools(spec):
        for t in pool_taints(spec, pool):
            seen.setdefault((t["key"], t["effect"]), {"key": t["key"], "operator": "Exists", "effect": t["effect"]})
    return list(seen.values())


def render_efa_device_plugin_release(spec: PlatformSpec) -> dict[str, Any] | None:
    """The EFA device plugin's Helm release document, or None when no pool has EFA."""
    if not efa_pools(spec):
        return None
    plugin = spec.efa_device_plugin
    values: dict[str, Any] = {
        "tolerations": _tolerations(spec),
        "nodeSelector": {efa_label_key(spec): "true"},
    }
    values = deep_merge(values, plugin.values_overrides, "efaDevicePlugin.valuesOverrides")
    return helm_release(EFA_RELEASE, EFA_CHART, plugin.repository, plugin.version, plugin.namespace, values)
