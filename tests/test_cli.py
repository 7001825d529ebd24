"""The CLI contract: exit codes, errors on stderr naming field paths, synth's directories and summary."""

from __future__ import annotations

import json

import pytest
import yaml
from click.testing import CliRunner

from conftest import DEV_STACK, ROOT
from gpu_platform.cli import main
from helpers.specs import pool, tier


@pytest.fixture
def runner():
    return CliRunner()


def test_validate_dev_stack_exits_zero(runner):
    res = runner.invoke(main, ["validate", str(DEV_STACK)])
    assert res.exit_code == 0, res.output
    assert "valid" in res.stdout and "4 pools, 5 tiers, 2 teams, up to 240 GPUs" in res.stdout


def test_validate_plain_spec_file(runner, tmp_path, dev_data):
    path = tmp_path / "spec.yaml"
    path.write_text(yaml.safe_dump(dev_data))
    assert runner.invoke(main, ["validate", str(path)]).exit_code == 0


def test_a_spec_given_as_json_text_is_read_as_pulumi_config_reads_it(runner, tmp_path, dev_data):
    # the program reads the entry with Config.require_object, which parses a string value as JSON
    stack = tmp_path / "Pulumi.js.yaml"
    stack.write_text(yaml.safe_dump({"config": {"gpu-platform:platform": json.dumps(dev_data)}}))
    res = runner.invoke(main, ["validate", str(stack)])
    assert res.exit_code == 0, res.output
    assert "4 pools, 5 tiers, 2 teams, up to 240 GPUs" in res.stdout
    stack.write_text(yaml.safe_dump({"config": {"gpu-platform:platform": '{"cloud": "aws",}'}}))
    res = runner.invoke(main, ["validate", str(stack)])
    assert (
        res.exit_code == 1 and "gpu-platform:platform: a string starting with '{' that is not valid JSON" in res.output
    )
    stack.write_text(yaml.safe_dump({"config": {"gpu-platform:platform": '{"cloud": "aws", "cloud": "gcp"}'}}))
    assert "duplicate key 'cloud'" in runner.invoke(main, ["validate", str(stack)]).output
    stack.write_text(yaml.safe_dump({"config": {"gpu-platform:platform": "aws"}}))
    assert (
        "gpu-platform:platform: is a string ('aws'); allowed: a mapping"
        in runner.invoke(main, ["validate", str(stack)]).output
    )
    stack.write_text("config:\n  gpu-platform:platform:\n")
    assert (
        "gpu-platform:platform: is empty (null); allowed: a mapping"
        in runner.invoke(main, ["validate", str(stack)]).output
    )


def test_an_encrypted_secret_in_the_stack_file_is_one_clear_error(runner, tmp_path, dev_data):
    stack = tmp_path / "Pulumi.s.yaml"
    stack.write_text(yaml.safe_dump({"config": {"gpu-platform:platform": {"secure": "AAABAJ5x"}}}))
    res = runner.invoke(main, ["validate", str(stack)])
    assert res.exit_code == 1 and "1 error(s)" in res.output, res.output
    assert "gpu-platform:platform: an encrypted Pulumi secret" in res.output and "--show-secrets" in res.output
    dev_data["clusterName"] = {"secure": "AAABAJ5x"}
    dev_data["nodePools"][1]["aws"] = {"subnetIds": ["subnet-a", {"secure": "AAABAJ5y"}]}
    stack.write_text(yaml.safe_dump({"config": {"gpu-platform:platform": dev_data}}))
    res = runner.invoke(main, ["validate", str(stack)])
    assert res.exit_code == 1 and "2 error(s)" in res.output, res.output
    assert "clusterName: an encrypted Pulumi secret" in res.output
    assert "nodePools[1].aws.subnetIds[1]: an encrypted Pulumi secret" in res.output


