"""Resource quantities as the API server reads them (`resource.Quantity`).

kubernetes/apimachinery v0.33.0 pkg/api/resource/quantity.go: `parseQuantityString` scans a sign, digits, an
optional `.` and digits, then a suffix (`quantitySuffixer.interpret`): a decimal SI suffix (n, u, m, k, M, G, T,
P, E), a binary one (Ki ... Ei) or an exponent (`e3`, `E-2`). A value that does not scan is refused when the
object is decoded, before admission, with `ErrFormatWrong` or `ErrSuffix`; a YAML number is read from its text.
"""

from __future__ import annotations

import math
from decimal import Decimal, InvalidOperation
from typing import Any

__all__ = ["QuantityError", "parse_quantity"]

SPLIT_RE = "^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$"
FORMAT_WRONG = f"quantities must match the regular expression '{SPLIT_RE}'"
SUFFIX_WRONG = "unable to parse quantity's suffix"
_DECIMAL_SI = {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
_BINARY_SI = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}
_SUFFIX_CHARS = frozenset("eEinumkKMGTP")
_MOST_TEXT = 128  # longer values are refused unread: no resource quantity is that long


class QuantityError(ValueError):
    """A value the API server cannot decode as a quantity; the message is the API server's."""


def parse_quantity(value: Any) -> Decimal:
    """The value of a quantity (a string, or a YAML number); QuantityError when the API server refuses it."""
    if value is None:
        return Decimal(0)  # JSON null decodes to the zero quantity
    if isinstance(value, bool):
        raise QuantityError(FORMAT_WRONG)  # `true` is not quoted, and scans as no number
    if isinstance(value, float) and not math.isfinite(value):
        raise QuantityError(FORMAT_WRONG)
    text = repr(value) if isinstance(value, float) else str(value)
    if not text or len(text) > _MOST_TEXT:
        raise QuantityError(FORMAT_WRONG)
    if text == "0":
        return Decimal(0)
    negative, number, suffix = _scan(text)
    scale = _interpret(suffix)
    amount = Decimal(number) if number not in ("", ".") else Decimal(0)
    amount = amount * scale
    return -amount if negative else amount


def _scan(text: str) -> tuple[bool, str, str]:
    """(negative, the number's text, the suffix), as `parseQuantityString` splits them."""
    pos, end = 0, len(text)
    negative = text[0] == "-"
    if text[0] in "+-":
        pos = 1
    start = pos
    while pos < end and text[pos].isascii() and text[pos].isdigit():
        pos += 1
    if pos < end and text[pos] == ".":
        pos += 1
        while pos < end and text[pos].isascii() and text[pos].isdigit():
            pos += 1
    number = text[start:pos]
    suffix_start = pos
    while pos < end and text[pos] in _SUFFIX_CHARS:
        pos += 1
    if pos < end and text[pos] in "+-":
        pos += 1
    while pos < end and text[pos].isascii() and text[pos].isdigit():
        pos += 1
    if pos < end:
        raise QuantityError(FORMAT_WRONG)
    return negative, number, text[suffix_start:]


def _interpret(suffix: str) -> Decimal:
    """The factor a suffix stands for (`suffixHandler.interpret`)."""
    if suffix in _DECIMAL_SI:
        return Decimal(10) ** _DECIMAL_SI[suffix]
    if suffix in _BINARY_SI:
        return Decimal(2) ** _BINARY_SI[suffix]
    if len(suffix) > 1 and suffix[0] in "eE":
        exponent = suffix[1:]
        digits = exponent.lstrip("+-")
        if digits.isascii() and digits.isdigit() and len(exponent) - len(digits) <= 1 and len(digits) <= 9:
            try:
                return Decimal(10) ** int(exponent)
            except (InvalidOperation, OverflowError):
                raise QuantityError(SUFFIX_WRONG) from None
    raise QuantityError(SUFFIX_WRONG)
