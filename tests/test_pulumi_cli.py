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

pytestmark = [
    pytest.mark.pulumi_cli,
    pytest.mark.skipif(shutil.which("pulumi") is None, reason="the Pulumi CLI is not on PATH"),
]


def _pulumi(args: list[str], cwd, env) -> str:
    return subprocess.run(
        ["pulumi", *args], cwd=cwd, env=env, check=True, capture_output=True, text=True, timeout=120
    ).stdout


def test_engine_reads_dev_stack_config_as_the_spec(tmp_path):
    from gpu_platform.load import parse_spec, read_spec_data

    project = tmp_path / "project"
    project.mkdir()
    for name in ("Pulumi.yaml", "Pulumi.dev.yaml"):
        shutil.copy(ROOT / name, project / name)
    env = {
        **os.environ,
        "PULUMI_BACKEND_URL": f"file://{tmp_path / 'state'}",
        "PULUMI_CONFIG_PASSPHRASE": "x",
        "PULUMI_SKIP_UPDATE_CHECK": "true",
    }
    (tmp_path / "state").mkdir()
    _pulumi(["stack", "init", "dev", "--non-interactive"], project, env)
    engine_view = json.loads(_pulumi(["config", "get", "gpu-platform:platform", "--json"], project, env))
    value = engine_view["value"] if isinstance(engine_view, dict) and "value" in engine_view else engine_view
    value = json.loads(value) if isinstance(value, str) else value
    assert value == read_spec_data(ROOT / "Pulumi.dev.yaml")
    parse_spec(value)


def _preview_env(tmp_path) -> dict[str, str]:
    (tmp_path / "state").mkdir(exist_ok=True)
    return {
        **os.environ,
        "PULUMI_BACKEND_URL": f"file://{tmp_path / 'state'}",
        "PULUMI_CONFIG_PASSPHRASE": "x",
        "PULUMI_SKIP_UPDATE_CHECK": "true",
    }


def _copy_example(name: str, tmp_path):
    """A copy of examples/<name> whose `packages:` entry points at this repository by absolute path."""
    import yaml

    project = tmp_path / name
    shutil.copytree(ROOT / "examples" / name, project, ignore=shutil.ignore_patterns("node_modules", "sdks", "bin"))
    manifest = yaml.safe_load((project / "Pulumi.yaml").read_text())
    manifest["packages"]["gpu-platform"] = str(ROOT)
    (project / "Pulumi.yaml").write_text(yaml.safe_dump(manifest, sort_keys=False))
    return project


def _previewed_types(project, env) -> set[str]:
    _pulumi(["stack", "init", "dev", "--non-interactive"], project, env)
    _pulumi(["config", "set", "aws:region", "us-east-1"], project, env)
    out = subprocess.run(
        ["pulumi", "preview", "--json", "--non-interactive"],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=1800,
    )
    assert out.returncode == 0, out.stderr[-4000:] + out.stdout[-4000:]
    return {step["newState"]["type"] for step in json.loads(out.stdout).get("steps", []) if step.get("newState")}


def test_yaml_example_previews_through_the_component_package(tmp_path):
    """Needs the cloud the dev stack names (AWS credentials and a kubeconfig), as any preview of it does."""
    project = _copy_example("yaml-stack", tmp_path)
    types = _previewed_types(project, _preview_env(tmp_path))
    assert {
        "gpu-platform:index:GpuPlatform",
        "gpu-platform:index:EksGpuNodePool",
        "aws:eks/nodeGroup:NodeGroup",
    } <= types


@pytest.mark.skipif(shutil.which("npm") is None, reason="npm is not on PATH")
def test_ts_example_previews_through_the_generated_sdk(tmp_path):
    project = _copy_example("ts-stack", tmp_path)
    env = _preview_env(tmp_path)
    _pulumi(["package", "add", str(ROOT)], project, env)
    subprocess.run(
        ["npm", "install", "--no-audit", "--no-fund"],
        cwd=project,
        env=env,
        check=True,
        capture_output=True,
        timeout=900,
    )
    types = _previewed_types(project, env)
    assert {"gpu-platform:index:GpuPlatform", "aws:eks/nodeGroup:NodeGroup"} <= types
