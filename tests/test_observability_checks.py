"""Alert durations and thresholds are checked by `validate` (exit 1 naming the field), not first by `synth`.

Durations follow Prometheus' grammar (prometheus/common model.ParseDuration), are more than zero and at most 7d;
thresholds are finite and in range; numbers reach PromQL exactly.
"""

from __future__ import annotations

import math

import pytest
import yaml
from click.testing import CliRunner

from gpu_platform.cli import main
from gpu_platform.errors import Severity
from gpu_platform.load import parse_spec
from gpu_platform.observability.alerts import alert_rules
from gpu_platform.observability.checks import check_observability, duration_seconds, exact_number
from gpu_platform.observability.rules import rule_groups
from gpu_platform.spec import PlatformSpec
from helpers.promtool import promtool_path, run


def _validate(tmp_path, data) -> tuple[int, str]:
    path = tmp_path / "spec.yaml"
    path.write_text(yaml.safe_dump(data))
    res = CliRunner().invoke(main, ["validate", str(path)])
    return res.exit_code, res.output


def _findings(dev_data, **thresholds):
    dev_data["monitoring"]["thresholds"] = thresholds
    spec = PlatformSpec.model_validate(dev_data)  # structure only: the checks under test are the cross-field ones
    return [(f.path, f.severity, f.message) for f in check_observability(spec)]


@pytest.mark.parametrize(
    ("field", "value", "words"),
    [
        ("xidHardwareWindow", "1 hour", "not a Prometheus duration"),
        ("xidHardwareWindow", "30m1h", "not a Prometheus duration"),
        ("xidRemediationFor", "2h", "must be shorter than xidHardwareWindow"),
        ("xidApplicationWindow", "0s", "is zero"),
        ("xidHardwareWindow", "99999999999999999999y", "longer than 7d"),
        ("xidApplicationWindow", "1ms", "shorter than 1s"),
        ("strandedFor", "", "not a Prometheus duration"),
        ("temperatureFor", "8d", "longer than 7d"),
    ],
)
def test_validate_rejects_bad_durations_naming_the_field(tmp_path, dev_data, field, value, words):
    dev_data["monitoring"]["thresholds"] = {field: value}
    code, out = _validate(tmp_path, dev_data)
    assert code == 1, out
    assert f"monitoring.thresholds.{field}" in out and words in out


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("temperatureCelsius", math.nan),
        ("temperatureCelsius", math.inf),
        ("temperatureCelsius", -300),
        ("temperatureCelsius", 1234567),
        ("starvedQueueDepth", math.inf),
        ("starvedQueueDepth", math.nan),
        ("pendingWorkloads", 10**23),
        ("xidHardwareCodes", []),
        ("xidHardwareCodes", [79, 79]),
        ("xidHardwareCodes", [10**26]),
    ],
)
def test_validate_rejects_absurd_thresholds(tmp_path, dev_data, field, value):
    dev_data["monitoring"]["thresholds"] = {field: value}
    code, out = _validate(tmp_path, dev_data)
    assert code == 1, out
    assert f"monitoring.thresholds.{field}" in out


def test_empty_hardware_codes_would_render_a_match_everything_regex(dev_data):
    assert any(p.endswith("xidHardwareCodes") and "empty" in m for p, _, m in _findings(dev_data, xidHardwareCodes=[]))


def test_remediation_wait_under_the_eks_repair_delay_warns(dev_data):
    found = _findings(dev_data, xidRemediationFor="10m")
    assert [(p, s) for p, s, _ in found] == [("monitoring.thresholds.xidRemediationFor", "warning")]
    assert _findings(dev_data, xidRemediationFor="11m") == []


def test_remediation_wait_does_not_warn_without_eks_repair(dev_data):
    for pool in dev_data["nodePools"]:
        pool["aws"] = {"nodeRepair": False}
    assert _findings(dev_data, xidRemediationFor="5m") == []


def test_defaults_and_examples_pass(dev_data):
    assert _findings(dev_data) == []


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        ("90s", 90),
        ("1h30m", 5400),
        ("2w", 1209600),
        ("500ms", 0.5),
        ("1y", 31536000),
        ("1h 30m", None),
        ("-5m", None),
        ("5", None),
    ],
)
def test_duration_grammar(text, seconds):
    assert duration_seconds(text) == seconds


@pytest.mark.parametrize(
    ("x", "text"),
    [
        (1234567, "1234567"),
        (1234567.5, "1234567.5"),
        (0.1, "0.1"),
        (85, "85"),
        (123456.5, "123456.5"),
        (1e-7, "0.0000001"),
    ],
)
def test_numbers_are_rendered_exactly(x, text):
    assert exact_number(x) == text


def test_thresholds_reach_promql_exactly(dev_data):
    dev_data["monitoring"]["thresholds"] = {"starvedQueueDepth": 123456.5, "temperatureCelsius": 87.25}
    exprs = {r["alert"]: r["expr"] for r in alert_rules(parse_spec(dev_data))}
    assert exprs["GpuTimeSlicedPodStarved"].split(") > ")[1].startswith("123456.5 ")  # `:g` gave 123456
    assert exprs["GpuTemperatureHigh"].endswith("> 87.25")


def test_boundary_durations_pass_promtool(tmp_path, dev_data):
    """The shortest and longest durations validation accepts are durations promtool accepts."""
    promtool = promtool_path()
    dev_data["monitoring"]["thresholds"] = {
        "xidApplicationWindow": "1s",
        "xidHardwareWindow": "7d",
        "xidRemediationFor": "6d23h",
        "strandedFor": "1s",
    }
    spec = parse_spec(dev_data)
    assert [f for f in check_observability(spec) if f.severity is Severity.ERROR] == []
    (tmp_path / "rules.yaml").write_text(yaml.safe_dump({"groups": rule_groups(spec)}))
    res = run(promtool, "check", "rules", "rules.yaml", cwd=tmp_path)
    assert res.returncode == 0, res.stdout + res.stderr


def test_booleans_are_not_counts_or_xid_codes(dev_data):
    """YAML `true` is not 1: a scaler interval or an XID code given as a boolean is an error naming the field."""
    import copy

    import pytest

    from gpu_platform.errors import SpecError
    from gpu_platform.load import parse_spec

    data = copy.deepcopy(dev_data)
    data.setdefault("monitoring", {}).setdefault("thresholds", {})["xidHardwareCodes"] = [True]
    with pytest.raises(SpecError) as info:
        parse_spec(data)
    assert [f.path for f in info.value.findings] == ["monitoring.thresholds.xidHardwareCodes[0]"]
