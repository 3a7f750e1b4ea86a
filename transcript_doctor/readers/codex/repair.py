"""Byte edits of Codex rollout items for ``fix`` (reader ``codex``, spec codex.md §7).

An item is either a whole line (its payload at ``/payload``, or the line itself in the
legacy layout) or an element of the latest ``compacted.replacement_history``, which is
where the replayed history starts: an item that lives there is edited in that array, never
copied out of it.  Lines have no links, so removing an item is deleting it; new items are
written in Codex's own serde shape (compact, key order ``timestamp, type, payload``) with
the timestamp of the line they follow.  Codex items carry no id on disk (``id`` is not
serialised), so a synthetic output needs none: it is found by its ``call_id``.

Removing an assistant ``message`` can leave the ``reasoning`` item that produced it
without a following item, which the Responses API rejects (``Item 'rs_…' of type
'reasoning' was provided without its required following item.``); such a reasoning item
goes with it.  The ``event_msg`` mirrors of removed items stay: they are display-only.
"""

from __future__ import annotations

import json
from typing import Any
from weakref import WeakKeyDictionary

from transcript_doctor.actions import (
    SYNTHETIC_RESULT_TEXT,
    Action,
    InsertResult,
    MoveResult,
    RemoveDuplicate,
    RemoveMessage,
    RemoveResult,
    StripTrailingWhitespace,
)
from transcript_doctor.editing import EditError, Lines
from transcript_doctor.model import Conversation, Message, Part, Role
from transcript_doctor.plain import Mutable
from transcript_doctor.readers import listing
from transcript_doctor.readers.base import Edit, Repair
from transcript_doctor.readers.codex.history import ItemRef
from transcript_doctor.readers.codex.reader import LEGACY, Layout
from transcript_doctor.transcript import Transcript

HISTORY = "/payload/replacement_history"
# The output item that answers each call kind (normalize.rs `ensure_call_outputs_present`).
# A client `tool_search_output` has no text field to say it is synthetic: not repaired.
OUTPUT_KINDS = {
    "function_call": "function_call_output",
    "local_shell_call": "function_call_output",
    "custom_tool_call": "custom_tool_call_output",
}

# The items removed so far through one editor.  The fixer applies every finding of a rule
# group to a single editor, one action at a time: whether a reasoning item is left without
# a following item depends on what the group's other actions removed.
_REMOVED: WeakKeyDictionary[Lines, set[ItemRef]] = WeakKeyDictionary()


def refs(message: Message) -> list[ItemRef]:
    """The items a message was read from, in file order."""
    found = message.ref
    if not isinstance(found, list) or not found:
        raise EditError("this message is not made of rollout items")
    return [ref for ref in found if isinstance(ref, ItemRef)]


def part_ref(part: Part) -> ItemRef:
    if not isinstance(part.ref, ItemRef):
        raise EditError("this part is not a rollout item")
    return part.ref


class Items(Mutable):
    """Item-level edits through one editor.  ``inner`` is where a line's item sits:
    ``/payload`` in a RolloutLine, the whole line (``""``) in the legacy layout.  (A plain
    class: a dataclass compiles its methods at import, and lint imports a layout's repairs
    to tell which findings are fixable.)"""

    __slots__ = ("edit", "inner")
    edit: Lines
    inner: str

    def __init__(self, edit: Lines, inner: str) -> None:
        self.edit, self.inner = edit, inner

    @property
    def removed(self) -> set[ItemRef]:
        return _REMOVED.setdefault(self.edit, set())

    def pointer(self, ref: ItemRef) -> str:
        """The item's JSON Pointer inside its line."""
        return f"{HISTORY}/{ref.history}" if ref.history is not None else self.inner

    def remove(self, ref: ItemRef) -> None:
        self.removed.add(ref)
        if ref.history is None:
            self.edit.remove(ref.record)
        else:
            self.edit.text(ref.record).remove(self.pointer(ref))

    def strip(self, ref: ItemRef) -> None:
        """Strip the trailing whitespace of one text of a message item."""
        content = "/content" if ref.content is None else f"/content/{ref.content}/text"
        self.edit.text(ref.record).strip_string(self.pointer(ref) + content)

    def insert_after(self, anchor: ItemRef, payload: dict[str, Any]) -> None:
        """A new item right after ``anchor``, in the anchor's array or as the next line."""
        if anchor.history is not None:
            self.edit.text(anchor.record).insert(HISTORY, anchor.history + 1, payload)
        elif not self.inner:
            self.edit.insert_after(anchor.record, payload)
        else:
            line = {"timestamp": self._timestamp(anchor.record), "type": "response_item", "payload": payload}
            self.edit.insert_after(anchor.record, line)

    def move_after(self, anchor: ItemRef, moved: ItemRef) -> None:
        """Move an item, bytes unchanged, to right after ``anchor``.

        A whole line keeps its own timestamp.  Into the replacement_history only its
        payload can go (the array's items have no envelope); out of it nothing can,
        because a new line would need a timestamp nobody recorded.
        """
        if anchor.history is not None:
            raw = self.edit.text(moved.record).raw(self.pointer(moved))
            self.edit.text(anchor.record).insert(HISTORY, anchor.history + 1, raw=raw)
        elif moved.history is None:
            line = self.edit.line(moved.record)
            self.edit.insert_after(anchor.record, raw=self.edit.data[line.start : line.end])
        else:
            raise EditError("cannot move an item out of the compacted history without inventing a timestamp")
        self.remove(moved)

    def _timestamp(self, record: int) -> str:
        value = json.loads(self.edit.text(record).raw("/timestamp"))
        if not isinstance(value, str):
            raise EditError(f"line {self.edit.line(record).number} has no timestamp to copy")
        return value


