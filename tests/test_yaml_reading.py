"""YAML files are read as Pulumi reads `Pulumi.<stack>.yaml` and kubectl a manifest (go-yaml v2), not as YAML 1.1.

go-yaml has no base-60 numbers, reads `1e3` as a float and leaves a date decoded into an interface as its string
(gopkg.in/yaml.v2 v2.4.0, resolve.go and decode.go); PyYAML's YAML 1.1 resolver would give 90, "1e3" and a
`datetime.date`. The values below are what go-yaml gives for each scalar.
"""

from __future__ import annotations

import math

import pytest
import yaml
from click.testing import CliRunner

from conftest import DEV_STACK
from gpu_platform.cli import main
from gpu_platform.inputs import load_yaml


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("1:30", "1:30"),  # YAML 1.1: 90
        ("-1:30:00", "-1:30:00"),
        ("190:20:30.15", "190:20:30.15"),  # YAML 1.1: 685230.15
        ("2024-01-01", "2024-01-01"),  # YAML 1.1: datetime.date
        ("2001-12-14t21:59:43.10-05:00", "2001-12-14t21:59:43.10-05:00"),
        ("1e3", 1000.0),  # YAML 1.1: the string "1e3"
        ("1.5e3", 1500.0),
        ("-2E+2", -200.0),
        ("08", 8.0),  # not octal: go-yaml's float pattern takes it
        ("010", 8),
        ("0o17", 15),
        ("0x1F", 31),
        ("0b101", 5),
        ("1_000", 1000),
        ("1_000.5", 1000.5),
        (".5", 0.5),
        ("3.", 3.0),
        ("-.inf", -math.inf),
        ("123", 123),
        ("-7", -7),
        ("0", 0),
        ("1.33", 1.33),
        ("yes", True),
        ("off", False),
        ("~", None),
        ("'1:30'", "1:30"),
        ("1.2.3", "1.2.3"),
        ("1:3a", "1:3a"),
    ],
)
def test_a_scalar_reads_as_go_yaml_reads_it(text, value):
    got = load_yaml(f"v: {text}")["v"]
    assert got == value and type(got) is type(value), (text, got)


def test_nan_still_reads_as_a_float():
    assert math.isnan(load_yaml("v: .nan")["v"])


def test_helm_values_keep_a_time_and_a_date_as_written(tmp_path):
    # Under `pulumi up` the engine reads the stack file with go-yaml and the chart gets "1:30" and "2024-01-01";
    # synth renders offline what that deploys, not 90 and a date.
    text = DEV_STACK.read_text().replace(
        "  gpu-platform:platform:\n",
        "  gpu-platform:platform:\n    gpuOperator:\n      valuesOverrides:\n"
        "        dcgmExporter: {annotations: {window: 1:30, since: 2024-01-01, scale: 1e3}}\n",
        1,
    )
    assert text.count("gpuOperator:") == 1 + DEV_STACK.read_text().count("gpuOperator:")
    spec = tmp_path / "Pulumi.dev.yaml"
    spec.write_text(text)
    result = CliRunner().invoke(main, ["synth", str(spec), "--out", str(tmp_path / "out")])
    assert result.exit_code == 0, result.output
    values = yaml.safe_load((tmp_path / "out" / "helm" / "gpu-operator.yaml").read_text())
    annotations = values["values"]["dcgmExporter"]["annotations"]
    assert annotations == {"window": "1:30", "since": "2024-01-01", "scale": 1000.0}


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("{1: a, true: b}", "found key 1 (a number), which is not a string"),  # Python would merge 1 and true
        (
            "a:\n  b:\n    2.5: x\n",
            "found key 2.5 (a number), which is not a string; allowed: string keys (quote it: '2.5')",
        ),
        ("~: 1", "found key null, which is not a string"),
        ("on: 1", "found key true, which is not a string"),
        ("? [a]\n: b", "found key of type list, which is not a string; allowed: string keys"),
        ("x: !!binary aGVsbG8=", "the tag !!binary makes a value JSON has no place for"),
        ("x: !!set {a, b}", "the tag !!set makes a value JSON has no place for"),
        ("x: !!omap [a: 1]", "the tag !!omap"),
        ("x: !!pairs [a: 1]", "the tag !!pairs"),
    ],
)
def test_keys_are_strings_and_values_are_json(text, words):
    with pytest.raises(yaml.YAMLError) as e:
        load_yaml(text)
    assert words in str(e.value)


def test_quoted_keys_pass():
    assert load_yaml("'1': a\nk: {'true': b, 'null': c}") == {"1": "a", "k": {"true": "b", "null": "c"}}


