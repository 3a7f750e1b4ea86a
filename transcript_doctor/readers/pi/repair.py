"""Repairs of Pi session files: entries removed, added or moved with the parentId tree whole.

Pi replays the path from the last entry up the ``parentId`` links (``tree``), so every repair
is a line edit plus re-linking, as Pi itself would have written the file:

- removing an entry points every entry that named its id at its nearest surviving ancestor;
- inserting (or moving) an entry after an entry X parents it on X and re-links X's child
  **on the replayed path** to it; off-path branches keep their parent.

New lines are appended to the file right after the line they follow (never at the end: the
last line is the leaf Pi resumes, which must stay the leaf).  The fixer applies all repairs
of one rule through one editor, so one :class:`Plan` per editor remembers what earlier
repairs did (which ids are gone, which line now names which id, what follows what).

Inserted ids are 8 hex digits like Pi's (``randomUUID().slice(0, 8)``), derived from
SHA-256 of the entry they follow and the call id, so the same damage is always repaired with
the same bytes; one already in the file is skipped.
"""

from __future__ import annotations

import weakref
from typing import Any

from transcript_doctor.actions import (
    SYNTHETIC_RESULT_TEXT,
    Action,
    InsertResult,
    MoveResult,
    Relink,
    RemoveMessage,
    RemoveResult,
)
from transcript_doctor.editing import EditError, Lines
from transcript_doctor.model import Message, Part
from transcript_doctor.readers.base import Edit, Repair
from transcript_doctor.readers.pi.refs import EntryRef, FileRef, RelinkRef
from transcript_doctor.readers.relinking import LinkPlan
from transcript_doctor.transcript import Transcript

PARENT = "/parentId"

_PLANS: weakref.WeakKeyDictionary[Lines, Plan] = weakref.WeakKeyDictionary()


class PiRepair(Repair):
    """The repairs a Pi session takes (TD001 is the base class's line repair)."""

    def accepts(self, action: Action) -> bool:
        """A result entry needs the call's id and name (``toolCallId``, ``toolName``)."""
        if isinstance(action, InsertResult):
            return action.call.call_id is not None and action.call.name is not None
        return True

    def insert_result(self, t: Transcript, a: InsertResult, edit: Edit) -> str:
        """TD301: a ``toolResult`` entry with an error result, after the call's results so far.

        Written as Pi writes a tool that failed (agent-loop.js ``createToolResultMessage`` with
        ``createErrorToolResult``: ``details: {}``, ``isError: true``); its timestamps are the
        call entry's, so it never looks newer than what follows it.
        """
        plan = _plan(t, edit)
        call = _entry(a.message)
        if a.call.call_id is None:
            raise EditError("the tool call has no id to answer")
        if a.call.name is None:
            raise EditError("the tool call has no name for its result")
        anchor = plan.ref.tails.get(call.index)
        if anchor is None:
            raise EditError("the call's entry is not on the replayed path")
        record = plan.record(call.index)
        parent = plan.tail(anchor)
        new = plan.new_id(parent, a.call.call_id)
        message = record.get("message")
        line: dict[str, Any] = {"type": "message", "id": new, "parentId": parent}
        if "timestamp" in record:
            line["timestamp"] = record["timestamp"]
        result: dict[str, Any] = {
            "role": "toolResult",
            "toolCallId": a.call.call_id,
            "toolName": a.call.name,
            "content": [{"type": "text", "text": SYNTHETIC_RESULT_TEXT}],
            "details": {},
            "isError": True,
        }
        if isinstance(message, dict) and "timestamp" in message:
            result["timestamp"] = message["timestamp"]
        line["message"] = result
        plan.attach(anchor, new, parent, value=line)
        return "insert"

    def remove_result(self, t: Transcript, a: RemoveResult, edit: Edit) -> str:
        """TD302/TD303: a ``toolResult`` entry holds one result: the entry goes, its children
        are re-linked to its parent."""
        _plan(t, edit).remove((_part_entry(a.part),))
        return "remove"

    def remove_message(self, t: Transcript, a: RemoveMessage, edit: Edit) -> str:
        """TD101/TD103/TD201/TD202: one entry per message: the entry goes, children re-linked."""
        _plan(t, edit).remove((_entry(a.message),))
        return "remove"

    def move_result(self, t: Transcript, a: MoveResult, edit: Edit) -> str:
        """TD304: the result entry leaves its place (its children go to its parent) and goes
        after the call's results so far, whose child on the path then follows it."""
        plan = _plan(t, edit)
        line = _part_entry(a.part)
        call = _entry(a.call_message)
        anchor = plan.ref.tails.get(call.index)
        if anchor is None:
            raise EditError("the call's entry is not on the replayed path")
        plan.move(line, anchor)
        return "move"

    def relink(self, t: Transcript, a: Relink, edit: Edit) -> str:
        """TD404: the dangling ``parentId`` to the entry written just before it (null at the top)."""
        link = a.link.ref
        if not isinstance(link, RelinkRef):
            raise EditError("the link names no entry")
        plan = _plan(t, edit)
        for index in plan.versions(link.entry):
            plan.point(index, link.target)
        return "replace"


