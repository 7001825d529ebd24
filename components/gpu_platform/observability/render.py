"""Everything the observability domain renders, grouped into `synth` artifacts."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..artifacts import Artifact, ArtifactKind
from ..errors import Finding, Severity
from ..spec import PlatformSpec
from .cost import cost_report, unattributed_notes
from .dashboard import render_dashboard_configmap
from .opencost import (
    OpenCostPrices,
    opencost_prices,
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

    @property
    def rule_name(self) -> str:
        """Name of the PrometheusRule holding the recording rules and alerts."""
        return str(self.rule["metadata"]["name"])

    @property
    def release_names(self) -> list[str]:
        """Names of the Helm releases installed here: kube-prometheus-stack, then OpenCost."""
        return [d["name"] for d in (self.prometheus, self.opencost) if d]


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


def _note(message: str) -> Finding:
    return Finding("observability", message, Severity.INFO)


def opencost_notes(prices: OpenCostPrices) -> tuple[Finding, ...]:
    """Synth summary notes: each pool's node price as OpenCost splits it, and any pool it would misprice."""
    notes = []
    for p in prices.pools:
        notes.append(
            _note(
                f"OpenCost prices a {p.pool.name} node at ${p.opencost_hourly:.4f}/h (CSV row; "
                f"{p.gpus} GPU x ${p.gpu_hourly:.4f} + {p.vcpus:g} vCPU x ${p.cpu_hourly:.6f} + "
                f"{p.memory_gib:g} GiB x ${p.ram_hourly:.6f}), the catalog at ${p.catalog_hourly:.4f}/h"
            )
        )
        if abs(p.deviation_percent) >= 0.01:
            notes.append(
                _note(
                    f"OpenCost's {p.pool.name} node price is {p.deviation_percent:+.2f} % off the catalog; the GPU "
                    "cost of record is namespace_tier:gpu_cost_hourly:sum"
                )
            )
    return tuple(notes)


def render_observability_artifacts(spec: PlatformSpec) -> list[Artifact]:
    """`synth` files: kubernetes/gpu-platform-{rules,dashboard,servicemonitors},
    helm/{kube-prometheus-stack,opencost}."""
    docs = render_observability(spec)
    n_rules = sum(len(g["rules"]) for g in docs.rule["spec"]["groups"])
    spare = tuple(_note(n.message) for n in unattributed_notes(cost_report(spec)))
    out = [
        Artifact(
            ArtifactKind.KUBERNETES,
            "gpu-platform-rules",
            (docs.rule,),
            (_note(f"{n_rules} Prometheus rules (recording, catalog rates, alerts)"), *spare),
        )
    ]
    if docs.dashboard:
        out.append(Artifact(ArtifactKind.KUBERNETES, "gpu-platform-dashboard", (docs.dashboard,)))
    if docs.service_monitors:
        out.append(Artifact(ArtifactKind.KUBERNETES, "gpu-platform-servicemonitors", tuple(docs.service_monitors)))
    if docs.prometheus:
        out.append(Artifact(ArtifactKind.HELM, "kube-prometheus-stack", (docs.prometheus,)))
    if docs.opencost:
        out.append(Artifact(ArtifactKind.HELM, "opencost", (docs.opencost,), opencost_notes(opencost_prices(spec))))
    return out