@pytest.mark.parametrize(
    ("command", "file", "words"),
    [
        ("validate", "Pulumi.yaml", "this is a Pulumi project file (name, runtime); allowed: a stack file"),
        (
            "cost",
            "examples/demand-small.yaml",
            "this is a planner demand (tiers with gpus, mig or seats, no nodePools)",
        ),
        ("plan", "Pulumi.dev.yaml", "this is a platform spec or stack file (nodePools or config:)"),
        ("plan", "examples/gke-a2.yaml", "this is a platform spec or stack file"),
        ("plan", "examples/workloads/inference-job.yaml", "this is a Kubernetes object ('Job'); allowed: a demand"),
    ],
)
def test_the_wrong_kind_of_file_is_one_error_that_names_it(runner, command, file, words):
    res = runner.invoke(main, [command, str(ROOT / file)])
    assert res.exit_code == 1 and "1 error(s)" in res.output and words in res.output, res.output


def test_a_value_key_in_a_stack_file_is_not_unwrapped_as_pulumi_config_json_output(runner, tmp_path, dev_data):
    # `pulumi config --json` prints {"value", "objectValue", "secret"} per key; in a stack file the program reads
    # such a mapping as the spec itself, which has no key `value`
    stack = tmp_path / "Pulumi.v.yaml"
    stack.write_text(yaml.safe_dump({"config": {"gpu-platform:platform": {"value": dev_data}}}))
    res = runner.invoke(main, ["validate", str(stack)])
    assert res.exit_code == 1 and "value: unknown key" in res.output, res.output
    dump = tmp_path / "config.json"
    dump.write_text(json.dumps({"gpu-platform:platform": {"value": json.dumps(dev_data), "secret": False}}))
    assert runner.invoke(main, ["validate", str(dump)]).exit_code == 0


def test_a_new_stack_file_without_config_says_so(runner, tmp_path):
    stack = tmp_path / "Pulumi.new.yaml"
    stack.write_text("encryptionsalt: v1:abc\n")
    res = runner.invoke(main, ["validate", str(stack)])
    assert res.exit_code == 1 and "1 error(s)" in res.output
    assert "this is a Pulumi stack file without config (only encryptionsalt)" in res.output


def test_validate_invalid_prints_every_error_on_stderr(runner, tmp_path, dev_data):
    pool(dev_data, "gpu-infer")["sharing"]["migLayout"] = {"1g.10gb": 8}
    tier(dev_data, "train")["pool"] = "nope"
    path = tmp_path / "Pulumi.bad.yaml"
    path.write_text(yaml.safe_dump({"config": {"gpu-platform:platform": dev_data}}))
    res = runner.invoke(main, ["validate", str(path)])
    assert res.exit_code == 1
    assert "nodePools[1].sharing.migLayout" in res.stderr
    assert "tiers[0].pool: 'nope' is not a pool" in res.stderr
    assert "Traceback" not in res.output and res.stdout == ""


@pytest.mark.parametrize(
    ("content", "words"),
    [
        (b"{not yaml", "not valid YAML: line 2, column 1: while parsing a flow mapping"),
        (b"- a list", "holds a list (['a list']); allowed: a mapping"),
        (b"", "holds an empty file; allowed: a mapping"),
        (b"42", "holds a number (42); allowed: a mapping"),
        (b"config: {other:key: 1}", "no 'gpu-platform:platform' key"),
        (b"config: {gpu-platform:platform: [1]}", "gpu-platform:platform: is a list ([1]); allowed: a mapping"),
        (b"cloud: aws\nclusterName: \xff\xfe", "is not UTF-8 text: byte b'\\xff' at offset 24"),
    ],
)
def test_validate_unreadable_files_fail_cleanly(runner, tmp_path, content, words):
    path = tmp_path / "x.yaml"
    path.write_bytes(content)
    res = runner.invoke(main, ["validate", str(path)])
    assert res.exit_code == 1, res.output
    assert words in res.stderr
    assert isinstance(res.exception, SystemExit)  # a clean exit, not a traceback


def test_validate_missing_file(runner, tmp_path):
    res = runner.invoke(main, ["validate", str(tmp_path / "absent.yaml")])
    assert res.exit_code == 1 and "cannot read" in res.stderr


