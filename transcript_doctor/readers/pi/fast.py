"""Proof that a Pi session has no finding, without building its model.

The pattern of ``readers/claude_code/fast.py``: msgspec decodes each line into the few
fields the reader reads (``_Record``), in C; a message's ``content`` is kept as raw bytes
and decoded only for the entries on the replayed path (tool outputs are most of a
session's bytes and no rule reads them).  The path is walked as ``tree.walk`` walks it,
its messages read as ``reader._messages`` reads them, grouped into the turns the
clean-file screen asks about.  Only a session the screen proves clean is left unbuilt;
anything else is read in full, so the findings are the full read's.

What the proof does not handle falls back to the full read (``clean`` returns False):

- a line msgspec does not decode into ``_Record`` (torn, glued, not an object, a field
  of another type), a line of blanks, a BOM, and invalid UTF-8 anywhere (msgspec does
  not check the bytes of fields it skips; Pi's loader reads them as U+FFFD);
- a first line that is not the session header (TD001, #8939), an entry without a
  string id, an id written twice, a ``parentId`` that names no entry, a cycle;
- branch summaries and custom messages (they change what is replayed; a compaction is
  replayed as ``tree.replayed`` replays it);
- redacted thinking, images and unknown blocks in a reply, a tool call or result
  without a string id, summary roles, and user content the screen does not know.

An assistant Pi skips (an error or aborted stop, nothing to send) is the notice the
reader makes of it (``skipped-…``: no rule reads it as a turn, and it arms no TD101).
"""

from __future__ import annotations

from typing import Any

import msgspec
from msgspec import UNSET, Raw, UnsetType

from transcript_doctor.analysis.screen import ASSISTANT, NOTICE, OTHER, RESULT, Screen, Turn
from transcript_doctor.model import Dialect
from transcript_doctor.readers.typed_lines import decode_once, decoded, head_lines, segments, take
from transcript_doctor.source import HEAD_RECORDS, Source

_UNSET = msgspec.UNSET
_NULL = msgspec.Raw(b"null")  # an absent ``content`` reads as null (the reader: no parts)


class _Block(msgspec.Struct, gc=False):
    type: str | None = None
    text: str | None = None  # text
    thinking: str | None = None  # thinking
    redacted: bool | None = None  # thinking
    id: str | None = None  # toolCall


class _Message(msgspec.Struct, gc=False):
    role: str | None = None
    content: msgspec.Raw = _NULL  # decoded only on the replayed path
    stopReason: str | None = None
    toolCallId: str | None = None
    excludeFromContext: bool | None = None  # bashExecution


class _Record(msgspec.Struct, gc=False):
    type: str | None = None
    id: str | None = None
    parentId: str | msgspec.UnsetType | None = _UNSET  # a header has no parentId key
    cwd: str | None = None  # the header's
    message: _Message | None = None
    firstKeptEntryId: Any = None  # a compaction's (any type, as ``tree.replayed`` compares it)
    # Read only by detection (``first_lines``): whether a line holds a key the registry
    # shows the readers listed before this one that ``refuses`` cannot rule out (``PROBED``).
    uuid: Raw | UnsetType = UNSET
    leafUuid: Raw | UnsetType = UNSET
    snapshot: Raw | UnsetType = UNSET
    operation: Raw | UnsetType = UNSET
    projectHash: Raw | UnsetType = UNSET
    set_: Raw | UnsetType = msgspec.field(default=UNSET, name="$set")
    rewindTo: Raw | UnsetType = msgspec.field(default=UNSET, name="$rewindTo")