REPAIR = PiRepair()


# -- the plan ------------------------------------------------------------------------------


def _plan(t: Transcript, edit: Edit) -> Plan:
    if not isinstance(edit, Lines):
        raise EditError("a Pi session is edited by lines")
    (conversation,) = t.conversations
    ref = conversation.ref
    if not isinstance(ref, FileRef):
        raise EditError("not a Pi session of this reader")
    plan = _PLANS.get(edit)
    if plan is None:
        plan = _PLANS[edit] = Plan(edit, ref)
    return plan


def _entry(message: Message) -> EntryRef:
    if not isinstance(message.ref, EntryRef):
        raise EditError("the message names no entry")
    return message.ref


def _part_entry(part: Part) -> EntryRef:
    if not isinstance(part.ref, EntryRef):
        raise EditError("the result names no entry")
    return part.ref


class Plan(LinkPlan[int, EntryRef]):
    """What the repairs made through one editor did so far, so the next one composes."""

    parent = PARENT

    def __init__(self, edit: Lines, ref: FileRef) -> None:
        super().__init__(edit)
        self.ref = ref
        self.made: set[str] = set()  # ids given to new entries

    def remove(self, entries: tuple[EntryRef, ...]) -> None:
        """Delete entries (every line of each id), then re-point whoever named them."""
        self.drop((entry.id, entry) for entry in entries)
        for entry in entries:
            if entry.index == self.ref.leaf:
                self.keep_leaf(self.survivor(entry.id))

    def keep_leaf(self, ancestor: str | None) -> None:
        """Pi resumes from the last entry line: with the leaf gone, the line left last must
        be the leaf's nearest surviving ancestor, or resume would follow another branch."""
        last = next((i for i, _ in reversed(self.ref.order) if i not in self.removed), None)
        name = next((e for i, e in reversed(self.ref.order) if i == last), None)
        if ancestor is None or name != ancestor:
            raise EditError(
                "the last entry goes, and the line left last is not its parent: Pi would resume elsewhere"
            )

    def move(self, entry: EntryRef, anchor: EntryRef) -> None:
        if entry.index in self.moved:
            return
        if len(self.versions(entry)) > 1:
            raise EditError("the result's id is written on more than one line")
        old_parent = self.parent_of(entry)
        for index in self.pointers(entry.id):
            self.point(index, old_parent)
        parent = self.tail(anchor)
        raw = self.relinked(entry.index, parent)
        self.edit.remove(entry.index)
        self.removed.add(entry.index)
        if entry.index == self.ref.leaf:
            self.keep_leaf(self.survivor(old_parent))
        self.moved[entry.index] = parent
        self.attach(anchor, entry.id, parent, raw=raw, skip={entry.index})

    def attach(
        self,
        anchor: EntryRef,
        new: str,
        parent: str,
        value: Any = None,
        raw: bytes | None = None,
        skip: set[int] | None = None,
    ) -> None:
        """Put a line (parented on ``parent``) after ``anchor`` and what was inserted there
        before; ``parent``'s child on the replayed path is re-linked to it."""
        if anchor.index in self.removed:
            raise EditError("the entry to insert after is removed by another repair")
        followers = [i for i in self.pointers(parent) if i in self.ref.path and i not in (skip or ())]
        self.edit.insert_after(anchor.index, value, raw)
        for index in followers:
            self.point(index, new)
        self.tails[anchor.id] = new

    def tail(self, anchor: EntryRef) -> str:
        return self.tails.get(anchor.id, anchor.id)

    def new_id(self, follows: str, call_id: str) -> str:
        """8 hex digits from the entry followed and the call answered, not already taken."""
        import hashlib  # OpenSSL's start-up only when an id is made: lint loads this module too

        for attempt in range(1000):
            seed = f"transcript-doctor\0{follows}\0{call_id}\0{attempt}"
            new = hashlib.sha256(seed.encode("utf-8", "surrogatepass")).hexdigest()[:8]
            if new not in self.ref.ids and new not in self.made:
                self.made.add(new)
                return new
        raise EditError("no free entry id")  # pragma: no cover - 1000 collisions in 2**32

    def pointers(self, parent: str) -> list[int]:
        """The surviving entries whose ``parentId`` names ``parent`` now."""
        found: list[int] = []
        for index in [*self.ref.children.get(parent, ()), *sorted(self.named.get(parent, ()))]:
            if index in self.removed or index in found:
                continue
            if self.values.get(index, parent) == parent:
                found.append(index)
        return found

    def point(self, index: int, value: str | None) -> None:
        self.edit.text(index).replace(PARENT, value)
        self.values[index] = value
        if value is not None:
            self.named.setdefault(value, set()).add(index)

    def parent_of(self, entry: EntryRef) -> str | None:
        return self.values.get(entry.index, entry.parent)

    def versions(self, entry: EntryRef) -> list[int]:
        return self.ref.versions.get(entry.id, [entry.index])