def answerable(call: Part) -> bool:
    """Whether a synthetic output can answer ``call`` in Codex's own shape."""
    return isinstance(call.ref, ItemRef) and call.ref.kind in OUTPUT_KINDS and call.call_id is not None


def synthetic_output(call: Part) -> dict[str, Any]:
    """The output item Codex would write for ``call``, carrying the synthetic text.

    Responses API outputs have no error flag; the text says the result is missing.
    """
    if not answerable(call):
        raise EditError(f"no output item can answer a {part_ref(call).kind} without guessing its shape")
    return {
        "type": OUTPUT_KINDS[part_ref(call).kind],
        "call_id": call.call_id,
        "output": SYNTHETIC_RESULT_TEXT,
    }


def remove_turn(items: Items, conversation: Conversation, message: Message) -> None:
    """Remove a turn's assistant ``message`` items (all its items when it has none, i.e.
    a contentless reasoning-only turn), and each reasoning item directly before a removed
    message that is left producing nothing."""
    turn = refs(message)
    targets = [ref for ref in turn if ref.kind == "message"] or turn
    for ref in targets:
        items.remove(ref)
    order, outputs = _replayed(conversation)
    position = {ref: index for index, ref in enumerate(order)}
    removed = items.removed
    for ref in targets:
        index = position.get(ref)
        if ref.kind != "message" or index is None:
            continue
        before = next((order[i] for i in range(index - 1, -1, -1) if order[i] not in removed), None)
        if before is None or before.kind != "reasoning":
            continue
        after = next((order[i] for i in range(index + 1, len(order)) if order[i] not in removed), None)
        if after not in outputs:
            items.remove(before)


def reply_end(transcript: Transcript, call_message: Message) -> ItemRef:
    """The last item of a call's batch: its outputs right after the turn, or the turn."""
    slot = listing.result_slot(transcript, call_message)
    return refs(slot if slot is not None else call_message)[-1]


def _replayed(conversation: Conversation) -> tuple[list[ItemRef], set[ItemRef]]:
    """Every replayed item in file order, and which of them are model output (the items
    a reasoning item produces: assistant messages, calls, searches)."""
    order: list[ItemRef] = []
    outputs: set[ItemRef] = set()
    for message in conversation.messages:
        if not isinstance(message.ref, list):
            continue
        for ref in message.ref:
            if isinstance(ref, ItemRef):
                order.append(ref)
                if message.role is Role.ASSISTANT and ref.kind != "reasoning":
                    outputs.add(ref)
    order.sort(key=lambda ref: (ref.record, -1 if ref.history is None else ref.history))
    return order, outputs


class CodexRepair(Repair):
    """Repairs are item edits (spec §7): each item is a line or an element of the latest
    replacement_history, found again through its ``ItemRef``; TD001 is the base class's."""

    def accepts(self, action: Action) -> bool:
        """A call kind with no output shape that can carry the synthetic text (a client
        ``tool_search_call``) is not answered: lint must not promise that fix."""
        return not isinstance(action, InsertResult) or answerable(action.call)

    def remove_message(self, transcript: Transcript, action: RemoveMessage, edit: Edit) -> str:
        (conversation,) = transcript.conversations
        remove_turn(_items(transcript, edit), conversation, action.message)
        return "remove"

    def remove_duplicate(self, transcript: Transcript, action: RemoveDuplicate, edit: Edit) -> str:
        items = _items(transcript, edit)
        for ref in refs(action.message):
            items.remove(ref)
        return "remove"

    def strip_trailing_whitespace(
        self, transcript: Transcript, action: StripTrailingWhitespace, edit: Edit
    ) -> str:
        _items(transcript, edit).strip(part_ref(action.part))
        return "strip"

    def remove_result(self, transcript: Transcript, action: RemoveResult, edit: Edit) -> str:
        _items(transcript, edit).remove(part_ref(action.part))
        return "remove"

    def insert_result(self, transcript: Transcript, action: InsertResult, edit: Edit) -> str:
        _items(transcript, edit).insert_after(part_ref(action.call), synthetic_output(action.call))
        return "insert"

    def move_result(self, transcript: Transcript, action: MoveResult, edit: Edit) -> str:
        items = _items(transcript, edit)
        items.move_after(reply_end(transcript, action.call_message), part_ref(action.part))
        return "move"


def _items(transcript: Transcript, edit: Edit) -> Items:
    if not isinstance(edit, Lines):
        raise EditError("rollouts are JSONL")
    (conversation,) = transcript.conversations
    layout = conversation.ref
    assert isinstance(layout, Layout)
    return Items(edit, "" if layout.kind == LEGACY else "/payload")


REPAIR = CodexRepair()
