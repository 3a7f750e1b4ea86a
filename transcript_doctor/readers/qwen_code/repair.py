"""``fix`` for Qwen Code session JSONL: line edits that keep the ``parentUuid`` chain whole.

Spec: shared/spec/formats/qwen-code.md §7.  Qwen Code replays the chain walked back from
the last record through ``parentUuid``, so every repair is two things at once: the lines
it deletes, adds or patches, and the links that keep the chain continuous around them.

- Removing a record deletes every line of its uuid (the vendor merges them into one
  record) and points every record that named it as parent at its own parent.
- Inserting a record after another links it in (``parentUuid`` = the record it follows)
  and re-links the former chain child to it.  Moving a result is a removal plus an
  insertion of the original line with the new parent.
- A Content inside a ``chat_compression`` record's ``compressedHistory`` is edited as an
  array item inside that line; nothing links to it.

One fix group applies many actions to one editor (two duplicates in one record, records
that are parent and child of each other, two results for one call turn), so the links as
they stand after the earlier actions of the group are kept in a :class:`_Plan` per editor.

An insertion lands at the start offset of the line after the one it follows.  When that
line is removed in the same group, the insertion is placed after the removed line instead
(one splice with the removal): a zero-width splice and a removal at one offset make undo
steps the report cannot order (see ``_Plan.insert_after`` and ``_Plan._drop``).

New uuids are UUID v4 values derived from a hash of the calling record's uuid and the call
id rather than drawn at random: the vendor's id shape is kept and a repaired file (and its
snapshot) is the same on every run.
"""

from __future__ import annotations

import itertools
import uuid as uuidlib
from collections.abc import Callable
from typing import Any
from weakref import WeakKeyDictionary

from transcript_doctor.actions import (
    SYNTHETIC_RESULT_TEXT,
    InsertResult,
    MoveResult,
    Relink,
    RemoveDuplicate,
    RemoveMessage,
    RemoveResult,
    StripTrailingWhitespace,
)
from transcript_doctor.editing import EditError, JsonText, Lines, Splice, splice
from transcript_doctor.model import Message, Part, PartKind
from transcript_doctor.readers.base import Edit, Repair
from transcript_doctor.readers.qwen_code.refs import ChainRef, CompressedRef, LineCopyRef, LinkRef, RecordRef
from transcript_doctor.transcript import Transcript

HISTORY = "/systemPayload/compressedHistory"


