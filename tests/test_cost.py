"""`gpu-platform cost`: figures recomputed by hand from examples/aws-1000-a100.yaml, and the output formats."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from gpu_platform.cli import main
from gpu_platform.observability.cost_cli import cost

ROOT = Path(__file__).resolve().parents[1]
FLEET = str(ROOT / "examples" / "aws-1000-a100.yaml")
NODE = 19.21  # the example's priceOverrides for p4de.24xlarge, $/node-hour
GPU = NODE / 8


def _json(path: str = FLEET) -> dict:
    res = CliRunner().invoke(main, ["cost", path, "--format", "json"])
    assert res.exit_code == 0, res.output
    return json.loads(res.stdout)


@pytest.fixture(scope="module")
def report() -> dict:
    return _json()


def _pool(report: dict, name: str) -> dict:
    return next(p for p in report["pools"] if p["name"] == name)


def _tier(pool: dict, name: str) -> dict:
    return next(t for t in pool["tiers"] if t["name"] == name)


def test_registered():
    assert main.commands["cost"] is cost


def test_exclusive_pool_by_hand(report):
    p = _pool(report, "gpu-train")  # 8-60 nodes, whole GPUs
    assert (p["gpusMin"], p["gpusMax"]) == (64, 480)
    assert p["hourlyMin"] == pytest.approx(8 * NODE) and p["hourlyMax"] == pytest.approx(60 * NODE)
    assert p["monthlyMax"] == pytest.approx(60 * NODE * 730)
    assert _tier(p, "pretrain")["unitHourly"] == pytest.approx(GPU, abs=1e-6)
    assert p["baselineHourly"] == pytest.approx(480 * GPU) and p["savingPercent"] == 0


def test_mig_pool_by_hand(report):
    p = _pool(report, "gpu-infer")  # 20-35 nodes, per GPU 3g.40gb + 2g.20gb + 2 x 1g.10gb = 7 compute slices
    assert p["hourlyMax"] == pytest.approx(35 * NODE)
    inference, small, emb = _tier(p, "inference"), _tier(p, "inference-small"), _tier(p, "embeddings")
    assert (inference["unitsMin"], inference["unitsMax"]) == (160, 280)
    assert (emb["unitsPerNode"], emb["unitsMax"]) == (16, 560)
    assert inference["unitHourly"] == pytest.approx(GPU * 3 / 7, abs=1e-6)
    assert small["unitHourly"] == pytest.approx(GPU * 2 / 7, abs=1e-6)
    assert emb["unitHourly"] == pytest.approx(GPU * 1 / 7, abs=1e-6)
    assert inference["hourlyMin"] == pytest.approx(160 * GPU * 3 / 7, abs=1e-4)  # 20 nodes x 8 slices
    assert inference["monthlyMin"] == pytest.approx(160 * GPU * 3 / 7 * 730, abs=1e-2)
    assert emb["hourlyMax"] == pytest.approx(560 * GPU / 7, abs=1e-4)
    baseline = (280 + 280 + 560) * GPU  # one whole GPU per slice the tiers can use at max size
    assert p["baselineHourly"] == pytest.approx(baseline)
    assert p["savingPercent"] == pytest.approx((baseline - 35 * NODE) / baseline * 100, abs=0.01)  # 75 %


def test_time_slicing_pool_by_hand(report):
    p = _pool(report, "gpu-notebook")  # 2-10 nodes, 4 replicas per GPU
    t = _tier(p, "notebook")
    assert (t["unitsMin"], t["unitsMax"]) == (64, 320)
    assert t["unitHourly"] == pytest.approx(GPU / 4, abs=1e-6)
    assert p["baselineHourly"] == pytest.approx(320 * GPU)
    assert p["savingPercent"] == pytest.approx(75.0)


def test_mps_pool_by_hand(report):
    p = _pool(report, "gpu-ci")  # 1-5 nodes, 8 clients per GPU
    t = _tier(p, "ci")
    assert t["unitHourly"] == pytest.approx(GPU / 8, abs=1e-6)
    assert p["hourlyMin"] == pytest.approx(NODE) and p["hourlyMax"] == pytest.approx(5 * NODE)
    assert p["savingPercent"] == pytest.approx(87.5)


def test_totals_by_hand(report):
    nodes_min, nodes_max = 8 + 20 + 4 + 2 + 1, 60 + 35 + 15 + 10 + 5
    assert report["totalHourlyMin"] == pytest.approx(nodes_min * NODE)
    assert report["totalHourlyMax"] == pytest.approx(nodes_max * NODE)
    assert report["totalMonthlyMax"] == pytest.approx(nodes_max * NODE * 730)
    # baseline GPUs: train 480, infer 280+280+560, finetune 120+120, notebook 320, ci 320
    baseline = (480 + 1120 + 240 + 320 + 320) * GPU
    assert report["baselineHourly"] == pytest.approx(baseline)
    assert report["savingPercent"] == pytest.approx((baseline - nodes_max * NODE) / baseline * 100, abs=0.01)


def test_contract_keys(report):
    assert {"pools", "totalHourlyMin", "totalHourlyMax", "baselineHourly", "savingPercent"} <= set(report)
    assert all({"name", "hourlyMin", "hourlyMax"} <= set(p) for p in report["pools"])


def test_table_prints_the_figures():
    res = CliRunner().invoke(main, ["cost", FLEET])
    assert res.exit_code == 0, res.output
    assert "gpu-infer" in res.stdout and "inference-small" in res.stdout
    assert f"{125 * NODE:,.2f}" in res.stdout  # total $/h at max size
    assert "59.7" in res.stdout  # saving %


def test_markdown_format():
    res = CliRunner().invoke(main, ["cost", FLEET, "--format", "markdown"])
    assert res.exit_code == 0, res.output
    lines = res.stdout.splitlines()
    header = next(i for i, line in enumerate(lines) if line.startswith("| pool |"))
    assert lines[header + 1].startswith("|---|")
    assert any(line.startswith("| gpu-ci | p4de.24xlarge | mps |") for line in lines)


def test_bad_spec_exits_1_without_traceback(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("cloud: aws\nclusterName: x\nlabelDomain: a.b\nnodePools: []\ntiers: []\n")
    res = CliRunner().invoke(main, ["cost", str(bad)])
    assert res.exit_code == 1 and "Traceback" not in res.output


def test_dev_stack_reads_pulumi_config():
    doc = _json(str(ROOT / "Pulumi.dev.yaml"))
    assert [p["name"] for p in doc["pools"]] == ["gpu-train", "gpu-infer", "gpu-dev", "gpu-ci"]


def test_capacity_no_tier_requests_is_reported_as_unattributed():
    """The dev stack's gpu-infer advertises 1g.10gb slices no tier uses: in the pool's price, in no tier's."""
    from gpu_platform.load import load_spec
    from gpu_platform.observability.cost import cost_report, unattributed_notes
    from gpu_platform.observability.pricing import pool_price

    spec = load_spec(str(ROOT / "Pulumi.dev.yaml"))
    report = cost_report(spec)
    infer = next(p for p in report.pools if p.price.pool.name == "gpu-infer")
    (spare,) = infer.unattributed
    assert (spare.resource, spare.units_per_node, spare.units_max) == ("nvidia.com/mig-1g.10gb", 16, 128)
    node = pool_price(spec, infer.price.pool).node_hourly
    assert spare.hourly_max == pytest.approx(node * 8 * 2 / 7)  # 2 of 7 compute slices of every GPU
    tiers_max = sum(t.hourly_max for t in infer.tiers)
    assert tiers_max + spare.hourly_max == pytest.approx(infer.price.hourly_max)
    assert report.to_json()["unattributedHourlyMax"] == pytest.approx(spare.hourly_max, abs=1e-4)
    (note,) = unattributed_notes(report)
    assert "gpu-infer advertises nvidia.com/mig-1g.10gb" in note.message and "$62.74/h" in note.message
    assert cost_report(load_spec(FLEET)).unattributed_hourly_max == 0


