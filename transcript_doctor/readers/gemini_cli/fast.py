"""The replay of a Gemini CLI JSONL stream from typed records, without a dict per line.

The reader replays the stream's edits (upserts by ``id``, ``$set`` rebuilds, ``$rewindTo``
cuts) to learn which line defines each surviving message, then parses those lines again
to convert them: the first pass only routes records, yet it built every line's dict
(tool outputs and thoughts are most of a session's bytes).  Here msgspec decodes each
line into the routing fields only (``_Record``), in C, skipping the rest; ``$set`` and a
legacy record's ``messages`` are kept raw and decoded only on the rare lines that hold
them.  The replay (``reader._Replay``) and the conversion of the survivors are the
reader's own, so the conversation is the full read's.

``records`` returns None, and the reader takes its own path, for what only that path
handles exactly: a line msgspec does not decode into ``_Record`` (torn, glued, not an
object, a field of another type, NUL bytes, raw control characters, a lone surrogate
escape: msgspec refuses those even in the fields it skips), a line of blanks, a BOM, and
invalid UTF-8 anywhere (msgspec does not check the bytes of fields it skips; the file is
checked as a whole when it is not ASCII).  Numbers beyond a double (``1e400``) msgspec
skips and orjson refuses; Gemini CLI's loader (JSON.parse) reads them, so the full read
reports nothing for them either (``source.NODE``).
"""

from __future__ import annotations

from typing import Any

import msgspec

from transcript_doctor.readers.typed_lines import decoded

ABSENT = msgspec.Raw(b"")  # a raw field the line does not hold


class _Record(msgspec.Struct):
    """What ``reader._stream_record`` asks of a record, in its order; any type, as it asks."""

    rewind: Any = msgspec.field(name="$rewindTo", default=None)
    id: Any = None
    update: msgspec.Raw = msgspec.field(name="$set", default=ABSENT)
    sessionId: Any = None
    projectHash: Any = None
    messages: msgspec.Raw = ABSENT  # a whole legacy record on one line


_DECODER = msgspec.json.Decoder(_Record)
value = msgspec.json.decode  # a raw field's value (``$set``, ``messages``): ids are all it is read for
Refused = (msgspec.DecodeError, msgspec.ValidationError)  # ``value`` refuses 1e400, JSON.parse reads it


def records(data: bytes) -> list[_Record] | None:
    """Every line's routing record, or None when one does not decode or the text is not
    UTF-8."""
    return decoded(data, _DECODER)
