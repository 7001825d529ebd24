"""The platform spec: one frozen pydantic v2 model tree, camelCase on the wire, unknown keys rejected.

`PlatformSpec.model_validate` checks structure (types, enums, bounds, unknown keys); the cross-field rules
(classification, MIG placement, quotas ...) live in `gpu_platform.validation`, which reports every error at
once with its field path. Use `gpu_platform.load.parse_spec` / `load_spec` to get both.
"""

from __future__ import annotations

from enum import StrEnum
from functools import cached_property
from typing import Annotated, Any

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    StrictInt,
    ValidationInfo,
    WrapValidator,
    field_validator,
)
from pydantic.alias_generators import to_camel

from .catalog import Catalog, InstanceType
from .catalog.resources import GPU_RESOURCE, mig_resource
from .catalog.xid import HARDWARE_XIDS
from .deferred import deferrable
from .names import (
    AwsRegion,
    ChartVersion,
    ClusterName,
    DnsLabel,
    DnsSubdomain,
    GcpLocation,
    GcpZone,
    InstanceTypeName,
    KubernetesMinor,
    LabelKey,
    LabelValue,
    Namespace,
    ReleaseName,
    TierName,
    UnprefixedChartVersion,
    cluster_name_problem,
    gcp_project_problem,
    gcp_region,
    raising,
    role_arn_problem,
    service_account_problem,
)

__all__ = [
    "MAX_COUNT",
    "Number",
    "PositiveFloat",
    "not_bool",
    "AmiType",
    "AwsSpec",
    "CapacityType",
    "Cloud",
    "Expander",
    "GcpSpec",
    "GkeGpuStack",
    "MutationEngine",
    "NodePool",
    "NodePoolAws",
    "NodePoolGcp",
    "PlatformSpec",
    "Provisioner",
    "QueueScaler",
    "Sharing",
    "SharingMode",
    "Team",
    "Tier",
    "MAX_HOURLY_PRICE",
    "AdmissionSpec",
    "GpuOperatorSpec",
    "KueueSpec",
    "PrometheusSpec",
    "VolcanoSpec",
]

MAX_COUNT = 1_000_000_000  # quotas and limits: far above any fleet, far below what overflows a float or a solver
MAX_NODES_PER_POOL = MAX_COUNT  # a bound against overflow; the node pool checks name the real limits (5,000)
MAX_HOURLY_PRICE = 1_000_000.0  # $/hour of one node


def not_bool(value: Any) -> Any:
    """YAML's true / false are not numbers (pydantic would read them as 1 and 0: `maxSize: true` as one node)."""
    if isinstance(value, bool):
        raise ValueError(f"{str(value).lower()}: not a number; allowed: a number (true and false are not)")  # noqa: TRY004
    return value


Integer = Annotated[int, BeforeValidator(not_bool)]
"""An integer field: numbers as pydantic reads them ("4" and 4.0 too), not true / false."""
Number = Annotated[float, BeforeValidator(not_bool)]
"""A float field: numbers, and strings YAML leaves as strings (1e3), as pydantic reads them; not true / false."""
NonNegInt = Annotated[Integer, Field(ge=0, le=MAX_COUNT)]


def _non_empty(value: str) -> None:
    if not value:
        raise ValueError("'' is empty; allowed: the id or name of an existing object")


_cluster = raising(cluster_name_problem)
_role_arn = raising(role_arn_problem)
_gcp_project = raising(gcp_project_problem)
_service_account = raising(service_account_problem)


# Fields that name existing cloud or cluster objects: plain strings from YAML; in Python also a Pulumi Input (an
# Output, a secret), kept as a `deferred.Deferred` and checked when it resolves (see `gpu_platform.deferred`).
ObjectRef = Annotated[str, WrapValidator(deferrable(_non_empty))]
ClusterRef = Annotated[ClusterName, WrapValidator(deferrable(_cluster))]
RoleArnRef = Annotated[str, AfterValidator(_role_arn), WrapValidator(deferrable(_role_arn))]
GcpProjectRef = Annotated[str, AfterValidator(_gcp_project), WrapValidator(deferrable(_gcp_project))]
ServiceAccountRef = Annotated[str, AfterValidator(_service_account), WrapValidator(deferrable(_service_account))]
PositiveFloat = Annotated[Number, Field(ge=0, le=MAX_HOURLY_PRICE)]


# Kubernetes int32 fields (ScaledObject minReplicaCount, maxReplicaCount, pollingInterval, cooldownPeriod).
INT32_MAX = 2**31 - 1


class _Model(BaseModel):
    model_config = ConfigDict(
        alias_generator=to_camel,
        populate_by_name=True,
        extra="forbid",
        frozen=True,
        use_enum_values=False,
        allow_inf_nan=False,
    )


class Cloud(StrEnum):
    """Where the cluster runs."""

    AWS = "aws"
    GCP = "gcp"