class _Plan:
    """The chain as the actions applied so far through one editor have left it.

    ``parent``/``children`` are the current ``parentUuid`` links of the file's lines;
    ``next``/``previous`` the replayed chain (uuids), where inserted records also appear.
    Inserted records exist only as new bytes, so nothing may re-link them afterwards.
    """

    def __init__(self, edit: Lines, chain: ChainRef) -> None:
        self.edit = edit
        self.uuid_of: dict[int, str] = {}
        self.parent: dict[int, str | None] = {}
        self.lines: dict[str, list[int]] = {}
        self.children: dict[str, set[int]] = {}
        for index, uuid, parent in chain.records:
            self.uuid_of[index] = uuid
            self.parent[index] = parent
            self.lines.setdefault(uuid, []).append(index)
            if parent is not None:
                self.children.setdefault(parent, set()).add(index)
        self.known = set(self.lines)
        self.next: dict[str, str] = dict(itertools.pairwise(chain.uuids))
        self.previous: dict[str, str] = {b: a for a, b in itertools.pairwise(chain.uuids)}
        self.added: dict[str, str] = {}  # inserted uuid -> its parent
        self.tail: dict[str, str] = {}  # record -> the last record inserted after it
        self.moved: set[object] = set()
        self.gone: set[tuple[int, str | None]] = set()  # removed parts (line, pointer)
        self.anchors: set[int] = set()  # lines something was inserted after
        self.dropped: set[int] = set()  # lines removed

    def current(self, line: int) -> bytes:
        """The line's bytes with the edits made inside it so far."""
        span = self.edit.line(line)
        shifted = [
            Splice(s.start - span.start, s.end - span.start, s.new) for s in self.edit.text(line).splices()
        ]
        return splice(self.edit.data[span.start : span.end], shifted)

    # -- links ---------------------------------------------------------------------

    def relink(self, line: int, parent: str | None) -> None:
        self.edit.text(line).replace("/parentUuid", parent)
        self._detach(line)
        self.parent[line] = parent
        if parent is not None:
            self.children.setdefault(parent, set()).add(line)

    def _detach(self, line: int) -> None:
        old = self.parent.get(line)
        if old is not None:
            self.children.get(old, set()).discard(line)

    # -- records -------------------------------------------------------------------

    def remove(self, uuid: str) -> None:
        """Delete every line of ``uuid``; its children take its parent."""
        if uuid in self.added.values():
            raise EditError("a record this fix inserted would lose its parent")
        lines = self.lines.pop(uuid, [])
        if not lines:
            return  # removed already by an earlier action of this group
        target = self.parent[lines[0]]  # the vendor follows the first line's link
        for line in lines:
            self._drop(line)
        for child in sorted(self.children.pop(uuid, set()) - set(lines)):
            self.relink(child, None if target == uuid else target)
        before, after = self.previous.pop(uuid, None), self.next.pop(uuid, None)
        if before is not None:
            self._join(before, after)
        elif after is not None:
            self.previous.pop(after, None)

    def drop_copy(self, line: int) -> None:
        """Delete one byte-identical copy line; the first copy keeps the uuid (TD403)."""
        uuid = self.uuid_of[line]
        if line in self.lines.get(uuid, []):
            self.lines[uuid].remove(line)
            self._drop(line)

    def _drop(self, line: int) -> None:
        if line - 1 in self.anchors:
            # The insertion sits at this line's start offset: the report's undo steps
            # cannot order a zero-width splice and a removal at one offset.
            raise EditError("a record inserted here would meet a removed line at one offset")
        self.edit.remove(line)
        self.dropped.add(line)
        self._detach(line)

    def insert_after(self, anchor: str, uuid: str, build: Callable[[str], bytes]) -> None:
        """A record right after ``anchor`` (after the records inserted there before).

        ``build`` writes the record's line for the parent it gets; the chain child that
        followed takes the new record as its parent.
        """
        lines = self.lines.get(anchor)
        if not lines:
            raise EditError("the record to insert after is gone")
        after = self.tail.get(anchor, anchor)
        position = lines[-1]
        while position + 1 in self.dropped:
            position += 1  # after the removed lines too: one splice with their removal
        self.edit.insert_after(position, raw=build(after))
        self.anchors.add(position)
        child = self.next.get(after)
        if child is not None:
            for line in self.lines.get(child, []):
                if self.parent[line] == after:
                    self.relink(line, uuid)
        self._join(after, uuid)
        if child is not None:
            self._join(uuid, child)
        self.tail[anchor] = uuid
        self.added[uuid] = after

    def _join(self, before: str, after: str | None) -> None:
        if after is None:
            self.next.pop(before, None)
            return
        self.next[before] = after
        self.previous[after] = before

    def new_uuid(self, seed: str) -> str:
        """A UUID v4 from a hash of ``seed``: stable across runs, unused in the file."""
        import hashlib  # OpenSSL's start-up only when an id is made: lint loads this module too

        for attempt in itertools.count():
            digest = hashlib.sha256(f"{seed}\0{attempt}".encode("utf-8", "surrogatepass")).digest()
            value = str(uuidlib.UUID(bytes=digest[:16], version=4))
            if value not in self.known and value not in self.added:
                return value
        raise AssertionError("unreachable")  # pragma: no cover


_PLANS: WeakKeyDictionary[Lines, _Plan] = WeakKeyDictionary()


