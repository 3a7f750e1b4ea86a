"""The typed decoding of small files in one call, and the Claude Code proof's shortcuts,
are exact: they give what decoding a line at a time and deriving the tree give, on every
fixture and corpus file and on damaged variants of the Claude Code sessions."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import msgspec
import pytest
from support import FIXTURES, SHARED, corpus_id, json_files
from test_fast_path import CLAUDE, _content_damage, _variants

from transcript_doctor.readers import typed_lines
from transcript_doctor.readers.claude_code import chain
from transcript_doctor.readers.claude_code import fast as claude
from transcript_doctor.readers.codex import fast as codex
from transcript_doctor.readers.copilot_cli import fast as copilot
from transcript_doctor.readers.openworker import fast as openworker
from transcript_doctor.readers.pi import fast as pi
from transcript_doctor.readers.qwen_code import fast as qwen
from transcript_doctor.source import UTF8_PIECE

# Every decoder that reads lines through ``typed_lines.decoded``.
DECODERS: list[msgspec.json.Decoder[Any]] = [
    claude._DECODER,
    claude._METADATA,
    codex._DECODER,
    copilot._DECODER,
    openworker._DECODER,
    pi._DECODER,
    qwen._DECODER,
]
SMALL = [
    p
    for p in [*json_files(FIXTURES), *json_files(SHARED)]
    if p.suffix in (".jsonl", ".ndjson") and p.stat().st_size <= UTF8_PIECE
]


def _one_at_a_time(
    data: bytes, decoder: msgspec.json.Decoder[Any], monkeypatch: pytest.MonkeyPatch
) -> object:
    with monkeypatch.context() as patched:
        patched.setattr(typed_lines, "_at_once", lambda data, decoder: None)
        return typed_lines.decoded(data, decoder)


def _same(data: bytes, monkeypatch: pytest.MonkeyPatch) -> None:
    for decoder in DECODERS:
        assert typed_lines.decoded(data, decoder) == _one_at_a_time(data, decoder, monkeypatch)


def test_there_are_small_files_of_every_decoder() -> None:
    assert len(SMALL) > 100


@pytest.mark.parametrize("path", SMALL, ids=corpus_id)
def test_small_files_decode_at_once_as_a_line_at_a_time(path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _same(path.read_bytes(), monkeypatch)


@pytest.mark.parametrize("path", CLAUDE, ids=lambda p: p.name)
def test_damaged_sessions_decode_at_once_as_a_line_at_a_time(
    path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = path.read_bytes()
    for variant in [*_variants(data), *_content_damage(data)]:
        _same(variant, monkeypatch)


LINE = b'{"type":"user","uuid":"u1","parentUuid":null,"message":{"role":"user","content":"hi"}}'
ODD = {
    "empty": b"",
    "a newline": b"\n",
    "newlines": b"\n\n",
    "one line": LINE,
    "one line ended": LINE + b"\n",
    "ended twice": LINE + b"\n\n",
    "an empty line first": b"\n" + LINE,
    "an empty line between": LINE + b"\n\n" + LINE,
    "a blank line": LINE + b"\n  \n" + LINE,
    "a carriage return line": LINE + b"\n\r\n" + LINE,
    "CRLF": LINE + b"\r\n" + LINE + b"\r\n",
    "blanks around": b"  " + LINE + b" \t",
    "two values": LINE + b" " + LINE,
    "two values bracketed": LINE + b"] [" + LINE,
    "a line closing the next": LINE[:-1] + b"\n}",
    "an array": b"[" + LINE + b"]",
    "a value across lines": b'{"type":\n"user"}',
    "not an object": b"1\n" + LINE,
    "a string": b'"x"',
    "nothing but brackets": b"][",
    "deep": b'{"x":' + b"[" * 1022 + b"]" * 1022 + b"}",
    "deeper": b'{"x":' + b"[" * 1023 + b"]" * 1023 + b"}",
    "deepest": b'{"x":' + b"[" * 1100 + b"]" * 1100 + b"}",
}


@pytest.mark.parametrize("name", ODD)
def test_odd_texts_decode_at_once_as_a_line_at_a_time(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    _same(ODD[name], monkeypatch)


def test_a_clean_session_is_decoded_in_one_call() -> None:
    """The one-call decoding is not a fallback taken by every file."""
    path = FIXTURES / "claude-code" / "clean-rewound-branch.jsonl"
    data = path.read_bytes()
    records = typed_lines._at_once(data, claude._DECODER)
    assert records is not None and len(records) == len([line for line in data.split(b"\n") if line])


def _timestamp_key_as_before(value: str) -> float | None:
    """``chain.timestamp_key`` as it was, through ``calendar.timegm``."""
    import calendar

    found = chain._ISO.match(value)
    if found is None:
        return None
    year, month, day, hour, minute, second = (int(found.group(i)) for i in range(1, 7))
    try:
        seconds: float = calendar.timegm((year, month, day, hour, minute, second, 0, 0, 0))
    except (ValueError, OverflowError):
        return None
    fraction = found.group(7)
    if fraction:
        seconds += int(fraction[:6].ljust(6, "0")) / 1_000_000
    zone = found.group(8)
    if zone and zone != "Z":
        sign = -1 if zone[0] == "+" else 1
        digits = zone[1:].replace(":", "")
        seconds += sign * (int(digits[:2]) * 3600 + int(digits[2:]) * 60)
    return seconds


TIMES = [
    "2025-12-10T19:37:45.343Z",
    "2025-12-10T19:37:45Z",
    "2025-12-10 19:37:45.1234567+02:00",
    "2025-12-10T19:37:45.5-0130",
    "2024-02-29T00:00:00.000Z",
    "2023-02-29T00:00:00.000Z",  # no such day: timegm counts on, as Date.parse does not check here either
    "2025-01-99T99:99:99.000Z",
    "2025-13-01T00:00:00.000Z",
    "2025-00-01T00:00:00.000Z",
    "0000-01-01T00:00:00.000Z",
    "0001-01-01T00:00:00.000Z",
    "9999-12-31T23:59:59.999999Z",
    "1969-12-31T23:59:59.999Z",
    "\u0662\u0660\u0662\u0665-01-01T00:00:00Z",  # digits of another script: \d takes them
    "2025-12-10T19:37:45.343Zjunk",
    "2025-12-10",
    "",
]


def test_leaf_times_are_read_as_before() -> None:
    times = list(TIMES)
    for path in CLAUDE:
        for record in typed_lines.decoded(path.read_bytes(), claude._DECODER) or ():
            if record.timestamp:
                times.append(record.timestamp)
    assert len(times) > 100
    for value in times:
        assert chain.timestamp_key(value) == _timestamp_key_as_before(value), value


def _foreign(data: bytes) -> list[bytes]:
    """A key of another layout's lines (``fast._Foreign``) on one line, any line: no typed
    records then, so detection parses the head and the full read reads the file."""
    lines = data.split(b"\n")
    found: list[bytes] = []
    for i, line in enumerate(lines[:40]):
        if line.startswith(b"{"):
            found += [
                b"\n".join([*lines[:i], changed, *lines[i + 1 :]])
                for changed in (
                    b'{"projectHash":"x",' + line[1:],
                    b'{"$set":{},' + line[1:],
                    b'{"$rewindTo":null,' + line[1:],
                    b'{"systemPayload":1,' + line[1:],
                    line.replace(b'"message":{', b'"message":{"parts":[],', 1),
                )
            ]
    return found


@pytest.mark.parametrize("path", CLAUDE, ids=lambda p: p.name)
def test_a_foreign_key_on_any_line_is_linted_as_the_full_read(path: Path) -> None:
    from test_fast_path import _options

    from transcript_doctor import engine
    from transcript_doctor.reporters import record

    data = path.read_bytes()
    undecoded = 0
    for variant in _foreign(data) if len(data) < 40_000 else []:
        undecoded += typed_lines.decoded(variant, claude._DECODER) is None
        fast, full = (engine.lint_bytes(path.name, variant, _options(screen)) for screen in (True, False))
        assert (fast.reader, [record(fast, f) for f in fast.findings]) == (
            full.reader,
            [record(full, f) for f in full.findings],
        )
    assert undecoded or len(data) >= 40_000


def _tree_as_before(
    records: list[Any], at: list[int], known: set[str], bridged: bool
) -> tuple[list[int], int | None] | None:
    """The chain derived from an entry per chain line, progress lines too, bridged and
    dropped by ``chain.load``: what the proof derived before ``_tree``."""
    entries = claude._entries(records, at)
    if not known.issuperset([e.parent for e in entries.values() if e.parent is not None]):
        return None
    if bridged:
        chain.load(entries, set(), None, -1)
    leaf = chain.newest_leaf(entries)
    walked = chain.walk(entries, leaf) if leaf is not None else []
    return [e.index for e in walked], leaf.index if leaf is not None else None


@pytest.mark.parametrize("path", CLAUDE + [p for p in SMALL if "claude" in p.parent.name], ids=corpus_id)
def test_the_tree_is_derived_as_before(path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``_tree`` makes no entry for a progress line (``chain.resolve`` bridges past it):
    the same chain and leaf as bridging and dropping entries, for every session and
    every damage of it, every chain derived as a tree."""
    from transcript_doctor.analysis.screen import Screen
    from transcript_doctor.catalog import load

    asked: list[tuple[Any, ...]] = []

    def tree(records: list[Any], at: list[int], known: set[str], bridged: bool) -> object:
        asked.append((records, at, known, bridged))
        return derive(records, at, known, bridged)

    derive = claude._tree
    monkeypatch.setattr(claude, "_tree", tree)
    data = path.read_bytes()
    variants = [data] if len(data) > 40_000 else [data, *_variants(data), *_content_damage(data)]
    screen = Screen(load())
    for variant in variants:
        claude.prove_records(typed_lines.decoded(variant, claude._DECODER), screen, False, variant)
    assert asked or b'"uuid"' not in data
    for records, at, known, bridged in asked:
        derived = derive(records, at, known, bridged)
        made = None if derived is None else ([e.index for e in derived[0]], derived[1] and derived[1].index)
        assert made == _tree_as_before(records, at, known, bridged)


