"""Reading resource properties safely (plain dicts or the engine's unknown-checking proxies) and GPU detection."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..catalog import INSTANCE_TYPES

__all__ = [
    "EKS_NODE_GROUP",
    "EKS_LAUNCH_TEMPLATE",
    "GKE_NODE_POOL",
    "GpuPool",
    "KARPENTER_NODE_POOL",
    "KARPENTER_NODE_CLASS",
    "NVIDIA_AWS_FAMILIES",
    "dig",
    "gpu_pool",
    "items",
    "mapping",
]

EKS_NODE_GROUP = "aws:eks/nodeGroup:NodeGroup"
EKS_LAUNCH_TEMPLATE = "aws:ec2/launchTemplate:LaunchTemplate"
GKE_NODE_POOL = "gcp:container/nodePool:NodePool"
KARPENTER_NODE_POOL = ("kubernetes:karpenter.sh/v1:NodePool", "kubernetes:karpenter.sh/v1beta1:NodePool")
KARPENTER_NODE_CLASS = ("kubernetes:karpenter.k8s.aws/v1:EC2NodeClass", "kubernetes:karpenter.k8s.aws/v1beta1:EC2NodeClass")

# EC2 instance families with NVIDIA GPUs: the EKS AL2023/Bottlerocket NVIDIA AMI support list (facts.md section 7)
# plus older families still sold (p2, p3, g3, g3s) and Graviton g5g. AMD (g4ad) and Inferentia/Trainium are not GPUs.
NVIDIA_AWS_FAMILIES = frozenset({
    "p2", "p3", "p3dn", "p4d", "p4de", "p5", "p5e", "p5en", "p6-b200", "p6-b300", "p6e-gb200",
    "g3", "g3s", "g4dn", "g5", "g5g", "g6", "g6e", "g6f", "gr6", "gr6f", "g7e",
})
# GCE machine families with built-in NVIDIA GPUs (accelerator-optimized): A2, A3, A4, G2.
_GCP_GPU_MACHINE_PREFIXES = ("a2-", "a3-", "a4-", "a4x-", "g2-")
_NVIDIA_AMI_MARKERS = ("NVIDIA", "_GPU")


def mapping(value: Any) -> Mapping[str, Any]:
    """`value` if it is a mapping, else an empty one."""
    return value if isinstance(value, Mapping) else {}


def items(value: Any) -> Sequence[Any]:
    """`value` if it is a list-like (not a string), else an empty list."""
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
            m = mapping(value)
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


@dataclass(frozen=True)
class GpuPool:
    """The classification-relevant view of one GPU node pool resource."""

    kind: str  # eks | gke | karpenter
    name: str  # the pool's own name (node group name, pool name, metadata.name)
    why: str  # what makes it a GPU pool
    labels: Mapping[str, Any]
    taints: list[tuple[str, str, str]]  # (key, value, effect normalised to NoSchedule style)


_EFFECTS = {"NO_SCHEDULE": "NoSchedule", "NO_EXECUTE": "NoExecute", "PREFER_NO_SCHEDULE": "PreferNoSchedule"}


def _taints(raw: Any) -> list[tuple[str, str, str]]:
    out = []
    for t in items(raw):
        effect = str(dig(t, "effect", default=""))
        out.append((str(dig(t, "key", default="")), str(dig(t, "value", default="")), _EFFECTS.get(effect, effect)))
    return out


def _eks(name: str, props: Mapping[str, Any]) -> GpuPool | None:
    types = [str(t) for t in items(props.get("instanceTypes"))]
    gpu_types = [t for t in types if aws_gpu_type(t)]
    ami = str(props.get("amiType") or "")
    if gpu_types:
        why = f"instance type {', '.join(gpu_types)}"
    elif any(m in ami for m in _NVIDIA_AMI_MARKERS):
        why = f"AMI type {ami}"
    else:
        return None
    own = str(props.get("nodeGroupName") or str(props.get("nodeGroupNamePrefix") or "").rstrip("-") or name)
    return GpuPool("eks", own, why, mapping(props.get("labels")), _taints(props.get("taints")))


def _gke(name: str, props: Mapping[str, Any]) -> GpuPool | None:
    node = mapping(props.get("nodeConfig"))
    accels = [a for a in items(node.get("guestAccelerators")) if int(dig(a, "count", default=0) or 0) > 0]
    machine = str(node.get("machineType") or "")
    if accels:
        why = ", ".join(f"{dig(a, 'count')} x {dig(a, 'type', default='?')}" for a in accels) + " guest accelerators"
    elif machine and gcp_gpu_machine(machine):
        why = f"machine type {machine}"
    else:
        return None
    own = str(props.get("name") or name)
    return GpuPool("gke", own, why, mapping(node.get("labels")), _taints(node.get("taints")))


_KARPENTER_GPU_KEYS = {
    "karpenter.k8s.aws/instance-gpu-count", "karpenter.k8s.aws/instance-gpu-name",
    "karpenter.k8s.aws/instance-gpu-manufacturer", "karpenter.k8s.aws/instance-gpu-memory",
}


def _karpenter_gpu_requirement(req: Any) -> str | None:
    key, op = str(dig(req, "key", default="")), str(dig(req, "operator", default=""))
    values = [str(v) for v in items(dig(req, "values"))]
    shown = f"{key} {op} {values}" if values else f"{key} {op}"
    if key in _KARPENTER_GPU_KEYS:
        if op == "Exists" or (op == "Gt" and values) or (op == "In" and any(v not in ("0", "") for v in values)):
            return shown
    elif op == "In" and key == "karpenter.k8s.aws/instance-family":
        if any(v in NVIDIA_AWS_FAMILIES for v in values):
            return shown
    elif op == "In" and key == "node.kubernetes.io/instance-type":
        if any(aws_gpu_type(v) or gcp_gpu_machine(v) for v in values):
            return shown
    elif op == "In" and key == "karpenter.k8s.aws/instance-category":
        if any(v in ("p", "g") for v in values):
            return shown
    return None


def _karpenter(name: str, props: Mapping[str, Any]) -> GpuPool | None:
    tmpl = dig(props, "spec", "template", default={})
    found = [r for r in (_karpenter_gpu_requirement(q) for q in items(dig(tmpl, "spec", "requirements"))) if r]
    if not found:
        return None
    own = str(dig(props, "metadata", "name", default=name))
    why = "requirements allow GPU instances (" + "; ".join(found) + ")"
    return GpuPool("karpenter", own, why, mapping(dig(tmpl, "metadata", "labels")), _taints(dig(tmpl, "spec", "taints")))


def gpu_pool(resource_type: str, name: str, props: Mapping[str, Any]) -> GpuPool | None:
    """The GPU pool view of a resource, or None when it is not a GPU node pool."""
    if resource_type == EKS_NODE_GROUP:
        return _eks(name, props)
    if resource_type == GKE_NODE_POOL:
        return _gke(name, props)
    if resource_type in KARPENTER_NODE_POOL:
        return _karpenter(name, props)
    return None
