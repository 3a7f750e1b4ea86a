"""Where NeuroLink repairs go and what they write (spec neurolink.md §7).

NeuroLink rows have no links, so every repair is an edit of the message list: remove a
row, strip a string, insert or move a ``tool_result`` row.  Where a result row belongs
follows how the vendor pairs them (``repairToolPairs`` in
``src/lib/context/toolPairRepair.ts``): a batch is every ``tool_call`` followed by every
``tool_result``; rows with ``toolCallId`` pair by id in any order, id-less rows pair
``call[i]`` with ``result[i]`` within the batch.  So an id-era result goes after the
batch's results, an adjacency-era result at its call's position in the result run.

Row values are read back from the editor's original bytes (``listing.raw``), so the
helpers work on any layout the reader was given and never see half-edited text.
"""

from __future__ import annotations

import uuid
from typing import Any

from transcript_doctor.actions import (
    SYNTHETIC_RESULT_TEXT,
    InsertResult,
    MoveResult,
    RemoveMessage,
    RemoveResult,
    StripTrailingWhitespace,
)
from transcript_doctor.analysis.shared import shared
from transcript_doctor.editing import EditError
from transcript_doctor.model import Conversation, Message, Origin, Part, PartKind, Role
from transcript_doctor.readers import listing
from transcript_doctor.readers.base import Edit, Repair
from transcript_doctor.source import load_any
from transcript_doctor.transcript import Transcript

# ``repairToolPairs``' synthetic result (MISSING_RESULT_CONTENT) and the later generic
# form quoted in PR #1280.
COMPACTION_TEXTS = frozenset(
    {"[Tool result unavailable - conversation was compacted]", "[Tool result unavailable]"}
)


def row(edit: Edit, origin: Origin) -> dict[str, Any]:
    """The original value of the row at ``origin``."""
    value = load_any(listing.raw(edit, origin))
    return value if isinstance(value, dict) else {}


def is_compaction_placeholder(item: dict[str, Any]) -> bool:
    """A row whose whole content is NeuroLink's "result unavailable" stand-in.

    The vendor marks its own rows (``repair-result-`` id, ``metadata.truncated``), but the
    text is matched alone on purpose: a result that says only "unavailable" carries no
    output, so preferring the other result of the call can never lose data, while
    requiring the marks would let a copied or re-saved placeholder delete real output.
    """
    content = item.get("content")
    return isinstance(content, str) and content in COMPACTION_TEXTS


def removed_result(transcript: Transcript, edit: Edit, part: Part) -> Part:
    """The result row a TD302/TD303 repair removes for the finding at ``part``.

    The spec keeps the first result of a call and removes the others.  Deviation (lead's
    decision): NeuroLink's compaction placeholder is removed before any real output, so
    in the PR #1280 defect, where the placeholder comes first, the real output survives.
    The results that compete are those of one call (id era), or of the same-named calls
    of one stretch of tool rows (adjacency era: the placeholder shifts which call a
    same-named result is paired with, so the surplus shows on a later call).  The rows
    kept are the first real results, then the first placeholders; the k-th duplicate
    finding removes the k-th row that is not kept, so the findings of one group remove
    distinct rows within one editor.
    """
    group = _competing(transcript, part)
    answered: set[str | None] = set()
    duplicates: list[Part] = []
    for result in group:
        if result.call_id in answered:
            duplicates.append(result)
        answered.add(result.call_id)
    rank = next((i for i, d in enumerate(duplicates) if d is part), None)
    if rank is None:
        return part  # an orphan (TD302)
    order = sorted(
        range(len(group)), key=lambda i: (is_compaction_placeholder(row(edit, group[i].origin)), i)
    )
    dropped = sorted(order[len(group) - len(duplicates) :])
    return group[dropped[rank]]


def _answers_by_id(conversation: Conversation) -> dict[str | None, list[Part]]:
    """Per call id, the results that answer an earlier call with that id, in order."""
    called: set[str | None] = set()
    found: dict[str | None, list[Part]] = {}
    for message in conversation.messages:
        for candidate in message.parts:
            if candidate.kind is PartKind.TOOL_CALL:
                called.add(candidate.call_id)
            elif candidate.kind is PartKind.TOOL_RESULT and candidate.call_id in called:
                found.setdefault(candidate.call_id, []).append(candidate)
    return found


def _competing(transcript: Transcript, part: Part) -> list[Part]:
    """The results that answer ``part``'s call (id era) or a same-named call of its stretch
    (adjacency era), in order; orphans, which answer no call, are left out."""
    messages = _messages(transcript, part)
    if part.paired_by == "id":
        conversation = transcript.locate(transcript.owner(part))[0]
        return shared(_answers_by_id, conversation).get(part.call_id, [])
    messages = _stretch(messages, part)
    called: set[str | None] = set()
    found: list[Part] = []
    for message in messages:
        for candidate in message.parts:
            if candidate.kind is PartKind.TOOL_CALL:
                called.add(candidate.call_id)
            elif candidate.kind is PartKind.TOOL_RESULT and candidate.call_id in called:
                same = (
                    candidate.call_id == part.call_id
                    if part.paired_by == "id"
                    else candidate.name == part.name
                )
                if same:
                    found.append(candidate)
    return found


