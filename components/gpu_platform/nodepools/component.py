"""GpuNodeAddons: the node pools' cluster-wide companions as Kubernetes resources (no cloud SDK)."""

from __future__ import annotations

from dataclasses import dataclass

import pulumi

from ..k8s import helm_release_resource, k8s_objects
from ..options import check_component_args, child_options, registration
from ..spec import PlatformSpec
from .addons import render_node_addons

__all__ = ["GpuNodeAddons", "GpuNodeAddonsArgs"]


@dataclass(frozen=True)
class GpuNodeAddonsArgs:
    """Inputs of GpuNodeAddons: the validated spec. The Kubernetes provider comes in `opts.providers`."""

    spec: PlatformSpec

    def __post_init__(self) -> None:
        check_component_args(self.spec)


class GpuNodeAddons(pulumi.ComponentResource):
    """cluster-autoscaler and EFA device plugin releases (`<name>-<release>`) and the GKE driver installer
    (`gpu-platform:index:GpuNodeAddons`)."""

    release_names: pulumi.Output[list[str]]

    def __init__(self, name: str, args: GpuNodeAddonsArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        token, own = registration("GpuNodeAddons", opts)
        super().__init__(token, name, None, own)
        rendered = render_node_addons(args.spec)
        child = child_options(self, opts)
        self.objects = k8s_objects(name, list(rendered.documents), child)
        self.releases = [helm_release_resource(f"{name}-{r['name']}", r, child) for r in rendered.releases]
        self.release_names = pulumi.Output.from_input(rendered.release_names)
        self.register_outputs({"releaseNames": self.release_names})
