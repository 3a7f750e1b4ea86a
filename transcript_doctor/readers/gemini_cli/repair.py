"""``fix`` for Gemini CLI chat recordings: edits of each message's effective definition.

Spec: shared/spec/formats/gemini-cli.md §7.  A JSONL recording is an edit log (§3.1):
a repeated ``id`` replaces a message in place, ``$set.messages`` rebuilds the list.  So:

- A change inside a message edits only its effective definition (the last line carrying
  its id, or its element of the last ``$set.messages`` array that holds it).
- Removing a message removes it from the last ``$set.messages`` array that holds it and
  deletes every message line with its id after that array (:attr:`MessageRef.lines`);
  lines before the array are superseded by it and stay.  Those lines all come after the
  last ``$rewindTo`` that cut the message, so a line that a later ``$rewindTo`` still
  needs is never deleted (the loader would find the target gone and clear everything).
- A synthetic result for a call recorded in message lines is a new ``type:"user"`` line
  after the last line carrying the calling message (where the CLI records the tool
  responses since PR #26939); for a call inside a ``$set.messages`` array it is a new
  element of that array right after the calling message.  A legacy ``.json`` keeps
  results only in ``toolCalls[].result``, so the entry gets one there; so does an id-less
  entry anywhere, which nothing but its own ``result`` can answer.

New message ids are UUID v4 values derived from a hash of the calling message's id and
the call id instead of drawn at random: the vendor's id shape (``randomUUID()``) is kept
and a repaired file, and its snapshot, is the same on every run.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

from transcript_doctor.actions import (
    Action,
    AddSignature,
    InsertResult,
    MoveResult,
    RemoveDuplicate,
    RemoveMessage,
    RemoveResult,
    StripTrailingWhitespace,
)
from transcript_doctor.analysis import pairing
from transcript_doctor.editing import EditError, JsonText, Lines
from transcript_doctor.jsonspan import join, split
from transcript_doctor.model import Message, Part, Role
from transcript_doctor.readers import gemini_content
from transcript_doctor.readers.base import Edit, Repair
from transcript_doctor.readers.gemini_cli.refs import MessageRef, StreamRef
from transcript_doctor.source import Container
from transcript_doctor.transcript import Transcript


class GeminiCliRepair(Repair):
    """Edits of each message's effective definition (spec §7); TD001 is the base class's."""

    def accepts(self, action: Action) -> bool:
        return not isinstance(action, InsertResult) or gemini_content.answerable(action.call)

    def remove_message(self, transcript: Transcript, action: RemoveMessage, edit: Edit) -> str:
        _remove_message(transcript, edit, action.message)
        return "remove"

    def remove_duplicate(self, transcript: Transcript, action: RemoveDuplicate, edit: Edit) -> str:
        _remove_message(transcript, edit, action.message)
        return "remove"

    def strip_trailing_whitespace(
        self, transcript: Transcript, action: StripTrailingWhitespace, edit: Edit
    ) -> str:
        text, pointer = _at(edit, action.message, action.part)
        text.strip_string(pointer if text.raw(pointer).startswith(b'"') else pointer + "/text")
        return "strip"

    def add_signature(self, transcript: Transcript, action: AddSignature, edit: Edit) -> str:
        text, pointer = _at(edit, action.message, action.part)
        text.set_member(pointer, "thoughtSignature", gemini_content.SKIP_SIGNATURE)
        return "insert"

    def remove_result(self, transcript: Transcript, action: RemoveResult, edit: Edit) -> str:
        _remove_part(transcript, edit, action.message, action.part)
        return "remove"

    def insert_result(self, transcript: Transcript, action: InsertResult, edit: Edit) -> str:
        _insert_result(transcript, edit, action.message, action.call)
        return "insert"

    def move_result(self, transcript: Transcript, action: MoveResult, edit: Edit) -> str:
        _move_result(transcript, edit, action)
        return "move"


# -- where a message is defined ---------------------------------------------------------


def _ref(message: Message) -> MessageRef:
    ref = message.ref
    if not isinstance(ref, MessageRef):
        raise EditError("this message has no record of its own")
    return ref


def _text(edit: Edit, record: int) -> JsonText:
    """The JSON text holding a message: its line (JSONL) or the legacy document."""
    return edit.text(record) if isinstance(edit, Lines) else edit


def _at(edit: Edit, message: Message, part: Part) -> tuple[JsonText, str]:
    """The JSON text and pointer of a part in its message's effective definition."""
    ref = _ref(message)
    assert isinstance(part.ref, str)
    return _text(edit, ref.record), ref.pointer + part.ref


