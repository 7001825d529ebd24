"""GpuAutoscaling: the KEDA release and the queue-depth ScaledObjects."""

from __future__ import annotations

from dataclasses import dataclass

import pulumi

from ..k8s import helm_release_resource, k8s_objects
from ..options import check_component_args, child_options, registration
from ..spec import PlatformSpec
from .render import render_autoscaling

__all__ = ["GpuAutoscaling", "GpuAutoscalingArgs"]


@dataclass(frozen=True)
class GpuAutoscalingArgs:
    """Inputs of GpuAutoscaling: the validated spec. The Kubernetes provider comes in `opts.providers`."""

    spec: PlatformSpec

    def __post_init__(self) -> None:
        check_component_args(self.spec)


class GpuAutoscaling(pulumi.ComponentResource):
    """KEDA and ScaledObjects (`gpu-platform:index:GpuAutoscaling`)."""

    scaled_objects: pulumi.Output[list[str]]

    def __init__(self, name: str, args: GpuAutoscalingArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        token, own = registration("GpuAutoscaling", opts)
        super().__init__(token, name, None, own)
        docs = render_autoscaling(args.spec)
        # What the component waits for (the Prometheus Operator CRDs for KEDA's ServiceMonitors) KEDA waits for.
        outer = child_options(self, opts)
        self.keda = helm_release_resource(f"{name}-keda", docs.keda, outer) if docs.keda else None
        # The ScaledObject CRD comes with the chart.
        after = child_options(self, opts, self.keda)
        self.objects = k8s_objects(name, docs.scaled_objects, after)
        self.scaled_objects = pulumi.Output.from_input(docs.names)
        self.register_outputs({"scaledObjects": self.scaled_objects})