# Texts of the shape of Claude Code's own stamps (24 characters, ending in Z) that datetime
# may read otherwise than the pattern does: each must be read as before.
CANONICAL_SHAPED = [
    "2025-12-10x19:37:37.157Z",  # another separator: datetime takes any
    "2025-12-10 19:37:37.157Z",
    "2025-12-10T19:37:37,157Z",
    "2025-12-10T19:37:37.15 Z",
    "2025-12-10T19:37:37.157z",
    "2025-02-30T19:37:37.157Z",  # out of range for datetime, counted on by timegm
    "2025-12-10T24:00:00.000Z",
    "2025-12-10T23:59:60.000Z",
    "2025-12-10T23:60:00.000Z",
    "2025-12-32T00:00:00.000Z",
    "2025-13-10T00:00:00.000Z",
    "0000-12-10T00:00:00.000Z",
    "+025-12-10T19:37:37.157Z",
    "2025-1-10T19:37:37.1577Z",
    "20251210T193737.1570000Z",
    "2025-12-10T19:37:37+0100",
    "2025-W50-3T19:37:37.157Z",
    "\u0662\u0660\u0662\u0665-12-10T19:37:37.157Z",
    "1970-01-01T00:00:00.000Z",
    "1969-12-31T23:59:59.999Z",
    "9999-12-31T23:59:59.999Z",
    "0001-01-01T00:00:00.001Z",
]


def test_stamps_of_claude_codes_own_shape_are_read_as_before() -> None:
    for value in CANONICAL_SHAPED:
        assert len(value) == 24
        assert chain.timestamp_key(value) == _timestamp_key_as_before(value), value
    assert chain.timestamp_key("2025-12-10T19:37:37.157Z") == 1765395457.157
