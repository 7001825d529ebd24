"""Node pool validation checks (registered in `validation.DOMAIN_CHECKS`): what EKS and GKE can express.

Limits: EKS labels and taints from the botocore EKS model (labelKey/labelValue 1-63, taintKey 1-63,
taintValue 0-63); GKE sharing from the Terraform google provider (guest_accelerator fields are ForceNew)
and GKE's docs (gpu_partition_size makes as many equal partitions as fit; at most 48 shared clients).
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from ..catalog import EFA_INTERFACES, gpu_families
from ..contract import (
    CAPACITY_TYPE_LABEL,
    GPU_RESOURCE,
    MIG_CONFIG_LABEL,
    MIG_RESOURCE_PREFIX,
    pool_labels,
    pool_taints,
)
from ..errors import Finding, RenderError, Severity
from ..names import gcp_region
from ..spec import AmiType, CapacityType, Cloud, GkeGpuStack, NodePool, PlatformSpec, Provisioner, SharingMode
from .autoscaler import image_tag
from .efa import efa_count, uses_efa, uses_placement_group
from .eks import (
    EKS_MAX_TAGS,
    EKS_NODE_GROUP_NAME_MAX,
    NAME_SUFFIX_LEN,
    pool_subnets,
    render_eks_node_group,
)
from .gke import (
    COMPACT_MACHINE_PREFIXES,
    GKE_NODE_POOL_NAME_MAX,
    GKE_POOL_NAME_MAX,
    NAME_HASH_LEN,
    gke_accelerator,
    gke_partition_count,
    gpu_stack,
    pool_zones,
    uses_compact_placement,
)

__all__ = ["GKE_NODES_PER_ZONE", "MAX_POOL_NODES", "check_node_pools"]

_EKS_MAX = 63
_LABEL_MAX = 63  # Kubernetes label values (and EKS labelValue)
_EKS_MAX_TAINTS = 50
_GKE_MAX_SHARED_CLIENTS = 48
_GKE_DRIVER_VERSIONS = ("DEFAULT", "LATEST")
_GKE_LOCATION_POLICIES = ("ANY", "BALANCED")
_USE_OPERATOR = "set gcp.gpuStack: gpu-operator (the NVIDIA GPU Operator applies any MIG layout)"
# Karpenter v1.14.1 NodePool CRD pattern of consolidateAfter and expireAfter.
_KARPENTER_DURATION = re.compile(r"^(([0-9]+(s|m|h))+|Never)\Z")
_ZERO_DURATION = re.compile(r"^(0+(s|m|h))+\Z")
# EC2NodeClass amiSelectorTerms alias (v1.14.1 CRD: maxLength 30, 'family@version'); release formats from the
# EKS AMI and Bottlerocket release names (e.g. al2023@v20240625, bottlerocket@v1.10.0; Karpenter drops
# Bottlerocket's v).
_ALIAS_MAX = 30
_AMI_ALIAS_FAMILY = {AmiType.AL2023_NVIDIA: "al2023", AmiType.BOTTLEROCKET_NVIDIA: "bottlerocket"}
_AMI_VERSIONS = {
    "al2023": (re.compile(r"^(latest|v[0-9]{8})\Z"), "v20260801"),
    "bottlerocket": (re.compile(r"^(latest|v?[0-9]+\.[0-9]+\.[0-9]+)\Z"), "v1.44.0"),
}
_ZONE = re.compile(r"^(-[a-z]+-[0-9])?[a-z]\Z")
_IMAGE_TAG = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}\Z")  # OCI distribution spec tag grammar
# Node count bounds. Kubernetes supports clusters of up to 5,000 nodes (kubernetes.io "Considerations for large
# clusters"), so no pool may be larger; EKS's default quota is 450 nodes per managed node group (EKS service
# quotas, adjustable), and GKE allows at most 1,000 nodes per node pool per zone.
MAX_POOL_NODES = 5000
_EKS_NODE_GROUP_QUOTA = 450
GKE_NODES_PER_ZONE = 1000
# The karpenter.k8s.aws label keys the v1.14.1 NodePool CRD lets a template set (its CEL rule's allow list).
_KARPENTER_AWS_LABELS = frozenset(
    f"karpenter.k8s.aws/{k}"
    for k in (
        "instance-tenancy",
        "capacity-reservation-type",
        "capacity-reservation-id",
        "capacity-reservation-interruptible",
        "ec2nodeclass",
        "instance-encryption-in-transit-supported",
        "instance-category",
        "instance-hypervisor",
        "instance-family",
        "instance-generation",
        "instance-local-nvme",
        "instance-size",
        "instance-cpu",
        "instance-cpu-manufacturer",
        "instance-cpu-sustained-clock-speed-mhz",
        "instance-memory",
        "instance-ebs-bandwidth",
        "instance-network-bandwidth",
        "instance-gpu-name",
        "instance-gpu-manufacturer",
        "instance-gpu-count",
        "instance-gpu-memory",
        "instance-accelerator-name",
        "instance-accelerator-manufacturer",
        "instance-accelerator-count",
        "instance-capability-flex",
        "placement-group-id",
        "placement-group-partition",
    )
)
_KARPENTER_RESTRICTED_LABELS = ("karpenter.sh/nodepool", "kubernetes.io/hostname")


def _label_values(spec: PlatformSpec, i: int, pool: NodePool, min_len: int) -> Iterator[Finding]:
    """Node label values: Kubernetes allows at most 63 characters (EKS also wants at least 1)."""
    for key, value in pool_labels(spec, pool).items():
        if min_len <= len(value) <= _LABEL_MAX:
            continue
        if key == MIG_CONFIG_LABEL:
            yield Finding(
                f"nodePools[{i}].name",
                f"the MIG layout name {value!r} (node label {key}) is {len(value)} "
                f"characters; node label values allow at most {_LABEL_MAX}; shorten the pool name",
            )
        else:
            yield Finding(
                f"nodePools[{i}].labels.{key}",
                f"node label value {value!r} is {len(value)} characters; allowed: {min_len}-{_LABEL_MAX}",
            )


def _eks_labels(spec: PlatformSpec, i: int, pool: NodePool) -> Iterator[Finding]:
    p = f"nodePools[{i}]"
    for key in pool_labels(spec, pool):
        where = f"{p}.labels.{key}" if key in pool.labels else "labelDomain"
        if not 1 <= len(key) <= _EKS_MAX:
            yield Finding(where, f"node label key {key!r} is {len(key)} characters; EKS allows 1-{_EKS_MAX}")
    yield from _label_values(spec, i, pool, min_len=1)
    taints = pool_taints(spec, pool)
    for t in taints:
        if len(t["key"]) > _EKS_MAX or len(t["value"]) > _EKS_MAX:
            yield Finding(
                "labelDomain",
                f"taint {t['key']}={t['value']} exceeds EKS's {_EKS_MAX}-character limit "
                "for taint keys and values; use a shorter labelDomain",
            )
    n_tags = len(render_eks_node_group(spec, pool)["tags"])
    if n_tags > EKS_MAX_TAGS:
        yield Finding(
            f"{p}.labels",
            f"{len(pool.labels)} extra labels make {n_tags} node group tags (one "
            f"cluster-autoscaler tag per label); AWS allows {EKS_MAX_TAGS}; remove some labels",
        )
    if len(taints) > _EKS_MAX_TAINTS:
        yield Finding(p, f"{len(taints)} taints; EKS allows at most {_EKS_MAX_TAINTS} per node group")


def _eks_capacity(spec: PlatformSpec, i: int, pool: NodePool) -> Iterator[Finding]:
    a, p = pool.aws, f"nodePools[{i}].aws"
    if a.capacity_type == CapacityType.CAPACITY_BLOCK and a.subnet_ids is None and len(pool_subnets(spec, pool)) > 1:
        yield Finding(
            f"{p}.subnetIds",
            f"unset, so the Capacity Block pool uses all of aws.subnetIds "
            f"{pool_subnets(spec, pool)}; a Capacity Block lives in one availability zone and EKS fails "
            "to launch in the others: list only that zone's subnets here",
            Severity.WARNING,
        )
    if a.capacity_type == CapacityType.CAPACITY_BLOCK and not a.capacity_reservation_id:
        yield Finding(
            f"{p}.capacityReservationId",
            "missing; capacityType CAPACITY_BLOCK needs the Capacity Block's reservation id (cr-...)",
        )
    if a.capacity_type == CapacityType.SPOT and a.capacity_reservation_id:
        yield Finding(
            f"{p}.capacityReservationId",
            f"{a.capacity_reservation_id!r} cannot be used with SPOT; "
            "allowed with ON_DEMAND (capacity reservation) or CAPACITY_BLOCK",
        )
    if a.capacity_type == CapacityType.CAPACITY_BLOCK and pool.min_size > 0:
        yield Finding(
            f"nodePools[{i}].minSize",
            f"{pool.min_size} on a Capacity Block pool: nodes only run inside the block's window; consider minSize 0",
            Severity.WARNING,
        )


def _eks_efa(spec: PlatformSpec, i: int, pool: NodePool) -> Iterator[Finding]:
    p = f"nodePools[{i}].aws"
    if pool.aws.efa and efa_count(spec, pool) == 0:
        capable = sorted(t for t in EFA_INTERFACES if t in spec.hardware.instance_types)
        yield Finding(
            f"{p}.efa",
            f"true, but {pool.instance_type!r} has no EFA interface; allowed: false, or an "
            f"EFA-capable type ({', '.join(capable)})",
        )
    subnets = pool_subnets(spec, pool)
    if pool.aws.provisioner != Provisioner.MANAGED_NODE_GROUP or len(subnets) < 2:
        return
    if uses_placement_group(spec, pool):
        yield Finding(
            f"{p}.subnetIds",
            f"{subnets}: a cluster placement group lives in one availability zone, so "
            "the node group's launches in the other zones fail; list one zone's subnets here (preflight "
            "names their zones), or set aws.placementGroup: false",
            Severity.WARNING,
        )
    elif uses_efa(spec, pool) and pool.aws.placement_group is None:
        yield Finding(
            f"{p}.subnetIds",
            f"{subnets}: EFA pool {pool.name!r} gets no cluster placement group because "
            "its subnets may span zones; list one zone's subnets here to place its nodes together",
            Severity.INFO,
        )


def _karpenter_ami(pool: NodePool, p: str) -> Iterator[Finding]:
    family, version = _AMI_ALIAS_FAMILY[pool.aws.ami_type], pool.aws.karpenter.ami_version
    pattern, example = _AMI_VERSIONS[family]
    alias = f"{family}@{version}"
    if not pattern.match(version):
        yield Finding(
            f"{p}.amiVersion",
            f"{version!r} is not a release of the {family} AMI; allowed: latest or a "
            f"release such as {example} (the EC2NodeClass alias {family}@<version>)",
        )
    elif len(alias) > _ALIAS_MAX:
        yield Finding(
            f"{p}.amiVersion",
            f"alias {alias!r} is {len(alias)} characters; Karpenter's EC2NodeClass allows {_ALIAS_MAX}",
        )


def _karpenter_labels(i: int, pool: NodePool) -> Iterator[Finding]:
    """Label keys the NodePool CRD's CEL rules reject in `spec.template.metadata.labels` (v1.14.1)."""
    for key in pool.labels:
        domain = key.split("/", 1)[0] if "/" in key else ""
        if key in _KARPENTER_RESTRICTED_LABELS:
            why = f"label {key!r} is restricted"
        elif domain.endswith("karpenter.sh") and key != CAPACITY_TYPE_LABEL:
            why = "label domain karpenter.sh is restricted"
        elif domain.endswith("karpenter.k8s.aws") and key not in _KARPENTER_AWS_LABELS:
            why = "label domain karpenter.k8s.aws (but for Karpenter's well-known keys) is restricted"
        else:
            continue
        yield Finding(
            f"nodePools[{i}].labels.{key}",
            f"{why} in a Karpenter NodePool, which would be rejected; remove it or use your own label domain",
        )


