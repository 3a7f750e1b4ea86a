"""Chat Completions repairs: every message is one element (or line), so repairs are
element edits of the message list."""

from __future__ import annotations

from typing import Any

from transcript_doctor.actions import (
    SYNTHETIC_RESULT_TEXT,
    InsertResult,
    MoveResult,
    RemoveDuplicate,
    RemoveMessage,
    RemoveResult,
    StripTrailingWhitespace,
)
from transcript_doctor.model import Origin, Part
from transcript_doctor.readers import listing
from transcript_doctor.readers.base import Edit, Repair
from transcript_doctor.transcript import Transcript


class OpenAIChatRepair(Repair):
    def remove_message(self, transcript: Transcript, action: RemoveMessage, edit: Edit) -> str:
        listing.remove(edit, action.message.origin)
        return "remove"

    def remove_duplicate(self, transcript: Transcript, action: RemoveDuplicate, edit: Edit) -> str:
        listing.remove(edit, action.message.origin)
        return "remove"

    def strip_trailing_whitespace(
        self, transcript: Transcript, action: StripTrailingWhitespace, edit: Edit
    ) -> str:
        assert isinstance(action.part.ref, Origin)
        listing.strip(edit, action.part.ref)
        return "strip"

    def remove_result(self, transcript: Transcript, action: RemoveResult, edit: Edit) -> str:
        listing.remove(edit, action.part.origin)
        return "remove"

    def insert_result(self, transcript: Transcript, action: InsertResult, edit: Edit) -> str:
        listing.insert_after(edit, listing.reply_end(transcript, action.message), _synthetic(action.call))
        return "insert"

    def move_result(self, transcript: Transcript, action: MoveResult, edit: Edit) -> str:
        moved = listing.raw(edit, action.part.origin)
        listing.remove(edit, action.part.origin)
        listing.insert_after(edit, listing.reply_end(transcript, action.call_message), raw=moved)
        return "move"


def _synthetic(call: Part) -> dict[str, Any]:
    """A result in the shape of the call's API; there is no error flag, so the text says it."""
    if call.paired_by == "id":
        return {"role": "tool", "tool_call_id": call.call_id, "content": SYNTHETIC_RESULT_TEXT}
    return {"role": "function", "name": call.name or "", "content": SYNTHETIC_RESULT_TEXT}


REPAIR = OpenAIChatRepair()
