"""Node pool policies: GPU pools are classified (labels, taints) and hardened (IMDSv2, encryption, no SSH)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from ..contract import DEVICE_PLUGIN_CONFIG_LABEL, GPU_TAINT
from .config import PolicyConfig, config_of
from .props import (
    AWS_ASG,
    EC2_INSTANCE,
    EKS_LAUNCH_TEMPLATE,
    EKS_NODE_GROUP,
    KARPENTER_NODE_CLASS,
    POOL_TYPES,
    GpuPool,
    PoolKind,
    dig,
    gpu_pool,
    gpu_pools,
    items,
)

if TYPE_CHECKING:  # the engine's argument types, for annotations only: the checks import no policy SDK
    from pulumi_policy import ResourceValidationArgs, StackValidationArgs

__all__ = [
    "NODE_POOL_TYPES",
    "check_pool_classified",
    "check_pools_detectable",
    "check_pools_hardened",
    "check_pools_resolved",
]

NODE_POOL_TYPES = POOL_TYPES
Report = Callable[..., None]


def classification_gaps(pool: GpuPool, cfg: PolicyConfig) -> list[str]:
    """What a GPU pool lacks to be classified, one phrase each (empty when classified)."""
    gaps = []
    name = str(pool.labels.get(cfg.pool_key) or "")
    if not name:
        gaps.append(f"label {cfg.pool_key}=<pool name>")
    if not pool.labels.get(DEVICE_PLUGIN_CONFIG_LABEL):
        gaps.append(f"label {DEVICE_PLUGIN_CONFIG_LABEL}=<device-plugin config of the pool>")
    if not any(k == GPU_TAINT["key"] and e == "NoSchedule" for k, _, e in pool.taints):
        gaps.append(f"taint {GPU_TAINT['key']}={GPU_TAINT['value']}:NoSchedule")
    pool_taints = [v for k, v, e in pool.taints if k == cfg.pool_key and e == "NoSchedule"]
    if not pool_taints:
        gaps.append(f"taint {cfg.pool_key}={name or '<pool name>'}:NoSchedule")
    elif name and name not in pool_taints:
        gaps.append(f"taint {cfg.pool_key}={name}:NoSchedule (the taint says {pool_taints[0]!r}, the label {name!r})")
    if cfg.pools and name and name not in cfg.pools:
        gaps.append(
            f"a pool of the spec: label {cfg.pool_key}={name} names no spec pool (spec pools: "
            f"{', '.join(sorted(cfg.pools)[:12])})"
        )
    config = str(pool.labels.get(DEVICE_PLUGIN_CONFIG_LABEL) or "")
    if cfg.pools and name in cfg.pools and config and config != cfg.pools[name]:
        gaps.append(
            f"its own device-plugin config: label {DEVICE_PLUGIN_CONFIG_LABEL}={config} is not pool "
            f"{name!r}'s config {cfg.pools[name]!r}"
        )
    return gaps


def check_pool_classified(args: ResourceValidationArgs, report_violation: Report) -> None:
    """GPU node pools carry the pool label, the device-plugin config label and both NoSchedule taints."""
    if args.resource_type not in NODE_POOL_TYPES:
        args.not_applicable(f"{args.resource_type} is not a node pool")
    pools = [p for p in gpu_pools(args.resource_type, args.name, args.props) if not p.uncertain]
    if not pools:
        args.not_applicable("not a GPU node pool (as far as this resource alone shows)")
    cfg = config_of(args)
    for pool in pools:
        _report_gaps(pool, cfg, report_violation)


def _report_gaps(pool: GpuPool, cfg: PolicyConfig, report_violation: Report, at: str | None = None) -> None:
    gaps = classification_gaps(pool, cfg)
    if gaps:
        message = (
            f"GPU node pool {pool.name!r} ({pool.why}) is unclassified: missing {', '.join(gaps)}. "
            "Declare the pool in the platform spec (gpu_platform renders these), or add the missing labels "
            "and taints so only classified pods land on it."
        )
        if at is None:
            report_violation(message)
        else:
            report_violation(message, at)


def _lookup(r: Any, index: _Index) -> Callable[[Mapping[str, Any]], Any]:
    def lookup(ref: Mapping[str, Any]) -> Any:
        lt = _launch_template_of(r, index, ref)
        return None if lt is None else lt.props

    return lookup


def check_pools_resolved(args: StackValidationArgs, report_violation: Report) -> None:
    """Pools whose GPUs come from a launch template in the stack (EKS node groups, auto scaling groups, EC2
    instances) are classified."""
    cfg = config_of(args)
    index = _Index.of(args.resources)
    checked = 0
    for r in index.node_pools:
        if r.resource_type not in (EKS_NODE_GROUP, AWS_ASG, EC2_INSTANCE):
            continue
        alone = gpu_pool(r.resource_type, r.name, r.props)
        pool = next((p for p in index.resolved(r) if not p.uncertain), None)
        if pool is None or (alone is not None and r.resource_type != AWS_ASG):
            continue  # not a GPU pool, or gpu-node-pool-classified already checks it
        checked += 1
        _report_gaps(pool, cfg, report_violation, r.urn)
    if not checked:
        args.not_applicable("no node pool takes its GPUs from a launch template")


def check_pools_detectable(args: StackValidationArgs, report_violation: Report) -> None:
    """Node pools whose GPU capacity cannot be determined (custom AMI, launch template outside the stack)."""
    config_of(args)
    index = _Index.of(args.resources)
    found = 0
    for r in index.node_pools:
        for pool in index.resolved(r):
            if pool.uncertain:
                found += 1
                report_violation(
                    f"node pool {pool.name!r} may run GPUs, and the pack {pool.why}; set its instance "
                    "types on the pool (or keep its launch template in this stack) so the GPU policies "
                    "can check it.",
                    r.urn,
                )
    if not found:
        args.not_applicable("every node pool's GPU capacity is known")


class _Index:
    """Launch templates (by name and id) and Karpenter node classes (by name) of a stack, built once per stack:
    the stack policies of one AnalyzeStack call share the resources list (the cache holds the list, so its id
    cannot be reused while the entry lives)."""

    _last: tuple[Any, _Index] | None = None

    @classmethod
    def of(cls, resources: Any) -> _Index:
        """The index of `resources`, reused while the same list is checked by several policies."""
        last = cls._last
        if last is not None and last[0] is resources:
            return last[1]
        index = cls(resources)
        cls._last = (resources, index)
        return index

    def __init__(self, resources: Any) -> None:
        self.by_urn = {r.urn: r for r in resources}
        self.templates: dict[tuple[str, str], Any] = {}
        self.node_classes: dict[str, Any] = {}
        self.node_pools = [r for r in self.by_urn.values() if r.resource_type in POOL_TYPES]
        self._resolved: dict[str, list[GpuPool]] = {}
        for r in self.by_urn.values():
            if r.resource_type == EKS_LAUNCH_TEMPLATE:
                for key in ("name", "id"):
                    if isinstance(value := dig(r.props, key), str):
                        self.templates.setdefault((key, value), r)
            elif r.resource_type in KARPENTER_NODE_CLASS and isinstance(name := dig(r.props, "metadata", "name"), str):
                self.node_classes.setdefault(name, r)

    def resolved(self, r: Any) -> list[GpuPool]:
        """The pools of resource `r` with its launch template looked up in this stack (computed once)."""
        if r.urn not in self._resolved:
            self._resolved[r.urn] = gpu_pools(r.resource_type, r.name, r.props, _lookup(r, self))
        return self._resolved[r.urn]


def _launch_template_of(group: Any, index: _Index, ref: Mapping[str, Any] | None = None) -> Any | None:
    deps = list(getattr(group, "property_dependencies", {}).get("launchTemplate", []) or [])
    deps += list(getattr(group, "dependencies", []) or [])
    for dep in deps:
        dep = index.by_urn.get(getattr(dep, "urn", dep), dep)
        if getattr(dep, "resource_type", None) == EKS_LAUNCH_TEMPLATE:
            return dep
    ref = ref if ref is not None else dig(group.props, "launchTemplate", default={})
    for key in ("name", "id"):
        want = dig(ref, key)
        if isinstance(want, str) and (key, want) in index.templates:
            return index.templates[(key, want)]
    return None


def _asg_template_ref(props: Mapping[str, Any]) -> Mapping[str, Any]:
    spec = dig(props, "mixedInstancesPolicy", "launchTemplate", "launchTemplateSpecification", default={})
    return dig(props, "launchTemplate", default=None) or {
        "id": dig(spec, "launchTemplateId"),
        "name": dig(spec, "launchTemplateName"),
    }


def _truthy(value: Any) -> bool:
    return value is True or str(value).lower() == "true"


def _launch_template_gaps(lt: Any) -> list[str]:
    label = repr(dig(lt.props, "name", default=lt.name))
    gaps = []
    tokens = dig(lt.props, "metadataOptions", "httpTokens")
    if tokens != "required":
        gaps.append(
            f"launch template {label} does not require IMDSv2 (metadataOptions.httpTokens is "
            f"{tokens!r}; set 'required')"
        )
    ebs = [dig(m, "ebs") for m in items(dig(lt.props, "blockDeviceMappings")) if dig(m, "ebs") is not None]
    if not ebs or not all(_truthy(dig(e, "encrypted")) for e in ebs):
        gaps.append(
            f"launch template {label} root volume is not encrypted (set blockDeviceMappings[].ebs.encrypted to true)"
        )
    if dig(lt.props, "keyName"):
        gaps.append(f"launch template {label} installs SSH key {dig(lt.props, 'keyName')!r} (remove keyName)")
    return gaps


def _instance_gaps(props: Mapping[str, Any]) -> list[str]:
    gaps = []
    if dig(props, "metadataOptions", "httpTokens") != "required":
        gaps.append("the instance does not require IMDSv2 (set metadataOptions.httpTokens to 'required')")
    if not _truthy(dig(props, "rootBlockDevice", "encrypted")):
        gaps.append("the instance's root volume is not encrypted (set rootBlockDevice.encrypted to true)")
    if dig(props, "keyName"):
        gaps.append(f"the instance installs SSH key {dig(props, 'keyName')!r} (remove keyName)")
    return gaps


def _eks_gaps(group: Any, index: _Index) -> list[str]:
    gaps = []
    if dig(group.props, "remoteAccess"):
        gaps.append("remote SSH access is enabled (remove remoteAccess; use SSM Session Manager)")
    if not dig(group.props, "launchTemplate"):
        return gaps + [
            "no launch template: IMDSv2 and root volume encryption are not enforced (attach a launch "
            "template with metadataOptions.httpTokens=required and an encrypted root volume)"
        ]
    lt = _launch_template_of(group, index)
    if lt is None:
        return gaps + ["its launch template is not in this stack, so IMDSv2 and encryption cannot be verified"]
    return gaps + _launch_template_gaps(lt)


def _gke_gaps(pool: Any) -> list[str]:
    node = dig(pool.props, "nodeConfig", default={})
    gaps = []
    if str(dig(node, "metadata", "disable-legacy-endpoints", default="true")).lower() == "false":
        gaps.append("legacy metadata endpoints are enabled (set metadata disable-legacy-endpoints=true)")
    if dig(node, "workloadMetadataConfig", "mode") == "GCE_METADATA":
        gaps.append("pods can read the node's metadata credentials (set workloadMetadataConfig.mode=GKE_METADATA)")
    if str(dig(node, "metadata", "block-project-ssh-keys", default="")).lower() == "false":
        gaps.append("project-wide SSH keys are accepted (set metadata block-project-ssh-keys=true)")
    return gaps


def _karpenter_gaps(pool: Any, index: _Index) -> list[str]:
    ref = dig(pool.props, "spec", "template", "spec", "nodeClassRef", "name")
    cls = index.node_classes.get(ref) if isinstance(ref, str) else None
    if cls is None:
        return [f"its EC2NodeClass {ref!r} is not in this stack, so IMDSv2 and encryption cannot be verified"]
    gaps = []
    if dig(cls.props, "spec", "metadataOptions", "httpTokens", default="required") != "required":
        gaps.append(f"EC2NodeClass {ref!r} does not require IMDSv2 (set spec.metadataOptions.httpTokens=required)")
    for m in items(dig(cls.props, "spec", "blockDeviceMappings")):
        if dig(m, "ebs") is not None and not _truthy(dig(m, "ebs", "encrypted")):
            gaps.append(f"EC2NodeClass {ref!r} has an unencrypted volume {dig(m, 'deviceName', default='')!r}")
    return gaps


def check_pools_hardened(args: StackValidationArgs, report_violation: Report) -> None:
    """GPU node pools require IMDSv2, encrypt their root volume and allow no remote SSH (stack policy)."""
    config_of(args)  # a bad config fails here, like in every policy
    index = _Index.of(args.resources)
    checked = 0
    for r in index.node_pools:
        pool = gpu_pool(r.resource_type, r.name, r.props)
        if pool is None:
            continue
        checked += 1
        if pool.kind == PoolKind.EKS:
            gaps = _eks_gaps(r, index)
        elif pool.kind == PoolKind.GKE:
            gaps = _gke_gaps(r)
        elif pool.kind == PoolKind.EC2:
            gaps = _instance_gaps(r.props)
        elif pool.kind == PoolKind.ASG:
            lt = _launch_template_of(r, index, _asg_template_ref(r.props))
            gaps = (
                _launch_template_gaps(lt)
                if lt is not None
                else ["its launch template is not in this stack, so IMDSv2 and encryption cannot be verified"]
            )
        else:
            gaps = _karpenter_gaps(r, index)
        if gaps:
            report_violation(f"GPU node pool {pool.name!r} is not hardened: {'; '.join(gaps)}.", r.urn)
    if not checked:
        args.not_applicable("no GPU node pools in this stack")
