"""The base of the spec's mirror enums: an unknown value passes through to the spec's own validation."""

from __future__ import annotations

from enum import StrEnum
from typing import Any

__all__ = ["SpecEnum"]


class SpecEnum(StrEnum):
    """A mirror of one of the spec's StrEnums, for the schema's enum types.

    The hosted provider validates the request's values with the spec itself (`SpecComponentProvider.map_inputs`),
    so these classes only describe the allowed values. An unknown value still becomes a pseudo-member holding it
    rather than a ValueError, so code that maps inputs along the schema (the SDK's `map_input_properties`,
    pulumi/pulumi sdk/python/lib/pulumi/provider/experimental/component.py) leaves the spec to report it with the
    field path, the value and the allowed values.
    """

    @classmethod
    def _missing_(cls, value: Any) -> SpecEnum:
        pseudo = str.__new__(cls, str(value))
        pseudo._name_ = None  # type: ignore[assignment]
        pseudo._value_ = value
        return pseudo
