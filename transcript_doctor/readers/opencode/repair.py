"""OpenCode's repairs: row changes in the store, in OpenCode's own shapes.

TD301 (docs/formats/opencode.md §8, tried on a copy of ``kill-tool/opencode-2.db``:
``fixtures/opencode/repair-trial``, read back by ``opencode export`` and replayed by a
resumed ``opencode run``): the ``pending``/``running`` tool part becomes the ``error`` part
OpenCode writes for a failed call, by one ``UPDATE``: ``state`` = ``{status: "error",
input, error: <synthetic text>, metadata (kept if present), time: {start, end}}``.
``metadata.interrupted`` is never added: with the string ``metadata.output`` a running
bash part holds, OpenCode would replay the part as a successful empty result.  A pending
part's ``raw`` (the streamed arguments) is not in the error schema and is dropped (the
report keeps it).  The message row is left as it is (the trial did too).

TD103: an assistant step killed mid-stream holds ``step-start`` and a ``text`` part with
``"text": ""`` (deltas are written when the text ends): OpenCode replays it as an empty
assistant turn.  The empty text part rows are deleted (no update can empty a part out of
the replay); the message then holds only ``step-start``, which OpenCode drops on replay.
"""

from __future__ import annotations

import json
import re
from typing import Any

from transcript_doctor.actions import SYNTHETIC_RESULT_TEXT, Action, InsertResult, RemoveMessage
from transcript_doctor.dbsource import Rows
from transcript_doctor.editing import EditError
from transcript_doctor.model import Message, PartKind
from transcript_doctor.readers.base import Edit, Repair
from transcript_doctor.readers.opencode import store
from transcript_doctor.readers.opencode.history import UNANSWERED
from transcript_doctor.readers.opencode.refs import RowRef
from transcript_doctor.transcript import Transcript

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
        if isinstance(action, InsertResult):
            return isinstance(action.call.ref, RowRef)
        if isinstance(action, RemoveMessage):
            return isinstance(action.message.ref, RowRef) and removable(action.message)
        return False

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
        state = data.get("state")
        if (
            not isinstance(state, dict)
            or not isinstance(state.get("status"), str)
            or state["status"] not in UNANSWERED
        ):
            raise EditError("the tool part is no longer pending or running")
        time = state.get("time")
        start = time.get("start") if isinstance(time, dict) else None
        updated = row.get("time_updated")
        updated = updated if isinstance(updated, int) else 0
        end = max(updated, start if isinstance(start, int) else 0) + 1
        new: dict[str, Any] = {
            "status": "error",
            "input": state.get("input") if isinstance(state.get("input"), dict) else {},
            "error": SYNTHETIC_RESULT_TEXT,
        }
        if "metadata" in state:
            new["metadata"] = state["metadata"]
        new["time"] = {"start": start if isinstance(start, int) else end, "end": end}
        data["state"] = new
        try:
            text = dumps(data)
        except ValueError as exc:
            raise EditError(f"the tool part cannot be written back: {exc}") from None
        rows.update("part", ref.id, action.call.origin.pointer or "", data=text, time_updated=end)
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


REPAIR = OpenCodeRepair()
