"""From the inputs a Pulumi program sends the component back to the spec's wire form (camelCase, plain values).

The SDK's provider hands the component its inputs keyed by the mirror TypedDicts' (snake_case) names, enums as
mirror enum members, integers of integer fields as `int`, and a value that depends on another resource as an
`Output`. This module walks that data along the pydantic models, so the result is exactly what a stack config
holds and `parse_spec` validates it with the Python API's rules and messages.
"""

from __future__ import annotations

import types
from dataclasses import dataclass, field
from enum import Enum
from typing import Annotated, Any, Union, get_args, get_origin

import pulumi
from pydantic import BaseModel

from ..errors import Finding
from ..spec import PlatformSpec

__all__ = ["SpecData", "to_spec_data"]

_UNUSABLE = object()  # an Output whose value cannot go into the spec: left out, its finding says why


@dataclass
class SpecData:
    """The spec's wire form, the resources its Output values came from, and the values that cannot be used."""

    data: dict[str, Any]
    depends_on: list[pulumi.Resource] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)

    def merged(self, found: list[Finding]) -> list[Finding]:
        """These findings, then `found` (the spec's) without what it says about the values left out."""
        left_out = {f.path for f in self.findings}
        return [*self.findings, *(f for f in found if f.path not in left_out)]


def to_spec_data(args: dict[str, Any]) -> SpecData:
    """The component's mapped inputs as the spec's camelCase object; Outputs resolved where their value is known."""
    out = SpecData({})
    out.data = _model(PlatformSpec, args, "", out)
    return out


def _join(path: str, key: str | int) -> str:
    if isinstance(key, int):
        return f"{path}[{key}]"
    return f"{path}.{key}" if path else key


def _model(model: type[BaseModel], data: Any, path: str, out: SpecData) -> Any:
    if not isinstance(data, dict):
        return _value(Any, data, path, out)
    wire: dict[str, Any] = {}
    for key, value in data.items():
        info = model.model_fields.get(key)
        name = (info.alias or key) if info else key  # an unknown key stays, for the spec to name it
        converted = _value(info.annotation if info else Any, value, _join(path, name), out)
        if converted is not _UNUSABLE:
            wire[name] = converted
    return wire


def _bare(annotation: Any) -> Any:
    if get_origin(annotation) is Annotated:
        return _bare(get_args(annotation)[0])
    if get_origin(annotation) in (Union, types.UnionType):
        rest = [a for a in get_args(annotation) if a is not type(None)]
        return _bare(rest[0]) if len(rest) == 1 else Any
    return annotation


def _value(annotation: Any, value: Any, path: str, out: SpecData) -> Any:
    value = _resolved(value, path, out)
    annotation = _bare(annotation)
    origin = get_origin(annotation)
    if value is _UNUSABLE:
        return value
    if isinstance(value, Enum):
        return value.value
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return _model(annotation, value, path, out)
    if origin is list and isinstance(value, list):
        item = get_args(annotation)[0]
        return _kept([_value(item, v, _join(path, i), out) for i, v in enumerate(value)])
    if origin is dict and isinstance(value, dict):
        item = get_args(annotation)[1]
        return {k: _value(item, v, _join(path, k), out) for k, v in value.items()}
    if isinstance(value, dict):
        return {k: _value(Any, v, _join(path, k), out) for k, v in value.items()}
    if isinstance(value, list):
        return _kept([_value(Any, v, _join(path, i), out) for i, v in enumerate(value)])
    if annotation is int and isinstance(value, float) and value.is_integer():
        return int(value)  # numbers travel as doubles; 1.5 stays 1.5 for the spec to reject
    return value


def _kept(items: list[Any]) -> Any:
    return _UNUSABLE if any(v is _UNUSABLE for v in items) else items


def _resolved(value: Any, path: str, out: SpecData) -> Any:
    """The plain value of an Output that arrived with the request (its data is already there), else the value.

    The provider server builds every Output of a Construct request from data it already holds
    (pulumi/pulumi sdk/python/lib/pulumi/provider/server.py `_select_value`, runtime/rpc.py
    `deserialize_output_value`), so a known value is read without awaiting. The resources it came from are kept:
    every child waits for them, as it would for the platform's `depends_on`.
    """
    if not isinstance(value, pulumi.Output):
        return value
    data = value._data  # noqa: SLF001 - see the docstring
    if not data.done():
        out.findings.append(Finding(path, "an Output whose value is not resolved; allowed: a value known when the "
                                          "platform is created"))
        return _UNUSABLE
    resolved = data.result()
    if not resolved.is_known:
        out.findings.append(Finding(path, "an unknown Output (a resource not created yet, as in a first preview); "
                                          "allowed: a value known when the platform is created: create that resource "
                                          "first, or pass its name as a plain value"))
        return _UNUSABLE
    if resolved.is_secret:
        out.findings.append(Finding(path, "a secret; allowed: a plain value (it names a cloud object and is written "
                                          "into the platform's resources in clear)"))
        return _UNUSABLE
    out.depends_on.extend(r for r in resolved.resources if r not in out.depends_on)
    return _resolved(resolved.value, path, out)