def _karpenter_sharing(spec: PlatformSpec, i: int, pool: NodePool) -> Iterator[Finding]:
    s, p = pool.sharing, f"nodePools[{i}]"
    if s.mode == SharingMode.MIG:
        yield Finding(
            f"{p}.aws.provisioner",
            "karpenter on a MIG pool: Karpenter knows only the resources an "
            f"instance type has ({GPU_RESOURCE} on GPU types), not the {MIG_RESOURCE_PREFIX}* ones the node "
            "advertises once MIG is configured (kubernetes-sigs/karpenter#751), so pods requesting them "
            "stay Pending ('no instance type satisfied resources') and the pool never gets a node; "
            "allowed: managed-node-group (cluster-autoscaler scales it from zero with the MIG counts in "
            "its node-template tags)",
        )
    elif s.mode in (SharingMode.TIME_SLICING, SharingMode.MPS) and s.replicas:
        itype = spec.hardware.instance(pool.instance_type)
        gpus = itype.gpu_count if itype else 0
        if gpus:
            pods = gpus * s.replicas
            yield Finding(
                f"{p}.aws.provisioner",
                f"karpenter on a {s.mode.value} pool: Karpenter sizes a "
                f"{pool.instance_type} node as {gpus} {GPU_RESOURCE}, but it advertises {pods} ({gpus} x "
                f"{s.replicas} replicas), so {pods} pending one-unit pods launch {s.replicas} nodes "
                "instead of 1 (the extra nodes go once empty, after consolidateAfter); use "
                "managed-node-group, whose autoscaler tags count the shared units",
                Severity.WARNING,
            )


