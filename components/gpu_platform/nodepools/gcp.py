"""GkeGpuNodePool: one GPU pool as a GKE node pool (inputs from `gke`)."""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial

import pulumi

from ..errors import MissingExtraError

try:
    import pulumi_gcp as gcp
except ImportError as e:  # the gcp extra is not installed
    raise MissingExtraError("gcp", "GPU node pools on GKE", e) from None

from ..options import check_component_args, child_options, registration
from ..spec import PlatformSpec
from ..wiring import input_of, kwargs_of
from .gke import node_pool_name, render_gke_node_pool, replacement_fields
from .render import snake_kwargs

__all__ = ["GkeGpuNodePool", "GkeGpuNodePoolArgs"]


@dataclass(frozen=True)
class GkeGpuNodePoolArgs:
    """Inputs of GkeGpuNodePool: the validated spec and the name of the pool to build."""

    spec: PlatformSpec
    pool: str

    def __post_init__(self) -> None:
        check_component_args(self.spec, self.pool)


class GkeGpuNodePool(pulumi.ComponentResource):
    """A GPU pool on GKE (`gpu-platform:index:GkeGpuNodePool`): one `gcp.container.NodePool` (`<name>-np`).

    The node pool is named `<pool>-<hash of the fields that replace it>` (`gke.node_pool_name`) and replaced
    create-before-delete: a change that replaces it creates the new pool, under its new name, first. Its Pulumi
    name stays `<name>-np`, so existing stacks keep their URNs (the first update after upgrading from fixed names
    renames, i.e. replaces, each pool once, new pool first).
    """

    node_pool_name: pulumi.Output[str]

    def __init__(self, name: str, args: GkeGpuNodePoolArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        spec, pool = args.spec, args.spec.pools_by_name[args.pool]
        protect = pulumi.ResourceOptions(protect=True) if pool.protect else None
        token, own = registration("GkeGpuNodePool", pulumi.ResourceOptions.merge(opts, protect))
        super().__init__(token, name, None, own)
        child = child_options(self, opts, protect=True if pool.protect else None)  # else inherit
        inputs = render_gke_node_pool(spec, pool)
        fields = input_of(replacement_fields(inputs))
        if not isinstance(fields, dict):  # a service account given as an Input: the name hashes its resolved value
            inputs["name"] = pulumi.Output.from_input(fields).apply(partial(node_pool_name, pool.name))
        self.node_pool = gcp.container.NodePool(f"{name}-np", opts=child, **kwargs_of(snake_kwargs(inputs)))
        self.node_pool_name = self.node_pool.name
        self.register_outputs({"nodePoolName": self.node_pool_name})
