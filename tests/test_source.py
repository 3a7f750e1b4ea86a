"""Byte-level reading: line splitting, container sniffing, TD001 diagnoses."""

from __future__ import annotations

import json
import re
from collections.abc import Callable

import orjson
import pytest

from transcript_doctor import jsonspan, readers
from transcript_doctor.source import (
    BOM,
    HEAD_RECORDS,
    UTF8_PIECE,
    Container,
    Line,
    NotJson,
    sniff,
    valid_utf8,
)


def test_jsonl_lines_keep_exact_spans_with_crlf_and_blank_lines() -> None:
    data = b'{"a":1}\r\n\n{"b":2}\n{"c":3}'
    source = sniff("x.jsonl", data)
    assert [(ln.index, ln.number, data[ln.start : ln.end]) for ln in source.lines] == [
        (0, 1, b'{"a":1}'),
        (1, 3, b'{"b":2}'),
        (2, 4, b'{"c":3}'),
    ]


def test_unicode_line_separators_do_not_split_records() -> None:
    data = '{"t":"a\u2028b\x85c"}\n{"t":"d"}\n'.encode()
    source = sniff("x.jsonl", data)
    assert [source.record(ln) for ln in source.lines] == [{"t": "a\u2028b\x85c"}, {"t": "d"}]


@pytest.mark.parametrize(
    ("name", "data", "container"),
    [
        ("a.json", b'[{"role":"user"}]', Container.JSON),
        ("a.jsonl", b'{"a":1}\n', Container.JSONL),
        ("a.txt", b'{"a":1}\n{"b":2}\n', Container.JSONL),
        ("a.json", b'{"a":1}\n{"b":2}\n', Container.JSONL),
        ("a", b'{"a":1}', Container.JSON),
    ],
)
def test_container_sniffing(name: str, data: bytes, container: Container) -> None:
    assert sniff(name, data).container is container


@pytest.mark.parametrize("data", [b"# readme", b"", b"\x00\x01\x02", b"name: x\n"])
def test_non_json_is_not_a_transcript(data: bytes) -> None:
    with pytest.raises(NotJson):
        sniff("a.json", data)


def _errors(data: bytes) -> list[tuple[int, str, str | None]]:
    source = sniff("x.jsonl", data)
    for line in source.lines:
        source.record(line)
    return [(e.line, e.message, e.repair) for e in source.errors]


def test_torn_final_line_can_be_dropped() -> None:
    assert _errors(b'{"a":1}\n{"b":2}\n{"c":') == [
        (3, "torn final line (invalid JSON: Expecting value at column 6)", "drop")
    ]


def test_glued_stub_can_be_split_off() -> None:
    source = sniff("x.jsonl", b'{"type":"pr-link","prNu{"parentUuid":null,"uuid":"u1"}\n{"a":1}\n')
    values = [source.record(line) for line in source.lines]
    assert values == [{"parentUuid": None, "uuid": "u1"}, {"a": 1}]
    (error,) = source.errors
    assert (error.line, error.repair, error.keep_from) == (1, "split", len(b'{"type":"pr-link","prNu'))


@pytest.mark.parametrize(
    ("line", "message"),
    [
        (b'{"a":"\x00\x00"}', "NUL bytes in the record (the file was damaged by a crash)"),
        (b'{"a":"\xff"}', "invalid UTF-8 at byte 6 of the record"),
        (b'{"a":NaN}', "NaN or Infinity, which JSON does not allow"),
        (b'{"a":"\\ud800"}', "a lone surrogate escape (\\ud800), which is not valid Unicode"),
    ],
)
def test_mid_file_damage_is_diagnosed_and_not_fixable(line: bytes, message: str) -> None:
    assert _errors(line + b'\n{"ok":1}\n') == [(1, message, None)]