def _zone_of(zone: str, region: str) -> bool:
    """An availability zone (or Local Zone) name of `region`: e.g. us-east-1a, us-east-1-bos-1a."""
    return zone.startswith(region) and bool(_ZONE.match(zone[len(region) :]))


def _karpenter(spec: PlatformSpec, i: int, pool: NodePool) -> Iterator[Finding]:
    k, p = pool.aws.karpenter, f"nodePools[{i}].aws.karpenter"
    for field, value in (("consolidateAfter", k.consolidate_after), ("expireAfter", k.expire_after)):
        if not _KARPENTER_DURATION.match(value):
            yield Finding(
                f"{p}.{field}", f"{value!r} is not a Karpenter duration; allowed: e.g. 30s, 10m, 1h30m, or Never"
            )
    if _ZERO_DURATION.match(k.expire_after):
        yield Finding(
            f"{p}.expireAfter",
            f"{k.expire_after!r}: every node would expire as soon as it launches and "
            "be replaced over and over; allowed: a positive duration, or Never",
        )
    elif (
        pool.aws.provisioner == Provisioner.KARPENTER
        and pool.sharing.mode == SharingMode.EXCLUSIVE
        and k.expire_after != "Never"
        and _KARPENTER_DURATION.match(k.expire_after)
    ):
        yield Finding(
            f"{p}.expireAfter",
            f"{k.expire_after!r} on exclusive (training) pool {pool.name!r}: expiry "
            "is forceful in Karpenter v1: at that age the node is tainted and drained even mid-run, so a "
            "multi-node job restarts from its last checkpoint; use Never and replace nodes between runs",
            Severity.WARNING,
        )
    if pool.aws.provisioner == Provisioner.KARPENTER:
        yield from _karpenter_ami(pool, p)
        yield from _karpenter_labels(i, pool)
        yield from _karpenter_sharing(spec, i, pool)
        if uses_placement_group(spec, pool) and not pool.aws.zone and len(pool_subnets(spec, pool)) > 1:
            yield Finding(
                f"nodePools[{i}].aws.zone",
                f"unset on pool {pool.name!r}, whose cluster placement group "
                "lives in one zone: Karpenter may try every zone of its subnets until EC2 pins one; set "
                "aws.zone (e.g. us-east-1a) to pin it, as Karpenter's placement group design does",
                Severity.WARNING,
            )
    if pool.aws.zone and spec.aws is not None and not _zone_of(pool.aws.zone, spec.aws.region):
        yield Finding(
            f"nodePools[{i}].aws.zone",
            f"{pool.aws.zone!r} is not an availability zone of region "
            f"{spec.aws.region!r}; allowed: e.g. {spec.aws.region}a",
        )
    if pool.aws.zone and pool.aws.provisioner != Provisioner.KARPENTER:
        yield Finding(
            f"nodePools[{i}].aws.zone",
            "set, but aws.provisioner is managed-node-group, whose zones come "
            "from aws.subnetIds; list that zone's subnets there and remove aws.zone",
        )
    if pool.aws.provisioner == Provisioner.KARPENTER and pool.min_size > 0:
        yield Finding(
            f"nodePools[{i}].minSize",
            f"{pool.min_size} on a Karpenter pool: Karpenter keeps no minimum "
            "(nodes come for pending pods and go when empty), so it is not applied; use a managed node "
            "group for warm capacity",
            Severity.WARNING,
        )
    if (
        pool.aws.provisioner != Provisioner.KARPENTER
        and "karpenter" in pool.aws.model_fields_set
        and pool.aws.karpenter != type(pool.aws.karpenter)()
    ):  # the default, as model_dump writes it, is unset
        yield Finding(
            p,
            "set, but aws.provisioner is managed-node-group; set aws.provisioner: karpenter or remove it",
            Severity.WARNING,
        )


