"""Render tests: rules read only metrics that exist, thresholds reach the alerts, dashboard, golden files."""

from __future__ import annotations

import json
import re

import pytest

from gpu_platform.dcgm import DCGM_METRICS
from gpu_platform.errors import RenderError
from gpu_platform.load import parse_spec
from gpu_platform.observability.alerts import ALERTS, stranded_expr
from gpu_platform.observability.dashboard import (
    DASHBOARD_KEY,
    panel_queries,
    render_dashboard_configmap,
)
from gpu_platform.observability.names import KNOWN_METRICS, ksm_label, ksm_resource
from gpu_platform.observability.render import render_observability_artifacts
from gpu_platform.observability.rules import (
    RECORDED,
    render_prometheus_rule,
    rule_groups,
)
from gpu_platform.synth import dump_documents

_KEYWORDS = {
    "by",
    "on",
    "without",
    "ignoring",
    "group_left",
    "group_right",
    "and",
    "or",
    "unless",
    "bool",
    "offset",
    "inf",
    "nan",
}


def metric_names(expr: str) -> set[str]:
    """Metric names a PromQL expression reads (strings, label matchers, groupings and ranges removed)."""
    s = re.sub(r'"[^"]*"', '""', expr)
    s = re.sub(r"\{[^}]*\}", " ", s)
    s = re.sub(r"\[[^\]]*\]", " ", s)
    s = re.sub(r"\b(by|on|without|ignoring|group_left|group_right)\s*\([^)]*\)", " ", s)
    names = set(re.findall(r"[a-zA-Z_:][a-zA-Z0-9_:]*(?!\s*\()\b", s))
    called = set(re.findall(r"([a-zA-Z_][a-zA-Z0-9_]*)\s*\(", s))
    return {n for n in names - called - _KEYWORDS if not re.fullmatch(r"\d+(e\d+)?", n)}


def _rules(spec):
    return [r for g in rule_groups(spec) for r in g["rules"]]


def test_metric_name_extraction():
    expr = (
        'sum by (pool) (label_replace(a:b:c{x="y{"} * on (node) group_left (l) kube_node_labels, '
        '"p", "$1", "l", "(.+)")) > 2'
    )
    assert metric_names(expr) == {"a:b:c", "kube_node_labels"}


def test_rules_read_only_known_or_recorded_metrics(dev_spec):
    known = KNOWN_METRICS | set(RECORDED)
    for rule in _rules(dev_spec):
        unknown = metric_names(rule["expr"]) - known
        assert not unknown, f"{rule.get('record') or rule.get('alert')}: unknown metrics {unknown}"


def test_every_dcgm_field_the_rules_use_is_in_the_shared_csv(dev_spec):
    fields = {f for f, _, _ in DCGM_METRICS}
    used = {m for r in _rules(dev_spec) for m in metric_names(r["expr"]) if m.startswith("DCGM_")}
    # No rule reads DCGM_FI_DEV_XID_ERRORS: it holds the last XID until the exporter restarts.
    assert used == {
        "DCGM_FI_PROF_SM_ACTIVE",
        "DCGM_EXP_XID_ERRORS_COUNT",
        "DCGM_FI_DEV_FB_USED",
        "DCGM_FI_DEV_FB_FREE",
        "DCGM_FI_DEV_FB_RESERVED",
        "DCGM_FI_DEV_GPU_TEMP",
    }
    assert used <= fields


def test_every_recorded_name_is_rendered(dev_spec):
    assert {r["record"] for r in _rules(dev_spec) if "record" in r} == set(RECORDED)


def test_every_alert_has_summary_description_runbook_and_severity(dev_spec):
    alerts = [r for r in _rules(dev_spec) if "alert" in r]
    assert [a["alert"] for a in alerts] == list(ALERTS)
    for a in alerts:
        assert set(a["annotations"]) == {"summary", "description", "runbook"}
        assert a["labels"]["severity"] in {"warning", "critical"}


def test_thresholds_reach_the_alerts(dev_data):
    dev_data["monitoring"]["thresholds"] = {
        "strandedSmActive": 0.25,
        "fbMemoryPercent": 80,
        "temperatureCelsius": 78,
        "pendingWorkloads": 42,
        "strandedFor": "4h",
        "starvedQueueDepth": 9,
    }
    alerts = {r["alert"]: r for r in _rules(parse_spec(dev_data)) if "alert" in r}
    assert alerts["GpuStrandedCapacity"]["expr"].startswith("gpu:sm_active:avg1h < 0.25 and on (namespace, pod)")
    assert alerts["GpuStrandedCapacity"]["for"] == "4h"
    assert alerts["GpuFramebufferMemoryHigh"]["expr"].endswith("> 80")
    assert alerts["GpuTemperatureHigh"]["expr"] == "DCGM_FI_DEV_GPU_TEMP > 78"
    assert alerts["KueuePendingWorkloadsBacklog"]["expr"].endswith("> 42")
    assert "> 9 and on" in alerts["GpuTimeSlicedPodStarved"]["expr"]


def test_bad_duration_names_the_field(dev_data):
    from gpu_platform.errors import SpecError
    from gpu_platform.spec import PlatformSpec

    dev_data["monitoring"]["thresholds"] = {"strandedFor": "2 hours"}
    with pytest.raises(SpecError, match=r"monitoring\.thresholds\.strandedFor: '2 hours'"):
        parse_spec(dev_data)
    with pytest.raises(RenderError, match=r"monitoring\.thresholds\.strandedFor: '2 hours'"):
        rule_groups(PlatformSpec.model_validate(dev_data))  # a spec that skipped validation


