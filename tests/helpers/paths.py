"""Paths into nested spec data, for property tests that mutate one value at a time."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

__all__ = ["value_paths"]


def value_paths(node: Any, prefix: tuple = ()) -> Iterator[tuple]:
    """Every path (keys and list indices) to a value inside `node`, the root's empty path first."""
    yield prefix
    if isinstance(node, dict):
        for k, v in node.items():
            yield from value_paths(v, (*prefix, k))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from value_paths(v, (*prefix, i))