def test_synth_into_an_unwritable_directory_fails_cleanly(runner, tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    res = runner.invoke(main, ["synth", str(DEV_STACK), "--out", str(blocker / "out")])
    assert res.exit_code == 1 and isinstance(res.exception, SystemExit)
    assert f"--out {blocker / 'out'}: cannot write" in res.stderr


def test_usage_error_exits_two(runner):
    assert runner.invoke(main, ["synth", str(DEV_STACK)]).exit_code == 2


def test_synth_writes_three_directories_and_summary(runner, tmp_path):
    out = tmp_path / "out"
    res = runner.invoke(main, ["synth", str(DEV_STACK), "--out", str(out)])
    assert res.exit_code == 0, res.output
    assert {p.name for p in out.iterdir()} >= {"kubernetes", "helm", "nodepools"}
    assert sorted(p.stem for p in (out / "nodepools").glob("*.yaml")) == ["gpu-ci", "gpu-dev", "gpu-infer", "gpu-train"]
    for line in ("gpu-infer", "mig-3g.40gb 8-64", "gpu 0-128", "nodepools/"):
        assert line in res.stdout
    infer = list(yaml.safe_load_all((out / "nodepools" / "gpu-infer.yaml").read_text()))[0]
    assert infer["capacity"]["units"]["nvidia.com/mig-1g.10gb"] == {"min": 16, "max": 128}


def test_synth_replaces_its_own_stale_output(runner, tmp_path):
    out = tmp_path / "out"
    assert runner.invoke(main, ["synth", str(DEV_STACK), "--out", str(out)]).exit_code == 0
    manifest = json.loads((out / ".gpu-platform-synth.json").read_text())
    (out / "nodepools" / "old-pool.yaml").write_text("stale")  # as if an earlier spec had that pool
    manifest["files"].append("nodepools/old-pool.yaml")
    (out / ".gpu-platform-synth.json").write_text(json.dumps(manifest))
    assert runner.invoke(main, ["synth", str(DEV_STACK), "--out", str(out)]).exit_code == 0
    assert not (out / "nodepools" / "old-pool.yaml").exists()


def test_synth_keeps_files_it_did_not_write_unless_forced(runner, tmp_path):
    out = tmp_path / "out"
    (out / "kubernetes").mkdir(parents=True)
    (out / "kubernetes" / "my-app.yaml").write_text("mine")
    result = runner.invoke(main, ["synth", str(DEV_STACK), "--out", str(out)])
    assert result.exit_code == 1 and "kubernetes/my-app.yaml" in result.stderr and "--force" in result.stderr
    assert (out / "kubernetes" / "my-app.yaml").read_text() == "mine"
    assert runner.invoke(main, ["synth", str(DEV_STACK), "--out", str(out), "--force"]).exit_code == 0
    assert not (out / "kubernetes" / "my-app.yaml").exists() and (out / "nodepools").is_dir()


@pytest.mark.parametrize("example", ["aws-1000-a100.yaml", "gke-a2.yaml"])
def test_examples_validate_via_cli(runner, example):
    assert runner.invoke(main, ["validate", str(ROOT / "examples" / example)]).exit_code == 0


def test_synth_warns_when_a_mig_layout_changes_since_the_last_synth(runner, tmp_path, dev_data):
    out = tmp_path / "out"
    path = tmp_path / "spec.yaml"
    path.write_text(yaml.safe_dump(dev_data))
    first = runner.invoke(main, ["synth", str(path), "--out", str(out)])
    assert first.exit_code == 0 and "changes from" not in first.stderr
    pool(dev_data, "gpu-infer")["sharing"]["migLayout"] = {"3g.40gb": 1, "2g.20gb": 2}
    pool(dev_data, "gpu-dev")["sharing"]["replicas"] = 8  # not a MIG change
    path.write_text(yaml.safe_dump(dev_data))
    second = runner.invoke(main, ["synth", str(path), "--out", str(out)])
    assert second.exit_code == 0
    text = " ".join(second.stderr.split())  # warnings go to stderr
    assert (
        "warning: nodePools[1].sharing: MIG layout of pool 'gpu-infer' changes from 'gpu-infer-3g40-2g20-1g10x2' "
        "to 'gpu-infer-3g40-2g20x2'"
    ) in text
    assert text.count("changes from") == 1
    third = runner.invoke(main, ["synth", str(path), "--out", str(out)])
    assert "changes from" not in third.stderr


@pytest.mark.parametrize("command", [["synth", "--out", "OUT"], ["validate"], ["cost"]])
def test_notes_and_warnings_go_to_stderr_for_every_command(runner, tmp_path, command):
    """Stdout holds only tables and reports; every note and warning is on stderr, for synth, validate and cost."""
    args = [a.replace("OUT", str(tmp_path / "out")) for a in command]
    res = runner.invoke(main, [args[0], str(DEV_STACK), *args[1:]])
    assert res.exit_code == 0, res.output
    assert "warning:" in res.stderr  # the dev stack always carries warnings (EFA on by default, KEDA)
    for stream in ("note:", "warning:", "info:"):
        assert stream not in res.stdout


def test_unknown_instance_type_suggests_the_closest_names(runner, tmp_path, dev_data):
    pool(dev_data, "gpu-train")["instanceType"] = "p4de.24xlarg"
    pool(dev_data, "gpu-dev")["instanceType"] = "p5.48xl"
    path = tmp_path / "spec.yaml"
    path.write_text(yaml.safe_dump(dev_data))
    res = runner.invoke(main, ["validate", str(path)])
    assert res.exit_code == 1
    first = next(line for line in res.stderr.splitlines() if "nodePools[0].instanceType" in line)
    assert "did you mean 'p4de.24xlarge'?" in first
    allowed = first.split("allowed: ", 1)[1]
    assert allowed.startswith("p4de.24xlarge")  # the closest names come first, before the list is cut
    third = next(line for line in res.stderr.splitlines() if "nodePools[2].instanceType" in line)
    assert "did you mean 'p5.48xlarge'?" in third


def test_the_provider_module_run_by_hand_in_a_terminal_points_at_the_cli():
    # With no engine address and a terminal on stdin it used to start a provider that waited silently.
    import os
    import subprocess
    import sys

    primary, secondary = os.openpty()
    try:
        res = subprocess.run(
            [sys.executable, "-m", "gpu_platform"], stdin=secondary, capture_output=True, text=True, timeout=60
        )
    finally:
        os.close(primary)
        os.close(secondary)
    assert res.returncode == 2, res.stderr
    assert "the Pulumi component provider" in res.stderr and "gpu-platform --help" in res.stderr


def test_names_and_paths_print_as_text_not_markup(runner, tmp_path, dev_data):
    # Rich reads `[...]` as markup: `[/]` with nothing open raised, and `[bold]` vanished from a name.
    folder = tmp_path / "[bold]" / "["  # files "]x.yaml" here have paths ending "[bold]/[/]x.yaml"
    folder.mkdir(parents=True)
    spec = folder / "]x.yaml"
    spec.write_text(yaml.safe_dump(dev_data))
    res = runner.invoke(main, ["validate", str(spec)])
    assert res.exit_code == 0 and res.exception is None, res.output
    assert "[bold]/[/]x.yaml" in " ".join(res.stdout.split())
    bad = folder / "]bad.yaml"
    bad.write_text(yaml.safe_dump({**dev_data, "clusterName": "a b"}))
    res = runner.invoke(main, ["validate", str(bad)])
    assert res.exit_code == 1 and isinstance(res.exception, SystemExit), res.output
    assert "[bold]/[/]bad.yaml" in res.stderr
    res = runner.invoke(main, ["synth", str(spec), "--out", str(folder / "]out")])
    assert res.exit_code == 0 and res.exception is None, res.output
    export = json.loads((ROOT / "tests" / "fixtures" / "audit" / "stack-export-unclassified.json").read_text())
    text = json.dumps(export).replace("adhoc-gpu", "adhoc[b]gpu")
    path = tmp_path / "export.json"
    path.write_text(text)
    res = runner.invoke(main, ["audit", str(path)])
    assert res.exit_code == 1 and isinstance(res.exception, SystemExit), res.output
    assert "GPU node pool 'adhoc[b]gpu'" in res.stdout


def test_a_table_wider_than_the_terminal_is_printed_whole():
    import io

    from rich.console import Console
    from rich.table import Table

    from gpu_platform.console import print_table

    table = Table(title="pools")
    for column in ("pool", "instance", "resource", "$/month max"):
        table.add_column(column)
    table.add_row("mig-p4de-24xlarge-3g40-2g20x2", "p4de.24xlarge", "nvidia.com/mig-3g.40gb", "320,581.54")
    narrow = io.StringIO()
    Console(file=narrow, width=40).print(table)
    assert "…" in narrow.getvalue()  # what Rich does on its own
    whole = io.StringIO()
    print_table(table, Console(file=whole, width=40))
    text = whole.getvalue()
    assert "…" not in text
    for cell in ("mig-p4de-24xlarge-3g40-2g20x2", "p4de.24xlarge", "nvidia.com/mig-3g.40gb", "320,581.54"):
        assert cell in text
    small = io.StringIO()
    print_table(table, Console(file=small, width=200))  # wide enough: printed as it is
    assert small.getvalue().splitlines()[1].startswith("┏")


def test_cost_tables_keep_every_figure_and_name(runner):
    res = runner.invoke(main, ["cost", str(DEV_STACK)])
    assert res.exit_code == 0 and "…" not in res.stdout
    assert "nvidia.com/mig-3g.40gb" in res.stdout and "577,046.79" in res.stdout


@pytest.mark.parametrize(
    ("config", "words"),
    [
        (
            {"my-gpu:platform": {"cloud": "aws"}, "aws:region": "us-east-1"},
            "if 'my-gpu:platform' holds the spec, rename",
        ),
        ({"gpu-platform:platfrom": {"cloud": "aws"}}, "if 'gpu-platform:platfrom' holds the spec, rename it to"),
        ({}, "(it has no keys); put the spec under it"),
    ],
)
def test_a_stack_config_without_the_spec_key_names_the_keys_it_has(runner, tmp_path, config, words):
    stack = tmp_path / "Pulumi.x.yaml"
    stack.write_text(yaml.safe_dump({"config": config}))
    res = runner.invoke(main, ["validate", str(stack)])
    assert res.exit_code == 1 and words in res.output, res.output


def test_a_kubernetes_manifest_given_as_a_spec_points_at_explain(runner):
    res = runner.invoke(main, ["validate", str(ROOT / "examples" / "workloads" / "inference-job.yaml")])
    assert res.exit_code == 1 and "1 error(s)" in res.output
    assert "this is a Kubernetes object ('Job')" in res.output and "gpu-platform explain WORKLOAD" in res.output


def test_config_json_with_a_key_given_twice_is_refused(runner, tmp_path):
    dump = tmp_path / "config.json"
    dump.write_text('{"gpu-platform:platform": {"value": "{}", "value": "{\\"cloud\\": \\"aws\\"}", "secret": false}}')
    res = runner.invoke(main, ["validate", "--config-json", str(dump)])
    assert res.exit_code == 1 and "duplicate key 'value'" in res.output, res.output


def test_a_non_string_secure_value_is_still_a_secret(runner, tmp_path, dev_data):
    dev_data["clusterName"] = {"secure": 123}
    stack = tmp_path / "Pulumi.s.yaml"
    stack.write_text(yaml.safe_dump({"config": {"gpu-platform:platform": dev_data}}))
    res = runner.invoke(main, ["validate", str(stack)])
    assert res.exit_code == 1 and "clusterName: an encrypted Pulumi secret" in res.output, res.output


def test_plan_names_what_a_file_holds_when_it_is_no_demand(runner, tmp_path):
    empty = tmp_path / "empty.yaml"
    empty.write_text("")
    res = runner.invoke(main, ["plan", str(empty)])
    assert res.exit_code == 1 and f"{empty} holds an empty file; allowed: a demand" in " ".join(res.output.split())
    project = runner.invoke(main, ["plan", str(ROOT / "Pulumi.yaml")])
    assert project.exit_code == 1 and "1 error(s)" in project.output
    assert "this is a Pulumi project file (name, runtime); allowed: a demand" in project.output


def test_a_long_table_is_printed_whole_from_the_rows_that_decide_its_width():
    import io

    from rich.console import Console
    from rich.table import Table

    from gpu_platform.console import print_table

    table = Table(title="pools")
    for column in ("pool", "detail"):
        table.add_column(column)
    for i in range(300):
        table.add_row(f"pool-{i}", "short words here")
    table.add_row("mig-p4de-24xlarge-3g40-2g20x2-the-longest-name", "a-single-unbreakable-word-of-forty-chars")
    text = io.StringIO()
    print_table(table, Console(file=text, width=50))
    assert "…" not in text.getvalue()
    assert "mig-p4de-24xlarge-3g40-2g20x2-the-longest-name" in text.getvalue()
    assert "a-single-unbreakable-word-of-forty-chars" in text.getvalue()


def test_a_file_argument_of_dash_is_standard_input():
    # plan, validate, explain and audit read `-` as standard input, within the same size bound as a file.
    runner = CliRunner()
    demand = (ROOT / "examples" / "demand-small.yaml").read_text()
    from_file = runner.invoke(main, ["plan", str(ROOT / "examples" / "demand-small.yaml"), "--format", "yaml"])
    from_stdin = runner.invoke(main, ["plan", "-", "--format", "yaml"], input=demand)
    assert from_stdin.exit_code == 0 and from_stdin.stdout == from_file.stdout
    valid = runner.invoke(main, ["validate", "-"], input=DEV_STACK.read_text())
    assert valid.exit_code == 0 and "valid: standard input: 4 pools" in valid.stdout
    workload = (ROOT / "examples" / "workloads" / "inference-job.yaml").read_text()
    explained = runner.invoke(
        main, ["explain", "-", "--spec", str(DEV_STACK), "--namespace", "prod-inference"], input=workload
    )
    assert explained.exit_code == 0 and "verdict: runs on gpu-infer" in explained.stdout
    export = (ROOT / "tests" / "fixtures" / "audit" / "stack-export-unclassified.json").read_text()
    audited = runner.invoke(main, ["audit", "-"], input=export)
    from_path = runner.invoke(
        main, ["audit", str(ROOT / "tests" / "fixtures" / "audit" / "stack-export-unclassified.json")]
    )
    assert audited.exit_code == from_path.exit_code == 1
    assert audited.stdout.replace("standard input: ", "", 1) == from_path.stdout.split(": ", 1)[1]
    too_big = runner.invoke(main, ["plan", "-"], input="#" * (4 * 1024 * 1024 + 1))
    assert too_big.exit_code == 1 and "demand on standard input is larger than 4 MiB" in too_big.output
    not_text = runner.invoke(main, ["plan", "-"], input=b"\xff\xfe")
    assert not_text.exit_code == 1 and "demand on standard input is not UTF-8 text" in not_text.output


def test_standard_input_closed_or_asked_for_twice_is_a_clear_error(monkeypatch):
    runner = CliRunner()
    both = runner.invoke(main, ["explain", "-", "--spec", "-"], input=DEV_STACK.read_text())
    assert both.exit_code == 2 and "WORKLOAD and --spec cannot both be -" in both.output
    both = runner.invoke(main, ["audit", "-", "--spec", "-"], input=DEV_STACK.read_text())
    assert both.exit_code == 2 and "FILE and --spec (or --config) cannot both be -" in both.output
    empty = runner.invoke(main, ["validate", "-"], input="")
    assert empty.exit_code == 1 and "standard input holds an empty file" in empty.output
    from types import SimpleNamespace

    from gpu_platform import inputs

    for args, what in (
        (["validate", "-"], "spec"),
        (["plan", "-"], "demand"),
        (["explain", "-", "--spec", str(DEV_STACK)], "workload"),
        (["audit", "-"], "document"),
        (["validate", "--config-json", "-"], "config"),
    ):
        # `cmd <&-`: the interpreter starts with sys.stdin None (the runner sets its own, so the reader's is set)
        monkeypatch.setattr(inputs, "sys", SimpleNamespace(stdin=None))
        res = runner.invoke(main, args)
        monkeypatch.undo()
        assert res.exit_code in (1, 2) and f"cannot read {what} on standard input: it is closed" in res.output, res


def test_a_spec_or_pack_config_on_standard_input_is_named_so():
    runner = CliRunner()
    workload = str(ROOT / "examples" / "workloads" / "inference-job.yaml")
    res = runner.invoke(main, ["explain", workload, "--spec", "-"], input="")
    assert res.exit_code == 2 and "invalid spec in standard input" in res.output
    export = str(ROOT / "tests" / "fixtures" / "audit" / "stack-export-unclassified.json")
    res = runner.invoke(main, ["audit", export, "--config", "-"], input="[1]")
    assert res.exit_code == 1 and "standard input: policy config is list" in res.output
