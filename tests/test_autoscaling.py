"""KEDA queue-depth autoscaling: values against the chart's values file, ScaledObjects against its CRD, the
query against promtool on the application's series, the checks, and the component's registrations."""

from __future__ import annotations

import math

import jsonschema
import pytest
import yaml

from gpu_platform.autoscaling.checks import check_autoscaling
from gpu_platform.autoscaling.keda import queue_depth_query, render_keda_values, render_scaled_objects
from gpu_platform.autoscaling.render import render_autoscaling_artifacts
from gpu_platform.errors import Severity, SpecError
from gpu_platform.load import parse_spec
from gpu_platform.validation import DOMAIN_CHECKS, check_spec
from helpers.exporters import app_queue_depth
from helpers.promtool import promtool_path, run, write_files
from helpers.specs import team

SCALER = {
    "name": "chat-7b",
    "namespace": "research",
    "deployment": "chat-7b",
    "tier": "dev",
    "maxReplicas": 6,
    "targetQueueDepth": 4,
}


def _spec(dev_data, **scaler):
    dev_data["autoscaling"] = {"keda": {"scalers": [{**SCALER, **scaler}]}}
    return parse_spec(dev_data)


def _errors(dev_data, **scaler) -> list[str]:
    """The errors `parse_spec` reports for the dev stack with one scaler changed."""
    if scaler or "autoscaling" not in dev_data:
        dev_data["autoscaling"] = {"keda": {"scalers": [{**SCALER, **scaler}]}}
    with pytest.raises(SpecError) as err:
        parse_spec(dev_data)
    return [str(f) for f in err.value.findings]


def _keys(values: dict, prefix: str = ""):
    for k, v in values.items():
        path = f"{prefix}.{k}" if prefix else k
        if isinstance(v, dict) and v:
            yield from _keys(v, path)
        else:
            yield path


def _exists(tree, path: str) -> bool:
    for part in path.split("."):
        if not isinstance(tree, dict) or part not in tree:
            return False
        tree = tree[part]
    return True


def test_keda_values_keys_exist_upstream(dev_spec, reference):
    upstream = yaml.safe_load(reference("upstream", "keda-values-2.20.2.yaml").read_text())
    # additionalLabels is an empty map upstream: its entries are ours
    missing = [
        p for p in _keys(render_keda_values(dev_spec)) if not _exists(upstream, p) and ".additionalLabels." not in p
    ]
    assert missing == []
    assert upstream["prometheus"]["operator"]["serviceMonitor"]["enabled"] is False  # why we set it


def test_scaled_object_validates_against_the_crd(dev_data, reference):
    crd = yaml.safe_load(reference("crds", "keda", "keda.sh_scaledobjects.yaml").read_text())
    schema = next(v for v in crd["spec"]["versions"] if v["name"] == "v1alpha1")["schema"]["openAPIV3Schema"]
    (obj,) = render_scaled_objects(_spec(dev_data))
    jsonschema.Draft7Validator(schema).validate(obj)
    broken = {**obj, "spec": {**obj["spec"], "triggers": [{"metadata": {}}]}}  # no trigger type
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.Draft7Validator(schema).validate(broken)


def test_scaled_object_queries_the_platforms_prometheus(dev_data):
    (obj,) = render_scaled_objects(_spec(dev_data))
    (trigger,) = obj["spec"]["triggers"]
    assert obj["spec"]["scaleTargetRef"] == {"apiVersion": "apps/v1", "kind": "Deployment", "name": "chat-7b"}
    assert trigger["type"] == "prometheus" and trigger["metricType"] == "AverageValue"
    assert trigger["metadata"]["serverAddress"] == "http://prometheus-operated.monitoring.svc:9090"
    assert trigger["metadata"]["threshold"] == "4"  # KEDA parses trigger metadata from strings
    assert (obj["spec"]["minReplicaCount"], obj["spec"]["maxReplicaCount"]) == (1, 6)


def test_query_sums_only_the_deployments_pods_into_one_sample(promtool, dev_data, tmp_path):
    """KEDA rejects a query returning more than one sample; the sum covers only chat-7b's own pods."""
    spec = _spec(dev_data)
    query = queue_depth_query(spec.autoscaling.keda.scalers[0])
    series = [
        app_queue_depth("research", "chat-7b-5d8f9c7b6-x2x9z", "7x20"),
        app_queue_depth("research", "chat-7b-5d8f9c7b6-k8p2m", "6x20"),
        app_queue_depth("research", "chat-7b-canary-6c9d8b7f5-abcde", "50x20"),  # another Deployment
        app_queue_depth("prod-inference", "chat-7b-5d8f9c7b6-q1w2e", "50x20"),
    ]  # another namespace
    tests = [
        {
            "interval": "1m",
            "input_series": series,
            "promql_expr_test": [{"expr": query, "eval_time": "5m", "exp_samples": [{"labels": "{}", "value": 13}]}],
        },
        {
            "interval": "1m",
            "input_series": [],
            "promql_expr_test": [{"expr": query, "eval_time": "5m", "exp_samples": [{"labels": "{}", "value": 0}]}],
        },
    ]
    _, path = write_files(spec, tmp_path, tests)
    res = run(promtool, "test", "rules", str(path), cwd=tmp_path)
    assert res.returncode == 0, res.stdout + res.stderr
    # KEDA's AverageValue target: the HPA asks for ceil(13 / 4) = 4 replicas.
    assert math.ceil(13 / spec.autoscaling.keda.scalers[0].target_queue_depth) == 4


