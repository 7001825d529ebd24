"""Resource quantities as the API server reads them (`resource.Quantity`).

kubernetes/apimachinery v0.33.0 pkg/api/resource/quantity.go: `UnmarshalJSON` reads `null` as zero and trims
spaces; `parseQuantityString` scans a sign, digits, an optional `.` and digits, then a suffix
(`quantitySuffixer.interpret`): a decimal SI suffix (n, u, m, k, M, G, T, P, E), a binary one (Ki ... Ei) or an
exponent (`e3`, `E-2`; `strconv.ParseInt` to 64 bits, kept as an int32). `ParseQuantity` then rounds the
magnitude up to a whole nano (1e-9) and caps a binary-suffixed value at 2^63 - 1. A value that does not scan is
refused when the object is decoded, before admission, with `ErrFormatWrong` or `ErrSuffix`; a YAML number is
read from its text.
"""

from __future__ import annotations

import math
from decimal import ROUND_UP, Context, Decimal, localcontext
from typing import Any

__all__ = ["QuantityError", "parse_quantity"]

SPLIT_RE = "^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$"
FORMAT_WRONG = f"quantities must match the regular expression '{SPLIT_RE}'"
SUFFIX_WRONG = "unable to parse quantity's suffix"
NUMERIC_WRONG = "unable to parse numeric part of quantity"
_DECIMAL_SI = {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
_BINARY_SI = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}
_SUFFIX_CHARS = frozenset("eEinumkKMGTP")
_NANO = Decimal("1e-9")
_MAX_BINARY = Decimal(2**63 - 1)  # maxAllowed: binary-suffixed values are capped here
_INT64 = 2**63


class QuantityError(ValueError):
    """A value the API server cannot decode as a quantity; the message is the API server's."""


def parse_quantity(value: Any) -> Decimal:
    """The value of a quantity (a string, or a YAML number); QuantityError when the API server refuses it."""
    if value is None:
        return Decimal(0)  # JSON null decodes to the zero quantity
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        raise QuantityError(FORMAT_WRONG)  # `true`, a list or an object: its JSON text scans as no number
    if isinstance(value, float) and not math.isfinite(value):
        raise QuantityError(FORMAT_WRONG)
    text = _trim_space(repr(value) if isinstance(value, float) else str(value))
    if not text:
        raise QuantityError(FORMAT_WRONG)
    if text == "0":
        return Decimal(0)
    negative, number, suffix = _scan(text)
    binary, exponent = _interpret(suffix)
    if not any(c in "0123456789" for c in number) and not _fast_path(number, binary, exponent):
        raise QuantityError(NUMERIC_WRONG)  # inf.Dec.SetString of "", "+" or "." fails
    # Exact arithmetic: enough digits for the text and a binary factor, and any exponent an int32 can hold.
    context = Context(prec=len(text) + 40, Emax=2**40, Emin=-(2**40))
    with localcontext(context):
        amount = Decimal(number) if number.strip(".") else Decimal(0)
        amount = amount * (Decimal(2) ** exponent) if binary else amount.scaleb(exponent)
        exponent_now = amount.as_tuple().exponent  # an int: the amount is finite
        if amount and isinstance(exponent_now, int) and exponent_now < -9:  # a fraction of a nano rounds up
            amount = amount.quantize(_NANO, rounding=ROUND_UP)
        if binary and amount > _MAX_BINARY:
            amount = _MAX_BINARY
    return -amount if negative else amount


def _trim_space(text: str) -> str:
    """`strings.TrimSpace`: Unicode white space at both ends (`str.strip` also takes U+001C-U+001F)."""
    start, end = 0, len(text)
    while start < end and text[start].isspace() and text[start] not in _NOT_GO_SPACE:
        start += 1
    while end > start and text[end - 1].isspace() and text[end - 1] not in _NOT_GO_SPACE:
        end -= 1
    return text[start:end]


_NOT_GO_SPACE = frozenset("\x1c\x1d\x1e\x1f")


def _fast_path(number: str, binary: bool, exponent: int) -> bool:
    """Whether `ParseQuantity` takes its int64 path, which reads a number with no digits as 0; the other path
    parses the number's text with `inf.Dec.SetString`, which refuses it."""
    whole, _, fraction = number.partition(".")
    digits = len(whole.lstrip("0") or "0") + len(fraction)
    if binary:
        return exponent >= 0 and not fraction and 15 - digits - int(exponent * 3 / 10) - 1 >= 0
    return 18 - digits >= 0 and exponent - len(fraction) >= -9


def _scan(text: str) -> tuple[bool, str, str]:
    """(negative, the number's text, the suffix), as `parseQuantityString` splits them."""
    pos, end = 0, len(text)
    negative = text[0] == "-"
    if text[0] in "+-":
        pos = 1
    start = pos
    while pos < end and text[pos] in "0123456789":
        pos += 1
    if pos < end and text[pos] == ".":
        pos += 1
        while pos < end and text[pos] in "0123456789":
            pos += 1
    number = text[start:pos]
    suffix_start = pos
    while pos < end and text[pos] in _SUFFIX_CHARS:
        pos += 1
    if pos < end and text[pos] in "+-":
        pos += 1
    while pos < end and text[pos] in "0123456789":
        pos += 1
    if pos < end:
        raise QuantityError(FORMAT_WRONG)
    return negative, number, text[suffix_start:]


def _interpret(suffix: str) -> tuple[bool, int]:
    """(binary, exponent) of a suffix (`suffixHandler.interpret`): base 2 or 10."""
    if suffix in _DECIMAL_SI:
        return False, _DECIMAL_SI[suffix]
    if suffix in _BINARY_SI:
        return True, _BINARY_SI[suffix]
    if len(suffix) > 1 and suffix[0] in "eE":
        digits = suffix[2:] if suffix[1] in "+-" else suffix[1:]
        significant = digits.lstrip("0") or "0"
        if digits and all(c in "0123456789" for c in digits) and len(significant) <= 19:
            parsed = int(significant) * (-1 if suffix[1] == "-" else 1)
            if -_INT64 <= parsed < _INT64:  # strconv.ParseInt(..., 10, 64), then int32(parsed)
                return False, (parsed + 2**31) % 2**32 - 2**31
    raise QuantityError(SUFFIX_WRONG)
