"""The contradiction guard: repairs that together say the pairing, not the file, is wrong.

When one pass would delete a result (TD302/TD303) and insert a synthetic result for a call
of the same name in the turn right before it (TD301), the two most likely answer each
other and the reader failed to pair them (an id on one side only, a name spelled the same
way): "repairing" both replaces real tool output by a synthetic error.  Neither is
repaired; both findings say why.  Removing a byte-identical copy of a result that stays
destroys nothing and is not such a contradiction.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from transcript_doctor.model import Applicability, Message, Role

if TYPE_CHECKING:
    from transcript_doctor.checks.context import Context
    from transcript_doctor.engine import Located
    from transcript_doctor.transcript import Transcript


def withhold_contradictions(transcript: Transcript, found: list[Located], ctx: Context) -> None:
    """Mark both sides of every contradiction as not fixable, with the reason."""
    if not found:
        return  # (and actions.py, which a clean file's lint does not load, stays unloaded)
    import transcript_doctor.actions as actions  # (see checks/__init__.py)

    InsertResult, RemoveResult = actions.InsertResult, actions.RemoveResult

    # A removal that destroys nothing (a byte copy of the result kept) contradicts nothing.
    removals = [
        f
        for f in found
        if f.applicability is Applicability.UNSAFE and isinstance(f.finding.action, RemoveResult)
    ]
    if not removals:
        return
    for insert in found:
        action = insert.finding.action
        if insert.applicability is None or not isinstance(action, InsertResult) or not action.call.name:
            continue
        slot = _reply_slot(transcript, action.message)
        for removal in removals:
            removed = removal.finding.action
            assert isinstance(removed, RemoveResult)
            if removed.part.name != action.call.name or not any(m is removed.message for m in slot):
                continue
            call_at, result_at = ctx.place(action.call.origin), ctx.place(removed.part.origin)
            why = (
                f"pairing failure: the result at {result_at} and the call {action.call.name} at "
                f"{call_at} in the turn before it most likely answer each other; neither is repaired"
            )
            for located in (insert, removal):
                located.fixable, located.applicability, located.blocked = False, None, why
            insert.finding.message += (
                f" (likely a pairing failure: the result at {result_at} in the next turn has the "
                "same name and may answer it; not repaired)"
            )
            removal.finding.message += (
                f" (likely a pairing failure: it may answer the call at {call_at} in the turn "
                "before, which has the same name; not repaired)"
            )
            break  # one explanation per call, even if two results of its name follow


def _reply_slot(transcript: Transcript, message: Message) -> list[Message]:
    """The messages of the turn right after ``message``'s turn (notices skipped; a run of
    same-role messages is one turn where the vendor merges them)."""
    from transcript_doctor.editing import EditError

    try:
        conversation, index = transcript.locate(message)
    except EditError:  # a message the reader did not index: no slot
        return []
    coalesce = conversation.dialect.coalesce_roles
    replayed = [m for m in conversation.messages[index + 1 :] if m.role is not Role.NOTICE]
    position = 0
    while coalesce and position < len(replayed) and replayed[position].role is message.role:
        position += 1
    if position == len(replayed):
        return []
    first = replayed[position]
    slot = [first]
    for following in replayed[position + 1 :]:
        if not (coalesce and following.role is first.role):
            break
        slot.append(following)
    return slot
