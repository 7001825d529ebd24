"""The CEL functions Kubernetes adds to admission CEL that celpy lacks, for celpy.

Kubernetes compiles admission CEL with cel-go's strings extension (k8s.io/apiserver v0.33.0 pkg/cel/environment/
base.go: ext.Strings(ext.StringsVersion(2))) and its own lists library (pkg/cel/library/lists.go). These are
their definitions (google/cel-go v0.23 ext/strings.go; lists.go), so rendered CEL that uses them evaluates here as
in the API server. Not provided: optional types (`.?`, `orValue`), `format`, quantity, url, ip and cidr.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from celpy import celtypes

__all__ = ["KUBERNETES_FUNCTIONS"]


def _str(value: Any) -> str:
    if not isinstance(value, str):
        raise TypeError(f"no such overload: expected a string, got {type(value).__name__}")
    return str(value)


def _index_of(text: Any, sub: Any, start: Any = 0) -> celtypes.IntType:
    text, sub, start = _str(text), _str(sub), int(start)
    if not 0 <= start <= len(text):
        raise IndexError(f"index out of range: {start}")
    return celtypes.IntType(text.find(sub, start))


def _last_index_of(text: Any, sub: Any, end: Any = None) -> celtypes.IntType:
    text, sub = _str(text), _str(sub)
    end = len(text) if end is None else int(end)
    if not 0 <= end <= len(text):
        raise IndexError(f"index out of range: {end}")
    return celtypes.IntType(text.rfind(sub, 0, end + len(sub)))


def _split(text: Any, sep: Any, limit: Any = -1) -> celtypes.ListType:
    text, sep, limit = _str(text), _str(sep), int(limit)
    if limit == 0:
        return celtypes.ListType([])
    parts = text.split(sep, limit - 1) if limit > 0 else text.split(sep)
    return celtypes.ListType([celtypes.StringType(p) for p in parts])


def _substring(text: Any, start: Any, end: Any = None) -> celtypes.StringType:
    text = _str(text)
    start, end = int(start), len(text) if end is None else int(end)
    if not 0 <= start <= end <= len(text):
        raise IndexError(f"index out of range: {start}..{end}")
    return celtypes.StringType(text[start:end])


def _join(items: Any, sep: Any = "") -> celtypes.StringType:
    return celtypes.StringType(_str(sep).join(_str(i) for i in items))


def _sorted(items: Any) -> celtypes.BoolType:
    return celtypes.BoolType(all(a <= b for a, b in zip(items, list(items)[1:], strict=False)))


def _list_index(items: Any, value: Any) -> celtypes.IntType:
    return celtypes.IntType(next((i for i, v in enumerate(items) if v == value), -1))


def _list_last_index(items: Any, value: Any) -> celtypes.IntType:
    return celtypes.IntType(next((i for i in reversed(range(len(items))) if items[i] == value), -1))


def _index(receiver: Any, *args: Any) -> Any:
    return _list_index(receiver, *args) if isinstance(receiver, list) else _index_of(receiver, *args)


def _last_index(receiver: Any, *args: Any) -> Any:
    return _list_last_index(receiver, *args) if isinstance(receiver, list) else _last_index_of(receiver, *args)


def _sum(items: Any) -> Any:
    total: Any = celtypes.IntType(0)
    for i, v in enumerate(items):
        total = v if i == 0 else total + v
    return total


KUBERNETES_FUNCTIONS: dict[str, Callable[..., Any]] = {
    "charAt": lambda s, i: celtypes.StringType(_str(s)[int(i)] if int(i) < len(_str(s)) else ""),
    "indexOf": _index,
    "lastIndexOf": _last_index,
    "join": _join,
    "lowerAscii": lambda s: celtypes.StringType("".join(c.lower() if c.isascii() else c for c in _str(s))),
    "upperAscii": lambda s: celtypes.StringType("".join(c.upper() if c.isascii() else c for c in _str(s))),
    "replace": lambda s, old, new, n=-1: celtypes.StringType(_str(s).replace(_str(old), _str(new), int(n))),
    "split": _split,
    "substring": _substring,
    "trim": lambda s: celtypes.StringType(_str(s).strip()),
    "isSorted": _sorted,
    "sum": _sum,
    "min": lambda items: min(items),
    "max": lambda items: max(items),
}
