"""Proof that a Qwen Code session has no finding, without building its model.

The pattern of ``readers/pi/fast.py``: msgspec decodes each line into the few fields the
reader reads (``_Record``), in C, skipping the rest (system payloads, telemetry and tool
outputs are most of a session's bytes); a message's ``parts`` are kept raw and decoded
only for the records on the replayed chain.  The chain is walked as ``reader._walk``
walks it, its messages read as ``reader._messages`` reads them, and handed to the
clean-file screen as turns.  Only a session the screen proves clean is left unbuilt;
anything else is read in full, so the findings are the full read's.

What the proof does not handle falls back to the full read (``turns`` returns None):

- a line msgspec does not decode into ``_Record`` (torn, glued, not an object, a
  ``message`` that is not an object, NUL bytes, a lone surrogate escape), a line of
  blanks, a BOM, and invalid UTF-8 anywhere (``typed_lines.decoded``);
- a uuid written on more than one line (its records are merged, copies are TD403), a
  parent that names no record (TD404), a ``chat_compression`` record anywhere;
- ``parts`` that are not plain (``gemini_content.plain``), a call or result without an
  id (paired by position), and user content that is neither a prompt of text and media
  nor responses only.
"""

from __future__ import annotations

from typing import Any

import msgspec
import orjson
from msgspec import UNSET, Raw, UnsetType

from transcript_doctor.analysis.screen import ASSISTANT, OTHER, RESULT, Screen, Turn
from transcript_doctor.model import PartKind
from transcript_doctor.readers import gemini_content
from transcript_doctor.readers.typed_lines import decode_once, decoded, head_lines, segments, take
from transcript_doctor.source import HEAD_RECORDS, Source

_NULL = msgspec.Raw(b"null")  # absent ``parts``: no parts (``reader._parts``)
_PROMPT_KINDS = (PartKind.TEXT, PartKind.MEDIA)


class _Message(msgspec.Struct, gc=False):
    role: Any = None
    parts: msgspec.Raw = _NULL
    content: Raw | UnsetType = UNSET  # read only by detection (Claude Code's message)


class _Record(msgspec.Struct, gc=False):
    """What ``reader._entry`` asks of a record (any type, as it asks), and what detection
    asks of it (``head``; UNSET: the key is absent)."""

    uuid: Any = None
    parentUuid: Any = UNSET
    type: Any = None
    subtype: Any = None
    message: _Message | UnsetType | None = UNSET
    sessionId: Any = None
    timestamp: Any = None
    cwd: Any = None
    version: Any = None
    systemPayload: Raw | UnsetType = UNSET
    userType: Raw | UnsetType = UNSET
    toolUseResult: Raw | UnsetType = UNSET
    # The keys of Gemini CLI's registry entry, the one reader listed before this one.
    projectHash: Raw | UnsetType = UNSET
    set_: Raw | UnsetType = msgspec.field(default=UNSET, name="$set")
    rewindTo: Raw | UnsetType = msgspec.field(default=UNSET, name="$rewindTo")


_DECODER = msgspec.json.Decoder(_Record)
PROBED = frozenset({"projectHash", "$set", "$rewindTo"})  # ``head``: no head record holds one
_VALUE = msgspec.json.decode
_UNSENT = frozenset({"realtime_message", "code_mode_tool_result"})  # reader.UNSENT_SUBTYPES


def clean(data: bytes, screen: Screen) -> bool:
    """True when no rule can find anything in this Qwen Code session."""
    found = turns(data)
    return found is not None and screen.clean(found)


