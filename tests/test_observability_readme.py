"""The README's observability section matches what the code renders."""

from __future__ import annotations

import re
from pathlib import Path

from gpu_platform.observability.alerts import ALERTS
from gpu_platform.observability.cost import cost_report
from gpu_platform.observability.cost_cli import markdown_report
from gpu_platform.observability.rules import RECORDED

README = (Path(__file__).resolve().parents[1] / "README.md").read_text()
SECTION = README.split("<!-- section:observability -->", 1)[1].split("<!-- /section:observability -->", 1)[0]


def test_section_starts_with_a_heading():
    assert SECTION.lstrip().startswith("## ")


def test_cost_example_is_the_dev_stack_report(dev_spec):
    rendered = [line for line in markdown_report(cost_report(dev_spec)).splitlines() if line.startswith("| ")]
    shown = [line for line in SECTION.splitlines() if line.startswith("| ") and
             (line.startswith("| gpu-") or line.startswith("| total") or line.startswith("| pool ")
              or line.startswith("| tier |") or any(line.startswith(f"| {t.name} | gpu-") for t in dev_spec.tiers))]
    assert shown == rendered


def test_every_alert_and_recording_rule_is_documented():
    for name in ALERTS:
        assert f"`{name}`" in SECTION, name
    documented = set(re.findall(r"`([a-z_:]+(?::[a-z0-9_]+)*)`", SECTION))
    assert set(RECORDED) <= documented
