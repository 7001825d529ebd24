"""CEL expressions of the admission objects, built from the spec (pure strings; evaluated in tests with celpy).

The small builders (`cel_str`, `cel_list`, `cel_map`, `cel_literal`, `jsonpatch`, `json_pointer`) write CEL's
literal syntax in one place, so a rendered expression never carries hand-escaped braces or quotes.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from ..contract import GPU_RESOURCE, NVIDIA_RESOURCE_PREFIX

__all__ = [
    "MAX_CONTAINERS",
    "cel_list",
    "cel_literal",
    "cel_map",
    "cel_get",
    "cel_has",
    "cel_has_path",
    "cel_str",
    "gpu_requested",
    "json_pointer",
    "jsonpatch",
    "resource_patches",
    "tier_label",
]

# JSONPatch needs container indices; CEL has no index iteration, so indices come from a literal range.
MAX_CONTAINERS = 32
_SHORT_ESCAPES = {"\\": "\\\\", "\n": "\\n", "\r": "\\r", "\t": "\\t", "\b": "\\b", "\f": "\\f"}
_QUOTES = ('"', "'")


def _escaped(ch: str, quote: str) -> str:
    code = ord(ch)
    if ch == quote:
        return "\\" + ch
    if ch in _SHORT_ESCAPES:
        return _SHORT_ESCAPES[ch]
    if 0xD800 <= code <= 0xDFFF:
        raise ValueError(f"lone surrogate U+{code:04X}: not a character, CEL cannot write it; allowed: Unicode scalars")
    if code > 0xFFFF:
        return f"\\U{code:08x}"
    if code < 0x20 or code >= 0x7F:
        return f"\\u{code:04x}"
    return ch


def cel_str(value: str, quote: str = '"') -> str:
    r"""A CEL string literal of `value` between `quote`s (`"` or `'`).

    Backslash and the quote are escaped, every other character outside printable ASCII written as `\n`, `\t`...
    or a `\u` escape (`\U` beyond U+FFFF: a JSON surrogate pair reads back as two lone surrogates), so with `"`
    the literal is the JSON string of `value` whenever `value` has no character beyond U+FFFF (cel-spec
    doc/langdef.md, "String and Bytes Values").
    """
    if quote not in _QUOTES:
        raise ValueError(f"quote {quote!r}; allowed: {', '.join(_QUOTES)}")
    return quote + "".join(_escaped(ch, quote) for ch in value) + quote


def cel_list(items: Iterable[str]) -> str:
    """A CEL list of the given CEL expressions: `[a, b]`."""
    return "[" + ", ".join(items) + "]"


def cel_map(entries: Iterable[tuple[str, str]]) -> str:
    """A CEL map of (key, value) CEL expressions, in order: `{k: v, k2: v2}`."""
    return "{" + ", ".join(f"{k}: {v}" for k, v in entries) + "}"


CelValue = str | bool | int | Sequence["CelValue"] | Mapping[str, "CelValue"]


def cel_literal(value: CelValue) -> str:
    """The CEL literal of a plain value: strings quoted with `cel_str`, booleans, integers, lists and maps."""
    if isinstance(value, str):
        return cel_str(value)
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, Mapping):
        return cel_map((cel_str(k), cel_literal(v)) for k, v in value.items())
    if isinstance(value, list | tuple):
        return cel_list(cel_literal(v) for v in value)
    raise TypeError(f"{type(value).__name__} value {value!r}; allowed: str, bool, int, list, tuple, mapping")


def cel_has(*fields: str) -> str:
    """CEL: every one of the field selections is set, `has(a) && has(a.b)`."""
    return " && ".join(f"has({f})" for f in fields)


def cel_has_path(root: str, path: str) -> str:
    """CEL: every step of the dotted `path` below `root` is set, `has(root.a) && has(root.a.b)`."""
    parts = path.split(".")
    return cel_has(*(f"{root}.{'.'.join(parts[:i])}" for i in range(1, len(parts) + 1)))


def cel_get(mapping: str, key: str, default: str = "''", guards: Sequence[str] | None = None) -> str:
    """CEL: `mapping[key]` when the map is set and holds `key`, else `default` (CEL expressions all). `guards`
    are the fields tested with `has` first, `mapping` itself unless given (`t.metadata` too for a template)."""
    present = cel_has(*(guards if guards is not None else [mapping]))
    return f"({present} && {key} in {mapping} ? {mapping}[{key}] : {default})"


def jsonpatch(op: str, path: str, value: str | None = None, *, quote: str = "'") -> str:
    """A CEL `JSONPatch{op, path[, value]}` object; `path` and `value` are CEL expressions, `op` is quoted with
    `quote` (Kubernetes MutatingAdmissionPolicy JSONPatch type, api/admissionregistration/v1beta1 types.go)."""
    fields = [("op", cel_str(op, quote)), ("path", path), *([("value", value)] if value is not None else [])]
    return "JSONPatch" + cel_map(fields)


def json_pointer(*parts: str) -> str:
    """An RFC 6901 pointer: `~` -> `~0`, `/` -> `~1` inside each part."""
    return "".join("/" + p.replace("~", "~0").replace("/", "~1") for p in parts)


def _has_gpu(section: str) -> str:
    nvidia = cel_str(NVIDIA_RESOURCE_PREFIX, "'")
    has = f"has(c.resources) && has(c.resources.{section})"
    return f"({has} && c.resources.{section}.exists(k, k.startsWith({nvidia})))"


def gpu_requested(obj: str = "object") -> str:
    """True when any container or init container of `obj` (a pod, or a pod template) requests or limits an
    `nvidia.com/*` resource."""
    containers = f"{obj}.spec.containers + (has({obj}.spec.initContainers) ? {obj}.spec.initContainers : [])"
    return f"({containers}).exists(c, {_has_gpu('limits')} || {_has_gpu('requests')})"


def tier_label(key: str, obj: str = "object") -> str:
    """The tier label value of `obj` (`object`, or `oldObject` on UPDATE), '' when absent."""
    return cel_get(f"{obj}.metadata.labels", cel_str(key))


def resource_patches(section: str, field: str, op: str, resource: str) -> str:
    """JSONPatch ops moving `nvidia.com/gpu` to `resource` in one resources section of every container of `field`."""
    c = f"object.spec.{field}[i]"
    indices = cel_list(str(i) for i in range(MAX_CONTAINERS))
    gpu = cel_str(GPU_RESOURCE)
    cond = (
        f"has(object.spec.{field}) && i < size(object.spec.{field}) && has({c}.resources) && "
        f"has({c}.resources.{section}) && {gpu} in {c}.resources.{section}"
    )
    base = f"'/spec/{field}/' + string(i) + '/resources/{section}'"
    if op == "add":
        patch = jsonpatch("add", f"{base} + {cel_str(json_pointer(resource))}", f"{c}.resources.{section}[{gpu}]")
    else:
        patch = jsonpatch("remove", f"{base} + {cel_str(json_pointer(GPU_RESOURCE))}")
    return f"{indices}.filter(i, {cond}).map(i, {patch})"
