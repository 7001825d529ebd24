"""The CEL engine of the admission simulator: celpy with Kubernetes' JSONPatch type, compiled once per expression.

Kubernetes evaluates admission CEL with cel-go; celpy implements the same CEL language (google/cel-spec), so the
very expressions the platform renders are evaluated here, not a second implementation of what they do.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from functools import lru_cache
from typing import Any

import celpy
from celpy import celtypes

__all__ = ["CelError", "JSONPatch", "LazyVariables", "activation", "evaluate", "to_cel", "to_plain"]


class JSONPatch(celtypes.MessageType):
    """Kubernetes' CEL `JSONPatch{op, path, value, from}` object type (MutatingAdmissionPolicy, Kyverno)."""


class CelError(Exception):
    """A CEL expression failed to compile or to evaluate; `expression` is the source."""

    def __init__(self, expression: str, reason: str) -> None:
        super().__init__(reason)
        self.expression = expression
        self.reason = reason


_ENV = celpy.Environment(annotations={"JSONPatch": JSONPatch})


@lru_cache(maxsize=4096)
def _program(expression: str) -> celpy.Runner:
    """Compile once per distinct expression text (celpy's parser is the slow part)."""
    try:
        return _ENV.program(_ENV.compile(expression))
    except Exception as e:  # celpy raises its own syntax errors; all are a compile failure here
        raise CelError(expression, f"does not compile: {e}") from None


def to_cel(value: Any) -> Any:
    """A plain JSON value as a CEL value."""
    return celpy.json_to_cel(value)


def to_plain(value: Any) -> Any:
    """A CEL value as a plain JSON value (dict, list, str, int, float, bool, None)."""
    if isinstance(value, Mapping):
        return {str(k): to_plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [to_plain(v) for v in value]
    if isinstance(value, celtypes.BoolType | bool):
        return bool(value)
    if isinstance(value, celtypes.IntType | celtypes.UintType | int):
        return int(value)
    if isinstance(value, celtypes.DoubleType | float):
        return float(value)
    if isinstance(value, celtypes.StringType | str):
        return str(value)
    return value


class LazyVariables(celtypes.MapType):
    """`variables.<name>`: each variable evaluated on first use and cached, as the API server composes them.

    k8s.io/apiserver v0.33 pkg/admission/plugin/cel/composition.go (lazy variable evaluation, in declaration order:
    a variable sees only the ones declared before it).
    """

    def __init__(self, declared: list[dict[str, str]], activation: dict[str, Any]) -> None:
        super().__init__({})
        self._declared = {v["name"]: v["expression"] for v in declared}
        self._order = [v["name"] for v in declared]
        self._activation = activation

    def __contains__(self, key: object) -> bool:
        return str(key) in self._declared

    def __getitem__(self, key: Any) -> Any:
        name = str(key)
        if name not in self._declared:
            raise KeyError(name)
        cached = dict.get(self, celtypes.StringType(name), _MISSING)
        if cached is _MISSING:
            try:
                cached = evaluate(self._declared[name], self._activation)
            except CelError as e:
                cached = celpy.CELEvalError(f"variables.{name}: {e.reason}", RuntimeError, None)
            dict.__setitem__(self, celtypes.StringType(name), cached)
        return cached


_MISSING = object()


def evaluate(expression: str, activation: dict[str, Any]) -> Any:
    """Evaluate `expression` (compiled once) with CEL values bound; raise CelError on an evaluation error."""
    program = _program(expression)
    try:
        result = program.evaluate({"JSONPatch": JSONPatch, **activation})
    except celpy.CELEvalError as e:
        raise CelError(expression, str(e.args[0] if e.args else e)) from None
    except Exception as e:  # noqa: BLE001 - celpy surfaces type and key errors from its runtime as plain exceptions
        raise CelError(expression, f"{type(e).__name__}: {e}") from None
    if isinstance(result, celpy.CELEvalError):
        raise CelError(expression, str(result.args[0] if result.args else result))
    return result


def activation(values: dict[str, Any], variables: list[dict[str, str]] | None = None,
               convert: Callable[[Any], Any] = to_cel) -> dict[str, Any]:
    """The CEL activation of one admission evaluation, with lazily evaluated `variables`."""
    act = {k: convert(v) for k, v in values.items()}
    act["variables"] = LazyVariables(variables or [], act)
    return act
