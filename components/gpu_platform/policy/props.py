"""Reading resource properties safely (plain dicts or the engine's unknown-checking proxies) and GPU detection."""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from ..catalog import INSTANCE_TYPES
from ..contract import INSTANCE_TYPE_LABEL

__all__ = [
    "AWS_ASG",
    "EC2_INSTANCE",
    "EKS_NODE_GROUP",
    "EKS_LAUNCH_TEMPLATE",
    "GpuPool",
    "POOL_TYPES",
    "PoolKind",
    "KARPENTER_NODE_POOL",
    "KARPENTER_NODE_CLASS",
    "dig",
    "gpu_pool",
    "gpu_pools",
    "items",
    "mapping",
    "aws_gpu_type",
]

EKS_NODE_GROUP = "aws:eks/nodeGroup:NodeGroup"
EKS_LAUNCH_TEMPLATE = "aws:ec2/launchTemplate:LaunchTemplate"
GKE_NODE_POOL = "gcp:container/nodePool:NodePool"
GKE_CLUSTER = "gcp:container/cluster:Cluster"
AWS_ASG = "aws:autoscaling/group:Group"
EC2_INSTANCE = "aws:ec2/instance:Instance"
KARPENTER_NODE_POOL = ("kubernetes:karpenter.sh/v1:NodePool", "kubernetes:karpenter.sh/v1beta1:NodePool")
# Every type gpu_pools reads; other resources are never node pools.
POOL_TYPES = frozenset({EKS_NODE_GROUP, GKE_NODE_POOL, *KARPENTER_NODE_POOL, GKE_CLUSTER, AWS_ASG, EC2_INSTANCE})
KARPENTER_NODE_CLASS = (
    "kubernetes:karpenter.k8s.aws/v1:EC2NodeClass",
    "kubernetes:karpenter.k8s.aws/v1beta1:EC2NodeClass",
)

# EC2 instance families with NVIDIA GPUs: the EKS AL2023/Bottlerocket NVIDIA AMI support list (facts.md section 7)
# plus older families still sold (p2, p3, g3, g3s) and Graviton g5g. AMD (g4ad) and Inferentia/Trainium are not GPUs.
NVIDIA_AWS_FAMILIES = frozenset(
    {
        "p2",
        "p3",
        "p3dn",
        "p4d",
        "p4de",
        "p5",
        "p5e",
        "p5en",
        "p6-b200",
        "p6-b300",
        "p6e-gb200",
        "g3",
        "g3s",
        "g4dn",
        "g5",
        "g5g",
        "g6",
        "g6e",
        "g6f",
        "gr6",
        "gr6f",
        "g7e",
    }
)
# GCE machine families with built-in NVIDIA GPUs (accelerator-optimized): A2, A3, A4, A4X, G2, and G4 (NVIDIA RTX
# PRO 6000, cloud.google.com/compute/docs/accelerator-optimized-machines "G4 machine series").
_GCP_GPU_MACHINE_PREFIXES = ("a2-", "a3-", "a4-", "a4x-", "g2-", "g4-")
_NVIDIA_AMI_MARKERS = ("NVIDIA", "_GPU")


# Plain dicts and lists (what JSON gives) are checked by exact type first: the ABC isinstance checks below them
# (for the engine's proxies) were a fifth of `audit`'s time on a 50,000-resource export.
def mapping(value: Any) -> Mapping[str, Any]:
    """`value` if it is a mapping, else an empty one."""
    if type(value) is dict:
        return value
    return {} if value is None or type(value) is list else value if isinstance(value, Mapping) else {}


def items(value: Any) -> Sequence[Any]:
    """`value` if it is a list-like (not a string), else an empty list."""
    if type(value) is list:
        return value
    if value is None or type(value) is dict or type(value) is str:
        return ()
    return value if isinstance(value, Sequence) and not isinstance(value, str | bytes) else ()


def dig(value: Any, *path: str | int, default: Any = None) -> Any:
    """The value at `path` inside nested mappings/lists, or `default` when any step is missing."""
    for step in path:
        if isinstance(step, int):
            seq = items(value)
            if step >= len(seq):
                return default
            value = seq[step]
        else:
            m = value if type(value) is dict else mapping(value)
            if step not in m:
                return default
            value = m[step]
    return default if value is None else value