_DECODER = msgspec.json.Decoder(_Record)
# The keys of Gemini CLI's, Qwen Code's and Claude Code's registry entries.
PROBED = frozenset({"uuid", "leafUuid", "snapshot", "operation", "projectHash", "$set", "$rewindTo"})
_CONTENT = msgspec.json.Decoder(str | list[_Block] | None)
_REPLAY_CHANGING = frozenset({"branch_summary", "custom_message"})
_SKIPPED_STOPS = frozenset({"error", "aborted"})  # reader.SKIPPED_STOPS
_SKIPPED_EMPTY: Turn = (NOTICE, "skipped-empty", ())  # a reply with nothing to send
_USER_ROLES = frozenset({"user", "custom"})
_ASIDE_ROLES = frozenset({"branchSummary", "compactionSummary"})


def first_lines(source: Source) -> tuple[list[bytes], int] | None:
    """The session's first two lines (one, in a file of one line) and how many lines it
    has, when the typed records (``decode_once``: the proof takes them) show that no
    record of the head holds a key of ``PROBED``; else None.

    Every line decodes (an object), and none of the head's lines may hold a number
    beyond a double: orjson, the head's parser, then reads each of them (msgspec refuses
    what orjson refuses otherwise), so the head is exactly the first lines.  The reader
    parses the two with orjson and asks them what ``detect`` asks of the head.

    A session of at most ``HEAD_RECORDS`` lines needs no look for such a number: every
    line is checked for ``PROBED``, so whichever lines orjson refuses, no record of the
    head holds one, and the two lines the reader parses are the head's first two when
    orjson reads both (else it returns None)."""
    records = decode_once(source, _DECODER)
    if not records:
        return None
    for record in records[:HEAD_RECORDS]:
        if (
            record.uuid is not UNSET
            or record.leafUuid is not UNSET
            or record.snapshot is not UNSET
            or record.operation is not UNSET
            or record.projectHash is not UNSET
            or record.set_ is not UNSET
            or record.rewindTo is not UNSET
        ):
            return None
    count = len(records)
    if count <= HEAD_RECORDS:
        return list(segments(source.data, range(min(count, 2)))), count
    lines = head_lines(source.data, 2)
    return None if lines is None else (lines, count)


def clean(data: bytes, screen: Screen, dialect: Dialect, source: Source | None = None) -> bool:
    """True when no rule can find anything in this Pi session (read in ``dialect``).
    ``source``: the session's, whose typed records detection may have decoded."""
    records = take(source, _DECODER) if source is not None else decoded(data, _DECODER)
    if not records:
        return False
    first = records[0]
    if not (
        first.type == "session"
        and first.id is not None
        and first.cwd is not None
        and first.parentId is _UNSET
    ):
        return False  # the header (reader._header): else TD001
    by_id: dict[str, _Record] = {}
    entries: list[_Record] = []
    # A linear session (each entry's parent the entry before it, the first a root) is its
    # own path: no other walk is needed, and every parent exists.
    linear, previous = True, None
    for record in records:
        kind = record.type
        if kind == "session":
            continue  # not an entry (reader._Scan.add)
        if kind in _REPLAY_CHANGING:
            return False
        key = record.id
        if key is None or key in by_id:
            return False
        by_id[key] = record
        entries.append(record)
        if linear:
            parent = record.parentId
            linear = parent == previous if previous is not None else parent is None or parent is _UNSET
            previous = key
    if not entries:
        return False
    path = entries if linear else _path(entries[-1], by_id)
    if path is None:
        return False
    turns = _turns(_replayed(path))
    if turns and turns[-1] is not None and turns[-1][0] != NOTICE and not dialect.final_text_is_prefill:
        # Pi never continues from an assistant message: the next prompt follows the final
        # text whenever the history is sent, so its whitespace is no prefill (TD102 does
        # not apply).  The screen is shown that prompt (``gemini_content.closing``), unless
        # notices end the turns (after them it would disarm TD101).
        turns.append((OTHER, None, ()))
    return turns is not None and screen.clean(turns)


