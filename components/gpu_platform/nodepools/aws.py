"""EKS pool components: `EksGpuNodePool` (managed node group and launch template) and `KarpenterGpuNodePool`
(Karpenter NodePool and EC2NodeClass), each with the pool's EFA security group and placement group (inputs from
`eks`, `efa` and `karpenter`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pulumi

from ..errors import MissingExtraError

try:
    import pulumi_aws as aws
except ImportError as e:  # the aws extra is not installed
    raise MissingExtraError("aws", "GPU node pools on EKS", e) from None

from ..k8s import k8s_object
from ..options import check_component_args, child_options, registration
from ..spec import NodePool, PlatformSpec
from ..wiring import input_of, kwargs_of
from .efa import render_efa_security_group, render_placement_group, uses_efa, uses_placement_group
from .eks import (
    autoscaler_tag_resources,
    render_eks_launch_template,
    render_eks_node_group,
)
from .health import render_node_monitoring_addon
from .karpenter import render_ec2_node_class, render_karpenter_node_pool
from .render import snake_kwargs

__all__ = [
    "EksGpuNodePool",
    "EksGpuNodePoolArgs",
    "EksNodeHealth",
    "EksNodeHealthArgs",
    "KarpenterGpuNodePool",
    "KarpenterGpuNodePoolArgs",
]


def _asg_name(resources: Any) -> str | None:
    """Name of the node group's Auto Scaling group (None until the node group exists)."""
    try:
        name: str | None = resources[0].autoscaling_groups[0].name
        return name
    except (IndexError, TypeError, AttributeError):
        return None


def _protect(pool: NodePool) -> bool | None:
    return True if pool.protect else None  # else inherit


def _cluster_network(
    spec: PlatformSpec, parent: pulumi.Resource
) -> tuple[pulumi.Output[str | None], pulumi.Output[str | None]]:
    """The cluster's VPC id and cluster security group id (the EFA group lives in that VPC)."""
    cluster = aws.eks.get_cluster_output(name=input_of(spec.cluster_name), opts=pulumi.InvokeOptions(parent=parent))
    vpc = cluster.vpc_config  # None only under mocks that answer no invokes
    return (
        vpc.apply(lambda v: v.vpc_id if v else None),
        vpc.apply(lambda v: v.cluster_security_group_id if v else None),
    )


def _efa_and_placement(
    name: str, spec: PlatformSpec, pool: NodePool, parent: pulumi.Resource, opts: pulumi.ResourceOptions
) -> dict[str, Any]:
    """The pool's EFA security group and placement group (each only when the pool uses it)."""
    out: dict[str, Any] = {}
    if uses_placement_group(spec, pool):
        out["placement_group"] = aws.ec2.PlacementGroup(
            f"{name}-pg", opts=opts, **kwargs_of(snake_kwargs(render_placement_group(spec, pool)))
        )
    if uses_efa(spec, pool):
        vpc_id, cluster_sg = _cluster_network(spec, parent)
        inputs = {**render_efa_security_group(spec, pool), "vpcId": vpc_id}  # the looked-up VPC, not VPC_REF
        out["efa_security_group"] = aws.ec2.SecurityGroup(
            f"{name}-efa-sg", opts=opts, **kwargs_of(snake_kwargs(inputs))
        )
        out["cluster_security_group_id"] = cluster_sg
    return out


@dataclass(frozen=True)
class EksGpuNodePoolArgs:
    """Inputs of EksGpuNodePool: the validated spec and the name of the pool to build."""

    spec: PlatformSpec
    pool: str

    def __post_init__(self) -> None:
        check_component_args(self.spec, self.pool)


