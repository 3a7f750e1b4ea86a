"""SQLite session stores (OpenCode, Kilo): a database is a source, but not a byte file.

A live store keeps most of its rows in ``NAME-wal`` beside a small ``NAME``: it is read
through SQLite (``mode=ro``: the WAL is applied and a running program is never locked out;
never ``immutable=1``, which ignores the WAL, and never the file's bytes).  ``-wal``,
``-shm`` and ``-journal`` are parts of the database, not files to lint.

This is the one seam between the byte-file pipeline and databases: ``linting.check`` and
``fixing`` hand a path here first and fall through to the byte path when it is no
database.  A reader that reads a store implements ``Reader.detect_database`` and
``Reader.read_database``; rules see its sessions as conversations like any other, with
origins ``line`` 0, ``record`` the row's position and ``pointer`` naming the row
(``/session/<id>/message/<id>/part/<id>``).  Repairs are row updates in a transaction
(``dbfix``), never byte splices.
"""

from __future__ import annotations

import os
import sqlite3
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from transcript_doctor.model import Origin
from transcript_doctor.source import Container, ParseError, Source

if TYPE_CHECKING:
    from transcript_doctor.engine import FileReport, Options
    from transcript_doctor.readers.base import Reader, Transcript

MAGIC = b"SQLite format 3\x00"
PARTS = ("-wal", "-shm", "-journal")
BACKUP_SUFFIX = ".td-backup"  # fix's backup of a database (dbfix): not linted again
_TEXT_SUFFIXES = (".json", ".jsonl", ".ndjson")
BUSY_MS = 200  # how long a reader waits for a lock before giving up


def is_database(path: str) -> bool:
    """Whether ``path`` is an SQLite database file (16 header bytes read; text suffixes
    are never databases, so the transcripts of a walk cost no extra read)."""
    if path == "-" or path.lower().endswith(_TEXT_SUFFIXES):
        return False
    try:
        with open(path, "rb") as handle:
            return handle.read(len(MAGIC)) == MAGIC
    except OSError:
        return False


def part_of(path: str) -> str | None:
    """The database a ``-wal``/``-shm``/``-journal`` file belongs to, if it is one."""
    for suffix in PARTS:
        if path.endswith(suffix) and is_database(path[: -len(suffix)]):
            return path[: -len(suffix)]
    return None


def uri(path: str, mode: str) -> str:
    return f"file:{quote(os.path.abspath(path))}?mode={mode}"


def connect(path: str, mode: str = "ro", busy_ms: int = BUSY_MS) -> sqlite3.Connection:
    """A connection in autocommit mode (transactions are begun explicitly).

    Read-only, the ``-shm`` index is opened read-only too (SQLite's ``readonly_shm``: a
    lint changes no byte of any of the database's files, and a live writer's index is
    still used); only where there is none to open (a ``-wal`` copied without its
    ``-shm``) does SQLite create one, as every reader does."""
    if mode == "ro":
        try:
            return _open(uri(path, mode) + "&readonly_shm=1", busy_ms)
        except sqlite3.OperationalError:
            pass
    return _open(uri(path, mode), busy_ms)


def _open(address: str, busy_ms: int) -> sqlite3.Connection:
    connection = sqlite3.connect(address, uri=True, timeout=busy_ms / 1000, isolation_level=None)
    try:
        connection.execute(f"PRAGMA busy_timeout = {int(busy_ms)}")
        connection.execute("SELECT count(*) FROM sqlite_master").fetchone()  # opens the WAL now
    except BaseException:
        connection.close()
        raise
    return connection


class DatabaseSource(Source):
    """A database as the engine's source: no bytes, rows instead of lines.

    Every origin's ``line`` is 0 (no line to point at); ``record`` is the row's position
    in read order and ``pointer`` names the row.  Rules that compare raw bytes get none.
    """

    def __init__(self, path: str, connection: sqlite3.Connection) -> None:
        super().__init__(path, b"", Container.JSON)
        self.connection = connection
        self._parsed = True  # no document to parse

    def line_at(self, pointer: str) -> int:
        return 0

    def spans(self) -> Any:
        raise ValueError("a database has no byte spans")

    def unreadable(self, record: int, pointer: str, why: str) -> None:
        """A row whose JSON does not parse: TD001 (never repaired: nothing to guess from)."""
        self._report(ParseError(0, record, f"row {pointer}: {why}"))


