"""The cost report and the recording rules agree: on the 1,000-GPU example, fully allocated at max size, the
`$ / hour by namespace` rule evaluated by promtool sums to what `gpu-platform cost` reports (within 1 %)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from gpu_platform.capacity import pool_capacity
from gpu_platform.cli import main
from gpu_platform.load import load_spec
from gpu_platform.observability.names import ksm_resource
from gpu_platform.observability.rules import COST_BY_NAMESPACE, advertised_resource
from helpers.exporters import ksm_pod, ksm_requests
from helpers.promtool import promtool_path, run, write_files

ROOT = Path(__file__).resolve().parents[1]
FLEET = ROOT / "examples" / "aws-1000-a100.yaml"


def _namespace(spec, tier: str) -> str:
    return next(ns for t in spec.teams if t.quotas.get(tier, 0) > 0 for ns in t.namespaces)


def fully_allocated(spec) -> list[dict]:
    """Every node of every pool at max size, each unit it advertises held by a Running pod of a tier using it."""
    series, n = [], 15
    for pool in spec.node_pools:
        units = pool_capacity(spec, pool).units_per_node
        owners = {}
        for tier in spec.tiers_of(pool.name):
            owners.setdefault(spec.resource_of(tier), tier.name)  # a resource shared by tiers is held once
        for i in range(pool.max_size):
            node = f"{pool.name}-{i}"
            for resource, tier in owners.items():
                ns, pod = _namespace(spec, tier), f"{tier}-{i}"
                res = ksm_resource(advertised_resource(pool, resource))
                series += [
                    ksm_requests(ns, pod, node, res, units[resource], n=n),
                    *ksm_pod(spec, ns, pod, node, tier, n=n),
                ]
    return series


@pytest.fixture(scope="module")
def promtool() -> str:
    return promtool_path()


def _agreement(spec, tmp_path, report_total: float, tolerance: float):
    """promtool: |sum of the rule - report| / report < tolerance, on the fully allocated fleet."""
    gap = f"abs(sum({COST_BY_NAMESPACE}) - {report_total!r}) / {report_total!r}"
    test = {
        "interval": "1m",
        "input_series": fully_allocated(spec),
        "promql_expr_test": [
            {"expr": f"{gap} < bool {tolerance!r}", "eval_time": "10m", "exp_samples": [{"labels": "{}", "value": 1}]}
        ],
    }
    _, path = write_files(spec, tmp_path, [test])
    return run(promtool_path(), "test", "rules", str(path), cwd=tmp_path)


def _report_total() -> float:
    res = CliRunner().invoke(main, ["cost", str(FLEET), "--format", "json"])
    assert res.exit_code == 0, res.output
    return json.loads(res.output)["totalHourlyMax"]


def test_recording_rules_total_equals_the_cost_report(promtool, tmp_path):
    spec, total = load_spec(str(FLEET)), _report_total()
    assert total == pytest.approx(125 * 19.21)  # 125 p4de nodes at the example's $19.21/h
    out = _agreement(spec, tmp_path, total, 0.01)  # the 1 % the two figures must agree within
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
    out = _agreement(spec, tmp_path, total, 1e-9)  # in fact they agree to rounding
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]


def test_a_one_percent_gap_would_fail(promtool, tmp_path):
    """Were the rates off by just over 1 %, the agreement check fails."""
    out = _agreement(load_spec(str(FLEET)), tmp_path, _report_total() * 1.0102, 0.01)
    assert out.returncode != 0
