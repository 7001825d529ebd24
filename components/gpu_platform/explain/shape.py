"""The structural checks the API server's decoding makes on the fields explain reads.

A manifest with, say, a string where `spec.template` must be an object never reaches admission: the API server
cannot decode it into its Go type and answers 400. explain reports such an object as rejected, naming the field.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from .quantity import QuantityError, parse_quantity
from .workloads import get_path, pod_templates

__all__ = ["resources_problem", "shape_problem"]

_STR_MAP = {str: str}
_QUANTITY = object()  # a quantity: any JSON scalar or null here; `quantity.parse_quantity` reads it
_QUANTITIES = {str: _QUANTITY}
_REQUIREMENT = {"key": str, "operator": str, "values": [str]}
_TERM = {"matchExpressions": [_REQUIREMENT], "matchFields": [_REQUIREMENT]}
_AFFINITY = {
    "nodeAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [_TERM]},
        "preferredDuringSchedulingIgnoredDuringExecution": [dict],
    },
    "podAffinity": dict,
    "podAntiAffinity": dict,
}
_CONTAINER = {"name": str, "resources": {"limits": _QUANTITIES, "requests": _QUANTITIES}}
_TOLERATION = {"key": str, "operator": str, "value": str, "effect": str}
_POD_SPEC = {
    "containers": [_CONTAINER],
    "initContainers": [_CONTAINER],
    "nodeSelector": _STR_MAP,
    "tolerations": [_TOLERATION],
    "affinity": _AFFINITY,
    "schedulingGates": [{"name": str}],
    "priorityClassName": str,
    "priority": int,
    "schedulerName": str,
}
_META = {
    "name": str,
    "namespace": str,
    "labels": _STR_MAP,
    "annotations": _STR_MAP,
    "ownerReferences": [{"kind": str, "name": str, "controller": bool}],
}
_NAMES = {dict: "an object", list: "a list", str: "a string", int: "an integer", bool: "a boolean"}


def _problem(value: Any, shape: Any, path: str) -> str | None:
    """The first field of `value` that does not have the type `shape` gives, or None."""
    if shape is _QUANTITY:  # decoded by Quantity.UnmarshalJSON: a value that is no quantity stops it here
        try:
            parse_quantity(value)
        except QuantityError as exc:
            return f"{path}: Invalid value: {value!r}: {exc}"
        return None
    if isinstance(shape, type | tuple):
        types = shape if isinstance(shape, tuple) else (shape,)
        ok = isinstance(value, types) and not (isinstance(value, bool) and bool not in types)
        return None if ok else f"{path}: must be {_NAMES.get(types[0], types[0].__name__)}"
    if isinstance(shape, list):
        if not isinstance(value, list):
            return f"{path}: must be a list"
        return next((p for i, v in enumerate(value) if (p := _problem(v, shape[0], f"{path}[{i}]"))), None)
    if not isinstance(value, dict):
        return f"{path}: must be an object"
    if len(shape) == 1 and str in shape:  # a map: every value has the shape
        at = "{}[{}]" if shape[str] is _QUANTITY else "{}.{}"  # resources as the API server names them
        return next((p for k, v in value.items() if (p := _problem(v, shape[str], at.format(path, k)))), None)
    return next(
        (
            p
            for k, s in shape.items()
            if k in value and value[k] is not None and (p := _problem(value[k], s, f"{path}.{k}"))
        ),
        None,
    )


def _container_path(obj: dict[str, Any], path: tuple[str | int, ...]) -> str | None:
    """Every step towards a pod template is an object (or a list where an index follows)."""
    node: Any = obj
    here = ""
    for step in path:
        if isinstance(step, int):
            if not isinstance(node, list):
                return f"{here}: must be a list"
            node, here = node[step], f"{here}[{step}]"
        else:
            if not isinstance(node, dict):
                return f"{here or '(object)'}: must be an object"
            node, here = node.get(step), f"{here}.{step}" if here else step
    return None if isinstance(node, dict) else f"{here}: must be an object"


def _field(obj: dict[str, Any], key: str) -> Any:
    """A field, absent and null both read as an empty object (as the API server decodes them)."""
    value = obj.get(key)
    return {} if value is None else value


def shape_problem(obj: dict[str, Any]) -> str | None:
    """Why the API server could not decode `obj` (the fields explain reads), or None."""
    problem = _problem(_field(obj, "metadata"), _META, "metadata")
    if problem or obj.get("kind") == "Pod":
        return problem or _problem(_field(obj, "spec"), _POD_SPEC, "spec")
    if not isinstance(_field(obj, "spec"), dict):
        return "spec: must be an object"
    for section in ("replicatedJobs", "workerGroupSpecs"):
        found = (
            _field(obj, "spec").get(section)
            if section == "replicatedJobs"
            else get_path(obj, ("spec", "rayClusterSpec", section))
        )
        if found is not None and not isinstance(found, list):
            return f"spec...{section}: must be a list"
    for t in pod_templates(obj):
        problem = _container_path(obj, t.path)
        if problem:
            return problem
        tmpl = get_path(obj, t.path)
        problem = _problem(_field(tmpl, "metadata"), _META, f"{t.display}.metadata") or _problem(
            _field(tmpl, "spec"), _POD_SPEC, f"{t.display}.spec"
        )
        if problem:
            return problem
    return None


def _extended(name: str) -> bool:
    """An extended resource: a domain-prefixed name outside kubernetes.io (helper.IsExtendedResourceName)."""
    domain = name.split("/", 1)[0] if "/" in name else ""
    return bool(domain) and not domain.endswith("kubernetes.io") and not name.startswith("requests.")


def _overcommit(name: str) -> bool:
    """Whether a request may be below its limit: native resources but hugepages (helper.IsOvercommitAllowed)."""
    return not _extended(name) and not name.startswith("hugepages-")


def resources_problem(spec: dict[str, Any], where: str) -> str | None:
    """What the API server refuses in the containers' resources, or None.

    A value that is no quantity is refused at decoding (`shape_problem`); it is refused here too, for an object
    checked after mutation. Then kubernetes v1.33.0
    pkg/apis/core/validation/validation.go ValidateResourceRequirements: no quantity is negative
    (ValidateResourceQuantityValue), an extended resource is a whole number, and a request of one (or of
    hugepages) needs a limit of the same value (not overcommitable); any other request is at most its limit.
    """
    for field in ("initContainers", "containers"):
        for i, c in enumerate(spec.get(field) or []):
            res = c.get("resources") or {}
            limits, requests = res.get("limits") or {}, res.get("requests") or {}
            at = f"{where}.{field}[{i}].resources"
            amounts: dict[str, dict[str, Decimal]] = {}
            for section, values in (("limits", limits), ("requests", requests)):
                amounts[section] = {}
                for name, q in values.items():
                    try:
                        amounts[section][name] = parse_quantity(q)
                    except QuantityError as exc:
                        return f"{at}.{section}[{name}]: Invalid value: {q!r}: {exc}"
            for section, values in (("limits", limits), ("requests", requests)):
                for name, amount in amounts[section].items():
                    if amount < 0:
                        return (
                            f"{at}.{section}[{name}]: Invalid value: {values[name]!r}: must be greater than or "
                            "equal to 0"
                        )
                    if _extended(name) and amount != amount.to_integral_value():
                        return f"{at}.{section}[{name}]: Invalid value: {values[name]!r}: must be an integer"
            for name, q in requests.items():
                amount, limit = amounts["requests"][name], amounts["limits"].get(name)
                if limit is None:
                    if not _overcommit(name):
                        return f"{at}.requests[{name}]: Forbidden: Limit must be set for non overcommitable resources"
                elif amount != limit and not _overcommit(name):
                    equal = f"must be equal to {name} limit of {limits[name]}"
                    return f"{at}.requests[{name}]: Invalid value: {q!r}: {equal}"
                elif amount > limit:
                    return (
                        f"{at}.requests[{name}]: Invalid value: {q!r}: must be less than or equal to {name} limit "
                        f"of {limits[name]}"
                    )
    return None
