"""OpenCost: each node is priced at its catalog price through the CSV provider, split into CPU, RAM and GPU.

OpenCost picks the cloud's provider from the node's providerID unless USE_CUSTOM_PROVIDER=true, and the CSV
provider when USE_CSV_PROVIDER=true (opencost pkg/cloud/provider/provider.go); on GKE without an API key the
GCP provider fails. The CSV provider prices a node from the row whose InstanceID equals the node's value at
InstanceIDField (pkg/cloud/provider/csvprovider.go), and GetNodeCost splits that price into vCPUs, RAM and GPUs
at the configured ratios (pkg/costmodel/costmodel.go). ConfigMap prices are $ per month (providerconfig.go
UpdateFromMap divides them by 730).
"""

from __future__ import annotations

import csv
import io

import pytest
import yaml

from gpu_platform.contract import pool_label_key
from gpu_platform.load import load_spec, parse_spec
from gpu_platform.observability.opencost import (
    CSV_COLUMNS,
    CSV_PATH,
    PRICING_CSV_ANNOTATION,
    opencost_container_env,
    opencost_prices,
    pricing_csv,
    render_opencost_values,
)
from gpu_platform.observability.pricing import pool_price
from gpu_platform.observability.render import render_observability_artifacts
from gpu_platform.spec import SharingMode

SPECS = ["Pulumi.dev.yaml", "examples/aws-1000-a100.yaml", "examples/gke-a2.yaml"]


def _cost_model(spec) -> dict:
    return render_opencost_values(spec)["opencost"]["customPricing"]["costModel"]


def _csv_rows(spec) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(pricing_csv(spec))))


def _node_labels(spec, pool) -> dict[str, str]:
    return {pool_label_key(spec.label_domain): pool.name, "node.kubernetes.io/instance-type": pool.instance_type}


def _csv_node_price(spec, node_labels: dict[str, str]) -> float | None:
    """csvprovider.go NodePricing for a node with these labels: the `node` row whose InstanceID is the node's
    value at InstanceIDField (NodeValueFromMapField: `metadata.labels.<key>`, the key re-joined on dots)."""
    for row in _csv_rows(spec):
        assert row["AssetClass"] == "node"
        parts = row["InstanceIDField"].split(".")
        assert parts[:2] == ["metadata", "labels"]
        if node_labels.get(".".join(parts[2:]), "").lower() == row["InstanceID"].lower():
            return float(row["MarketPriceHourly"])
    return None


@pytest.mark.parametrize("path", SPECS)
def test_the_csv_provider_is_switched_on_and_finds_its_file(path):
    values = render_opencost_values(load_spec(path))
    env = opencost_container_env(values)
    assert env["USE_CUSTOM_PROVIDER"] == "true" and env["USE_CSV_PROVIDER"] == "true"
    assert env["CSV_PATH"] == CSV_PATH and env["CONFIG_PATH"] and env["PRICING_CONFIGMAP_NAME"]
    # the file: a downward-API volume writes the pod annotation to CSV_PATH, mounted into the exporter
    (volume,) = values["extraVolumes"]
    (item,) = volume["downwardAPI"]["items"]
    assert item["fieldRef"]["fieldPath"] == f"metadata.annotations['{PRICING_CSV_ANNOTATION}']"
    (mount,) = values["opencost"]["exporter"]["extraVolumeMounts"]
    assert mount["name"] == volume["name"] and f"{mount['mountPath']}/{item['path']}" == CSV_PATH
    assert values["podAnnotations"][PRICING_CSV_ANNOTATION] == pricing_csv(load_spec(path))


@pytest.mark.parametrize("path", SPECS)
def test_csv_has_the_columns_the_provider_decodes(path):
    text = pricing_csv(load_spec(path))
    header, *rows = text.splitlines()
    assert tuple(header.split(",")) == CSV_COLUMNS  # csvutil.Header(price{}) with FieldsPerRecord = 8
    assert rows and all(len(r.split(",")) == len(CSV_COLUMNS) for r in rows)
    assert "e+" not in text and "e-" not in text.replace("node", "")


