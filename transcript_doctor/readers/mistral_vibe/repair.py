"""How ``fix`` repairs a Mistral Vibe ``messages.jsonl``: only what keeps its line count.

Vibe keeps the number of messages it has written in ``meta.json`` beside the file
(``total_messages``) and, on an interactive resume (the TUI's ``--resume``/``-c``, the ACP
server's ``load_session``), appends ``messages[total_messages:]`` at its next save
(``SessionLogger.save_interaction``).  The load itself reads every line and ignores the
count (``SessionLoader.load_session``), so a file whose line count no longer matches
``total_messages`` loads, and is then silently damaged on the next save: one line more
(an inserted result) and Vibe writes its last message again; one line less (a removed
result or turn) and Vibe never writes the next prompt of the session to the file.  ``fix``
edits one file, so a repair that adds or removes a line is refused here, and only
count-neutral repairs are made: moving a displaced result (TD304), splitting a glued line
(TD001), and dropping a torn final line (TD001: Vibe cannot load the session at all until
it is gone, and the torn write was never counted, since Vibe rewrites ``meta.json`` only
after the append).
"""

from __future__ import annotations

from transcript_doctor.actions import (
    Action,
    InsertResult,
    MoveResult,
    RemoveDuplicate,
    RemoveMessage,
    RemoveResult,
)
from transcript_doctor.readers import listing
from transcript_doctor.readers.base import Edit, Repair
from transcript_doctor.transcript import Transcript

COUNT_CHANGE = (
    "{what} would {change} the number of lines in messages.jsonl, which Mistral Vibe also "
    "counts in meta.json total_messages (its next save on resume appends from that count); "
    "fix edits one file at a time, so it does not make this repair"
)
# Actions that add or remove a line, and the words for them in the refusal.  Their
# methods stay the refusing defaults of Repair.
_COUNTING: dict[type[Action], tuple[str, str]] = {
    InsertResult: ("inserting the missing result", "raise"),
    RemoveResult: ("removing the result", "lower"),
    RemoveMessage: ("removing the turn", "lower"),
    RemoveDuplicate: ("removing the copy", "lower"),
}


class MistralVibeRepair(Repair):
    """Count-neutral repairs only: TD001 (the default drop/split of a line), TD304."""

    def refusal(self, action: Action) -> str | None:
        words = _COUNTING.get(type(action))
        if words is None:
            return super().refusal(action)
        return COUNT_CHANGE.format(what=words[0], change=words[1])

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


REPAIR = MistralVibeRepair()
