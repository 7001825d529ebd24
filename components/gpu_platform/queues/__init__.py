"""Queues and priorities: Kueue team quotas, Volcano queues and gangs, the PriorityClass ladder.

Render modules are pure (no pulumi import); `GpuQueues` is imported on first use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .checks import check_queues
from .render import QueueObjects, render_queue_artifacts, render_queues

if TYPE_CHECKING:  # pragma: no cover
    from .component import GpuQueues, GpuQueuesArgs

__all__ = ["GpuQueues", "GpuQueuesArgs", "QueueObjects", "check_queues", "render_queue_artifacts", "render_queues"]


def __getattr__(name: str) -> Any:
    if name in ("GpuQueues", "GpuQueuesArgs"):
        from . import component

        return getattr(component, name)
    raise AttributeError(f"module 'gpu_platform.queues' has no attribute {name!r}")
