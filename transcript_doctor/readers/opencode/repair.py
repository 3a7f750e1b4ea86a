"""OpenCode's repairs: row changes in the store, or file edits in the legacy ``storage/``
folder, in OpenCode's own shapes.

TD301 (docs/formats/opencode.md §8, tried on a copy of ``kill-tool/opencode-2.db``:
``fixtures/opencode/repair-trial``, read back by ``opencode export`` and replayed by a
resumed ``opencode run``): the ``pending``/``running`` tool part becomes the ``error`` part
OpenCode writes for a failed call, by one ``UPDATE``: ``state`` = ``{status: "error",
input, error: <synthetic text>, metadata (kept if present), time: {start, end}}``.
``metadata.interrupted`` is never added: with the string ``metadata.output`` a running
bash part holds, OpenCode would replay the part as a successful empty result.  A pending
part's ``raw`` (the streamed arguments) is not in the error schema and is dropped (the
report keeps it).  The message row is left as it is (the trial did too).  In a storage
folder the same ``state`` goes into the part's file (``apply_files``), checked by OpenCode
1.1.65 itself (fixtures/opencode-legacy/fix-verify).

TD103: an assistant step killed mid-stream holds ``step-start`` and a ``text`` part with
``"text": ""`` (deltas are written when the text ends): OpenCode replays it as an empty
assistant turn.  The empty text part rows are deleted (no update can empty a part out of
the replay); the message then holds only ``step-start``, which OpenCode drops on replay.
Not offered in a storage folder (1.1.65 writes the partial text, so no empty turn was seen;
deleting a file is not made here).
"""

from __future__ import annotations

import json
import os
import re
from typing import TYPE_CHECKING, Any

from transcript_doctor.actions import SYNTHETIC_RESULT_TEXT, Action, InsertResult, RemoveMessage
from transcript_doctor.editing import EditError, JsonText
from transcript_doctor.model import Message, PartKind
from transcript_doctor.readers.base import Edit, Repair
from transcript_doctor.readers.opencode import store, tree
from transcript_doctor.readers.opencode.history import UNANSWERED, escape
from transcript_doctor.readers.opencode.refs import FileRef, RowRef
from transcript_doctor.transcript import Transcript
from transcript_doctor.treesource import Files

if TYPE_CHECKING:
    from transcript_doctor.dbsource import Rows  # (SQLite: loaded only by a database's fix)

_SURROGATE = re.compile("[\ud800-\udfff]")
EXPORT = "an OpenCode session is repaired in its database (`opencode import` keeps rows it has)"


def dumps(value: Any) -> str:
    """JSON as ``JSON.stringify`` writes it (compact, key order kept, non-ASCII raw, lone
    surrogates escaped)."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    return _SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def removable(message: Message) -> bool:
    """Whether an empty turn goes by deleting what it holds: only empty or whitespace
    text parts, each a row of its own."""
    return bool(message.parts) and all(
        p.kind is PartKind.TEXT and not p.text.strip() and isinstance(p.ref, RowRef) for p in message.parts
    )


class OpenCodeRepair(Repair):
    """Repairs of the store only: the two actions below are supported for elements read
    from a database (their refs are rows); an export's findings are not fixable."""

    def accepts(self, action: Action) -> bool:
        if isinstance(action, InsertResult):  # a call without an id stays unpaired
            return isinstance(action.call.ref, RowRef | FileRef) and action.call.call_id is not None
        if isinstance(action, RemoveMessage):  # rows only: no file of a folder is deleted
            return isinstance(action.message.ref, RowRef) and removable(action.message)
        return False

    def refusal(self, action: Action) -> str | None:
        """An export's finding points the user at the database, where it is repaired."""
        if isinstance(action, InsertResult):
            ref = action.call.ref
        elif isinstance(action, RemoveMessage):
            ref = action.message.ref
        else:
            return None
        return None if isinstance(ref, RowRef | FileRef) else EXPORT

    def apply_rows(self, transcript: Transcript, action: Action, rows: Rows) -> str:
        if isinstance(action, InsertResult):
            return self._answer(action, rows)
        if isinstance(action, RemoveMessage):
            return self._remove(action, rows)
        raise EditError(f"opencode cannot apply {type(action).__name__}")

    # The byte-file methods: defined so that the actions count as supported (for rows,
    # ``accepts`` decides); an export is never repaired in its file.
    def insert_result(self, transcript: Transcript, action: InsertResult, edit: Edit) -> str:
        raise EditError(EXPORT)

    def remove_message(self, transcript: Transcript, action: RemoveMessage, edit: Edit) -> str:
        raise EditError(EXPORT)

    def _answer(self, action: InsertResult, rows: Rows) -> str:
        ref = action.call.ref
        if not isinstance(ref, RowRef):
            raise EditError("the call is not a row of the database")
        row = rows.row("part", ref.id)
        try:
            data = store.parse(row["data"])
        except store.BadRow as exc:
            raise EditError(f"the tool part cannot be read: {exc}") from None
        state = _unanswered(data)
        updated = row.get("time_updated")
        updated = updated if isinstance(updated, int) else 0
        end = max(updated, _start(state) or 0) + 1
        data["state"] = answered(state, end)
        try:
            text = dumps(data)
        except ValueError as exc:
            raise EditError(f"the tool part cannot be written back: {exc}") from None
        rows.update("part", ref.id, action.call.origin.pointer or "", data=text, time_updated=end)
        return "replace"

    def apply_files(self, transcript: Transcript, action: Action, files: Files) -> str:
        """The legacy ``storage/`` tree: the part's file gets the same ``state`` as a row
        would, spliced into the file's own bytes (the members kept as they were written,
        the new ones in the file's indentation).  A file has no ``time_updated``: the
        end is just after the latest time its message's files hold (deterministic, and
        never before ``time.start``)."""
        if not isinstance(action, InsertResult):
            raise EditError(f"opencode cannot apply {type(action).__name__} to a storage folder")
        ref = action.call.ref
        if not isinstance(ref, FileRef):
            raise EditError("the call is not a file of a storage folder")
        text = files.text(ref.path)
        try:
            data = tree.parse(text.data)
        except tree.BadFile as exc:
            raise EditError(f"the tool part cannot be read: {exc}") from None
        state = _unanswered(data)
        if _shadows(text, ""):  # the key read is the last of two: not edited (editing.py)
            raise EditError("the part holds a key twice: it is not edited")
        end = max(_latest(files, ref), _start(state) or 0) + 1
        text.replace("/state", raw=_render(text, "/state", state, answered(state, end), 1))
        return "replace"

    def _remove(self, action: RemoveMessage, rows: Rows) -> str:
        if not removable(action.message):
            raise EditError("the turn holds more than empty text")
        for part in action.message.parts:
            assert isinstance(part.ref, RowRef)
            try:
                data = store.parse(rows.row("part", part.ref.id)["data"])
            except store.BadRow as exc:
                raise EditError(f"the text part cannot be read: {exc}") from None
            text = data.get("text")
            if data.get("type") != "text" or not isinstance(text, str) or text.strip():
                raise EditError("the text part is no longer empty")
        for part in action.message.parts:
            assert isinstance(part.ref, RowRef)
            rows.delete("part", part.ref.id, part.origin.pointer or "")
        return "remove"


