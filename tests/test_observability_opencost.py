"""OpenCost: the custom prices are used (not the cloud's list), and a node's CPU + RAM + GPU add up to its price.

OpenCost picks the cloud's provider from the node's providerID unless USE_CUSTOM_PROVIDER=true
(opencost pkg/cloud/provider/provider.go); on GKE without an API key that provider fails. The custom provider
prices a node as CPU x vCPUs + RAM x GiB + GPU x GPUs (pkg/costmodel/costmodel.go).
"""

from __future__ import annotations

import pytest
from gpu_platform.catalog.instances import SHAPES
from gpu_platform.load import load_spec, parse_spec
from gpu_platform.observability.opencost import (
    opencost_container_env,
    opencost_prices,
    render_opencost_values,
)
from gpu_platform.observability.render import render_observability_artifacts
from gpu_platform.spec import SharingMode

SPECS = ["Pulumi.dev.yaml", "examples/aws-1000-a100.yaml", "examples/gke-a2.yaml"]


def _cost_model(spec) -> dict:
    return render_opencost_values(spec)["opencost"]["customPricing"]["costModel"]


@pytest.mark.parametrize("path", SPECS)
def test_the_custom_provider_is_switched_on(path):
    env = opencost_container_env(render_opencost_values(load_spec(path)))
    assert env["USE_CUSTOM_PROVIDER"] == "true"
    assert env["CONFIG_PATH"] and env["PRICING_CONFIGMAP_NAME"]


def test_gke_does_not_take_the_keyless_gcp_path():
    spec = load_spec("examples/gke-a2.yaml")
    values = render_opencost_values(spec)
    env = opencost_container_env(values)
    # The GCP provider is only chosen when USE_CUSTOM_PROVIDER is false; it then needs an API key.
    assert env["USE_CUSTOM_PROVIDER"] == "true" and "CLOUD_PROVIDER_API_KEY" not in env
    assert values["opencost"]["customPricing"]["provider"] == "custom"


def test_container_env_mirrors_the_chart_template():
    assert opencost_container_env({"opencost": {"customPricing": {"enabled": False}}}) == {}
    env = opencost_container_env({"opencost": {"customPricing": {"enabled": True}, "exporter": {
        "cloudProviderApiKey": "k", "extraEnv": {"A": True, "B": 2}}}})
    assert env == {"CLOUD_PROVIDER_API_KEY": "<secret>", "CONFIG_PATH": "/tmp/custom-config",
                   "PRICING_CONFIGMAP_NAME": "custom-pricing-model", "A": "true", "B": "2"}


def test_node_parts_add_up_to_the_instance_price_on_the_1000_gpu_fleet():
    """One instance type: every node, MIG ones too, is priced exactly at its (discounted) catalog price.

    OpenCost counts GPUs from the `nvidia.com/gpu.count` label GFD puts on every GPU node (MIG or not)."""
    spec = load_spec("examples/aws-1000-a100.yaml")
    cm, shape = _cost_model(spec), SHAPES["p4de.24xlarge"]
    node = 19.21  # the example's priceOverrides for p4de.24xlarge
    assert shape.vcpus * cm["CPU"] + shape.memory_gib * cm["RAM"] + 8 * cm["GPU"] == pytest.approx(node, abs=1e-5)
    pools = opencost_prices(spec).pools
    assert {p.pool.sharing.mode for p in pools} == set(SharingMode)
    for p in pools:
        assert p.opencost_hourly == pytest.approx(p.catalog_hourly, abs=1e-5), p.pool.name


def test_gpu_price_is_not_the_whole_node_price_per_gpu():
    """Instance price / GPUs per GPU plus CPU and RAM on top would count the CPU and RAM twice."""
    spec = load_spec("examples/aws-1000-a100.yaml")
    assert _cost_model(spec)["GPU"] < 19.21 / 8 - 0.9


def test_price_overrides_and_discount_reach_opencost(dev_data):
    base = _cost_model(parse_spec(dev_data))["GPU"]
    dev_data["catalog"] = {"discountPercent": 50}
    assert _cost_model(parse_spec(dev_data))["GPU"] < base * 0.5


def test_cpu_and_ram_prices_and_gpu_override(dev_data):
    dev_data["monitoring"]["opencost"] = {"cpuHourlyPrice": 0.04, "ramGibHourlyPrice": 0.005, "gpuHourlyPrice": 2.5}
    cm = _cost_model(parse_spec(dev_data))
    assert (cm["CPU"], cm["RAM"], cm["GPU"]) == (0.04, 0.005, 2.5)


