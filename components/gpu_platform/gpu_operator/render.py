"""Pure render of the whole GPU Operator install: namespace, content-hashed ConfigMaps, the Helm release document.

The operator does not watch the device-plugin ConfigMap, so each ConfigMap's name carries a hash of its content: a
sharing change renames it, the release points at the new name, the operator rolls the device plugin, and nothing else
(pool sizes, values overrides) touches the name.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any

import yaml

from ..artifacts import Artifact, ArtifactKind, deep_merge, helm_release
from ..contract import (  # noqa: F401 (re-exported)
    DEPLOY_OPERANDS_LABEL,
    GKE_NO_DEFAULT_PLUGIN_LABEL,
    MANAGED_BY_LABEL,
    PART_OF_LABEL,
    PLATFORM_NAME,
    mig_layout_name,
    operator_enabled,
    operator_node_labels,
)
from ..dcgm import DCGM_CONFIGMAP_KEY, metrics_csv
from ..errors import Finding, Severity
from ..spec import Cloud, PlatformSpec, SharingMode
from .device_plugin import render_device_plugin_configs
from .mig import MIG_CONFIG_KEY, mig_pools, render_mig_parted_config
from .values import ConfigMapNames, render_values

__all__ = [
    "DEPLOY_OPERANDS_LABEL",
    "mig_drain_notes",
    "operator_enabled",
    "operator_node_labels",
    "render_gpu_operator",
    "render_gpu_operator_artifacts",
    "CHART",
]

CHART = "gpu-operator"
RELEASE_NAME = "gpu-operator"
_LABELS = {MANAGED_BY_LABEL: PLATFORM_NAME, PART_OF_LABEL: CHART}


@dataclass(frozen=True)
class GpuOperatorRender:
    """Everything the component registers and `synth` writes."""

    namespace: str
    documents: tuple[dict[str, Any], ...]  # Namespace, ConfigMaps (and a ResourceQuota on GKE)
    release: dict[str, Any]
    names: ConfigMapNames
    device_plugin_configs: dict[str, dict[str, Any]]
    mig_parted_config: dict[str, Any] | None
    notes: tuple[Finding, ...]


def content_hash(data: dict[str, Any]) -> str:
    """First 8 hex digits of the SHA-256 of `data` in canonical JSON."""
    return hashlib.sha256(json.dumps(data, sort_keys=True).encode()).hexdigest()[:8]


def _yaml(obj: Any) -> str:
    return yaml.safe_dump(obj, sort_keys=False, default_flow_style=False)


def _configmap(base: str, namespace: str, data: dict[str, str]) -> dict[str, Any]:
    name = f"{base}-{content_hash(data)}"
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": namespace, "labels": dict(_LABELS)},
        "data": data,
    }


def _namespace(namespace: str) -> dict[str, Any]:
    # Operands are privileged DaemonSets (driver/toolkit mounts, MIG reconfiguration).
    labels = {**_LABELS, "pod-security.kubernetes.io/enforce": "privileged"}
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace, "labels": labels}}


def _gke_quota(namespace: str) -> dict[str, Any]:
    # GKE limits system-node-critical pods to kube-system unless a quota in the namespace allows them (GKE docs).
    scope = {
        "scopeName": "PriorityClass",
        "operator": "In",
        "values": ["system-node-critical", "system-cluster-critical"],
    }
    return {
        "apiVersion": "v1",
        "kind": "ResourceQuota",
        "metadata": {"name": "gpu-operator-quota", "namespace": namespace, "labels": dict(_LABELS)},
        "spec": {"hard": {"pods": "100"}, "scopeSelector": {"matchExpressions": [scope]}},
    }


def mig_drain_notes(spec: PlatformSpec) -> list[Finding]:
    """One note per MIG pool: a layout change makes mig-manager evict GPU pods and repartition each node."""
    return [
        Finding(
            f"nodePools[{i}].sharing.migLayout",
            f"MIG pool {p.name!r} runs layout {mig_layout_name(p)!r}: changing its migLayout relabels the nodes and "
            "the MIG manager then evicts the GPU pods on each node, repartitions the GPUs (the node is unschedulable "
            "for GPUs meanwhile) and restarts the GPU operands; schedule it like a node drain",
            Severity.INFO,
        )
        for i, p in enumerate(spec.node_pools)
        if p.sharing.mode == SharingMode.MIG
    ]


def _notes(spec: PlatformSpec, names: ConfigMapNames) -> tuple[Finding, ...]:
    # MIG drains and the MIG strategy are validation findings (checks.py), printed by validate and synth alike.
    return (
        Finding(
            f"device-plugin config {names.device_plugin}",
            "a change of any pool's sharing renames it and restarts the device plugin on every GPU node (running "
            "pods keep their devices)",
            Severity.INFO,
        ),
    )


def render_gpu_operator(spec: PlatformSpec) -> GpuOperatorRender:
    """Render the namespace, the ConfigMaps and the Helm release document of the GPU Operator."""
    op = spec.gpu_operator
    ns = op.namespace
    dp_configs = render_device_plugin_configs(spec)
    dp_cm = _configmap("device-plugin-config", ns, {k: _yaml(v) for k, v in dp_configs.items()})
    dcgm_cm = _configmap("dcgm-exporter-metrics", ns, {DCGM_CONFIGMAP_KEY: metrics_csv()})
    docs = [_namespace(ns), dp_cm, dcgm_cm]
    mig_config = render_mig_parted_config(spec) if mig_pools(spec) else None
    mig_name = None
    if mig_config is not None:
        mig_cm = _configmap("mig-parted-config", ns, {MIG_CONFIG_KEY: _yaml(mig_config)})
        docs.append(mig_cm)
        mig_name = mig_cm["metadata"]["name"]
    if spec.cloud == Cloud.GCP:
        docs.append(_gke_quota(ns))
    names = ConfigMapNames(dp_cm["metadata"]["name"], dcgm_cm["metadata"]["name"], mig_name)
    values = deep_merge(render_values(spec, names), op.values_overrides, "gpuOperator.valuesOverrides")
    release = helm_release(RELEASE_NAME, CHART, op.repository, op.version, ns, values)
    return GpuOperatorRender(ns, tuple(docs), release, names, dp_configs, mig_config, _notes(spec, names))


def render_gpu_operator_artifacts(spec: PlatformSpec) -> list[Artifact]:
    """`DIR/kubernetes/gpu-operator-configs.yaml` and `DIR/helm/gpu-operator.yaml` (nothing on gke-native)."""
    if not operator_enabled(spec):
        return []
    r = render_gpu_operator(spec)
    return [
        Artifact(ArtifactKind.KUBERNETES, "gpu-operator-configs", r.documents, r.notes),
        Artifact(ArtifactKind.HELM, RELEASE_NAME, (r.release,)),
    ]
