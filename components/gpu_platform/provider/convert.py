"""From the inputs a Pulumi program sends the component back to the spec's wire form (camelCase).

The SDK's provider hands the component its inputs keyed by the mirror TypedDicts' (snake_case) names, enums as
mirror enum members, numbers as they travel (doubles), and a value that depends on another resource, or is
secret or unknown, as an `Output`. This module walks that data along the pydantic models, so the result is what a
stack config holds, Outputs left in place for the fields that take them: `parse_spec` then validates it with the
Python API's rules and messages, and defers the checks of those Outputs until they resolve (`deferred`).
"""

from __future__ import annotations

import types
from enum import Enum
from typing import Annotated, Any, Union, get_args, get_origin

from pydantic import BaseModel

from ..spec import PlatformSpec

__all__ = ["to_spec_data"]


def to_spec_data(args: dict[str, Any]) -> dict[str, Any]:
    """The component's mapped inputs as the spec's camelCase object."""
    return _model(PlatformSpec, args)


def _model(model: type[BaseModel], data: Any) -> Any:
    if not isinstance(data, dict):
        return _value(Any, data)
    wire: dict[str, Any] = {}
    for key, value in data.items():
        info = model.model_fields.get(key)
        name = (info.alias or key) if info else key  # an unknown key stays, for the spec to name it
        wire[name] = _value(info.annotation if info else Any, value)
    return wire


def _bare(annotation: Any) -> Any:
    if get_origin(annotation) is Annotated:
        return _bare(get_args(annotation)[0])
    if get_origin(annotation) in (Union, types.UnionType):
        rest = [a for a in get_args(annotation) if a is not type(None)]
        return _bare(rest[0]) if len(rest) == 1 else Any
    return annotation


def _value(annotation: Any, value: Any) -> Any:
    annotation = _bare(annotation)
    origin = get_origin(annotation)
    if isinstance(value, Enum):
        return value.value
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return _model(annotation, value)
    if isinstance(value, list):
        item = get_args(annotation)[0] if origin is list else Any
        return [_value(item, v) for v in value]
    if isinstance(value, dict):
        item = get_args(annotation)[1] if origin is dict else Any
        return {k: _value(item, v) for k, v in value.items()}
    if annotation is int and isinstance(value, float) and value.is_integer():
        return int(value)  # numbers travel as doubles; 1.5 stays 1.5 for the spec to reject
    return value
