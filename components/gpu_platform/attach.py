"""What a cluster object given to `GpuPlatform` fills in of the spec (no pulumi import: read by duck typing).

Accepted: any object with a `name` Output (`pulumi_aws.eks.Cluster`, `pulumi_gcp.container.Cluster`), or with an
`eks_cluster` that has one (`pulumi_eks.Cluster`). From a `pulumi_eks.Cluster` its `instance_roles` also give the
node role ARN when the spec leaves `aws.nodeRoleArn` unset. The spec's own `clusterName` stays the name checked
against: a plain one must equal the cluster's once it resolves; an Input (`cluster_name=cluster.name`) is kept.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .deferred import Deferred
from .names import cluster_name_problem
from .spec import PlatformSpec

__all__ = ["ClusterInputError", "spec_with_cluster"]


class ClusterInputError(TypeError):
    """The object given as `cluster` has none of the attributes a cluster is read by."""


def cluster_name_of(cluster: Any) -> Any:
    """The cluster's name Input: `eks_cluster.name` (pulumi_eks) or `name` (pulumi_aws, pulumi_gcp)."""
    inner = getattr(cluster, "eks_cluster", None)
    name = getattr(inner, "name", None) if inner is not None else getattr(cluster, "name", None)
    if name is None:
        raise ClusterInputError(
            f"cluster: {type(cluster).__name__} has no 'name' and no 'eks_cluster.name'; allowed: "
            "a pulumi_aws.eks.Cluster, a pulumi_eks.Cluster, a pulumi_gcp.container.Cluster, or "
            "any object with a 'name' Output"
        )
    return name


def _same_name(expected: str) -> Callable[[str], None]:
    def check(value: str) -> None:
        if problem := cluster_name_problem(value):
            raise ValueError(problem)
        if value != expected:
            raise ValueError(
                f"the cluster passed in is named {value!r}, the spec's clusterName is {expected!r}; "
                "allowed: the same name (or cluster_name=cluster.name)"
            )

    return check


def _first_role_arn(roles: Any) -> Any:
    return roles[0].arn if roles else None


def spec_with_cluster(spec: PlatformSpec, cluster: Any) -> PlatformSpec:
    """`spec` with its cluster name (and, from a pulumi_eks cluster, node role) taken from `cluster`."""
    name = cluster_name_of(cluster)
    update: dict[str, Any] = {}
    if not isinstance(spec.cluster_name, Deferred):
        update["cluster_name"] = Deferred(name, "clusterName", _same_name(spec.cluster_name))
    roles = getattr(cluster, "instance_roles", None)
    if roles is not None and spec.aws is not None and not spec.aws.node_role_arn:
        arn = Deferred(roles.apply(_first_role_arn), "nodeRoleArn")
        update["aws"] = spec.aws.model_copy(update={"node_role_arn": arn})
    return spec.model_copy(update=update) if update else spec