@pytest.mark.parametrize("path", SPECS)
def test_every_pool_node_adds_up_to_its_instance_price(path):
    """Per node, GPU + CPU + RAM as OpenCost computes them = the catalog instance price (after overrides and
    discount), for every pool: CSV row found by the node's pool label, then GetNodeCost's ratio split."""
    spec = load_spec(path)
    by_pool = {p.pool.name: p for p in opencost_prices(spec).pools}
    assert set(by_pool) == {p.name for p in spec.node_pools}
    for pool in spec.node_pools:
        catalog = pool_price(spec, pool).node_hourly
        assert catalog > 0
        assert _csv_node_price(spec, _node_labels(spec, pool)) == pytest.approx(catalog, abs=1e-9), pool.name
        oc = by_pool[pool.name]
        parts = oc.gpus * oc.gpu_hourly + oc.vcpus * oc.cpu_hourly + oc.memory_gib * oc.ram_hourly
        assert parts == pytest.approx(catalog, rel=1e-12), pool.name
        assert oc.gpus > 0 and oc.gpu_hourly > 0 and oc.cpu_hourly > 0 and oc.ram_hourly > 0


def test_dev_stack_pools_of_two_instance_types_each_get_their_own_price(dev_spec):
    """p4de pools next to p4d ones: one cluster-wide $/GPU used to misprice them by -4 % and +20 %."""
    pools = {p.pool.name: p for p in opencost_prices(dev_spec).pools}
    assert pools["gpu-train"].opencost_hourly == pytest.approx(27.44705)
    assert pools["gpu-dev"].opencost_hourly == pytest.approx(21.957642)
    assert all(abs(p.deviation_percent) < 1e-9 for p in pools.values())
    notes = [str(n) for a in render_observability_artifacts(dev_spec) for n in a.notes if "OpenCost" in n.message]
    assert not any("off the catalog" in n for n in notes)
    assert any("gpu-dev node at $21.9576/h" in n and "the catalog at $21.9576/h" in n for n in notes)


def test_nodes_outside_the_csv_get_the_configured_prices(dev_spec):
    """A system node has no pool label: no row matches and OpenCost prices it at the ConfigMap's CPU and RAM."""
    assert _csv_node_price(dev_spec, {"node.kubernetes.io/instance-type": "m6i.xlarge"}) is None


def test_configmap_prices_are_monthly(dev_spec):
    """providerconfig.go UpdateFromMap divides CPU, RAM and GPU by 730: the ConfigMap carries $/month."""
    cm, prices = _cost_model(dev_spec), opencost_prices(dev_spec)
    assert float(cm["CPU"]) / 730 == pytest.approx(prices.cpu, rel=1e-6)
    assert float(cm["RAM"]) / 730 == pytest.approx(prices.ram, rel=1e-6)
    assert float(cm["GPU"]) / 730 == pytest.approx(prices.gpu, rel=1e-6)
    assert (cm["discount"], cm["negotiatedDiscount"]) == ("0%", "0%")  # the CSV prices are already discounted
    # every costModel key is a CustomPricing field: an unknown one fails the whole ConfigMap update
    assert set(cm) <= {"description", "CPU", "RAM", "GPU", "discount", "negotiatedDiscount"}


def test_gke_does_not_take_the_keyless_gcp_path():
    spec = load_spec("examples/gke-a2.yaml")
    values = render_opencost_values(spec)
    env = opencost_container_env(values)
    # getClusterProperties returns before the providerID check when USE_CUSTOM_PROVIDER is true
    assert env["USE_CUSTOM_PROVIDER"] == "true" and env["USE_CSV_PROVIDER"] == "true"
    assert "CLOUD_PROVIDER_API_KEY" not in env
    assert values["opencost"]["customPricing"]["provider"] == "custom"


def test_container_env_mirrors_the_chart_template():
    assert opencost_container_env({"opencost": {"customPricing": {"enabled": False}}}) == {}
    env = opencost_container_env(
        {
            "opencost": {
                "customPricing": {"enabled": True},
                "exporter": {"cloudProviderApiKey": "k", "extraEnv": {"A": True, "B": 2}},
            }
        }
    )
    assert env == {
        "CLOUD_PROVIDER_API_KEY": "<secret>",
        "CONFIG_PATH": "/tmp/custom-config",
        "PRICING_CONFIGMAP_NAME": "custom-pricing-model",
        "A": "true",
        "B": "2",
    }


def test_every_sharing_mode_on_the_1000_gpu_fleet_is_priced_exactly():
    spec = load_spec("examples/aws-1000-a100.yaml")
    pools = opencost_prices(spec).pools
    assert {p.pool.sharing.mode for p in pools} == set(SharingMode)
    for p in pools:
        assert p.opencost_hourly == pytest.approx(19.21, rel=1e-12), p.pool.name  # the example's priceOverrides