def test_cost_and_synth_print_the_unattributed_capacity(tmp_path):
    from click.testing import CliRunner

    from gpu_platform.cli import main

    dev = str(ROOT / "Pulumi.dev.yaml")
    res = CliRunner().invoke(main, ["cost", dev])
    assert res.exit_code == 0 and "unattributed: gpu-infer advertises nvidia.com/mig-1g.10gb" in res.output
    res = CliRunner().invoke(main, ["synth", dev, "--out", str(tmp_path)])
    assert res.exit_code == 0 and "gpu-infer advertises nvidia.com/mig-1g.10gb" in res.output


def test_the_report_says_where_its_prices_come_from(dev_data):
    from gpu_platform.load import parse_spec
    from gpu_platform.observability.cost import cost_report

    assert cost_report(parse_spec(dev_data)).prices == (
        "p4d.24xlarge, p4de.24xlarge: on-demand list prices in us-east-1 as of 2026-07-20",
    )
    dev_data["aws"]["region"] = "eu-west-1"
    dev_data["catalog"] = {"priceOverrides": {"p4d.24xlarge": 30.0}, "discountPercent": 10}
    dev_data["nodePools"][0]["instanceType"] = "p5e.48xlarge"
    for p in dev_data["nodePools"]:
        p.get("aws", {}).pop("zone", None)
    prices = cost_report(parse_spec(dev_data)).prices
    assert (
        prices[0]
        == "p4de.24xlarge: on-demand list prices in us-east-1 as of 2026-07-20, less catalog.discountPercent 10%"
    )
    assert prices[1] == (
        "the cluster is in eu-west-1: the list prices above are us-east-1's, and differ there; set "
        "catalog.priceOverrides to what you pay"
    )
    assert prices[2].startswith("p5e.48xlarge: no us-east-1 on-demand list price") and "proxy" in prices[2]
    assert prices[3] == (
        "p4d.24xlarge: the price in the spec (catalog.priceOverrides or catalog.instanceTypes); "
        "catalog.discountPercent does not apply to it"
    )
    assert not any(p.startswith("p5e.48xlarge: on-demand") for p in prices)  # no list price claimed for it
    assert cost_report(parse_spec(dev_data)).to_json()["prices"] == list(prices)


