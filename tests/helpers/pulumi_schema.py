"""JSON Schema from a Pulumi package schema, to check what a program writes for a resource's properties."""

from __future__ import annotations

from typing import Any

_REF = "#/types/"


def _prop(prop: dict[str, Any]) -> dict[str, Any]:
    ref = prop.get("$ref")
    if ref == "pulumi.json#/Any":
        return {}
    if ref:
        return {"$ref": f"#/$defs/{ref.removeprefix(_REF)}"}
    kind = prop["type"]
    if kind == "array":
        return {"type": "array", "items": _prop(prop["items"])}
    if kind == "object":
        values = prop.get("additionalProperties", {"$ref": "pulumi.json#/Any"})
        return {"type": "object", "additionalProperties": _prop(values)}
    return {"type": kind}


def _object(properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    # Pulumi YAML and the generated SDKs reject a property the schema does not declare.
    return {
        "type": "object",
        "properties": {k: _prop(v) for k, v in properties.items()},
        "required": list(required),
        "additionalProperties": False,
    }


def resource_inputs_schema(package: dict[str, Any], token: str) -> dict[str, Any]:
    """The JSON Schema (2020-12) of the input properties of resource `token`, with every type of the package."""
    resource = package["resources"][token]
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        **_object(resource["inputProperties"], resource.get("requiredInputs", [])),
        "$defs": _defs(package),
    }


def resource_outputs_schema(package: dict[str, Any], token: str) -> dict[str, Any]:
    """The JSON Schema (2020-12) of the output properties of resource `token`."""
    resource = package["resources"][token]
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        **_object(resource["properties"], resource.get("required", [])),
        "$defs": _defs(package),
    }


def _defs(package: dict[str, Any]) -> dict[str, Any]:
    defs: dict[str, Any] = {}
    for name, t in package["types"].items():
        if "enum" in t:
            defs[name] = {"type": t["type"], "enum": [e["value"] for e in t["enum"]]}
        else:
            defs[name] = _object(t.get("properties", {}), t.get("required", []))
    return defs