def head(source: Source) -> tuple[list[_Record], bool] | None:
    """The head's records as typed records (``decode_once``: the proof takes them), and
    whether they are exactly the head's; None when they may not hold the head's or one
    holds a key of ``PROBED``.

    The first line is decoded alone first: a file of another layout that shows a marker
    (``readers._MODULES``) costs one line.  Every line decodes (an object), and when none
    of the head's lines holds a number beyond a double, orjson, the head's parser, reads
    each of them (msgspec refuses what orjson refuses otherwise), so the head is exactly
    the first lines, with the same values.  A session of at most ``HEAD_RECORDS`` lines
    is not searched for such a number: its head is some of its records, in order (those
    orjson reads), and the caller asks ``parses`` of a record it needs in the head."""
    data = source.data
    start = 0
    while start < len(data) and data[start] == 0x0A:
        start += 1
    stop = data.find(b"\n", start)
    try:
        first = _DECODER.decode(data[start : len(data) if stop < 0 else stop])
    except (msgspec.DecodeError, msgspec.ValidationError, RecursionError):
        return None
    if first.type.__class__ is not str or first.uuid.__class__ is not str:
        return None  # not Qwen's envelope: detect does not claim it
    records = decode_once(source, _DECODER)
    if not records:
        return None
    found = records[:HEAD_RECORDS]
    for record in found:
        if record.projectHash is not UNSET or record.set_ is not UNSET or record.rewindTo is not UNSET:
            return None
    if len(records) <= HEAD_RECORDS:
        return found, False
    return None if head_lines(data, 0) is None else (found, True)


def parses(source: Source, index: int) -> bool:
    """Whether orjson, the head's parser, reads the line of record ``index``: then that
    record is one of the head's (``head``)."""
    try:
        orjson.loads(next(segments(source.data, (index,))))
    except orjson.JSONDecodeError:
        return False
    return True


def turns(data: bytes, source: Source | None = None) -> list[Turn] | None:
    """The screen's turns of the replayed chain, or None where only the full read tells.
    ``source``: the session's, whose typed records detection may have decoded (``head``)."""
    records = take(source, _DECODER) if source is not None else decoded(data, _DECODER)
    if not records:
        return None
    first: dict[str, _Record] = {}
    last: _Record | None = None
    for record in records:
        uuid = record.uuid
        if uuid.__class__ is not str or not uuid:
            continue  # not a chain member (reader._entry)
        if uuid in first:
            return None  # merged records, or a copy (TD403)
        if record.type == "system" and record.subtype == "chat_compression":
            return None
        first[uuid] = last = record
    if last is None:
        return None
    for record in first.values():
        parent = record.parentUuid
        if parent.__class__ is str and parent and parent not in first:
            return None  # TD404
    chain: list[_Record] = []
    seen: set[str] = set()
    current: _Record | None = last
    while current is not None and current.uuid not in seen:
        seen.add(current.uuid)
        chain.append(current)
        parent = current.parentUuid
        current = first.get(parent) if parent.__class__ is str and parent else None
    chain.reverse()
    found: list[Turn] = []
    try:
        for record in chain:
            message = record.message
            subtype = record.subtype
            if subtype is not None and subtype.__class__ is not str:
                return None
            if message is None or message is UNSET or record.type == "system" or subtype in _UNSENT:
                continue  # not replayed, or no message
            if not _turns(message, record.type, found):
                return None
    except (msgspec.DecodeError, msgspec.ValidationError, RecursionError):
        return None  # a value msgspec refuses (1e400, nesting past its limit): the full read
    return found


def _turns(message: _Message, kind: Any, found: list[Turn]) -> bool:
    """Add one message's turns (``reader._role``, ``reader._parts``); False where it is
    not plain."""
    role = message.role
    model = role == "model" or (role != "user" and kind == "assistant")
    items = _VALUE(message.parts)
    parts = gemini_content.plain(items) if isinstance(items, list) else []
    if not parts:
        return False  # None (not plain), or no parts: the screen does not take it
    # `{text:"", thoughtSignature}` is thinking (``reader._parts``): never a prompt's text.
    parts = [(PartKind.THINKING, *p[1:]) if p[0] is PartKind.TEXT and not p[1] and p[3] else p for p in parts]
    if model:
        texts: list[str] = []
        ids: list[str] = []
        for part_kind, text, call_id, _ in parts:
            if part_kind is PartKind.TEXT:
                texts.append(text)
            elif part_kind is PartKind.TOOL_CALL:
                if call_id is None:
                    return False
                ids.append(call_id)
            elif part_kind is not PartKind.THINKING:
                return False
        found.append((ASSISTANT, "".join(texts) if texts else None, tuple(ids)))
    elif all(p[0] in _PROMPT_KINDS for p in parts):
        found.append((OTHER, None, ()))
    elif all(p[0] is PartKind.TOOL_RESULT and p[2] is not None for p in parts):
        found.extend((RESULT, None, (p[2],)) for p in parts)
    else:
        return False
    return True