def _value(transcript: Transcript, record: int, pointer: str) -> Any:
    """The parsed value at ``pointer`` of a line (JSONL) or of the document."""
    source = transcript.source
    value = source.record(source.lines[record]) if source.container is Container.JSONL else source.value
    for token in split(pointer):
        value = value[int(token)] if isinstance(value, list) else value[token]
    return value


def _places(transcript: Transcript, message: Message) -> Iterator[tuple[int, str]]:
    """Every definition of a JSONL message since the last reset: ``(line, pointer)``.

    The pointer is ``""`` for a message line, or the message's element in a
    ``$set.messages`` array (or a one-line legacy record's ``messages``); the loader tests
    records in the same order (``$rewindTo``, ``id``, ``$set``, header).
    """
    ref = _ref(message)
    source = transcript.source
    for line in ref.lines:
        record = source.record(source.lines[line])
        if not isinstance(record, dict) or isinstance(record.get("$rewindTo"), str):
            continue
        if isinstance(record.get("id"), str):
            if record["id"] == ref.message_id:
                yield line, ""
            continue
        update = record.get("$set")
        base, items = "/messages", record.get("messages")
        if isinstance(update, dict):
            base, items = "/$set/messages", update.get("messages")
        for index, item in enumerate(items if isinstance(items, list) else []):
            if isinstance(item, dict) and item.get("id") == ref.message_id:
                yield line, f"{base}/{index}"


# -- removing ---------------------------------------------------------------------------


def _remove_message(transcript: Transcript, edit: Edit, message: Message) -> None:
    gemini_content.removals(edit).removed.add(message)
    ref = _ref(message)
    if isinstance(edit, JsonText):
        edit.remove(ref.pointer)
        return
    places = list(_places(transcript, message))
    stream = transcript.conversations[0].ref
    assert isinstance(stream, StreamRef)
    if any(target == ref.message_id and line > places[0][0] for line, target in stream.rewinds):
        raise EditError("a later $rewindTo names this message: removing it would clear the history")
    for line, pointer in places:
        if pointer:
            edit.text(line).remove(pointer)
        else:
            edit.remove(line)


def _remove_part(transcript: Transcript, edit: Edit, message: Message, part: Part) -> None:
    """Remove one result; a user message left with nothing is removed as a whole."""
    removals = gemini_content.removals(edit)
    emptied = removals.take(message, part)
    if _ref(message).results:
        _remove_stored_result(edit, message, part, removals.gone[message])
    elif emptied:
        _remove_message(transcript, edit, message)
    else:
        text, pointer = _at(edit, message, part)
        text.remove(pointer)


def _remove_stored_result(edit: Edit, message: Message, part: Part, gone: set[Part]) -> None:
    """A result of the turn rebuilt from ``toolCalls[k].result``: that entry's ``result``
    loses the part, or goes as a whole when none of the call's own responses is left."""
    text, pointer = _at(edit, message, part)
    tokens = split(pointer)
    entry = join(*tokens[: tokens.index("result")])
    own = [p for p in message.parts if _at(edit, message, p)[1].startswith(f"{entry}/result")]
    if all(p in gone for p in own):
        text.remove(f"{entry}/result")
    else:
        text.remove(pointer)


# -- adding and moving results ----------------------------------------------------------


def _new_id(message_id: str, call_id: str) -> str:
    """A UUID v4 from a hash of the calling message and the call: stable across runs."""
    import hashlib  # OpenSSL's start-up only when an id is made: lint loads this module too

    digest = hashlib.sha256(f"{message_id}\0{call_id}".encode("utf-8", "surrogatepass")).digest()
    return str(uuid.UUID(bytes=digest[:16], version=4))