def test_a_number_key_in_a_stack_file_is_named_with_its_line(tmp_path):
    text = DEV_STACK.read_text().replace("quotas: {train: 16, dev: 8}", "quotas: {train: 16, 1: 8}")
    assert "1: 8" in text
    stack = tmp_path / "Pulumi.k.yaml"
    stack.write_text(text)
    result = CliRunner().invoke(main, ["validate", str(stack)])
    assert result.exit_code == 1, result.output
    line = next(n for n, t in enumerate(text.splitlines(), 1) if "1: 8" in t)
    assert f"line {line}, column" in result.output and "found key 1 (a number), which is not a string" in result.output


@pytest.mark.parametrize("anchor", ["", "a: &x 1\n"])  # with an anchor the file is first read event by event
def test_a_control_character_is_named_with_its_line_and_column(anchor):
    with pytest.raises(yaml.MarkedYAMLError) as e:
        load_yaml(anchor + "b: 1\nc: ok\x00\n")
    mark = e.value.problem_mark
    assert (mark.line + 1, mark.column + 1) == (anchor.count("\n") + 2, 6)
    assert "the character #x0000 is not allowed in YAML" in str(e.value)


def test_a_control_character_in_a_stack_file_is_named_with_its_line(tmp_path):
    stack = tmp_path / "Pulumi.nul.yaml"
    stack.write_text(DEV_STACK.read_text().replace("clusterName: ml-dev", "clusterName: ml-\x00dev"))
    line = next(n for n, t in enumerate(stack.read_text().splitlines(), 1) if "\x00" in t)
    result = CliRunner().invoke(main, ["validate", str(stack)])
    assert result.exit_code == 1
    assert f"line {line}, column 21: the character #x0000 is not allowed" in result.output


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("a: !!float gpu", "'gpu' is not a !!float value"),
        ("a: !!int gpu", "'gpu' is not a !!int value"),
        ("a: !!bool gpu", "'gpu' is not a !!bool value"),
        ("a: !!int 0x_", "'0x_' is not a !!int value"),
        ("a: !!map gpu", "the tag !!map needs a mapping"),
        ("a: !!seq gpu", "the tag !!seq needs a list"),
        ("a: !!str [1]", "the tag !!str needs a single value"),
    ],
)
def test_an_explicit_tag_that_does_not_fit_its_value_is_an_error_with_its_line(text, words):
    with pytest.raises(yaml.MarkedYAMLError) as e:
        load_yaml("x: 1\n" + text)
    assert words in str(e.value) and e.value.problem_mark.line == 1


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("a: =", {"a": "="}),
        ("=: x", {"=": "x"}),
        ("a: <<", {"a": "<<"}),
        ("a: !!timestamp 2024-01-01", {"a": "2024-01-01"}),
        ("a: !!timestamp 2024-01-01T00:00:00", {"a": "2024-01-01T00:00:00"}),
        ("b: &x {c: 1}\nd: {<<: *x, e: 2}", {"b": {"c": 1}, "d": {"c": 1, "e": 2}}),  # a merge key still merges
        ("a: !!float 1.5", {"a": 1.5}),
        ("a: !!str 1", {"a": "1"}),
    ],
)
def test_scalars_go_yaml_reads_as_text_are_text(text, value):
    assert load_yaml(text) == value


@pytest.mark.parametrize(
    ("text", "line", "column"),
    [
        ('n: "\u4e2d\u4e2d\x01"\n', 1, 7),  # three UTF-8 bytes a character: the parser counts bytes
        ('x: 1\nn: "\u00e9\x01"\n', 2, 6),
        ('x: "\U0001f600"\nn: "\x01"\n', 2, 5),
    ],
)
def test_a_control_character_after_non_ascii_text_is_placed_by_characters(text, line, column):
    with pytest.raises(yaml.MarkedYAMLError) as e:
        load_yaml(text)
    mark = e.value.problem_mark
    assert (mark.line + 1, mark.column + 1) == (line, column)


def test_a_bad_tagged_value_in_a_stack_file_is_an_error_not_a_traceback(tmp_path):
    stack = tmp_path / "Pulumi.t.yaml"
    stack.write_text(DEV_STACK.read_text().replace("labelDomain: gpu.example.com", "labelDomain: !!float gpu"))
    result = CliRunner().invoke(main, ["validate", str(stack)])
    assert result.exit_code == 1, result.output
    assert "'gpu' is not a !!float value" in result.output and "Traceback" not in result.output