def _unanswered(data: dict[str, Any]) -> dict[str, Any]:
    state = data.get("state")
    if (
        not isinstance(state, dict)
        or not isinstance(state.get("status"), str)
        or state["status"] not in UNANSWERED
    ):
        raise EditError("the tool part is no longer pending or running")
    return state


def _start(state: dict[str, Any]) -> int | None:
    time = state.get("time")
    start = time.get("start") if isinstance(time, dict) else None
    return start if isinstance(start, int) and not isinstance(start, bool) else None


def answered(state: dict[str, Any], end: int) -> dict[str, Any]:
    """The ``error`` state OpenCode writes for a failed call, for an unanswered one (docs
    §8): the values kept are the old state's own objects (``_render`` relies on it)."""
    start = _start(state)
    new: dict[str, Any] = {
        "status": "error",
        "input": state["input"] if isinstance(state.get("input"), dict) else {},
        "error": SYNTHETIC_RESULT_TEXT,
    }
    if "metadata" in state:
        new["metadata"] = state["metadata"]
    new["time"] = {"start": start if start is not None else end, "end": end}
    return new


def _latest(files: Files, ref: FileRef) -> int:
    """The latest time (``time.*``) in the files of the call's message that were read."""
    latest = 0
    folder = os.path.dirname(ref.path)
    for path, data in files.source.files.items():
        if os.path.dirname(path) != folder and not path.endswith(os.sep + ref.message + ".json"):
            continue
        try:
            value = tree.parse(data)
        except tree.BadFile:
            continue
        for holder in (value, value.get("state")):
            time = holder.get("time") if isinstance(holder, dict) else None
            if isinstance(time, dict):
                for stamp in time.values():
                    if isinstance(stamp, int) and not isinstance(stamp, bool):
                        latest = max(latest, stamp)
    return latest


def _shadows(text: JsonText, pointer: str) -> bool:
    """Whether the object at ``pointer`` holds a key twice (its members laid out first)."""
    span = text.span(pointer)
    span.members  # noqa: B018 - a deep object is indexed on first access, shadows with it
    return span.shadows


def _render(text: JsonText, pointer: str, old: Any, new: dict[str, Any], depth: int) -> bytes:
    """``new`` as an object in the file's style, each member that ``old`` holds as the very
    same object copied as it was written (its bytes untouched)."""
    if _shadows(text, pointer):
        raise EditError(f"{pointer} holds a key twice: its members are not edited")
    style = text.style(pointer)
    members = []
    for key, value in new.items():
        here = f"{pointer}/{escape(key)}"
        kept = old.get(key) if isinstance(old, dict) else None
        if key in (old if isinstance(old, dict) else {}) and value is kept:
            raw = text.raw(here)
        elif isinstance(value, dict) and isinstance(kept, dict) and kept:
            raw = _render(text, here, kept, value, depth + 1)
        else:
            raw = style.dumps(value, depth + 1)
        members.append(json.dumps(key).encode() + style.key_sep + raw)
    if style.indent is None:
        return b"{" + style.item_sep.join(members) + b"}"
    inner = style.newline + style.indent * (depth + 1)
    return b"{" + inner + (b"," + inner).join(members) + style.newline + style.indent * depth + b"}"


REPAIR = OpenCodeRepair()
