"""The Pulumi YAML and TypeScript examples build the dev stack's platform through the component package: what they
write for GpuPlatform checks against the committed schema, and equals the dev stack's spec."""

from __future__ import annotations

import json
import re
import shutil
import subprocess

import jsonschema
import pytest
import yaml

from conftest import DEV_STACK, ROOT
from helpers.pulumi_schema import resource_inputs_schema
from helpers.specs import pool, tier

TOKEN = "gpu-platform:index:GpuPlatform"
YAML_STACK = ROOT / "examples" / "yaml-stack"
TS_STACK = ROOT / "examples" / "ts-stack"


@pytest.fixture(scope="module")
def package():
    return json.loads((ROOT / "schema.json").read_text())


@pytest.fixture(scope="module")
def validator(package):
    schema = resource_inputs_schema(package, TOKEN)
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def _dev_spec():
    return yaml.safe_load(DEV_STACK.read_text())["config"]["gpu-platform:platform"]


def _errors(validator, value) -> list[str]:
    return [f"{'.'.join(map(str, e.absolute_path))}: {e.message}" for e in validator.iter_errors(value)]


def _yaml_program():
    return yaml.safe_load((YAML_STACK / "Pulumi.yaml").read_text())


def test_yaml_program_uses_the_package_from_this_repository():
    program = _yaml_program()
    assert program["runtime"] == "yaml"
    assert (YAML_STACK / program["packages"]["gpu-platform"] / "PulumiPlugin.yaml").is_file()
    [resource] = program["resources"].values()
    assert resource["type"] in (TOKEN, "gpu-platform:GpuPlatform")


def test_yaml_program_properties_check_against_the_schema(validator):
    [resource] = _yaml_program()["resources"].values()
    assert _errors(validator, resource["properties"]) == []


def test_yaml_program_builds_the_dev_stacks_platform(package):
    program = _yaml_program()
    [(name, resource)] = program["resources"].items()
    assert resource["properties"] == _dev_spec()
    outputs = package["resources"][TOKEN]["properties"]
    for expr in program["outputs"].values():
        resource_name, prop = re.fullmatch(r"\$\{(\w+)\.(\w+)\}", expr).groups()
        assert resource_name == name and prop in outputs


def test_the_schema_check_catches_what_pulumi_would_reject(validator):
    spec = _dev_spec()
    pool(spec, "gpu-train")["sharing"]["mode"] = "shared"
    pool(spec, "gpu-infer")["minsize"] = 1
    tier(spec, "train")["priority"] = "high"
    del spec["labelDomain"]
    found = "\n".join(_errors(validator, spec))
    assert "'shared' is not one of" in found
    assert "'minsize' was unexpected" in found
    assert "'high' is not of type 'integer'" in found
    assert "'labelDomain' is a required property" in found


def _ts_spec() -> dict:
    """The object literal index.ts passes to GpuPlatform, evaluated by node."""
    source = (TS_STACK / "index.ts").read_text()
    literal = re.search(r"const spec: gpuPlatform\.GpuPlatformArgs = (\{.*?\n\});", source, re.S).group(1)
    out = subprocess.run(
        ["node", "-e", f"process.stdout.write(JSON.stringify({literal}))"],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    ).stdout
    return json.loads(out)


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not on PATH")
def test_ts_program_builds_the_dev_stacks_platform(validator):
    spec = _ts_spec()
    assert _errors(validator, spec) == []
    assert spec == _dev_spec()


def test_ts_program_uses_the_generated_sdk(package):
    source = (TS_STACK / "index.ts").read_text()
    assert 'import * as gpuPlatform from "@pulumi/gpu-platform";' in source
    assert re.search(r'new gpuPlatform\.GpuPlatform\("gpu-platform", spec\)', source)
    outputs = package["resources"][TOKEN]["properties"]
    assert set(re.findall(r"= platform\.(\w+);", source)) <= set(outputs)
    manifest = json.loads((TS_STACK / "package.json").read_text())
    assert manifest["dependencies"]["@pulumi/gpu-platform"] == "file:sdks/gpu-platform"
    project = yaml.safe_load((TS_STACK / "Pulumi.yaml").read_text())
    assert (TS_STACK / project["packages"]["gpu-platform"] / "PulumiPlugin.yaml").is_file()


def test_readme_yaml_program_checks_against_the_schema_and_validates(validator):
    from gpu_platform import parse_spec

    readme = (ROOT / "README.md").read_text()
    section = readme.split("<!-- section:languages -->", 1)[1].split("<!-- /section:languages -->", 1)[0]
    program = yaml.safe_load(section.split("```yaml\n", 1)[1].split("```", 1)[0])
    [resource] = program["resources"].values()
    assert resource["type"] == TOKEN
    assert _errors(validator, resource["properties"]) == []
    parse_spec(resource["properties"])
