"""GpuPlatform: validates the spec first, then composes the per-domain components."""

from __future__ import annotations

from dataclasses import dataclass

import pulumi

from .spec import PlatformSpec
from .validation import ensure_valid

__all__ = ["GpuPlatform", "GpuPlatformArgs"]


@dataclass(frozen=True)
class GpuPlatformArgs:
    """Inputs of GpuPlatform: the spec (plain values). The Kubernetes provider comes in `opts.providers`."""

    spec: PlatformSpec


class GpuPlatform(pulumi.ComponentResource):
    """The whole tiered GPU platform of one cluster (`gpu-platform:index:GpuPlatform`)."""

    node_pool_names: pulumi.Output[list[str]]

    def __init__(self, name: str, args: GpuPlatformArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        # Validate before anything is registered: a bad spec creates nothing.
        self.findings = ensure_valid(args.spec)
        super().__init__("gpu-platform:index:GpuPlatform", name, None, opts)
        spec = args.spec
        child = pulumi.ResourceOptions(parent=self)
        self.children: dict[str, pulumi.Resource | list] = {}
        # One line per domain; each domain fills its own method below.
        self.node_pools = self._node_pools(name, spec, child)
        self.gpu_operator = self._gpu_operator(name, spec, child)
        self.queues = self._queues(name, spec, child)
        self.observability = self._observability(name, spec, child)
        self.admission = self._admission(name, spec, child)
        self.node_pool_names = pulumi.Output.from_input([p.name for p in spec.node_pools])
        self.register_outputs({"nodePoolNames": self.node_pool_names})

    @staticmethod
    def _node_pools(name: str, spec: PlatformSpec, opts: pulumi.ResourceOptions) -> list[pulumi.Resource]:
        """One node pool component per pool, for the spec's cloud (its SDK imported only then)."""
        from .spec import Cloud

        if spec.cloud == Cloud.AWS:
            from .nodepools.aws import EksGpuNodePool as Pool, EksGpuNodePoolArgs as PoolArgs
        else:
            from .nodepools.gcp import GkeGpuNodePool as Pool, GkeGpuNodePoolArgs as PoolArgs
        return [Pool(f"{name}-{p.name}", PoolArgs(spec=spec, pool=p.name), opts) for p in spec.node_pools]

    @staticmethod
    def _gpu_operator(name: str, spec: PlatformSpec, opts: pulumi.ResourceOptions) -> pulumi.Resource | None:
        """The NVIDIA GPU Operator with per-pool sharing (not installed on GKE's gke-native GPU stack)."""
        from .gpu_operator.render import operator_enabled

        if not operator_enabled(spec):
            return None
        from .gpu_operator.component import GpuOperator, GpuOperatorArgs

        return GpuOperator(f"{name}-gpu-operator", GpuOperatorArgs(spec=spec), opts)

    @staticmethod
    def _queues(name: str, spec: PlatformSpec, opts: pulumi.ResourceOptions) -> pulumi.Resource | None:
        """Kueue / Volcano queues and the PriorityClass ladder."""
        from .queues.component import GpuQueues, GpuQueuesArgs

        return GpuQueues(f"{name}-queues", GpuQueuesArgs(spec=spec), opts)

    @staticmethod
    def _observability(name: str, spec: PlatformSpec, opts: pulumi.ResourceOptions) -> pulumi.Resource | None:
        """DCGM scraping, rules, alerts, OpenCost and dashboards."""
        from .observability.component import GpuObservability, GpuObservabilityArgs

        return GpuObservability(f"{name}-observability", GpuObservabilityArgs(spec=spec), opts)

    @staticmethod
    def _admission(name: str, spec: PlatformSpec, opts: pulumi.ResourceOptions) -> pulumi.Resource | None:
        """In-cluster admission: deny unclassified GPU pods, route tiered ones."""
        from .admission.component import GpuAdmission, GpuAdmissionArgs

        return GpuAdmission(f"{name}-admission", GpuAdmissionArgs(spec=spec), opts)
