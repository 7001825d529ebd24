"""From the inputs a Pulumi program sends the component back to the spec's wire form (camelCase).

The engine's Construct request carries the program's inputs as the spec's camelCase object, numbers as doubles, a
value that depends on another resource or is secret as an `Output`, a secret nested inside a value as the RPC's
secret wrapper, and a value unknown during a preview as the RPC's unknown sentinel. This module walks that data along
the pydantic models: whole doubles become ints where the spec takes an int, secrets and unknowns become `Output`s, and
everything else (unknown keys, wrong types, nulls) stays as it came, so `parse_spec` reports it with the Python API's
rules and messages, and defers the checks of the Outputs in the fields that take them (`deferred`).
"""

from __future__ import annotations

import asyncio
import types
from typing import Annotated, Any, Union, get_args, get_origin

import pulumi
from pulumi.output import Unknown
from pulumi.runtime import rpc
from pydantic import BaseModel

from ..spec import PlatformSpec

__all__ = ["to_spec_data"]

_EXACT = 2**53  # doubles hold every integer up to here; a larger "whole" double is left for the spec to bound


def to_spec_data(inputs: dict[str, Any]) -> dict[str, Any]:
    """The Construct request's inputs (camelCase, as the engine deserialises them) as the spec's camelCase object."""
    return _model(PlatformSpec, inputs)


def _model(model: type[BaseModel], data: dict[str, Any]) -> dict[str, Any]:
    fields = {(f.alias or n): f for n, f in model.model_fields.items()}
    wire: dict[str, Any] = {}
    for key, value in data.items():
        info = fields.get(key)  # an unknown key stays, for the spec to name it
        wire[key] = _value(info.annotation if info else Any, value)
    return wire


def _bare(annotation: Any) -> Any:
    if get_origin(annotation) is Annotated:
        return _bare(get_args(annotation)[0])
    if get_origin(annotation) in (Union, types.UnionType):
        rest = [a for a in get_args(annotation) if a is not type(None)]
        return _bare(rest[0]) if len(rest) == 1 else Any
    return annotation


def _output(value: Any, known: bool, secret: bool) -> pulumi.Output[Any]:
    # pulumi/pulumi v3.259.0 sdk/python/lib/pulumi/provider/server.py `_select_value` builds its Outputs the same way.
    loop = asyncio.get_event_loop()
    futures = [loop.create_future() for _ in range(4)]
    results: tuple[Any, ...] = (set(), value if known else None, known, secret)
    for future, result in zip(futures, results, strict=True):
        future.set_result(result)
    return pulumi.Output(futures[0], futures[1], futures[2], futures[3])


def _value(annotation: Any, value: Any) -> Any:
    if isinstance(value, Unknown) or (isinstance(value, str) and value == rpc.UNKNOWN):  # unknown in a preview: an
        # Output, which the fields that take Inputs defer and every other field refuses
        return _output(None, known=False, secret=False)
    if rpc.is_rpc_secret(value):  # a secret inside a value (a secret at the top level is an Output already)
        inner = rpc.unwrap_rpc_secret(value)
        return _output(_value(annotation, inner), known=inner != rpc.UNKNOWN, secret=True)
    annotation = _bare(annotation)
    origin = get_origin(annotation)
    if isinstance(annotation, type) and issubclass(annotation, BaseModel) and isinstance(value, dict):
        return _model(annotation, value)
    if isinstance(value, list):
        item = get_args(annotation)[0] if origin is list else Any
        return [_value(item, v) for v in value]
    if isinstance(value, dict):
        item = get_args(annotation)[1] if origin is dict else Any
        return {k: _value(item, v) for k, v in value.items()}
    if annotation is int and isinstance(value, float) and value.is_integer() and abs(value) <= _EXACT:
        return int(value)  # numbers travel as doubles; 1.5 stays 1.5 for the spec to reject
    return value
