"""Proof that a Codex rollout has no finding, without building its model.

The pattern of ``readers/pi/fast.py``: msgspec decodes each line into the few fields the
reader reads (``_Line``), in C, skipping the rest (tool outputs, reasoning, token counts
and the UI events are most of a rollout's bytes and no rule reads them); a message's
``content`` and a compaction's ``replacement_history`` are kept as raw bytes and decoded
only where the history is replayed from.  The items are regrouped as ``history.History``
regroups them (context held behind the outputs that follow it, a prompt ending the
model's turn), and the turns handed to the clean-file screen.  Only a rollout the screen
proves clean is left unbuilt; anything else is read in full, so the findings are the full
read's.

What the proof does not handle falls back to the full read (``clean`` returns False):

- a line msgspec does not decode into ``_Line`` (torn, glued, not an object, a payload
  that is not an object, NUL bytes, a lone surrogate escape), a line of blanks, a BOM,
  invalid UTF-8 anywhere (msgspec does not check the bytes of fields it skips), and a
  number that may lie beyond a double anywhere (msgspec skips it; orjson and serde_json,
  Codex's loader, refuse it: TD001);
- the legacy layout (the caller asks only for rollouts), a rollback event, the last
  compaction without a ``replacement_history`` list;
- items whose kind the screen does not cover (local shell calls, tool searches, web
  searches, images, compaction items), calls and outputs without a string ``call_id``,
  an assistant message item with no visible text (TD103 names it), and content parts
  other than text in a reply;
- two prompts read from lines one after the other with the same content (TD403 compares
  their bytes).
"""

from __future__ import annotations

from itertools import repeat
from typing import Any, NamedTuple

import msgspec
from msgspec import UNSET, Raw, UnsetType

from transcript_doctor.analysis.numbers import may_overflow
from transcript_doctor.analysis.screen import ASSISTANT, OTHER, RESULT, Screen, Turn
from transcript_doctor.readers.codex.history import CONTEXT_ITEMS, CONTEXT_OPENERS, RESULT_ITEMS, TEXT_CONTENT
from transcript_doctor.readers.typed_lines import decode_once, decoded, segments, take
from transcript_doctor.source import HEAD_RECORDS, Source

_NULL = msgspec.Raw(b"null")
# Kept on a source (``Source.typed``): whether no number in it may lie beyond a double
# (``may_overflow``), asked once by detection and the proof, which both need it.
_FITS = "codex: no number beyond a double"


class _Payload(msgspec.Struct, gc=False):
    """A ResponseItem, a compaction or a UI event: only the fields the reader reads."""

    type: str | None = None
    role: Any = None
    content: msgspec.Raw = _NULL  # decoded only for a message item
    call_id: Any = None
    replacement_history: msgspec.Raw = _NULL  # decoded only for the last compaction


class _Line(msgspec.Struct, gc=False):
    type: str | None = None
    payload: _Payload | None = None
    # Read only by detection (``first_line``): whether a line holds a key the registry
    # shows the readers listed before this one (``PROBED``).
    uuid: Raw | UnsetType = UNSET
    leafUuid: Raw | UnsetType = UNSET
    snapshot: Raw | UnsetType = UNSET
    operation: Raw | UnsetType = UNSET
    projectHash: Raw | UnsetType = UNSET
    set_: Raw | UnsetType = msgspec.field(default=UNSET, name="$set")
    rewindTo: Raw | UnsetType = msgspec.field(default=UNSET, name="$rewindTo")


class _Block(msgspec.Struct, gc=False):
    type: str | None = None
    text: Any = None


class _Item(msgspec.Struct, gc=False):
    """An item of a replacement history: its content decoded with the list, in one call
    (no rule compares the bytes of a prompt replayed from a compaction, and a content
    decoded item by item cost a third of the proof of a compacted rollout)."""

    type: str | None = None
    role: Any = None
    content: str | list[_Block] | None = None
    call_id: Any = None


_DECODER = msgspec.json.Decoder(_Line)
# The keys of the registry entries listed before Codex (Gemini CLI, Qwen Code, Claude
# Code): ``first_line`` settles detection only when no head record holds one.
PROBED = frozenset({"uuid", "leafUuid", "snapshot", "operation", "projectHash", "$set", "$rewindTo"})
_CONTENT = msgspec.json.Decoder(str | list[_Block] | None)
_OPENER_STARTS = frozenset(opener[0] for opener in CONTEXT_OPENERS)  # "#" and "<"
_HISTORY = msgspec.json.Decoder(list[_Item])
_CALLS = frozenset({"function_call", "custom_tool_call"})
# Items ``History.add`` leaves out (undo snapshots and unknown newer kinds are no messages);
# every other kind it reads is listed in ``_CALLS``, ``RESULT_ITEMS``, "message", "reasoning".
_READ_KINDS = frozenset(
    {
        "message",
        "reasoning",
        "function_call",
        "custom_tool_call",
        "local_shell_call",
        "tool_search_call",
        "tool_search_output",
        "function_call_output",
        "custom_tool_call_output",
        "web_search_call",
        "agent_message",
        "image_generation_call",
        "compaction",
        "compaction_summary",
    }
)