class QwenCodeRepair(Repair):
    """Line edits that keep the parentUuid chain whole (spec §7); TD001 is the base class's."""

    def remove_message(self, transcript: Transcript, action: RemoveMessage, edit: Edit) -> str:
        _remove_message(_plan(transcript, edit), action.message)
        return "remove"

    def remove_duplicate(self, transcript: Transcript, action: RemoveDuplicate, edit: Edit) -> str:
        _remove_message(_plan(transcript, edit), action.message)
        return "remove"

    def strip_trailing_whitespace(
        self, transcript: Transcript, action: StripTrailingWhitespace, edit: Edit
    ) -> str:
        return _strip(_plan(transcript, edit), action.part)

    def remove_result(self, transcript: Transcript, action: RemoveResult, edit: Edit) -> str:
        return _remove_result(_plan(transcript, edit), action.message, action.part)

    def insert_result(self, transcript: Transcript, action: InsertResult, edit: Edit) -> str:
        return _insert_result(transcript, _plan(transcript, edit), action.message, action.call)

    def move_result(self, transcript: Transcript, action: MoveResult, edit: Edit) -> str:
        return _move_result(_plan(transcript, edit), action)

    def relink(self, transcript: Transcript, action: Relink, edit: Edit) -> str:
        return _relink(_plan(transcript, edit), action)


def _plan(transcript: Transcript, edit: Edit) -> _Plan:
    """One plan per editor: repairs of one rule meet on the same lines."""
    if not isinstance(edit, Lines):
        raise EditError("Qwen Code sessions are JSONL")
    plan = _PLANS.get(edit)
    if plan is None:
        chain = transcript.conversations[0].ref
        assert isinstance(chain, ChainRef)
        plan = _PLANS[edit] = _Plan(edit, chain)
    return plan


def _remove_message(plan: _Plan, message: Message) -> None:
    ref = message.ref
    if isinstance(ref, RecordRef):
        plan.remove(ref.uuid)
    elif isinstance(ref, LineCopyRef):
        plan.drop_copy(ref.line)
    elif isinstance(ref, CompressedRef):
        plan.edit.text(ref.line).remove(f"{HISTORY}/{ref.index}")
    else:
        raise EditError("this message has no record to remove")


def _strip(plan: _Plan, part: Part) -> str:
    """TD102: the part's ``text`` (or a bare string part) loses its trailing whitespace."""
    text = plan.edit.text(part.origin.record)
    pointer = part.origin.pointer or ""
    if not text.raw(pointer).startswith(b'"'):
        pointer += "/text"
    text.strip_string(pointer)
    return "strip"


def _remove_result(plan: _Plan, message: Message, part: Part) -> str:
    """TD302/TD303: remove the functionResponse part; the record too if nothing is left."""
    plan.gone.add((part.origin.record, part.origin.pointer))
    left = [p for p in message.parts if (p.origin.record, p.origin.pointer) not in plan.gone]
    if left:
        plan.edit.text(part.origin.record).remove(part.origin.pointer or "")
    else:
        _remove_message(plan, message)
    return "remove"


def _insert_result(transcript: Transcript, plan: _Plan, message: Message, call: Part) -> str:
    """TD301: a synthetic error ``tool_result`` right after the calling record (spec §7)."""
    response: dict[str, Any] = {}
    if call.paired_by == "id":
        response["id"] = call.call_id
    elif sum(1 for c in message.tool_calls if c.paired_by != "id" and c.name == call.name) > 1:
        # Id-less responses pair by name and position: which call it answers is a guess.
        raise EditError("several calls without ids share this name")
    response["name"] = call.name or ""
    response["response"] = {"error": SYNTHETIC_RESULT_TEXT}
    content = {"role": "user", "parts": [{"functionResponse": response}]}
    ref = message.ref
    if isinstance(ref, CompressedRef):
        plan.edit.text(ref.line).insert(HISTORY, ref.index + 1, content)
        return "insert"
    if not isinstance(ref, RecordRef):
        raise EditError("the calling message has no record to insert after")
    calling = transcript.source.record(transcript.source.lines[call.origin.record])
    if not isinstance(calling, dict):
        raise EditError("the calling record does not parse")
    new = plan.new_uuid(f"{ref.uuid}\0{call.call_id}")

    def build(parent: str) -> bytes:
        record = _envelope(calling, new, parent)
        record["message"] = content
        if call.paired_by == "id":
            record["toolCallResult"] = {"callId": call.call_id, "status": "error"}
        return plan.edit.style(call.origin.record).dumps(record)

    plan.insert_after(ref.uuid, new, build)
    return "insert"


