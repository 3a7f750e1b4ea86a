"""What a repair needs to find a Copilot event again: line indices, nothing parsed twice."""

from __future__ import annotations

from typing import Final

from transcript_doctor.plain import Mutable, Value


class EventRef(Value):
    """``Part.ref``/``Message.ref`` of one event: the 0-based record index of its line."""

    __slots__ = ("record",)
    record: Final[int]

    def __init__(self, record: int) -> None:
        self.record = record


class CallRef(Mutable):
    """``Part.ref`` of one tool request: the ``assistant.message`` line that asked for it and
    the ``tool.execution_start`` line of the same call id and agent, once seen (the CLI
    writes one before every completion; a synthetic result goes right after it)."""

    __slots__ = ("record", "start")
    record: int
    start: int | None

    def __init__(self, record: int, start: int | None = None) -> None:
        self.record = record
        self.start = start
