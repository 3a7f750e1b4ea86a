"""Where a Gemini CLI message is defined: what a repair edits."""

from __future__ import annotations

from typing import Final

from transcript_doctor.plain import Value


class MessageRef(Value):
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

    __slots__ = ("checkpoint_index", "lines", "message_id", "pointer", "record", "results")
    message_id: Final[str | None]
    record: Final[int]
    pointer: Final[str]
    checkpoint_index: Final[int | None]
    lines: Final[tuple[int, ...]]
    results: Final[bool]

    def __init__(
        self,
        message_id: str | None,
        record: int,
        pointer: str,
        checkpoint_index: int | None = None,
        lines: tuple[int, ...] = (),
        results: bool = False,
    ) -> None:
        self.message_id = message_id
        self.record = record
        self.pointer = pointer
        self.checkpoint_index = checkpoint_index
        self.lines = lines
        self.results = results


class StreamRef(Value):
    """Conversation-level facts a fix must respect (``$rewindTo`` targets must stay)."""

    __slots__ = ("legacy", "rewinds")
    legacy: Final[bool]
    rewinds: Final[tuple[tuple[int, str], ...]]

    def __init__(self, legacy: bool, rewinds: tuple[tuple[int, str], ...] = ()) -> None:
        self.legacy = legacy
        self.rewinds = rewinds
