"""Conformance: PrometheusRule and ServiceMonitor against the prometheus-operator CRDs, Helm values keys upstream."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml

from gpu_platform.load import load_spec, parse_spec
from gpu_platform.observability.opencost import (
    render_opencost_service_monitor,
    render_opencost_values,
)
from gpu_platform.observability.prometheus import render_prometheus_values
from gpu_platform.observability.rules import render_prometheus_rule

ROOT = Path(__file__).resolve().parents[1]
SPECS = ["Pulumi.dev.yaml", "examples/aws-1000-a100.yaml", "examples/gke-a2.yaml"]

# Keys below a map-valued upstream key that the upstream file leaves empty or only documents; each with why.
ALLOWED_EXTRA = {
    # opencost/opencost pkg/cloud/models/models.go (CustomPricing fields `discount`, `negotiatedDiscount`): the
    # chart writes every costModel key into its ConfigMap; the CSV prices already carry the spec's discount.
    "opencost.customPricing.costModel.discount",
    "opencost.customPricing.costModel.negotiatedDiscount",
    # opencost-helm-chart 2.5.17 values: `exporter.extraEnv: {}` is a map of extra variables (FOO: BAR); the
    # deployment template turns each entry into an env var. OpenCost reads USE_CUSTOM_PROVIDER, USE_CSV_PROVIDER
    # and CSV_PATH (opencost pkg/env/costmodelenv.go) to price nodes from the catalog's CSV.
    "opencost.exporter.extraEnv.USE_CUSTOM_PROVIDER",
    "opencost.exporter.extraEnv.USE_CSV_PROVIDER",
    "opencost.exporter.extraEnv.CSV_PATH",
    # opencost-helm-chart 2.5.17 values: `podAnnotations: {}` is copied onto the pod; the CSV travels there.
    "podAnnotations.gpu-platform.io/pricing-csv",
    # kube-state-metrics chart 8.4.0 (a dependency of kube-prometheus-stack 88.5.3) values.yaml:
    # `metricLabelsAllowlist: []` becomes --metric-labels-allowlist.
    "kube-state-metrics.metricLabelsAllowlist",
}


def _crd_schema(reference, name: str) -> dict[str, Any]:
    crd = yaml.safe_load(reference("crds", "prometheus-operator", f"monitoring.coreos.com_{name}.yaml").read_text())
    version = next(v for v in crd["spec"]["versions"] if v["name"] == "v1")
    return _python_patterns(version["schema"]["openAPIV3Schema"])


def _python_patterns(node: Any) -> Any:
    """Go's RE2 accepts `^(?i)...`; Python wants inline flags first: `(?i)^...` means the same."""
    if isinstance(node, dict):
        return {
            k: (v.replace("^(?i)", "(?i)^") if k == "pattern" and isinstance(v, str) else _python_patterns(v))
            for k, v in node.items()
        }
    if isinstance(node, list):
        return [_python_patterns(v) for v in node]
    return node


def _validate(doc: dict, schema: dict) -> None:
    jsonschema.Draft7Validator(schema).validate(doc)


@pytest.fixture(params=SPECS)
def any_spec(request):
    return load_spec(str(ROOT / request.param))


def _paths(values: dict, prefix: str = ""):
    for k, v in values.items():
        path = f"{prefix}.{k}" if prefix else k
        if isinstance(v, dict) and v:
            yield from _paths(v, path)
        else:
            yield path


def _exists(tree: Any, path: str) -> bool:
    for part in path.split("."):
        if not isinstance(tree, dict) or part not in tree:
            return False
        tree = tree[part]
    return True


def _check_keys(values: dict, upstream: dict) -> list[str]:
    return [p for p in _paths(values) if not _exists(upstream, p) and p not in ALLOWED_EXTRA]


def test_prometheus_rule_validates_against_crd(any_spec, reference):
    _validate(render_prometheus_rule(any_spec), _crd_schema(reference, "prometheusrules"))


def test_service_monitor_validates_against_crd(any_spec, reference):
    _validate(render_opencost_service_monitor(any_spec), _crd_schema(reference, "servicemonitors"))


def test_crd_schema_rejects_a_broken_rule(dev_spec, reference):
    rule = render_prometheus_rule(dev_spec)
    rule["spec"]["groups"][0]["rules"][0]["expr"] = {"not": "a string"}
    with pytest.raises(jsonschema.ValidationError):
        _validate(rule, _crd_schema(reference, "prometheusrules"))


