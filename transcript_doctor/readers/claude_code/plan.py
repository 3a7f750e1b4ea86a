"""Repairs of Claude Code session files: lines removed, added or moved with the uuid tree kept valid.

Claude Code replays a tree, not a list (``chain``), so every repair of spec §7 is a
line edit plus re-linking:

- removing a line points every line that named its uuid (``parentUuid``, ``logicalParentUuid``,
  summary ``leafUuid``) at its nearest surviving ancestor;
- inserting (or moving) a line after a line X parents it on X and re-links X's child **on the
  replayed path** to it.  Children off that path stay where they are: rewound branches are not
  replayed, and a 2.1.x result parented on its own ``tool_use`` line off the path is re-attached
  by the loader only while it hangs off that line (``recoverOrphanedParallelToolResults``).

The fixer applies all repairs of one rule through one editor, and repairs of one rule meet on
the same lines (two removed groups that are parent and child, two results inserted after one
call group), so one :class:`Plan` per editor remembers what earlier repairs did: which uuids
are gone and to whom they led, which line now names which uuid, what went after which line.

Inserted lines get a uuid in UUID v4 layout derived from SHA-256 of the line they follow and the
call id (:func:`derived_uuid`) instead of ``uuid4()``: the same damage is always repaired with the
same bytes, so snapshots are stable, and a second insert after the same line differs because it
follows the first.
"""

from __future__ import annotations

import re
import uuid as uuidlib
import weakref
from typing import TYPE_CHECKING, Any

from transcript_doctor.actions import SYNTHETIC_RESULT_TEXT
from transcript_doctor.editing import EditError, Lines
from transcript_doctor.jsonspan import join
from transcript_doctor.readers.claude_code.chain import timestamp_key
from transcript_doctor.readers.claude_code.refs import LineRef
from transcript_doctor.readers.relinking import LinkPlan

if TYPE_CHECKING:
    from collections.abc import Iterable

    from transcript_doctor.readers.claude_code.refs import FileRef

PARENT = "parentUuid"
LOGICAL = "logicalParentUuid"
LEAF = "leafUuid"
# Copied from the line a new line follows, in the writer's key order (2.0.64/2.1.x lines:
# parentUuid, isSidechain, userType, cwd, sessionId, version, gitBranch, agentId | slug, type, …).
ENVELOPE = ("isSidechain", "userType", "cwd", "sessionId", "version", "gitBranch", "agentId", "slug")
# ``sourceToolAssistantUUID`` is written from 2.1.x on (spec §7).
SOURCE_LINE_SINCE = (2, 1)

Pointer = tuple[int, str]  # (record index, key naming a uuid)

_PLANS: weakref.WeakKeyDictionary[Lines, Plan] = weakref.WeakKeyDictionary()


def plan_for(edit: Lines, ref: FileRef) -> Plan:
    """The plan of this editor: one per rule group, shared by all of its repairs."""
    plan = _PLANS.get(edit)
    if plan is None:
        plan = _PLANS[edit] = Plan(edit, ref)
    return plan