@pytest.fixture(scope="module")
def promtool() -> str:
    return promtool_path()


def test_check_is_registered():
    assert check_autoscaling in DOMAIN_CHECKS


def test_dev_example_is_valid_and_warns_nothing(dev_data):
    spec = _spec(dev_data)
    assert not [f for f in check_spec(spec) if f.path.startswith("autoscaling") and f.severity is not Severity.INFO]


@pytest.mark.parametrize(
    ("change", "path", "words"),
    [
        ({"tier": "gold"}, "autoscaling.keda.scalers[0].tier", "unknown tier 'gold'; allowed: ci, dev, finetune"),
        (
            {"namespace": "prod-inference"},
            "autoscaling.keda.scalers[0].namespace",
            "'prod-inference' is not a namespace",
        ),
        ({"minReplicas": 8}, "autoscaling.keda.scalers[0].minReplicas", "8 is above maxReplicas 6"),
        (
            {"deployment": "Chat_7b"},
            "autoscaling.keda.scalers[0].deployment",
            "'Chat_7b' is not a valid Kubernetes name",
        ),
        # int32 fields of the ScaledObject CRD (format: int32)
        ({"maxReplicas": 10**10}, "autoscaling.keda.scalers[0].maxReplicas", "less than or equal to 2147483647"),
        (
            {"pollingInterval": 10**14},
            "autoscaling.keda.scalers[0].pollingInterval",
            "less than or equal to 2147483647",
        ),
        ({"cooldownPeriod": 2**31}, "autoscaling.keda.scalers[0].cooldownPeriod", "less than or equal to 2147483647"),
        (
            {"targetQueueDepth": math.inf},
            "autoscaling.keda.scalers[0].targetQueueDepth",
            "finite number",
        ),  # every model
        ({"targetQueueDepth": 12345678.9}, "autoscaling.keda.scalers[0].targetQueueDepth", "to 1000000"),
        ({"targetQueueDepth": 1e-9}, "autoscaling.keda.scalers[0].targetQueueDepth", "from 0.001"),
        ({"deployment": "a" * 47}, "autoscaling.keda.scalers[0].deployment", "at most 46 characters"),
    ],
)
def test_bad_scalers_name_field_value_and_what_is_allowed(dev_data, change, path, words):
    errors = _errors(dev_data, **change)
    assert any(e.startswith(path) and words in e for e in errors), errors


def test_two_scalers_on_one_deployment_are_rejected(dev_data):
    dev_data["autoscaling"] = {"keda": {"scalers": [SCALER, {**SCALER, "name": "chat-7b-2"}]}}
    errors = _errors(dev_data)
    assert any(e.startswith("autoscaling.keda.scalers[1].deployment") and "already scaled by" in e for e in errors)


def test_longest_allowed_deployment_name_still_matches_its_pods(promtool, dev_data, tmp_path):
    """46 characters + '-' + a 10-character template hash + '-' = 58, the generateName prefix the API server keeps;
    the pod name then ends in 5 random characters and the scaler's query still finds it."""
    name = "a" * 46
    spec = _spec(dev_data, deployment=name)
    pod = f"{name}-{'5d8f9c7b6x'}-x2x9z"
    assert len(pod) == 63
    query = queue_depth_query(spec.autoscaling.keda.scalers[0])
    tests = [
        {
            "interval": "1m",
            "input_series": [app_queue_depth("research", pod, "7x20")],
            "promql_expr_test": [{"expr": query, "eval_time": "5m", "exp_samples": [{"labels": "{}", "value": 7}]}],
        }
    ]
    _, path = write_files(spec, tmp_path, tests)
    res = run(promtool, "test", "rules", str(path), cwd=tmp_path)
    assert res.returncode == 0, res.stdout + res.stderr


def test_threshold_is_an_exact_string(dev_data, reference):
    (obj,) = render_scaled_objects(_spec(dev_data, targetQueueDepth=1234567 / 10, maxReplicas=2**31 - 1))
    assert obj["spec"]["triggers"][0]["metadata"]["threshold"] == "123456.7"  # `:g` gave "123457"
    crd = yaml.safe_load(reference("crds", "keda", "keda.sh_scaledobjects.yaml").read_text())
    schema = next(v for v in crd["spec"]["versions"] if v["name"] == "v1alpha1")["schema"]["openAPIV3Schema"]
    jsonschema.Draft7Validator(schema, format_checker=jsonschema.FormatChecker()).validate(obj)


