"""GpuPlatform: validates the spec first, then composes the per-domain components."""

from dataclasses import dataclass
from typing import Any

import pulumi

from .admission.component import GpuAdmission, GpuAdmissionArgs
from .attach import ClusterInputError, spec_with_cluster
from .autoscaling.component import GpuAutoscaling, GpuAutoscalingArgs
from .composition import render_platform
from .errors import Finding, GpuPlatformError, MissingExtraError, Severity, SpecError
from .gpu_operator.component import GpuOperator, GpuOperatorArgs
from .load import revalidate
from .nodepools.component import GpuNodeAddons, GpuNodeAddonsArgs
from .observability.component import GpuObservability, GpuObservabilityArgs
from .options import PlatformSpecError, waits_for
from .queues.component import GpuQueues, GpuQueuesArgs
from .spec import Cloud, PlatformSpec, Provisioner
from .validation import ensure_valid

__all__ = ["GpuPlatform", "GpuPlatformArgs"]


class PlatformArgsError(ClusterInputError, pulumi.RunError):
    """`cluster` or `k8s_provider` given to GpuPlatform cannot be used; a RunError, so shown without a traceback."""


class PlatformExtraError(GpuPlatformError, pulumi.RunError):
    """The spec's cloud needs an extra that is not installed (`MissingExtraError`); a RunError, so shown without a
    traceback, raised before anything is registered."""


def _cloud_modules(spec: PlatformSpec) -> None:
    """Import the spec's cloud's pool components now: a missing extra fails before any resource is registered."""
    try:
        if spec.cloud == Cloud.AWS:
            from .nodepools import aws  # noqa: F401
        else:
            from .nodepools import gcp  # noqa: F401
    except MissingExtraError as e:
        raise PlatformExtraError(str(e)) from None


@dataclass(frozen=True)
class GpuPlatformArgs:
    """Inputs of GpuPlatform.

    Attributes:
        spec: the platform. What shapes it (pools, sharing, tiers, teams, quotas) is plain and validated before
            anything is registered; fields that name existing objects (cluster name, node role, subnets, KMS keys,
            GCP project and service account, the autoscaler's role) may be Pulumi Inputs, checked when they resolve.
        cluster: optional cluster the platform runs on (`pulumi_aws.eks.Cluster`, `pulumi_eks.Cluster`,
            `pulumi_gcp.container.Cluster`, or any object with a `name` Output; see `attach`): its name is used,
            every child waits for it, and a pulumi_eks cluster's `instance_roles` give an unset node role.
        k8s_provider: the Kubernetes provider of the Kubernetes children (default: `opts.providers`, then a
            `provider` attribute of `cluster` when it is a provider resource, then the ambient kubeconfig).

    """

    spec: PlatformSpec
    cluster: Any | None = None
    k8s_provider: pulumi.ProviderResource | None = None


