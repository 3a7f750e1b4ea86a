"""How ``fix`` edits a Kimi CLI ``context.jsonl``: whole lines, in Kimi's own shapes.

Every message is one line, so a repair removes, moves or inserts lines; control lines
(``_usage``, ``_checkpoint``) stay where they are.  Kimi writes one step as the assistant
line, a ``_usage`` line, then the tool lines in call order (kimi_cli/soul/kimisoul.py
``_grow_context``); a result a repair adds or moves goes at the end of that run, where
Kimi would have written it.
"""

from __future__ import annotations

import json
from typing import Any

import orjson

from transcript_doctor.actions import (
    SYNTHETIC_RESULT_TEXT,
    InsertResult,
    MoveResult,
    RemoveMessage,
    RemoveResult,
)
from transcript_doctor.editing import EditError, Lines
from transcript_doctor.model import Message, Part
from transcript_doctor.readers.base import Edit, Transcript

# A failed tool's result as kimi_cli/soul/message.py tool_result_to_message writes it:
# content [system("ERROR: <message>")], one text part, which kosong serialises as a string.
# There is no error field: the <system>ERROR: …</system> text is how Kimi marks it.
SYNTHETIC_CONTENT = f"<system>ERROR: {SYNTHETIC_RESULT_TEXT}</system>"
_STEP_ROLES = frozenset({"_usage", "tool"})


def apply(transcript: Transcript, action: object, edit: Edit) -> str | None:
    """The verb of the repair made, or None when this layout has no repair for it."""
    if isinstance(action, RemoveMessage):
        return remove_message(transcript, action, _lines(edit))
    if isinstance(action, RemoveResult):
        return remove_result(transcript, action, _lines(edit))
    if isinstance(action, InsertResult):
        return insert_result(transcript, action, _lines(edit))
    if isinstance(action, MoveResult):
        return move_result(transcript, action, _lines(edit))
    return None


def remove_message(transcript: Transcript, action: RemoveMessage, edit: Lines) -> str:
    """A turn is its line.  A turn with tool calls is not removed (its results would be
    left as orphans): no rule asks that of a Kimi turn today."""
    if action.message.tool_calls:
        raise EditError("removing a turn with tool calls would orphan its results")
    edit.remove(action.message.origin.record)
    return "remove"


def remove_result(transcript: Transcript, action: RemoveResult, edit: Lines) -> str:
    edit.remove(action.part.origin.record)
    return "remove"


def insert_result(transcript: Transcript, action: InsertResult, edit: Lines) -> str:
    edit.insert_after(_step_end(edit, action.message), raw=synthetic_line(action.call))
    return "insert"


def move_result(transcript: Transcript, action: MoveResult, edit: Lines) -> str:
    record = action.part.origin.record
    line = edit.line(record)
    moved = edit.data[line.start : line.end]
    edit.remove(record)
    edit.insert_after(_step_end(edit, action.call_message), raw=moved)
    return "move"


def synthetic_line(call: Part) -> bytes:
    """A tool message in kosong's compact ``model_dump_json`` shape (keys in field order:
    role, content, tool_call_id; non-ASCII kept raw, as pydantic writes it)."""
    if call.call_id is None:
        raise EditError("the call has no id to answer")
    value = {"role": "tool", "content": SYNTHETIC_CONTENT, "tool_call_id": call.call_id}
    try:
        return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode()
    except UnicodeEncodeError:  # a lone surrogate in the id (a TD001 record): its escape
        return json.dumps(value, separators=(",", ":")).encode()


def _step_end(edit: Lines, call_message: Message) -> int:
    """The last line of the call's step: its assistant line and the ``_usage`` and tool
    lines right after it."""
    end = call_message.origin.record
    for index in range(end + 1, len(edit.lines)):
        if _role(edit, index) not in _STEP_ROLES:
            break
        end = index
    return end


def _role(edit: Lines, index: int) -> Any:
    line = edit.line(index)
    try:
        value = orjson.loads(edit.data[line.start : line.end])
    except orjson.JSONDecodeError:
        return None
    return value.get("role") if isinstance(value, dict) else None


def _lines(edit: Edit) -> Lines:
    if not isinstance(edit, Lines):
        raise EditError("a Kimi CLI history is a JSONL file")
    return edit
