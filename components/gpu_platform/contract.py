"""The label, taint and naming contract every domain relies on (DESIGN "What each pool becomes").

Node pools set these labels and taints; the GPU Operator config keys, Kueue flavors, admission rules and
policies all refer to them. Keep every name derived here so the links cannot drift. The extended resource names
(`nvidia.com/gpu`, `nvidia.com/mig-<profile>`) are GPU facts kept in the catalog and re-exported here, so a
component imports every wire name from this module.
"""

from __future__ import annotations

from .catalog.resources import GPU_RESOURCE, MIG_RESOURCE_PREFIX, NVIDIA_RESOURCE_PREFIX, mig_resource
from .spec import AmiType, Cloud, GkeGpuStack, NodePool, PlatformSpec, SharingMode

__all__ = [
    "CAPACITY_TYPE_LABEL",
    "CLUSTER_TAG",
    "DEPLOY_OPERANDS_LABEL",
    "DEVICE_PLUGIN_CONFIG_LABEL",
    "GKE_NO_DEFAULT_PLUGIN_LABEL",
    "GPU_RESOURCE",
    "GPU_TAINT",
    "INSTANCE_TYPE_LABEL",
    "KUEUE_PRIORITY_LABEL",
    "KUEUE_QUEUE_LABEL",
    "MANAGED_BY_LABEL",
    "MIG_CONFIG_LABEL",
    "MIG_CONFIG_STATE_LABEL",
    "MIG_DISABLED_CONFIG",
    "MIG_RESOURCE_PREFIX",
    "NAMESPACE_NAME_LABEL",
    "NODE_CONTROL_PATHS",
    "NVIDIA_RESOURCE_PREFIX",
    "PART_OF_LABEL",
    "PLATFORM_NAME",
    "POOL_TAG",
    "SYSTEM_NAMESPACE",
    "device_plugin_config_key",
    "mig_layout_name",
    "mig_resource",
    "operator_enabled",
    "operator_node_labels",
    "pool_label_key",
    "pool_labels",
    "pool_tags",
    "pool_taints",
    "team_label_key",
    "tier_grant_label_key",
    "tier_grant_prefix",
    "tier_label_key",
]

DEVICE_PLUGIN_CONFIG_LABEL = "nvidia.com/device-plugin.config"
MIG_CONFIG_LABEL = "nvidia.com/mig.config"
MIG_CONFIG_STATE_LABEL = "nvidia.com/mig.config.state"  # set by mig-manager: pending, success or failed
MIG_DISABLED_CONFIG = "all-disabled"
GPU_TAINT = {"key": GPU_RESOURCE, "value": "present", "effect": "NoSchedule"}
# Kueue's workload labels: the LocalQueue a job is submitted to and its WorkloadPriorityClass.
KUEUE_QUEUE_LABEL = "kueue.x-k8s.io/queue-name"
KUEUE_PRIORITY_LABEL = "kueue.x-k8s.io/priority-class"
# The API server labels every namespace with its name (kubernetes v1.33.0 pkg/apis/core/v1/defaults.go
# SetDefaults_Namespace, label kubernetes.io/metadata.name).
NAMESPACE_NAME_LABEL = "kubernetes.io/metadata.name"
SYSTEM_NAMESPACE = "kube-system"
# Well-known node labels: the instance type (kubelet, every cloud) and Karpenter's capacity type (spot, on-demand).
INSTANCE_TYPE_LABEL = "node.kubernetes.io/instance-type"
CAPACITY_TYPE_LABEL = "karpenter.sh/capacity-type"
# Kubernetes' recommended labels on the objects the platform renders (app.kubernetes.io/*).
MANAGED_BY_LABEL = "app.kubernetes.io/managed-by"
PART_OF_LABEL = "app.kubernetes.io/part-of"
PLATFORM_NAME = "gpu-platform"
# Tags on the cloud resources the platform creates for a pool (launch templates, placement groups, security groups).
CLUSTER_TAG = "gpu-platform/cluster"
POOL_TAG = "gpu-platform/pool"
# Host paths that control a node: the container runtimes' sockets (a client starts privileged containers) and the
# kubelet's directory (device-plugin registration socket, every pod's volumes and tokens). A pod that mounts one of
# them, or a directory above one, reaches every GPU of its node. `/var/run` is listed beside `/run`: some images
# keep it a directory, not the usual link.
NODE_CONTROL_PATHS = (
    "/run/containerd",
    "/var/run/containerd",
    "/run/crio",
    "/var/run/crio",
    "/run/docker.sock",
    "/var/run/docker.sock",
    "/var/lib/kubelet",
    "/var/lib/containerd",
)
DEPLOY_OPERANDS_LABEL = "nvidia.com/gpu.deploy.operands"
GKE_NO_DEFAULT_PLUGIN_LABEL = "gke-no-default-nvidia-gpu-device-plugin"