def _path(last: _Record, by_id: dict[str, _Record]) -> list[_Record] | None:
    """The entries from the root to ``last`` (``tree.walk``), or None for a parent that
    names no entry (TD404, or a dangling branch: the full read decides) or a cycle."""
    for record in by_id.values():
        parent = record.parentId
        if parent is not None and parent is not _UNSET and parent not in by_id:
            return None
    path: list[_Record] = []
    seen: set[str] = set()
    current: _Record | None = last
    while current is not None:
        assert current.id is not None
        if current.id in seen:
            return None  # a cycle
        seen.add(current.id)
        path.append(current)
        parent = current.parentId
        current = by_id[parent] if isinstance(parent, str) else None
    path.reverse()
    return path


def _replayed(path: list[_Record]) -> list[_Record]:
    """The entries Pi sends (``tree.replayed``): with a compaction on the path, the latest
    one (standing for its summary), the path from its ``firstKeptEntryId`` up to it, and
    what follows it."""
    at = -1
    for index, record in enumerate(path):
        if record.type == "compaction":
            at = index
    if at < 0:
        return path
    first_kept = path[at].firstKeptEntryId
    kept = path[:at]
    start = next((i for i, r in enumerate(kept) if r.id is not None and r.id == first_kept), at)
    return [path[at], *kept[start:], *path[at + 1 :]]


def _turns(path: list[_Record]) -> list[Turn | None] | None:
    """The screen's turns of the replayed path, one per message in order (None: something
    it does not know).  A prompt between a call and its result stays between them: the
    screen doubts there (TD304), as pairing does."""
    turns: list[Turn | None] = []
    content = _CONTENT.decode
    try:
        for record in path:
            message = record.message
            if record.type == "compaction":
                turns.append((OTHER, None, ()))  # its summary, sent as user text
                continue
            if record.type != "message" or message is None:
                continue  # model and thinking changes, labels, session info: not sent
            role = message.role
            if role == "assistant":
                stop = message.stopReason
                if stop in _SKIPPED_STOPS:
                    turns.append((NOTICE, f"skipped-{stop}", ()))  # never sent (reader._assistant)
                    continue
                turn = _assistant(content(message.content))
                if turn is None:
                    return None
                turns.append(turn)
            elif role == "toolResult":
                if message.toolCallId is None:
                    return None
                turns.append((RESULT, None, (message.toolCallId,)))
            elif role in _USER_ROLES:
                if not _prompt(content(message.content)):
                    return None
                turns.append((OTHER, None, ()))
            elif role == "bashExecution":
                if message.excludeFromContext is not True:
                    turns.append((OTHER, None, ()))  # the command, sent as user text
            elif role in _ASIDE_ROLES:
                return None
            # any other role: convertToLlm drops it
    except (msgspec.DecodeError, msgspec.ValidationError, RecursionError):
        return None
    return turns


def _assistant(content: str | list[_Block] | None) -> Turn | None:
    """One reply's turn, its texts joined as ``Message.visible_text`` joins them, the
    notice of a reply Pi skips as empty, or None for one holding a block the screen does
    not know."""
    if not isinstance(content, list):
        return _SKIPPED_EMPTY  # no blocks: nothing to send, Pi skips it
    texts: list[str] = []
    ids: list[str] = []
    sendable = False
    for block in content:
        kind = block.type
        if kind == "text":
            text = block.text if block.text is not None else ""
            texts.append(text)
            sendable = sendable or bool(text.strip())
        elif kind == "thinking":
            if block.redacted is True:
                return None
            sendable = sendable or (block.thinking is not None and bool(block.thinking.strip()))
        elif kind == "toolCall" and block.id is not None:
            ids.append(block.id)
            sendable = True
        else:
            return None  # a call without id, an image, any other block
    if not sendable:
        return _SKIPPED_EMPTY  # skipped as empty (reader._assistant)
    return ASSISTANT, "".join(texts) if texts else None, tuple(ids)


def _prompt(content: str | list[_Block] | None) -> bool:
    """Whether user content is a prompt the screen knows: a string, or text and images."""
    if isinstance(content, str):
        return True
    if not content:
        return False  # no parts at all
    return all(block.type in ("text", "image") for block in content)
