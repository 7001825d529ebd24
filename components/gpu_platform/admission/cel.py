"""CEL expressions of the admission objects, built from the spec (pure strings; evaluated in tests with celpy)."""

from __future__ import annotations

import json

__all__ = ["MAX_CONTAINERS", "cel_str", "gpu_requested", "json_pointer", "resource_patches", "tier_label"]

# JSONPatch needs container indices; CEL has no index iteration, so indices come from a literal range.
MAX_CONTAINERS = 32
_GPU = "nvidia.com/gpu"


def cel_str(value: str) -> str:
    """A CEL string literal."""
    return json.dumps(value)


def json_pointer(*parts: str) -> str:
    """An RFC 6901 pointer: `~` -> `~0`, `/` -> `~1` inside each part."""
    return "".join("/" + p.replace("~", "~0").replace("/", "~1") for p in parts)


def _has_gpu(section: str) -> str:
    return f"(has(c.resources) && has(c.resources.{section}) && c.resources.{section}.exists(k, k.startsWith('nvidia.com/')))"


def gpu_requested(obj: str = "object") -> str:
    """True when any container or init container of `obj` (a pod, or a pod template) requests or limits an
    `nvidia.com/*` resource."""
    containers = f"{obj}.spec.containers + (has({obj}.spec.initContainers) ? {obj}.spec.initContainers : [])"
    return f"({containers}).exists(c, {_has_gpu('limits')} || {_has_gpu('requests')})"


def tier_label(key: str, obj: str = "object") -> str:
    """The tier label value of `obj` (`object`, or `oldObject` on UPDATE), '' when absent."""
    labels = f"{obj}.metadata.labels"
    return f"(has({labels}) && {cel_str(key)} in {labels} ? {labels}[{cel_str(key)}] : '')"


def resource_patches(section: str, field: str, op: str, resource: str) -> str:
    """JSONPatch ops moving `nvidia.com/gpu` to `resource` in one resources section of every container of `field`."""
    c = f"object.spec.{field}[i]"
    indices = "[" + ", ".join(str(i) for i in range(MAX_CONTAINERS)) + "]"
    cond = (
        f"has(object.spec.{field}) && i < size(object.spec.{field}) && has({c}.resources) && "
        f"has({c}.resources.{section}) && {cel_str(_GPU)} in {c}.resources.{section}"
    )
    base = f"'/spec/{field}/' + string(i) + '/resources/{section}'"
    if op == "add":
        patch = (
            f"JSONPatch{{op: 'add', path: {base} + {cel_str(json_pointer(resource))}, "
            f"value: {c}.resources.{section}[{cel_str(_GPU)}]}}"
        )
    else:
        patch = f"JSONPatch{{op: 'remove', path: {base} + {cel_str(json_pointer(_GPU))}}}"
    return f"{indices}.filter(i, {cond}).map(i, {patch})"