def _release_fields(spec: PlatformSpec) -> Iterator[Finding]:
    """The autoscaler's image tag reaches Helm as it is, so it must be a valid tag (its namespace, chart version and
    role ARN are checked by their types, `gpu_platform.names` and `spec.RoleArnRef`)."""
    ca = spec.cluster_autoscaler
    if ca.image_tag is not None and not _IMAGE_TAG.match(ca.image_tag):
        yield Finding(
            "clusterAutoscaler.imageTag",
            f"{ca.image_tag!r} is not an image tag; allowed: letters, digits, "
            "'_', '.', '-' (not first), at most 128 characters, e.g. v1.33.6",
        )


def _cluster_autoscaler(spec: PlatformSpec) -> Iterator[Finding]:
    yield from _release_fields(spec)
    if not spec.cluster_autoscaler.enabled:
        return
    try:
        if spec.cluster_autoscaler.image_tag is None:
            image_tag(spec)
    except RenderError as e:
        yield from e.findings
    if all(p.aws.provisioner == Provisioner.KARPENTER for p in spec.node_pools):
        yield Finding(
            "clusterAutoscaler.enabled",
            "true, but every pool is provisioned by Karpenter, which scales "
            "its own nodes; the autoscaler only scales managed node groups",
            Severity.WARNING,
        )