class SharingMode(StrEnum):
    """How a pool's GPUs are shared."""

    EXCLUSIVE = "exclusive"
    MIG = "mig"
    TIME_SLICING = "time-slicing"
    MPS = "mps"


class AmiType(StrEnum):
    """EKS AMI types for GPU node groups (botocore EKS model, AMITypes)."""

    AL2023_NVIDIA = "AL2023_x86_64_NVIDIA"
    BOTTLEROCKET_NVIDIA = "BOTTLEROCKET_x86_64_NVIDIA"


class CapacityType(StrEnum):
    """EKS capacity types (botocore EKS model, CapacityTypes)."""

    ON_DEMAND = "ON_DEMAND"
    SPOT = "SPOT"
    CAPACITY_BLOCK = "CAPACITY_BLOCK"


class Provisioner(StrEnum):
    """What provisions an EKS pool's nodes."""

    MANAGED_NODE_GROUP = "managed-node-group"
    KARPENTER = "karpenter"


class Expander(StrEnum):
    """cluster-autoscaler expander: which node group grows when several could."""

    LEAST_WASTE = "least-waste"
    PRIORITY = "priority"


class GkeGpuStack(StrEnum):
    """Who installs the GPU driver and device plugin on GKE."""

    GKE_NATIVE = "gke-native"
    GPU_OPERATOR = "gpu-operator"


class PreemptionPolicy(StrEnum):
    """Kubernetes PriorityClass preemption policy."""

    PREEMPT_LOWER = "PreemptLowerPriority"
    NEVER = "Never"


class MutationEngine(StrEnum):
    """What applies the routing mutation to tiered pods."""

    AUTO = "auto"
    MUTATING_ADMISSION_POLICY = "mutating-admission-policy"
    KYVERNO = "kyverno"
    NONE = "none"


class AwsSpec(_Model):
    """AWS account settings shared by every pool."""

    region: AwsRegion = Field(description="AWS region of the EKS cluster, e.g. us-east-1.")
    subnet_ids: list[ObjectRef] = Field(default_factory=list, description="Default subnets of every node group.")
    node_role_arn: RoleArnRef | None = Field(default=None, description="IAM role ARN the GPU nodes run as.")
    node_monitoring_agent: bool = Field(
        default=True,
        description="Install the EKS node monitoring agent add-on, which turns hardware XIDs into "
        "the AcceleratedHardwareReady=False node condition that node auto repair acts on.",
    )
    node_monitoring_agent_version: str | None = Field(
        default=None, description="eks-node-monitoring-agent add-on version (default: EKS's default for the cluster)."
    )


class GcpSpec(_Model):
    """GCP project settings shared by every pool."""

    project: GcpProjectRef = Field(description="GCP project ID.")
    location: GcpLocation = Field(description="GKE cluster location (region or zone), e.g. us-central1.")
    zones: list[GcpZone] = Field(
        default_factory=list, description="Default node locations of every pool: zones of the location's region."
    )
    gpu_stack: GkeGpuStack = Field(
        default=GkeGpuStack.GKE_NATIVE,
        description="gke-native: GKE's driver and device plugin; gpu-operator: NVIDIA GPU Operator manages them.",
    )
    service_account: ServiceAccountRef | None = Field(
        default=None, description="Service account e-mail of the GPU nodes."
    )
    driver_installer: bool = Field(
        default=True,
        description="gpu-operator stack: render Google's COS driver installer DaemonSet "
        "(GKE's own install is disabled).",
    )

    @field_validator("zones")
    @classmethod
    def _zones_of_the_region(cls, zones: list[str], info: ValidationInfo) -> list[str]:
        """GKE node locations are zones of the cluster's region (for a zonal cluster, its zone's region); checked
        here, beside the location, so that the error comes with every other field's."""
        location = info.data.get("location")
        region = gcp_region(location) if isinstance(location, str) else None
        bad = [f"{z!r} (zones[{k}])" for k, z in enumerate(zones) if region and gcp_region(z) != region]
        if bad:
            raise ValueError(
                f"{', '.join(bad)} not in the cluster's region {region!r} (gcp.location {location!r}); GKE places "
                f"node pools in the cluster's region only; allowed: zones like {region}-a"
            )
        return zones


class Sharing(_Model):
    """How one pool's GPUs are shared between pods."""

    mode: SharingMode = Field(description="exclusive | mig | time-slicing | mps.")
    replicas: Integer | None = Field(
        default=None,
        ge=-MAX_COUNT,
        le=1024,
        description="time-slicing/mps: pods per GPU (>= 2; mps <= 48). mig: optional time-slicing of each MIG slice.",
    )
    mig_layout: dict[str, NonNegInt] | None = Field(
        default=None, description="mig: MIG profile -> instances per GPU, e.g. {'3g.40gb': 1, '1g.10gb': 2}."
    )
    rename_by_default: bool = Field(
        default=False, description="Advertise shared resources as `<name>.shared` (device-plugin renameByDefault)."
    )
    fail_requests_greater_than_one: bool | None = Field(
        default=None, description="Reject requests for more than one shared unit (device-plugin default per mode)."
    )