def aws_gpu_type(instance_type: str) -> bool:
    """Whether an EC2 instance type has NVIDIA GPUs."""
    if instance_type in INSTANCE_TYPES:
        return INSTANCE_TYPES[instance_type].cloud == "aws"
    return instance_type.split(".", 1)[0] in NVIDIA_AWS_FAMILIES


def gcp_gpu_machine(machine_type: str) -> bool:
    """Whether a GCE machine type has built-in NVIDIA GPUs."""
    return machine_type in INSTANCE_TYPES or machine_type.startswith(_GCP_GPU_MACHINE_PREFIXES)


class PoolKind(StrEnum):
    """What provisions a GPU node pool resource."""

    EKS = "eks"  # an EKS managed node group
    GKE = "gke"  # a GKE node pool, or a cluster's auto-provisioned or Autopilot nodes
    EC2 = "ec2"  # a self-managed EC2 instance joined by its user data
    ASG = "asg"  # a self-managed auto scaling group
    KARPENTER = "karpenter"  # a Karpenter NodePool


@dataclass(frozen=True)
class GpuPool:
    """The classification-relevant view of one GPU node pool resource."""

    kind: PoolKind
    name: str  # the pool's own name (node group name, pool name, metadata.name)
    why: str  # what makes it a GPU pool
    labels: Mapping[str, Any]
    taints: list[tuple[str, str, str]]  # (key, value, effect normalised to NoSchedule style)

    @property
    def uncertain(self) -> bool:
        """The pack cannot tell whether this pool has GPUs (reported as advisory, never passed silently)."""
        return self.why.startswith(_CANNOT_TELL)


_EFFECTS = {"NO_SCHEDULE": "NoSchedule", "NO_EXECUTE": "NoExecute", "PREFER_NO_SCHEDULE": "PreferNoSchedule"}


def _taints(raw: Any) -> list[tuple[str, str, str]]:
    out = []
    for t in items(raw):
        effect = str(dig(t, "effect", default=""))
        out.append((str(dig(t, "key", default="")), str(dig(t, "value", default="")), _EFFECTS.get(effect, effect)))
    return out


Lookup = Callable[[Mapping[str, Any]], "Mapping[str, Any] | None"]  # launch template reference -> its props
_CANNOT_TELL = "cannot tell"


def _requirements_gpu(req: Any) -> str | None:
    """Why EC2 attribute-based selection (`instanceRequirements`) may pick a GPU instance, or None when it excludes
    them. Unset accelerator attributes admit GPU instances: AWS's defaults are no accelerator count limit and any
    manufacturer and type (EC2 API reference, InstanceRequirements: AcceleratorCount, AcceleratorManufacturers,
    AcceleratorTypes)."""
    if not isinstance(req, Mapping):
        return None
    if _count(dig(req, "acceleratorCount", "max", default=1)) <= 0:
        return None
    makers = [str(m).lower() for m in items(req.get("acceleratorManufacturers"))]
    kinds = [str(k).lower() for k in items(req.get("acceleratorTypes"))]
    if (makers and "nvidia" not in makers) or (kinds and "gpu" not in kinds):
        return None
    allowed = [str(t) for t in items(req.get("allowedInstanceTypes"))]
    if allowed and not any(_pattern_may_be_gpu(t) for t in allowed):
        return None
    shown = [
        f"{k} {req[k]}"
        for k in ("acceleratorCount", "acceleratorManufacturers", "acceleratorTypes", "allowedInstanceTypes")
        if req.get(k)
    ]
    return (
        "instance requirements admit GPU instances ("
        + ("; ".join(shown) or "no accelerator limit; set acceleratorCount.max to 0 to exclude them")
        + ")"
    )


def _pattern_may_be_gpu(pattern: str) -> bool:
    """Whether an allowedInstanceTypes pattern (`*` wildcards, e.g. `g5.*`, `p*`) may match an NVIDIA type."""
    family = pattern.split(".", 1)[0]
    if "*" not in family:
        return aws_gpu_type(pattern) or family in NVIDIA_AWS_FAMILIES
    head = family.split("*", 1)[0]
    return any(f.startswith(head) for f in NVIDIA_AWS_FAMILIES)