class EksGpuNodePool(pulumi.ComponentResource):
    """A GPU pool on EKS (`gpu-platform:index:EksGpuNodePool`): launch template, node group, ASG tags, and on
    EFA pools an EFA security group and a cluster placement group."""

    node_group_name: pulumi.Output[str]
    launch_template_id: pulumi.Output[str]

    def __init__(self, name: str, args: EksGpuNodePoolArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        spec, pool = args.spec, args.spec.pools_by_name[args.pool]
        protect = pulumi.ResourceOptions(protect=True) if pool.protect else None
        token, own = registration("EksGpuNodePool", pulumi.ResourceOptions.merge(opts, protect))
        super().__init__(token, name, None, own)
        child = child_options(self, opts, protect=_protect(pool))
        network = _efa_and_placement(name, spec, pool, self, child)
        groups = None
        if "efa_security_group" in network:
            groups = [network["cluster_security_group_id"], network["efa_security_group"].id]
        made = [network.get("placement_group"), network.get("efa_security_group")]
        lt = aws.ec2.LaunchTemplate(
            f"{name}-lt",
            opts=child_options(self, opts, *made, protect=_protect(pool)),
            **kwargs_of(snake_kwargs(render_eks_launch_template(spec, pool, groups))),
        )
        ng_inputs = render_eks_node_group(spec, pool)
        ng_inputs["launchTemplate"] = {"id": lt.id, "version": lt.latest_version.apply(str)}
        ng = aws.eks.NodeGroup(
            f"{name}-ng",
            # The cluster autoscaler owns desiredSize; scaling limits stay under Pulumi's control.
            opts=pulumi.ResourceOptions.merge(
                child, pulumi.ResourceOptions(ignore_changes=["scalingConfig.desiredSize"])
            ),
            **kwargs_of(snake_kwargs(ng_inputs)),
        )
        asg = ng.resources.apply(_asg_name)
        self.autoscaler_tags = [
            aws.autoscaling.Tag(
                f"{name}-asg-{suffix}", autoscaling_group_name=asg, tag=tag, opts=child_options(self, opts)
            )
            for suffix, tag in autoscaler_tag_resources(spec, pool)
        ]
        self.placement_group = network.get("placement_group")
        self.efa_security_group = network.get("efa_security_group")
        self.launch_template, self.node_group = lt, ng
        self.node_group_name = ng.node_group_name
        self.launch_template_id = lt.id
        self.register_outputs({"nodeGroupName": self.node_group_name, "launchTemplateId": self.launch_template_id})


@dataclass(frozen=True)
class EksNodeHealthArgs:
    """Inputs of EksNodeHealth: the validated spec."""

    spec: PlatformSpec

    def __post_init__(self) -> None:
        check_component_args(self.spec)


class EksNodeHealth(pulumi.ComponentResource):
    """What takes a node with a faulty GPU out of service on EKS (`gpu-platform:index:EksNodeHealth`).

    Child: `<name>-node-monitoring-agent`, the EKS add-on whose AcceleratedHardwareReady condition node auto
    repair acts on (inputs from `health.render_node_monitoring_addon`).
    """

    addon_name: pulumi.Output[str]

    def __init__(self, name: str, args: EksNodeHealthArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        token, own = registration("EksNodeHealth", opts)
        super().__init__(token, name, None, own)
        inputs = render_node_monitoring_addon(args.spec) or {}
        self.addon = (
            aws.eks.Addon(
                f"{name}-node-monitoring-agent", opts=child_options(self, opts), **kwargs_of(snake_kwargs(inputs))
            )
            if inputs
            else None
        )
        self.addon_name = pulumi.Output.from_input(inputs.get("addonName", ""))
        self.register_outputs({"addonName": self.addon_name})


@dataclass(frozen=True)
class KarpenterGpuNodePoolArgs:
    """Inputs of KarpenterGpuNodePool: the validated spec and the name of the pool to build."""

    spec: PlatformSpec
    pool: str

    def __post_init__(self) -> None:
        check_component_args(self.spec, self.pool)


class KarpenterGpuNodePool(pulumi.ComponentResource):
    """A GPU pool provisioned by Karpenter (`gpu-platform:index:KarpenterGpuNodePool`): EC2NodeClass and NodePool
    (Kubernetes provider from `opts.providers`), plus the EFA security group and placement group they select."""

    node_pool_name: pulumi.Output[str]

    def __init__(self, name: str, args: KarpenterGpuNodePoolArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        spec, pool = args.spec, args.spec.pools_by_name[args.pool]
        protect = pulumi.ResourceOptions(protect=True) if pool.protect else None
        token, own = registration("KarpenterGpuNodePool", pulumi.ResourceOptions.merge(opts, protect))
        super().__init__(token, name, None, own)
        child = child_options(self, opts, protect=_protect(pool))
        network = _efa_and_placement(name, spec, pool, self, child)
        made = [network.get("placement_group"), network.get("efa_security_group")]
        # The node class selects the security group and placement group by tag and name: create them first.
        self.node_class = k8s_object(
            name, render_ec2_node_class(spec, pool), child_options(self, opts, *made, protect=_protect(pool))
        )
        self.node_pool = k8s_object(
            name,
            render_karpenter_node_pool(spec, pool),
            child_options(self, opts, self.node_class, protect=_protect(pool)),
        )
        self.placement_group = network.get("placement_group")
        self.efa_security_group = network.get("efa_security_group")
        self.node_pool_name = pulumi.Output.from_input(pool.name)
        self.register_outputs({"nodePoolName": self.node_pool_name})
