"""Checks that need the Pulumi CLI: the engine reads the stack config exactly as `gpu-platform validate` does.

Skipped where `pulumi` is not on PATH (it cannot be installed on every machine); nothing here is simulated.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess

import pytest
from conftest import ROOT

pytestmark = [pytest.mark.pulumi_cli,
              pytest.mark.skipif(shutil.which("pulumi") is None, reason="the Pulumi CLI is not on PATH")]


def _pulumi(args: list[str], cwd, env) -> str:
    return subprocess.run(["pulumi", *args], cwd=cwd, env=env, check=True, capture_output=True, text=True,
                          timeout=120).stdout


def test_engine_reads_dev_stack_config_as_the_spec(tmp_path):
    from gpu_platform.load import parse_spec, read_spec_data

    project = tmp_path / "project"
    project.mkdir()
    for name in ("Pulumi.yaml", "Pulumi.dev.yaml"):
        shutil.copy(ROOT / name, project / name)
    env = {**os.environ, "PULUMI_BACKEND_URL": f"file://{tmp_path / 'state'}", "PULUMI_CONFIG_PASSPHRASE": "x",
           "PULUMI_SKIP_UPDATE_CHECK": "true"}
    (tmp_path / "state").mkdir()
    _pulumi(["stack", "init", "dev", "--non-interactive"], project, env)
    engine_view = json.loads(_pulumi(["config", "get", "gpu-platform:platform", "--json"], project, env))
    value = engine_view["value"] if isinstance(engine_view, dict) and "value" in engine_view else engine_view
    value = json.loads(value) if isinstance(value, str) else value
    assert value == read_spec_data(ROOT / "Pulumi.dev.yaml")
    parse_spec(value)