def _eks_name(i: int, pool: NodePool) -> Iterator[Finding]:
    """A managed node group's generated name (`<pool>-` + 26 characters) must fit EKS's 63."""
    if pool.aws.provisioner != Provisioner.MANAGED_NODE_GROUP:
        return
    longest = EKS_NODE_GROUP_NAME_MAX - NAME_SUFFIX_LEN - 1
    if len(pool.name) > longest:
        yield Finding(
            f"nodePools[{i}].name",
            f"{pool.name!r} is {len(pool.name)} characters; an EKS managed node "
            f"group is named '<pool>-' plus a {NAME_SUFFIX_LEN}-character suffix within EKS's "
            f"{EKS_NODE_GROUP_NAME_MAX}, so pool names allow at most {longest}",
        )


def _gke_name(i: int, pool: NodePool) -> Iterator[Finding]:
    """A GKE node pool is named `<pool>-<hash>`: a letter first (GKE's name rule) and within GKE's 40 characters."""
    if len(pool.name) > GKE_POOL_NAME_MAX:
        yield Finding(
            f"nodePools[{i}].name",
            f"{pool.name!r} is {len(pool.name)} characters; a GKE node pool is "
            f"named '<pool>-' plus a {NAME_HASH_LEN}-character hash within GKE's {GKE_NODE_POOL_NAME_MAX}, "
            f"so pool names allow at most {GKE_POOL_NAME_MAX}",
        )
    if not pool.name[:1].isalpha():
        yield Finding(
            f"nodePools[{i}].name",
            f"{pool.name!r} starts with {pool.name[:1]!r}; GKE node pool names start with a lower-case letter",
        )


def _max_size(i: int, pool: NodePool) -> Iterator[Finding]:
    if pool.max_size > MAX_POOL_NODES:
        yield Finding(
            f"nodePools[{i}].maxSize",
            f"{pool.max_size} nodes; a Kubernetes cluster supports at most "
            f"{MAX_POOL_NODES} nodes, so allowed: 0..{MAX_POOL_NODES}",
        )


