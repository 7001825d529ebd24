"""What teams that consume the library rely on: ESC stack files, `pulumi config --json` output, infra/
requirements for `pulumi install`, and the example CI workflow."""

from __future__ import annotations

import json

import pytest
import yaml
from conftest import ROOT
from gpu_platform.errors import SpecError
from gpu_platform.load import load_spec, read_spec_data


def _dev_spec_data():
    return yaml.safe_load((ROOT / "Pulumi.dev.yaml").read_text())["config"]["gpu-platform:platform"]


def test_a_stack_file_with_an_esc_environment_validates(tmp_path):
    path = tmp_path / "Pulumi.dev.yaml"
    path.write_text("environment:\n  - gpu/dev\n" + (ROOT / "Pulumi.dev.yaml").read_text())
    assert load_spec(path).cluster_name == "ml-dev"


def test_a_spec_only_in_esc_gets_a_clear_way_out(tmp_path):
    path = tmp_path / "Pulumi.prod.yaml"
    path.write_text("environment:\n  - gpu/prod\nconfig:\n  aws:region: us-east-1\n")
    with pytest.raises(SpecError) as info:
        read_spec_data(path)
    [finding] = info.value.findings
    assert finding.path == "environment" and "pulumi config --json" in finding.message


@pytest.mark.parametrize("with_object", [True, False])
def test_pulumi_config_json_output_is_a_spec_file(tmp_path, with_object):
    data = _dev_spec_data()
    entry = {"value": json.dumps(data), "secret": False} | ({"objectValue": data} if with_object else {})
    path = tmp_path / "config.json"
    path.write_text(json.dumps({"aws:region": {"value": "us-east-1", "secret": False}, "gpu-platform:platform": entry}))
    assert load_spec(path).cluster_name == "ml-dev"


def test_infra_has_requirements_for_pulumi_install():
    lines = [x.strip() for x in (ROOT / "infra" / "requirements.txt").read_text().splitlines()
             if x.strip() and not x.startswith("#")]
    assert lines == ["-e ..[aws]"]  # pip runs in infra/: the repository root with the AWS extra


def test_example_ci_workflow_runs_tests_validate_and_a_guarded_preview():
    flow = yaml.safe_load((ROOT / "examples" / "ci" / "github-actions.yml").read_text())
    steps = {name: job["steps"] for name, job in flow["jobs"].items()}
    assert any(s.get("run") == "make test" for s in steps["test"])
    preview = steps["preview"]
    assert any("gpu-platform validate Pulumi.${{ matrix.stack }}.yaml" == s.get("run") for s in preview)
    pulumi_step = next(s for s in preview if str(s.get("uses", "")).startswith("pulumi/actions"))
    assert pulumi_step["with"]["command"] == "preview" and pulumi_step["with"]["policyPacks"] == "policies"
    order = [s.get("run") or s.get("uses") for s in preview]
    assert order.index("make policy-pack") < order.index(pulumi_step["uses"])
    for stack in flow["jobs"]["preview"]["strategy"]["matrix"]["stack"]:
        assert (ROOT / f"Pulumi.{stack}.yaml").exists()