class Plan(LinkPlan[Pointer, LineRef]):
    """What the repairs made through one editor did so far, so the next one composes with them."""

    parent = "/" + PARENT

    def __init__(self, edit: Lines, ref: FileRef) -> None:
        super().__init__(edit)
        self.ref = ref
        self.cut: dict[int, set[int]] = {}  # content blocks removed from a line

    # -- repairs (each returns the report's verb) ----------------------------------------

    def remove_turn(self, lines: tuple[LineRef, ...]) -> str:
        """TD103/TD201/TD202: every line of the response; children go to the nearest survivor."""
        self.remove_lines(lines)
        return "remove"

    def strip(self, line: LineRef, pointer: str) -> str:
        """TD102: the trailing whitespace of one text, on the line holding it (and its copies)."""
        for index in self.twins(line):
            self.edit.text(index).strip_string(pointer)
        return "strip"

    def remove_result(self, line: LineRef, pointer: str) -> str:
        """TD302/TD303: one ``tool_result`` block; the whole line when nothing else is left."""
        if line.uuid in self.gone:
            return "remove"
        content = self.content(line.index)
        position = int(pointer.rsplit("/", 1)[1])
        if not isinstance(content, list) or not 0 <= position < len(content):
            raise EditError(f"no content block at {pointer}")
        cut = self.cut.setdefault(line.index, set())
        cut.add(position)
        if len(cut) == len(content):
            self.remove_lines((line,))
            return "remove"
        for index in self.twins(line):
            self.edit.text(index).remove(pointer)
        return "remove"

    def remove_copy(self, line: LineRef) -> str:
        """TD403: a later byte copy of a line; its uuid lives on in the first, nothing to re-link."""
        self.edit.remove(line.index)
        self.removed.add(line.index)
        return "remove"

    def relink(self, line: LineRef, target: str | None) -> str:
        """TD404: the dangling ``parentUuid`` to the nearest earlier line of the same chain.

        No earlier line of that session and sidechain: the line is the first of its chain,
        and ``null`` says so (Claude Code already treats it as a root).
        """
        for index in self.twins(line):
            self.point((index, PARENT), target)
        return "replace"

    def insert_result(self, group: tuple[LineRef, ...], holder: LineRef, call_id: str | None) -> str:
        """TD301: a user line with an error ``tool_result`` right after the call's response.

        2.1.x writes a result line parented on the line holding its own ``tool_use``
        (``sourceToolAssistantUUID``) and its loader splices such lines in after the whole
        response (spec §4 step 2b): the new line is written that way, and no other line
        changes.  Older files chain results, and a line that cannot hang off its call (no
        ``message.id`` to be spliced by, or a timestamp that would make it the newest leaf)
        goes on the replayed path: parented on the response, its former child re-linked.
        """
        if call_id is None:
            raise EditError("the tool call has no id to answer")
        anchor = group[-1]
        neighbour = self.record(anchor.index)
        if self.spliced_by_loader(holder, neighbour):
            new = derived_uuid(holder.uuid, call_id)
            line = synthetic_result(neighbour, holder.uuid, new, call_id, holder.uuid)
            self.edit.insert_after(anchor.index, line)
            return "insert"
        parent = self.tail(anchor)
        new = derived_uuid(parent, call_id)
        line = synthetic_result(neighbour, parent, new, call_id, holder.uuid)
        self.attach(anchor, new, parent, value=line)
        return "insert"

    def spliced_by_loader(self, holder: LineRef, neighbour: dict[str, Any]) -> bool:
        """Whether a result line parented on ``holder`` reaches the replay by itself.

        Claude Code re-attaches it by the holder's ``message.id``; the new line is a leaf,
        so it must be older than the leaf Claude Code resumes, or it would become that leaf.
        """
        if _version(neighbour.get("version")) < SOURCE_LINE_SINCE:
            return False
        message = self.record(holder.index).get("message")
        msg_id = message.get("id") if isinstance(message, dict) else None
        if not isinstance(msg_id, str) or not msg_id:
            return False
        written = neighbour.get("timestamp")
        mine = timestamp_key(written) if isinstance(written, str) else None
        leaf = timestamp_key(self.ref.leaf_time)
        return mine is not None and leaf is not None and mine < leaf

    def move_result(self, line: LineRef, group: tuple[LineRef, ...]) -> str:
        """TD304: the result line leaves its place (its child goes to its parent) and goes right
        after the call's response, whose child on the path then follows it."""
        anchor = group[-1]
        if line.index in self.moved:
            if self.moved[line.index] != anchor.uuid:
                raise EditError("the line holds results for calls of different responses")
            return "move"
        content = self.content(line.index)
        if not isinstance(content, list) or not all(
            isinstance(b, dict) and b.get("type") == "tool_result" for b in content
        ):
            raise EditError("the result shares its line with other content")
        own = self.versions(line)
        old_parent = self.parent_of(line)
        for pointer in self.pointers(line.uuid):
            self.point(pointer, old_parent)
        parent = self.tail(anchor)
        raw = self.relinked(line.index, parent)
        for index in own:
            self.edit.remove(index)
            self.removed.add(index)
        self.moved[line.index] = anchor.uuid
        self.attach(anchor, line.uuid, parent, raw=raw, skip=set(own))
        return "move"

    # -- the tree ----------------------------------------------------------------------

    def remove_lines(self, lines: Iterable[LineRef]) -> None:
        """Delete lines (every version of each uuid) and re-point whoever named them."""
        self.drop((line.uuid, line) for line in lines)

    def attach(
        self,
        anchor: LineRef,
        new: str,
        parent: str,
        value: Any = None,
        raw: bytes | None = None,
        skip: set[int] | None = None,
    ) -> None:
        """Put a line (parented on ``parent``) after ``anchor`` and what was inserted there
        before; ``parent``'s child on the replayed path is re-linked to it."""
        followers = [
            (index, key)
            for index, key in self.pointers(parent)
            if key == PARENT and index in self.ref.path and index not in (skip or ())
        ]
        self.edit.insert_after(anchor.index, value, raw)
        for pointer in followers:
            self.point(pointer, new)
        self.tails[anchor.uuid] = new

    def tail(self, anchor: LineRef) -> str:
        return self.tails.get(anchor.uuid, anchor.uuid)

    def pointers(self, uuid: str) -> list[Pointer]:
        """The surviving lines that name ``uuid`` now (as written, or re-aimed by this plan)."""
        candidates: list[Pointer] = [(i, PARENT) for i in self.ref.children.get(uuid, ())]
        candidates += [(i, LOGICAL) for i in self.ref.logical_children.get(uuid, ())]
        candidates += [(i, LEAF) for i in self.ref.summaries.get(uuid, ())]
        candidates += sorted(self.named.get(uuid, ()))
        found: list[Pointer] = []
        for pointer in candidates:
            if (
                pointer[0] not in self.removed
                and pointer not in found
                and self.values.get(pointer, uuid) == uuid
            ):
                found.append(pointer)
        return found

    def point(self, pointer: Pointer, value: str | None) -> None:
        index, key = pointer
        self.edit.text(index).replace(join(key), value)
        self.values[pointer] = value
        if value is not None:
            self.named.setdefault(value, set()).add(pointer)

    def parent_of(self, line: LineRef) -> str | None:
        return self.values.get((line.index, PARENT), line.parent)

    def versions(self, line: LineRef) -> list[int]:
        """Every line written with this uuid: removing only one would hand the uuid to another."""
        return self.ref.versions.get(line.uuid, [line.index])

    def twins(self, line: LineRef) -> list[int]:
        """The line and its byte-identical copies, which must stay identical (or a copy wins)."""
        own = self.raw(line.index)
        return [i for i in self.versions(line) if i == line.index or self.raw(i) == own]

    # -- lines -------------------------------------------------------------------------

    def raw(self, index: int) -> bytes:
        line = self.edit.line(index)
        return self.edit.data[line.start : line.end]

    def content(self, index: int) -> Any:
        message = self.record(index).get("message")
        return message.get("content") if isinstance(message, dict) else None