def test_bom_is_reported_but_the_record_still_reads() -> None:
    source = sniff("x.jsonl", b'\xef\xbb\xbf{"a":1}\n{"b":2}\n')
    assert [source.record(line) for line in source.lines] == [{"a": 1}, {"b": 2}]
    assert [(e.line, e.repair) for e in source.errors] == [(1, None)]
    document = sniff("x.json", b'\xef\xbb\xbf[{"a":1}]')
    assert document.value == [{"a": 1}]
    assert [(e.line, e.repair) for e in document.errors] == [(1, None)]


def test_spans_resolve_pointers_to_lines() -> None:
    data = b'{\n  "messages": [\n    {"a": 1},\n    {"b": [1, {"c/d": "x"}]}\n  ]\n}'
    root = jsonspan.index(data)
    span = jsonspan.resolve(root, "/messages/1/b/1/c~1d")
    assert data[span.start : span.end] == b'"x"'
    assert data.count(b"\n", 0, jsonspan.resolve(root, "/messages/1").start) == 3
    assert jsonspan.join("messages", 1, "c/d", "~") == "/messages/1/c~1d/~0"


def _all_spans(span: jsonspan.Span, pointer: str = "") -> dict[str, tuple[int, int]]:
    found = {pointer: (span.start, span.end)}
    if span.items is not None:
        for index, item in enumerate(span.items):
            found.update(_all_spans(item, f"{pointer}/{index}"))
    if span.members is not None:
        for key, member in span.members.items():
            found.update(_all_spans(member, jsonspan.join(*jsonspan.split(pointer), key)))
    return found


def _refuse(text: str, at: int) -> tuple[object, int]:
    raise ValueError("as the scanner does beyond the recursion or int digit limit")