class GpuPlatform(pulumi.ComponentResource):
    """The whole tiered GPU platform of one cluster (`gpu-platform:index:GpuPlatform`).

    Children (names are public API): `<name>-<pool>` node pool components, `<name>-node-addons` (only when the
    spec needs cluster-autoscaler, the EFA device plugin or GKE's driver installer), `<name>-gpu-operator` (absent
    on GKE's gke-native GPU stack), `<name>-queues`, `<name>-observability`, `<name>-admission` and
    `<name>-autoscaling` (when KEDA is enabled); on EKS `<name>-node-health` (the node monitoring agent add-on).
    `depends_on` given to the platform reaches every child (Pulumi does not pass it down by itself); providers
    and `protect` are inherited through the parent.

    Outputs (see `outputs.platform_outputs`): `nodePoolNames`, `tierNames`, `teams` (namespaces, LocalQueue,
    ClusterQueue and tiers per team), `tiers` (labels, resource, node selector, tolerations and priority
    classes per tier: what a workload must carry), `nodeGroups` (per pool, the cloud node group or node pool
    name), `prometheusUrl` and `opencostUrl`.
    """

    node_pool_names: pulumi.Output[list[str]]
    tier_names: pulumi.Output[list[str]]
    teams: pulumi.Output[dict[str, Any]]
    tiers: pulumi.Output[dict[str, Any]]
    node_groups: pulumi.Output[dict[str, str]]
    prometheus_url: pulumi.Output[str]
    opencost_url: pulumi.Output[str | None]

    def __init__(self, name: str, args: GpuPlatformArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        _check_provider(args.k8s_provider)
        try:
            spec = spec_with_cluster(args.spec, args.cluster) if args.cluster is not None else args.spec
        except ClusterInputError as e:
            raise PlatformArgsError(str(e)) from None
        # Validate before anything is registered: a bad spec creates nothing. Every field is checked again, since
        # `model_copy(update=...)` sets values without validation.
        try:
            spec = revalidate(spec)
            self.findings = ensure_valid(spec)
        except SpecError as e:
            raise PlatformSpecError(e.findings, e.source) from None
        _cloud_modules(spec)
        opts = _with_cluster(opts, args)
        super().__init__("gpu-platform:index:GpuPlatform", name, None, opts)
        _log(self.findings, self)
        rendered = render_platform(spec)
        child = pulumi.ResourceOptions(parent=self, depends_on=waits_for(opts))
        self.node_pools = _node_pools(name, spec, child)
        self.node_health = _node_health(name, spec, child) if rendered.node_health else None
        self.node_addons = (
            GpuNodeAddons(f"{name}-node-addons", GpuNodeAddonsArgs(spec=spec), child) if rendered.node_addons else None
        )
        self.gpu_operator = (
            GpuOperator(f"{name}-gpu-operator", GpuOperatorArgs(spec=spec), child) if rendered.gpu_operator else None
        )
        self.observability = GpuObservability(f"{name}-observability", GpuObservabilityArgs(spec=spec), child)
        self.admission = GpuAdmission(f"{name}-admission", GpuAdmissionArgs(spec=spec), child)
        # Kueue's and KEDA's charts create ServiceMonitors: install them after the Prometheus Operator CRDs. Team
        # namespaces come after admission: its namespace guard must know a namespace's new grants before they are set.
        after_crds = pulumi.ResourceOptions(parent=self, depends_on=waits_for(opts, self.observability))
        after_guard = pulumi.ResourceOptions(
            parent=self, depends_on=waits_for(opts, self.observability, self.admission)
        )
        self.queues = GpuQueues(f"{name}-queues", GpuQueuesArgs(spec=spec), after_guard)
        self.autoscaling = (
            GpuAutoscaling(f"{name}-autoscaling", GpuAutoscalingArgs(spec=spec), after_crds)
            if rendered.autoscaling
            else None
        )
        plain = rendered.outputs
        self.node_pool_names = pulumi.Output.from_input(plain["nodePoolNames"])
        self.tier_names = pulumi.Output.from_input(plain["tierNames"])
        self.teams = pulumi.Output.from_input(plain["teams"])
        self.tiers = pulumi.Output.from_input(plain["tiers"])
        self.node_groups = pulumi.Output.all(
            **{p.name: _group_name(c) for p, c in zip(spec.node_pools, self.node_pools, strict=True)}
        )
        self.prometheus_url = pulumi.Output.from_input(plain["prometheusUrl"])
        self.opencost_url = pulumi.Output.from_input(plain["opencostUrl"])
        self.register_outputs(
            {
                "nodePoolNames": self.node_pool_names,
                "tierNames": self.tier_names,
                "teams": self.teams,
                "tiers": self.tiers,
                "nodeGroups": self.node_groups,
                "prometheusUrl": self.prometheus_url,
                "opencostUrl": self.opencost_url,
            }
        )


def _check_provider(provider: Any) -> None:
    """A `k8s_provider` that is not a Kubernetes provider would be dropped by Pulumi (with a warning only), leaving
    every Kubernetes object to the ambient kubeconfig: refuse it."""
    if provider is None:
        return
    package = getattr(provider, "package", None)
    if not isinstance(provider, pulumi.ProviderResource) or package != "kubernetes":
        what = (
            f"a provider of package {package!r}"
            if isinstance(provider, pulumi.ProviderResource)
            else f"a {type(provider).__name__}"
        )
        raise PlatformArgsError(
            f"k8s_provider: {what}; allowed: a pulumi_kubernetes.Provider (or leave it unset to "
            "use opts.providers, the cluster's provider or the ambient kubeconfig)"
        )


def _with_cluster(opts: pulumi.ResourceOptions | None, args: GpuPlatformArgs) -> pulumi.ResourceOptions | None:
    """`opts` plus waiting for the cluster and its Kubernetes provider (children inherit both through the parent)."""
    extra = pulumi.ResourceOptions()
    if isinstance(args.cluster, pulumi.Resource):
        extra.depends_on = [args.cluster]  # merge appends it to what opts waits for
    given = opts.providers if opts else None
    has_k8s = (
        "kubernetes" in given
        if isinstance(given, dict)
        else any(getattr(p, "package", None) == "kubernetes" for p in given or [])
    )
    provider = args.k8s_provider or (None if has_k8s else _cluster_provider(args.cluster))
    if provider is not None:
        extra.providers = {"kubernetes": provider}
    return pulumi.ResourceOptions.merge(opts, extra)


def _cluster_provider(cluster: Any) -> pulumi.ProviderResource | None:
    """A cluster component's own Kubernetes provider (a `provider` attribute that is a kubernetes provider)."""
    provider = getattr(cluster, "provider", None)
    if isinstance(provider, pulumi.ProviderResource) and getattr(provider, "package", None) == "kubernetes":
        return provider
    return None


def _group_name(pool: pulumi.ComponentResource) -> pulumi.Output[str]:
    """The cloud name of a pool component's node group (EKS) or node pool (GKE)."""
    # An EKS pool's component has node_group_name, a GKE pool's node_pool_name (typed in modules of the cloud SDKs)
    name: pulumi.Output[str] = getattr(pool, "node_group_name", None) or pool.node_pool_name  # type: ignore[attr-defined]
    return name


def _log(findings: list[Finding], resource: pulumi.Resource) -> None:
    """Warnings and notes of validation, shown by `pulumi preview` / `up` on the platform resource."""
    for f in findings:
        (pulumi.log.warn if f.severity == Severity.WARNING else pulumi.log.info)(str(f), resource)


def _node_pools(name: str, spec: PlatformSpec, opts: pulumi.ResourceOptions) -> list[pulumi.ComponentResource]:
    """One node pool component per pool, for the spec's cloud (only that cloud's SDK is imported)."""
    if spec.cloud == Cloud.AWS:
        from .nodepools import aws

        kinds = {
            Provisioner.MANAGED_NODE_GROUP: (aws.EksGpuNodePool, aws.EksGpuNodePoolArgs),
            Provisioner.KARPENTER: (aws.KarpenterGpuNodePool, aws.KarpenterGpuNodePoolArgs),
        }
        return [
            kinds[p.aws.provisioner][0](f"{name}-{p.name}", kinds[p.aws.provisioner][1](spec=spec, pool=p.name), opts)
            for p in spec.node_pools
        ]
    from .nodepools.gcp import GkeGpuNodePool, GkeGpuNodePoolArgs

    return [
        GkeGpuNodePool(f"{name}-{p.name}", GkeGpuNodePoolArgs(spec=spec, pool=p.name), opts) for p in spec.node_pools
    ]


def _node_health(name: str, spec: PlatformSpec, opts: pulumi.ResourceOptions) -> pulumi.ComponentResource:
    """EKS: the node monitoring agent add-on that lets node auto repair act on GPU faults."""
    from .nodepools.aws import EksNodeHealth, EksNodeHealthArgs  # pulumi_aws: imported only for EKS specs

    return EksNodeHealth(f"{name}-node-health", EksNodeHealthArgs(spec=spec), opts)
