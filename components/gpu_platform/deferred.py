"""Spec values that name existing cloud or cluster objects and may be Pulumi Inputs (no pulumi import).

A spec built in Python may take the cluster name, node role, subnets, KMS keys, GCP project or service account from
resources of the same program: `PlatformSpec(cluster_name=cluster.name, ...)`. Such a value is known only during
deployment, so the model keeps a `Deferred` in its place: a string token (`<input#3.9f2c41d7:clusterName>`) that render
functions carry like any other string, plus the Input itself. Everything that shapes the platform (pools, sharing,
tiers, teams, quotas) stays plain, so validation still runs before anything is registered; the checks of a deferred
field run when its value resolves (`check_resolved`), and the Pulumi components swap the resolved value in where the
token is (`gpu_platform.wiring`). Renders for YAML specs never see a token.
"""

from __future__ import annotations

import inspect
import itertools
import re
import secrets
import sys
from collections.abc import Callable, Iterator
from typing import Any

from pydantic import BaseModel, ValidationInfo, ValidatorFunctionWrapHandler
from pydantic.alias_generators import to_camel

from .errors import Finding, GpuPlatformError, Severity

__all__ = [
    "INPUT_FIELDS_NOTE",
    "Deferred",
    "DeferredInputError",
    "check_resolved",
    "deferrable",
    "deferred_findings",
    "derived",
    "has_deferred",
    "is_input",
    "live",
    "readable",
    "stable_name",
    "substitute",
    "tokens_in",
    "derivation",
]

INPUT_FIELDS_NOTE = (
    "Only fields that name existing objects take Pulumi Inputs (clusterName, aws.nodeRoleArn, "
    "aws.subnetIds, nodePools[].aws.subnetIds, kmsKeyId, capacityReservationId, gcp.project, "
    "gcp.serviceAccount, clusterAutoscaler.roleArn): what shapes the platform is validated before "
    "anything is registered"
)
# A random tag per process: a string that only looks like a token (in valuesOverrides, a YAML spec, or a resolved
# value) cannot name a live Input, so it stays the literal text it is.
_NONCE = secrets.token_hex(4)
TOKEN = re.compile(rf"<input#(?P<n>\d+)\.{_NONCE}:(?P<label>[A-Za-z0-9_.]+)(?:\|(?P<derive>[A-Za-z]+))?>")
_COUNTER = itertools.count(1)
_LIVE: dict[int, Deferred] = {}  # every Deferred made in this process, by number (a program makes a handful)
_DERIVATIONS: dict[str, Callable[[str], str]] = {}


class DeferredInputError(GpuPlatformError):
    """A spec value given as a Pulumi Input resolved to something its field does not allow."""


def is_input(value: Any) -> bool:
    """True for a Pulumi Output or another awaitable Input (pulumi is never imported here: without it loaded, no
    value can be an Output)."""
    pulumi = sys.modules.get("pulumi")
    output = getattr(pulumi, "Output", None)
    return (output is not None and isinstance(value, output)) or inspect.isawaitable(value)


class Deferred(str):
    """A spec value given as a Pulumi Input: the token string render functions carry, and the Input itself.

    `value` is the Input; `check` raises ValueError with the field's own message for a resolved value it rejects;
    `path` is the field's camelCase path in the spec, set when the spec is validated.
    """

    value: Any
    check: Callable[[Any], Any] | None
    path: str

    def __new__(cls, value: Any, label: str, check: Callable[[Any], Any] | None = None) -> Deferred:
        number = next(_COUNTER)
        self = super().__new__(cls, f"<input#{number}.{_NONCE}:{label}>")
        self.value, self.check, self.path = value, check, label
        _LIVE[number] = self
        return self

    def __copy__(self) -> Deferred:
        return self

    def __deepcopy__(self, memo: dict[int, Any]) -> Deferred:
        return self

    def __reduce__(self) -> Any:  # a token stands for a live Input: copies are the same object
        raise TypeError(f"{self.path}: a Pulumi Input cannot be pickled")


def has_deferred() -> bool:
    """True once any spec value was given as a Pulumi Input in this process (else no token can exist)."""
    return bool(_LIVE)


def live(token: str) -> tuple[Deferred, str | None]:
    """The Deferred a token stands for, and the name of the derivation applied to it (None: the value itself)."""
    m = TOKEN.fullmatch(token)
    if m is None or int(m["n"]) not in _LIVE:
        raise KeyError(f"{token!r} is not a token of a spec value given as a Pulumi Input")
    return _LIVE[int(m["n"])], m["derive"]