@pytest.mark.parametrize("depth", [1, 12])
@pytest.mark.parametrize("skip", ["scanned", "walked"])
def test_skipped_containers_end_where_the_walk_ends(
    depth: int, skip: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Containers are skipped (and arrays indexed) by the C scanner, or walked bracket by
    bracket where it refuses: each must end exactly where the container does, brackets
    in strings, whitespace and multi-byte characters aside."""
    if skip == "walked":
        monkeypatch.setattr(jsonspan, "_SCAN", _refuse)
    else:  # no walk to fall back on: the scanner's own result is what is checked
        monkeypatch.setattr(jsonspan, "_BRACKET", re.compile(b"(?!)"))
    inner = b'{"s": "a\\"]}[{ \\\\", "n" :\n [1, 2.5e3 , null,true], "e": { }, "a": [ ], "u": "\xc3\xa9"}'
    for _ in range(depth):
        inner = b"[ " + inner + b', {"k": "]\xe2\x82\xac"}\r\n ]'
    data = b'{"messages": [' + inner + b", " + inner + b"]}"
    spans = _all_spans(jsonspan.index(data))
    for pointer, (start, end) in spans.items():
        value = orjson.loads(data[start:end])
        assert value == jsonspan_value(data, pointer), pointer
    assert "/messages/1" + "/0" * depth + "/s" in spans


def test_nesting_beyond_the_recursion_limit_is_walked() -> None:
    deep = b"[" * 5000 + b"]" * 5000
    data = b'{"a": ' + deep + b', "b": 1}'
    root = jsonspan.index(data)
    assert data[root.child("a").start : root.child("a").end] == deep
    assert data[root.child("b").start : root.child("b").end] == b"1"


def jsonspan_value(data: bytes, pointer: str) -> object:
    value = orjson.loads(data)
    for token in jsonspan.split(pointer):
        value = value[int(token)] if isinstance(value, list) else value[token]
    return value


def test_line_numbers_are_the_same_counted_or_indexed() -> None:
    """The first lookups count newlines, later ones use an index: both agree."""
    data = b'{\n  "messages": [\n' + b",\n".join(b'    {"n": %d}' % i for i in range(40)) + b"\n  ]\n}"
    source = sniff("x.json", data)
    assert [source.line_at(f"/messages/{i}") for i in range(40)] == list(range(3, 43))


def test_detection_parses_the_head_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every reader detects on the same first records: they are parsed once, not per reader."""
    data = b"".join(b'{"role":"user","content":"m%d"}\n' % i for i in range(30))
    source = sniff("x.jsonl", data)
    parsed: list[bytes] = []
    real = orjson.loads
    monkeypatch.setattr("transcript_doctor.source.orjson.loads", lambda raw: parsed.append(raw) or real(raw))
    assert readers.detect(source) is not None
    assert len(parsed) == HEAD_RECORDS
    assert source.head(2) == [{"role": "user", "content": "m0"}, {"role": "user", "content": "m1"}]


_MESSAGES = [
    {"role": "user", "content": 'caf\u00e9 \u2028 "quoted" \\ [1]'},
    {"role": "assistant", "content": [{"type": "text", "text": "a\nb"}, {"type": "x", "n": 2.5, "e": []}]},
    {"empty": {}, "list": [1, [2, {}]], "null": None, "t": True},
    "a bare string,\n  {",  # what no writer puts in a message list, indexed all the same
    [7, [], [[]]],
]


def _stringify(value: object) -> bytes:  # JSON.stringify(value): compact, no escapes of non-ASCII
    return orjson.dumps(value)


def _pretty(value: object) -> bytes:  # JSON.stringify(value, null, 2)
    return orjson.dumps(value, option=orjson.OPT_INDENT_2)


def _python(indent: int, ascii_only: bool) -> Callable[[object], bytes]:
    return lambda value: json.dumps(value, indent=indent, ensure_ascii=ascii_only).encode()


@pytest.mark.parametrize(
    ("write", "compared"),
    [
        (_stringify, True),
        (_pretty, True),
        (_python(2, False), True),
        (_python(2, True), False),  # \\u escapes: not what orjson writes
        (_python(4, False), False),
        (lambda v: _pretty(v).replace(b"\n", b"\r\n"), False),
        (lambda v: _stringify(v).replace(b"2.5", b"2.50"), False),  # a number written otherwise
        (lambda v: _stringify(v).replace(b'{"role":"user",', b'{"role":"x","role":"user",'), False),
    ],
)
@pytest.mark.parametrize("wrapped", [True, False])
def test_serialized_lists_are_indexed_as_scanned(
    write: Callable[[object], bytes], compared: bool, wrapped: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A message list whose bytes are its parsed value serialized is indexed by comparing
    bytes: the spans are exactly the scanner's, and any other writing is scanned."""
    data = write({"model": "m", "messages": _MESSAGES} if wrapped else _MESSAGES)
    value = orjson.loads(data)
    scanned = _all_spans(jsonspan.index(data))
    matched: list[bool] = []
    serialized = jsonspan._serialized

    def spy(data: bytes, at: int, values: list[object]) -> object:
        laid = serialized(data, at, values)
        matched.append(laid is not None)
        return laid

    monkeypatch.setattr(jsonspan, "_serialized", spy)
    root = jsonspan.index(data, value=value)
    base = "/messages" if wrapped else ""
    for position in (1, 0, 1):  # one element asked for at a time, before the list is made whole
        element = jsonspan.resolve(root, f"{base}/{position}/content")
        assert (element.start, element.end) == scanned[f"{base}/{position}/content"]
    assert _all_spans(root) == scanned
    assert matched == [compared]


def test_records_read_each_line_as_record_does() -> None:
    """The streaming loop gives each line record()'s value and reports the same TD001
    errors, for lines detection parsed first and for the BOM's line alike."""
    data = BOM + b'{"a": 1}\n{"b": 2}\n\n{"torn": \n{"c": 3}\r\n[1]\n{"d": '
    streamed, recorded = sniff("x.jsonl", data), sniff("x.jsonl", data)
    streamed.head(2)
    values = [(line.number, value) for line, value in streamed.records()]
    assert values == [(line.number, recorded.record(line)) for line in recorded.lines]
    assert values == [(1, {"a": 1}), (2, {"b": 2}), (4, None), (5, {"c": 3}), (6, None), (7, None)]
    assert streamed.errors == recorded.errors and len(streamed.errors) == 4


def test_rejoined_pieces_are_one_error_even_when_read_again() -> None:
    """Source.rejoin replaces the pieces' errors by one; reading a piece again (a second
    read of the same source) does not bring its own error back."""
    source = sniff("x.jsonl", b'{"a":1}\n{"b":"x\ny"}\n{"c":3}\n')
    lines = source.lines
    for line in lines:
        source.record(line)
    assert [e.line for e in source.errors] == [2, 3]
    source.rejoin(lines[1], lines[2], "one record torn")
    for line in lines:
        source.record(line)
    assert [(e.line, e.record, e.repair, e.through) for e in source.errors] == [(2, 1, "rejoin", 2)]


_TAILS = [
    b"",
    b"\n",
    b"\r\n",
    b"\n\n",
    b"\n \t\n\r\n",
    b"\n\x0c\x0b\n",
    b"\r",
    b" ",
    b"\n\x00\n",
    b'\n{"b":2}',
    b"\n\n{\n",
]


@pytest.mark.parametrize("tail", _TAILS)
@pytest.mark.parametrize("head", [b"", b'{"a":1}\n', b'\n{"a":1}\r\n  \n'])
def test_a_line_is_last_exactly_when_only_blank_lines_follow_it(head: bytes, tail: bytes) -> None:
    """``Source._is_last`` answers what ``len(lines) - 1 == line.index`` answers, whatever
    blank lines, CRLF or whitespace follow the line, without splitting the file."""
    for torn in (b'{"t":"cut', b'{"t":"cut\r', b'{"t":"cut  '):
        data = head + torn + tail
        source = sniff("x.jsonl", data)
        lines = list(sniff("x.jsonl", data).lines)
        assert [source._is_last(line) for line in lines] == [line.index == len(lines) - 1 for line in lines]
        assert source._lines is None


def test_a_torn_final_line_is_diagnosed_without_splitting_the_file() -> None:
    """A fast path that reads one torn line alone (Gemini CLI's replay) learns it is the
    last one (a "drop" repair) without the whole file being split into lines: that split
    cost ~11 ms on a 22k-line session."""
    data = b'{"a":1}\n' * 1000 + b'{"t":"cut\r\n\n'
    source = sniff("x.jsonl", data)
    start = data.rindex(b'{"t"')
    source.record(Line(1000, 1001, start, start + len(b'{"t":"cut')))
    assert source._lines is None
    assert [(e.line, e.repair) for e in source.errors] == [(1001, "drop")]


@pytest.mark.parametrize("ascii_first", [True, False])
@pytest.mark.parametrize(
    "data",
    [
        b"",
        b'{"a":"plain"}\n',
        '{"a":"é😀"}\n'.encode(),
        b'{"a":"\xff"}\n',  # not UTF-8
        b'{"a":"\xed\xa0\x80"}\n',  # an encoded surrogate: not UTF-8
        # A character cut by the piece boundary (a line longer than a piece), then one after it.
        b'{"a":"' + b"x" * (UTF8_PIECE - 7) + "😀".encode() + b'"}\n{"b":"\xc3"}\n',
        b"x" * (UTF8_PIECE + 5) + b"\n" + "é".encode() * 3,
    ],
)
def test_valid_utf8_is_what_decoding_the_whole_text_says(data: bytes, ascii_first: bool) -> None:
    """The typed fast paths check UTF-8 a piece of whole lines at a time; the answer is
    the whole text's."""
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        whole = False
    else:
        whole = True
    assert valid_utf8(data, ascii_first) is whole


def test_line_numbers_counted_back_and_forth_are_the_ones_from_the_start() -> None:
    """A lookup counts from the one before it, backwards when it lies earlier: every
    order of lookups gives each element the line counted from the start."""
    data = b'{\n  "messages": [\n' + b",\n".join(b'    {"n": %d}' % i for i in range(12)) + b"\n  ]\n}"
    order = [7, 2, 2, 11, 0, 9, 5, 5, 1, 10, 3]
    source = sniff("x.json", data)
    assert [source.line_at(f"/messages/{i}") for i in order] == [i + 3 for i in order]
