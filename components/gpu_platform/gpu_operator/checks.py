"""GPU Operator rules of the spec (registered in `validation.DOMAIN_CHECKS`): what the operator cannot do."""

from __future__ import annotations

from collections.abc import Iterator

from ..contract import (
    GPU_RESOURCE,
    MIG_CONFIG_LABEL,
    MIG_DISABLED_CONFIG,
    device_plugin_config_key,
    pool_labels,
)
from ..errors import Finding, Severity
from ..spec import AmiType, Cloud, PlatformSpec, SharingMode
from .device_plugin import DEFAULT_CONFIG_KEY
from .mig import mig_pools
from .render import DEPLOY_OPERANDS_LABEL, mig_drain_notes, operator_enabled
from .values import mig_strategy

__all__ = ["check_gpu_operator", "mig_layout_changes"]


def _bottlerocket(spec: PlatformSpec) -> Iterator[Finding]:
    if spec.cloud != Cloud.AWS:
        return
    for i, pool in enumerate(spec.node_pools):
        if pool.aws.ami_type != AmiType.BOTTLEROCKET_NVIDIA:
            continue
        if pool.sharing.mode != SharingMode.EXCLUSIVE:
            yield Finding(
                f"nodePools[{i}].sharing.mode",
                (
                    f"{pool.sharing.mode.value!r} on amiType {AmiType.BOTTLEROCKET_NVIDIA.value}: "
                    "Bottlerocket's own device plugin serves these nodes and the GPU Operator's operands are off "
                    f"there ({DEPLOY_OPERANDS_LABEL}=false), "
                    "so no MIG layout, time-slicing or MPS config can reach them; allowed: exclusive, or amiType "
                    f"{AmiType.AL2023_NVIDIA.value}"
                ),
            )
        yield Finding(
            f"nodePools[{i}].aws.amiType",
            (
                f"{AmiType.BOTTLEROCKET_NVIDIA.value}: the GPU Operator's DCGM exporter does not run on pool "
                f"{pool.name!r}, so its GPUs have no DCGM metrics (utilisation, XID) unless another exporter runs there"
            ),
            Severity.WARNING,
        )


def _default_key(spec: PlatformSpec) -> Iterator[Finding]:
    for i, pool in enumerate(spec.node_pools):
        if device_plugin_config_key(pool) == DEFAULT_CONFIG_KEY and pool.sharing.mode != SharingMode.EXCLUSIVE:
            yield Finding(
                f"nodePools[{i}].name",
                (
                    f"{pool.name!r} collides with the device-plugin default entry {DEFAULT_CONFIG_KEY!r} "
                    "(whole GPUs for unlabelled nodes); allowed: any other pool name"
                ),
            )


def _rename(spec: PlatformSpec) -> Iterator[Finding]:
    for i, pool in enumerate(spec.node_pools):
        s = pool.sharing
        if s.rename_by_default and s.replicas is not None and s.mode != SharingMode.EXCLUSIVE:
            yield Finding(
                f"nodePools[{i}].sharing.renameByDefault",
                (
                    f"true makes the device plugin advertise '<resource>.shared' (e.g. {GPU_RESOURCE}.shared), but the "
                    f"tiers of pool {pool.name!r}, their quotas, admission routing and the autoscaler tags use the "
                    "plain resource name, so its pods would never schedule; allowed: false"
                ),
            )


def check_gpu_operator(spec: PlatformSpec) -> Iterator[Finding]:
    """Bottlerocket limits, config-key collisions, renamed resources, notes on MIG drains and strategy."""
    if not operator_enabled(spec):
        yield Finding(
            "gcp.gpuStack",
            (
                "gke-native: the GPU Operator is not installed; GKE's driver and device plugin serve the GPUs, so "
                "sharing comes from the node pools' GKE settings and DCGM metrics need a separate exporter"
            ),
            Severity.INFO,
        )
        return
    yield from _bottlerocket(spec)
    yield from _default_key(spec)
    yield from _rename(spec)
    yield from mig_drain_notes(spec)
    if mig_pools(spec) and not mig_strategy(spec):
        yield Finding(
            "gpuOperator",
            (
                "MIG and MPS pools coexist: mig.strategy is left unset (MPS refuses mixed) and each node's "
                "device-plugin config sets its own strategy"
            ),
            Severity.INFO,
        )


def mig_layout_changes(spec: PlatformSpec, previous: dict[str, dict[str, str]]) -> list[Finding]:
    """Warnings for pools whose MIG layout differs from an earlier render (`previous`: pool -> node labels)."""
    found = []
    for i, pool in enumerate(spec.node_pools):
        if pool.name not in previous or not operator_enabled(spec):
            continue
        old = previous[pool.name].get(MIG_CONFIG_LABEL) or MIG_DISABLED_CONFIG
        new = pool_labels(spec, pool).get(MIG_CONFIG_LABEL) or MIG_DISABLED_CONFIG
        if old != new:
            found.append(
                Finding(
                    f"nodePools[{i}].sharing",
                    (
                        f"MIG layout of pool {pool.name!r} changes from {old!r} to {new!r}: on each node the MIG "
                        "manager evicts the GPU pods, repartitions the GPUs and restarts the GPU operands; roll it out "
                        "like a drain (cordon, let jobs finish or checkpoint, then apply)"
                    ),
                    Severity.WARNING,
                )
            )
    return found
