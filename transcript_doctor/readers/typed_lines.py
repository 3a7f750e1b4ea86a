"""A JSONL file's lines decoded into msgspec Structs, for the typed clean-proof paths.

The fast paths (claude_code, gemini_cli, pi) decode only the fields their proof reads; a
file they cannot decode whole (a line that does not decode, text that is not UTF-8, a BOM)
goes to the reader's full read, which reports it exactly.
"""

from __future__ import annotations

from typing import TypeVar

import msgspec

from transcript_doctor.source import BOM

T = TypeVar("T")
_PIECE = 1 << 16  # bytes of whole lines checked as UTF-8 at a time


def decoded(data: bytes, decoder: msgspec.json.Decoder[T]) -> list[T] | None:
    """Every line's record, or None when one does not decode or the text is not UTF-8.

    Each line is decoded from a view of the file's bytes, and the text is checked in
    pieces of whole lines: a copy of the file's lines (or of its bytes, to check them)
    would raise the peak memory by the file's size, and copying them costs a fifth of the
    decoding.  The last line is tried first: a session is torn at its end, and the full
    read is then due anyway."""
    if data.startswith(BOM):
        return None
    decode = decoder.decode
    view = memoryview(data)
    find = data.find
    records: list[T] = []
    append = records.append
    start, size = 0, len(data)
    try:
        last = size
        while last and data[last - 1] == 0x0A:
            last -= 1
        if last:
            decode(view[data.rfind(b"\n", 0, last) + 1 : last])
        # The file is UTF-8 exactly when each piece is (a newline ends every sequence).
        # Pieces, not the whole: one decode of it all widens every character to the widest
        # (an emoji: four bytes each) and costs twice as much.
        while start < size:
            end = find(b"\n", start + _PIECE)
            end = size if end < 0 else end
            str(view[start:end], "utf-8")
            start = end + 1
        # An empty segment is an empty line: no record, as in the full read; a line of
        # blanks does not decode.
        start = 0
        while start < size:
            end = find(b"\n", start)
            end = size if end < 0 else end
            if end > start:
                append(decode(view[start:end]))
            start = end + 1
    except (msgspec.DecodeError, msgspec.ValidationError, UnicodeDecodeError):
        return None
    return records