def _eks(name: str, props: Mapping[str, Any], lookup: Lookup | None = None) -> GpuPool | None:
    types = [str(t) for t in items(props.get("instanceTypes"))]
    ami = str(props.get("amiType") or "")
    lt_ref = mapping(props.get("launchTemplate"))
    lt = lookup(lt_ref) if lookup and lt_ref else None
    if not types and lt is not None and dig(lt, "instanceType"):
        types = [str(dig(lt, "instanceType"))]
    gpu_types = [t for t in types if aws_gpu_type(t)]
    own = str(props.get("nodeGroupName") or str(props.get("nodeGroupNamePrefix") or "").rstrip("-") or name)
    if gpu_types:
        why = f"instance type {', '.join(gpu_types)}" + (
            " (from its launch template)" if lt is not None and not props.get("instanceTypes") else ""
        )
    elif any(m in ami for m in _NVIDIA_AMI_MARKERS):
        why = f"AMI type {ami}"
    elif not types and lt is not None and (req := _requirements_gpu(dig(lt, "instanceRequirements"))):
        why = f"its launch template's {req}"
    elif not types and lt_ref and (lookup is None or lt is None or not dig(lt, "instanceType")):
        # The instance type lives in a launch template this view cannot see, or nowhere (set at launch).
        where = (
            "its launch template is not in this stack"
            if lookup and lt is None
            else "no instance type is set on it or its launch template"
        )
        why = f"{_CANNOT_TELL}: {where} and amiType is {ami or 'unset'}"
    else:
        return None
    return GpuPool(PoolKind.EKS, own, why, mapping(props.get("labels")), _taints(props.get("taints")))


_USERDATA_LABELS = re.compile(r"--node-labels[= ]+['\"]?([^\s'\"]+)")
_USERDATA_TAINTS = re.compile(r"--register-with-taints[= ]+['\"]?([^\s'\"]+)")


def _user_data(lt: Mapping[str, Any]) -> str:
    """User data of a launch template or instance, decoded (an instance may give it as `userDataBase64`)."""
    raw = str(dig(lt, "userData", default="") or dig(lt, "userDataBase64", default=""))
    try:
        return base64.b64decode(raw, validate=True).decode("utf-8", "replace")
    except (binascii.Error, ValueError):
        return raw


def _kubelet_labels_and_taints(text: str) -> tuple[dict[str, str], list[tuple[str, str, str]]]:
    labels: dict[str, str] = {}
    taints: list[tuple[str, str, str]] = []
    for found in _USERDATA_LABELS.findall(text):
        for kv in found.split(","):
            k, _, v = kv.partition("=")
            labels[k] = v
    for found in _USERDATA_TAINTS.findall(text):
        for t in found.split(","):
            kv, _, effect = t.partition(":")
            k, _, v = kv.partition("=")
            taints.append((k, v, effect))
    return labels, taints


def _asg(name: str, props: Mapping[str, Any], lookup: Lookup | None = None) -> GpuPool | None:
    """A self-managed auto scaling group: instance types of its launch template or mixed-instances overrides."""
    mixed = mapping(dig(props, "mixedInstancesPolicy", "launchTemplate"))
    spec = mapping(dig(mixed, "launchTemplateSpecification"))
    lt_ref = mapping(props.get("launchTemplate")) or {
        "id": spec.get("launchTemplateId"),
        "name": spec.get("launchTemplateName"),
    }
    lt = lookup(lt_ref) if lookup and any(lt_ref.values()) else None
    types = [str(dig(o, "instanceType")) for o in items(dig(mixed, "overrides")) if dig(o, "instanceType")]
    if lt is not None and dig(lt, "instanceType"):
        types.append(str(dig(lt, "instanceType")))
    labels, taints = _kubelet_labels_and_taints(_user_data(lt or {}))
    gpu_types = [t for t in types if aws_gpu_type(t)]
    reqs = [r for r in (_requirements_gpu(dig(o, "instanceRequirements")) for o in items(dig(mixed, "overrides"))) if r]
    if lt is not None and (r := _requirements_gpu(dig(lt, "instanceRequirements"))):
        reqs.append(f"its launch template's {r}")
    if gpu_types:
        why = f"instance type {', '.join(gpu_types)}"
    elif reqs:
        why = reqs[0]
    elif not types and (props.get("launchConfiguration") or any(lt_ref.values())):
        why = f"{_CANNOT_TELL}: its launch template or configuration is not in this stack"
    else:
        return None
    return GpuPool(PoolKind.ASG, str(props.get("name") or name), why, labels, taints)


