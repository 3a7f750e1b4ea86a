"""Claude Code repairs (spec §7): line edits that keep the uuid tree valid.

The refs say which lines a turn, a block or a link lives on; ``plan`` makes the edits;
TD001 is the base class's line repair.
"""

from __future__ import annotations

from transcript_doctor.actions import (
    InsertResult,
    MoveResult,
    Relink,
    RemoveDuplicate,
    RemoveMessage,
    RemoveResult,
    StripTrailingWhitespace,
)
from transcript_doctor.editing import EditError, Lines
from transcript_doctor.jsonspan import join, split
from transcript_doctor.model import Message, Part
from transcript_doctor.readers.base import Edit, Repair
from transcript_doctor.readers.claude_code.plan import Plan, plan_for
from transcript_doctor.readers.claude_code.refs import FileRef, LineRef, MessageRef, RelinkRef
from transcript_doctor.transcript import Transcript


class ClaudeCodeRepair(Repair):
    def remove_message(self, transcript: Transcript, action: RemoveMessage, edit: Edit) -> str:
        return _plan(transcript, edit).remove_turn(_lines(action.message, "assistant"))

    def strip_trailing_whitespace(
        self, transcript: Transcript, action: StripTrailingWhitespace, edit: Edit
    ) -> str:
        line, pointer = _line(action.part), action.part.origin.pointer or ""
        tokens = split(pointer)  # a string content, or the ``text`` of a block
        return _plan(transcript, edit).strip(
            line, pointer if tokens[-1] == "content" else join(*tokens, "text")
        )

    def remove_result(self, transcript: Transcript, action: RemoveResult, edit: Edit) -> str:
        return _plan(transcript, edit).remove_result(_line(action.part), action.part.origin.pointer or "")

    def insert_result(self, transcript: Transcript, action: InsertResult, edit: Edit) -> str:
        group = _lines(action.message, "assistant")
        return _plan(transcript, edit).insert_result(group, _line(action.call), action.call.call_id)

    def move_result(self, transcript: Transcript, action: MoveResult, edit: Edit) -> str:
        return _plan(transcript, edit).move_result(
            _line(action.part), _lines(action.call_message, "assistant")
        )

    def remove_duplicate(self, transcript: Transcript, action: RemoveDuplicate, edit: Edit) -> str:
        (copy,) = _lines(action.message, "copy")
        return _plan(transcript, edit).remove_copy(copy)

    def relink(self, transcript: Transcript, action: Relink, edit: Edit) -> str:
        link = action.link.ref
        if not isinstance(link, RelinkRef):
            raise EditError("the link names no line")
        return _plan(transcript, edit).relink(link.line, link.target)


def _plan(transcript: Transcript, edit: Edit) -> Plan:
    if not isinstance(edit, Lines):
        raise EditError("sessions are JSONL")
    (conversation,) = transcript.conversations
    assert isinstance(conversation.ref, FileRef)
    return plan_for(edit, conversation.ref)


def _lines(message: Message, kind: str) -> tuple[LineRef, ...]:
    ref = message.ref
    if not isinstance(ref, MessageRef) or ref.kind != kind or not ref.lines:
        raise EditError(f"not a {kind} message of this file")
    return ref.lines


def _line(part: Part) -> LineRef:
    if not isinstance(part.ref, LineRef) or part.origin.pointer is None:
        raise EditError("the block names no line")
    return part.ref


REPAIR = ClaudeCodeRepair()
