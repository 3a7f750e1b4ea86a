"""Whether a file may hold a number beyond a double, cheaply, for the typed fast paths.

orjson (and every loader as strict as it: serde_json, Python's json for the API layouts
that send it on) refuses ``1e400``: TD001.  msgspec skips such a number inside a field a
typed fast path does not declare, so a layout whose loader refuses it must not prove a
file clean that holds one.  Parsing the file to find out would cost what the fast path
saves; this looks at the bytes (one translation, a few substring searches), and may say
yes for a number-like run inside a string: the file is then read in full, which decides.
"""

from __future__ import annotations

# Digits all read as 0, E as e and a plus sign left out: a number's shape is then a few
# fixed substrings.
_SHAPE = bytes.maketrans(b"123456789E", b"000000000e")
_LEFT_OUT = b"+"
# A double overflows only when its integer digits and its exponent add up to more than
# 308: an exponent of three digits or more, or 210 integer digits with a smaller one.
_LONG_RUN = b"0" * 210
_EXPONENT = b"e000"
_MANTISSA = frozenset(b"0123456789.")
_BEFORE_NUMBER = frozenset(b":,[ \t\r\n")  # a number token follows one of these


def may_overflow(data: bytes) -> bool:
    """False when no JSON number in ``data`` can lie beyond a double."""
    shape = data.translate(_SHAPE, _LEFT_OUT)
    if _LONG_RUN in shape:
        return True
    at = shape.find(_EXPONENT)
    while at >= 0:
        if at and shape[at - 1] == 0x30 and _number_token(shape, at - 1):  # a digit before e
            return True
        at = shape.find(_EXPONENT, at + 1)
    return False


def _number_token(shape: bytes, at: int) -> bool:
    """Whether the mantissa ending at ``at`` (its last digit) starts a JSON number token,
    not a run inside a string or a word (a hash, base64, an identifier)."""
    start = at
    while start > 0 and shape[start - 1] in _MANTISSA:
        start -= 1
    if start > 0 and shape[start - 1] == 0x2D:  # "-"
        start -= 1
    return start == 0 or shape[start - 1] in _BEFORE_NUMBER