class KarpenterOptions(_Model):
    """Karpenter options of one pool (aws.provisioner: karpenter)."""

    consolidate_after: str = Field(
        default="10m", description="How long a node must stay empty before Karpenter removes it (WhenEmpty only)."
    )
    expire_after: str = Field(
        default="Never", description="Node lifetime before forced replacement; Never keeps long training runs alive."
    )
    ami_version: str = Field(
        default="latest",
        description="EKS AMI release of the amiSelectorTerms alias, e.g. v20260801 (pin in production).",
    )


class NodePoolAws(_Model):
    """EKS options of one pool."""

    provisioner: Provisioner = Field(
        default=Provisioner.MANAGED_NODE_GROUP,
        description="managed-node-group (EKS node group and launch template) | karpenter (NodePool and EC2NodeClass).",
    )
    efa: bool | None = Field(
        default=None,
        description="One EFA interface per network card (default: on for exclusive pools on EFA-capable types).",
    )
    placement_group: bool | None = Field(
        default=None, description="Cluster placement group for the pool's nodes (default: on where EFA is on)."
    )
    karpenter: KarpenterOptions = Field(default_factory=KarpenterOptions, description="Karpenter options.")
    zone: str | None = Field(
        default=None,
        description="Karpenter pools: the one availability zone of the nodes (topology.kubernetes.io/zone "
        "requirement), e.g. us-east-1a; recommended with a cluster placement group.",
    )

    ami_type: AmiType = Field(default=AmiType.AL2023_NVIDIA, description="EKS AMI type.")
    capacity_type: CapacityType = Field(
        default=CapacityType.ON_DEMAND, description="ON_DEMAND | SPOT | CAPACITY_BLOCK."
    )
    capacity_reservation_id: ObjectRef | None = Field(
        default=None, description="EC2 capacity reservation (required for CAPACITY_BLOCK)."
    )
    subnet_ids: list[ObjectRef] | None = Field(
        default=None, description="Subnets of this pool (default: aws.subnetIds)."
    )
    root_volume_gib: Integer = Field(default=500, ge=20, le=16384, description="Encrypted gp3 root volume size in GiB.")
    root_volume_iops: Integer = Field(default=6000, ge=3000, le=16000, description="gp3 root volume IOPS.")
    root_volume_throughput: Integer = Field(default=500, ge=125, le=1000, description="gp3 root volume MiB/s.")
    kms_key_id: ObjectRef | None = Field(
        default=None, description="KMS key for the root volume (default: AWS managed)."
    )
    max_unavailable_percentage: Integer = Field(
        default=10, ge=1, le=100, description="Share of nodes an update may take down at once."
    )
    imds_hop_limit: Integer = Field(
        default=1,
        ge=1,
        le=64,
        description="IMDSv2 response hop limit: 1 keeps pods off the node role (use IRSA / Pod Identity); "
        "2 lets pods in.",
    )
    node_repair: bool = Field(default=True, description="EKS node auto repair (replaces nodes with failed GPUs).")


class NodePoolGcp(_Model):
    """GKE options of one pool."""

    zones: list[GcpZone] | None = Field(
        default=None, description="Node locations of this pool (default: gcp.zones), zones of gcp.location's region."
    )
    disk_size_gb: Integer = Field(default=500, ge=10, le=65536, description="Boot disk size in GB.")
    disk_type: str = Field(default="pd-ssd", description="Boot disk type.")
    spot: bool = Field(default=False, description="Use Spot VMs.")
    gpu_driver_version: str = Field(
        default="LATEST", description="gke-native stack: DEFAULT | LATEST (gpu-operator stack disables GKE's driver)."
    )
    image_type: str = Field(default="COS_CONTAINERD", description="Node image type.")
    location_policy: str = Field(default="ANY", description="Autoscaler zone choice: ANY (obtainability) | BALANCED.")
    auto_upgrade: bool = Field(default=True, description="GKE node auto-upgrade (required on release channels).")
    max_unavailable: Integer = Field(
        default=1, ge=1, le=MAX_NODES_PER_POOL, description="Nodes an upgrade may take down at once (no surge)."
    )
    compact_placement: bool | None = Field(
        default=None,
        description="COMPACT placement policy (default: on for exclusive A2/A3 pools in one zone, "
        "where GKE supports it).",
    )


class NodePool(_Model):
    """One GPU node pool: an EKS managed node group or a GKE node pool."""

    name: DnsLabel = Field(description="Pool name; a lower-case DNS label, used in labels, taints and object names.")
    instance_type: str = Field(description="AWS instance type or GCP machine type.")
    sharing: Sharing = Field(description="How the pool's GPUs are shared.")
    min_size: Integer = Field(default=0, ge=0, le=MAX_NODES_PER_POOL, description="Minimum node count.")
    max_size: Integer = Field(ge=0, le=MAX_NODES_PER_POOL, description="Maximum node count.")
    protect: bool = Field(default=False, description="Protect the node pool from deletion by Pulumi.")
    labels: dict[LabelKey, LabelValue] = Field(default_factory=dict, description="Extra node labels.")
    aws: NodePoolAws = Field(default_factory=NodePoolAws, description="EKS options.")
    gcp: NodePoolGcp = Field(default_factory=NodePoolGcp, description="GKE options.")


