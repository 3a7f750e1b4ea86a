"""A JSONL file's lines decoded into msgspec Structs, for the typed clean-proof paths.

The fast paths (claude_code, gemini_cli, pi) decode only the fields their proof reads; a
file they cannot decode whole (a line that does not decode or is nested deeper than
msgspec decodes, text that is not UTF-8, a BOM) goes to the reader's full read, which
reports it exactly.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import TypeVar

import msgspec

from transcript_doctor.source import BOM, UTF8_PIECE, Source, valid_utf8

T = TypeVar("T")


def decoded(data: bytes, decoder: msgspec.json.Decoder[T]) -> list[T] | None:
    """Every line's record, or None when one does not decode or the text is not UTF-8.

    Each line is decoded from a view of the file's bytes, and the text is checked in
    pieces of whole lines: a copy of the file's lines (or of its bytes, to check them)
    would raise the peak memory by the file's size, and copying them costs a fifth of the
    decoding.  The last line is tried first: a session is torn at its end, and the full
    read is then due anyway (in a file of more than one piece: a small one is decoded at
    once, and most are whole)."""
    if data.startswith(BOM):
        return None
    decode = decoder.decode
    view = memoryview(data)
    find = data.find
    records: list[T] = []
    append = records.append
    size = len(data)
    small = size <= UTF8_PIECE  # one piece: no last line tried first, ASCII checked at once
    try:
        last = 0 if small else size
        while last and data[last - 1] == 0x0A:
            last -= 1
        if last:
            decode(view[data.rfind(b"\n", 0, last) + 1 : last])
        if not valid_utf8(data, ascii_first=small):
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
