"""Pulumi side of rendered Kubernetes documents: one resource per document, one Release per Helm document.

Components call these with their rendered documents; nothing here computes desired state.
"""

from __future__ import annotations

from typing import Any

import pulumi
import pulumi_kubernetes as k8s

from .deferred import stable_name
from .wiring import input_of, kwargs_of

__all__ = ["helm_release_resource", "k8s_object", "k8s_objects", "namespace_patches"]


class KubernetesObject(pulumi.CustomResource):
    """Any Kubernetes object, registered as `kubernetes:<apiVersion>:<Kind>` with all its top-level fields.

    pulumi-kubernetes' `CustomResource` only carries `spec`; objects such as PriorityClass or Kueue's
    WorkloadPriorityClass keep their data at the top level (`value`, `description`), so they need this.
    """

    def __init__(self, resource_name: str, doc: dict[str, Any], opts: pulumi.ResourceOptions | None = None) -> None:
        from pulumi_kubernetes import _utilities

        opts = pulumi.ResourceOptions.merge(opts, pulumi.ResourceOptions(version=_utilities.get_version()))  # type: ignore[no-untyped-call]
        super().__init__(f"kubernetes:{doc['apiVersion']}:{doc['kind']}", resource_name, kwargs_of(doc), opts)


def object_resource_name(prefix: str, doc: dict[str, Any]) -> str:
    """Pulumi name of a document's resource: `<prefix>-<kind>-[<namespace>-]<name>` (public API: pinned in tests)."""
    meta = doc.get("metadata", {})
    ns = meta.get("namespace")
    return stable_name("-".join(x for x in (prefix, doc["kind"].lower(), ns, meta["name"]) if x))


def k8s_object(prefix: str, doc: dict[str, Any], opts: pulumi.ResourceOptions) -> pulumi.CustomResource:
    """The Pulumi resource for one Kubernetes document (typed for core kinds, `KubernetesObject` otherwise)."""
    name = object_resource_name(prefix, doc)
    kind, api = doc["kind"], doc["apiVersion"]
    if api == "v1" and kind == "ConfigMap":
        return k8s.core.v1.ConfigMap(
            name, metadata=input_of(doc["metadata"]), data=input_of(doc.get("data")), opts=opts
        )
    if api == "v1" and kind == "Namespace":
        return k8s.core.v1.Namespace(name, metadata=input_of(doc["metadata"]), opts=opts)
    return KubernetesObject(name, doc, opts)


def k8s_objects(prefix: str, docs: list[dict[str, Any]], opts: pulumi.ResourceOptions) -> list[pulumi.CustomResource]:
    """Resources for several documents, in order."""
    return [k8s_object(prefix, d, opts) for d in docs]


def namespace_patches(
    prefix: str, docs: list[dict[str, Any]], opts: pulumi.ResourceOptions
) -> list[k8s.core.v1.NamespacePatch]:
    """Server-side-apply patches setting only the rendered labels and annotations on namespaces that exist:
    nothing else of the namespace is owned, and deleting the patch removes only what it set."""
    return [
        k8s.core.v1.NamespacePatch(
            object_resource_name(f"{prefix}-patch", d), metadata=input_of(d["metadata"]), opts=opts
        )
        for d in docs
    ]


def helm_release_resource(name: str, doc: dict[str, Any], opts: pulumi.ResourceOptions) -> k8s.helm.v3.Release:
    """A `helm.v3.Release` from a rendered release document (see `artifacts.helm_release`)."""
    chart, repo = doc["chart"], doc.get("repository")
    return k8s.helm.v3.Release(
        name,
        k8s.helm.v3.ReleaseArgs(
            name=doc["name"],
            chart=chart,
            version=doc["version"],
            namespace=doc["namespace"],
            create_namespace=True,
            repository_opts=k8s.helm.v3.RepositoryOptsArgs(repo=repo) if repo else None,
            values=input_of(doc["values"]),
        ),
        opts=opts,
    )
