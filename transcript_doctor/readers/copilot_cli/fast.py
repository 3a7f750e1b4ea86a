"""Proof that a Copilot CLI event log has no finding, without building its model.

The pattern of ``readers/pi/fast.py``: msgspec decodes each line into the envelope and the
few ``data`` fields the reader reads (``_Event``), in C, skipping the rest (tool results,
tool arguments and the bookkeeping events are most of a log's bytes and no rule reads
them).  The main agent's events are replayed as ``reader._History`` replays them (late
prompts held behind the open calls' results) and the turns handed to the clean-file
screen.  Only a log the screen proves clean is left unbuilt; anything else is read in
full, so the findings are the full read's.

What the proof does not handle falls back to the full read (``clean`` returns False):

- a line that is no event exactly as ``envelope.is_event`` asks it (a key the envelope does not
  have, one it needs missing, a field of another type), a torn or glued line, a line of
  blanks, a BOM, NUL bytes, a lone surrogate escape (msgspec refuses it; JSON.parse reads
  it, and the full read decides), and invalid UTF-8 anywhere (the CLI reads it as U+FFFD,
  still TD001).  A number beyond a double is no damage for Copilot's loader (JSON.parse
  reads it): msgspec skipping it changes nothing;
- ``toolRequests`` that is not a list of objects, a tool request or completion without a
  string ``toolCallId``, a reply with neither text
  nor calls, and two prompts in a row with the same event id (TD403).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import msgspec

from transcript_doctor.analysis.screen import ASSISTANT, OTHER, RESULT, Screen, Turn
from transcript_doctor.readers.copilot_cli.envelope import LATE_DELIVERY, is_event
from transcript_doctor.readers.typed_lines import decode_once, decoded, take
from transcript_doctor.source import Line, Source


class _Request(msgspec.Struct, gc=False):
    toolCallId: Any = None


_NULL = msgspec.Raw(b"null")


class _Data(msgspec.Struct, gc=False):
    """The ``data`` fields the replay reads.  ``content`` is kept as raw bytes: a reply's
    is decoded (``_typed``), a prompt's or a tool's is never read (building every event's
    text cost a fifth of the decoding)."""

    content: msgspec.Raw = _NULL  # assistant, user and system messages
    toolRequests: list[_Request] | None = None
    toolCallId: Any = None  # tool.execution_complete
    delivery: Any = None  # user.message


class _Event(msgspec.Struct, forbid_unknown_fields=True, gc=False):
    """``envelope.is_event``: exactly the envelope's keys, the required ones present."""

    type: str
    data: _Data
    id: str
    timestamp: str
    parentId: str | None
    agentId: Any = None
    ephemeral: Any = None


_DECODER = msgspec.json.Decoder(_Event)
_TEXT = msgspec.json.Decoder(str)
_QUOTE = 0x22  # the first byte of a raw value that is a string
# Keys of the registry entries listed before Copilot CLI that no event holds (every line
# decodes into ``_Event``, which forbids a key the envelope does not have).
ABSENT = frozenset(
    {"projectHash", "$set", "$rewindTo", "uuid", "leafUuid", "snapshot", "operation", "payload", "ts"}
)
# What the replay makes of the events: a prompt (with its event id), a system message, a
# reply (its text and call ids), a run of tool messages (their call ids).
_PROMPT, _SYSTEM, _REPLY, _RESULTS = range(4)


class _Unplain(Exception):
    """Something the screen does not cover: the full read decides."""


def first_line(source: Source) -> bytes | None:
    """The log's first line when every line decodes into ``_Event`` (``decode_once``: the
    proof takes the events), so that no record of the head holds a key of ``ABSENT``;
    else None.  The reader parses it with orjson, as the head parses it, and asks it
    what ``detect`` asks of the head's first record."""
    if not decode_once(source, _DECODER):
        return None
    data = source.data
    start = 0
    while data[start] == 0x0A:  # an empty line: none of the head's
        start += 1
    stop = data.find(b"\n", start)
    return data[start : len(data) if stop < 0 else stop]


def decoded_on(source: Source) -> bool:
    """Whether detection decoded the log's events (``first_line``) for the proof."""
    return _DECODER in source.typed


def prove(data: bytes, screen: Screen, source: Source | None = None) -> bool | None:
    """The screen's answer on an event log (False: ``screen.cut`` says where it may be
    built from), or None where the proof does not cover it.  Where it covers it, every
    line is an event that parses.  ``source``: the log's, whose events detection may have
    decoded (``first_line``)."""
    events = take(source, _DECODER) if source is not None else decoded(data, _DECODER)
    if not events:
        return None
    try:
        return screen.clean(_turns(map(_typed, events)))
    except _Unplain:
        return None


