"""The rendered platform explain runs workloads against: admission chain, namespaces, Kueue, pools, prices."""

from __future__ import annotations

import copy
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from ..admission.render import render_admission
from ..contract import NAMESPACE_NAME_LABEL
from ..observability.pricing import pool_price
from ..queues.render import render_queues
from ..spec import PlatformSpec
from .admission import AdmissionChain, build_chain
from .kueue import KueueSetup, kueue_hook, kueue_setup
from .scheduler import PoolNode, pool_nodes

__all__ = ["RenderedPlatform"]


@dataclass
class RenderedPlatform:
    """Everything explain reads from one spec's render, built once per command."""

    spec: PlatformSpec

    @cached_property
    def admission_docs(self) -> list[dict[str, Any]]:
        """The admission objects `synth` writes to kubernetes/admission.yaml."""
        return render_admission(self.spec)

    @cached_property
    def _queues(self) -> Any:
        return render_queues(self.spec)

    @cached_property
    def kueue(self) -> KueueSetup | None:
        """Kueue's release settings and queue objects (None when Kueue is disabled)."""
        return kueue_setup(self._queues.kueue_release, self._queues.kueue)

    @cached_property
    def chain(self) -> AdmissionChain:
        """The admission chain: rendered policies plus Kueue's webhook configuration."""
        return build_chain(self.admission_docs, [kueue_hook(self.kueue)] if self.kueue else [])

    @cached_property
    def nodes(self) -> list[PoolNode]:
        """One representative node per GPU pool."""
        return pool_nodes(self.spec)

    @cached_property
    def priority_classes(self) -> dict[str, int]:
        """PriorityClass name -> value, as rendered."""
        return {d["metadata"]["name"]: d["value"] for d in self._queues.priority_classes}

    def namespace_object(self, name: str) -> dict[str, Any]:
        """The Namespace as the cluster holds it: the rendered team namespace, else only its name label."""
        found = next((d for d in self._queues.namespaces if d["metadata"]["name"] == name), None)
        ns: dict[str, Any] = (
            copy.deepcopy(found) if found else {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}
        )
        ns["metadata"].setdefault("labels", {})[NAMESPACE_NAME_LABEL] = name
        return ns

    def unit_hourly(self, pool: str, resource: str) -> float:
        """$/hour of one unit of `resource` on `pool` (the cost model's unit price)."""
        p = self.spec.pools_by_name[pool]
        prices = pool_price(self.spec, p).unit_hourly
        return prices.get(resource, prices.get(resource.removesuffix(".shared"), 0.0))
