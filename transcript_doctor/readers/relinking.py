"""What line repairs of a parent-linked JSONL session have done so far (Claude Code, Pi).

Both vendors replay a tree of lines linked by a parent id, so every removed, inserted or
moved line re-points the lines that named it.  The fixer applies all repairs of one rule
through one editor and they meet on the same lines, so a plan per editor remembers what
earlier repairs did.  A vendor's plan adds which keys name a line (its ``pointers``) and
the repairs themselves.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable
from typing import Any, ClassVar, Generic, TypeVar

from transcript_doctor.editing import EditError, JsonText, Lines, splice
from transcript_doctor.source import load_any

P = TypeVar("P", bound=Hashable)  # how the vendor names a link: a line, or a line and a key
R = TypeVar("R")  # the vendor's ref of one record (its id, parent and lines)


class LinkPlan(Generic[P, R]):
    parent: ClassVar[str]  # the JSON Pointer of a line's parent link

    def __init__(self, edit: Lines) -> None:
        self.edit = edit
        self.records: dict[int, dict[str, Any]] = {}
        self.values: dict[P, str | None] = {}  # links re-aimed so far, by their new value
        self.named: dict[str, set[P]] = {}  # the same, by the id they now name
        self.gone: dict[str, str | None] = {}  # removed id -> its parent when removed
        self.removed: set[int] = set()
        self.tails: dict[str, str] = {}  # line id -> the last line inserted after it
        self.moved: dict[int, str] = {}  # moved line -> the id it now follows

    def survivor(self, line_id: str | None) -> str | None:
        """The nearest ancestor not removed by this plan (None past the root or in a cycle)."""
        seen: set[str] = set()
        while line_id is not None and line_id in self.gone:
            if line_id in seen:
                return None
            seen.add(line_id)
            line_id = self.gone[line_id]
        return line_id

    # What a vendor's plan says of its records and links.
    def parent_of(self, ref: R) -> str | None:
        raise NotImplementedError

    def versions(self, ref: R) -> list[int]:
        """The line indexes holding the record (one id may be written more than once)."""
        raise NotImplementedError

    def pointers(self, target: str) -> list[P]:
        """The links that name ``target`` now."""
        raise NotImplementedError

    def point(self, pointer: P, value: str | None) -> None:
        raise NotImplementedError

    def drop(self, records: Iterable[tuple[str, R]]) -> None:
        """Delete records (every line of each id), then re-point whoever named them.
        All lines go first, then the links: records of one batch that
        are parent and child re-link past each other to the nearest surviving ancestor."""
        batch: list[str] = []
        for record_id, ref in records:
            if record_id in self.gone:
                continue
            self.gone[record_id] = self.parent_of(ref)
            for index in self.versions(ref):
                self.edit.remove(index)
                self.removed.add(index)
            batch.append(record_id)
        for removed in batch:
            target = self.survivor(self.gone[removed])
            for pointer in self.pointers(removed):
                self.point(pointer, target)

    def start(self, index: int) -> int:
        """Where the line's JSON starts (after a BOM on the first line)."""
        line = self.edit.line(index)
        return line.start + (3 if index == 0 and self.edit.source.bom else 0)

    def record(self, index: int) -> dict[str, Any]:
        if index not in self.records:
            line = self.edit.line(index)
            try:
                value = load_any(self.edit.data[self.start(index) : line.end])
            except ValueError:
                raise EditError(f"line {line.number} does not parse") from None
            if not isinstance(value, dict):
                raise EditError(f"line {line.number} is not an object")
            self.records[index] = value
        return self.records[index]

    def relinked(self, index: int, parent: str) -> bytes:
        """The line's own bytes with only its parent link changed (a moved line is written
        anew, so the edit cannot go through the editor's patch of the removed original)."""
        line = self.edit.line(index)
        body = self.edit.data[self.start(index) : line.end]
        try:
            text = JsonText(body, escaping=self.edit.escaping)
        except ValueError:
            raise EditError(f"line {line.number} does not parse") from None
        text.replace(self.parent, parent)
        return splice(body, text.splices())