def readers() -> list[Reader]:
    from transcript_doctor import readers as registry

    return [r for r in registry.all_readers() if r.reads_databases]


def check(path: str, options: Options) -> FileReport | None:
    """Lint ``path`` if it is a database or a part of one; None: the byte path reads it."""
    from transcript_doctor.engine import FileReport

    if path == "-":
        return None
    main = part_of(path)
    if main is not None:
        return FileReport(path, skipped=f"part of the SQLite database {main} (lint that file)")
    if not is_database(path):
        return None
    return inspect(path, options)[0]


def inspect(
    path: str, options: Options, connection: sqlite3.Connection | None = None
) -> tuple[FileReport, Transcript | None]:
    """Lint a database (through ``connection`` when given, else a read-only one of its
    own, closed again); the transcript is for ``fix`` and holds no open connection."""
    from transcript_doctor.engine import FileReport

    options = options.for_path(path)
    if path.endswith(BACKUP_SUFFIX):
        return FileReport(path, skipped="a backup `fix` made of a database before repairing it"), None
    own = connection is None
    try:
        if connection is None:
            connection = connect(path)
        try:
            return _inspect(path, options, connection)
        finally:
            if own:
                connection.close()
    except sqlite3.Error as exc:
        return FileReport(path, error=f"cannot read {path} as an SQLite database: {_why(exc)}"), None


def _inspect(
    path: str, options: Options, connection: sqlite3.Connection
) -> tuple[FileReport, Transcript | None]:
    from transcript_doctor import engine
    from transcript_doctor.engine import FileReport
    from transcript_doctor.readers.base import Transcript

    chosen = next(
        (
            r
            for r in readers()
            if (options.reader is None or r.name == options.reader) and r.detect_database(connection)
        ),
        None,
    )
    if chosen is None:
        if options.reader is not None:
            return FileReport(
                path, skipped=f"an SQLite database the reader {options.reader} does not read"
            ), None
        return FileReport(path, skipped="not a transcript: an SQLite database no reader recognises"), None
    reader = chosen
    source = DatabaseSource(path, connection)
    transcript = Transcript(reader, source, reader.read_database(source))
    found = engine.run(transcript, replace(options, with_edits=False))  # rows: no byte edits
    for located in found:  # rows have no line: 0 everywhere, also where a rule gave none
        origin = located.origin
        located.origin = Origin(0, origin.record, origin.pointer)
    found.sort(key=lambda f: (f.origin.record, f.finding.rule.code, f.origin.pointer or ""))
    return FileReport(path, reader.name, found), transcript


def _why(exc: sqlite3.Error) -> str:
    text = str(exc) or type(exc).__name__
    return text[:1].lower() + text[1:]


@dataclass(slots=True)
class RowChange:
    """One row a repair changed: every column before, and after (None: deleted)."""

    table: str
    id: str
    pointer: str
    before: dict[str, Any]
    after: dict[str, Any] | None


class Rows:
    """A database's "edit": the row changes of one repair transaction, made at once
    through its connection and logged whole, so that the report can undo them."""

    def __init__(self, connection: sqlite3.Connection) -> None:
        self.connection = connection
        self.log: list[RowChange] = []

    def row(self, table: str, key: str) -> dict[str, Any]:
        cursor = self.connection.execute(f"SELECT * FROM `{table}` WHERE id = ?", (key,))
        found = cursor.fetchone()
        if found is None:
            from transcript_doctor.editing import EditError

            raise EditError(f"the {table} row {key} is gone")
        if any(isinstance(value, bytes) for value in found):
            from transcript_doctor.editing import EditError

            raise EditError(f"the {table} row {key} holds binary data the report could not restore")
        return {column[0]: value for column, value in zip(cursor.description, found, strict=True)}

    def update(self, table: str, key: str, pointer: str, **values: Any) -> None:
        before = self.row(table, key)
        assigned = ", ".join(f"`{column}` = ?" for column in values)
        self.connection.execute(f"UPDATE `{table}` SET {assigned} WHERE id = ?", (*values.values(), key))
        self.log.append(RowChange(table, key, pointer, before, self.row(table, key)))

    def delete(self, table: str, key: str, pointer: str) -> None:
        before = self.row(table, key)
        self.connection.execute(f"DELETE FROM `{table}` WHERE id = ?", (key,))
        self.log.append(RowChange(table, key, pointer, before, None))