# What the regrouping makes of the items: a prompt (from a line, with its content's raw
# bytes: TD403 may compare it), context, the model's turn (its texts and call ids), a run
# of outputs (their call ids).
_PROMPT, _CONTEXT, _TURN, _OUTPUTS = range(4)


class _Unplain(Exception):
    """Something the screen does not cover: the full read decides."""


class Proof(NamedTuple):
    """What the proof found of a rollout it covers: whether the screen proved it clean
    (else ``screen.cut`` says where it may be built from), and the line index of the
    compaction the history restarts from (``Layout.compacted``), if any."""

    clean: bool
    compacted: int | None


def first_line(source: Source) -> bytes | None:
    """The line that is the head's first record, when the typed records (``decode_once``:
    the proof takes them) show that no record of the head holds a key of ``PROBED``; else
    None (then the head is parsed).

    Every line decodes into ``_Line`` (an object), and no line may hold a number beyond a
    double: orjson, the head's parser, then reads each of them (msgspec refuses what
    orjson refuses otherwise), so the head is exactly the first lines.  The whole file is
    asked, not the head alone: the proof asks it of the whole file anyway (``_fits``).
    The reader parses the first line with orjson and asks it what ``detect`` asks."""
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
    data = source.data
    if not _fits(data, source):
        return None
    return next(segments(data, (0,)), None)


def _fits(data: bytes, source: Source | None) -> bool:
    """``not may_overflow(data)``, asked of a source once (kept on it)."""
    if source is None:
        return not may_overflow(data)
    memo = source.typed
    fits: bool | None = memo.get(_FITS)
    if fits is None:
        fits = memo[_FITS] = not may_overflow(data)
    return fits


def prove(data: bytes, screen: Screen, source: Source | None = None) -> Proof | None:
    """The screen's answer on a rollout (layout ``rollout``), or None where the proof does
    not cover it.  Where it covers it, every line parses (no TD001).  ``source``: the
    rollout's, whose typed records detection may have decoded (``first_line``)."""
    lines = take(source, _DECODER) if source is not None else decoded(data, _DECODER)
    if not lines or not _fits(data, source):  # serde_json refuses such a number; msgspec skips it
        return None
    try:
        compacted, turns = _turns(lines)
    except (_Unplain, msgspec.DecodeError, msgspec.ValidationError):
        return None
    return Proof(screen.clean(turns), compacted)


def clean(data: bytes, screen: Screen) -> bool:
    """True when no rule can find anything in this rollout (layout ``rollout``)."""
    proof = prove(data, screen)
    return proof is not None and proof.clean


def _turns(lines: list[_Line]) -> tuple[int | None, list[Turn | None]]:
    """The compaction's line index and the turns.  ``decoded`` keeps exactly the lines the
    source keeps (no blank one decodes), so a line's place in ``lines`` is its index."""
    start = 0  # the last compaction: Codex rebuilds the history from its replacement
    compacted: int | None = None
    for index in range(len(lines) - 1, -1, -1):
        if lines[index].type == "compacted" and lines[index].payload is not None:
            start = compacted = index
            break
    items: list[tuple[_Payload | _Item, int | None]] = []
    first = lines[start]
    if first.type == "compacted" and first.payload is not None:
        replacement = first.payload.replacement_history
        if replacement == _NULL:
            raise _Unplain  # the summary-only compaction: read in full
        items += zip(_HISTORY.decode(replacement), repeat(None))
        start += 1
    for index in range(start, len(lines)):
        line = lines[index]
        payload = line.payload
        if payload is None:
            continue
        if line.type == "response_item":
            items.append((payload, index))
        elif line.type == "event_msg" and payload.type == "thread_rolled_back":
            raise _Unplain
    return compacted, _replayed(_regrouped(items))


