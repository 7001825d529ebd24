"""Which GPU pool's nodes accept a pod: the kube-scheduler filters explain models, on nodes built from the render.

A pool's node has the labels and taints of contract.py (`pool_labels`, `pool_taints`) and allocates the
extended resources of capacity.py, named as the pool's device-plugin entry advertises them (`renameByDefault`
adds `.shared`: NVIDIA/k8s-device-plugin api/config/v1 ReplicatedResources). Filters modelled, from
kubernetes v1.33.0 pkg/scheduler/framework/plugins: nodeaffinity (nodeSelector and required node affinity),
tainttoleration (NoSchedule/NoExecute taints vs tolerations), noderesources (nvidia.com/* requests vs
allocatable). Not modelled: topology spread, pod (anti-)affinity, CPU/memory/pods fit, volumes, ports.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..capacity import pool_capacity
from ..contract import operator_enabled, pool_labels, pool_taints
from ..gpu_operator.device_plugin import render_device_plugin_entry
from ..spec import PlatformSpec
from .selectors import find_untolerated_taint, node_selector_matches, required_node_affinity_matches
from .workloads import pod_requests

__all__ = ["NOT_MODELLED", "PoolNode", "pool_nodes", "schedule"]

NOT_MODELLED = "topology spread, pod (anti-)affinity, CPU/memory fit and pods per node are not modelled"


@dataclass(frozen=True)
class PoolNode:
    """One node of a pool, as the scheduler sees it."""

    pool: str
    labels: dict[str, str]
    taints: list[dict[str, str]]
    allocatable: dict[str, int]
    max_size: int


@dataclass(frozen=True)
class PoolVerdict:
    """A pool's answer for one pod: accepted, or the first filter that rejected it."""

    pool: str
    fits: bool
    reason: str


def _advertised(spec: PlatformSpec, pool: Any, resource: str) -> str:
    if not operator_enabled(spec):
        return resource  # GKE's own device plugin: no NVIDIA device-plugin config applies
    sharing = render_device_plugin_entry(pool, spec.pool_path(pool)).get("sharing") or {}
    for block in sharing.values():
        if block.get("renameByDefault") and any(r.get("name") == resource for r in block.get("resources") or []):
            return f"{resource}.shared"
    return resource


def pool_nodes(spec: PlatformSpec) -> list[PoolNode]:
    """One representative node per pool (pools scale from minSize to maxSize; maxSize 0 never has a node)."""
    out = []
    for pool in spec.node_pools:
        units = pool_capacity(spec, pool).units_per_node
        allocatable = {_advertised(spec, pool, r): n for r, n in units.items()}
        out.append(PoolNode(pool.name, pool_labels(spec, pool), pool_taints(spec, pool), allocatable, pool.max_size))
    return out


def _verdict(node: PoolNode, pod_spec: dict[str, Any], requests: dict[str, float]) -> PoolVerdict:
    if not node_selector_matches(pod_spec.get("nodeSelector"), node.labels):
        bad = next(k for k, v in (pod_spec.get("nodeSelector") or {}).items() if node.labels.get(k) != v)
        return PoolVerdict(node.pool, False, f"nodeSelector {bad}={pod_spec['nodeSelector'][bad]} does not match")
    if not required_node_affinity_matches(pod_spec.get("affinity"), node.labels):
        return PoolVerdict(node.pool, False, "required node affinity does not match")
    taint = find_untolerated_taint(node.taints, pod_spec.get("tolerations") or [])
    if taint:
        return PoolVerdict(
            node.pool, False, f"untolerated taint {taint['key']}={taint.get('value', '')}:{taint['effect']}"
        )
    for resource, amount in requests.items():
        have = node.allocatable.get(resource, 0)
        if amount > have:
            return PoolVerdict(
                node.pool, False, f"insufficient {resource}: requests {amount:g}, a node allocates {have}"
            )
    if node.max_size == 0:
        return PoolVerdict(node.pool, False, "maxSize 0: the pool never has a node")
    return PoolVerdict(node.pool, True, "accepts the pod")


def schedule(nodes: list[PoolNode], pod_spec: dict[str, Any]) -> list[PoolVerdict]:
    """Every pool's verdict on a pod (per-pod `nvidia.com/*` requests against one node's allocatable)."""
    requests = pod_requests(pod_spec)
    return [_verdict(n, pod_spec, requests) for n in nodes]
