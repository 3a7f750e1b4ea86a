"""Where a Gemini CLI message is defined: what a repair edits."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class MessageRef:
    """Where a message's effective definition lives, for ``fix`` to edit it.

    ``record`` is the line index (JSONL) or the index in ``messages`` (legacy .json) of
    the record that defines the message; ``pointer`` is that message object inside it:
    ``""`` for a whole message line, ``/$set/messages/4`` inside a checkpoint,
    ``/messages/4`` in a legacy document.  ``lines`` are every line index that carries
    this id since the last checkpoint that reset the list (the checkpoint's own line
    included when it holds the message): removing the message means editing all of them.
    ``results`` marks the user turn the CLI derives from ``toolCalls[].result`` on resume;
    it has no record of its own (its parts point into the calling message).
    Part refs are the part's pointer relative to the message object (``/content/1``,
    ``/toolCalls/0``, ``/toolCalls/0/result/0``, ``/thoughts/0``).
    """

    message_id: str | None
    record: int
    pointer: str
    checkpoint_index: int | None = None
    lines: tuple[int, ...] = ()
    results: bool = False


@dataclass(frozen=True, slots=True)
class StreamRef:
    """Conversation-level facts a fix must respect (``$rewindTo`` targets must stay)."""

    legacy: bool
    rewinds: tuple[tuple[int, str], ...] = ()
