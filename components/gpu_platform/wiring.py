"""Pulumi side of spec values given as Inputs: where rendered inputs hold a token, the resolved and checked value.

Components pass every rendered input through `input_of` (Kubernetes objects and Helm values in `k8s`, cloud
resource arguments through `kwargs_of`). For a spec without Inputs, the value comes back unchanged; a value that is
exactly a token becomes the Input itself (its dependencies and secrecy intact), and anything that embeds one (a
chart value, a tag, a description) becomes `Output.all(...).apply(...)` of the rendered value with the tokens swapped
for the resolved strings, secret when any of them is.
"""

from __future__ import annotations

from typing import Any

import pulumi

from .deferred import (
    Deferred,
    DeferredInputError,
    check_resolved,
    derivation,
    has_deferred,
    live,
    substitute,
    tokens_in,
)

__all__ = ["input_of", "kwargs_of"]


def _resolved(token: str) -> pulumi.Output[str]:
    """The value a token stands for, checked by its field's rules when it resolves (failing what uses it)."""
    deferred, derive = live(token)
    out = pulumi.Output.from_input(deferred.value).apply(lambda v: _checked(deferred, v))
    return out.apply(derivation(derive)) if derive else out


def _checked(deferred: Deferred, value: Any) -> str:
    try:
        checked: str = check_resolved(deferred, value)
        return checked
    except DeferredInputError as e:
        raise pulumi.RunError(str(e)) from None  # the engine shows a RunError's message without a traceback


def input_of(value: Any) -> Any:
    """`value` as a Pulumi Input with every token replaced; unchanged when it holds none."""
    if not has_deferred():
        return value
    tokens = tokens_in(value)
    if not tokens:
        return value
    if isinstance(value, str) and tokens == [value]:
        return _resolved(value)
    parts = pulumi.Output.all(pulumi.Output.from_input(value), *(_resolved(t) for t in tokens))
    return parts.apply(lambda v: substitute(v[0], dict(zip(tokens, v[1:], strict=True))))


def kwargs_of(inputs: dict[str, Any]) -> dict[str, Any]:
    """Resource keyword arguments with each one passed through `input_of`."""
    return {k: input_of(v) for k, v in inputs.items()}