def _gke_node_config(own: str, node: Mapping[str, Any]) -> GpuPool | None:
    # camelCase is what the engine sends; snake_case (the Python SDK's spelling) is read too, for hand-made exports.
    raw = node.get("guestAccelerators") or node.get("guest_accelerators")
    accels = [a for a in items(raw) if _count(dig(a, "count", default=0)) > 0]
    machine = str(node.get("machineType") or node.get("machine_type") or "")
    if accels:
        why = (
            ", ".join(f"{_shown(dig(a, 'count'))} x {dig(a, 'type', default='?')}" for a in accels)
            + " guest accelerators"
        )
    elif machine and gcp_gpu_machine(machine):
        why = f"machine type {machine}"
    else:
        return None
    return GpuPool(PoolKind.GKE, own, why, mapping(node.get("labels")), _taints(node.get("taints")))


def _shown(value: Any) -> str:
    """A count as people write it: the engine sends every number as a float (1.0)."""
    return str(int(value)) if isinstance(value, float) and value.is_integer() else str(value)


def _count(value: Any) -> float:
    try:
        number = float(value)
    except (TypeError, ValueError, OverflowError):
        return 1.0  # unknown or computed: assume it may attach accelerators
    return number if number == number else 1.0


def _gke(name: str, props: Mapping[str, Any]) -> GpuPool | None:
    node = mapping(props.get("nodeConfig")) or mapping(props.get("node_config"))
    return _gke_node_config(str(props.get("name") or name), node)


def _gke_cluster(name: str, props: Mapping[str, Any]) -> list[GpuPool]:
    """Node pools declared inline on a GKE cluster, and its default pool's node config."""
    cluster = str(props.get("name") or name)
    found = []
    for i, pool in enumerate(items(props.get("nodePools"))):
        own = f"{cluster}/{dig(pool, 'name', default=f'nodePools[{i}]')}"
        if (p := _gke_node_config(own, mapping(dig(pool, "nodeConfig")))) is not None:
            found.append(p)
    if (
        not props.get("removeDefaultNodePool")
        and (p := _gke_node_config(f"{cluster}/default-pool", mapping(props.get("nodeConfig")))) is not None
    ):
        found.append(p)
    auto = mapping(props.get("clusterAutoscaling"))
    gpu_limits = [
        f"{dig(r, 'resourceType')} up to {_shown(dig(r, 'maximum', default='?'))}"
        for r in items(auto.get("resourceLimits"))
        if str(dig(r, "resourceType", default="")).lower().startswith("nvidia-")
        and _count(dig(r, "maximum", default=1)) > 0
    ]
    if auto.get("enabled") is True and gpu_limits:
        # Node auto-provisioning creates node pools for pending pods; their labels come from the pods, not the spec.
        found.append(
            GpuPool(
                PoolKind.GKE,
                f"{cluster}/auto-provisioned",
                "node auto-provisioning may create GPU node pools "
                f"({', '.join(gpu_limits)}; remove the nvidia-* resourceLimits and declare GPU pools)",
                {},
                [],
            )
        )
    if props.get("enableAutopilot") is True:
        found.append(
            GpuPool(
                PoolKind.GKE,
                f"{cluster}/autopilot",
                f"{_CANNOT_TELL}: Autopilot provisions GPU nodes for any "
                "pod that selects an accelerator, outside the spec's pools (admission still applies)",
                {},
                [],
            )
        )
    return found


def _ec2_instance(name: str, props: Mapping[str, Any], lookup: Lookup | None = None) -> GpuPool | None:
    """A self-managed GPU node: an EC2 instance of a GPU type whose user data joins a Kubernetes cluster; the
    instance type and the user data may both come from its launch template (an instance's own win)."""
    lt_ref = mapping(props.get("launchTemplate"))
    lt = mapping(lookup(lt_ref)) if lookup and any(lt_ref.values()) else {}
    instance_type = str(props.get("instanceType") or lt.get("instanceType") or "")
    text = _user_data(props) or _user_data(lt)
    if not aws_gpu_type(instance_type) or not any(m in text for m in _JOINS_CLUSTER):
        return None
    labels, taints = _kubelet_labels_and_taints(text)
    own = str(dig(props, "tags", "Name", default="") or name)
    return GpuPool(
        PoolKind.EC2, own, f"instance type {instance_type}, joined to a cluster by its user data", labels, taints
    )