def derived_uuid(follows: str, call_id: str) -> str:
    """A UUID v4-shaped id that depends only on the line it follows and the call it answers."""
    import hashlib  # (and with it OpenSSL) when a result is written: lint loads this module too

    digest = hashlib.sha256(
        f"transcript-doctor\0{follows}\0{call_id}".encode("utf-8", "surrogatepass")
    ).digest()
    return str(uuidlib.UUID(bytes=digest[:16], version=4))


def synthetic_result(
    neighbour: dict[str, Any], parent: str, new: str, call_id: str, holder: str
) -> dict[str, Any]:
    """The missing result as Claude Code writes a failed tool's line (spec §7 example).

    ``toolUseResult`` is ``"Error: " + text`` like a rejected tool's (codemie-session line 21);
    the timestamp is that of the line it follows, so the new line can never pass the real
    leaf as the newest one.
    """
    line: dict[str, Any] = {PARENT: parent}
    line.update((key, neighbour[key]) for key in ENVELOPE if key in neighbour)
    line["type"] = "user"
    line["message"] = {
        "role": "user",
        "content": [
            {
                "type": "tool_result",
                "tool_use_id": call_id,
                "content": SYNTHETIC_RESULT_TEXT,
                "is_error": True,
            }
        ],
    }
    line["uuid"] = new
    if isinstance(neighbour.get("timestamp"), str):
        line["timestamp"] = neighbour["timestamp"]
    line["toolUseResult"] = "Error: " + SYNTHETIC_RESULT_TEXT
    if _version(neighbour.get("version")) >= SOURCE_LINE_SINCE:
        line["sourceToolAssistantUUID"] = holder
    return line


def _version(value: Any) -> tuple[int, int]:
    found = re.match(r"(\d+)\.(\d+)", value) if isinstance(value, str) else None
    return (int(found.group(1)), int(found.group(2))) if found else (0, 0)
