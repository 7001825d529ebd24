"""GpuQueues: wires the rendered Kueue, Volcano and PriorityClass objects into Pulumi resources (no computing)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import pulumi

from .. import k8s
from ..options import check_component_args, child_options, registration
from ..spec import PlatformSpec
from .render import render_queues

__all__ = ["GpuQueues", "GpuQueuesArgs"]


@dataclass(frozen=True)
class GpuQueuesArgs:
    """Inputs of GpuQueues: the validated spec. The Kubernetes provider comes in `opts.providers`."""

    spec: PlatformSpec

    def __post_init__(self) -> None:
        check_component_args(self.spec)


class GpuQueues(pulumi.ComponentResource):
    """Team quotas and the priority ladder (`gpu-platform:index:GpuQueues`).

    Children: `<name>-kueue` and `<name>-volcano` Helm releases, and one resource per rendered object named
    `<name>-<kind>-[<namespace>-]<object>`; custom resources wait for the release that installs their CRDs.
    """

    cluster_queue_names: pulumi.Output[list[str]]
    priority_class_names: pulumi.Output[list[str]]

    def __init__(self, name: str, args: GpuQueuesArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        token, own = registration("GpuQueues", opts)
        super().__init__(token, name, None, own)
        q = render_queues(args.spec)
        child = child_options(self, opts)
        scheduling = args.spec.scheduling
        if scheduling.create_namespaces:
            keep = child_options(self, opts, retain_on_delete=scheduling.retain_namespaces)
            self.namespaces: Sequence[pulumi.CustomResource] = k8s.k8s_objects(name, q.namespaces, keep)
        else:
            self.namespaces = k8s.namespace_patches(name, q.namespaces, child)
        self.priority_classes = k8s.k8s_objects(name, q.priority_classes, child)
        # What the component waits for (the Prometheus Operator CRDs, say) its releases wait for too.
        after_outer = child
        self.kueue_release = (
            k8s.helm_release_resource(f"{name}-kueue", q.kueue_release, after_outer) if q.kueue_release else None
        )
        self.volcano_release = (
            k8s.helm_release_resource(f"{name}-volcano", q.volcano_release, after_outer) if q.volcano_release else None
        )
        self.kueue_objects = k8s.k8s_objects(
            name, q.kueue, child_options(self, opts, self.kueue_release, *self.namespaces)
        )
        self.volcano_objects = k8s.k8s_objects(name, q.volcano, child_options(self, opts, self.volcano_release))
        self.cluster_queue_names = pulumi.Output.from_input(q.cluster_queue_names)
        self.priority_class_names = pulumi.Output.from_input(q.priority_class_names)
        self.register_outputs(
            {"clusterQueueNames": self.cluster_queue_names, "priorityClassNames": self.priority_class_names}
        )