# What EKS bootstrap user data contains: the AL2 script, AL2023's nodeadm NodeConfig, or kubelet flags.
_JOINS_CLUSTER = ("bootstrap.sh", "node.eks.aws", "NodeConfig", "kubelet", "[settings.kubernetes]")


# What one GPU instance looks like to Karpenter's requirements (well-known labels of karpenter.k8s.aws/v1).
# Every NVIDIA family and catalog type is a candidate; a requirement on a key a candidate does not describe
# (zone, capacity type, CPU ...) is taken as satisfiable, so detection errs towards "may launch GPUs".
def _gpu_candidates() -> list[dict[str, str]]:
    out = []
    for name, t in INSTANCE_TYPES.items():
        if t.cloud == "aws":
            out.append(_candidate(name, t.gpu_count))
    for family in sorted(NVIDIA_AWS_FAMILIES):
        for gpus in (1, 2, 4, 8, 16):  # a family whose sizes the catalog lacks: every GPU count it may have
            out.append(_candidate(f"{family}.xlarge", gpus))
    return out


# Karpenter's AWS labels describing an instance type, read from NodePool requirements.
_FAMILY = "karpenter.k8s.aws/instance-family"
_SIZE = "karpenter.k8s.aws/instance-size"
_CATEGORY = "karpenter.k8s.aws/instance-category"
_GENERATION = "karpenter.k8s.aws/instance-generation"
_GPU_COUNT = "karpenter.k8s.aws/instance-gpu-count"
_GPU_NAME = "karpenter.k8s.aws/instance-gpu-name"
_GPU_MANUFACTURER = "karpenter.k8s.aws/instance-gpu-manufacturer"
_GPU_MEMORY = "karpenter.k8s.aws/instance-gpu-memory"


def _candidate(instance_type: str, gpus: int | None) -> dict[str, str]:
    family, _, size = instance_type.partition(".")
    m = re.match(r"([a-z]+)(\d*)", family)
    labels = {
        INSTANCE_TYPE_LABEL: instance_type,
        _FAMILY: family,
        _SIZE: size,
        _GPU_MANUFACTURER: "nvidia",
        "kubernetes.io/os": "linux",
    }
    if m:
        labels[_CATEGORY] = m.group(1)
        if m.group(2):
            labels[_GENERATION] = m.group(2)
    if gpus is not None:
        labels[_GPU_COUNT] = str(gpus)
    return labels


_DESCRIBED = {
    INSTANCE_TYPE_LABEL,
    _FAMILY,
    _SIZE,
    _CATEGORY,
    _GENERATION,
    _GPU_COUNT,
    _GPU_MANUFACTURER,
    _GPU_NAME,
    _GPU_MEMORY,
}


def _admits(labels: Mapping[str, str], req: Any) -> bool:
    """Whether one Karpenter requirement admits an instance with `labels` (unknown attributes admit)."""
    key, op = str(dig(req, "key", default="")), str(dig(req, "operator", default=""))
    values = [str(v) for v in items(dig(req, "values"))]
    if key not in _DESCRIBED:
        return True
    value = labels.get(key)
    if op == "DoesNotExist":
        return value is None and key not in (
            INSTANCE_TYPE_LABEL,
            _FAMILY,
            _GPU_COUNT,
            _GPU_MANUFACTURER,
        )
    if value is None:
        return op != "In" or key in (
            _GPU_COUNT,
            _GPU_NAME,
            _GPU_MEMORY,
            _GENERATION,
        )
    if op == "In":
        return value in values
    if op == "NotIn":
        return value not in values
    if op == "Exists":
        return True
    if op in ("Gt", "Lt", "Gte", "Lte") and values:
        try:
            have, bound = float(value), float(values[0])
        except ValueError:
            return True
        return {"Gt": have > bound, "Lt": have < bound, "Gte": have >= bound, "Lte": have <= bound}[op]
    return True