def _eks_size(i: int, pool: NodePool) -> Iterator[Finding]:
    yield from _max_size(i, pool)
    mng = pool.aws.provisioner == Provisioner.MANAGED_NODE_GROUP
    if mng and _EKS_NODE_GROUP_QUOTA < pool.max_size <= MAX_POOL_NODES:
        yield Finding(
            f"nodePools[{i}].maxSize",
            f"{pool.max_size} nodes; EKS's default quota is "
            f"{_EKS_NODE_GROUP_QUOTA} nodes per managed node group: request a quota increase or split the "
            "pool",
            Severity.WARNING,
        )


def _gke_size(spec: PlatformSpec, i: int, pool: NodePool) -> Iterator[Finding]:
    yield from _max_size(i, pool)
    zones = max(len(set(pool_zones(spec, pool))), 1)  # a zone listed twice is one zone
    if GKE_NODES_PER_ZONE * zones < pool.max_size <= MAX_POOL_NODES:
        yield Finding(
            f"nodePools[{i}].maxSize",
            f"{pool.max_size} nodes over {zones} zone(s); GKE allows at most "
            f"{GKE_NODES_PER_ZONE} nodes per node pool per zone; allowed: 0..{GKE_NODES_PER_ZONE * zones}, "
            "or add zones",
        )


def _eks_upgrades(spec: PlatformSpec, i: int, pool: NodePool) -> Iterator[Finding]:
    """EFA and placement turned on by default change an existing node group's launch template."""
    if pool.aws.provisioner != Provisioner.MANAGED_NODE_GROUP:
        return
    added = []
    if uses_efa(spec, pool) and pool.aws.efa is None:
        added.append("EFA interfaces")
    if uses_placement_group(spec, pool) and pool.aws.placement_group is None:
        added.append("a cluster placement group")
    if added:
        yield Finding(
            f"nodePools[{i}].aws.efa",
            f"{' and '.join(added)} on by default for pool {pool.name!r}: on a "
            "node group created before they existed this is a new launch template version, and EKS "
            "replaces every node (maxUnavailablePercentage at a time), stopping running jobs; set "
            "aws.efa / aws.placementGroup: true to acknowledge, or false to keep the nodes as they are",
            Severity.WARNING,
        )


def check_eks(spec: PlatformSpec) -> Iterator[Finding]:
    """EKS: node role, subnets, capacity options, label and taint limits, EFA, Karpenter, autoscaler."""
    yield from _cluster_autoscaler(spec)
    if spec.aws is not None and not spec.aws.node_role_arn:  # its form is checked by its type (`spec.RoleArnRef`)
        yield Finding("aws.nodeRoleArn", "missing; EKS managed node groups need the IAM role ARN the nodes run as")
    for i, pool in enumerate(spec.node_pools):
        if not pool_subnets(spec, pool):
            yield Finding(f"nodePools[{i}].aws.subnetIds", "no subnets: set nodePools[].aws.subnetIds or aws.subnetIds")
        yield from _eks_capacity(spec, i, pool)
        yield from _eks_name(i, pool)
        yield from _eks_size(i, pool)
        yield from _eks_upgrades(spec, i, pool)
        yield from _eks_labels(spec, i, pool)
        yield from _eks_efa(spec, i, pool)
        yield from _karpenter(spec, i, pool)


def _gke_mig(spec: PlatformSpec, i: int, pool: NodePool, gpu_model: str) -> Iterator[Finding]:
    p = f"nodePools[{i}].sharing"
    layout = {k: n for k, n in (pool.sharing.mig_layout or {}).items() if n > 0}
    if len(layout) > 1:
        yield Finding(
            f"{p}.migLayout",
            f"{layout} mixes MIG profiles; GKE's gpuPartitionSize makes one profile per pool; {_USE_OPERATOR}",
        )
        return
    ((profile, count),) = layout.items()
    gke_count = gke_partition_count(gpu_model, profile)
    if count != gke_count:
        yield Finding(
            f"{p}.migLayout.{profile}",
            f"{count} per GPU, but GKE's gpuPartitionSize {profile!r} always "
            f"makes {gke_count}; allowed: {gke_count}, or {_USE_OPERATOR}",
        )
        return
    yield Finding(
        f"{p}.migLayout",
        f"GKE's device plugin advertises the {profile} partitions as {GPU_RESOURCE}, so "
        f"this pool's tiers request {GPU_RESOURCE} and reach the partitions through the pool's node "
        f"selector; to name profiles as {MIG_RESOURCE_PREFIX}<profile>, {_USE_OPERATOR}",
        Severity.INFO,
    )


