"""What teams that consume the library rely on: ESC stack files, `pulumi config --json` output, infra/
requirements for `pulumi install`, and the example CI workflow."""

from __future__ import annotations

import json

import pytest
import yaml

from conftest import ROOT
from gpu_platform.errors import SpecError
from gpu_platform.load import load_spec, read_spec_data
from helpers.specs import tier


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
    lines = [
        x.strip()
        for x in (ROOT / "infra" / "requirements.txt").read_text().splitlines()
        if x.strip() and not x.startswith("#")
    ]
    assert lines == ["-e ..[aws]"]  # pip runs in infra/: the repository root with the AWS extra


def test_example_ci_workflow_runs_tests_validate_and_a_guarded_preview():
    assert "not conformance" in (ROOT / "docs" / "testing.md").read_text()  # the marker it deselects
    flow = yaml.safe_load((ROOT / "examples" / "ci" / "github-actions.yml").read_text())
    steps = {name: job["steps"] for name, job in flow["jobs"].items()}
    runs = [s["run"] for s in steps["test"] if "run" in s]
    # CI=true (set by GitHub Actions) makes the conformance tier fail without the upstream reference folder, which
    # a stack repository does not have: the workflow runs the other tiers
    assert runs == ["make lint", '.venv/bin/python -m pytest -m "not conformance"']
    preview = steps["preview"]
    assert any(s.get("run") == "gpu-platform validate Pulumi.${{ matrix.stack }}.yaml" for s in preview)
    pulumi_step = next(s for s in preview if str(s.get("uses", "")).startswith("pulumi/actions"))
    assert pulumi_step["with"]["command"] == "preview" and pulumi_step["with"]["policyPacks"] == "policies"
    order = [s.get("run") or s.get("uses") for s in preview]
    assert order.index("make policy-pack") < order.index(pulumi_step["uses"])
    for stack in flow["jobs"]["preview"]["strategy"]["matrix"]["stack"]:
        assert (ROOT / f"Pulumi.{stack}.yaml").exists()


def _config_json(data, secret=False, with_object=True):
    """What `pulumi config --json --show-secrets` prints for a stack whose spec is `data`."""
    entry = {"value": json.dumps(data), "secret": secret} | ({"objectValue": data} if with_object else {})
    return json.dumps({"aws:region": {"value": "us-east-1", "secret": False}, "gpu-platform:platform": entry})


@pytest.mark.parametrize("command", [["validate"], ["cost", "--format", "json"], ["synth", "--out", "OUT"]])
def test_commands_read_a_resolved_config_from_stdin_or_a_file(command, tmp_path):
    from click.testing import CliRunner

    from gpu_platform.cli import main

    command = [str(tmp_path / "out") if c == "OUT" else c for c in command]
    text = _config_json(_dev_spec_data())
    (tmp_path / "config.json").write_text(text)
    runner = CliRunner()
    from_file = runner.invoke(main, [*command, "--config-json", str(tmp_path / "config.json")])
    from_stdin = runner.invoke(main, [*command, "--config-json", "-"], input=text)
    from_stack = runner.invoke(main, [*command, str(ROOT / "Pulumi.dev.yaml")])
    assert from_file.exit_code == from_stdin.exit_code == from_stack.exit_code == 0, from_file.output
    if command[0] == "cost":  # the same spec, so the same figures
        assert json.loads(from_file.stdout) == json.loads(from_stdin.stdout) == json.loads(from_stack.stdout)