def _regrouped(items: list[tuple[_Payload | _Item, int | None]]) -> list[list[Any]]:
    """``history.History`` reduced to what the screen reads: the same messages in the same
    order, each a list ``[kind, texts, call ids]`` (a prompt or context: ``[kind, raw
    content, its line index or None]``), from the items and the index of the line each
    was read from (None: from a replacement history, an ``_Item`` whose content is
    decoded already).  One loop, no call per item: the calls per item and per message
    cost 3% of a small rollout's lint (instructions)."""
    messages: list[list[Any]] = []
    append = messages.append
    run: list[Any] | None = None  # the open model turn
    results: list[Any] | None = None  # the open run of outputs
    held: list[list[Any]] = []  # context waiting behind outputs
    for item, line in items:
        kind = item.type
        if kind == "message":
            role = item.role
            content: Any = item.content  # a line's raw bytes, or a replacement's decoded
            if role == "assistant":
                texts = _reply_texts(_CONTENT.decode(content) if line is not None else content)
                if not "".join(texts).strip():
                    raise _Unplain  # blank: its own empty turn, or whitespace joined to calls
            elif role == "user" and not (
                _is_context(content) if line is not None else _opens_context(content)
            ):
                # No rule reads what a prompt or context holds: the screen asks only where
                # they are.  A prompt line keeps its content's bytes: TD403 compares whole lines.
                if held:
                    messages += held
                    held = []
                run = results = None
                append([_PROMPT, None if line is None else content, line])
                continue
            else:
                run = None
                held.append([_CONTEXT, None, line])
                continue
        elif kind not in _READ_KINDS:
            continue  # ghost_snapshot and unknown newer kinds: no message
        elif kind == "reasoning":
            texts = None  # a thinking part: content, never a text the rules read
        elif kind in _CALLS:
            texts = None
            if not isinstance(item.call_id, str):
                raise _Unplain
        elif kind in CONTEXT_ITEMS:
            run = None
            held.append([_CONTEXT, None, line])
            continue
        elif kind in RESULT_ITEMS:
            call_id = item.call_id
            if not isinstance(call_id, str):
                raise _Unplain
            if results is None:
                results = [_OUTPUTS, None, []]
                append(results)
            run = None
            results[2].append(call_id)
            continue
        else:
            raise _Unplain
        # The model's turn: a reply's texts, a thinking part or a call.
        if held:
            messages += held
            held = []
            results = None
        if run is None:
            run = [_TURN, [], []]
            append(run)
            results = None
        if texts is not None:
            run[1] += texts
        elif kind != "reasoning":
            run[2].append(item.call_id)
    messages += held
    return messages


def _replayed(messages: list[list[Any]]) -> list[Turn | None]:
    """The regrouped messages as the screen's turns."""
    turns: list[Turn | None] = []
    previous: msgspec.Raw | None = None  # the content of a prompt line just before
    for kind, texts, ids in messages:
        # A prompt or context line is where a doubted rollout may be built from: after
        # a model turn, the full read's state there is a new History's (nothing held).
        if kind == _TURN:
            turns.append((ASSISTANT, "".join(texts) if texts else None, tuple(ids)))
        elif kind == _OUTPUTS:
            turns.extend((RESULT, None, (call_id,)) for call_id in ids)
        else:
            if kind == _PROMPT and texts is not None and texts == previous:
                raise _Unplain  # two prompt lines alike in a row: TD403 compares their bytes
            turns.append((OTHER, None, () if ids is None else (ids,)))
        previous = texts if kind == _PROMPT else None
    return turns


def _reply_texts(content: str | list[_Block] | None) -> list[str]:
    """The texts of an assistant message item (``_content_parts``), which must hold only
    text parts."""
    if isinstance(content, str):
        return [content]
    if not content:
        raise _Unplain  # no parts: an empty turn
    texts: list[str] = []
    for block in content:
        if not (block.type in TEXT_CONTENT and isinstance(block.text, str)):
            raise _Unplain  # media or another part in a reply
        texts.append(block.text)
    return texts


def _is_context(content: msgspec.Raw) -> bool:
    """``history._is_context`` on a message's raw content: every opener holds ``<`` or
    ``#``, written as such or escaped (a backslash), so content with neither is a prompt."""
    raw = bytes(content)
    if b"<" not in raw and b"#" not in raw and b"\\" not in raw:
        return False
    return _opens_context(_CONTENT.decode(raw))


def _opens_context(content: str | list[_Block] | None) -> bool:
    """``history._is_context`` on a message's decoded content."""
    if not isinstance(content, list):
        return False
    for block in content:
        text = block.text
        if isinstance(text, str):
            text = text.lstrip()
            # Every opener starts with a character no other lowers to (``_OPENER_STARTS``):
            # a prompt is told without lowering it.
            if text[:1] in _OPENER_STARTS and text[:40].lower().startswith(CONTEXT_OPENERS):
                return True
    return False