class Tier(_Model):
    """A workload class: it routes to one pool and one extended resource."""

    name: TierName = Field(
        description="Tier name, at most 59 characters (its priority class `gpu-<tier>` is a label value); pods "
        "carry it as `<labelDomain>/gpu-tier`."
    )
    pool: str = Field(description="The pool this tier runs on.")
    resource: str | None = Field(
        default=None,
        description="Extended resource; default nvidia.com/gpu, or the only profile of a one-profile MIG layout.",
    )
    priority: Integer | None = Field(
        default=None,
        ge=-2147483648,
        le=1000000000,
        description="PriorityClass value; default from the ladder by the pool's sharing: exclusive 100000, "
        "mig 50000, time-slicing 10000, mps 1000, minus 1000 per earlier defaulted tier of the same mode.",
    )
    preemption_policy: PreemptionPolicy = Field(
        default=PreemptionPolicy.PREEMPT_LOWER, description="PreemptLowerPriority | Never."
    )
    description: str | None = Field(default=None, description="Human description of the tier.")


class Team(_Model):
    """A tenant: namespaces, a cohort and quotas per tier."""

    name: DnsLabel = Field(description="Team name; its ClusterQueue and Volcano Queue are named after it.")
    namespaces: list[DnsLabel] = Field(
        min_length=1, max_length=1000, description="Namespaces of the team (each in one team only)."
    )
    cohort: DnsLabel | None = Field(default=None, description="Kueue cohort the team borrows and lends in.")
    quotas: dict[str, NonNegInt] = Field(
        default_factory=dict, description="Nominal quota per tier, in units of the tier's resource."
    )
    borrowing_limit: dict[str, NonNegInt] = Field(
        default_factory=dict, description="Per tier: how much more than quota the team may borrow (needs a cohort)."
    )
    lending_limit: dict[str, NonNegInt] = Field(
        default_factory=dict, description="Per tier: how much of its quota the team may lend (needs a cohort)."
    )
    weight: Integer = Field(default=1, ge=1, le=65535, description="Fair-sharing and Volcano queue weight.")


class CohortSpec(_Model):
    """A Kueue cohort, for nesting cohorts."""

    name: DnsLabel = Field(description="Cohort name.")
    parent: str | None = Field(default=None, description="Parent cohort (unset = root).")


class KueueSpec(_Model):
    """Kueue (admission and quota)."""

    enabled: bool = Field(default=True, description="Install Kueue and render its queues.")
    version: UnprefixedChartVersion = Field(default="0.19.2", description="Kueue Helm chart version.")
    chart: str = Field(default="oci://registry.k8s.io/kueue/charts/kueue", description="Kueue chart (OCI reference).")
    namespace: DnsLabel = Field(default="kueue-system", description="Kueue namespace.")
    fair_sharing: bool = Field(default=False, description="Enable fair sharing in the manager configuration.")
    queueing_strategy: str = Field(default="BestEffortFIFO", description="BestEffortFIFO | StrictFIFO.")
    integrations: list[str] = Field(
        default_factory=lambda: [
            "batch/job",
            "jobset.x-k8s.io/jobset",
            "kubeflow.org/pytorchjob",
            "ray.io/rayjob",
            "pod",
            "deployment",
            "statefulset",
            "leaderworkerset.x-k8s.io/leaderworkerset",
        ],
        description="Kueue integrations to enable. The serving ones (pod, deployment, statefulset, leaderworkerset) "
        "put inference quotas on Deployments, StatefulSets, LeaderWorkerSets and plain pods.",
    )
    manage_jobs_without_queue_name: bool = Field(
        default=True,
        description="Kueue holds every workload and pod created in a team namespace until it has a queue name "
        "(admission adds the team's), so nothing there runs outside quota when admission is late or down.",
    )
    values_overrides: dict[str, Any] = Field(default_factory=dict, description="Helm values deep-merged last.")


class VolcanoSpec(_Model):
    """Volcano (gang scheduling)."""

    enabled: bool = Field(default=False, description="Install Volcano and render its queues.")
    version: UnprefixedChartVersion = Field(default="1.15.1", description="Volcano Helm chart version.")
    repository: str = Field(default="https://volcano-sh.github.io/helm-charts", description="Volcano chart repository.")
    namespace: DnsLabel = Field(default="volcano-system", description="Volcano namespace.")
    values_overrides: dict[str, Any] = Field(default_factory=dict, description="Helm values deep-merged last.")


