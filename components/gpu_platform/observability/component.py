"""GpuObservability: the Prometheus stack, OpenCost, the platform's rules, ServiceMonitors and dashboard."""

from __future__ import annotations

from dataclasses import dataclass

import pulumi

from ..k8s import helm_release_resource, k8s_objects
from ..options import check_component_args, child_options, registration
from ..spec import PlatformSpec
from .render import render_observability

__all__ = ["GpuObservability", "GpuObservabilityArgs"]


@dataclass(frozen=True)
class GpuObservabilityArgs:
    """Inputs of GpuObservability: the validated spec. The Kubernetes provider comes in `opts.providers`."""

    spec: PlatformSpec

    def __post_init__(self) -> None:
        check_component_args(self.spec)


class GpuObservability(pulumi.ComponentResource):
    """Monitoring and cost (`gpu-platform:index:GpuObservability`)."""

    rule_name: pulumi.Output[str]
    releases: pulumi.Output[list[str]]

    def __init__(self, name: str, args: GpuObservabilityArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        token, own = registration("GpuObservability", opts)
        super().__init__(token, name, None, own)
        docs = render_observability(args.spec)
        child = child_options(self, opts)
        self.prometheus = (
            helm_release_resource(f"{name}-kube-prometheus-stack", docs.prometheus, child) if docs.prometheus else None
        )
        # The rule and ServiceMonitor CRDs come with kube-prometheus-stack when it is installed here.
        after = child_options(self, opts, self.prometheus)
        self.opencost = helm_release_resource(f"{name}-opencost", docs.opencost, after) if docs.opencost else None
        self.objects = k8s_objects(name, docs.objects, after)
        self.rule_name = pulumi.Output.from_input(docs.rule_name)
        self.releases = pulumi.Output.from_input(docs.release_names)
        self.register_outputs({"ruleName": self.rule_name, "releases": self.releases})