def pool_label_key(label_domain: str) -> str:
    """Node label (and taint) key naming a node's pool."""
    return f"{label_domain}/gpu-pool"


def tier_label_key(label_domain: str) -> str:
    """Pod label key naming a pod's tier."""
    return f"{label_domain}/gpu-tier"


def team_label_key(label_domain: str) -> str:
    """Namespace label key naming the namespace's team (admission reads the team's queue from it)."""
    return f"{label_domain}/team"


def tier_grant_prefix(label_domain: str) -> str:
    """Prefix of the namespace label keys granting tiers: `tier.<labelDomain>/<tier>: "true"`."""
    return f"tier.{label_domain}/"


def tier_grant_label_key(label_domain: str, tier: str) -> str:
    """Namespace label key saying the namespace's team may run pods of `tier` (admission honours the tier
    label only where it is set). Tier names are valid label values, so they are valid label-key names too."""
    return tier_grant_prefix(label_domain) + tier


def device_plugin_config_key(pool: NodePool) -> str:
    """Key of the pool's entry in the device-plugin ConfigMap."""
    return pool.name


def _short_profile(profile: str) -> str:
    # "3g.40gb" -> "3g40", "1g.10gb+me" -> "1g10me"
    return profile.replace("gb", "").replace(".", "").replace("+", "")


def mig_layout_name(pool: NodePool) -> str:
    """Stable, readable mig-parted config name, e.g. `gpu-infer-3g40-2g20-1g10x2`."""
    layout = pool.sharing.mig_layout or {}
    parts = [
        _short_profile(p) + (f"x{n}" if n > 1 else "")
        for p, n in sorted(layout.items(), key=lambda kv: (-int(kv[0].split("g", 1)[0]), kv[0]))
        if n > 0
    ]
    return "-".join([pool.name, *parts])


def operator_enabled(spec: PlatformSpec) -> bool:
    """True unless the cluster is GKE with the gke-native GPU stack (GKE's driver and device plugin)."""
    return spec.cloud == Cloud.AWS or (spec.gcp is not None and spec.gcp.gpu_stack == GkeGpuStack.GPU_OPERATOR)


def operator_node_labels(spec: PlatformSpec, pool: NodePool) -> dict[str, str]:
    """Node labels the GPU Operator needs on a pool (part of `pool_labels`)."""
    if not operator_enabled(spec):
        return {}
    if spec.cloud == Cloud.AWS and pool.aws.ami_type == AmiType.BOTTLEROCKET_NVIDIA:
        # Bottlerocket ships its own driver, toolkit and device plugin: no operator operands on these nodes.
        return {DEPLOY_OPERANDS_LABEL: "false"}
    if spec.cloud == Cloud.GCP:
        return {GKE_NO_DEFAULT_PLUGIN_LABEL: "true"}  # GKE docs: disables GKE's own device plugin
    return {}


def pool_labels(spec: PlatformSpec, pool: NodePool) -> dict[str, str]:
    """Kubernetes node labels of a pool: the user's extras, then the contract labels (which win)."""
    labels = dict(pool.labels) | operator_node_labels(spec, pool)
    labels[pool_label_key(spec.label_domain)] = pool.name
    labels[DEVICE_PLUGIN_CONFIG_LABEL] = device_plugin_config_key(pool)
    if pool.sharing.mode == SharingMode.MIG:
        labels[MIG_CONFIG_LABEL] = mig_layout_name(pool)
    return labels


def pool_tags(spec: PlatformSpec, pool: NodePool) -> dict[str, str]:
    """Cloud tags of the resources created for a pool: its cluster and its name."""
    return {CLUSTER_TAG: spec.cluster_name, POOL_TAG: pool.name}


def pool_taints(spec: PlatformSpec, pool: NodePool) -> list[dict[str, str]]:
    """Kubernetes node taints of a pool: the pool taint and the GPU taint, both NoSchedule."""
    return [
        {"key": pool_label_key(spec.label_domain), "value": pool.name, "effect": "NoSchedule"},
        dict(GPU_TAINT),
    ]