class SchedulingSpec(_Model):
    """Queues, quotas and gang scheduling."""

    kueue: KueueSpec = Field(default_factory=KueueSpec, description="Kueue settings.")
    volcano: VolcanoSpec = Field(default_factory=VolcanoSpec, description="Volcano settings.")
    cohorts: list[CohortSpec] = Field(default_factory=list, description="Nested Kueue cohorts.")
    retain_namespaces: bool = Field(
        default=True,
        description="Keep a team namespace in the cluster when its team leaves the spec or the stack is destroyed "
        "(Pulumi `retainOnDelete`): deleting a namespace deletes every workload in it.",
    )
    create_namespaces: bool = Field(
        default=True,
        description="Create the teams' namespaces with their queues; when false the platform's labels "
        "(team, tier grants) are patched onto namespaces that exist (server-side apply), since admission reads them.",
    )


class PrometheusSpec(_Model):
    """Prometheus: install kube-prometheus-stack, or wire into an existing one."""

    install: bool = Field(default=True, description="Install kube-prometheus-stack.")
    version: ChartVersion = Field(default="88.5.3", description="kube-prometheus-stack chart version.")
    namespace: DnsLabel = Field(default="monitoring", description="Monitoring namespace.")
    release_name: ReleaseName = Field(default="kube-prometheus-stack", description="Helm release name.")
    rule_labels: dict[LabelKey, LabelValue] = Field(
        default_factory=dict, description="Labels an existing Prometheus selects PrometheusRules/ServiceMonitors by."
    )
    url: str | None = Field(
        default=None, description="Query URL of an existing Prometheus (install: false); default prometheus-operated."
    )
    repository: str = Field(
        default="https://prometheus-community.github.io/helm-charts",
        description="kube-prometheus-stack chart repository.",
    )
    values_overrides: dict[str, Any] = Field(default_factory=dict, description="Helm values deep-merged last.")


class OpenCostSpec(_Model):
    """OpenCost, pricing each GPU node at its catalog price (CSV provider)."""

    enabled: bool = Field(default=True, description="Install OpenCost.")
    version: ChartVersion = Field(default="2.5.17", description="OpenCost chart version.")
    namespace: DnsLabel = Field(default="opencost", description="OpenCost namespace.")
    release_name: ReleaseName = Field(default="opencost", description="OpenCost Helm release name.")
    repository: str = Field(
        default="https://opencost.github.io/opencost-helm-chart", description="OpenCost chart repository."
    )
    gpu_hourly_price: PositiveFloat | None = Field(
        default=None,
        description="$/GPU-hour that, with the CPU and RAM prices below, sets how OpenCost splits a "
        "node's catalog price (default: each GPU pool's node price less its vCPU and RAM, per GPU, weighted by GPUs "
        "at max size).",
    )
    cpu_hourly_price: PositiveFloat = Field(
        default=0.031611,
        description="$/vCPU-hour: the split ratio, and the price of nodes outside the GPU pools "
        "(default: OpenCost's configs/default.json).",
    )
    ram_gib_hourly_price: PositiveFloat = Field(
        default=0.004237,
        description="$/GiB-hour of RAM: the split ratio, and the price of nodes outside the GPU "
        "pools (default: OpenCost's configs/default.json).",
    )
    values_overrides: dict[str, Any] = Field(default_factory=dict, description="Helm values deep-merged last.")


class Thresholds(_Model):
    """Alert thresholds."""

    stranded_sm_active: Number = Field(default=0.1, ge=0, le=1, description="SM-active below this is idle.")
    stranded_for: str = Field(default="2h", description="How long allocated GPUs must idle to alert.")
    fb_memory_percent: Number = Field(default=90, ge=0, le=100, description="Framebuffer use alert, percent.")
    temperature_celsius: Number = Field(default=85, ge=0, le=150, description="GPU temperature alert, Celsius.")
    pending_workloads: Integer = Field(
        default=10, ge=0, le=MAX_COUNT, description="Kueue pending workloads per queue to alert on."
    )
    pending_for: str = Field(default="30m", description="How long the backlog must last to alert.")
    mig_pending_for: str = Field(default="30m", description="How long a MIG reconfiguration may stay pending.")
    starved_queue_depth: Number = Field(default=5, ge=0, description="App queue depth that marks a starved pod.")
    starved_for: str = Field(default="10m", description="How long a time-sliced pod's queue must stay deep to alert.")
    fb_memory_for: str = Field(default="15m", description="How long framebuffer use must stay high to alert.")
    temperature_for: str = Field(default="5m", description="How long the temperature must stay high to alert.")
    mig_failed_for: str = Field(default="5m", description="How long a failed MIG config may persist before alerting.")
    capacity_mismatch_for: str = Field(
        default="15m", description="How long a pool may advertise fewer units than its sharing config promises."
    )
    xid_hardware_codes: list[StrictInt] = Field(
        default_factory=lambda: [x.code for x in HARDWARE_XIDS],
        description="XIDs that mean a faulty GPU (critical, node leaves service); every other XID is an "
        "application fault (warning).",
    )
    xid_hardware_window: str = Field(
        default="1h", description="How long a hardware XID keeps its alert firing after the last occurrence."
    )
    xid_application_window: str = Field(
        default="15m", description="How long an application XID keeps its alert firing after the last occurrence."
    )
    xid_remediation_for: str = Field(
        default="30m",
        description="How long a node with a hardware XID may keep scheduling pods before the "
        "alert that node repair did not act fires (shorter than xidHardwareWindow).",
    )