def test_keda_without_scalers_warns(dev_data):
    dev_data["autoscaling"] = {"keda": {"enabled": True, "scalers": []}}
    warnings = [str(f) for f in check_spec(parse_spec(dev_data)) if f.severity is Severity.WARNING]
    assert any(w.startswith("autoscaling.keda:") and "external.metrics.k8s.io" in w for w in warnings)


def test_scaler_without_keda_is_an_error(dev_data):
    dev_data["autoscaling"] = {"keda": {"enabled": False, "scalers": [SCALER]}}
    assert any("KEDA is disabled" in e for e in _errors(dev_data))


def test_scaler_on_an_exclusive_tier_warns(dev_data):
    team(dev_data, "research")["quotas"]["train"] = 16
    spec = _spec(dev_data, tier="train")
    warnings = [str(f) for f in check_spec(spec) if f.severity is Severity.WARNING and f.path.startswith("autoscaling")]
    assert any("not time-sliced" in w for w in warnings)


def test_zero_min_replicas_is_rejected_by_the_model(dev_data):
    dev_data["autoscaling"] = {"keda": {"scalers": [{**SCALER, "minReplicas": 0}]}}
    with pytest.raises(SpecError) as err:
        parse_spec(dev_data)
    assert "minReplicas" in str(err.value)


def test_unknown_keys_are_rejected(dev_data):
    dev_data["autoscaling"] = {"keda": {"scalers": [{**SCALER, "maxReplica": 3}]}}
    with pytest.raises(SpecError) as err:
        parse_spec(dev_data)
    assert "maxReplica" in str(err.value)


def test_chart_version_is_pinned_and_overridable(dev_data):
    dev_data["autoscaling"] = {"keda": {"version": "2.21.0", "valuesOverrides": {"operator": {"replicaCount": 2}}}}
    (release,) = [a for a in render_autoscaling_artifacts(parse_spec(dev_data)) if a.kind == "helm"]
    doc = release.documents[0]
    assert doc["version"] == "2.21.0" and doc["values"]["operator"] == {"replicaCount": 2}
    assert parse_spec({k: v for k, v in dev_data.items() if k != "autoscaling"}).autoscaling.keda.version == "2.20.2"


def test_disabled_keda_renders_nothing(dev_data):
    dev_data["autoscaling"] = {"keda": {"enabled": False}}
    assert render_autoscaling_artifacts(parse_spec(dev_data)) == []


def test_component_registers_keda_and_the_scaled_object(pulumi_mocks, dev_data):
    from gpu_platform.autoscaling.component import GpuAutoscaling, GpuAutoscalingArgs

    spec = _spec(dev_data)
    rec = pulumi_mocks.run(lambda: GpuAutoscaling("as", GpuAutoscalingArgs(spec=spec)))
    assert rec.named("as").type == "gpu-platform:index:GpuAutoscaling"
    keda = rec.named("as-keda")
    assert keda.type == "kubernetes:helm.sh/v3:Release" and keda.inputs["version"] == "2.20.2"
    obj = rec.named("as-scaledobject-research-chat-7b")
    assert obj.type == "kubernetes:keda.sh/v1alpha1:ScaledObject" and obj.parent_name == "as"
    assert rec.depends_on("as-scaledobject-research-chat-7b", "as-keda"), "the CRD comes with the chart"


def test_scaler_example_and_its_pod_monitor():
    """The documented scaler is in an example spec, and the example manifest's PodMonitor scrapes its pods."""
    from pathlib import Path

    from gpu_platform.load import load_spec

    root = Path(__file__).resolve().parents[1]
    spec = load_spec(str(root / "examples" / "aws-1000-a100.yaml"))
    (scaler,) = spec.autoscaling.keda.scalers
    deployment, monitor = yaml.safe_load_all((root / "examples" / "keda" / "chat-7b.yaml").read_text())
    assert (deployment["kind"], deployment["metadata"]) == (
        "Deployment",
        {"name": scaler.deployment, "namespace": scaler.namespace},
    )
    pod = deployment["spec"]["template"]
    assert pod["metadata"]["labels"]["gpu.acme.io/gpu-tier"] == scaler.tier
    assert monitor["kind"] == "PodMonitor" and monitor["metadata"]["namespace"] == scaler.namespace
    labels = pod["metadata"]["labels"]
    assert all(labels.get(k) == v for k, v in monitor["spec"]["selector"]["matchLabels"].items())
    ports = {p["name"] for c in pod["spec"]["containers"] for p in c.get("ports", [])}
    assert {e["port"] for e in monitor["spec"]["podMetricsEndpoints"]} <= ports
    from helpers.docs import all_text

    readme = all_text()
    assert "in the dev stack (tier `dev`" not in readme and "examples/keda/chat-7b.yaml" in readme