def _gke_native(spec: PlatformSpec, i: int, pool: NodePool, gpu_model: str) -> Iterator[Finding]:
    s, p = pool.sharing, f"nodePools[{i}]"
    if pool.gcp.gpu_driver_version not in _GKE_DRIVER_VERSIONS:
        yield Finding(
            f"{p}.gcp.gpuDriverVersion",
            f"{pool.gcp.gpu_driver_version!r} with gpuStack gke-native; allowed: {', '.join(_GKE_DRIVER_VERSIONS)}",
        )
    if s.replicas and s.replicas > _GKE_MAX_SHARED_CLIENTS:
        yield Finding(
            f"{p}.sharing.replicas",
            f"{s.replicas} exceeds GKE's maxSharedClientsPerGpu limit; allowed: 2..{_GKE_MAX_SHARED_CLIENTS}",
        )
    if s.mode == SharingMode.MIG:
        yield from _gke_mig(spec, i, pool, gpu_model)
    yield Finding(
        f"{p}.sharing",
        f"mode {s.mode.value!r}: on GKE (gke-native) sharing lives in the node pool's guest "
        "accelerator, whose fields are immutable, so changing sharing replaces the pool (its nodes are "
        "drained and recreated); set protect: true to guard it",
        Severity.WARNING,
    )


def _gke_placement(spec: PlatformSpec, i: int, pool: NodePool) -> Iterator[Finding]:
    if pool.gcp.compact_placement is None and uses_compact_placement(spec, pool):
        yield Finding(
            f"nodePools[{i}].gcp.compactPlacement",
            f"on by default for pool {pool.name!r}: GKE sets a "
            "placement policy only when it creates a node pool, so on a pool created without it this "
            "replaces the pool (its nodes are drained and recreated); set compactPlacement: true to "
            "acknowledge, or false to keep the existing pool",
            Severity.WARNING,
        )
    if not pool.gcp.compact_placement:
        return
    p, zones = f"nodePools[{i}].gcp.compactPlacement", pool_zones(spec, pool)
    if len(zones) != 1:
        yield Finding(
            p,
            f"true with zones {zones}; a compact placement pool lives in one zone: set gcp.zones to one "
            "zone, or compactPlacement: false",
        )
    if not pool.instance_type.startswith(COMPACT_MACHINE_PREFIXES):
        hw = spec.hardware
        compact = [t.gpu_model for n, t in hw.instance_types.items() if n.startswith(COMPACT_MACHINE_PREFIXES)]
        gpus = ", ".join(gpu_families(hw.gpu_models[m] for m in compact if m in hw.gpu_models))
        yield Finding(
            p,
            f"true on {pool.instance_type!r}; GKE offers compact placement for GPU pools on A2 and A3 "
            f"({gpus}) machines; allowed: false",
        )


def _repeated_zones(path: str, zones: list[str] | None) -> Iterator[Finding]:
    """A zone listed twice: GKE takes node locations as a set, so the pool's size limit (1,000 nodes per zone) and
    the node counts per zone would be counted for a zone it does not have."""
    seen: set[str] = set()
    for k, zone in enumerate(zones or []):
        if zone in seen:
            yield Finding(f"{path}[{k}]", f"{zone!r} is listed twice; allowed: each zone once")
        seen.add(zone)


