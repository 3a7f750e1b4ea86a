"""Proof that an openworker conversation has no finding, without parsing it into dicts.

Most of a conversation's bytes are tool output and provider sidecars no rule reads.
msgspec decodes each line into ``_Line`` (the fields ``reader._turns`` reads), in C,
skipping the rest without building it, and the same turns are handed to the screen.  A
conversation the screen proves clean is left unread; one it doubts is built from the
screen's cut as the full read builds it (``screen.cut`` and ``screen.before`` are what
the full read's screen says); anything else is read in full, so the findings are the
full read's.

What the proof does not take falls back to the full read (``prove`` returns False):

- a line msgspec does not decode into ``_Line``: a field of another type (a role, kind,
  id or ``ts`` that is not what the reader takes, a sidecar or block that is not an
  object), a torn, glued or blank line, a value that is not an object, NUL bytes, raw
  control characters, a lone surrogate escape, NaN, nesting deeper than msgspec's limit
  (msgspec refuses what orjson refuses there), a BOM, and invalid UTF-8 anywhere
  (``typed_lines.decoded`` checks the whole text);
- an empty line: the proof numbers lines by their position, which only holds when every
  segment between newlines is a line.

A number beyond a double in a skipped field is skipped by msgspec and refused by orjson;
openworker's loader (``json.loads``) reads it, so the full read reports nothing for it
either.  ``ts`` is decoded as a float: a prompt's stamp is compared with the one before
(``reader._turns``), and stamps orjson reads as equal are equal floats too (an integer
stamp beyond 2**53 may make two different stamps equal here: a doubt, never a missed
finding).
"""

from __future__ import annotations

from collections.abc import Iterator

import msgspec
from msgspec import UNSET, Raw, UnsetType

from transcript_doctor.analysis.screen import ASSISTANT, NOTICE, OTHER, RESULT, Screen, Turn
from transcript_doctor.readers.openworker.callids import CallIds
from transcript_doctor.readers.typed_lines import decode_once, decoded, take
from transcript_doctor.source import HEAD_RECORDS, Source


class _Text(msgspec.Struct, gc=False):
    type: str | None = None
    text: str | None = None


class _Call(msgspec.Struct, gc=False):
    id: str | None = None


class _Block(msgspec.Struct, gc=False):
    type: str | None = None
    signature: str | None = None


class _Sidecar(msgspec.Struct, gc=False):
    blocks: list[_Block] | None = None


class _Line(msgspec.Struct, gc=False):
    role: str | None = None
    kind: str | None = None  # notice
    tool_call_id: str | None = None
    ts: float | None = None
    content: str | list[_Text] | None = None
    tool_calls: list[_Call] | None = None
    anthropic: _Sidecar | None = msgspec.field(default=None, name="_anthropic")
    # Read only by detection (``candidates``): whether a line holds them at all.
    gemini: Raw | UnsetType = msgspec.field(default=UNSET, name="_gemini")
    openai: Raw | UnsetType = msgspec.field(default=UNSET, name="_openai")
    display: Raw | UnsetType = msgspec.field(default=UNSET, name="_display")
    projectHash: Raw | UnsetType = UNSET  # the keys of ``ABSENT``
    set_: Raw | UnsetType = msgspec.field(default=UNSET, name="$set")
    rewindTo: Raw | UnsetType = msgspec.field(default=UNSET, name="$rewindTo")
    uuid: Raw | UnsetType = UNSET
    leafUuid: Raw | UnsetType = UNSET
    snapshot: Raw | UnsetType = UNSET
    operation: Raw | UnsetType = UNSET
    payload: Raw | UnsetType = UNSET
    id: Raw | UnsetType = UNSET
    parentId: Raw | UnsetType = UNSET
    protocol_version: Raw | UnsetType = UNSET
    injected: Raw | UnsetType = UNSET


_DECODER = msgspec.json.Decoder(_Line)
# The keys of the other registry entries (``readers._MODULES``) no line holds when
# ``candidates`` answers, and Mistral Vibe's ``injected`` (tests/test_decide_roles.py).
ABSENT = frozenset(
    {
        "projectHash",
        "$set",
        "$rewindTo",
        "uuid",
        "leafUuid",
        "snapshot",
        "operation",
        "payload",
        "id",
        "parentId",
        "protocol_version",
        "injected",
    }
)
_ROLES = frozenset({"system", "user", "assistant", "tool", "notice"})  # reader.ROLES