def test_optional_alerts_follow_the_spec(dev_data):
    dev_data["nodePools"] = [p for p in dev_data["nodePools"] if p["sharing"]["mode"] == "exclusive"]
    dev_data["tiers"] = [t for t in dev_data["tiers"] if t["pool"] == "gpu-train"]
    dev_data["teams"] = [{"name": "research", "namespaces": ["research"], "quotas": {"train": 16}}]
    dev_data["scheduling"] = {"kueue": {"enabled": False}}
    names = {r["alert"] for r in _rules(parse_spec(dev_data)) if "alert" in r}
    assert names == {
        "GpuStrandedCapacity",
        "GpuXidHardwareError",
        "GpuXidApplicationError",
        "GpuXidHardwareNotRemediated",
        "GpuFramebufferMemoryHigh",
        "GpuTemperatureHigh",
        "GpuPoolCapacityShortfall",
    }


def test_label_sanitising_matches_kube_state_metrics(dev_spec):
    assert ksm_label("gpu.example.com/gpu-pool") == "label_gpu_example_com_gpu_pool"
    assert ksm_label("nvidia.com/mig.config.state") == "label_nvidia_com_mig_config_state"
    assert ksm_resource("nvidia.com/mig-3g.40gb") == "nvidia_com_mig_3g_40gb"
    rates = [r for r in _rules(dev_spec) if r.get("record") == "gpu_class_hourly_rate"]
    assert {r["labels"]["resource"] for r in rates} == {
        "nvidia_com_gpu",
        "nvidia_com_mig_3g_40gb",
        "nvidia_com_mig_2g_20gb",
    }


def test_rate_renders_the_catalog_price_exactly(dev_spec):
    rates = {
        r["labels"]["tier"]: float(r["expr"][len("vector(") : -1])
        for r in _rules(dev_spec)
        if r.get("record") == "gpu_class_hourly_rate"
    }
    assert rates["train"] == 27.447050 / 8
    assert rates["ci"] == pytest.approx(21.957642 / 8 / 8)
    assert rates["inference"] == pytest.approx(27.447050 / 8 * 3 / 7)  # 3 of the layout's 7 compute slices


def test_mig_units_of_one_node_add_up_to_the_node_price(dev_spec):
    from gpu_platform.observability.pricing import pool_price

    price = pool_price(dev_spec, dev_spec.pools_by_name["gpu-infer"])
    total = sum(price.unit_hourly[r] * n for r, n in price.capacity.units_per_node.items())
    assert total == pytest.approx(price.node_hourly)


def test_dashboard_queries_name_only_rules_or_known_metrics(dev_spec):
    cm = render_dashboard_configmap(dev_spec)
    assert cm["metadata"]["labels"]["grafana_dashboard"] == "1"
    dash = json.loads(cm["data"][DASHBOARD_KEY])
    queries = panel_queries(dash)
    assert len(queries) >= 9
    recorded = {r["record"] for r in _rules(dev_spec) if "record" in r}
    for q in queries:
        unknown = metric_names(q) - recorded - KNOWN_METRICS
        assert not unknown, f"{q}: unknown metrics {unknown}"


def test_dashboard_covers_the_required_views(dev_spec):
    dash = json.loads(render_dashboard_configmap(dev_spec)["data"][DASHBOARD_KEY])
    text = " ".join(panel_queries(dash))
    for needed in (
        "tier:gpu_sm_active:avg1h",
        "pool:gpu_sm_active:avg1h",
        "namespace_tier:gpu_units_allocated:sum",
        "team_tier:gpu_cost_hourly:sum",
        stranded_expr(dev_spec),
        "kueue_pending_workloads",
    ):
        assert needed in text
    assert len({p["id"] for p in dash["panels"]}) == len(dash["panels"])


def test_synth_registers_observability(dev_spec):
    from gpu_platform.synth import RENDERERS

    assert "observability" in RENDERERS
    names = {(a.kind, a.name) for a in RENDERERS["observability"](dev_spec)}
    assert names == {
        ("kubernetes", "gpu-platform-rules"),
        ("kubernetes", "gpu-platform-dashboard"),
        ("kubernetes", "gpu-platform-servicemonitors"),
        ("helm", "kube-prometheus-stack"),
        ("helm", "opencost"),
    }


def test_prometheus_rule_metadata(dev_spec):
    rule = render_prometheus_rule(dev_spec)
    assert rule["apiVersion"] == "monitoring.coreos.com/v1"
    assert rule["metadata"]["namespace"] == "monitoring"
    assert rule["metadata"]["labels"]["release"] == "kube-prometheus-stack"


def test_golden_dev_observability(dev_spec, golden):
    for a in render_observability_artifacts(dev_spec):
        golden(f"observability/{a.kind}-{a.name}.yaml", dump_documents(a.documents))


def test_pure_modules_do_not_import_pulumi():
    import subprocess
    import sys

    code = (
        "import sys, gpu_platform.observability.render, gpu_platform.observability.cost_cli; "
        "print(sorted(m for m in sys.modules if m.split('.')[0] == 'pulumi'))"
    )
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert res.returncode == 0, res.stderr
    assert res.stdout.strip() == "[]"
