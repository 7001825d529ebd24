"""Pure render of the mig-parted config (`version: v1`, `mig-configs`): `all-disabled` plus one layout per MIG pool.

Format: NVIDIA/mig-parted @ bd7160f4 `api/spec/v1/spec.go` (facts.md section 3). The GPU Operator's MIG manager applies
the layout a node's `nvidia.com/mig.config` label names; the custom ConfigMap must hold it under `config.yaml`.
"""

from __future__ import annotations

from typing import Any

from ..catalog import gpu_families, layout_fits
from ..contract import MIG_DISABLED_CONFIG, mig_layout_name
from ..errors import RenderError
from ..spec import NodePool, PlatformSpec, SharingMode

__all__ = ["MIG_CONFIG_KEY", "mig_pools", "render_mig_parted_config"]

MIG_CONFIG_KEY = "config.yaml"  # gpu-operator v26.7.0 values: custom migManager ConfigMap MUST contain this key


def mig_pools(spec: PlatformSpec) -> list[NodePool]:
    """The pools whose GPUs are partitioned with MIG."""
    return [p for p in spec.node_pools if p.sharing.mode == SharingMode.MIG]


def render_mig_layout(spec: PlatformSpec, pool: NodePool) -> list[dict[str, Any]]:
    """The mig-parted entry of one MIG pool: every GPU of the pool's model gets the same layout."""
    gpu = spec.hardware.gpu_of(pool.instance_type)
    layout = {p: n for p, n in sorted((pool.sharing.mig_layout or {}).items()) if n > 0}
    if gpu is None or not gpu.mig_capable:
        families = gpu_families(m for m in spec.hardware.gpu_models.values() if m.mig_capable)
        raise RenderError(
            f"{spec.pool_path(pool)}.sharing.mode",
            f"{pool.instance_type!r} has no MIG-capable GPU; allowed: {', '.join(families)} instance types",
        )
    if not layout or not layout_fits(gpu.name, layout):
        raise RenderError(
            f"{spec.pool_path(pool)}.sharing.migLayout",
            f"{layout} is not a valid placement on {gpu.name}; run `gpu-platform validate` for the allowed "
            "combinations",
        )
    item: dict[str, Any] = {}
    if gpu.pci_device_ids:
        item["device-filter"] = list(gpu.pci_device_ids)
    item |= {"devices": "all", "mig-enabled": True, "mig-devices": layout}
    return [item]


def render_mig_parted_config(spec: PlatformSpec) -> dict[str, Any]:
    """The whole mig-parted config: `all-disabled` first, then one named layout per MIG pool."""
    configs: dict[str, Any] = {MIG_DISABLED_CONFIG: [{"devices": "all", "mig-enabled": False}]}
    for pool in mig_pools(spec):
        configs[mig_layout_name(pool)] = render_mig_layout(spec, pool)
    return {"version": "v1", "mig-configs": configs}
