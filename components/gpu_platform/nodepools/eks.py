"""Pure render of one pool's EKS resources: launch template, managed node group, cluster-autoscaler tags.

Security defaults: IMDSv2 only (hop limit 1 by default, so pods cannot borrow the node role: they use
IRSA or EKS Pod Identity), an encrypted gp3 volume for container images, no SSH key and no remote access.

GPU nodes carry `k8s.amazonaws.com/accelerator`, the label cluster-autoscaler's AWS provider reports as its GPU
label (kubernetes/autoscaler cluster-autoscaler-chart-9.59.0 `cloudprovider/aws/aws_cloud_provider.go` GPULabel):
a node with that label and no GPU allocatable yet counts as unready, so the autoscaler waits for the driver and
device plugin instead of adding more nodes (`processors/customresources/gpu_processor.go`). MIG pools do not get
it: with the mixed strategy they advertise `nvidia.com/mig-*` and no `nvidia.com/gpu`, and the processor only looks
at `nvidia.com/gpu` (`utils/gpu/gpu.go` NodeHasGpuAllocatable), so it would hold them unready for good.
"""

from __future__ import annotations

from typing import Any

from ..capacity import pool_capacity
from ..contract import GPU_RESOURCE, pool_labels, pool_tags, pool_taints
from ..spec import AmiType, CapacityType, NodePool, PlatformSpec, SharingMode
from .efa import (
    CLUSTER_SG_REF,
    EFA_SG_REF,
    efa_count,
    efa_label_key,
    placement_group_name,
    pool_subnets,
    render_efa_network_interfaces,
    uses_efa,
    uses_placement_group,
)

__all__ = [
    "ACCELERATOR_LABEL",
    "CA_TEMPLATE_PREFIX",
    "LAUNCH_TEMPLATE_TYPE",
    "NODE_GROUP_TYPE",
    "ASG_TAG_TYPE",
    "EKS_MAX_TAGS",
    "EKS_NODE_GROUP_NAME_MAX",
    "NAME_SUFFIX_LEN",
    "NAME_SUFFIX_PATTERN",
    "autoscaler_tag_resources",
    "autoscaler_tags",
    "eks_node_labels",
    "node_group_name_prefix",
    "pool_subnets",
    "render_eks_launch_template",
    "render_eks_node_group",
]

NODE_GROUP_TYPE = "aws:eks/nodeGroup:NodeGroup"
LAUNCH_TEMPLATE_TYPE = "aws:ec2/launchTemplate:LaunchTemplate"
ASG_TAG_TYPE = "aws:autoscaling/tag:Tag"
EKS_MAX_TAGS = 50  # AWS tag limit per resource
CA_TEMPLATE_PREFIX = "k8s.io/cluster-autoscaler/node-template"
ACCELERATOR_LABEL = "k8s.amazonaws.com/accelerator"
EFA_RESOURCE = "vpc.amazonaws.com/efa"
# Placeholders written by `synth`; the component replaces them with the launch template's outputs.
LT_ID_REF = "${launchTemplate.id}"
LT_VERSION_REF = "${launchTemplate.latestVersion}"

# Kubernetes taint effect -> EKS API TaintEffect (botocore EKS model).
EKS_TAINT_EFFECT = {"NoSchedule": "NO_SCHEDULE", "NoExecute": "NO_EXECUTE", "PreferNoSchedule": "PREFER_NO_SCHEDULE"}

# Where container images live: AL2023 has one root volume; Bottlerocket keeps images on its data volume
# (/dev/xvdb) and boots from a small OS volume (/dev/xvda) that keeps the AMI's size but is encrypted too.
_ROOT_DEVICE = "/dev/xvda"
_IMAGE_VOLUME_DEVICE = {AmiType.AL2023_NVIDIA: _ROOT_DEVICE, AmiType.BOTTLEROCKET_NVIDIA: "/dev/xvdb"}


