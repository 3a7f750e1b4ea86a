"""``analysis.numbers.may_overflow``: the cheap test a strict layout's typed fast path
asks before proving a file clean (msgspec skips a number orjson refuses)."""

from __future__ import annotations

import orjson
import pytest

from transcript_doctor.analysis.numbers import may_overflow


@pytest.mark.parametrize(
    "raw",
    [
        b'{"a":1e400}',
        b'{"a": -1.5E+308}',
        b'{"a":[1,2e999]}',
        b"[1E+0400]",
        b'{"a":' + b"1" * 250 + b"e60}",
        b'{"a":' + b"9" * 310 + b"}",
        b'{"a":0.5,\n"b":\t7e309}',
    ],
)
def test_a_number_orjson_may_refuse_is_seen(raw: bytes) -> None:
    assert may_overflow(raw)


@pytest.mark.parametrize(
    "raw",
    [
        b'{"a":1e-400}',
        b'{"a":1.5e99,"b":1.5e+99}',
        b'{"a":"x1e400","b":"sha 036b7e47 9ae3"}',
        b'{"e000":1,"id":"4079fe9726a9"}',
        b'{"a":' + b"1" * 200 + b"}",
    ],
)
def test_numbers_a_double_holds_are_not(raw: bytes) -> None:
    orjson.loads(raw)  # what orjson reads needs no full read
    assert not may_overflow(raw)


def test_every_number_orjson_refuses_for_its_range_is_seen() -> None:
    """Around the edge of a double: each number orjson refuses is seen."""
    for digits in range(1, 320, 7):
        for exponent in ("", "e5", "e99", "e100", "E+250", "e-5"):
            raw = b"[" + (b"9" * digits) + exponent.encode() + b"]"
            try:
                orjson.loads(raw)
            except orjson.JSONDecodeError:
                assert may_overflow(raw), raw[:20]
