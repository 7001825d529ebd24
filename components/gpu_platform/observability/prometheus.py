"""kube-prometheus-stack values (chart 88.5.3), set up to select the GPU Operator's DCGM ServiceMonitor.

With `*SelectorNilUsesHelmValues: true` (the chart default) the Prometheus CR only selects objects labelled
`release: <release>`; the GPU Operator's ServiceMonitor lives in another release, so the selectors are opened
(facts.md section 6). kube-state-metrics must export the pool, tier and MIG-state labels the rules join on.
"""

from __future__ import annotations

from typing import Any

from ..artifacts import deep_merge, helm_release
from ..contract import pool_label_key, tier_label_key
from ..spec import PlatformSpec
from .names import MIG_CONFIG_STATE_LABEL

__all__ = ["prometheus_query_url", "render_prometheus_release", "render_prometheus_values"]

CHART = "kube-prometheus-stack"
_SELECTORS = ("serviceMonitor", "podMonitor", "rule", "probe")


def ksm_label_allowlist(spec: PlatformSpec) -> list[str]:
    """kube-state-metrics `--metric-labels-allowlist` entries for kube_node_labels and kube_pod_labels."""
    nodes = ",".join([pool_label_key(spec.label_domain), MIG_CONFIG_STATE_LABEL])
    return [f"nodes=[{nodes}]", f"pods=[{tier_label_key(spec.label_domain)}]"]


def prometheus_query_url(spec: PlatformSpec) -> str:
    """Where OpenCost and users query Prometheus: the spec's URL, else the operator's `prometheus-operated`."""
    prom = spec.monitoring.prometheus
    return prom.url or f"http://prometheus-operated.{prom.namespace}.svc:9090"


def render_prometheus_values(spec: PlatformSpec) -> dict[str, Any]:
    """Chart values: open selectors, KSM label allow-list, Grafana dashboard sidecar; overrides last."""
    prom_spec: dict[str, Any] = {f"{s}SelectorNilUsesHelmValues": False for s in _SELECTORS}
    prom_spec |= {f"{s}Selector": {} for s in _SELECTORS}
    prom_spec["serviceMonitorNamespaceSelector"] = {}
    prom_spec["ruleNamespaceSelector"] = {}
    values = {
        # Helm installs a chart's crds/ once and never upgrades them; the chart's pre-upgrade hook job
        # server-side applies the Prometheus Operator CRDs of the new version (prometheus-community/helm-charts
        # kube-prometheus-stack 88.5.3 values.yaml `crds.upgradeJob`, templates/prometheus-operator/crds/
        # upgrade-job). helm.v3.Release runs hooks, so the job runs on every `pulumi up` that changes the version.
        "crds": {"upgradeJob": {"enabled": True, "forceConflicts": True}},
        "prometheus": {"prometheusSpec": prom_spec},
        "kube-state-metrics": {"metricLabelsAllowlist": ksm_label_allowlist(spec)},
        "grafana": {
            "sidecar": {
                "dashboards": {
                    "enabled": True,
                    "label": "grafana_dashboard",
                    "labelValue": "1",
                    "searchNamespace": "ALL",
                }
            }
        },
    }
    return deep_merge(values, spec.monitoring.prometheus.values_overrides, "monitoring.prometheus.valuesOverrides")


def render_prometheus_release(spec: PlatformSpec) -> dict[str, Any] | None:
    """The kube-prometheus-stack release document, or None when an existing Prometheus is used."""
    prom = spec.monitoring.prometheus
    if not prom.install:
        return None
    return helm_release(
        prom.release_name, CHART, prom.repository, prom.version, prom.namespace, render_prometheus_values(spec)
    )