def candidates(source: Source) -> list[int] | None:
    """The record indexes, among the first ``HEAD_RECORDS``, of the lines that may show
    ``reader._openworker_feature`` (a notice, a stamp, a sidecar), or None when the typed
    records cannot settle detection: every line must decode as ``_Line`` (kept on the
    source for ``prove``: each line decoded once) with a role of ``reader.ROLES``, and
    none may hold a key of ``ABSENT``.

    Every record of the head is such a line, whichever lines orjson refuses (a number
    beyond a double in a skipped field), and such a line among the first
    ``HEAD_RECORDS`` that orjson parses is one of the head's (duplicate keys: orjson, like
    msgspec, keeps the last; keys are compared unescaped by both)."""
    lines = decode_once(source, _DECODER)
    if not lines:
        return None
    roles = _ROLES
    for line in lines:
        if (
            line.role not in roles
            or line.projectHash is not UNSET
            or line.set_ is not UNSET
            or line.rewindTo is not UNSET
            or line.uuid is not UNSET
            or line.leafUuid is not UNSET
            or line.snapshot is not UNSET
            or line.operation is not UNSET
            or line.payload is not UNSET
            or line.id is not UNSET
            or line.parentId is not UNSET
            or line.protocol_version is not UNSET
            or line.injected is not UNSET
        ):
            return None
    return [
        i
        for i, line in enumerate(lines[:HEAD_RECORDS])
        if line.role == "notice"
        or line.ts is not None
        or line.anthropic is not None
        or line.gemini is not UNSET
        or line.openai is not UNSET
        or line.display is not UNSET
    ]


def prove(data: bytes, screen: Screen, source: Source | None = None) -> bool | None:
    """True when no rule can find anything in this conversation; None when the proof
    covers it but the screen doubts it (``screen.cut`` and ``screen.before`` hold: every
    line is a record, in order); False when only the full read can tell.  ``source``:
    the file of ``data``, whose lines detection may have decoded already."""
    try:
        lines = decoded(data, _DECODER) if source is None else take(source, _DECODER)
    except RecursionError:  # msgspec's depth limit (``decoded`` lets it through)
        return False
    if lines is None:
        return False
    if len(lines) != data.count(b"\n") + (0 if data.endswith(b"\n") else 1):
        return False  # an empty line: line numbers are not positions
    return True if screen.clean(_turns(lines)) else None


def _turns(lines: list[_Line]) -> Iterator[Turn | None]:
    """``reader._turns`` on decoded lines (line ``index`` is the file's line ``index + 1``)."""
    previous = None
    stamp: float | None = None
    ids = CallIds()
    for index, item in enumerate(lines):
        role = item.role
        if role == "notice":
            yield NOTICE, item.kind, ()
            continue
        if role == "tool":
            call_id = item.tool_call_id
            yield (RESULT, None, (ids.answered(call_id),)) if call_id is not None else None
        elif role == "assistant":
            turn = _assistant_turn(item)
            yield None if turn is None else (ASSISTANT, turn[0], tuple(ids.turn(index + 1, turn[1])))
        elif role == "system":
            yield OTHER, None, (index,)
        elif role == "user":
            ts = item.ts
            yield (
                None
                if previous == "user" and (ts is None or stamp is None or ts == stamp)
                else (OTHER, None, (index,))
            )
            stamp = ts
        else:
            yield None  # an unknown role
        previous = role


def _assistant_turn(item: _Line) -> tuple[str | None, list[str | None]] | None:
    """``reader._assistant_turn`` on a decoded line."""
    sidecar = item.anthropic
    if sidecar is not None and sidecar.blocks is not None:
        for block in sidecar.blocks:
            kind = block.type
            signature = block.signature if kind == "thinking" else None
            if kind != "redacted_thinking" and not signature:
                return None
    content = item.content
    text: str | None
    if isinstance(content, list):
        pieces: list[str] = []
        for part in content:
            if part.type != "text" or part.text is None:
                return None
            pieces.append(part.text)
        text = "".join(pieces) if pieces else None
    else:
        text = content
    calls = item.tool_calls
    if calls is None:
        return text, []
    found: list[str | None] = [call.id for call in calls]
    if None in found:
        return None
    return text, found