def derivation(name: str) -> Callable[[str], str]:
    """The function registered under `name` by `derived`."""
    return _DERIVATIONS[name]


def derived(value: str | None, name: str, fn: Callable[[str], str]) -> str:
    """`fn(value)`, or for a deferred value a token that stands for `fn` of it once resolved (e.g. the role name
    of a role ARN that is an Output)."""
    if isinstance(value, Deferred):
        _DERIVATIONS.setdefault(name, fn)
        return f"{str(value)[:-1]}|{name}>"
    return fn(value or "")


def deferrable(check: Callable[[Any], Any] | None = None) -> Callable[..., Any]:
    """A pydantic wrap validator: a Pulumi Input becomes a `Deferred` (checked by `check` once it resolves), a plain
    value goes through the field's own validation."""

    def validate(value: Any, handler: ValidatorFunctionWrapHandler, info: ValidationInfo) -> Any:
        label = to_camel(info.field_name or "value")
        if isinstance(value, Deferred):
            # Kept as it is (with its checks) in its own field; moved to another field, it gets that field's checks.
            return value if _label(value) == label else Deferred(value.value, label, check)
        if is_input(value):
            return Deferred(value, label, check)
        return handler(value)

    return validate


def _label(deferred: Deferred) -> str | None:
    m = TOKEN.fullmatch(deferred)
    return m["label"] if m else None


def check_resolved(deferred: Deferred, value: Any) -> Any:
    """`value` once the field's checks pass on it, else DeferredInputError naming the field (same message as for a
    plain value)."""
    if not isinstance(value, str):
        raise DeferredInputError(
            f"{deferred.path}: resolved to {type(value).__name__} {value!r:.60}; allowed: a string"
        )
    try:
        if deferred.check is not None:
            deferred.check(value)
    except ValueError as e:
        raise DeferredInputError(f"{deferred.path}: {e}") from None
    return value


def _walk(node: Any, path: str) -> Iterator[tuple[str, Deferred]]:
    if isinstance(node, Deferred):
        yield path, node
    elif isinstance(node, BaseModel):
        for name, field in type(node).model_fields.items():
            child = getattr(node, name)
            if child is not None and not isinstance(child, bool | int | float):
                yield from _walk(child, f"{path}.{field.alias or name}" if path else field.alias or name)
    elif isinstance(node, list | tuple):
        for i, item in enumerate(node):
            yield from _walk(item, f"{path}[{i}]")


def deferred_values(spec: BaseModel) -> list[tuple[str, Deferred]]:
    """Every field of `spec` given as a Pulumi Input, with its path (recorded on the Deferred for its messages)."""
    if not has_deferred():
        return []
    found = list(_walk(spec, ""))
    for path, d in found:
        d.path = path
    return found


def deferred_findings(spec: BaseModel) -> Iterator[Finding]:
    """A note per deferred field: what it is and that its checks run during deployment."""
    for path, _ in deferred_values(spec):
        yield Finding(
            path,
            "a Pulumi Input, known only during deployment: checked when it resolves, and a value this "
            "field does not allow fails the resources that use it with the same message",
            Severity.INFO,
        )


def tokens_in(value: Any) -> list[str]:
    """Every token of a live Input in `value` (strings, mapping keys and values, lists), in first-seen order."""
    found: dict[str, None] = {}
    stack = [value]
    while stack:
        node = stack.pop()
        if isinstance(node, str):
            if "<input#" in node:
                found.update((m.group(0), None) for m in TOKEN.finditer(node) if int(m["n"]) in _LIVE)
        elif isinstance(node, dict):
            stack.extend(node.keys())
            stack.extend(node.values())
        elif isinstance(node, list | tuple):
            stack.extend(node)
    return list(found)


def substitute(value: Any, resolved: dict[str, str]) -> Any:
    """`value` with each token replaced by its resolved string (in mapping keys too)."""
    if isinstance(value, str):
        return TOKEN.sub(lambda m: resolved.get(m.group(0), m.group(0)), value) if "<input#" in value else value
    if isinstance(value, dict):
        return {substitute(k, resolved): substitute(v, resolved) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [substitute(v, resolved) for v in value]
    return value


def stable_name(text: str) -> str:
    """`text` with each token replaced by its field label: a resource name that does not depend on the order in
    which the program created its Inputs."""
    return TOKEN.sub(lambda m: m["label"], text) if "<input#" in text else text


def readable(text: str) -> str:
    """`text` with each token shown as what it is (`<Input clusterName>`): for messages people read."""
    return TOKEN.sub(lambda m: f"<Input {m['label']}>", text) if "<input#" in text else text