def _envelope(calling: dict[str, Any], uuid: str, parent: str) -> dict[str, Any]:
    """``createBaseRecord()`` fields in the vendor's key order, copied from the calling
    record; ``provenance`` and ``gitBranch`` only where that record has them."""
    record: dict[str, Any] = {
        "uuid": uuid,
        "parentUuid": parent,
        "sessionId": calling.get("sessionId"),
        "timestamp": calling.get("timestamp"),
        "type": "tool_result",
    }
    if "provenance" in calling:
        record["provenance"] = "tool_result"
    record["cwd"] = calling.get("cwd")
    record["version"] = calling.get("version")
    if "gitBranch" in calling:
        record["gitBranch"] = calling["gitBranch"]
    return record


def _move_result(plan: _Plan, action: MoveResult) -> str:
    """TD304: the result's record (or compressed Content) goes right after its call.

    Only a record that holds nothing but results for that call turn can move whole;
    splitting a record would invent a new one, which the spec does not ask for.
    """
    message, call_message = action.message, action.call_message
    calls = {c.call_id for c in call_message.tool_calls}
    if any(p.kind is not PartKind.TOOL_RESULT or p.call_id not in calls for p in message.parts):
        raise EditError("the result shares its record with other content")
    ref, target = message.ref, call_message.ref
    if isinstance(ref, RecordRef) and isinstance(target, RecordRef):
        if ref.uuid in plan.moved:
            return "move"  # a second result of the same record: moved with the first
        lines = plan.lines.get(ref.uuid, [])
        if len(lines) != 1:
            raise EditError("the result's uuid is stored on several lines")
        raw = plan.current(lines[0])  # never line 0, which has no call before it: no BOM
        plan.remove(ref.uuid)
        plan.insert_after(target.uuid, ref.uuid, lambda parent: _with_parent(plan.edit, raw, parent))
        plan.moved.add(ref.uuid)
        return "move"
    if isinstance(ref, CompressedRef) and isinstance(target, CompressedRef) and ref.line == target.line:
        key = (ref.line, ref.index)
        if key not in plan.moved:
            text = plan.edit.text(ref.line)
            moved = text.raw(f"{HISTORY}/{ref.index}")
            text.remove(f"{HISTORY}/{ref.index}")
            text.insert(HISTORY, target.index + 1, raw=moved)
            plan.moved.add(key)
        return "move"
    raise EditError("the result and its call are not both records or both in one compressed history")


def _with_parent(edit: Lines, raw: bytes, parent: str) -> bytes:
    """The record's original line with only its ``parentUuid`` changed."""
    text = JsonText(raw, escaping=edit.escaping)
    text.replace("/parentUuid", parent)
    return splice(raw, text.splices())


def _relink(plan: _Plan, action: Relink) -> str:
    """TD404: the dangling link names the nearest preceding record line instead."""
    ref = action.link.ref
    if not isinstance(ref, LinkRef):
        raise EditError("this link has no record to re-link")
    lines = [line for line in ref.lines if plan.parent.get(line) == ref.missing]
    if not lines:
        raise EditError("the dangling link is gone")
    for line in lines:
        plan.relink(line, ref.previous)
    return "replace"


REPAIR = QwenCodeRepair()