def _karpenter_gpus(requirements: Sequence[Any]) -> str | None:
    """Why the requirements (read as sets) admit a GPU instance, or None when they exclude every one."""
    reqs = [r for r in requirements if isinstance(r, Mapping)]
    for cand in _GPU_CANDIDATES:
        if all(_admits(cand, r) for r in reqs):
            named = [r for r in (_karpenter_gpu_requirement(q) for q in reqs) if r]
            if named:
                return "requirements allow GPU instances (" + "; ".join(named) + ")"
            shown = "; ".join(
                f"{dig(r, 'key')} {dig(r, 'operator')} {list(items(dig(r, 'values')))}"
                for r in reqs
                if str(dig(r, "key", default="")) in _DESCRIBED
            )
            return (
                f"requirements admit GPU instances such as {cand[INSTANCE_TYPE_LABEL]} ("
                + (shown or "no instance constraint")
                + "; exclude them with "
                f"{_GPU_COUNT} DoesNotExist)"
            )
    return None


_KARPENTER_GPU_KEYS = {
    _GPU_COUNT,
    _GPU_NAME,
    _GPU_MANUFACTURER,
    _GPU_MEMORY,
}


def _karpenter_gpu_requirement(req: Any) -> str | None:
    key, op = str(dig(req, "key", default="")), str(dig(req, "operator", default=""))
    values = [str(v) for v in items(dig(req, "values"))]
    shown = f"{key} {op} {values}" if values else f"{key} {op}"
    if key in _KARPENTER_GPU_KEYS:
        if op == "Exists" or (op == "Gt" and values) or (op == "In" and any(v not in ("0", "") for v in values)):
            return shown
    elif op == "In" and key == _FAMILY:
        if any(v in NVIDIA_AWS_FAMILIES for v in values):
            return shown
    elif op == "In" and key == INSTANCE_TYPE_LABEL:
        if any(aws_gpu_type(v) or gcp_gpu_machine(v) for v in values):
            return shown
    elif op == "In" and key == _CATEGORY and any(v in ("p", "g") for v in values):
        return shown
    return None


def _karpenter(name: str, props: Mapping[str, Any]) -> GpuPool | None:
    tmpl = dig(props, "spec", "template", default={})
    why = _karpenter_gpus(items(dig(tmpl, "spec", "requirements")))
    if why is None:
        return None
    own = str(dig(props, "metadata", "name", default=name))
    return GpuPool(
        PoolKind.KARPENTER, own, why, mapping(dig(tmpl, "metadata", "labels")), _taints(dig(tmpl, "spec", "taints"))
    )


# Every policy asks about the same resources: detection without a lookup is cached per props object (the cache
# holds the object, so its id cannot be reused while the entry lives).
_SEEN: dict[tuple[str, str, int], tuple[Any, list[GpuPool]]] = {}
_SEEN_MAX = 100_000


def gpu_pools(resource_type: str, name: str, props: Mapping[str, Any], lookup: Lookup | None = None) -> list[GpuPool]:
    """The GPU pools a resource declares (a GKE cluster may hold several inline), with "cannot tell" ones."""
    if resource_type not in POOL_TYPES:
        return []
    if lookup is not None:
        return _detect(resource_type, name, props, lookup)
    key = (resource_type, name, id(props))
    hit = _SEEN.get(key)
    if hit is not None and hit[0] is props:
        return hit[1]
    found = _detect(resource_type, name, props, None)
    if len(_SEEN) >= _SEEN_MAX:
        _SEEN.clear()
    _SEEN[key] = (props, found)
    return found


def _detect(resource_type: str, name: str, props: Mapping[str, Any], lookup: Lookup | None) -> list[GpuPool]:
    if resource_type == EKS_NODE_GROUP:
        found = [_eks(name, props, lookup)]
    elif resource_type == GKE_NODE_POOL:
        found = [_gke(name, props)]
    elif resource_type in KARPENTER_NODE_POOL:
        found = [_karpenter(name, props)]
    elif resource_type == GKE_CLUSTER:
        return _gke_cluster(name, props)
    elif resource_type == AWS_ASG:
        found = [_asg(name, props, lookup)]
    elif resource_type == EC2_INSTANCE:
        found = [_ec2_instance(name, props, lookup)]
    else:
        return []
    return [p for p in found if p is not None]


def gpu_pool(resource_type: str, name: str, props: Mapping[str, Any], lookup: Lookup | None = None) -> GpuPool | None:
    """The GPU pool view of a resource, or None when it is not (or cannot be told to be) a GPU node pool."""
    pools = [p for p in gpu_pools(resource_type, name, props, lookup) if not p.uncertain]
    return pools[0] if pools else None


_GPU_CANDIDATES = _gpu_candidates()
