"""promtool plumbing: write the rendered rules and generated unit tests, run `promtool test rules`."""

from __future__ import annotations

import copy
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from gpu_platform.observability.rules import rule_groups

PROMTOOL = shutil.which("promtool")


def promtool_path() -> str:
    """Path of promtool; skip outside CI when absent, fail in CI."""
    if PROMTOOL is None:
        if os.environ.get("CI") == "true":
            pytest.fail("promtool missing in CI (Debian package `prometheus`)")
        pytest.skip("promtool not installed (apt-get install prometheus)")
    return PROMTOOL


def alert_case(
    name: str, series: list, fire_at: int, labels: list[dict], quiet_at: int | None = None, clear_at: int | None = None
) -> dict:
    """A promtool group: `name` fires with `labels` at `fire_at` minutes, not at `quiet_at` nor `clear_at`."""
    checks = [{"eval_time": f"{fire_at}m", "alertname": name, "exp_alerts": [{"exp_labels": lb} for lb in labels]}]
    if quiet_at is not None:  # before `for` has elapsed nothing fires
        checks.insert(0, {"eval_time": f"{quiet_at}m", "alertname": name, "exp_alerts": []})
    if clear_at is not None:  # and after the condition has gone it clears
        checks.append({"eval_time": f"{clear_at}m", "alertname": name, "exp_alerts": []})
    return {"interval": "1m", "input_series": series, "alert_rule_test": checks}


def write_files(spec: Any, tmp_path: Path, tests: list[dict]) -> tuple[Path, Path]:
    """rules.yaml (full), rules-test.yaml (annotations stripped: promtool compares them) and tests.yaml."""
    groups = rule_groups(spec)
    full = tmp_path / "rules.yaml"
    full.write_text(yaml.safe_dump({"groups": groups}, sort_keys=False))
    bare = copy.deepcopy(groups)
    for g in bare:
        for r in g["rules"]:
            r.pop("annotations", None)
    (tmp_path / "rules-test.yaml").write_text(yaml.safe_dump({"groups": bare}, sort_keys=False))
    for t in tests:
        for check in t.get("alert_rule_test", []):
            for a in check["exp_alerts"]:
                a["exp_labels"].pop("alertname", None)
    doc = {"rule_files": ["rules-test.yaml"], "evaluation_interval": "1m", "tests": tests}
    path = tmp_path / "tests.yaml"
    path.write_text(yaml.safe_dump(doc, sort_keys=False, width=200))
    return full, path


def run(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    """Run promtool (or anything) and capture its output."""
    return subprocess.run(args, cwd=cwd, capture_output=True, text=True, timeout=300)
