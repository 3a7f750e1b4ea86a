"""How ``fix`` repairs a Mistral Vibe ``messages.jsonl``: whole lines, and ``meta.json``
``total_messages`` with them.

Vibe keeps the number of messages it has written in ``meta.json`` beside the file
(``total_messages``) and, on an interactive resume (the TUI's ``--resume``/``-c``, the ACP
server's ``load_session``), appends ``non_system_messages[total_messages:]`` at its next
save (``SessionLogger.save_interaction``), where the list holds every loaded line that is
not a ``system`` message, then what the resumed session added.  The load itself reads every
line and ignores the count (``SessionLoader.load_session``).  So a repair that adds or
removes a line (TD301 inserts a result; TD302/TD303 remove one, TD103 a turn, TD403 a copy)
is made only together with ``meta.json``: ``Repair.companion`` names it, and
:meth:`MistralVibeRepair.rewrite_companion` sets ``total_messages`` to the number of lines
the repaired file loads as non-system messages, changing nothing else of ``meta.json``.
Without ``meta.json`` (standard input, a missing or unreadable file, no integer count)
those repairs are not made, and ``fix`` says why.  Without ``meta.json`` Vibe itself does
not list or resume a session (``SessionLoader._read_validated_session``).

``fix --in-place`` writes ``meta.json`` first, then ``messages.jsonl`` (fixing.py): a crash
between the two leaves the damaged transcript, still found by lint, beside the count the
repair will need, and the next ``fix`` completes the pair.  For an inserted result that
state is also what Vibe's resume expects: it fills the missing result in memory
(``_fill_missing_tool_responses``), so its list is one message longer than the file, as
the new count says (docs/formats/mistral-vibe.md section 7).

Count-neutral repairs need no ``meta.json``: moving a displaced result (TD304), splitting
a glued line and dropping a torn final line (TD001: Vibe cannot load the session at all
until it is gone, and the torn write was never counted, since Vibe rewrites ``meta.json``
only after the append).
"""

from __future__ import annotations

import json

import orjson

from transcript_doctor.actions import (
    SYNTHETIC_RESULT_TEXT,
    Action,
    InsertResult,
    MoveResult,
    RemoveDuplicate,
    RemoveMessage,
    RemoveResult,
)
from transcript_doctor.editing import EditError, JsonText, Lines
from transcript_doctor.model import Message, Part, PartKind
from transcript_doctor.readers import listing
from transcript_doctor.readers.base import Edit, Repair
from transcript_doctor.source import BOM, Source
from transcript_doctor.transcript import Transcript

META = "meta.json"
COUNT = "total_messages"
COUNT_CHANGE = (
    "{what} would {change} the number of lines in messages.jsonl, which Mistral Vibe also "
    "counts in meta.json total_messages (its next save on resume appends from that count)"
)
# Actions that add or remove a line, and the words for them.
_COUNTING: dict[type[Action], tuple[str, str]] = {
    InsertResult: ("inserting the missing result", "raise"),
    RemoveResult: ("removing the result", "lower"),
    RemoveMessage: ("removing the turn", "lower"),
    RemoveDuplicate: ("removing the copy", "lower"),
}
# A failed tool's result as Vibe writes it (agent_loop.py _emit_failed_tool_events,
# vibe/core/utils/tags.py TOOL_ERROR_TAG): ``<tool_error>{tool}: {error}</tool_error>``.
TOOL_ERROR = "<tool_error>{name}: {error}</tool_error>"