class MonitoringSpec(_Model):
    """DCGM, Prometheus rules and alerts, OpenCost, dashboards."""

    prometheus: PrometheusSpec = Field(default_factory=PrometheusSpec, description="Prometheus settings.")
    opencost: OpenCostSpec = Field(default_factory=OpenCostSpec, description="OpenCost settings.")
    thresholds: Thresholds = Field(default_factory=Thresholds, description="Alert thresholds.")
    dashboards: bool = Field(default=True, description="Render the Grafana dashboard ConfigMap.")


class AdmissionSpec(_Model):
    """In-cluster admission: deny unclassified GPU pods, route tiered ones."""

    deny_unclassified: bool = Field(default=True, description="Deny GPU pods without a known tier label.")
    exempt_namespaces: list[DnsLabel] | None = Field(
        default=None,
        description="Namespaces the admission rules skip. Unset: kube-system and the namespaces of what the platform "
        "installs (GPU Operator, Kueue, Volcano, kube-prometheus-stack, Kyverno), each only when it is installed.",
    )
    additional_exempt_namespaces: list[DnsLabel] = Field(
        default_factory=list,
        description="More namespaces to skip, e.g. of a privileged node agent that tolerates every taint.",
    )
    mutation: MutationEngine = Field(
        default=MutationEngine.AUTO,
        description="What routes tiered pods: auto (MutatingAdmissionPolicy from Kubernetes 1.36, where it is GA; "
        "Kyverno MutatingPolicy before) | mutating-admission-policy | kyverno | none.",
    )
    kyverno_version: ChartVersion = Field(default="3.7.0", description="Kyverno Helm chart version (Kyverno 1.17).")
    kyverno_namespace: DnsLabel = Field(default="kyverno", description="Kyverno namespace (always exempt).")
    kyverno_values_overrides: dict[str, Any] = Field(
        default_factory=dict, description="Kyverno Helm values deep-merged last."
    )


class GpuOperatorSpec(_Model):
    """NVIDIA GPU Operator release."""

    version: ChartVersion = Field(default="v26.7.0", description="gpu-operator chart version.")
    namespace: DnsLabel = Field(default="gpu-operator", description="Operator namespace.")
    repository: str = Field(default="https://helm.ngc.nvidia.com/nvidia", description="Chart repository.")
    values_overrides: dict[str, Any] = Field(default_factory=dict, description="Helm values deep-merged last.")


class ClusterAutoscalerSpec(_Model):
    """cluster-autoscaler for the EKS managed node groups (Karpenter pools scale themselves)."""

    enabled: bool = Field(default=False, description="Install cluster-autoscaler (EKS).")
    version: ChartVersion = Field(default="9.59.0", description="cluster-autoscaler Helm chart version.")
    repository: str = Field(default="https://kubernetes.github.io/autoscaler", description="Chart repository.")
    namespace: Namespace = Field(default="kube-system", description="Namespace of the release.")
    image_tag: str | None = Field(
        default=None, description="Image tag (default: the newest patch of the cluster's Kubernetes minor)."
    )
    expander: Expander = Field(
        default=Expander.LEAST_WASTE,
        description="least-waste | priority (cheapest pool first by catalog price, then least-waste).",
    )
    role_arn: RoleArnRef | None = Field(
        default=None, description="IAM role for the service account (IRSA annotation); omit with EKS Pod Identity."
    )
    values_overrides: dict[str, Any] = Field(default_factory=dict, description="Helm values deep-merged last.")


class EfaDevicePluginSpec(_Model):
    """AWS EFA device plugin, installed when an EKS pool has EFA."""

    version: ChartVersion = Field(default="v0.5.30", description="aws-efa-k8s-device-plugin chart version.")
    repository: str = Field(default="https://aws.github.io/eks-charts", description="Chart repository.")
    namespace: Namespace = Field(default="kube-system", description="Namespace of the release.")
    values_overrides: dict[str, Any] = Field(default_factory=dict, description="Helm values deep-merged last.")


class CustomInstanceType(_Model):
    """An instance or machine type the built-in catalog lacks."""

    name: InstanceTypeName = Field(description="Instance / machine type name.")
    gpu_model: str = Field(description="GPU model, one of the catalog's GPU models.")
    gpu_count: Integer = Field(ge=1, le=64, description="GPUs per node.")
    hourly_price: PositiveFloat = Field(description="On-demand $/hour of one node.")
    vcpus: Integer | None = Field(default=None, ge=1, description="vCPUs of one node (OpenCost's CPU share).")
    memory_gib: PositiveFloat | None = Field(
        default=None, description="Memory of one node in GiB (OpenCost's RAM share)."
    )
    efa_interfaces: Integer | None = Field(
        default=None,
        ge=0,
        le=32,
        description="EFA interfaces of one node (EC2 EfaInfo.MaximumEfaInterfaces; default 0: no EFA).",
    )


