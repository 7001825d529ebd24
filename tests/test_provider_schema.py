"""The component package's schema: generated from the spec, committed, in the package convention, and a mirror of
the pydantic spec that cannot drift (every field, its camelCase alias, a compatible type, the same required set)."""

from __future__ import annotations

import json
import re

import pytest

from conftest import ROOT

SCHEMA = ROOT / "schema.json"
TOKEN = "gpu-platform:index:GpuPlatform"


@pytest.fixture(scope="module")
def schema():
    from gpu_platform.provider.schema import package_schema

    return package_schema()


def test_mirror_types_are_generated_from_the_spec():
    from gpu_platform.provider import codegen

    committed = (ROOT / "components/gpu_platform/provider/types.py").read_text()
    assert committed == codegen.render_types(), "types.py is stale: run `make schema` and commit the result"


def test_committed_schema_is_what_the_analyzer_generates(schema):
    from gpu_platform.provider.schema import schema_text

    assert SCHEMA.read_text() == schema_text(), "schema.json is stale: run `make schema` and commit the result"


def test_tokens_follow_the_package_convention(schema):
    assert schema["name"] == "gpu-platform"
    assert list(schema["resources"]) == [TOKEN]
    assert schema["resources"][TOKEN]["isComponent"] is True
    assert all(t.startswith("gpu-platform:index:") for t in schema["types"])


def _resolve(pyd: dict, defs: dict) -> dict:
    """A pydantic property schema without its `X | None` wrapper (`True`: any value)."""
    if pyd is True:
        return {}
    variants = [v for v in pyd.get("anyOf", [pyd]) if v.get("type") != "null"]
    assert len(variants) == 1, f"only `X | None` unions have a Pulumi type: {pyd}"
    return variants[0]


def _compatible(pyd: dict, pulumi_prop: dict, defs: dict, schema: dict, where: str) -> None:
    """Assert one pydantic JSON-schema property and its Pulumi schema property describe the same values."""
    pyd = _resolve(pyd, defs)
    if "$ref" in pyd:
        name = pyd["$ref"].rsplit("/", 1)[-1]
        assert pulumi_prop.get("$ref") == f"#/types/gpu-platform:index:{name}", where
        target, model = schema["types"][f"gpu-platform:index:{name}"], defs[name]
        if "enum" in model:
            assert [e["value"] for e in target["enum"]] == model["enum"], where
        return
    if pyd == {} or pyd.get("type") is None:
        assert pulumi_prop.get("$ref") == "pulumi.json#/Any", where
        return
    assert pulumi_prop.get("type") == pyd["type"], f"{where}: {pulumi_prop.get('type')} != {pyd['type']}"
    if pyd["type"] == "array":
        _compatible(pyd["items"], pulumi_prop["items"], defs, schema, f"{where}[]")
    elif pyd["type"] == "object":
        _compatible(
            pyd.get("additionalProperties", {}), pulumi_prop["additionalProperties"], defs, schema, f"{where}{{}}"
        )


def test_every_spec_field_has_a_mirror_with_its_alias_and_type(schema):
    from gpu_platform.spec import PlatformSpec

    pyd = PlatformSpec.model_json_schema(by_alias=True)
    defs = pyd.pop("$defs")
    models = {
        "PlatformSpec": (pyd, schema["resources"][TOKEN], "inputProperties", "requiredInputs"),
        **{
            n: (d, schema["types"][f"gpu-platform:index:{n}"], "properties", "required")
            for n, d in defs.items()
            if "properties" in d
        },
    }
    for name, (model, target, props, required) in models.items():
        assert set(target[props]) == set(model["properties"]), name
        assert set(target.get(required, [])) == set(model.get("required", [])), name
        for alias, prop in model["properties"].items():
            _compatible(prop, target[props][alias], defs, schema, f"{name}.{alias}")


def _input_types(schema) -> set[str]:
    """The type tokens reachable from the resource's inputs (the rest describe its outputs)."""
    found: set[str] = set()
    todo = [schema["resources"][TOKEN]["inputProperties"]]
    while todo:
        text = json.dumps(todo.pop())
        for token in re.findall(r'"#/types/([^"]+)"', text):
            if token not in found:
                found.add(token)
                todo.append(schema["types"][token])
    return found


def test_fields_naming_cloud_objects_take_inputs_and_the_rest_is_plain(schema):
    from gpu_platform.provider.codegen import input_fields
    from gpu_platform.spec import PlatformSpec

    inputs = input_fields()
    assert ("PlatformSpec", "cluster_name") in inputs and ("AwsSpec", "subnet_ids") in inputs
    owners = {
        "PlatformSpec": schema["resources"][TOKEN]["inputProperties"],
        **{t.rsplit(":", 1)[-1]: schema["types"][t].get("properties", {}) for t in _input_types(schema)},
    }
    seen = set()
    for owner, props in owners.items():
        for alias, prop in props.items():
            snake = "".join(f"_{c.lower()}" if c.isupper() else c for c in alias)
            if (owner, snake) not in inputs:
                assert prop.get("plain") is True, f"{owner}.{alias} shapes the platform: plain, validated first"
                continue
            seen.add((owner, snake))
            if prop.get("type") == "array":  # a list of Inputs, as the spec takes it
                assert prop.get("plain") is True and "plain" not in prop["items"], f"{owner}.{alias}"
            else:
                assert "plain" not in prop, f"{owner}.{alias} takes an Output"
    assert seen == inputs
    assert PlatformSpec.model_fields["cluster_name"].alias == "clusterName"


def test_outputs_are_the_python_components(schema, pulumi_mocks, dev_spec):
    from gpu_platform import GpuPlatform, GpuPlatformArgs

    seen = {}

    def program():
        platform = GpuPlatform("plat", GpuPlatformArgs(spec=dev_spec))
        seen["outputs"] = {
            k
            for k in vars(platform)
            if k in {"node_pool_names", "tier_names", "teams", "tiers", "node_groups", "prometheus_url", "opencost_url"}
        }

    pulumi_mocks.run(program)
    outputs = schema["resources"][TOKEN]["properties"]
    assert set(outputs) == {
        "nodePoolNames",
        "tierNames",
        "teams",
        "tiers",
        "nodeGroups",
        "prometheusUrl",
        "opencostUrl",
    }
    assert len(seen["outputs"]) == len(outputs)
    assert set(schema["resources"][TOKEN]["required"]) == set(outputs) - {"opencostUrl"}


def test_schema_is_valid_json_with_descriptions(schema):
    inputs = schema["resources"][TOKEN]["inputProperties"]
    assert all(p.get("description") for p in inputs.values())
    undescribed = [
        f"{name}.{prop}"
        for name, t in schema["types"].items()
        for prop, p in t.get("properties", {}).items()
        if not p.get("description")
    ]
    assert undescribed == [], "every property of every type is described in the generated SDKs"
    assert json.loads(SCHEMA.read_text())["resources"][TOKEN]["description"]
