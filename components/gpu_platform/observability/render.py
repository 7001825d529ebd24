"""Everything the observability domain renders, grouped into `synth` artifacts."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..artifacts import Artifact
from ..spec import PlatformSpec
from .dashboard import render_dashboard_configmap
from .opencost import (
    catalog_gpu_hourly,
    render_opencost_release,
    render_opencost_service_monitor,
)
from .prometheus import render_prometheus_release
from .rules import render_prometheus_rule

__all__ = ["ObservabilityDocs", "render_observability", "render_observability_artifacts"]


@dataclass(frozen=True)
class ObservabilityDocs:
    """Rendered documents by role; a release is None when it is not installed."""

    rule: dict[str, Any]
    dashboard: dict[str, Any] | None = None
    service_monitors: list[dict[str, Any]] = field(default_factory=list)
    prometheus: dict[str, Any] | None = None
    opencost: dict[str, Any] | None = None

    @property
    def objects(self) -> list[dict[str, Any]]:
        """The Kubernetes documents applied outside Helm, in apply order."""
        return [self.rule, *self.service_monitors, *([self.dashboard] if self.dashboard else [])]


def render_observability(spec: PlatformSpec) -> ObservabilityDocs:
    """Every observability document of the spec (releases are None when not installed)."""
    oc_enabled = spec.monitoring.opencost.enabled
    return ObservabilityDocs(
        rule=render_prometheus_rule(spec),
        dashboard=render_dashboard_configmap(spec) if spec.monitoring.dashboards else None,
        service_monitors=[render_opencost_service_monitor(spec)] if oc_enabled else [],
        prometheus=render_prometheus_release(spec),
        opencost=render_opencost_release(spec),
    )


def render_observability_artifacts(spec: PlatformSpec) -> list[Artifact]:
    """`synth` files: kubernetes/gpu-platform-{rules,dashboard,servicemonitors}, helm/{kube-prometheus-stack,opencost}."""
    docs = render_observability(spec)
    n_rules = sum(len(g["rules"]) for g in docs.rule["spec"]["groups"])
    out = [Artifact("kubernetes", "gpu-platform-rules", (docs.rule,),
                    (f"observability: {n_rules} Prometheus rules (recording, catalog rates, alerts)",))]
    if docs.dashboard:
        out.append(Artifact("kubernetes", "gpu-platform-dashboard", (docs.dashboard,)))
    if docs.service_monitors:
        out.append(Artifact("kubernetes", "gpu-platform-servicemonitors", tuple(docs.service_monitors)))
    if docs.prometheus:
        out.append(Artifact("helm", "kube-prometheus-stack", (docs.prometheus,)))
    if docs.opencost:
        note = f"observability: OpenCost custom GPU price ${catalog_gpu_hourly(spec):.4f}/GPU-hour"
        out.append(Artifact("helm", "opencost", (docs.opencost,), (note,)))
    return out