class MistralVibeRepair(Repair):
    """Whole lines, in Vibe's own line shape; ``meta.json`` kept in step (module docstring)."""

    companion = META

    def needs_companion(self, action: Action) -> str | None:
        words = _COUNTING.get(type(action))
        return None if words is None else COUNT_CHANGE.format(what=words[0], change=words[1])

    def rewrite_companion(self, companion: bytes, repaired: Source) -> JsonText:
        """``total_messages`` set to the messages Vibe's loader takes from the repaired
        file, its bytes only: every other byte of ``meta.json`` is kept."""
        start = 3 if companion.startswith(BOM) else 0
        try:
            json.loads(companion[start:])  # what SessionLogger.save_interaction parses
            edit = JsonText(companion, start)
        except (ValueError, RecursionError):
            raise EditError("not a JSON text Mistral Vibe can read") from None
        members = edit.root.members
        if members is None:
            raise EditError("not a JSON object")
        if edit.root.shadows:
            raise EditError("a key is written twice; which one Vibe reads is not edited")
        if COUNT not in members:
            raise EditError(f"no {COUNT} (Mistral Vibe's save would fail on it)")
        pointer = "/" + COUNT
        try:
            value = orjson.loads(edit.raw(pointer))
        except orjson.JSONDecodeError:
            value = None
        if type(value) is not int:
            raise EditError(f"{COUNT} is not an integer")
        count = message_count(repaired)
        if value != count:
            edit.replace(pointer, raw=str(count).encode())
        return edit

    def insert_result(self, transcript: Transcript, action: InsertResult, edit: Edit) -> str:
        """TD301: a failed tool result line right after the tool lines of the call's turn,
        where Vibe's ``_fill_missing_tool_responses`` puts the result it fills in memory."""
        lines = _lines(edit)
        at = listing.reply_end(transcript, action.message)
        lines.insert_after(at.record, raw=synthetic_line(action.call))
        return "insert"

    def remove_result(self, transcript: Transcript, action: RemoveResult, edit: Edit) -> str:
        """TD302, TD303: a result is its own line."""
        _lines(edit).remove(action.part.origin.record)
        return "remove"

    def remove_message(self, transcript: Transcript, action: RemoveMessage, edit: Edit) -> str:
        """TD103 and the placeholder rules: a turn is its line.  A turn with calls, or a run
        of tool lines (one model message, several lines), is not removed here."""
        _whole_turn(action.message)
        _lines(edit).remove(action.message.origin.record)
        return "remove"

    def remove_duplicate(self, transcript: Transcript, action: RemoveDuplicate, edit: Edit) -> str:
        """TD403: the later copy of a user line written twice by the count-based append."""
        _whole_turn(action.message)
        _lines(edit).remove(action.message.origin.record)
        return "remove"

    def move_result(self, transcript: Transcript, action: MoveResult, edit: Edit) -> str:
        """TD304: the result's line, byte for byte, right after the tool lines of its
        call's turn (or the turn itself): where Vibe's ``_fill_missing_tool_responses``
        looks for it.  Left where it is, Vibe adds a placeholder for the call there and
        still sends the late result (a second answer after a user message: ``Unexpected
        role 'tool' after role 'user'``, mistral-vibe#1114)."""
        moved = listing.raw(edit, action.part.origin)
        listing.remove(edit, action.part.origin)
        listing.insert_after(edit, listing.reply_end(transcript, action.call_message), raw=moved)
        return "move"


def message_count(source: Source) -> int:
    """What ``save_interaction`` counts after a resume: every line ``load_session`` takes
    (it splits on newlines and ``json.loads`` each) except ``system`` messages, which it
    drops.  A line that does not parse counts: Vibe cannot load the file until it goes,
    and it most likely was a message.  (A lone CR inside a line, which Vibe's
    ``decode_safe`` would turn into a line break, is not counted apart: Vibe never writes
    one.)"""
    data = source.data
    count = 0
    for line in source.lines:
        start = line.start + (3 if line.index == 0 and source.bom else 0)
        try:
            value = orjson.loads(data[start : line.end])
        except orjson.JSONDecodeError:
            value = None
        if not (isinstance(value, dict) and value.get("role") == "system"):
            count += 1
    return count


def synthetic_line(call: Part) -> bytes:
    """A tool line as ``SessionLogger.persist_messages`` writes one
    (``json.dumps(LLMMessage.model_dump(exclude_none=True), ensure_ascii=False)``: role,
    content, injected, name, tool_call_id), its content a failed tool's result."""
    if call.call_id is None:
        raise EditError("the call has no id to answer")
    name = call.name or ""  # as _fill_missing_tool_responses names a call without one
    value = {
        "role": "tool",
        "content": TOOL_ERROR.format(name=name, error=SYNTHETIC_RESULT_TEXT),
        "injected": False,
        "name": name,
        "tool_call_id": call.call_id,
    }
    try:
        return json.dumps(value, ensure_ascii=False).encode()
    except UnicodeEncodeError:  # a lone surrogate in the id (a TD001 record): its escape
        return json.dumps(value).encode()


def _whole_turn(message: Message) -> None:
    if any(p.kind in (PartKind.TOOL_CALL, PartKind.TOOL_RESULT) for p in message.parts):
        raise EditError("removing a turn with tool calls or results would break their pairing")


def _lines(edit: Edit) -> Lines:
    if not isinstance(edit, Lines):
        raise EditError("a Mistral Vibe session is a JSONL file")
    return edit


REPAIR = MistralVibeRepair()