def _zones_of_location(spec: PlatformSpec, path: str, zones: list[str] | None) -> Iterator[Finding]:
    """GKE node locations are zones of the cluster's region (for a zonal cluster, its zone's region)."""
    if spec.gcp is None:
        return
    region = gcp_region(spec.gcp.location)
    for k, zone in enumerate(zones or []):
        if gcp_region(zone) != region:
            yield Finding(
                f"{path}[{k}]",
                f"{zone!r} is not in the cluster's region {region!r} (gcp.location {spec.gcp.location!r}); GKE "
                f"places node pools in the cluster's region only; allowed: a zone like {region}-a",
            )


def _gke_cluster(spec: PlatformSpec) -> Iterator[Finding]:
    if spec.gcp is not None:
        yield from _repeated_zones("gcp.zones", spec.gcp.zones)
    if spec.cluster_autoscaler.enabled:
        yield Finding(
            "clusterAutoscaler.enabled",
            "true on GKE: GKE runs its own cluster autoscaler, which scales "
            "each pool between minSize and maxSize (totalMin/MaxNodeCount); nothing is installed",
            Severity.WARNING,
        )
    if gpu_stack(spec) == GkeGpuStack.GPU_OPERATOR and spec.gcp is not None and not spec.gcp.driver_installer:
        yield Finding(
            "gcp.driverInstaller",
            "false with gpuStack gpu-operator: GKE's driver install is disabled and "
            "nothing rendered installs a driver; install one yourself before GPU pods can start",
            Severity.WARNING,
        )


def check_gke(spec: PlatformSpec) -> Iterator[Finding]:
    """GKE: accelerator names, GPU-stack limits on sharing, placement, drivers, replacement warnings."""
    yield from _gke_cluster(spec)
    for i, pool in enumerate(spec.node_pools):
        p = f"nodePools[{i}]"
        acc, _ = gke_accelerator(spec, pool)
        itype = spec.hardware.instance(pool.instance_type)
        if acc is None:
            on_gke = gpu_families(m for m in spec.hardware.gpu_models.values() if m.gke_accelerator)
            yield Finding(
                f"{p}.instanceType",
                f"{pool.instance_type!r} has GPU {itype.gpu_model if itype else '?'}, "
                f"which has no GKE accelerator type in the catalog; allowed GPUs: {', '.join(on_gke)}",
            )
        if pool.gcp.location_policy not in _GKE_LOCATION_POLICIES:
            yield Finding(
                f"{p}.gcp.locationPolicy", f"{pool.gcp.location_policy!r}; allowed: {', '.join(_GKE_LOCATION_POLICIES)}"
            )
        yield from _label_values(spec, i, pool, min_len=0)
        yield from _gke_name(i, pool)
        yield from _repeated_zones(f"{p}.gcp.zones", pool.gcp.zones)
        yield from _zones_of_location(spec, f"{p}.gcp.zones", pool.gcp.zones)
        yield from _gke_placement(spec, i, pool)
        yield from _gke_size(spec, i, pool)
        cos = pool.gcp.image_type.upper().startswith("COS")
        if gpu_stack(spec) == GkeGpuStack.GPU_OPERATOR and spec.gcp and spec.gcp.driver_installer and not cos:
            yield Finding(
                f"{p}.gcp.imageType",
                f"{pool.gcp.image_type!r}: the rendered driver installer is Google's "
                "COS DaemonSet; on Ubuntu apply Google's Ubuntu installer for this GPU and node version",
                Severity.WARNING,
            )
        if gpu_stack(spec) == GkeGpuStack.GKE_NATIVE and itype is not None:
            yield from _gke_native(spec, i, pool, itype.gpu_model)


def _cluster_total(spec: PlatformSpec) -> Iterator[Finding]:
    total = sum(p.max_size for p in spec.node_pools)
    if total > MAX_POOL_NODES and all(p.max_size <= MAX_POOL_NODES for p in spec.node_pools):
        yield Finding(
            "nodePools",
            f"the GPU pools reach {total:,} nodes at maxSize together, more than the {MAX_POOL_NODES:,} nodes a "
            "Kubernetes cluster supports (before any other node of the cluster)",
            Severity.WARNING,
        )


def check_node_pools(spec: PlatformSpec) -> list[Finding]:
    """Every node pool finding for the spec's cloud."""
    cloud = check_eks(spec) if spec.cloud == Cloud.AWS else check_gke(spec)
    return [*cloud, *_cluster_total(spec)]
