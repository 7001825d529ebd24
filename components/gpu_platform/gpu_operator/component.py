"""GpuOperator: the NVIDIA GPU Operator Helm release with the platform's per-pool ConfigMaps."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pulumi

from ..k8s import helm_release_resource, k8s_objects
from ..options import check_component_args, child_options, registration
from ..spec import PlatformSpec
from .render import render_gpu_operator

__all__ = ["GpuOperator", "GpuOperatorArgs"]


@dataclass(frozen=True)
class GpuOperatorArgs:
    """Inputs of GpuOperator: the validated spec. The Kubernetes provider comes in `opts.providers`."""

    spec: PlatformSpec

    def __post_init__(self) -> None:
        check_component_args(self.spec)


class GpuOperator(pulumi.ComponentResource):
    """Namespace, device-plugin / mig-parted / DCGM ConfigMaps and the `nvidia/gpu-operator` release."""

    namespace: pulumi.Output[str]
    device_plugin_config: pulumi.Output[str]
    release_status: pulumi.Output[dict[str, Any]]

    def __init__(self, name: str, args: GpuOperatorArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        token, own = registration("GpuOperator", opts)
        super().__init__(token, name, None, own)
        rendered = render_gpu_operator(args.spec)
        child = child_options(self, opts)
        self.objects = k8s_objects(name, list(rendered.documents), child)
        # The release reads the ConfigMaps by name: create them (and the namespace) first.
        self.release = helm_release_resource(
            f"{name}-release", rendered.release, child_options(self, opts, *self.objects)
        )
        self.namespace = pulumi.Output.from_input(rendered.namespace)
        self.device_plugin_config = pulumi.Output.from_input(rendered.names.device_plugin)
        self.release_status = self.release.status
        self.register_outputs(
            {
                "namespace": self.namespace,
                "devicePluginConfig": self.device_plugin_config,
                "releaseStatus": self.release_status,
            }
        )