def test_opencost_values_keys_exist_upstream(any_spec, reference):
    upstream = yaml.safe_load(reference("upstream", "opencost-values-2.5.17.yaml").read_text())
    assert _check_keys(render_opencost_values(any_spec), upstream) == []


def test_kube_prometheus_stack_values_keys_exist_upstream(any_spec, reference):
    upstream = yaml.safe_load(reference("upstream", "kube-prometheus-stack-values-88.5.3.yaml").read_text())
    assert _check_keys(render_prometheus_values(any_spec), upstream) == []


def test_key_check_catches_a_misspelt_key(reference):
    upstream = yaml.safe_load(reference("upstream", "opencost-values-2.5.17.yaml").read_text())
    assert _check_keys({"opencost": {"customPricing": {"enabeld": True}}}, upstream) == [
        "opencost.customPricing.enabeld"
    ]


def test_selectors_open_for_the_gpu_operator_service_monitor(dev_spec, reference):
    spec = render_prometheus_values(dev_spec)["prometheus"]["prometheusSpec"]
    upstream = yaml.safe_load(reference("upstream", "kube-prometheus-stack-values-88.5.3.yaml").read_text())
    defaults = upstream["prometheus"]["prometheusSpec"]
    for kind in ("serviceMonitor", "podMonitor", "rule", "probe"):
        assert defaults[f"{kind}SelectorNilUsesHelmValues"] is True  # why we must override it
        assert spec[f"{kind}SelectorNilUsesHelmValues"] is False


def test_existing_prometheus_wiring(dev_data):
    dev_data["monitoring"] = {
        "prometheus": {"install": False, "url": "http://prom.obs.svc:9090", "ruleLabels": {"prometheus": "main"}}
    }
    spec = parse_spec(dev_data)
    from gpu_platform.observability.render import render_observability

    docs = render_observability(spec)
    assert docs.prometheus is None
    assert docs.rule["metadata"]["labels"]["prometheus"] == "main"
    assert docs.service_monitors[0]["metadata"]["labels"]["prometheus"] == "main"
    prom = docs.opencost["values"]["opencost"]["prometheus"]
    assert prom["external"] == {"enabled": True, "url": "http://prom.obs.svc:9090"}
    assert prom["internal"] == {"enabled": False}


def test_dcgm_csv_fields_and_types_are_upstreams(reference):
    """Every field of the shared CSV exists in dcgm-exporter's dcp-metrics-included.csv with the same type
    (SM_ACTIVE and SM_OCCUPANCY are there commented out, which is why the platform ships its own CSV).
    Fields the exporter computes itself (DCGM_EXP_*) are not DCGM fields and are listed in EXPORTER_FIELDS."""
    from gpu_platform.dcgm import DCGM_METRICS, EXPORTER_FIELDS

    upstream: dict[str, tuple[str, bool]] = {}
    for line in reference("upstream", "dcgm-exporter-dcp-metrics-included.csv").read_text().splitlines():
        commented = line.lstrip().startswith("#")
        parts = [p.strip() for p in line.lstrip("# ").split(",")]
        # an enabled line wins over a commented one
        if len(parts) >= 3 and parts[0].startswith("DCGM_FI_") and (parts[0] not in upstream or upstream[parts[0]][1]):
            upstream[parts[0]] = (parts[1], commented)
    for field, kind, _ in DCGM_METRICS:
        if field in EXPORTER_FIELDS:
            assert field.startswith("DCGM_EXP_"), field
            continue
        assert field in upstream, field
        assert upstream[field][0] == kind, (field, kind, upstream[field][0])
    assert upstream["DCGM_FI_PROF_SM_ACTIVE"][1] is True  # disabled upstream: the reason for our CSV


def test_prometheus_operator_crds_upgrade_with_the_chart(dev_spec, reference):
    """Helm never upgrades a chart's crds/: the chart's upgrade job does, when enabled (off upstream)."""
    from gpu_platform.observability.prometheus import render_prometheus_values

    upstream = yaml.safe_load(reference("upstream", "kube-prometheus-stack-values-88.5.3.yaml").read_text())
    assert upstream["crds"]["upgradeJob"]["enabled"] is False
    ours = render_prometheus_values(dev_spec)["crds"]["upgradeJob"]
    assert ours["enabled"] is True and set(ours) <= set(upstream["crds"]["upgradeJob"])