def test_the_cost_command_prints_the_price_origin(tmp_path):
    from click.testing import CliRunner

    from gpu_platform.cli import main

    res = CliRunner().invoke(main, ["cost", str(ROOT / "examples" / "gke-a2.yaml")])
    assert res.exit_code == 0, res.output
    assert (
        "prices: a2-ultragpu-8g: on-demand list prices in us-central1 as of 2025-03-06, less "
        "catalog.discountPercent 28%" in res.stdout
    )
    md = CliRunner().invoke(main, ["cost", str(ROOT / "examples" / "gke-a2.yaml"), "--format", "markdown"])
    assert "- prices: a2-ultragpu-8g: on-demand list prices in us-central1" in md.stdout


def test_spot_and_capacity_block_pools_are_named_as_billed_otherwise(dev_data):
    from gpu_platform.load import parse_spec
    from gpu_platform.observability.cost import cost_report

    dev_data["nodePools"][2].setdefault("aws", {})["capacityType"] = "SPOT"
    prices = cost_report(parse_spec(dev_data)).prices
    assert prices[-1] == (
        "pool gpu-dev runs Spot capacity: billed at Spot or Capacity Block rates, not at the on-demand prices the "
        "figures here use (catalog.priceOverrides sets one price per instance type)"
    )
    gke = cost_report(parse_spec(yaml.safe_load((ROOT / "examples" / "gke-a2.yaml").read_text()))).prices
    assert any(p.startswith("pool gpu-ci runs Spot VMs: billed at Spot or Capacity Block rates") for p in gke)