def _insert_result(transcript: Transcript, edit: Edit, message: Message, call: Part) -> None:
    ref = _ref(message)
    response = gemini_content.synthetic_response(call)
    text = _text(edit, ref.record)
    assert isinstance(call.ref, str)
    if call.ref.startswith("/toolCalls/") and (isinstance(edit, JsonText) or call.paired_by != "id"):
        # Legacy files keep results only there; an id-less entry pairs only with its own.
        _add_stored_result(text, ref.pointer + call.ref, response)
        return
    record = _value(transcript, ref.record, ref.pointer)
    stamp = record.get("timestamp")
    if not isinstance(stamp, str):
        raise EditError("the calling message has no timestamp to give its result")
    new = {
        "id": _new_id(ref.message_id or "", call.call_id or ""),
        "timestamp": stamp,
        "type": "user",
        "content": [response],
    }
    if isinstance(edit, JsonText):
        _insert_element(edit, ref.pointer, new)
        return
    line, pointer = _anchor(transcript, message)
    if pointer:
        _insert_element(edit.text(line), pointer, new)
    else:
        edit.insert_after(line, new)


def _add_stored_result(text: JsonText, entry: str, response: dict[str, Any]) -> None:
    """Legacy ``.json``: the ``toolCalls`` entry gets ``result`` where the CLI writes it
    (after ``args``), indented like the document; an existing empty one is replaced."""
    members = list(text.span(entry).members or {})
    value = [response]
    if "result" in members:
        text.replace(f"{entry}/result", raw=text.style(entry).dumps(value, text.depth(entry) + 1))
        return
    before = members.index("args") + 1 if "args" in members else len(members)
    style = text.style(entry)
    member = b'"result"' + style.key_sep + style.dumps(value, text.depth(entry) + 1)
    text.insert(entry, before, raw=member)


def _insert_element(text: JsonText, pointer: str, value: Any) -> None:
    """A new array element right after the element at ``pointer``."""
    tokens = split(pointer)
    text.insert(join(*tokens[:-1]), int(tokens[-1]) + 1, value)


def _anchor(transcript: Transcript, message: Message) -> tuple[int, str]:
    """Where a new message placed right after ``message`` in the replayed order goes.

    A new record takes its position when it is first written, so it must come after a
    definition of ``message`` and before the first record of the message that follows:
    normally the last line carrying ``message``'s id.  When the follower is in the same
    ``$set.messages`` array, the new message goes into that array instead.
    """
    ref = _ref(message)
    following = _following(transcript, message)
    first = _ref(following).lines[0] if following is not None else None
    lines = [line for line in ref.lines if first is None or line < first]
    line = lines[-1] if lines else ref.lines[0]
    places = [pointer for at, pointer in _places(transcript, message) if at == line]
    if not places:
        raise EditError("the message has no definition to insert after")
    return line, places[0]


def _following(transcript: Transcript, message: Message) -> Message | None:
    """The next replayed message with a record of its own after ``message``'s turn."""
    conversation, index = transcript.locate(message)
    messages = conversation.messages
    return next((m for m in messages[index + 1 :] if not _ref(m).results), None)


def _move_result(transcript: Transcript, edit: Edit, action: MoveResult) -> None:
    """Move the part's bytes to the head of the user message after the call's turn."""
    if _ref(action.message).results:
        raise EditError("this result is rebuilt from toolCalls[].result and cannot be moved")
    target = _reply_slot(transcript, action.call_message)
    target_ref = _ref(target)
    if target_ref.results:
        raise EditError("the turn after the call is rebuilt from toolCalls[].result")
    content = target_ref.pointer + "/content"
    if not isinstance(_value(transcript, target_ref.record, content), list):
        raise EditError("the message after the call has no part list to take the result")
    source, pointer = _at(edit, action.message, action.part)
    moved = source.raw(pointer)
    removals = gemini_content.removals(edit)
    removals.receive(target)
    _remove_part(transcript, edit, action.message, action.part)
    _text(edit, target_ref.record).insert(content, 0, raw=moved)


def _reply_slot(transcript: Transcript, call_message: Message) -> Message:
    """The first user message after the call's turn (same-role turns are coalesced).

    A model text recorded first after the call (record order, rules.md TD3) would need a
    user message of its own between them, which the CLI's records cannot express
    without inventing a message id and timestamp: that repair is refused.
    """
    messages = transcript.conversations[0].messages
    index = next(i for i, m in enumerate(messages) if m is call_message)
    found = next((m for m in messages[index + 1 :] if m.role is Role.USER or pairing.speaks(m)), None)
    if found is None:
        raise EditError("no user message follows the call")
    if found.role is not Role.USER:
        raise EditError("the model spoke after the call: the result would need a message of its own")
    return found


REPAIR = GeminiCliRepair()
