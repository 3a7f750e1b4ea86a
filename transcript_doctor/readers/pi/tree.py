"""The path Pi replays: from the leaf up the ``parentId`` links, then compaction applied.

``buildSessionContext`` (session-manager.js:112) walks from the leaf to the root through
``byId``; a ``parentId`` that names no entry ends the walk (everything above it is lost to
resume).  With a ``compaction`` on the path, the latest one's summary goes first, then the
path entries from its ``firstKeptEntryId`` up to it, then the entries after it.
"""

from __future__ import annotations

from typing import Any

from transcript_doctor.plain import Mutable
from transcript_doctor.source import Line


class Entry(Mutable):
    """One parsed non-header line: what the walk and the message builder need."""

    __slots__ = ("id", "line", "parent", "record")
    line: Line
    record: dict[str, Any]
    id: str | None
    parent: str | None

    def __init__(self, line: Line, record: dict[str, Any], id: str | None, parent: str | None) -> None:
        self.line = line
        self.record = record
        self.id = id
        self.parent = parent

    @property
    def role(self) -> str | None:
        if self.record.get("type") != "message":
            return None
        message = self.record.get("message")
        role = message.get("role") if isinstance(message, dict) else None
        return role if isinstance(role, str) else None


def walk(leaf: Entry, by_id: dict[str, Entry]) -> list[Entry]:
    """The path from the root down to ``leaf``.

    Pi's loop has no guard against a ``parentId`` cycle (it would never return); the walk
    here stops at the first entry seen twice.
    """
    path: list[Entry] = []
    seen: set[int] = set()
    current: Entry | None = leaf
    while current is not None and current.line.index not in seen:
        seen.add(current.line.index)
        path.append(current)
        current = by_id.get(current.parent) if current.parent else None
    path.reverse()
    return path


def replayed(path: list[Entry]) -> list[Entry]:
    """The entries whose messages Pi sends, in order (the compaction entry stands for its summary)."""
    at = -1
    for index, entry in enumerate(path):
        if entry.record.get("type") == "compaction":
            at = index
    if at < 0:
        return path
    compaction = path[at]
    first_kept = compaction.record.get("firstKeptEntryId")
    kept: list[Entry] = []
    found = False
    for entry in path[:at]:
        found = found or (entry.id is not None and entry.id == first_kept)
        if found:
            kept.append(entry)
    return [compaction, *kept, *path[at + 1 :]]
