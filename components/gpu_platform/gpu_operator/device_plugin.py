"""Pure render of the k8s-device-plugin config file (v1): one entry per pool plus a default for unlabelled nodes.

Format and limits: NVIDIA/k8s-device-plugin @ 1b826acc `api/config/v1` (see facts.md section 2). Each entry is what
the device plugin and GFD on a node read when the node's `nvidia.com/device-plugin.config` label names it.
"""

from __future__ import annotations

from typing import Any

from ..contract import GPU_RESOURCE, device_plugin_config_key, mig_resource
from ..errors import RenderError
from ..spec import NodePool, PlatformSpec, SharingMode

__all__ = ["DEFAULT_CONFIG_KEY", "check_entry", "render_device_plugin_configs", "render_device_plugin_entry"]

DEFAULT_CONFIG_KEY = "default"
MPS_ROOT = "/run/nvidia/mps"  # GPU Operator devicePlugin.mps.root default (v26.7.0)
MPS_MAX_REPLICAS = 48  # k8s-device-plugin mps/device.go: 48 clients from compute capability 7.5


def _entry(mig_strategy: str, sharing: dict[str, Any] | None = None) -> dict[str, Any]:
    flags: dict[str, Any] = {"migStrategy": mig_strategy}
    if sharing and "mps" in sharing:
        flags["mpsRoot"] = MPS_ROOT
    out: dict[str, Any] = {"version": "v1", "flags": flags}
    if sharing:
        out["sharing"] = sharing
    return out


def _shared(pool: NodePool, resources: list[str], default_fail: bool) -> dict[str, Any]:
    s = pool.sharing
    fail = default_fail if s.fail_requests_greater_than_one is None else s.fail_requests_greater_than_one
    return {
        "renameByDefault": s.rename_by_default,
        "failRequestsGreaterThanOne": fail,
        "resources": [{"name": r, "replicas": s.replicas} for r in resources],
    }


def _mig_resources(pool: NodePool) -> list[str]:
    return [mig_resource(p) for p, n in sorted((pool.sharing.mig_layout or {}).items()) if n > 0]


def render_device_plugin_entry(pool: NodePool, path: str, mps_limit: int = MPS_MAX_REPLICAS) -> dict[str, Any]:
    """The device-plugin config of one pool (exclusive, MIG mixed [+ time-slicing], time-slicing or MPS); `path` is
    the pool's field path (`nodePools[1]`), named by the error when the device plugin would reject the config."""
    mode = pool.sharing.mode
    if mode == SharingMode.EXCLUSIVE:
        entry = _entry("none")
    elif mode == SharingMode.TIME_SLICING:
        entry = _entry("none", {"timeSlicing": _shared(pool, [GPU_RESOURCE], default_fail=False)})
    elif mode == SharingMode.MPS:
        # Upstream defaults failRequestsGreaterThanOne to true for MPS ("historical MPS behavior").
        entry = _entry("none", {"mps": _shared(pool, [GPU_RESOURCE], default_fail=True)})
    else:  # MIG: `mixed` keeps every slice size a distinct, unambiguous resource.
        ts = pool.sharing.replicas is not None
        entry = _entry(
            "mixed", {"timeSlicing": _shared(pool, _mig_resources(pool), default_fail=False)} if ts else None
        )
    check_entry(path, entry, mps_limit)
    return entry


def check_entry(where: str, entry: dict[str, Any], mps_limit: int = MPS_MAX_REPLICAS) -> None:
    """Refuse a config the device plugin rejects (facts.md section 2), naming the pool and the rule."""
    strategy = entry.get("flags", {}).get("migStrategy", "none")
    sharing = entry.get("sharing", {})
    if "mps" in sharing and "timeSlicing" in sharing:
        raise RenderError(where, "time-slicing and MPS are mutually exclusive; pick one sharing mode")
    for kind, block in sharing.items():
        resources = block.get("resources") or []
        if not resources:
            raise RenderError(where, f"sharing.{kind} has no resources; the device plugin rejects it")
        for r in resources:
            if r.get("replicas") is None or r["replicas"] < 2:
                raise RenderError(where, f"{kind} replicas {r.get('replicas')!r} for {r['name']}; allowed: >= 2")
            if kind == "mps" and r["replicas"] > min(mps_limit, MPS_MAX_REPLICAS):
                raise RenderError(
                    where,
                    f"MPS replicas {r['replicas']} exceed the client limit; "
                    f"allowed: 2..{min(mps_limit, MPS_MAX_REPLICAS)}",
                )
            if kind == "mps" and r["name"] != GPU_RESOURCE:
                raise RenderError(
                    where, f"MPS on MIG device {r['name']!r} is not supported; allowed: {GPU_RESOURCE} on whole GPUs"
                )
    if "mps" in sharing and strategy != "none":
        raise RenderError(
            where, f"MPS with migStrategy {strategy!r} is rejected by the device plugin; allowed: migStrategy none"
        )


def render_device_plugin_configs(spec: PlatformSpec) -> dict[str, dict[str, Any]]:
    """Config key -> device-plugin config: the default (whole GPUs, no MIG) first, then one entry per pool."""
    configs: dict[str, dict[str, Any]] = {DEFAULT_CONFIG_KEY: _entry("none")}
    for i, pool in enumerate(spec.node_pools):
        gpu = spec.hardware.gpu_of(pool.instance_type)
        entry = render_device_plugin_entry(pool, f"nodePools[{i}]", gpu.mps_max_clients if gpu else MPS_MAX_REPLICAS)
        key = device_plugin_config_key(pool)
        if key in configs and configs[key] != entry:
            raise RenderError(
                f"nodePools[{i}].name",
                f"device-plugin config key {key!r} is already used (the default entry is {DEFAULT_CONFIG_KEY!r}); "
                "rename the pool",
            )
        configs[key] = entry
    return configs
