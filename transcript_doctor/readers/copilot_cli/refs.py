"""What a repair needs to find a Copilot event again: line indices, nothing parsed twice."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class EventRef:
    """``Part.ref``/``Message.ref`` of one event: the 0-based record index of its line."""

    record: int


@dataclass(slots=True)
class CallRef:
    """``Part.ref`` of one tool request: the ``assistant.message`` line that asked for it and
    the ``tool.execution_start`` line of the same call id and agent, once seen (the CLI
    writes one before every completion; a synthetic result goes right after it)."""

    record: int
    start: int | None = None