def test_custom_instance_type_shape(dev_data):
    dev_data["catalog"] = {"instanceTypes": [{"name": "p9.big", "gpuModel": "A100-SXM4-80GB", "gpuCount": 8,
                                              "hourlyPrice": 40.0, "vcpus": 100, "memoryGib": 1000}]}
    dev_data["nodePools"] = [{"name": "gpu-train", "instanceType": "p9.big", "sharing": {"mode": "exclusive"},
                              "maxSize": 2}]
    dev_data["tiers"] = [{"name": "train", "pool": "gpu-train", "priority": 1}]
    dev_data["teams"] = [{"name": "research", "namespaces": ["research"], "quotas": {"train": 16}}]
    cm = _cost_model(parse_spec(dev_data))
    assert 100 * cm["CPU"] + 1000 * cm["RAM"] + 8 * cm["GPU"] == pytest.approx(40.0, abs=1e-5)


def test_mispriced_pools_are_named_in_the_synth_summary(dev_spec):
    notes = [n for a in render_observability_artifacts(dev_spec) for n in a.notes if "OpenCost prices" in n]
    # p4d pools next to p4de ones: one cluster $/GPU cannot fit both
    assert any("gpu-dev node" in n and "namespace_tier:gpu_cost_hourly:sum" in n for n in notes)


def test_dashboard_says_which_gpu_cost_is_of_record(dev_spec):
    """MIG slices cost nothing in OpenCost: the dashboard names the recording rules as the GPU cost of record."""
    import json

    from gpu_platform.observability.dashboard import DASHBOARD_KEY, render_dashboard_configmap

    board = json.loads(render_dashboard_configmap(dev_spec)["data"][DASHBOARD_KEY])
    cost_panels = [p for p in board["panels"] if "namespace_tier:gpu_cost_hourly:sum" in json.dumps(p.get("targets"))]
    assert cost_panels and all("cost of record" in p["title"] for p in cost_panels)
    notes = [p["options"]["content"] for p in board["panels"] if p["type"] == "text"]
    assert any("MIG slices cost nothing" in n and "namespace_tier:gpu_cost_hourly:sum" in n for n in notes)


def test_mig_slices_are_priced_by_the_recording_rules(dev_spec):
    """The platform's rate series price every MIG slice the dev stack's tiers use (OpenCost prices none)."""
    from gpu_platform.observability.rules import rule_groups

    rates = {r["labels"]["resource"]: float(r["expr"][len("vector("):-1])
             for g in rule_groups(dev_spec) for r in g["rules"] if r.get("record") == "gpu_class_hourly_rate"}
    assert rates["nvidia_com_mig_3g_40gb"] > 0 and rates["nvidia_com_mig_2g_20gb"] > 0


def test_gke_native_nodes_are_recognised_and_their_partitions_counted(dev_data):
    """Without the GPU Operator there is no nvidia.com/gpu.present label and no gpu.count label: GKE's accelerator
    label marks GPU nodes, and OpenCost counts the advertised nvidia.com/gpu (MIG partitions) as GPUs."""
    dev_data.pop("aws")
    dev_data.update(cloud="gcp", gcp={"project": "p", "location": "us-central1", "zones": ["us-central1-a"],
                                      "gpuStack": "gke-native"})
    dev_data["nodePools"] = [
        {"name": "gpu-train", "instanceType": "a2-ultragpu-8g", "sharing": {"mode": "exclusive"}, "maxSize": 2},
        {"name": "gpu-infer", "instanceType": "a2-ultragpu-8g", "sharing": {"mode": "mig", "migLayout": {"3g.40gb": 2}},
         "maxSize": 2}]
    dev_data["tiers"] = [{"name": "train", "pool": "gpu-train", "priority": 2},
                         {"name": "inference", "pool": "gpu-infer", "priority": 1}]
    dev_data["teams"] = [{"name": "research", "namespaces": ["research"], "quotas": {"train": 16, "inference": 32}}]
    spec = parse_spec(dev_data)
    assert _cost_model(spec)["gpuLabel"] == "cloud.google.com/gke-accelerator"
    pools = {p.pool.name: p for p in opencost_prices(spec).pools}
    assert pools["gpu-train"].deviation_percent == pytest.approx(0, abs=1e-3)  # the price is rounded to 6 places
    assert pools["gpu-infer"].deviation_percent > 50  # 16 partitions counted as 16 GPUs
