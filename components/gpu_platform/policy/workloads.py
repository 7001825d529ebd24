"""Workload policy: pods and pod templates requesting `nvidia.com/*` are classified by tier."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from .config import PolicyConfig, config_of
from .props import dig, items, mapping

__all__ = ["GPU_RESOURCE_PREFIX", "WORKLOAD_TYPES", "check_workload_classified", "pod_template", "workload_gaps"]

GPU_RESOURCE_PREFIX = "nvidia.com/"
Report = Callable[..., None]

# Pulumi type token -> path to the pod template ({metadata, spec}); () means the object is the pod.
WORKLOAD_TYPES: dict[str, tuple[str, ...]] = {
    "kubernetes:core/v1:Pod": (),
    "kubernetes:apps/v1:Deployment": ("spec", "template"),
    "kubernetes:apps/v1:StatefulSet": ("spec", "template"),
    "kubernetes:apps/v1:DaemonSet": ("spec", "template"),
    "kubernetes:apps/v1:ReplicaSet": ("spec", "template"),
    "kubernetes:batch/v1:Job": ("spec", "template"),
    "kubernetes:batch/v1:CronJob": ("spec", "jobTemplate", "spec", "template"),
}


def pod_template(resource_type: str, props: Mapping[str, Any]) -> Mapping[str, Any]:
    """The pod (template) of a workload: a mapping with `metadata` and `spec`."""
    path = WORKLOAD_TYPES[resource_type]
    return mapping(dig(props, *path, default={})) if path else props


def _containers(spec: Any) -> list[Any]:
    return [*items(dig(spec, "initContainers")), *items(dig(spec, "containers"))]


def _quantity(value: Any) -> str:
    """A count as text; 1, 1.0 and "1" are the same quantity (the engine sends numbers as floats)."""
    try:
        number = float(value)
    except (TypeError, ValueError):
        return str(value)
    return str(int(number)) if number.is_integer() else str(number)


def _gpu_part(section: Any) -> dict[str, str]:
    return {str(k): _quantity(v) for k, v in mapping(section).items() if str(k).startswith(GPU_RESOURCE_PREFIX)}


def _gpu_resources(container: Any) -> tuple[dict[str, str], dict[str, str]]:
    res = dig(container, "resources", default={})
    return _gpu_part(dig(res, "requests", default={})), _gpu_part(dig(res, "limits", default={}))


def _container_gaps(c: Any, allowed: list[str] | None, tier: str) -> list[str]:
    req, lim = _gpu_resources(c)
    name = dig(c, "name", default="?")
    gaps = []
    for r in sorted(set(req) | set(lim)):
        if r not in lim:
            gaps.append(f"container {name!r} requests {r} without a limit (set limits equal to requests)")
        elif r in req and req[r] != lim[r]:
            gaps.append(f"container {name!r} requests {req[r]} {r} but limits {lim[r]} (they must be equal)")
        if allowed is not None and r not in allowed:
            gaps.append(f"container {name!r} requests {r}, which tier {tier!r} does not allow (allowed: "
                        f"{', '.join(allowed)})")
    return gaps


def workload_gaps(pod: Mapping[str, Any], cfg: PolicyConfig) -> list[str] | None:
    """What a pod (template) lacks to be a classified GPU workload; None when it requests no GPU."""
    spec = dig(pod, "spec", default={})
    containers = _containers(spec)
    if not any(any(_gpu_resources(c)) for c in containers):
        return None
    tier = str(dig(pod, "metadata", "labels", cfg.tier_key, default=""))
    gaps, allowed = [], None
    if not tier:
        gaps.append(f"label {cfg.tier_key} is missing (one of: {', '.join(cfg.tiers) or 'the platform tiers'})")
    elif cfg.tiers and tier not in cfg.tiers:
        gaps.append(f"tier {tier!r} is unknown (known: {', '.join(cfg.tiers)})")
    elif tier in cfg.tiers:
        allowed = cfg.tiers[tier].resources
    for c in containers:
        gaps.extend(_container_gaps(c, allowed, tier))
    pc = str(dig(spec, "priorityClassName", default=""))
    want = cfg.tiers[tier].priority_class if tier in cfg.tiers else None
    if not pc:
        gaps.append(f"priorityClassName is missing{f' (use {want!r})' if want else ''}")
    elif want and pc != want:
        gaps.append(f"priorityClassName is {pc!r}, tier {tier!r} uses {want!r}")
    return gaps


def check_workload_classified(args: Any, report_violation: Report) -> None:
    """GPU pods carry a known tier label, request their tier's resource with requests == limits, name a priority."""
    if args.resource_type not in WORKLOAD_TYPES:
        args.not_applicable(f"{args.resource_type} has no pod template")
    cfg = config_of(args)
    namespace = dig(args.props, "metadata", "namespace")
    if namespace in cfg.exempt_namespaces:
        args.not_applicable(f"namespace {namespace!r} is exempt")
    gaps = workload_gaps(pod_template(args.resource_type, args.props), cfg)
    if gaps is None:
        args.not_applicable("requests no nvidia.com/* resource")
    if gaps:
        kind = args.resource_type.rsplit(":", 1)[-1]
        name = dig(args.props, "metadata", "name", default=args.name)
        report_violation(f"GPU workload {kind} {name!r} is unclassified: {'; '.join(gaps)}.")