def test_price_overrides_and_discount_reach_the_csv(dev_data):
    base = {r["InstanceID"]: float(r["MarketPriceHourly"]) for r in _csv_rows(parse_spec(dev_data))}
    dev_data["catalog"] = {"discountPercent": 50}
    half = {r["InstanceID"]: float(r["MarketPriceHourly"]) for r in _csv_rows(parse_spec(dev_data))}
    assert half == pytest.approx({k: v / 2 for k, v in base.items()})


def test_cpu_and_ram_prices_and_gpu_override(dev_data):
    dev_data["monitoring"]["opencost"] = {"cpuHourlyPrice": 0.04, "ramGibHourlyPrice": 0.005, "gpuHourlyPrice": 2.5}
    cm = _cost_model(parse_spec(dev_data))
    assert (cm["CPU"], cm["RAM"], cm["GPU"]) == ("29.2", "3.65", "1825")
    for p in opencost_prices(parse_spec(dev_data)).pools:  # only the ratios change, the node price stays
        assert p.opencost_hourly == pytest.approx(p.catalog_hourly, rel=1e-12)
        assert p.gpu_hourly / p.ram_hourly == pytest.approx(2.5 / 0.005)


def test_custom_instance_type_shape(dev_data):
    dev_data["catalog"] = {
        "instanceTypes": [
            {
                "name": "p9.big",
                "gpuModel": "A100-SXM4-80GB",
                "gpuCount": 8,
                "hourlyPrice": 40.0,
                "vcpus": 100,
                "memoryGib": 1000,
            }
        ]
    }
    dev_data["nodePools"] = [
        {"name": "gpu-train", "instanceType": "p9.big", "sharing": {"mode": "exclusive"}, "maxSize": 2}
    ]
    dev_data["tiers"] = [{"name": "train", "pool": "gpu-train", "priority": 1}]
    dev_data["teams"] = [{"name": "research", "namespaces": ["research"], "quotas": {"train": 16}}]
    spec = parse_spec(dev_data)
    (p,) = opencost_prices(spec).pools
    assert (p.vcpus, p.memory_gib) == (100, 1000)
    assert 100 * p.cpu_hourly + 1000 * p.ram_hourly + 8 * p.gpu_hourly == pytest.approx(40.0, rel=1e-12)
    assert _csv_rows(spec)[0]["MarketPriceHourly"] == "40"


def test_annotation_survives_yaml(dev_spec):
    """The multi-line CSV goes through the Helm values YAML unchanged."""
    values = render_opencost_values(dev_spec)
    assert yaml.safe_load(yaml.safe_dump(values))["podAnnotations"][PRICING_CSV_ANNOTATION] == pricing_csv(dev_spec)


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

    rates = {
        r["labels"]["resource"]: float(r["expr"][len("vector(") : -1])
        for g in rule_groups(dev_spec)
        for r in g["rules"]
        if r.get("record") == "gpu_class_hourly_rate"
    }
    assert rates["nvidia_com_mig_3g_40gb"] > 0 and rates["nvidia_com_mig_2g_20gb"] > 0


def test_gke_native_nodes_count_partitions_and_still_add_up(dev_data):
    """Without the GPU Operator there is no gpu.count label: OpenCost counts the advertised nvidia.com/gpu (MIG
    partitions) as GPUs; the split then has more GPUs, but the node still adds up to its CSV price."""
    dev_data.pop("aws")
    dev_data.update(
        cloud="gcp",
        gcp={"project": "ml-project", "location": "us-central1", "zones": ["us-central1-a"], "gpuStack": "gke-native"},
    )
    dev_data["nodePools"] = [
        {"name": "gpu-train", "instanceType": "a2-ultragpu-8g", "sharing": {"mode": "exclusive"}, "maxSize": 2},
        {
            "name": "gpu-infer",
            "instanceType": "a2-ultragpu-8g",
            "sharing": {"mode": "mig", "migLayout": {"3g.40gb": 2}},
            "maxSize": 2,
        },
    ]
    dev_data["tiers"] = [
        {"name": "train", "pool": "gpu-train", "priority": 2},
        {"name": "inference", "pool": "gpu-infer", "priority": 1},
    ]
    dev_data["teams"] = [{"name": "research", "namespaces": ["research"], "quotas": {"train": 16, "inference": 32}}]
    spec = parse_spec(dev_data)
    pools = {p.pool.name: p for p in opencost_prices(spec).pools}
    assert (pools["gpu-train"].gpus, pools["gpu-infer"].gpus) == (8, 16)
    for p in pools.values():
        assert p.opencost_hourly == pytest.approx(p.catalog_hourly, rel=1e-12)
