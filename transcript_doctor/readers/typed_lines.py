"""A JSONL file's lines decoded into msgspec Structs, for the typed clean-proof paths.

The fast paths (claude_code, gemini_cli, pi) decode only the fields their proof reads; a
file they cannot decode whole (a line that does not decode or is nested deeper than
msgspec decodes, text that is not UTF-8, a BOM) goes to the reader's full read, which
reports it exactly.

Every fast path's Structs are declared ``gc=False``: a decoded record refers only to what
was decoded from its line, never back, so it can be in no cycle, and the collector need
not track it (~0.7% fewer instructions over a tree of small files, most of them made and
freed there).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any, TypeVar

import msgspec

from transcript_doctor.analysis.numbers import may_overflow
from transcript_doctor.source import BOM, HEAD_RECORDS, UTF8_PIECE, Source, valid_utf8

T = TypeVar("T")


def decoded(data: bytes, decoder: msgspec.json.Decoder[T]) -> list[T] | None:
    """Every line's record, or None when one does not decode or the text is not UTF-8.

    A small file (one piece, ``UTF8_PIECE``) is decoded in one call into msgspec
    (``_at_once``): a call per line cost a third of the decoding there.  A larger one is
    decoded a line at a time, each from a view of the file's bytes, and its text is
    checked in pieces of whole lines: a copy of the file's lines (or of its bytes, to check
    them) would raise the peak memory by the file's size, and copying them costs a fifth
    of the decoding.  Its last line is tried first: a session is torn at its end, and the
    full read is then due anyway."""
    if data.startswith(BOM):
        return None
    size = len(data)
    small = size <= UTF8_PIECE  # one piece: decoded at once, ASCII checked at once
    if small:
        if not valid_utf8(data):
            return None
        records = _at_once(data, decoder)
        if records is not None:
            return records
    decode = decoder.decode
    view = memoryview(data)
    find = data.find
    records = []
    append = records.append
    try:
        last = 0 if small else size
        while last and data[last - 1] == 0x0A:
            last -= 1
        if last:
            decode(view[data.rfind(b"\n", 0, last) + 1 : last])
        if not small and not valid_utf8(data, ascii_first=False):
            return None
        # An empty segment is an empty line: no record, as in the full read; a line of
        # blanks does not decode.
        start = 0
        while start < size:
            end = find(b"\n", start)
            end = size if end < 0 else end
            if end > start:
                append(decode(view[start:end]))
            start = end + 1
    except (msgspec.DecodeError, msgspec.ValidationError, RecursionError):
        # RecursionError: msgspec's depth limit, a record the full read diagnoses (TD001).
        return None
    return records


# Per decoder, its type wrapped in a one-element array (``_at_once``).
_WRAPPED: dict[msgspec.json.Decoder[Any], msgspec.json.Decoder[Any]] = {}


def _at_once(data: bytes, decoder: msgspec.json.Decoder[T]) -> list[T] | None:
    """``decoded``'s records of a text of valid UTF-8 in one call into msgspec, or None
    when that call cannot tell (a line that does not decode, an empty or blank line, a
    depth at msgspec's limit): the caller then decodes a line at a time.

    Each line is wrapped in brackets (newlines become ``]\\n[``) and the lines are
    decoded as a stream of one-element arrays.  No value can run across a newline: each
    newline now follows a ``]`` and precedes a ``[``, which no JSON container takes
    without a comma between, and a string never holds a raw newline.  So every line makes
    at least one array, and when there are as many arrays as lines each line is exactly
    one array, ``[`` + the line + ``]``, whose one item is the line decoded alone (with
    one more level of nesting: msgspec's depth limit comes a level sooner, and such a file
    is decoded a line at a time).  An empty or blank line makes an empty array, which is
    no one-element array.  tests/test_fast_path.py compares this with the line-at-a-time
    decoding on every fixture and damaged variant (``mistral_vibe.fast._lines`` is the
    same decoding)."""
    wrapping = _WRAPPED.get(decoder)
    if wrapping is None:
        wrapping = _WRAPPED[decoder] = msgspec.json.Decoder(tuple[decoder.type])  # type: ignore[name-defined]
    text = b"[" + data.replace(b"\n", b"]\n[") + b"]"
    lines = (len(text) - len(data)) // 2  # each newline adds two bytes, the brackets two
    view = memoryview(text)
    if data.endswith(b"\n"):
        view, lines = view[:-2], lines - 1  # the "[]" after the last newline: no line
    try:
        arrays = wrapping.decode_lines(view)
    except (msgspec.DecodeError, msgspec.ValidationError, RecursionError):
        return None
    if len(arrays) != lines:
        return None  # a line of two values
    return [record for (record,) in arrays]


def decode_once(source: Source, decoder: msgspec.json.Decoder[T]) -> list[T] | None:
    """``decoded`` of the source's bytes, kept on the source for the next asker: a reader
    that settles detection from typed records (``Reader.decide``) leaves them to its proof."""
    memo = source.typed
    if decoder in memo:
        found: list[T] | None = memo[decoder]
        return found
    records = memo[decoder] = decoded(source.data, decoder)
    return records


def take(source: Source, decoder: msgspec.json.Decoder[T]) -> list[T] | None:
    """What ``decode_once`` kept (decoded now when nothing was), no longer kept: the proof
    owns the records, and a full read after a failed proof does not hold them too."""
    memo = source.typed
    if decoder in memo:
        found: list[T] | None = memo.pop(decoder)
        return found
    return decoded(source.data, decoder)


def segments(data: bytes, indexes: Iterable[int]) -> Iterator[bytes]:
    """The lines of ``data`` that ``decoded`` decodes at these record indexes (ascending),
    one at a time: a caller that needs only the first reads only up to it."""
    find = data.find
    start, size, index = 0, len(data), 0
    for target in indexes:
        while start < size:
            end = find(b"\n", start)
            end = size if end < 0 else end
            if end > start:
                index += 1
                if index - 1 == target:
                    yield data[start:end]
                    start = end + 1
                    break
            start = end + 1


def head_lines(data: bytes, keep: int = 1) -> list[bytes] | None:
    """The first ``keep`` of the lines that hold the head's records (the first
    ``HEAD_RECORDS`` lines that are not empty, in a file whose every line ``decoded``
    decodes), or None when those lines may not be exactly the head's: one holds a
    number beyond a double, which orjson, the head's parser, refuses (msgspec refuses
    everything else orjson refuses), so that a later line would be in the head."""
    find, size = data.find, len(data)
    lines: list[bytes] = []
    end = count = 0
    while count < HEAD_RECORDS and end < size:
        stop = find(b"\n", end)
        stop = size if stop < 0 else stop
        if stop > end:
            count += 1
            if count <= keep:
                lines.append(data[end:stop])
        end = stop + 1
    return None if may_overflow(data[:end]) else lines
