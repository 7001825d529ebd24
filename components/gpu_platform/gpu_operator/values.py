"""Pure Helm values of the NVIDIA GPU Operator chart (v26.7.0), from the spec and the names of the rendered ConfigMaps.

Keys: NVIDIA/gpu-operator v26.7.0 `deployments/gpu-operator/values.yaml` (facts.md section 1); GKE settings from
cloud-native-docs `gpu-operator/google-gke.rst` (facts.md section 7). `valuesOverrides` is merged last by the caller.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..contract import KUEUE_QUEUE_LABEL, pool_taints, tier_label_key
from ..spec import Cloud, PlatformSpec, SharingMode
from .device_plugin import DEFAULT_CONFIG_KEY

__all__ = ["ConfigMapNames", "mig_strategy", "render_values"]

GKE_NVIDIA_DIR = "/home/kubernetes/bin/nvidia"
_KUEUE_QUEUE_LABEL = f"^{KUEUE_QUEUE_LABEL.replace('.', '[.]')}$"
_CONTROL_PLANE_TOLERATION = {
    "key": "node-role.kubernetes.io/control-plane",
    "operator": "Equal",
    "value": "",
    "effect": "NoSchedule",
}


@dataclass(frozen=True)
class ConfigMapNames:
    """Names of the ConfigMaps the release points at (content-hashed, see render.py)."""

    device_plugin: str
    dcgm: str
    mig_parted: str | None = None


def mig_strategy(spec: PlatformSpec) -> str:
    """Cluster-wide `mig.strategy`: none without MIG, mixed with MIG, "" (per node) when MIG and MPS pools coexist.

    When `mig.strategy` is set the operator passes it to every device plugin as MIG_STRATEGY, and the plugin lets a
    set flag override its config file; MPS refuses `mixed`, so a cluster with both leaves it unset and each node's
    device-plugin config (MIG pools: mixed, MPS pools: none) decides.
    """
    modes = {p.sharing.mode for p in spec.node_pools}
    if SharingMode.MIG not in modes:
        return "none"
    return "" if SharingMode.MPS in modes else "mixed"


def daemonset_tolerations(spec: PlatformSpec) -> list[dict[str, str]]:
    """One `Exists` toleration per taint key of the GPU pools, so operands run on every pool (and on new pools)."""
    seen: dict[tuple[str, str], dict[str, str]] = {}
    for pool in spec.node_pools:
        for t in pool_taints(spec, pool):
            seen.setdefault((t["key"], t["effect"]), {"key": t["key"], "operator": "Exists", "effect": t["effect"]})
    return list(seen.values())


def _dcgm_exporter(spec: PlatformSpec, names: ConfigMapNames) -> dict[str, Any]:
    prom = spec.monitoring.prometheus
    labels = {"release": prom.release_name, **prom.rule_labels}
    return {
        "enabled": True,
        # Pod labels on GPU metrics give cost per tier; the allow-list bounds cardinality to the tier label.
        "enablePodLabels": True,
        "podLabelAllowlistRegex": [f"^{tier_label_key(spec.label_domain).replace('.', '[.]')}$", _KUEUE_QUEUE_LABEL],
        # honorLabels keeps the workload's namespace/pod/container labels (OpenCost queries them).
        "serviceMonitor": {"enabled": True, "honorLabels": True, "additionalLabels": labels},
        "config": {"name": names.dcgm, "create": False},
    }


def _platform_values(spec: PlatformSpec) -> dict[str, Any]:
    if spec.cloud == Cloud.AWS:
        # EKS NVIDIA AMIs (AL2023, Bottlerocket) ship the driver and the container toolkit.
        return {"driver": {"enabled": False}, "toolkit": {"enabled": False}}
    toolkit: dict[str, Any] = {"enabled": True, "installDir": GKE_NVIDIA_DIR}
    if spec.kubernetes_release >= (1, 33):
        toolkit["env"] = [{"name": "RUNTIME_CONFIG_SOURCE", "value": "file"}]
    return {
        "driver": {"enabled": False},
        "hostPaths": {"driverInstallDir": GKE_NVIDIA_DIR},
        "toolkit": toolkit,
        "cdi": {"enabled": True},
    }


def _mig_manager(spec: PlatformSpec, names: ConfigMapNames) -> dict[str, Any]:
    out: dict[str, Any] = {"enabled": True}
    if names.mig_parted:
        out["config"] = {"name": names.mig_parted, "create": False, "default": "all-disabled"}
    if spec.cloud == Cloud.GCP and names.mig_parted:
        out["env"] = [{"name": "WITH_REBOOT", "value": "true"}]  # needed on CSPs such as GCP (MIG docs)
    return out


def render_values(spec: PlatformSpec, names: ConfigMapNames) -> dict[str, Any]:
    """GPU Operator values before `valuesOverrides`."""
    tolerations = daemonset_tolerations(spec)
    values: dict[str, Any] = {
        **_platform_values(spec),
        "mig": {"strategy": mig_strategy(spec)},
        "daemonsets": {"tolerations": tolerations},
        "devicePlugin": {
            "enabled": True,
            "config": {"create": False, "name": names.device_plugin, "default": DEFAULT_CONFIG_KEY},
        },
        "migManager": _mig_manager(spec, names),
        "dcgmExporter": _dcgm_exporter(spec, names),
        # NFD must label the GPU nodes before any operand is scheduled there, so it tolerates the pool taints too.
        "node-feature-discovery": {"worker": {"tolerations": [_CONTROL_PLANE_TOLERATION, *tolerations]}},
    }
    return values
