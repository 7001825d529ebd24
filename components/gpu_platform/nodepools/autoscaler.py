"""Pure render of the optional cluster-autoscaler release (`clusterAutoscaler: {enabled: true}`, EKS).

Chart: kubernetes/autoscaler tag cluster-autoscaler-chart-9.59.0, `charts/cluster-autoscaler` (values keys checked
in the tests against ../shared/reference/upstream/cluster-autoscaler-values-9.59.0.yaml). What reads what:
- `autoDiscovery.clusterName` makes the chart pass `--node-group-auto-discovery=asg:tag=k8s.io/cluster-autoscaler/
  enabled,k8s.io/cluster-autoscaler/<cluster>` (`templates/deployment.yaml`); EKS tags every managed node group
  for that auto-discovery (awsdocs/amazon-eks-user-guide `latest/ug/nodes/managed-node-groups.adoc`), so each GPU
  pool is discovered. The pools' `node-template` tags (`eks.autoscaler_tags`) let it scale them from zero.
- `extraArgs` become `--<key>=<value>` (flags in `config/flags/flags.go`; several expanders run in turn):
  `expander=least-waste` (the operating checklist's default), or
  `priority,least-waste` with `expanderPriorities` rendered into the `cluster-autoscaler-priority-expander`
  ConfigMap (cheapest pool first by catalog price, a `.*` catch-all last, as `expander/priority/readme.md` asks);
  `balance-similar-node-groups` keeps zone-split copies of a pool level.
- The image must match the cluster's Kubernetes minor (the chart's default `image.tag` v1.35.0 is for 1.35):
  `_IMAGE_TAGS` holds the newest `cluster-autoscaler-1.<minor>.<patch>` tag per minor in kubernetes/autoscaler at
  chart 9.59.0 (read 2026-11-30); `clusterAutoscaler.imageTag` overrides it.
Karpenter pools are not Auto Scaling groups, so the autoscaler never touches them.
"""

from __future__ import annotations

import re
from typing import Any

from ..artifacts import deep_merge, helm_release
from ..errors import RenderError
from ..spec import Cloud, Expander, NodePool, PlatformSpec, Provisioner
from .eks import NAME_SUFFIX_PATTERN, node_group_name_prefix

__all__ = ["image_tag", "render_cluster_autoscaler_release"]

CHART = "cluster-autoscaler"
RELEASE_NAME = "cluster-autoscaler"
_IMAGE_TAGS = {
    (1, 30): "v1.30.7",
    (1, 31): "v1.31.5",
    (1, 32): "v1.32.7",
    (1, 33): "v1.33.6",
    (1, 34): "v1.34.5",
    (1, 35): "v1.35.2",
    (1, 36): "v1.36.1",
}
_CATCH_ALL_PRIORITY = 1


def image_tag(spec: PlatformSpec) -> str:
    """The autoscaler image for the cluster's Kubernetes minor (or the spec's override)."""
    ca = spec.cluster_autoscaler
    if ca.image_tag:
        return ca.image_tag
    tag = _IMAGE_TAGS.get(spec.kubernetes_release)
    if tag is None:
        known = ", ".join(f"{a}.{b}" for a, b in sorted(_IMAGE_TAGS))
        raise RenderError(
            "clusterAutoscaler.imageTag",
            f"no default image for Kubernetes {spec.kubernetes_version}; known minors: {known}; "
            "set clusterAutoscaler.imageTag",
        )
    return tag


def autoscaled_pools(spec: PlatformSpec) -> list[NodePool]:
    """The pools the autoscaler scales: EKS managed node groups."""
    return [p for p in spec.node_pools if p.aws.provisioner == Provisioner.MANAGED_NODE_GROUP]


def _priorities(spec: PlatformSpec) -> dict[str, list[str]]:
    """Priority expander config: cheaper pools (catalog $/GPU-hour) win; EKS names a node group's ASG
    `eks-<node group>-<uuid>`, and the node group is `<pool>-<generated suffix>` (so `gpu` never matches
    `gpu-a100`'s groups)."""

    def price(p: NodePool) -> float:
        itype = spec.hardware.instance(p.instance_type)
        return itype.hourly_per_gpu if itype else float("inf")

    ranked = sorted(autoscaled_pools(spec), key=lambda p: (price(p), p.name))
    # String keys: Pulumi serialises Helm values as JSON objects, whose keys are strings (int keys fail the
    # program); the chart converts them back (cluster-autoscaler chart 9.59.0 templates/priority-expander-configmap.yaml
    # renders `{{ $k | int }}`).
    out = {
        str(10 * (len(ranked) - i) + _CATCH_ALL_PRIORITY): [
            f"^eks-{re.escape(node_group_name_prefix(p))}{NAME_SUFFIX_PATTERN}-[0-9a-f-]+$"
        ]
        for i, p in enumerate(ranked)
    }
    out[str(_CATCH_ALL_PRIORITY)] = [".*"]
    return out


def _values(spec: PlatformSpec) -> dict[str, Any]:
    ca = spec.cluster_autoscaler
    expander = "least-waste" if ca.expander == Expander.LEAST_WASTE else "priority,least-waste"
    values: dict[str, Any] = {
        "cloudProvider": "aws",
        "awsRegion": spec.aws.region if spec.aws else "",
        "autoDiscovery": {"clusterName": spec.cluster_name},
        "image": {"tag": image_tag(spec)},
        "extraArgs": {"expander": expander, "balance-similar-node-groups": True},
    }
    if ca.expander == Expander.PRIORITY:
        values["expanderPriorities"] = _priorities(spec)
    if ca.role_arn:
        values["rbac"] = {"serviceAccount": {"annotations": {"eks.amazonaws.com/role-arn": ca.role_arn}}}
    return values


def render_cluster_autoscaler_release(spec: PlatformSpec) -> dict[str, Any] | None:
    """The cluster-autoscaler Helm release document, or None when it is off (or the cluster is not EKS)."""
    ca = spec.cluster_autoscaler
    if not ca.enabled or spec.cloud != Cloud.AWS:
        return None
    values = deep_merge(_values(spec), ca.values_overrides, "clusterAutoscaler.valuesOverrides")
    return helm_release(RELEASE_NAME, CHART, ca.repository, ca.version, ca.namespace, values)
