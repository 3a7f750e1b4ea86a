"""Byte edits of Copilot CLI event logs for ``fix`` (reader ``copilot-cli``, spec §7).

A repair adds or removes whole event lines.  Each line's ``parentId`` names the line above
it ("the chronologically preceding event", SDK ``SessionEvent``), across agents, so an edit
re-points the one line whose link it broke: the line after a removed event takes the removed
event's place in the chain, and the line after an inserted event names the new one.  A link
that was already broken (the CLI's own recovery leaves them, and resumes fine) is left as it
is.  One :class:`Chain` per editor remembers what earlier repairs of the same run did.

The synthetic result is the CLI's own resume-time completion (``kill-tool`` E:9: ``{type:
"tool.execution_complete", data: {toolCallId, model: "resumed", interactionId: "resume",
success: false, error: {message, code: "interrupted"}}, id, timestamp, parentId}``) without
``model``/``interactionId``, which would claim the CLI wrote it; ``success`` and
``toolCallId`` are the SDK's required fields, ``error.code`` optional.  It goes right after
the call's ``tool.execution_start`` (or its ``assistant.message`` when the start is
missing), with the timestamp of the line it follows and an id derived from that line and the
call (the same damage is always repaired with the same bytes).

A displaced completion (TD304) is moved, not rewritten: the same line, with its own ``id``,
goes to the end of its call's step (the ``assistant.message``, then the lines the CLI writes
for that step before anything else: the main agent's ``tool.execution_start`` and
``tool.execution_complete`` of the message's calls, and the sub-agent events a ``task`` call
runs), which is where the CLI writes a completion.  Its ``parentId`` names the line it now
follows, the line that followed it names its old predecessor, and the line after its new
place names it: the chain stays whole (a link that was already broken stays as it is).
"""

from __future__ import annotations

import uuid
from typing import Any
from weakref import WeakKeyDictionary

import orjson

from transcript_doctor.actions import (
    SYNTHETIC_RESULT_TEXT,
    InsertResult,
    MoveResult,
    RemoveDuplicate,
    RemoveMessage,
    RemoveResult,
    RepairRecord,
)
from transcript_doctor.editing import EditError, JsonText, Lines, splice
from transcript_doctor.model import Message, Part, PartKind
from transcript_doctor.plain import Mutable
from transcript_doctor.readers.base import Edit, Repair
from transcript_doctor.readers.copilot_cli import torn
from transcript_doctor.readers.copilot_cli.refs import CallRef, EventRef
from transcript_doctor.source import REJOIN
from transcript_doctor.transcript import Transcript

_MISSING = object()
_CHAINS: WeakKeyDictionary[Lines, Chain] = WeakKeyDictionary()


def derived_id(follows: str, call_id: str) -> str:
    """A UUID v4-shaped event id that depends only on the line it follows and the call."""
    import hashlib  # OpenSSL's start-up only when an id is made: lint loads this module too

    digest = hashlib.sha256(
        f"transcript-doctor\0{follows}\0{call_id}".encode("utf-8", "surrogatepass")
    ).digest()
    return str(uuid.UUID(bytes=digest[:16], version=4))


class Chain(Mutable):
    """The ``parentId`` chain of one file as the repairs of one editor leave it.  (A plain
    class: a dataclass compiles its methods at import, and lint imports a layout's repairs
    to tell which findings are fixable.)"""

    __slots__ = ("_records", "edit", "removed", "tail")
    edit: Lines
    removed: set[int]
    tail: dict[int, str]  # last event inserted after a line
    _records: dict[int, Any]

    def __init__(self, edit: Lines) -> None:
        self.edit = edit
        self.removed = set()
        self.tail = {}
        self._records = {}

    def record(self, index: int) -> Any:
        if index not in self._records:
            line = self.edit.line(index)
            start = line.start + (3 if index == 0 and self.edit.source.bom else 0)
            try:
                self._records[index] = orjson.loads(self.edit.data[start : line.end])
            except orjson.JSONDecodeError:
                self._records[index] = None
        return self._records[index]

    def field(self, index: int, key: str) -> Any:
        record = self.record(index) if 0 <= index < len(self.edit.lines) else None
        return record.get(key, _MISSING) if isinstance(record, dict) else _MISSING

    def end_id(self, index: int) -> str | None:
        """The id of the event that now ends the chain at line ``index`` (its own, the
        last one inserted after it, or, when it was removed, the one before it)."""
        while index >= 0:
            if index in self.tail:
                return self.tail[index]
            if index not in self.removed:
                own = self.field(index, "id")
                if not isinstance(own, str):
                    raise EditError(f"line {self.edit.line(index).number} has no event id to link to")
                return own
            index -= 1
        return None

    def relink(self, index: int) -> None:
        """Point the first line kept after ``index`` at the event now before it, if its link
        named the line above it (an intact link)."""
        following = index + 1
        while following in self.removed:
            following += 1
        if following >= len(self.edit.lines):
            return
        parent = self.field(following, "parentId")
        if parent != self.field(following - 1, "id") or parent is _MISSING:
            return  # a link that was already broken stays as it is
        new = self.end_id(following - 1)
        if new != parent:
            self.edit.text(following).replace("/parentId", new)

    def remove(self, index: int) -> None:
        if not isinstance(self.record(index), dict):
            raise EditError(f"line {self.edit.line(index).number} is not one whole event")
        if index in self.tail:
            raise EditError(f"line {self.edit.line(index).number} has a repair after it")
        self.removed.add(index)
        self.edit.remove(index)
        self.relink(index)

    def insert_after(self, index: int, build: Any) -> None:
        """Insert the event ``build(parent)`` returns after line ``index``."""
        parent = self.end_id(index)
        event = build(parent)
        self.edit.insert_after(index, event)
        self.tail[index] = event["id"]
        self.relink(index)

    def move_after(self, index: int, anchor: int) -> None:
        """Move the event line ``index`` (its bytes, its id) to after line ``anchor``."""
        own = self.field(index, "id")
        if not isinstance(own, str):
            raise EditError(f"line {self.edit.line(index).number} has no event id to link to")
        parent = self.field(index, "parentId")
        intact = index > 0 and parent is not _MISSING and parent == self.field(index - 1, "id")
        line = self.edit.line(index)
        raw = self.edit.data[line.start : line.end]
        self.remove(index)
        new = self.end_id(anchor)
        if intact and new != parent:
            text = JsonText(raw, escaping=self.edit.escaping)
            text.replace("/parentId", new)
            raw = splice(raw, text.splices())
        self.edit.insert_after(anchor, raw=raw)
        self.tail[anchor] = own
        self.relink(anchor)


