"""GpuObservability under Pulumi mocks: type token, pinned child names, parents, inputs, ordering."""

from __future__ import annotations

from gpu_platform.load import parse_spec
from gpu_platform.observability.render import render_observability

TOKEN = "gpu-platform:index:GpuObservability"
RELEASE = "kubernetes:helm.sh/v3:Release"


def _run(pulumi_mocks, spec):
    from gpu_platform.observability.component import (
        GpuObservability,
        GpuObservabilityArgs,
    )

    return pulumi_mocks.run(lambda: GpuObservability("obs", GpuObservabilityArgs(spec=spec)))


def test_children_names_types_and_parents(pulumi_mocks, dev_spec):
    rec = _run(pulumi_mocks, dev_spec)
    comp = rec.named("obs")
    assert comp.type == TOKEN and comp.custom is False
    children = {r.name: r for r in rec.resources if r.name != "obs"}
    assert {n: r.type for n, r in children.items()} == {
        "obs-kube-prometheus-stack": RELEASE,
        "obs-opencost": RELEASE,
        "obs-prometheusrule-monitoring-gpu-platform": "kubernetes:monitoring.coreos.com/v1:PrometheusRule",
        "obs-servicemonitor-opencost-opencost": "kubernetes:monitoring.coreos.com/v1:ServiceMonitor",
        "obs-configmap-monitoring-gpu-platform-dashboard": "kubernetes:core/v1:ConfigMap",
    }
    assert all(r.parent == comp.urn for r in children.values())


def test_inputs_are_the_rendered_documents(pulumi_mocks, dev_spec):
    rec = _run(pulumi_mocks, dev_spec)
    docs = render_observability(dev_spec)
    rule = rec.named("obs-prometheusrule-monitoring-gpu-platform")
    assert rule.inputs["spec"]["groups"][0]["rules"][0] == docs.rule["spec"]["groups"][0]["rules"][0]
    assert len(rule.inputs["spec"]["groups"][2]["rules"]) == len(docs.rule["spec"]["groups"][2]["rules"])
    oc = rec.named("obs-opencost").inputs
    assert oc["version"] == "2.5.17" and oc["namespace"] == "opencost"
    assert (
        oc["values"]["opencost"]["customPricing"]["costModel"]["GPU"]
        == docs.opencost["values"]["opencost"]["customPricing"]["costModel"]["GPU"]
    )
    prom = rec.named("obs-kube-prometheus-stack").inputs
    assert prom["chart"] == "kube-prometheus-stack" and prom["version"] == "88.5.3"
    dash = rec.named("obs-configmap-monitoring-gpu-platform-dashboard").inputs
    assert dash["metadata"]["labels"]["grafana_dashboard"] == "1"


def test_existing_prometheus_installs_no_stack(pulumi_mocks, dev_data):
    dev_data["monitoring"] = {"prometheus": {"install": False}, "opencost": {"enabled": False}, "dashboards": False}
    rec = _run(pulumi_mocks, parse_spec(dev_data))
    assert [r.name for r in rec.resources if r.name != "obs"] == ["obs-prometheusrule-monitoring-gpu-platform"]


def test_platform_composes_observability(pulumi_mocks, dev_spec):
    from gpu_platform.platform import GpuPlatform, GpuPlatformArgs

    rec = pulumi_mocks.run(lambda: GpuPlatform("gp", GpuPlatformArgs(spec=dev_spec)))
    obs = rec.named("gp-observability")
    assert obs.type == TOKEN and obs.parent_name == "gp"
    assert rec.named("gp-observability-opencost").parent == obs.urn
