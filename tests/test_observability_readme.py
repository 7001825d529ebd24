"""The observability page matches what the code renders."""

from __future__ import annotations

import re
from pathlib import Path

from gpu_platform.observability.alerts import ALERTS
from gpu_platform.observability.cost import cost_report
from gpu_platform.observability.cost_cli import markdown_report
from gpu_platform.observability.rules import RECORDED
from helpers.docs import section

SECTION = section("observability")


def test_section_starts_with_a_heading():
    assert SECTION.lstrip().startswith("# ")


def test_cost_example_is_the_dev_stack_report(dev_spec):
    rendered = [line for line in markdown_report(cost_report(dev_spec)).splitlines() if line.startswith("| ")]
    shown = [
        line
        for line in SECTION.splitlines()
        if line.startswith("| ")
        and (
            line.startswith("| gpu-")
            or line.startswith("| total")
            or line.startswith("| pool ")
            or line.startswith("| tier |")
            or any(line.startswith(f"| {t.name} | gpu-") for t in dev_spec.tiers)
        )
    ]
    assert shown == rendered


def test_every_alert_and_recording_rule_is_documented():
    for name in ALERTS:
        assert f"`{name}`" in SECTION, name
    documented = set(re.findall(r"`([a-z_:]+(?::[a-z0-9_]+)*)`", SECTION))
    assert set(RECORDED) <= documented


def _yaml_blocks() -> list[str]:
    return re.findall(r"```yaml\n(.*?)```", SECTION, flags=re.S)


def test_keda_example_renders_the_documented_scaled_object():

    import yaml

    from gpu_platform.autoscaling.keda import render_scaled_objects
    from gpu_platform.load import load_spec

    blocks = _yaml_blocks()
    scalers = next(yaml.safe_load(b) for b in blocks if b.startswith("autoscaling:"))
    shown = next(yaml.safe_load(b) for b in blocks if "kind: ScaledObject" in b)
    spec = load_spec("examples/aws-1000-a100.yaml")  # the example the README quotes
    example = yaml.safe_load(Path("examples/aws-1000-a100.yaml").read_text())
    assert example["autoscaling"] == scalers["autoscaling"]
    assert render_scaled_objects(spec) == [shown]


def test_keda_example_deployment_is_what_the_scaler_targets():

    import yaml

    from gpu_platform.load import load_spec

    spec = load_spec("examples/aws-1000-a100.yaml")
    blocks = _yaml_blocks()
    docs = next(list(yaml.safe_load_all(b)) for b in blocks if "kind: Deployment" in b)
    assert docs == list(yaml.safe_load_all(Path("examples/keda/chat-7b.yaml").read_text()))  # README = the file
    deployment = docs[0]
    scaler = next(yaml.safe_load(b) for b in blocks if b.startswith("autoscaling:"))["autoscaling"]["keda"]["scalers"][
        0
    ]
    labels = deployment["spec"]["template"]["metadata"]["labels"]
    assert (deployment["metadata"]["name"], deployment["metadata"]["namespace"]) == (
        scaler["deployment"],
        scaler["namespace"],
    )
    assert labels[f"{spec.label_domain}/gpu-tier"] == scaler["tier"]
    pool = spec.pools_by_name[next(t.pool for t in spec.tiers if t.name == scaler["tier"])]
    assert pool.sharing.mode.value == "time-slicing"


def test_measured_agreement_is_the_cost_report():
    from gpu_platform.load import load_spec

    total = cost_report(load_spec("examples/aws-1000-a100.yaml")).to_json()["totalHourlyMax"]
    assert f"${total:,.2f}/hour" in SECTION


def test_which_cost_is_which_names_the_cost_of_record():
    assert "**the GPU cost of record**" in SECTION and "MIG slices cost nothing in OpenCost" in SECTION
