"""Gemini checkpoint repairs (spec §7): element edits of the one document; everything
else keeps its bytes.

Contents and parts are found again by their pointers (``Message.origin``,
``Part.origin``); new values are indented like their siblings by the editor.
"""

from __future__ import annotations

import orjson

from transcript_doctor.actions import (
    Action,
    AddSignature,
    InsertResult,
    MoveResult,
    RemoveMessage,
    RemoveResult,
    StripTrailingWhitespace,
)
from transcript_doctor.analysis import pairing
from transcript_doctor.editing import EditError, JsonText
from transcript_doctor.model import Message, Part, Role
from transcript_doctor.readers import gemini_content
from transcript_doctor.readers.base import Edit, Repair
from transcript_doctor.readers.gemini_checkpoint.reader import history
from transcript_doctor.transcript import Transcript


class GeminiCheckpointRepair(Repair):
    def accepts(self, action: Action) -> bool:
        return not isinstance(action, InsertResult) or gemini_content.answerable(action.call)

    def remove_message(self, transcript: Transcript, action: RemoveMessage, edit: Edit) -> str:
        _document(edit).remove(_pointer(action.message))
        return "remove"

    def strip_trailing_whitespace(
        self, transcript: Transcript, action: StripTrailingWhitespace, edit: Edit
    ) -> str:
        document = _document(edit)
        pointer = _pointer(action.part)
        document.strip_string(pointer if document.raw(pointer).startswith(b'"') else pointer + "/text")
        return "strip"

    def add_signature(self, transcript: Transcript, action: AddSignature, edit: Edit) -> str:
        _document(edit).set_member(_pointer(action.part), "thoughtSignature", gemini_content.SKIP_SIGNATURE)
        return "insert"

    def remove_result(self, transcript: Transcript, action: RemoveResult, edit: Edit) -> str:
        _remove_part(_document(edit), action.message, action.part)
        return "remove"

    def insert_result(self, transcript: Transcript, action: InsertResult, edit: Edit) -> str:
        _insert_result(transcript, _document(edit), action.message, action.call)
        return "insert"

    def move_result(self, transcript: Transcript, action: MoveResult, edit: Edit) -> str:
        document = _document(edit)
        target = _reply_slot(transcript, action.call_message)
        moved = document.raw(_pointer(action.part))
        if target.role is Role.ASSISTANT:
            # The model spoke right after the call: the result gets a user Content of
            # its own between them, as the CLI would have recorded it.  The new Content
            # is serialised whole, so the part must serialise back to its own bytes.
            pointer = _pointer(action.part)
            part = orjson.loads(moved)
            parent = pointer.rsplit("/", 1)[0]
            if document.style(parent).dumps(part, document.depth(pointer)) != moved:
                raise EditError("the result would not keep its bytes in a new Content")
            _remove_part(document, action.message, action.part)
            document.insert(_base(transcript), _index(target), {"role": "user", "parts": [part]})
            return "move"
        gemini_content.removals(document).receive(target)
        _remove_part(document, action.message, action.part)
        document.insert(_pointer(target) + "/parts", 0, raw=moved)
        return "move"


def _document(edit: Edit) -> JsonText:
    if not isinstance(edit, JsonText):
        raise EditError("checkpoints are single JSON documents")
    return edit


def _pointer(element: Message | Part) -> str:
    pointer = element.origin.pointer
    assert pointer is not None
    return pointer


def _remove_part(edit: JsonText, message: Message, part: Part) -> None:
    """Remove one part; a Content left with no parts is removed as a whole (spec §7)."""
    removals = gemini_content.removals(edit)
    if removals.take(message, part):
        removals.removed.add(message)
        edit.remove(_pointer(message))
    else:
        edit.remove(_pointer(part))


def _insert_result(transcript: Transcript, edit: JsonText, message: Message, call: Part) -> None:
    """The synthetic response goes into the user Content right after the call's Content,
    after its functionResponse parts and before anything else; without one, a new user
    Content is placed right after the call's Content."""
    (conversation,) = transcript.conversations
    base = conversation.ref
    assert isinstance(base, str) and isinstance(message.ref, int)
    response = gemini_content.synthetic_response(call)
    found = history(transcript.source.value)
    assert found is not None
    items = found[0]
    after = message.ref + 1
    following = items[after] if after < len(items) else None
    if (
        isinstance(following, dict)
        and following.get("role") == "user"
        and isinstance(following.get("parts"), list)
    ):
        parts = following["parts"]
        at = next(
            (i for i, p in enumerate(parts) if not (isinstance(p, dict) and "functionResponse" in p)),
            len(parts),
        )
        # The Content now holds the synthetic response: removing its other parts (TD302 in
        # the same pass) must not remove it whole.
        target = next((m for m in conversation.messages if m.ref == after), None)
        if target is not None:
            gemini_content.removals(edit).receive(target)
        edit.insert(f"{base}/{after}/parts", at, response)
    else:
        edit.insert(base, after, {"role": "user", "parts": [response]})


def _reply_slot(transcript: Transcript, call_message: Message) -> Message:
    """Where a moved result goes: the first user Content after the call's turn (adjacent
    model Contents of calls are one turn), or the model Content that spoke first after
    the call, before which the result gets a Content of its own (record order, rules.md TD3)."""
    conversation, index = transcript.locate(call_message)
    for message in conversation.messages[index + 1 :]:
        if message.role is Role.USER or pairing.speaks(message):
            return message
    raise EditError("no user Content follows the call")


def _base(transcript: Transcript) -> str:
    base = transcript.conversations[0].ref
    assert isinstance(base, str)
    return base


def _index(message: Message) -> int:
    assert isinstance(message.ref, int)
    return message.ref


REPAIR = GeminiCheckpointRepair()
