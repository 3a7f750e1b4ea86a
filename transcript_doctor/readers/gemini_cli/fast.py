"""The replay of a Gemini CLI JSONL stream from typed records, without a dict per line.

The reader replays the stream's edits (upserts by ``id``, ``$set`` rebuilds, ``$rewindTo``
cuts) to learn which line defines each surviving message, then parses those lines again
to convert them: the first pass only routes records, yet it built every line's dict
(tool outputs and thoughts are most of a session's bytes).  Here msgspec decodes each
line into the routing fields only (``_Record``), in C, skipping the rest; a ``$set``'s
``messages`` and a legacy record's are kept raw and decoded only on the rare lines that
hold them.  The file is not split into ``source.Line``s either: only the survivors' lines
are made, from the starts kept while decoding.  The replay (``reader._Replay``) and the
conversion of the survivors are the reader's own, so the conversation is the full
read's.

A line msgspec does not decode into ``_Record`` (torn, glued, not an object, a field of
another type, a ``$set`` that is neither an object nor null, NUL bytes, raw control
characters, a lone surrogate escape: msgspec refuses those even in the fields it skips)
is left to the reader's own reading of that line (``Records.failed``): the replay
treats each line alone, so a session torn at its end costs one diagnosed line, not a
full read.  ``records`` returns None, and the reader reads the whole file its own way,
for what only that way handles exactly: a line of blanks (the full read skips it, which
renumbers the records after it), more than a few lines that do not decode, a BOM, and
invalid UTF-8 anywhere (msgspec does not check the bytes of fields it skips; the file is
checked as a whole when it is not ASCII).  Numbers beyond a double (``1e400``) msgspec
skips and orjson refuses; Gemini CLI's loader (JSON.parse) reads them, so the full read
reports nothing for them either (``source.NODE``).
"""

from __future__ import annotations

from typing import Any

import msgspec

from transcript_doctor.source import BOM, Line, valid_utf8

ABSENT = msgspec.Raw(b"")  # a raw field the line does not hold
UNSET = msgspec.UNSET


class Set(msgspec.Struct, gc=False):
    """An object ``$set``: only its ``messages`` are read (most hold ``lastUpdated`` alone)."""

    messages: msgspec.Raw = ABSENT


class _Record(msgspec.Struct, gc=False):
    """What ``reader._stream_record`` asks of a record, in its order; any type, as it asks,
    but an object or null ``$set`` (another type does not decode: the full read)."""

    rewind: Any = msgspec.field(name="$rewindTo", default=None)
    id: Any = None
    update: Set | msgspec.UnsetType | None = msgspec.field(name="$set", default=UNSET)
    sessionId: Any = None
    projectHash: Any = None
    messages: msgspec.Raw = ABSENT  # a whole legacy record on one line


class _Item(msgspec.Struct, gc=False):
    id: Any = None


_DECODER = msgspec.json.Decoder(_Record)
_ITEMS = msgspec.json.Decoder(list[_Item])
value = msgspec.json.decode  # a raw field's value (``$set``, ``messages``): ids are all it is read for
Refused = (msgspec.DecodeError, msgspec.ValidationError)  # ``value`` refuses 1e400, JSON.parse reads it


def ids(raw: msgspec.Raw) -> list[Any] | None:
    """The ``id`` of each item of a raw ``messages`` list (None for an item that is not an
    object, or one without an id), or None when the value is not a list."""
    try:
        return [item.id for item in _ITEMS.decode(raw)]
    except msgspec.ValidationError:
        pass  # an item that is not an object, or no list at all: read it generically
    found = value(raw)
    if not isinstance(found, list):
        return None
    return [item.get("id") if isinstance(item, dict) else None for item in found]


class Records:
    """Every line's routing record (None for a line that does not decode: ``failed``
    lists them) and where each line starts in the file."""

    __slots__ = ("data", "failed", "records", "starts")

    def __init__(
        self, data: bytes, records: list[_Record | None], starts: list[int], failed: list[int]
    ) -> None:
        self.data, self.records, self.starts, self.failed = data, records, starts, failed

    def lines(self, wanted: set[int]) -> dict[int, Line]:
        """The ``source.Line`` of each wanted record: the file is not split into lines
        (every non-empty segment of a decoded file is a record: none is blank)."""
        data, starts = self.data, self.starts
        found: dict[int, Line] = {}
        number, at = 1, 0
        for index in sorted(wanted):
            start = starts[index]
            number += data.count(b"\n", at, start)
            at = start
            end = data.find(b"\n", start)
            end = len(data) if end < 0 else end
            stop = end - 1 if data[end - 1] == 0x0D else end
            found[index] = Line(index, number, start, stop)
        return found


_FEW = 8  # lines that do not decode, read one by one; more: the whole file is read


def records(data: bytes) -> Records | None:
    """Every line's routing record (``typed_lines.decoded``, with each line's start kept
    and a line that does not decode left to the reader), or None when the text is not
    UTF-8, has a line of blanks, or more than a few lines that do not decode."""
    if data.startswith(BOM):
        return None
    decode = _DECODER.decode
    view = memoryview(data)
    find = data.find
    found: list[_Record | None] = []
    starts: list[int] = []
    failed: list[int] = []
    append, mark = found.append, starts.append
    start, size = 0, len(data)
    if not valid_utf8(data):
        return None
    start = 0
    while start < size:
        end = find(b"\n", start)
        end = size if end < 0 else end
        if end > start:
            try:
                append(decode(view[start:end]))
            except (msgspec.DecodeError, msgspec.ValidationError, RecursionError):
                if len(failed) == _FEW or not data[start:end].strip():
                    return None  # a line of blanks: the full read does not count it
                failed.append(len(found))
                append(None)
            mark(start)
        start = end + 1
    return Records(data, found, starts, failed)
