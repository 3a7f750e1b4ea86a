"""The contract between the engine and a format reader.

A reader knows one vendor layout: it recognises its files (:meth:`Reader.detect`), turns
them into vendor-neutral conversations (:meth:`Reader.read`) and, for ``fix``, turns
abstract actions into byte edits in the file's own style.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from transcript_doctor.actions import RepairRecord
from transcript_doctor.editing import EditError, JsonText, Lines, Splice
from transcript_doctor.model import Conversation, Dialect, Message, Part
from transcript_doctor.source import STRICT, Container, Loader, Source

if TYPE_CHECKING:
    import sqlite3

    from transcript_doctor.checks.plain import Screen
    from transcript_doctor.database import DatabaseSource, Rows

Edit = Lines | JsonText

# Detection scores: the highest claim wins, ties go to the reader listed first.
DEFINITIVE = 100  # the vendor's own envelope or header (session_meta, uuid chains…)
SPECIFIC = 50  # a generic shape plus a vendor-only feature (notice role, Cline keys…)
SHAPE = 20  # a generic API shape with a feature only that API has (tool_calls…)
FALLBACK = 10  # a plain role/content list any generic reader could take


@dataclass(frozen=True, slots=True)
class Detection:
    """A reader's claim on a file.  ``transcript=False``: a companion file to skip."""

    reader: str
    reason: str
    score: int
    transcript: bool = True


@dataclass(slots=True)
class Transcript:
    """A read file: its source bytes and the conversations it replays."""

    reader: Reader
    source: Source
    conversations: list[Conversation]
    _where: dict[int, tuple[Conversation, int]] | None = None
    _owner: dict[int, Message] | None = None

    def locate(self, message: Message) -> tuple[Conversation, int]:
        """The conversation holding ``message`` and its index there (indexed once)."""
        if self._where is None:
            self._where = {id(m): (c, i) for c in self.conversations for i, m in enumerate(c.messages)}
        found = self._where.get(id(message))
        if found is None:
            raise EditError("the message is not in this transcript")
        return found

    def owner(self, part: Part) -> Message:
        """The message holding ``part`` (indexed once)."""
        if self._owner is None:
            self._owner = {id(p): m for c in self.conversations for m in c.messages for p in m.parts}
        found = self._owner.get(id(part))
        if found is None:
            raise EditError("the part is not in this transcript")
        return found


class Reader:
    name: ClassVar[str]
    summary: ClassVar[str]  # one line for `transcript-doctor formats`
    dialect: ClassVar[Dialect] = Dialect()
    # How the vendor's own program parses a record (source.Loader): what it reads is not
    # reported as unparseable, and a record it reads is never treated as missing.
    loader: ClassVar[Loader] = STRICT

    def detect(self, source: Source) -> Detection | None:
        raise NotImplementedError

    def read(self, source: Source) -> list[Conversation]:
        raise NotImplementedError

    def read_screened(self, source: Source, screen: Screen | None) -> list[Conversation]:
        """The conversations ``screen`` cannot prove clean (lint needs no others; None: all).

        Readers of message-list layouts skip building the rest (``checks/plain.py``);
        the others read everything.
        """
        return self.read(source)

    # The repair actions (transcript_doctor.actions) this reader can apply.
    fixes: ClassVar[frozenset[type]] = frozenset()

    def supports(self, action: object) -> bool:
        """Whether ``fix`` can apply this action to this reader's files."""
        if isinstance(action, RepairRecord):
            return action.error.repair is not None
        return type(action) in self.fixes

    def apply(self, transcript: Transcript, action: object, edit: Edit) -> str:
        """Make one repair through ``edit``; returns the report's verb for it.

        Only records and values the action names may change.  Raise
        :class:`~transcript_doctor.editing.EditError` when the repair would need a guess.
        """
        if isinstance(action, RepairRecord) and isinstance(edit, Lines):
            return repair_line(edit, action)
        raise EditError(f"{self.name} cannot apply {type(action).__name__}")

    # A vendor's SQLite store (transcript_doctor/database.py): a reader that reads one says
    # so and overrides both methods; the byte-file methods above stay for its JSON files.
    reads_databases: ClassVar[bool] = False

    def detect_database(self, connection: sqlite3.Connection) -> Detection | None:
        return None

    def read_database(self, source: DatabaseSource) -> list[Conversation]:
        raise NotImplementedError

    def read_sessions(self, source: DatabaseSource, sessions: list[str]) -> list[Conversation]:
        """The named sessions only (``fix`` re-reads each inside its transaction)."""
        raise NotImplementedError

    def repair_rows(self, transcript: Transcript, action: object, rows: Rows) -> str:
        """Make one repair as row changes through ``rows`` (in the caller's transaction)."""
        raise EditError(f"{self.name} cannot apply {type(action).__name__}")

    def claim(self, reason: str, score: int, transcript: bool = True) -> Detection:
        return Detection(self.name, reason, score, transcript)


def repair_line(edit: Lines, action: RepairRecord) -> str:
    """TD001 in any JSONL layout: drop a torn final line, or cut a glued stub off."""
    error = action.error
    if error.repair == "drop":
        edit.remove(error.record)
        return "remove"
    if error.repair == "split":
        line = edit.line(error.record)
        edit.replace(error.record, edit.data[line.start + error.keep_from : line.end])
        return "replace"
    raise EditError("this record cannot be repaired without guessing")


def editor(source: Source) -> Edit:
    """The editor for a file's container: lines of JSONL, or the one JSON document."""
    if source.container is Container.JSONL:
        return Lines(source)
    return JsonText(source.data, 3 if source.bom else 0)


def preview(transcript: Transcript, action: object) -> list[Splice] | None:
    """The splices one repair would make on the file as it is (for SARIF fixes)."""
    edit = editor(transcript.source)
    try:
        transcript.reader.apply(transcript, action, edit)
        return edit.splices()
    except EditError:
        return None
