"""openworker repairs (spec §7): every record is one line, so repairs are line edits
(TD001 via the base class)."""

from __future__ import annotations

import json
from typing import Any
from weakref import WeakKeyDictionary

from transcript_doctor.actions import (
    SYNTHETIC_RESULT_TEXT,
    InsertResult,
    MoveResult,
    RemoveDuplicate,
    RemoveMessage,
    RemoveResult,
    StripTrailingWhitespace,
)
from transcript_doctor.editing import EditError, Lines
from transcript_doctor.model import Message, Part
from transcript_doctor.readers import listing
from transcript_doctor.readers.base import Edit, Repair
from transcript_doctor.transcript import Transcript


class OpenworkerRepair(Repair):
    def remove_message(self, transcript: Transcript, action: RemoveMessage, edit: Edit) -> str:
        # TD101 partials, TD103/TD201/TD202 turns: none carries tool calls (the rules
        # exclude them), so no result is orphaned; notices stay.
        _lines(edit).remove(_index(action.message.ref))
        return "remove"

    def remove_duplicate(self, transcript: Transcript, action: RemoveDuplicate, edit: Edit) -> str:
        _lines(edit).remove(_index(action.message.ref))  # TD403 copies carry no calls either
        return "remove"

    def strip_trailing_whitespace(
        self, transcript: Transcript, action: StripTrailingWhitespace, edit: Edit
    ) -> str:
        if not isinstance(action.part.ref, str):
            raise EditError("this text is not a stored string")
        _lines(edit).text(_index(action.message.ref)).strip_string(action.part.ref)
        return "strip"

    def remove_result(self, transcript: Transcript, action: RemoveResult, edit: Edit) -> str:
        _lines(edit).remove(_index(action.part.ref))
        return "remove"

    def insert_result(self, transcript: Transcript, action: InsertResult, edit: Edit) -> str:
        if not isinstance(action.call.ref, str):
            raise EditError("the call has no id a result could answer")
        _lines(edit).insert_after(_results_end(transcript, action.message), _synthetic(action.call.ref))
        return "insert"

    def move_result(self, transcript: Transcript, action: MoveResult, edit: Edit) -> str:
        _move(transcript, action, _lines(edit))
        return "move"


def _lines(edit: Edit) -> Lines:
    if not isinstance(edit, Lines):
        raise EditError("openworker files are JSONL")
    return edit


# Lines already moved by a TD304 repair, per editor: the first MoveResult of a turn moves all
# of that turn's displaced results at once (see _move).  Weak keys: an editor lives for one
# rule group (or one SARIF preview) and takes its entry with it.
_MOVED: WeakKeyDictionary[Lines, set[int]] = WeakKeyDictionary()


def _index(ref: object) -> int:
    if not isinstance(ref, int):
        raise EditError("this element is not a whole line")
    return ref


def _synthetic(call_id: str) -> dict[str, Any]:
    """PR #350's synthesized result with the project's text: JSON-in-string, no ``ts``.

    The inner text is ``json.dumps`` as the engine writes every error result
    (``_tool_error_message``), so the reader and openworker both see an error result.
    """
    return {"role": "tool", "tool_call_id": call_id, "content": json.dumps({"error": SYNTHETIC_RESULT_TEXT})}


def _results_end(transcript: Transcript, call_message: Message) -> int:
    """The line after which a call turn's next result goes: its last result, or the turn."""
    slot = listing.result_slot(transcript, call_message)
    return _index(slot.parts[-1].ref if slot is not None else call_message.ref)


def _move(transcript: Transcript, action: MoveResult, edit: Lines) -> None:
    """TD304 (issue #331): the turn's displaced results follow its results in call order.

    Results of one turn moved in one editor all land after the same line, in the order
    they are inserted, while findings arrive in file order, which parallel calls need not
    follow.  So the first move of a turn moves every displaced result of that turn, in
    ``tool_calls`` order; the others find their line already moved.
    """
    moved = _MOVED.setdefault(edit, set())
    line = _index(action.part.ref)
    if line in moved:
        return
    displaced = _displaced(transcript, action.call_message)
    if line not in displaced:
        raise EditError("the result does not answer a call of that turn")
    anchor = _results_end(transcript, action.call_message)
    for index in displaced:
        where = edit.line(index)
        raw = edit.data[where.start : where.end]
        edit.remove(index)
        edit.insert_after(anchor, raw=raw)
        moved.add(index)


def _displaced(transcript: Transcript, call_message: Message) -> list[int]:
    """Lines of the results that answer ``call_message`` outside its reply slot, in call order.

    Pairs by the reader's scoped ``call_id`` (Gemini's ``call_<n>`` repeats across turns,
    each result answers the latest call of that id) and, like pairing, takes the first
    result after the turn for each call; later ones are duplicates (TD303).
    """
    order = {p.call_id: n for n, p in enumerate(call_message.tool_calls) if p.call_id is not None}
    slot = listing.result_slot(transcript, call_message)
    conversation, index = transcript.locate(call_message)
    first: dict[str, tuple[Message, Part]] = {}
    for message in conversation.messages[index + 1 :]:
        for part in message.tool_results:
            if part.call_id in order and part.call_id not in first:
                first[part.call_id] = (message, part)
    found = sorted(first.items(), key=lambda item: order[item[0]])
    return [_index(part.ref) for _, (message, part) in found if message is not slot]


REPAIR = OpenworkerRepair()