def accelerator_label_value(spec: PlatformSpec, pool: NodePool) -> str | None:
    """`k8s.amazonaws.com/accelerator` value of a pool's nodes (its GPU model), None for MIG pools (see above)."""
    gpu = spec.hardware.gpu_of(pool.instance_type)
    if gpu is None or pool.sharing.mode == SharingMode.MIG:
        return None
    return f"nvidia-{gpu.name.lower()}"


def eks_node_labels(spec: PlatformSpec, pool: NodePool) -> dict[str, str]:
    """Node labels on EKS: the contract labels, the autoscaler's GPU label and the EFA marker."""
    labels = pool_labels(spec, pool)
    accelerator = accelerator_label_value(spec, pool)
    if accelerator:
        labels = {ACCELERATOR_LABEL: accelerator, **labels}
    if uses_efa(spec, pool):
        labels[efa_label_key(spec)] = "true"
    return labels


def autoscaler_tags(spec: PlatformSpec, pool: NodePool) -> dict[str, str]:
    """Cluster-autoscaler node-template tags: labels, taints and extended resources of one node."""
    tags = {f"{CA_TEMPLATE_PREFIX}/label/{k}": v for k, v in eks_node_labels(spec, pool).items()}
    for t in pool_taints(spec, pool):
        tags[f"{CA_TEMPLATE_PREFIX}/taint/{t['key']}"] = f"{t['value']}:{t['effect']}"
    units = dict(pool_capacity(spec, pool).units_per_node)
    # A MIG node advertises no whole GPUs; without this the autoscaler assumes the instance type's count.
    units.setdefault(GPU_RESOURCE, 0)
    if uses_efa(spec, pool):  # scale from zero for pods that request EFA devices
        units[EFA_RESOURCE] = efa_count(spec, pool)
    for resource, count in units.items():
        tags[f"{CA_TEMPLATE_PREFIX}/resources/{resource}"] = str(count)
    return tags


def autoscaler_tag_resources(spec: PlatformSpec, pool: NodePool) -> list[tuple[str, dict[str, Any]]]:
    """Per node-template tag, its `aws.autoscaling.Tag` resource: the name suffix (the key after the prefix) and the
    tag, which stays off the instances (the node group's own tags do not reach its Auto Scaling group)."""
    return [
        (key.removeprefix(CA_TEMPLATE_PREFIX + "/"), {"key": key, "value": value, "propagateAtLaunch": False})
        for key, value in autoscaler_tags(spec, pool).items()
    ]


def _base_tags(spec: PlatformSpec, pool: NodePool) -> dict[str, str]:
    return pool_tags(spec, pool)


def _encrypted(pool: NodePool) -> dict[str, Any]:
    ebs: dict[str, Any] = {"volumeType": "gp3", "encrypted": "true", "deleteOnTermination": "true"}
    if pool.aws.kms_key_id:
        ebs["kmsKeyId"] = pool.aws.kms_key_id
    return ebs


def _ebs(pool: NodePool) -> dict[str, Any]:
    a = pool.aws
    size = {
        "volumeSize": a.root_volume_gib,
        "volumeType": "gp3",
        "iops": a.root_volume_iops,
        "throughput": a.root_volume_throughput,
    }
    return size | _encrypted(pool)


def _block_devices(pool: NodePool) -> list[dict[str, Any]]:
    """The image volume (sized, encrypted) and, on Bottlerocket, its OS volume (AMI size, encrypted)."""
    image = _IMAGE_VOLUME_DEVICE[pool.aws.ami_type]
    mappings = [{"deviceName": image, "ebs": _ebs(pool)}]
    if image != _ROOT_DEVICE:
        mappings.insert(0, {"deviceName": _ROOT_DEVICE, "ebs": _encrypted(pool)})
    return mappings


def _capacity_options(pool: NodePool) -> dict[str, Any]:
    a = pool.aws
    out: dict[str, Any] = {}
    if a.capacity_reservation_id:
        target = {"capacityReservationId": a.capacity_reservation_id}
        out["capacityReservationSpecification"] = {"capacityReservationTarget": target}
    if a.capacity_type == CapacityType.CAPACITY_BLOCK:
        # EKS: a Capacity Block node group names its instance type in the launch template, not the node group.
        out["instanceMarketOptions"] = {"marketType": "capacity-block"}
        out["instanceType"] = pool.instance_type
    return out