def clean(data: bytes, screen: Screen) -> bool:
    """True when no rule can find anything in this event log."""
    return prove(data, screen) is True


def clean_records(records: list[tuple[Line, Any]], screen: Screen) -> bool:
    """``clean`` on records the source has parsed (a short log: detection parsed them all),
    every one an event (``envelope.is_event``), else False."""
    try:
        return screen.clean(_turns(map(_parsed, records)))
    except _Unplain:
        return False


# One event as the replay reads it: its type, agent, id, the text of a message (None if
# not a string), the call ids it requests, the call id it completes, its delivery.
_Step = tuple[str, Any, str, Any, list[str], Any, Any]


def _typed(event: _Event) -> _Step:
    """The step of an event.  The text of a message the replay reads (an assistant's or a
    system message's: ``_turns`` asks only whether the latter is a string) is decoded from
    its raw bytes, a string's first byte a quote (``Raw`` holds the value alone); any
    other content is None, as no string."""
    data = event.data
    kind = event.type
    ids: list[str] = []
    content: str | None = None
    if kind == "assistant.message":
        for request in data.toolRequests or ():
            if not isinstance(request.toolCallId, str):
                raise _Unplain
            ids.append(request.toolCallId)
        raw = data.content
        if memoryview(raw)[0] == _QUOTE:
            content = _TEXT.decode(raw)
    elif kind == "system.message" and memoryview(data.content)[0] == _QUOTE:
        content = ""  # a string: the replay reads no more of it
    return kind, event.agentId, event.id, content, ids, data.toolCallId, data.delivery


def _parsed(item: tuple[Line, Any]) -> _Step:
    record = item[1]
    if not is_event(record):
        raise _Unplain  # maybe one event torn across lines: the full read mends it
    data = record["data"]
    kind = record["type"]
    ids: list[str] = []
    if kind == "assistant.message":
        requests = data.get("toolRequests")
        for request in requests if isinstance(requests, list) else ():
            if not isinstance(request, dict):
                continue  # the reader skips it
            call_id = request.get("toolCallId")
            if not isinstance(call_id, str):
                raise _Unplain
            ids.append(call_id)
    return (
        kind,
        record.get("agentId"),
        record["id"],
        data.get("content"),
        ids,
        data.get("toolCallId"),
        data.get("delivery"),
    )


def _turns(steps: Iterable[_Step]) -> list[Turn | None]:
    """``reader._History`` reduced to what the screen reads: the same messages in the
    same order, each a list ``[kind, text or event id, call ids or line index]``."""
    messages: list[list[Any]] = []
    calls: set[str] = set()  # open calls (no completion yet)
    held: list[list[Any]] = []  # late prompts waiting for the open calls' results
    results: list[Any] | None = None  # the tool messages right after the last call
    # Every line is one step (``decoded`` and the source keep the same lines), so a step's
    # place is its line's index: a prompt or system message there is where a doubted log
    # may be built from (after a model turn every call is answered and nothing is held:
    # the full read's state there is a new _History's).
    for index, (kind, agent, event_id, content, requested, completed, delivery) in enumerate(steps):
        if agent is not None:
            continue  # a sub-agent's: not replayed
        if kind == "assistant.message":
            if held:
                messages.extend(held)
                held = []
            calls.update(requested)
            messages.append([_REPLY, content if isinstance(content, str) else None, requested])
            results = None
        elif kind == "tool.execution_complete":
            if not isinstance(completed, str):
                raise _Unplain
            calls.discard(completed)
            if results is not None:
                results[2].append(completed)
            else:
                results = [_RESULTS, None, [completed]]
                messages.append(results)
            if not calls and held:
                messages.extend(held)
                held = []
                results = None
        elif kind == "user.message":
            if calls and isinstance(delivery, str) and delivery in LATE_DELIVERY:
                held.append([_PROMPT, event_id, None])  # read where it was not written
            else:
                messages.append([_PROMPT, event_id, index])
                results = None
        elif kind == "system.message" and isinstance(content, str):
            messages.append([_SYSTEM, None, index])
            results = None
    messages.extend(held)
    turns: list[Turn | None] = []
    previous: str | None = None  # the event id of a prompt just before
    for kind, text, ids in messages:
        if kind == _REPLY:
            turns.append((ASSISTANT, text, tuple(ids)))
        elif kind == _RESULTS:
            turns.extend((RESULT, None, (call_id,)) for call_id in ids)
        else:
            if kind == _PROMPT and text == previous:
                raise _Unplain  # the same event twice in a row: TD403 compares them
            turns.append((OTHER, None, () if ids is None else (ids,)))
        previous = text if kind == _PROMPT else None
    return turns
