"""The base of the spec's mirror enums: an unknown value passes through to the spec's own validation."""

from __future__ import annotations

from enum import StrEnum
from typing import Any

__all__ = ["SpecEnum"]


class SpecEnum(StrEnum):
    """A mirror of one of the spec's StrEnums.

    The SDK's component provider turns an enum input into `EnumType(value)` before the component sees it
    (pulumi/pulumi sdk/python/lib/pulumi/provider/experimental/component.py, `map_input_properties`) and reports an
    unknown value without the allowed ones. Here an unknown value becomes a pseudo-member holding it, so the
    spec's validation reports it exactly as the Python API does: field path, value and the allowed values.
    """

    @classmethod
    def _missing_(cls, value: Any) -> SpecEnum:
        pseudo = str.__new__(cls, str(value))
        pseudo._name_ = None  # type: ignore[assignment]
        pseudo._value_ = value
        return pseudo
