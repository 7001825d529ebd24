"""EksGpuNodePool: one GPU pool as an EKS managed node group with its launch template (inputs from `eks`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pulumi
import pulumi_aws as aws

from ..options import child_options
from ..spec import PlatformSpec
from .eks import (
    CA_TEMPLATE_PREFIX,
    autoscaler_tags,
    render_eks_launch_template,
    render_eks_node_group,
)
from .health import render_node_monitoring_addon
from .render import snake_kwargs

__all__ = ["EksGpuNodePool", "EksGpuNodePoolArgs", "EksNodeHealth", "EksNodeHealthArgs"]

def _asg_name(resources: Any) -> str | None:
    """Name of the node group's Auto Scaling group (None until the node group exists)."""
    try:
        return resources[0].autoscaling_groups[0].name
    except (IndexError, TypeError, AttributeError):
        return None


@dataclass(frozen=True)
class EksGpuNodePoolArgs:
    """Inputs of EksGpuNodePool: the validated spec and the name of the pool to build."""

    spec: PlatformSpec
    pool: str


class EksGpuNodePool(pulumi.ComponentResource):
    """A GPU pool on EKS (`gpu-platform:nodepools:EksGpuNodePool`): launch template, node group, ASG tags."""

    node_group_name: pulumi.Output[str]
    launch_template_id: pulumi.Output[str]

    def __init__(self, name: str, args: EksGpuNodePoolArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        spec, pool = args.spec, args.spec.pools_by_name[args.pool]
        protect = pulumi.ResourceOptions(protect=True) if pool.protect else None
        super().__init__("gpu-platform:nodepools:EksGpuNodePool", name, None,
                         pulumi.ResourceOptions.merge(opts, protect))
        child = child_options(self, opts, protect=True if pool.protect else None)  # else inherit
        lt = aws.ec2.LaunchTemplate(f"{name}-lt", opts=child, **snake_kwargs(render_eks_launch_template(spec, pool)))
        ng_inputs = render_eks_node_group(spec, pool)
        ng_inputs["launchTemplate"] = {"id": lt.id, "version": lt.latest_version.apply(str)}
        ng = aws.eks.NodeGroup(
            f"{name}-ng",
            # The cluster autoscaler owns desiredSize; scaling limits stay under Pulumi's control.
            opts=pulumi.ResourceOptions.merge(child, pulumi.ResourceOptions(
                ignore_changes=["scalingConfig.desiredSize"], delete_before_replace=True)),
            **snake_kwargs(ng_inputs),
        )
        asg = ng.resources.apply(_asg_name)
        self.autoscaler_tags = [
            aws.autoscaling.Tag(
                f"{name}-asg-{key.removeprefix(CA_TEMPLATE_PREFIX + '/')}",
                autoscaling_group_name=asg,
                tag={"key": key, "value": value, "propagateAtLaunch": False},
                opts=child_options(self, opts),
            )
            for key, value in autoscaler_tags(spec, pool).items()
        ]
        self.launch_template, self.node_group = lt, ng
        self.node_group_name = ng.node_group_name
        self.launch_template_id = lt.id
        self.register_outputs({"nodeGroupName": self.node_group_name, "launchTemplateId": self.launch_template_id})


@dataclass(frozen=True)
class EksNodeHealthArgs:
    """Inputs of EksNodeHealth: the validated spec."""

    spec: PlatformSpec


class EksNodeHealth(pulumi.ComponentResource):
    """What takes a node with a faulty GPU out of service on EKS (`gpu-platform:nodepools:EksNodeHealth`).

    Child: `<name>-node-monitoring-agent`, the EKS add-on whose AcceleratedHardwareReady condition node auto
    repair acts on (inputs from `health.render_node_monitoring_addon`).
    """

    addon_name: pulumi.Output[str]

    def __init__(self, name: str, args: EksNodeHealthArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("gpu-platform:nodepools:EksNodeHealth", name, None, opts)
        inputs = render_node_monitoring_addon(args.spec) or {}
        self.addon = aws.eks.Addon(f"{name}-node-monitoring-agent", opts=child_options(self, opts),
                                   **snake_kwargs(inputs)) if inputs else None
        self.addon_name = pulumi.Output.from_input(inputs.get("addonName", ""))
        self.register_outputs({"addonName": self.addon_name})
