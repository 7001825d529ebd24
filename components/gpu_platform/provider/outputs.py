"""The shapes of GpuPlatform's per-team and per-tier outputs (`gpu_platform.outputs`), typed for other languages."""

from typing import NotRequired, TypedDict

__all__ = ["TeamOutput", "TierOutput"]


class Toleration(TypedDict):
    """A Kubernetes toleration a tier's pods carry."""

    key: str
    """The taint key it tolerates."""
    operator: str
    """Equal (key and value match) or Exists (the key alone)."""
    value: NotRequired[str]
    """The taint value (with Equal)."""
    effect: str
    """The taint effect it tolerates, e.g. NoSchedule."""


class TierOutput(TypedDict):
    """What a workload of one tier carries once admitted (and may set itself)."""

    labels: dict[str, str]
    """The tier label (`<labelDomain>/gpu-tier: <tier>`)."""
    pool: str
    """The pool the tier runs on."""
    resource: str
    """The extended resource its pods request."""
    node_selector: dict[str, str]
    """The pool's node selector."""
    tolerations: list[Toleration]
    """The pool's taint and the GPU taint."""
    priority_class_name: str
    """The tier's PriorityClass."""
    workload_priority_class_name: str
    """The tier's Kueue WorkloadPriorityClass."""
    priority: int
    """The tier's priority value."""


class TeamOutput(TypedDict):
    """A team's namespaces and queues."""

    namespaces: list[str]
    """The team's namespaces."""
    local_queue: str
    """The LocalQueue name in each of its namespaces."""
    cluster_queue: str
    """Its ClusterQueue."""
    tiers: list[str]
    """The tiers it may run (those it has a quota for)."""
    namespace_labels: dict[str, str]
    """The labels the platform puts on its namespaces."""