def _network_options(spec: PlatformSpec, pool: NodePool, security_groups: list[Any] | None) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if uses_efa(spec, pool):
        groups = security_groups if security_groups is not None else [CLUSTER_SG_REF, EFA_SG_REF]
        out["networkInterfaces"] = render_efa_network_interfaces(spec, pool, groups)
    if uses_placement_group(spec, pool):
        out["placement"] = {"groupName": placement_group_name(spec, pool)}
    return out


def render_eks_launch_template(
    spec: PlatformSpec, pool: NodePool, security_groups: list[Any] | None = None
) -> dict[str, Any]:
    """`aws.ec2.LaunchTemplate` inputs: IMDSv2, encrypted gp3 image volume, no SSH key, capacity options, and on EFA
    pools one EFA interface per network card (in `security_groups`: the cluster's and the EFA group) and placement."""
    tags = _base_tags(spec, pool)
    return {
        "description": f"gpu-platform GPU nodes of {spec.cluster_name}/{pool.name}",
        "updateDefaultVersion": True,
        "metadataOptions": {
            "httpEndpoint": "enabled",
            "httpTokens": "required",
            "httpPutResponseHopLimit": pool.aws.imds_hop_limit,
            "instanceMetadataTags": "disabled",
        },
        "blockDeviceMappings": _block_devices(pool),
        **_capacity_options(pool),
        **_network_options(spec, pool, security_groups),
        "tagSpecifications": [{"resourceType": kind, "tags": dict(tags)} for kind in ("instance", "volume")],
        "tags": tags,
    }


# pulumi-aws names prefixed resources `<prefix><UTC time 20060102150405 + 4 fraction digits><8 hex counter>`
# (terraform-plugin-sdk helper/id PrefixedUniqueId, used by terraform-provider-aws create.Name): 26 characters.
NAME_SUFFIX_LEN = 26
NAME_SUFFIX_PATTERN = "[0-9]{18}[0-9a-f]{8}"
EKS_NODE_GROUP_NAME_MAX = 63  # botocore EKS CreateNodegroup nodegroupName


def node_group_name_prefix(pool: NodePool) -> str:
    """The managed node group's name prefix; EKS appends nothing, the provider the unique suffix."""
    return f"{pool.name}-"


def render_eks_node_group(spec: PlatformSpec, pool: NodePool) -> dict[str, Any]:
    """`aws.eks.NodeGroup` inputs; the launch template is referenced through LT_ID_REF / LT_VERSION_REF."""
    a = pool.aws
    inputs: dict[str, Any] = {
        "clusterName": spec.cluster_name,
        # A generated name (`<pool>-` + the provider's 26-character suffix) lets a change that replaces the node
        # group create the new one before deleting the old: the pool never drops to zero GPUs.
        "nodeGroupNamePrefix": node_group_name_prefix(pool),
        "nodeRoleArn": spec.aws.node_role_arn if spec.aws else None,
        "subnetIds": pool_subnets(spec, pool),
        "amiType": a.ami_type.value,
        "capacityType": a.capacity_type.value,
        "labels": eks_node_labels(spec, pool),
        "taints": [{**t, "effect": EKS_TAINT_EFFECT[t["effect"]]} for t in pool_taints(spec, pool)],
        # desiredSize starts at minSize; the component ignores later changes so the autoscaler owns it.
        "scalingConfig": {"minSize": pool.min_size, "maxSize": pool.max_size, "desiredSize": pool.min_size},
        "updateConfig": {"maxUnavailablePercentage": a.max_unavailable_percentage},
        "nodeRepairConfig": {"enabled": a.node_repair},
        "launchTemplate": {"id": LT_ID_REF, "version": LT_VERSION_REF},
        "tags": {**_base_tags(spec, pool), **autoscaler_tags(spec, pool)},
    }
    if a.capacity_type != CapacityType.CAPACITY_BLOCK:
        inputs["instanceTypes"] = [pool.instance_type]
    return inputs