class CatalogSpec(_Model):
    """Additions to and overrides of the built-in hardware catalog."""

    instance_types: list[CustomInstanceType] = Field(default_factory=list, description="Extra instance types.")
    price_overrides: dict[str, PositiveFloat] = Field(
        default_factory=dict, description="Instance type -> $/hour (negotiated, savings plan...)."
    )
    discount_percent: Number = Field(default=0, ge=0, lt=100, description="Flat discount on catalog prices.")


class PolicySpec(_Model):
    """Policy-pack settings that come from the spec."""

    budget_hourly: Number | None = Field(
        default=None, ge=0, le=MAX_COUNT, description="Max $/hour of GPU pools at max size (advisory when unset)."
    )
    enforcement: dict[str, str] = Field(
        default_factory=dict,
        description="Policy name -> advisory | mandatory | disabled (or remediate, for gpu-launch-template-imdsv2), "
        "for the pack and `gpu-platform audit`.",
    )


class QueueScaler(_Model):
    """A Deployment KEDA scales on its pods' `gpu_app_queue_depth` (requests waiting for a shared GPU)."""

    name: str = Field(description="ScaledObject name (a DNS label, unique in its namespace).")
    namespace: str = Field(description="Namespace of the Deployment: a namespace of a team entitled to the tier.")
    deployment: str = Field(description="The Deployment to scale.")
    tier: str = Field(description="The Deployment's tier; meant for tiers whose GPUs are time-sliced.")
    min_replicas: StrictInt = Field(
        default=1,
        ge=1,
        le=INT32_MAX,
        description="Fewest replicas; at least 1, since the pods themselves export the queue depth.",
    )
    max_replicas: StrictInt = Field(
        ge=1, le=INT32_MAX, description="Most replicas (each holds one unit of the tier's resource)."
    )
    target_queue_depth: Number = Field(
        default=4, gt=0, description="Waiting requests per replica to aim for (the HPA AverageValue target)."
    )
    polling_interval: StrictInt = Field(
        default=15, ge=1, le=INT32_MAX, description="Seconds between KEDA's Prometheus queries."
    )
    cooldown_period: StrictInt = Field(
        default=300,
        ge=0,
        le=INT32_MAX,
        description="KEDA cooldownPeriod, seconds: only used when scaling to zero, which minReplicas >= 1 rules out.",
    )


class KedaSpec(_Model):
    """KEDA: turns the application's queue depth into replicas through the HPA (external metrics)."""

    enabled: bool = Field(default=True, description="Install KEDA (it serves external.metrics.k8s.io).")
    version: ChartVersion = Field(default="2.20.2", description="KEDA chart version.")
    namespace: Namespace = Field(default="keda", description="KEDA namespace.")
    release_name: ReleaseName = Field(default="keda", description="KEDA Helm release name.")
    repository: str = Field(default="https://kedacore.github.io/charts", description="KEDA chart repository.")
    scalers: list[QueueScaler] = Field(
        default_factory=list, description="Deployments to scale on gpu_app_queue_depth (one ScaledObject each)."
    )
    values_overrides: dict[str, Any] = Field(default_factory=dict, description="Helm values deep-merged last.")


class AutoscalingSpec(_Model):
    """Workload autoscaling on signals the scheduler cannot see."""

    keda: KedaSpec = Field(default_factory=KedaSpec, description="KEDA settings and queue-depth scalers.")