def chain(edit: Lines) -> Chain:
    found = _CHAINS.get(edit)
    if found is None:
        found = _CHAINS[edit] = Chain(edit)
    return found


def event_index(ref: object) -> int:
    if not isinstance(ref, EventRef):
        raise EditError("this element is not a Copilot event")
    return ref.record


def remove_event(ref: object, edit: Lines) -> str:
    """Remove one event line; the line after it takes its place in the chain."""
    chain(edit).remove(event_index(ref))
    return "remove"


def insert_result(call: Part, edit: Lines) -> str:
    """Answer ``call`` with a failed completion in the CLI's own shape (module docstring)."""
    ref = call.ref
    if not isinstance(ref, CallRef) or call.call_id is None:
        raise EditError("this tool request has no call id to answer")
    links = chain(edit)
    anchor = ref.start if ref.start is not None else ref.record
    timestamp = links.field(anchor, "timestamp")
    if not isinstance(timestamp, str):
        raise EditError(f"line {edit.line(anchor).number} has no timestamp to copy")
    call_id = call.call_id

    def build(parent: str | None) -> dict[str, Any]:
        return {
            "type": "tool.execution_complete",
            "data": {
                "toolCallId": call_id,
                "success": False,
                "error": {"message": SYNTHETIC_RESULT_TEXT, "code": "interrupted"},
            },
            "id": derived_id(parent or "", call_id),
            "timestamp": timestamp,
            "parentId": parent,
        }

    links.insert_after(anchor, build)
    return "insert"


def move_result(result: Part, call_message: Message, edit: Lines) -> str:
    """Move a displaced completion to the end of its call's step (module docstring)."""
    links = chain(edit)
    moved = event_index(result.ref)
    start = event_index(call_message.ref)
    if moved <= start:
        raise EditError("the result comes before its call")
    calls = {p.call_id for p in call_message.parts if p.kind is PartKind.TOOL_CALL and p.call_id}
    anchor = start
    for index in range(start + 1, moved):
        if index in links.removed:
            continue
        if not _in_step(links, index, calls):
            break
        anchor = index
    links.move_after(moved, anchor)
    return "move"


def _in_step(links: Chain, index: int, calls: set[str]) -> bool:
    """Whether line ``index`` is one the CLI writes inside a step of ``calls`` (module
    docstring): a sub-agent's event, or the main agent's start or completion of one of them."""
    record = links.record(index)
    if not isinstance(record, dict):
        return False
    if isinstance(record.get("agentId"), str):
        return True
    data = record.get("data")
    call_id = data.get("toolCallId") if isinstance(data, dict) else None
    return record.get("type") in ("tool.execution_start", "tool.execution_complete") and (
        isinstance(call_id, str) and call_id in calls
    )


class CopilotCliRepair(Repair):
    """Whole events added, moved or removed, the ``parentId`` chain kept whole (module
    docstring); TD001 is the base class's, and an event torn by raw newlines is rejoined."""

    def repair_record(self, transcript: Transcript, action: RepairRecord, edit: Edit) -> str:
        error = action.error
        if error.repair != REJOIN:
            return super().repair_record(transcript, action, edit)
        lines = _lines(edit)
        pieces = lines.lines[error.record : error.through + 1]
        lines.replace(error.record, torn.joined(lines.data, pieces), through=error.through)
        return "rejoin"

    def insert_result(self, transcript: Transcript, action: InsertResult, edit: Edit) -> str:
        return insert_result(action.call, _lines(edit))

    def remove_result(self, transcript: Transcript, action: RemoveResult, edit: Edit) -> str:
        return remove_event(action.part.ref, _lines(edit))

    def move_result(self, transcript: Transcript, action: MoveResult, edit: Edit) -> str:
        return move_result(action.part, action.call_message, _lines(edit))

    def remove_message(self, transcript: Transcript, action: RemoveMessage, edit: Edit) -> str:
        return remove_event(action.message.ref, _lines(edit))

    def remove_duplicate(self, transcript: Transcript, action: RemoveDuplicate, edit: Edit) -> str:
        return remove_event(action.message.ref, _lines(edit))


def _lines(edit: Edit) -> Lines:
    if not isinstance(edit, Lines):
        raise EditError("Copilot CLI event logs are JSONL")
    return edit


REPAIR = CopilotCliRepair()
