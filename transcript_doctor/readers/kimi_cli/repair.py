"""How ``fix`` edits a Kimi CLI ``context.jsonl``: whole lines, in Kimi's own shapes.

Every message is one line, so a repair removes, moves or inserts lines; control lines
(``_usage``, ``_checkpoint``) stay where they are.  Kimi writes one step as the assistant
line, a ``_usage`` line, then the tool lines in call order (kimi_cli/soul/kimisoul.py
``_grow_context``); a result a repair adds or moves goes at the end of that run, where
Kimi would have written it.
"""

from __future__ import annotations

import json

import orjson

from transcript_doctor.actions import (
    SYNTHETIC_RESULT_TEXT,
    InsertResult,
    MoveResult,
    RemoveMessage,
    RemoveResult,
    ReplaceArguments,
)
from transcript_doctor.editing import EditError, Lines
from transcript_doctor.model import Message, Part
from transcript_doctor.readers.base import Edit, Repair
from transcript_doctor.transcript import Transcript

# A failed tool's result as kimi_cli/soul/message.py tool_result_to_message writes it:
# content [system("ERROR: <message>")], one text part, which kosong serialises as a string.
# There is no error field: the <system>ERROR: …</system> text is how Kimi marks it.
SYNTHETIC_CONTENT = f"<system>ERROR: {SYNTHETIC_RESULT_TEXT}</system>"
_STEP_ROLES = frozenset({"_usage", "tool"})


class KimiCliRepair(Repair):
    def remove_message(self, transcript: Transcript, action: RemoveMessage, edit: Edit) -> str:
        """A turn is its line.  A turn with tool calls is not removed (its results would be
        left as orphans): no rule asks that of a Kimi turn today."""
        if action.message.tool_calls:
            raise EditError("removing a turn with tool calls would orphan its results")
        _lines(edit).remove(action.message.origin.record)
        return "remove"

    def remove_result(self, transcript: Transcript, action: RemoveResult, edit: Edit) -> str:
        _lines(edit).remove(action.part.origin.record)
        return "remove"

    def insert_result(self, transcript: Transcript, action: InsertResult, edit: Edit) -> str:
        lines = _lines(edit)
        lines.insert_after(_step_end(lines, action.message), raw=synthetic_line(action.call))
        return "insert"

    def move_result(self, transcript: Transcript, action: MoveResult, edit: Edit) -> str:
        lines = _lines(edit)
        record = action.part.origin.record
        line = lines.line(record)
        moved = lines.data[line.start : line.end]
        lines.remove(record)
        lines.insert_after(_step_end(lines, action.call_message), raw=moved)
        return "move"

    def replace_arguments(self, transcript: Transcript, action: ReplaceArguments, edit: Edit) -> str:
        """The arguments text becomes ``"{}"``: what kimi-cli PR #2196 ("fix(kosong): sanitize
        malformed history tool calls", closed unmerged) sent in place of malformed arguments,
        and what Kimi's own toolset reads an empty text as; the call and its error result
        stay.  The report holds the replaced text."""
        origin = action.part.origin
        if origin.pointer is None:
            raise EditError("this call has no place in its record")
        _lines(edit).text(origin.record).replace(f"{origin.pointer}/function/arguments", "{}")
        return "replace"


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


def _role(edit: Lines, index: int) -> str | None:
    line = edit.line(index)
    try:
        value = orjson.loads(edit.data[line.start : line.end])
    except orjson.JSONDecodeError:
        return None
    role = value.get("role") if isinstance(value, dict) else None
    return role if isinstance(role, str) else None  # a list or object role is no step line


def _lines(edit: Edit) -> Lines:
    if not isinstance(edit, Lines):
        raise EditError("a Kimi CLI history is a JSONL file")
    return edit


REPAIR = KimiCliRepair()