def _messages(transcript: Transcript, part: Part) -> list[Message]:
    return transcript.locate(transcript.owner(part))[0].messages


def _stretch(messages: list[Message], part: Part) -> list[Message]:
    """The consecutive tool-row messages (batches and result runs) around ``part``: what
    the adjacency pairing treats as one stretch until a user, assistant or system row."""
    index = next(i for i, m in enumerate(messages) if any(p is part for p in m.parts))
    start = end = index
    while start > 0 and _tool_rows(messages[start - 1]):
        start -= 1
    while end + 1 < len(messages) and _tool_rows(messages[end + 1]):
        end += 1
    return messages[start : end + 1]


def _tool_rows(message: Message) -> bool:
    return bool(message.parts) and all(
        p.kind in (PartKind.TOOL_CALL, PartKind.TOOL_RESULT) for p in message.parts
    )


def result_slot(transcript: Transcript, batch: Message, call: Part) -> Origin:
    """The row after which the result for ``call`` (a call in ``batch``) belongs."""
    calls = batch.tool_calls
    after = calls[-1].origin
    run = _result_run(transcript, batch)
    if run is None:
        return after
    if call.paired_by == "id":
        return run.parts[-1].origin  # id pairing is order-free: after the batch's results
    # Positional pairing: before the first result answering a later call of the batch.
    rank = {c.call_id: i for i, c in enumerate(calls)}
    own = rank[call.call_id]
    for result in run.parts:
        if rank.get(result.call_id, -1) > own:
            break
        after = result.origin
    return after


def _result_run(transcript: Transcript, batch: Message) -> Message | None:
    """The run of ``tool_result`` rows right after the batch, if there is one."""
    following = listing.next_message(transcript, batch)
    if following is not None and following.role is Role.USER and _tool_rows(following):
        return following
    return None


def call_of(batch: Message, result: Part) -> Part:
    """The call in ``batch`` that ``result`` answers."""
    for call in batch.tool_calls:
        if call.call_id == result.call_id:
            return call
    raise EditError("the result's call is not in the turn the finding names")


def synthetic_result(edit: Edit, call: Part, neighbour: Origin) -> dict[str, Any]:
    """A ``tool_result`` row for an unanswered call, marked as a failed call the
    vendor's way (``result.success: false`` with ``error``), keys in the order of the
    spec's example; ``toolCallId`` only where the call has one, right after ``tool`` as
    ``repairToolPairs`` writes it.

    The id is UUID v4-shaped but derived from the call row's id and the call id, so a
    repair is reproducible (same input, same bytes); the timestamp is the preceding
    row's, which keeps the list in time order.
    """
    call_row = row(edit, call.origin)
    value: dict[str, Any] = {
        "id": _derived_id(call_row.get("id"), call.call_id),
        "role": "tool_result",
        "content": SYNTHETIC_RESULT_TEXT,
    }
    timestamp = row(edit, neighbour).get("timestamp")
    if isinstance(timestamp, str):
        value["timestamp"] = timestamp
    if call.name is not None:
        value["tool"] = call.name
    if call.paired_by == "id":
        value["toolCallId"] = call.call_id
    value["result"] = {"success": False, "error": SYNTHETIC_RESULT_TEXT}
    return value


def _derived_id(row_id: object, call_id: str | None) -> str:
    import hashlib  # OpenSSL's start-up only when an id is made: lint loads this module too

    seed = f"{row_id if isinstance(row_id, str) else ''}\n{call_id or ''}".encode("utf-8", "surrogatepass")
    return str(uuid.UUID(bytes=hashlib.sha256(seed).digest()[:16], version=4))


def turn_rows(message: Message) -> list[Origin]:
    """Every row a provider message was built from: one row, or a batch/run of tool rows."""
    if _tool_rows(message):
        return [p.origin for p in message.parts]
    return [message.origin]


class NeurolinkRepair(Repair):
    """Every repair is a row edit of the message list (rows have no links)."""

    def remove_message(self, transcript: Transcript, action: RemoveMessage, edit: Edit) -> str:
        for origin in turn_rows(action.message):
            listing.remove(edit, origin)
        return "remove"

    def strip_trailing_whitespace(
        self, transcript: Transcript, action: StripTrailingWhitespace, edit: Edit
    ) -> str:
        listing.strip(edit, action.part.origin)
        return "strip"

    def remove_result(self, transcript: Transcript, action: RemoveResult, edit: Edit) -> str:
        listing.remove(edit, removed_result(transcript, edit, action.part).origin)
        return "remove"

    def insert_result(self, transcript: Transcript, action: InsertResult, edit: Edit) -> str:
        after = result_slot(transcript, action.message, action.call)
        listing.insert_after(edit, after, synthetic_result(edit, action.call, after))
        return "insert"

    def move_result(self, transcript: Transcript, action: MoveResult, edit: Edit) -> str:
        call = call_of(action.call_message, action.part)
        after = result_slot(transcript, action.call_message, call)
        moved = listing.raw(edit, action.part.origin)
        listing.remove(edit, action.part.origin)
        listing.insert_after(edit, after, raw=moved)
        return "move"


REPAIR = NeurolinkRepair()
