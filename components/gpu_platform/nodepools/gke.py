"""Pure render of one pool's GKE node pool (`gcp.container.NodePool` inputs), for both GPU stacks.

gke-native: GKE installs the driver and runs its device plugin; sharing lives in the guest accelerator
(`gpuSharingConfig` TIME_SHARING / MPS, `gpuPartitionSize` for one-profile MIG). gpu-operator: GKE's driver
install is disabled and its device plugin switched off by a node label; Google's driver installer DaemonSet
(`gke_driver`) installs the driver and the NVIDIA GPU Operator runs the rest.

Placement: exclusive (multi-node training) pools on A2/A3 machines in one zone get `placementPolicy: COMPACT`
(GKE "Define compact placement for GKE nodes": compact placement keeps a pool's nodes close within one zone and
is offered for A100 and H100 machines; a compact pool must be single-zone). `gcp.compactPlacement` overrides it.
Autoscaling: GKE's own cluster autoscaler scales each pool between `totalMinNodeCount` and `totalMaxNodeCount`.
Naming: `<pool>-<8 hex digits>`, a hash of the fields whose change replaces the pool (`node_pool_name`), so a
replacement creates the new pool, under its new name, before the old one is deleted.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from ..catalog import layout_fits, profiles_for
from ..contract import pool_labels, pool_taints
from ..spec import GkeGpuStack, NodePool, PlatformSpec, SharingMode

__all__ = [
    "COMPACT_MACHINE_PREFIXES",
    "GKE_NODE_POOL_NAME_MAX",
    "GKE_POOL_NAME_MAX",
    "NAME_HASH_LEN",
    "NODE_POOL_TYPE",
    "gke_accelerator",
    "gke_partition_count",
    "gpu_stack",
    "node_pool_name",
    "pool_zones",
    "replacement_fields",
    "uses_compact_placement",
    "render_gke_node_pool",
]

NODE_POOL_TYPE = "gcp:container/nodePool:NodePool"
GKE_TAINT_EFFECT = {"NoSchedule": "NO_SCHEDULE", "NoExecute": "NO_EXECUTE", "PreferNoSchedule": "PREFER_NO_SCHEDULE"}
_STRATEGY = {SharingMode.TIME_SLICING: "TIME_SHARING", SharingMode.MPS: "MPS"}
_SCOPES = ["https://www.googleapis.com/auth/cloud-platform"]
COMPACT_MACHINE_PREFIXES = ("a2-", "a3-")

# GKE node pool names: at most 40 characters of (?:[a-z](?:[-a-z0-9]{0,38}[a-z0-9])?), as the GKE API's 400 error for
# an invalid name states (terraform-provider-google main, resource_container_node_pool.go, name_prefix validation:
# "name is limited to 40"). The provider's own `name_prefix` is not used: its suffix depends on the provider's major
# version (v7.45.0 appends helper/id PrefixedUniqueId's 26 characters to any prefix, allowing pool names of 13;
# 8.0.0 appends 9 to prefixes over 14 characters, magic-modules #18477), and pulumi-gcp 8-10 span both.
GKE_NODE_POOL_NAME_MAX = 40
NAME_HASH_LEN = 8
GKE_POOL_NAME_MAX = GKE_NODE_POOL_NAME_MAX - NAME_HASH_LEN - 1

# What the platform renders of the fields that force a new node pool (ForceNew in terraform-provider-google v7.45.0
# and main: resource_container_node_pool.go placement_policy; node_config.go spot, guest_accelerator, oauth_scopes,
# metadata, shielded_instance_config, service_account). machineType, diskSizeGb, diskType, imageType, labels, taints,
# resourceLabels, workloadMetadataConfig, autoscaling, management, upgradeSettings and nodeLocations update in
# place. cluster, project and location force a new pool too, but the new pool is then in another cluster, where
# the same name is free.
REPLACED_BY: tuple[tuple[str, ...], ...] = (
    ("placementPolicy",),
    ("nodeConfig", "spot"),
    ("nodeConfig", "guestAccelerators"),
    ("nodeConfig", "oauthScopes"),
    ("nodeConfig", "metadata"),
    ("nodeConfig", "shieldedInstanceConfig"),
    ("nodeConfig", "serviceAccount"),
)


def pool_zones(spec: PlatformSpec, pool: NodePool) -> list[str]:
    """The pool's node locations: its own, else the spec-wide `gcp.zones`."""
    if pool.gcp.zones is not None:
        return list(pool.gcp.zones)
    return list(spec.gcp.zones) if spec.gcp else []


def uses_compact_placement(spec: PlatformSpec, pool: NodePool) -> bool:
    """COMPACT placement: explicit, or by default for exclusive A2/A3 pools in exactly one zone."""
    if pool.gcp.compact_placement is not None:
        return pool.gcp.compact_placement
    return (
        pool.sharing.mode == SharingMode.EXCLUSIVE
        and pool.instance_type.startswith(COMPACT_MACHINE_PREFIXES)
        and len(pool_zones(spec, pool)) == 1
    )


def gpu_stack(spec: PlatformSpec) -> GkeGpuStack:
    """The spec's GKE GPU stack (gke-native when the gcp section is absent)."""
    return spec.gcp.gpu_stack if spec.gcp else GkeGpuStack.GKE_NATIVE


