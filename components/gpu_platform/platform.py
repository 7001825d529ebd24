"""GpuPlatform: validates the spec first, then composes the per-domain components."""

from __future__ import annotations

from dataclasses import dataclass

import pulumi

from .admission.component import GpuAdmission, GpuAdmissionArgs
from .autoscaling.component import GpuAutoscaling, GpuAutoscalingArgs
from .contract import operator_enabled
from .gpu_operator.component import GpuOperator, GpuOperatorArgs
from .nodepools.health import render_node_monitoring_addon
from .observability.component import GpuObservability, GpuObservabilityArgs
from .queues.component import GpuQueues, GpuQueuesArgs
from .spec import Cloud, PlatformSpec
from .validation import ensure_valid

__all__ = ["GpuPlatform", "GpuPlatformArgs"]


@dataclass(frozen=True)
class GpuPlatformArgs:
    """Inputs of GpuPlatform: the spec (plain values). The Kubernetes provider comes in `opts.providers`."""

    spec: PlatformSpec


class GpuPlatform(pulumi.ComponentResource):
    """The whole tiered GPU platform of one cluster (`gpu-platform:index:GpuPlatform`).

    Children (names are public API): `<name>-<pool>` node pool components, `<name>-gpu-operator` (absent on
    GKE's gke-native GPU stack), `<name>-queues`, `<name>-observability`, `<name>-admission` and
    `<name>-autoscaling` (when KEDA is enabled); on EKS `<name>-node-health` (the node monitoring agent add-on).
    """

    node_pool_names: pulumi.Output[list[str]]
    tier_names: pulumi.Output[list[str]]

    def __init__(self, name: str, args: GpuPlatformArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        # Validate before anything is registered: a bad spec creates nothing.
        self.findings = ensure_valid(args.spec)
        super().__init__("gpu-platform:index:GpuPlatform", name, None, opts)
        spec = args.spec
        child = pulumi.ResourceOptions(parent=self)
        self.node_pools = _node_pools(name, spec, child)
        self.node_health = _node_health(name, spec, child)
        self.gpu_operator = (GpuOperator(f"{name}-gpu-operator", GpuOperatorArgs(spec=spec), child)
                             if operator_enabled(spec) else None)
        self.observability = GpuObservability(f"{name}-observability", GpuObservabilityArgs(spec=spec), child)
        # Kueue's chart creates a ServiceMonitor: install it after the Prometheus Operator CRDs.
        self.queues = GpuQueues(f"{name}-queues", GpuQueuesArgs(spec=spec),
                                pulumi.ResourceOptions(parent=self, depends_on=[self.observability]))
        self.admission = GpuAdmission(f"{name}-admission", GpuAdmissionArgs(spec=spec), child)
        # KEDA's chart creates ServiceMonitors: install it after the Prometheus Operator CRDs.
        self.autoscaling = (GpuAutoscaling(f"{name}-autoscaling", GpuAutoscalingArgs(spec=spec),
                                           pulumi.ResourceOptions(parent=self, depends_on=[self.observability]))
                            if spec.autoscaling.keda.enabled else None)
        self.node_pool_names = pulumi.Output.from_input([p.name for p in spec.node_pools])
        self.tier_names = pulumi.Output.from_input([t.name for t in spec.tiers])
        self.register_outputs({"nodePoolNames": self.node_pool_names, "tierNames": self.tier_names})


def _node_pools(name: str, spec: PlatformSpec, opts: pulumi.ResourceOptions) -> list[pulumi.ComponentResource]:
    """One node pool component per pool, for the spec's cloud (only that cloud's SDK is imported)."""
    if spec.cloud == Cloud.AWS:
        from .nodepools.aws import EksGpuNodePool as Pool
        from .nodepools.aws import EksGpuNodePoolArgs as PoolArgs
    else:
        from .nodepools.gcp import GkeGpuNodePool as Pool
        from .nodepools.gcp import GkeGpuNodePoolArgs as PoolArgs
    return [Pool(f"{name}-{p.name}", PoolArgs(spec=spec, pool=p.name), opts) for p in spec.node_pools]


def _node_health(name: str, spec: PlatformSpec, opts: pulumi.ResourceOptions) -> pulumi.ComponentResource | None:
    """EKS: the node monitoring agent add-on that lets node auto repair act on GPU faults (None elsewhere)."""
    if not render_node_monitoring_addon(spec):
        return None
    from .nodepools.aws import EksNodeHealth, EksNodeHealthArgs

    return EksNodeHealth(f"{name}-node-health", EksNodeHealthArgs(spec=spec), opts)