class PlatformSpec(_Model):
    """The whole GPU fleet: pools, tiers, teams and the platform services around them."""

    cloud: Cloud = Field(description="aws | gcp.")
    cluster_name: ClusterRef = Field(description="Existing EKS / GKE cluster name.")
    kubernetes_version: KubernetesMinor = Field(
        default="1.33", description="Cluster Kubernetes minor version, e.g. '1.33'."
    )
    label_domain: DnsSubdomain = Field(
        description="Prefix of the platform's label and taint keys, e.g. gpu.example.com."
    )
    aws: AwsSpec | None = Field(default=None, description="AWS settings (cloud: aws).")
    gcp: GcpSpec | None = Field(default=None, description="GCP settings (cloud: gcp).")
    node_pools: list[NodePool] = Field(min_length=1, max_length=500, description="GPU node pools.")
    tiers: list[Tier] = Field(min_length=1, max_length=1000, description="Workload classes.")
    teams: list[Team] = Field(default_factory=list, max_length=2000, description="Tenants and their quotas.")
    scheduling: SchedulingSpec = Field(default_factory=SchedulingSpec, description="Kueue and Volcano.")
    monitoring: MonitoringSpec = Field(default_factory=MonitoringSpec, description="Monitoring and cost.")
    autoscaling: AutoscalingSpec = Field(default_factory=AutoscalingSpec, description="KEDA queue-depth autoscaling.")
    admission: AdmissionSpec = Field(default_factory=AdmissionSpec, description="In-cluster admission.")
    gpu_operator: GpuOperatorSpec = Field(default_factory=GpuOperatorSpec, description="NVIDIA GPU Operator.")
    catalog: CatalogSpec = Field(default_factory=CatalogSpec, description="Catalog additions and price overrides.")
    policy: PolicySpec = Field(default_factory=PolicySpec, description="Policy-pack settings.")
    cluster_autoscaler: ClusterAutoscalerSpec = Field(
        default_factory=ClusterAutoscalerSpec, description="cluster-autoscaler (EKS managed node groups)."
    )
    efa_device_plugin: EfaDevicePluginSpec = Field(
        default_factory=EfaDevicePluginSpec, description="AWS EFA device plugin (EKS pools with EFA)."
    )

    @cached_property
    def hardware(self) -> Catalog:
        """The catalog this spec sees: built-in tables plus its own types and prices."""
        extra = [
            InstanceType(t.name, self.cloud.value, t.gpu_model, t.gpu_count, t.hourly_price, "spec")
            for t in self.catalog.instance_types
        ]
        return Catalog.build(extra, self.catalog.price_overrides, self.catalog.discount_percent)

    @cached_property
    def pools_by_name(self) -> dict[str, NodePool]:
        """Pools keyed by name (the first of duplicates)."""
        out: dict[str, NodePool] = {}
        for p in self.node_pools:
            out.setdefault(p.name, p)
        return out

    def pool_path(self, pool: NodePool) -> str:
        """The field path findings and errors name `pool` by: `nodePools[<index>]` (the first of duplicates)."""
        for i, p in enumerate(self.node_pools):
            if p.name == pool.name:
                return f"nodePools[{i}]"
        raise ValueError(f"pool {pool.name!r} is not one of this spec's nodePools")

    @cached_property
    def tiers_by_name(self) -> dict[str, Tier]:
        """Tiers keyed by name (the first of duplicates)."""
        out: dict[str, Tier] = {}
        for t in self.tiers:
            out.setdefault(t.name, t)
        return out

    def tiers_of(self, pool: str) -> list[Tier]:
        """The tiers that route to `pool`."""
        return [t for t in self.tiers if t.pool == pool]

    @property
    def kubernetes_release(self) -> tuple[int, int]:
        """`kubernetesVersion` as (major, minor), e.g. (1, 33)."""
        major, minor = self.kubernetes_version.split(".")[:2]
        return int(major), int(minor)

    def priority_of(self, tier: Tier) -> int:
        """The tier's priority: explicit, or the default ladder pre-training > MIG > time-slicing > MPS."""
        if tier.priority is not None:
            return tier.priority
        return self._default_priorities.get(tier.name, 0)

    @cached_property
    def _default_priorities(self) -> dict[str, int]:
        base = {
            SharingMode.EXCLUSIVE: 100000,
            SharingMode.MIG: 50000,
            SharingMode.TIME_SLICING: 10000,
            SharingMode.MPS: 1000,
        }
        seen: dict[SharingMode, int] = {}
        out: dict[str, int] = {}
        for t in self.tiers:
            pool = self.pools_by_name.get(t.pool)
            if t.priority is None and pool is not None:
                mode = pool.sharing.mode
                out[t.name] = base[mode] - 1000 * seen.get(mode, 0)
                seen[mode] = seen.get(mode, 0) + 1
        return out

    def mig_resource(self, profile: str) -> str:
        """The extended resource a MIG instance of `profile` is advertised as.

        NVIDIA's device plugin with the mixed strategy names it `nvidia.com/mig-<profile>`; GKE's own device plugin
        (gcp.gpuStack gke-native) advertises partitions as plain `nvidia.com/gpu`.
        """
        if self.cloud == Cloud.GCP and self.gcp is not None and self.gcp.gpu_stack == GkeGpuStack.GKE_NATIVE:
            return GPU_RESOURCE
        return mig_resource(profile)

    def pool_resources(self, pool: NodePool) -> list[str]:
        """The extended resources a pool's nodes advertise, in layout order."""
        if pool.sharing.mode == SharingMode.MIG:
            found = [self.mig_resource(p) for p, n in (pool.sharing.mig_layout or {}).items() if n > 0]
            return list(dict.fromkeys(found))
        return [GPU_RESOURCE]

    def resource_of(self, tier: Tier) -> str:
        """The extended resource a tier's pods request: explicit, or the pool's only one."""
        if tier.resource:
            return tier.resource
        pool = self.pools_by_name.get(tier.pool)
        resources = self.pool_resources(pool) if pool else []
        return resources[0] if len(resources) == 1 else GPU_RESOURCE