@pytest.mark.parametrize(
    ("text", "path", "says"),
    [
        ("{not json", "", "not valid JSON: Expecting property name"),
        ("[1, 2]", "", "holds a list; allowed: an object of config keys"),
        (
            '{"aws:region": {"value": "us-east-1", "secret": false}}',
            "gpu-platform:platform",
            "missing; this config has aws:region",
        ),
        (
            '{"gpu-platform:platform": {"secret": true}}',
            "gpu-platform:platform",
            "run `pulumi config --json --show-secrets`",
        ),
        (
            '{"gpu-platform:platform": {"value": "{oops", "secret": false}}',
            "gpu-platform:platform.value",
            "not valid JSON",
        ),
        (
            '{"gpu-platform:platform": {"value": "[]", "secret": false}}',
            "gpu-platform:platform",
            "is a list; allowed: a mapping",
        ),
        ('{"gpu-platform:platform": "cloud: aws"}', "gpu-platform:platform", "is not a `pulumi config --json` entry"),
    ],
)
def test_a_bad_config_json_names_what_is_wrong(text, path, says):
    from click.testing import CliRunner

    from gpu_platform.cli import main

    res = CliRunner().invoke(main, ["validate", "--config-json", "-"], input=text)
    assert res.exit_code == 1 and "Traceback" not in res.output
    line = next(x for x in res.stderr.splitlines() if x.startswith("error: "))
    assert line.startswith(f"error: {path}: " if path else "error: ") and says in line, res.stderr


def test_config_json_errors_of_the_spec_itself_name_their_field():
    from click.testing import CliRunner

    from gpu_platform.cli import main

    data = _dev_spec_data()
    tier(data, "train")["pool"] = "nope"
    res = CliRunner().invoke(main, ["validate", "--config-json", "-"], input=_config_json(data))
    assert res.exit_code == 1 and "tiers[0].pool: 'nope' is not a pool" in res.stderr


@pytest.mark.parametrize("args", [[], ["Pulumi.dev.yaml", "--config-json", "-"]])
def test_a_spec_comes_from_one_place(args):
    from click.testing import CliRunner

    from gpu_platform.cli import main

    res = CliRunner().invoke(main, ["validate", *args], input="{}")
    assert res.exit_code == 2 and "--config-json" in res.stderr


def test_an_esc_environment_is_a_note_that_its_values_are_not_seen(tmp_path):
    from click.testing import CliRunner

    from gpu_platform.cli import main

    path = tmp_path / "Pulumi.dev.yaml"
    path.write_text("environment:\n  - gpu/dev\n" + (ROOT / "Pulumi.dev.yaml").read_text())
    res = CliRunner().invoke(main, ["validate", str(path)])
    assert res.exit_code == 0
    assert "info: environment: the Pulumi ESC environments ['gpu/dev'] are not resolved offline" in res.stderr
    assert "--config-json -" in res.stderr


def test_every_chart_keeps_the_mechanism_that_upgrades_its_crds(dev_spec, reference):
    """Helm never upgrades a chart's crds/: kube-prometheus-stack's upgrade job is turned on, the GPU Operator's
    upgradeCRD hook (on upstream) is not turned off, KEDA keeps installing its CRDs as templates."""
    from gpu_platform.synth import render_all

    releases = {a.name: a.documents[0] for a in render_all(dev_spec) if a.kind == "helm"}
    values = {name: doc["values"] for name, doc in releases.items()}
    assert values["kube-prometheus-stack"]["crds"]["upgradeJob"]["enabled"] is True
    upstream = yaml.safe_load(reference("upstream", "gpu-operator-values-v26.7.0.yaml").read_text())
    assert upstream["operator"]["upgradeCRD"] is True
    assert values["gpu-operator"].get("operator", {}).get("upgradeCRD", True) is True
    keda = yaml.safe_load(reference("upstream", "keda-values-2.20.2.yaml").read_text())
    assert keda["crds"]["install"] is True and values["keda"].get("crds", {}).get("install", True) is True


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "[" * 100_000 + "]" * 100_000,
            "not valid JSON: nested deeper than Python can parse (about 1,000 levels of JSON "
            "nesting); allowed: the output of `pulumi config --json`",
        ),
        (
            '{"a": ' + "9" * 5000 + "}",
            "not valid JSON: an integer of 5,000 digits (999999999999...) is too large for a "
            "number; allowed: the output of `pulumi config --json`",
        ),
    ],
)
def test_hostile_config_json_is_a_clear_error(text, message):
    from click.testing import CliRunner

    from gpu_platform.cli import main

    result = CliRunner().invoke(main, ["validate", "--config-json", "-"], input=text)
    assert result.exit_code == 1 and message in result.output
    assert "Traceback" not in result.output and "set_int_max_str_digits" not in result.output