def gke_accelerator(spec: PlatformSpec, pool: NodePool) -> tuple[str | None, int]:
    """GKE accelerator type name and GPUs per node of the pool's machine type, from the catalog."""
    itype = spec.hardware.instance(pool.instance_type)
    if itype is None:
        return None, 0
    model = spec.hardware.gpu(itype.gpu_model)
    return (model.gke_accelerator if model else None), itype.gpu_count


def gke_partition_count(gpu_model: str, profile: str) -> int:
    """How many `profile` instances GKE makes per GPU for `gpuPartitionSize` (as many as fit)."""
    prof = profiles_for(gpu_model).get(profile)
    if prof is None:
        return 0
    return next((n for n in range(prof.max_instances, 0, -1) if layout_fits(gpu_model, {profile: n})), 0)


def _native_accelerator(pool: NodePool, driver_version: str) -> dict[str, Any]:
    s = pool.sharing
    acc: dict[str, Any] = {"gpuDriverInstallationConfig": {"gpuDriverVersion": driver_version}}
    if s.mode == SharingMode.MIG:
        profiles = [p for p, n in (s.mig_layout or {}).items() if n > 0]
        acc["gpuPartitionSize"] = profiles[0] if profiles else None
        if s.replicas:  # time-sharing on top of MIG partitions
            acc["gpuSharingConfig"] = {"gpuSharingStrategy": "TIME_SHARING", "maxSharedClientsPerGpu": s.replicas}
    elif s.mode in _STRATEGY:
        acc["gpuSharingConfig"] = {"gpuSharingStrategy": _STRATEGY[s.mode], "maxSharedClientsPerGpu": s.replicas}
    return acc


def _accelerator(spec: PlatformSpec, pool: NodePool) -> dict[str, Any]:
    acc_type, count = gke_accelerator(spec, pool)
    base = {"type": acc_type, "count": count}
    if gpu_stack(spec) == GkeGpuStack.GPU_OPERATOR:
        return {**base, "gpuDriverInstallationConfig": {"gpuDriverVersion": "INSTALLATION_DISABLED"}}
    return {**base, **_native_accelerator(pool, pool.gcp.gpu_driver_version)}


def _node_config(spec: PlatformSpec, pool: NodePool) -> dict[str, Any]:
    g = pool.gcp
    config: dict[str, Any] = {
        "machineType": pool.instance_type,
        "imageType": g.image_type,
        "diskSizeGb": g.disk_size_gb,
        "diskType": g.disk_type,
        "spot": g.spot,
        "guestAccelerators": [_accelerator(spec, pool)],
        # On the gpu-operator stack the contract adds gke-no-default-nvidia-gpu-device-plugin=true.
        "labels": pool_labels(spec, pool),
        "taints": [{**t, "effect": GKE_TAINT_EFFECT[t["effect"]]} for t in pool_taints(spec, pool)],
        "oauthScopes": list(_SCOPES),
        "metadata": {"disable-legacy-endpoints": "true"},
        "workloadMetadataConfig": {"mode": "GKE_METADATA"},
        "shieldedInstanceConfig": {"enableSecureBoot": True, "enableIntegrityMonitoring": True},
        "resourceLabels": {"gpu-platform-pool": pool.name},
    }
    if spec.gcp and spec.gcp.service_account:
        config["serviceAccount"] = spec.gcp.service_account
    return config


def replacement_fields(inputs: dict[str, Any]) -> dict[str, Any]:
    """The values in rendered node pool inputs whose change replaces the pool (`REPLACED_BY`), by dotted path."""
    found: dict[str, Any] = {}
    for path in REPLACED_BY:
        node: Any = inputs
        for key in path:
            node = node.get(key) if isinstance(node, dict) else None
        found[".".join(path)] = node
    return found


def node_pool_name(pool_name: str, fields: dict[str, Any]) -> str:
    """`<pool>-<hash>`: the first NAME_HASH_LEN hex digits of SHA-256 over `fields` (`replacement_fields`) as
    canonical JSON. The name changes exactly when a change replaces the pool, so the new pool never collides
    with the old one while both exist."""
    canonical = json.dumps(fields, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    return f"{pool_name}-{hashlib.sha256(canonical.encode()).hexdigest()[:NAME_HASH_LEN]}"


def render_gke_node_pool(spec: PlatformSpec, pool: NodePool) -> dict[str, Any]:
    """`gcp.container.NodePool` inputs of one pool; `name` is `node_pool_name` of what replaces the pool."""
    g, gcp = pool.gcp, spec.gcp
    zones = pool_zones(spec, pool)
    inputs: dict[str, Any] = {
        "cluster": spec.cluster_name,
        "name": None,  # set below, from the other inputs
        "project": gcp.project if gcp else None,
        "location": gcp.location if gcp else None,
        "nodeConfig": _node_config(spec, pool),
        # Total counts across zones (minNodeCount/maxNodeCount would be per zone).
        "autoscaling": {
            "totalMinNodeCount": pool.min_size,
            "totalMaxNodeCount": pool.max_size,
            "locationPolicy": g.location_policy,
        },
        "management": {"autoRepair": True, "autoUpgrade": g.auto_upgrade},
        # No surge: a surge node is one more scarce GPU machine. Take down at most maxUnavailable nodes.
        "upgradeSettings": {"strategy": "SURGE", "maxSurge": 0, "maxUnavailable": g.max_unavailable},
    }
    if zones:
        inputs["nodeLocations"] = list(zones)
    if uses_compact_placement(spec, pool):
        inputs["placementPolicy"] = {"type": "COMPACT"}
    inputs["name"] = node_pool_name(pool.name, replacement_fields(inputs))
    return inputs
