"""Strict validation of a custom resource against its upstream CRD (../shared/reference/crds): the served version's
openAPIV3Schema (jsonschema), no field the API server would prune, and every CEL rule cel-python can evaluate."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import jsonschema
import yaml

__all__ = ["crd_schema", "validate_custom_resource"]


def crd_schema(crd_path: Path, doc: dict[str, Any]) -> dict[str, Any]:
    """The openAPIV3Schema of the CRD version `doc` uses (which must be served)."""
    crd = yaml.safe_load(crd_path.read_text())
    assert crd["spec"]["names"]["kind"] == doc["kind"], (crd["spec"]["names"]["kind"], doc["kind"])
    assert crd["spec"]["group"] == doc["apiVersion"].split("/")[0]
    version = doc["apiVersion"].split("/")[1]
    served = {v["name"]: v for v in crd["spec"]["versions"] if v.get("served")}
    assert version in served, f"{doc['kind']} {version} is not served; served: {sorted(served)}"
    return served[version]["schema"]["openAPIV3Schema"]


def _pruned(value: Any, schema: dict[str, Any], path: str) -> list[str]:
    out: list[str] = []
    if isinstance(value, dict) and schema.get("type") == "object" and path != ".metadata":
        props, extra = schema.get("properties"), schema.get("additionalProperties")
        if props is not None and not schema.get("x-kubernetes-preserve-unknown-fields"):
            out += [f"{path}.{k}" for k in value if k not in props]
        for k, v in value.items():
            sub = (props or {}).get(k) or (extra if isinstance(extra, dict) else None)
            if sub:
                out += _pruned(v, sub, f"{path}.{k}")
    elif isinstance(value, list) and isinstance(schema.get("items"), dict):
        for i, v in enumerate(value):
            out += _pruned(v, schema["items"], f"{path}[{i}]")
    return out


def _k8s_string_functions() -> dict[str, Any]:
    """The Kubernetes CEL string extensions Karpenter's rules use (`find`, `split`), which cel-python lacks."""
    import re

    from celpy import celtypes

    def find(s: Any, pattern: Any) -> Any:
        m = re.search(str(pattern), str(s))
        return celtypes.StringType(m.group(0) if m else "")

    def split(s: Any, sep: Any) -> Any:
        return celtypes.ListType([celtypes.StringType(x) for x in str(s).split(str(sep))])

    return {"find": find, "split": split}


def _cel(value: Any, schema: dict[str, Any], path: str, results: dict[str, list]) -> None:
    import celpy

    for rule in schema.get("x-kubernetes-validations", []):
        if "oldSelf" in rule["rule"]:
            continue
        env = celpy.Environment()
        try:
            program = env.program(env.compile(rule["rule"]), functions=_k8s_string_functions())
            ok = program.evaluate({"self": celpy.json_to_cel(value)})
        except Exception as e:  # noqa: BLE001 - Kubernetes CEL extensions cel-python lacks
            results["skipped"].append((path, rule["rule"], type(e).__name__))
            continue
        results["ran"].append((path, rule["rule"]))
        if not bool(ok):
            results["failed"].append(f"{path}: {rule.get('message', rule['rule'])}")
    children: list[tuple[Any, dict, str]] = []
    if isinstance(value, dict):
        props, extra = schema.get("properties", {}), schema.get("additionalProperties")
        children = [
            (v, props.get(k) or (extra if isinstance(extra, dict) else None), f"{path}.{k}") for k, v in value.items()
        ]
    elif isinstance(value, list) and isinstance(schema.get("items"), dict):
        children = [(v, schema["items"], f"{path}[{i}]") for i, v in enumerate(value)]
    for v, sub, p in children:
        if sub:
            _cel(v, sub, p, results)


def validate_custom_resource(crd_path: Path, doc: dict[str, Any]) -> dict[str, list]:
    """Assert `doc` passes its CRD (schema, no pruned fields, CEL); return the CEL rules that ran and were skipped."""
    schema = crd_schema(crd_path, doc)
    jsonschema.validate(doc, schema)
    name = f"{doc['kind']} {doc['metadata']['name']}"
    assert _pruned(doc, schema, "") == [], f"{name} has pruned fields: {_pruned(doc, schema, '')}"
    results: dict[str, list] = {"ran": [], "failed": [], "skipped": []}
    _cel(doc, schema, "", results)
    assert results["failed"] == [], f"{name}: {results['failed']}"
    return results
