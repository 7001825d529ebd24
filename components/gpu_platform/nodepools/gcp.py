"""GkeGpuNodePool: one GPU pool as a GKE node pool (inputs from `gke`)."""

from __future__ import annotations

from dataclasses import dataclass

import pulumi
import pulumi_gcp as gcp

from ..options import child_options
from ..wiring import kwargs_of
from ..spec import PlatformSpec
from .gke import render_gke_node_pool
from .render import snake_kwargs

__all__ = ["GkeGpuNodePool", "GkeGpuNodePoolArgs"]


@dataclass(frozen=True)
class GkeGpuNodePoolArgs:
    """Inputs of GkeGpuNodePool: the validated spec and the name of the pool to build."""

    spec: PlatformSpec
    pool: str


class GkeGpuNodePool(pulumi.ComponentResource):
    """A GPU pool on GKE (`gpu-platform:nodepools:GkeGpuNodePool`): one `gcp.container.NodePool`."""

    node_pool_name: pulumi.Output[str]

    def __init__(self, name: str, args: GkeGpuNodePoolArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        spec, pool = args.spec, args.spec.pools_by_name[args.pool]
        protect = pulumi.ResourceOptions(protect=True) if pool.protect else None
        super().__init__("gpu-platform:nodepools:GkeGpuNodePool", name, None,
                         pulumi.ResourceOptions.merge(opts, protect))
        # The pool name is fixed, so a replacement (any guest accelerator change) must delete first.
        child = child_options(self, opts, protect=True if pool.protect else None,  # else inherit
                                      delete_before_replace=True)
        self.node_pool = gcp.container.NodePool(f"{name}-np", opts=child,
                                                **kwargs_of(snake_kwargs(render_gke_node_pool(spec, pool))))
        self.node_pool_name = self.node_pool.name
        self.register_outputs({"nodePoolName": self.node_pool_name})
